// The live token view: draws a text's tokens at any vocabulary size in the browser.
//
// Python (ui/live_view/__init__.py) sends once per (text, tokenizer) the tables of bpe_core.analysis.live;
// every slider `input` event redraws here, without the server.  The server hears the final size
// (state value "size") when a drag or a key press ends, and a clicked token (trigger "clicked").
// User text is data: it only ever reaches the page through textContent / setAttribute.

const REG = (window.__bpeLiveViews = window.__bpeLiveViews || new WeakMap());

const PALETTE = ["#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffc6ff", "#fdffb6", "#a0c4ff", "#ffadad"];
const RANK_EARLY = [255, 236, 179];
const RANK_LATE = [134, 150, 245];
const BASE_COLOUR = "#e6e6ea";
const NEVER = 0xffffffff;
const INSIDE_SPECIAL = 0xfffffffe;

// ---- colours, exactly as ui/render.py (Python's round() is round-half-even) ----

function pyRound(x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
function hex(rgb) {
  return "#" + rgb.map((c) => pyRound(c).toString(16).padStart(2, "0")).join("");
}
function pyMod1(x) {
  let m = x % 1.0;
  if (m && m < 0) m += 1.0;
  return m;
}
function hlsV(m1, m2, hue) {
  hue = pyMod1(hue);
  if (hue < 1.0 / 6.0) return m1 + (m2 - m1) * hue * 6.0;
  if (hue < 0.5) return m2;
  if (hue < 2.0 / 3.0) return m1 + (m2 - m1) * (2.0 / 3.0 - hue) * 6.0;
  return m1;
}
const ID_COLOURS = new Map();
function idColour(id) {
  let c = ID_COLOURS.get(id);
  if (c) return c;
  const h = pyMod1(id * 0.6180339887498949);
  const l = 0.82,
    s = 0.85;
  const m2 = l <= 0.5 ? l * (1.0 + s) : l + s - l * s;
  const m1 = 2.0 * l - m2;
  const rgb = [hlsV(m1, m2, h + 1.0 / 3.0), hlsV(m1, m2, h), hlsV(m1, m2, h - 1.0 / 3.0)];
  c = hex(rgb.map((v) => v * 255));
  ID_COLOURS.set(id, c);
  return c;
}
function rankColour(rank, maxRank) {
  if (rank === null || rank === undefined) return BASE_COLOUR;
  const t = maxRank > 0 ? Math.min(Math.max(rank, 0), maxRank) / maxRank : 0.0;
  return hex(RANK_EARLY.map((a, i) => a + (RANK_LATE[i] - a) * t));
}

// ---- visible whitespace, exactly as ui/render.py's _visible ----

const WS = { " ": "·", "\t": "→\t", "\r": "␍" };
const PY_SPACE = new Set(
  "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
);
const PLAIN = /^[^\x00-\x20\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

function appendVisible(el, text, showWs) {
  if (PLAIN.test(text)) {
    el.appendChild(document.createTextNode(text));
    return;
  }
  let run = "";
  const flush = () => {
    if (run) el.appendChild(document.createTextNode(run));
    run = "";
  };
  const ws = (glyph, title) => {
    flush();
    const s = document.createElement("span");
    s.className = "ws";
    s.textContent = glyph;
    if (title) s.title = title;
    el.appendChild(s);
  };
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (ch === "\n") {
      if (showWs) {
        ws("↵");
      }
      run += "\n";
    } else if (showWs && WS[ch] !== undefined) {
      ws(WS[ch]);
    } else if (showWs && PY_SPACE.has(ch)) {
      ws("⍽", "U+" + code.toString(16).toUpperCase().padStart(4, "0"));
    } else if (code < 0x20) {
      ws(String.fromCodePoint(0x2400 + code));
    } else if (code === 0x7f) {
      ws("␡");
    } else {
      run += ch;
    }
  }
  flush();
}

// ---- payload decoding ----

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
async function gunzip(s) {
  const stream = new Blob([b64bytes(s)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
async function typed(packed) {
  // {w: 2 | 4, z: base64(gzip(little-endian ints))} -> Uint32Array (u16 sentinels widened)
  if (!packed) return null;
  const raw = await gunzip(packed.z);
  if (packed.w === 4) return new Uint32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const u16 = new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
  const out = new Uint32Array(u16.length);
  for (let i = 0; i < u16.length; i++) {
    const v = u16[i];
    out[i] = v === 0xffff ? NEVER : v === 0xfffe ? INSIDE_SPECIAL : v;
  }
  return out;
}

function textModel(text) {
  const cps = Array.from(text);
  const enc = new TextEncoder();
  const cpByte = new Int32Array(cps.length + 1); // byte offset where each code point starts
  let nb = 0;
  for (let i = 0; i < cps.length; i++) {
    cpByte[i] = nb;
    const c = cps[i].codePointAt(0);
    nb += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  cpByte[cps.length] = nb;
  const bytes = enc.encode(text);
  const byteCp = new Int32Array(nb + 1); // code point holding each byte
  for (let i = 0; i < cps.length; i++) for (let b = cpByte[i]; b < cpByte[i + 1]; b++) byteCp[b] = i;
  byteCp[nb] = cps.length;
  return { cps, cpByte, byteCp, bytes, nBytes: nb };
}

async function decode(data) {
  // the Merges players of WordPiece and Unigram draw word versions keyed by step: their models are word ones
  const kind = data.kind === "merges" && data.base ? data.base : data.kind;
  const m = { data, kind, lo: data.lo, hi: data.hi, tm: textModel(data.text) };
  m.totals = data.totals ? await typed(data.totals) : null;
  if (data.bpe) {
    const b = data.bpe;
    m.rank = await typed(b.rank);
    m.gone = b.gone ? await typed(b.gone) : null;
    m.step = b.step ? await typed(b.step) : null;
    m.newBase = b.newBase;
    m.newIds = b.newIds ? new Map(b.newIds) : null;
    m.byteIds = b.byteIds;
    m.specialAt = new Map(b.specials.map(([s, e, id]) => [s, [e, id]]));
    m.specialIds = new Set(b.specialIds);
  } else {
    const raw = await gunzip(data.wp);
    const wp = JSON.parse(new TextDecoder().decode(raw));
    m.units = wp.units;
    m.wpRank = new Map(wp.rank);
    m.wpToken = new Map(wp.tokens);
  }
  return m;
}

// ---- segmentation at one size ----

function hexBytes(bytes) {
  const parts = [];
  for (let i = 0; i < Math.min(bytes.length, 24); i++) parts.push(bytes[i].toString(16).toUpperCase().padStart(2, "0"));
  return parts.join(" ") + (bytes.length > 24 ? " …" : "");
}

function displayOf(m, t) {
  const tm = m.tm;
  if (t.disp !== undefined && t.disp !== null) return t.disp;
  if (!t.partial || (m.kind !== "bpe" && m.kind !== "merges")) return tm.cps.slice(t.s, t.e).join("");
  // byte-fallback notation for the bytes of characters the token only partly holds
  let out = "";
  for (let c = t.s; c < t.e; c++) {
    const cs = tm.cpByte[c],
      ce = tm.cpByte[c + 1];
    if (cs >= t.bs && ce <= t.be) out += tm.cps[c];
    else
      for (let b = Math.max(cs, t.bs); b < Math.min(ce, t.be); b++)
        out += "<0x" + tm.bytes[b].toString(16).toUpperCase().padStart(2, "0") + ">";
  }
  return out;
}

function tooltip(m, t) {
  const learned = m.kind === "unigram" ? `piece #${t.rank + 1}` : `merge #${t.rank + 1}`;
  const kind = t.special ? "special token" : t.rank !== null ? learned : "base token";
  const lines = [`id ${t.id} · ${kind}`];
  let bytes;
  if (m.kind === "bpe" || m.kind === "merges") {
    bytes = m.tm.bytes.subarray(t.bs, t.be);
  } else {
    const s = m.wpToken.get(t.id);
    bytes = new TextEncoder().encode(s);
    if (!t.partial && s !== displayOf(m, t)) lines.push(`token ${s}`);
  }
  lines.push(`bytes ${hexBytes(bytes)} (${bytes.length})`);
  if (t.partial) lines.push("part of a multi-byte character");
  return lines.join("\n");
}


// ---- blocks: the drawn text cut into runs of lines, each redrawn only when one of its tokens changes ----
//
// A block ends just after a newline at a place that is a token edge at every size (a pre-token edge for
// byte-level BPE, the space between two words for WordPiece; for Unigram, at every size of a size range:
// see prepareWP), so no token crosses a block and the lines break exactly as in one flow.  Each block
// carries the sorted vocabulary sizes at which its segmentation changes (a range query: it changed
// between sizes a < b when one of them lies in (a, b]) and its token count at any size (a binary
// search), so a slider move touches only the blocks it changes.  Blocks are `content-visibility: auto`:
// the browser lays out only those in sight.

const MIN_BLOCK = 240; // bytes (BPE) or characters (WordPiece) at least per block

function upperBound(arr, x) {
  // number of values <= x in the sorted array
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function prepareBPE(m) {
  const { rank, gone, tm, lo } = m;
  const n = tm.nBytes;
  const g = new Uint32Array(Math.max(n - 1, 0));
  for (let i = 0; i < n - 1; i++) {
    const r = rank[i];
    g[i] = gone ? gone[i] : r === NEVER ? NEVER : r === INSIDE_SPECIAL ? lo : lo + 1 + r;
  }
  m.goneArr = g;
  const blocks = [];
  const add = (bs, be) => {
    const sizes = [];
    let always = 0;
    let lines = 1;
    for (let i = bs; i < be - 1; i++) {
      const v = g[i];
      if (v <= lo) always++;
      else if (v !== NEVER) sizes.push(v);
      if (tm.bytes[i] === 10) lines++;
    }
    const s = Uint32Array.from(sizes).sort();
    // count(L) = base - (sizes <= L); as sizes only remove boundaries, a block changed iff its count did
    blocks.push({ bs, be, sizes: s, base: be - bs - always, deltas: null, lines });
  };
  let bs = 0;
  for (let i = 0; i < n - 1; i++)
    if (tm.bytes[i] === 10 && g[i] === NEVER && i + 1 - bs >= MIN_BLOCK) {
      add(bs, i + 1);
      bs = i + 1;
    }
  if (n > 0) add(bs, n);
  m.blocks = blocks;
}

function unitRange(unit) {
  const rows = unit[0][1];
  return [rows[0][1], rows[rows.length - 1][2]];
}

function prepareWP(m) {
  // Blocks end between two words at a newline (a token edge at every size).  A Unigram word can hold
  // newlines (SentencePiece splits at spaces only): a place just after such a newline is a token edge at
  // the sizes where no piece of the word crosses it, so the size axis is cut into a few ranges, each with
  // its own blocks (built when the slider first enters it) that also end at the newlines inside words
  // which are a token edge at every size of the range; a word cut there becomes two parts, each keeping
  // its versions of the range.
  const units = m.units;
  const cps = m.tm.cps;
  const bad = new Map(); // place inside a word -> [[a, b], ...] sizes where a piece crosses it
  const points = new Set();
  for (let u = 0; u < units.length; u++) {
    const vs = units[u];
    const [s, e] = unitRange(vs);
    for (let c = s; c < e - 1; c++) {
      if (cps[c] !== "\n") continue;
      const p = c + 1;
      for (let v = 0; v < vs.length; v++) {
        if (!vs[v][1].some((r) => r[1] < p && p < r[2])) continue;
        const a = v === 0 ? -Infinity : vs[v][0];
        const b = v + 1 < vs.length ? vs[v + 1][0] - 1 : Infinity;
        if (!bad.has(p)) bad.set(p, []);
        bad.get(p).push([a, b]);
        if (a > -Infinity) points.add(a);
        if (b < Infinity) points.add(b + 1);
      }
      if (!bad.has(p)) bad.set(p, []); // an edge at every size
    }
  }
  let starts = [...points].sort((a, b) => a - b);
  const MAX_RANGES = 32;
  if (starts.length >= MAX_RANGES) {
    const k = starts.length / MAX_RANGES;
    starts = Array.from({ length: MAX_RANGES - 1 }, (_, i) => starts[Math.floor((i + 1) * k)]);
    starts = [...new Set(starts)];
  }
  m.blockSets = [-Infinity, ...starts].map((a, i) => ({
    lo: a,
    hi: i < starts.length ? starts[i] - 1 : Infinity,
    blocks: null,
  }));
  m.blockBad = bad;
  m.blockSet = null;
  selectBlocks(m, m.blockSets[0].lo);
}

function selectBlocks(m, L) {
  // the blocks of the size range holding L (built on first use); false when they are those in use
  const cur = m.blockSet;
  if (cur && cur.lo <= L && L <= cur.hi) return false;
  const set = m.blockSets.find((r) => r.lo <= L && L <= r.hi);
  if (!set.blocks) set.blocks = buildWPBlocks(m, set.lo, set.hi);
  m.blockSet = set;
  m.blocks = set.blocks;
  return true;
}

function splitUnit(vs, lo, hi, a, b) {
  // the part [a, b) of a word whose versions have no piece crossing a or b at sizes lo..hi
  let v0 = 0;
  while (v0 + 1 < vs.length && vs[v0 + 1][0] <= lo) v0++;
  const out = [];
  for (let v = v0; v < vs.length && (v === v0 || vs[v][0] <= hi); v++) {
    const rows = vs[v][1].filter((r) => r[1] >= a && r[2] <= b);
    const prev = out.length ? out[out.length - 1][1] : null;
    if (prev && prev.length === rows.length && prev.every((r, i) => r === rows[i])) continue;
    out.push([out.length ? vs[v][0] : vs[0][0], rows]);
  }
  if (!out[0][1].length) return null;
  return out;
}

function buildWPBlocks(m, lo, hi) {
  const units = m.units;
  const cps = m.tm.cps;
  const bad = m.blockBad;
  const ok = (p) => bad.get(p).every(([a, b]) => b < lo || a > hi);
  const blocks = [];
  const add = (cs, ce, U) => {
    const ev = [];
    let base = 0;
    let lines = 1;
    for (const vs of U) {
      let prev = vs[0][1].length;
      base += prev;
      for (let v = 1; v < vs.length; v++) {
        ev.push([vs[v][0], vs[v][1].length - prev]);
        prev = vs[v][1].length;
      }
    }
    for (let c = cs; c < ce; c++) if (cps[c] === "\n") lines++;
    ev.sort((a, b) => a[0] - b[0]);
    const sizes = Uint32Array.from(ev, (e) => e[0]);
    const deltas = new Int32Array(ev.length); // running sum of token-count changes
    let run = 0;
    ev.forEach((e, i) => (deltas[i] = run += e[1]));
    blocks.push({ cs, ce, U, u0: 0, u1: U.length, sizes, base, deltas, lines });
  };
  let cs = 0;
  let U = [];
  for (let u = 0; u < units.length; u++) {
    const vs = units[u];
    const [start, end] = unitRange(vs);
    if (u > 0) {
      const [, prevEnd] = unitRange(units[u - 1]);
      // a newline between the two words, or ending the one before (a Unigram word cut after its newline)
      let nl = -1;
      for (let c = start - 1; c >= Math.min(prevEnd, start - 1) && c >= 0; c--)
        if (cps[c] === "\n") {
          nl = c;
          break;
        }
      if (nl >= 0 && nl + 1 - cs >= MIN_BLOCK && U.length) {
        add(cs, nl + 1, U);
        cs = nl + 1;
        U = [];
      }
    }
    // newlines inside the word that are a token edge at every size of the range
    let from = start;
    for (let c = start; c < end - 1; c++) {
      const p = c + 1;
      if (cps[c] !== "\n" || p - cs < MIN_BLOCK || !ok(p)) continue;
      const part = splitUnit(vs, lo, hi, from, p);
      if (!part) continue; // no piece before it in this word: the cut between words covers it
      U.push(part);
      add(cs, p, U);
      cs = p;
      U = [];
      from = p;
    }
    const rest = from === start ? vs : splitUnit(vs, lo, hi, from, end);
    if (rest) U.push(rest);
  }
  add(cs, cps.length, U);
  return blocks;
}

function blockCount(b, L) {
  const k = upperBound(b.sizes, L);
  if (!b.deltas) return b.base - k;
  return b.base + (k ? b.deltas[k - 1] : 0);
}

function blockChanged(b, a, c) {
  if (a === c) return false;
  return upperBound(b.sizes, Math.max(a, c)) !== upperBound(b.sizes, Math.min(a, c));
}

function bpeRange(m, L, bs, be, cap) {
  // tokens of bytes [bs, be) at vocabulary size L (bs and be are edges at every size), at most `cap`
  // -> {s: code point start, e: end, id, rank, partial, special, bs, be (bytes), k: sort key}
  const { rank, step, tm } = m;
  const g = m.goneArr;
  const out = [];
  if (cap <= 0) return out;
  let start = bs;
  let best = -1;
  let bestRank = -1;
  const key = step || rank;
  for (let i = bs; i < be; i++) {
    let ends = i === be - 1;
    if (!ends) {
      if (g[i] > L) ends = true;
      else {
        const r = rank[i];
        if (r !== INSIDE_SPECIAL && key[i] > best) {
          best = key[i];
          bestRank = r;
        }
      }
    }
    if (ends) {
      let id;
      let tokRank = null;
      let special = false;
      const sp = m.specialAt.get(start);
      if (sp && sp[0] === i + 1) {
        id = sp[1];
        special = true;
      } else if (best < 0) {
        id = m.byteIds ? m.byteIds[tm.bytes[start]] : tm.bytes[start];
      } else {
        id = m.newBase !== null ? m.newBase + bestRank : m.newIds.get(bestRank);
        tokRank = bestRank;
      }
      const s = tm.byteCp[start];
      const e = tm.byteCp[i] + 1;
      const partial = tm.cpByte[s] !== start || tm.cpByte[e] !== i + 1;
      out.push({ s, e, id, rank: tokRank, partial, special, bs: start, be: i + 1, k: start });
      if (out.length >= cap) break;
      start = i + 1;
      best = -1;
      bestRank = -1;
    }
  }
  return out;
}

function bpeTokens(m, L, cap) {
  // the whole drawn text at size L, at most `cap` tokens
  return bpeRange(m, L, 0, m.tm.nBytes, cap);
}

function wpToken(m, row) {
  let t = row._t;
  if (!t) {
    const [id, s, e, flags, disp] = row;
    t = row._t = {
      s,
      e,
      id,
      rank: m.wpRank.has(id) ? m.wpRank.get(id) : null,
      partial: !!(flags & 1),
      special: !!(flags & 2),
      cont: !!(flags & 4),
      disp,
      k: s,
    };
  }
  return t;
}

function wpRange(m, L, u0, u1, cap, units = m.units) {
  const out = [];
  for (let u = u0; u < u1 && out.length < cap; u++) {
    const unit = units[u];
    let chosen = unit[0][1];
    for (const [s, rows] of unit) {
      if (s > L) break;
      chosen = rows;
    }
    for (const row of chosen) {
      out.push(wpToken(m, row));
      if (out.length >= cap) break;
    }
  }
  return out;
}

// cycle colours follow positions: a token gets class c<local index % 8>, its block p<first index % 8>,
// and the CSS paints PALETTE[(p + c) % 8]; so a shift before a block costs one class change on it
const PHASE_ROOTS = new WeakSet();
function phaseCss(node) {
  // the 64 phase x class rules, once per style scope: the document or the component's shadow root (isolated styles)
  const root = node.getRootNode();
  const scope = root instanceof ShadowRoot ? root : document;
  if (PHASE_ROOTS.has(scope)) return;
  PHASE_ROOTS.add(scope);
  const rules = [];
  for (let p = 0; p < 8; p++)
    for (let c = 0; c < 8; c++)
      rules.push(
        `.bpe-live .bpe-view .blk.p${p} > .tk.c${c}, .bpe-live .bpe-view .blk.p${p} > .wd > .tk.c${c} { background: ${PALETTE[(p + c) % 8]}; }`
      );
  const style = document.createElement("style");
  style.textContent = rules.join("\n");
  (scope === document ? document.head : scope).appendChild(style);
}

// Lines break at token edges by CSS (live.css: `line-break: anywhere` on a block, tokens `white-space: pre`), which
// breaks between grapheme clusters only: a token that starts inside a cluster (a combining mark, a zero-width
// joiner, an emoji modifier, ... after the previous token's character) gets a <wbr> before it, as every token had.
const GLUED = /^[\p{M}\p{Emoji_Modifier}\p{Regional_Indicator}\u200c\u200d\u1160-\u11ff\ud7b0-\ud7ff\uff9e\uff9f\u{e0020}-\u{e007f}]/u;

function put(parent, span) {
  // a token into its block (after a <wbr> when it starts inside a grapheme cluster)
  if (span._wbr) parent.appendChild(document.createElement("wbr"));
  parent.appendChild(span);
}

class BlockPainter {
  constructor(el) {
    this.el = el;
    this.key = null;
    this.state = [];
    this.flatCache = null;
    this.drawn = 0;
    // cycle colours of blocks out of the box's sight are brought up to date when they come near it (see onNear)
    this.byEl = new Map();
    this.io =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver((entries) => this.onNear(entries), { root: el, rootMargin: "25% 0px" })
        : null;
    this.checkRaf = 0;
    el.addEventListener("scroll", () => this.catchUp(), { passive: true });
  }

  // Cycle colours depend on a token's index in the whole text, so a count change early in the text recolours
  // every later token; in a block the browser renders (content-visibility keeps a margin of some 2,000 px
  // around the box) that is a style recalculation of each of its spans.  A block out of the box's sight only
  // notes that its colours are due (st.colourDue) and gets them when it comes near: when the observer reports
  // it (one frame late), when the box scrolls (before that frame is drawn) and, after a paint that deferred
  // any, at the next animation frame (before it is drawn; its layout is due then anyway), so a block is never
  // drawn in sight with stale colours.  Token boundaries, ids and highlights are always written at once.

  onNear(entries) {
    for (const e of entries) {
      const st = this.byEl.get(e.target);
      if (!st) continue;
      st.near = e.isIntersecting;
      if (st.near && st.colourDue) this.cycleColours(st, st.colourDue.p, true);
    }
  }

  catchUp() {
    // colour the deferred blocks that are in or near the box's sight now (reads the layout: call when it is due)
    this.checkRaf = 0;
    if (!this.el.isConnected) return;
    let due = false;
    for (const st of this.state) if (st.colourDue) due = true;
    if (!due) return;
    const box = this.el.getBoundingClientRect();
    const margin = box.height / 4;
    for (const st of this.state) {
      if (!st.colourDue) continue;
      const r = st.el.getBoundingClientRect();
      if (r.bottom >= box.top - margin && r.top <= box.bottom + margin) {
        st.near = true;
        this.cycleColours(st, st.colourDue.p, true);
      }
    }
  }

  cycleColours(st, p, recolour) {
    // the block's phase class p<first index % 8> and, when its spans changed, each span's c<index in block % 8>
    if (st.phase !== p || recolour) {
      st.el.className = `blk p${p}`;
      st.phase = p;
    }
    if (recolour)
      for (let j = 0; j < st.nodes.length; j++) {
        const node = st.nodes[j];
        const c = j % 8;
        if (node._c !== c) {
          if (node._c !== undefined) node.classList.replace(`c${node._c}`, `c${c}`);
          else node.classList.add(`c${c}`);
          node._c = c;
        }
      }
    st.colourDue = null;
  }

  make(m, t, showWs) {
    const span = document.createElement("span");
    let cls = "tk";
    if (t.partial) cls += " partial";
    if (t.special) cls += " special";
    if (t.cont) cls += " cont";
    span.className = cls;
    span.dataset.id = String(t.id);
    if (t.bs !== undefined) span.dataset.b = String(t.bs);
    span.dataset.s = String(t.s);
    span.dataset.e = String(t.e);
    const text = displayOf(m, t);
    if (GLUED.test(text)) span._wbr = true;
    appendVisible(span, text, showWs);
    return span;
  }

  reset(m, key, scale) {
    this.key = key;
    this.model = m;
    const frag = document.createDocumentFragment();
    if (this.io) this.io.disconnect();
    this.byEl.clear();
    this.state = m.blocks.map((b) => {
      const div = document.createElement("div");
      div.className = "blk";
      div.style.containIntrinsicBlockSize = `auto ${Math.round(b.lines * 28.5 * scale)}px`;
      frag.appendChild(div);
      const st = { el: div, L: null, n: -1, tail: null, toks: [], nodes: [], phase: -1, colourKey: null, hl: false };
      st.near = true; // until the observer says otherwise: the first paint colours every block
      st.colourDue = null;
      this.byEl.set(div, st);
      if (this.io) this.io.observe(div);
      return st;
    });
    const top = this.el.scrollTop; // a repaint of the same text keeps the box where the reader had it
    this.el.replaceChildren(frag);
    if (top) this.el.scrollTop = top;
    this.flatCache = null;
  }

  renderBlock(m, b, st, showWs, L, whole) {
    if (b.deltas) return this.renderWords(m, b, st, showWs, L, whole);
    if (st.oldToks && st.oldToks.length) return this.patchBPE(m, st, showWs);
    const frag = document.createDocumentFragment();
    const nodes = new Array(st.toks.length);
    for (let j = 0; j < st.toks.length; j++) {
      const span = this.make(m, st.toks[j], showWs);
      put(frag, span);
      nodes[j] = span;
    }
    st.el.replaceChildren(frag);
    st.nodes = nodes;
  }

  drawUnit(m, parent, toks, j0, n, pos, showWs, nodes) {
    // one word's tokens toks[j0 .. j0+n) after the text from `pos` (drawn as gaps); a continuation sticks to
    // the piece before (a word of several pieces is one unbreakable span) -> [first node, last node, pos after]
    const cps = m.tm.cps;
    let first = null;
    let last = null;
    let word = null;
    let inWord = 0; // the piece's place in its word: every other continuation is shaded (live.css .alt)
    const add = (node) => {
      parent.appendChild(node);
      if (!first) first = node;
      last = node;
    };
    for (let j = j0; j < j0 + n; j++) {
      const t = toks[j];
      if (t.s > pos) {
        const gap = el("span", "gap");
        appendVisible(gap, cps.slice(pos, t.s).join(""), showWs);
        add(gap);
      }
      pos = Math.max(pos, t.e);
      const span = this.make(m, t, showWs);
      inWord = t.cont ? inWord + 1 : 0;
      if (inWord % 2) span.classList.add("alt");
      const beforeCont = j + 1 < j0 + n && toks[j + 1].cont;
      if (beforeCont) span.classList.add("before-cont");
      if (t.cont && word) word.appendChild(span);
      else {
        word = beforeCont ? el("span", "wd") : null;
        if (span._wbr && !t.cont) add(document.createElement("wbr")); // see GLUED
        add(word || span);
        if (word) word.appendChild(span);
      }
      nodes[j] = span;
    }
    return [first, last, pos];
  }

  renderWords(m, b, st, showWs, L, whole) {
    // WordPiece and Unigram: word by word (units).  When the block was and stays drawn whole, only the words
    // whose version changed are drawn again (their nodes replaced in place); otherwise the block is rebuilt.
    const units = b.U || m.units;
    const toks = st.toks;
    const nu = b.u1 - b.u0;
    const ver = new Int32Array(nu);
    for (let k = 0; k < nu; k++) {
      const u = units[b.u0 + k];
      let v = 0;
      while (v + 1 < u.length && u[v + 1][0] <= L) v++;
      ver[k] = v;
    }
    const nodes = new Array(toks.length);
    let pos = b.cs;
    if (whole && st.whole && st.ver && st.tailDone === st.tail) {
      const oldNodes = st.nodes;
      let j = 0;
      let oj = 0;
      let ok = true;
      for (let k = 0; k < nu && ok; k++) {
        const u = units[b.u0 + k];
        const n = u[ver[k]][1].length;
        const on = u[st.ver[k]][1].length;
        if (ver[k] === st.ver[k]) for (let x = 0; x < n; x++) nodes[j + x] = oldNodes[oj + x];
        else if (!st.first[k]) ok = false;
        else {
          const next = st.last[k].nextSibling;
          for (let node = st.first[k]; ; ) {
            const after = node.nextSibling;
            node.remove();
            if (node === st.last[k]) break;
            node = after;
          }
          const frag = document.createDocumentFragment();
          const [f, l] = this.drawUnit(m, frag, toks, j, n, pos, showWs, nodes);
          st.first[k] = f;
          st.last[k] = l;
          st.el.insertBefore(frag, next);
        }
        if (n) pos = Math.max(pos, toks[j + n - 1].e);
        j += n;
        oj += on;
      }
      if (ok) {
        st.ver = ver;
        st.nodes = nodes;
        return;
      }
      pos = b.cs;
    }
    const frag = document.createDocumentFragment();
    const first = new Array(nu).fill(null);
    const last = new Array(nu).fill(null);
    let j = 0;
    for (let k = 0; k < nu && j < toks.length; k++) {
      const n = Math.min(units[b.u0 + k][ver[k]][1].length, toks.length - j);
      [first[k], last[k], pos] = this.drawUnit(m, frag, toks, j, n, pos, showWs, nodes);
      j += n;
    }
    if (st.tail && pos < b.ce) {
      const gap = el("span", "gap");
      appendVisible(gap, m.tm.cps.slice(pos, b.ce).join(""), showWs);
      frag.appendChild(gap);
    }
    st.el.replaceChildren(frag);
    st.nodes = nodes;
    st.whole = whole;
    st.tailDone = st.tail;
    st.ver = whole ? ver : null;
    st.first = first;
    st.last = last;
  }

  patchBPE(m, st, showWs) {
    // byte-level tokens: keep the spans of the tokens that did not change, rebuild only the runs between
    const old = st.oldToks;
    const oldNodes = st.nodes;
    const toks = st.toks;
    const nodes = new Array(toks.length);
    const runs = [];
    let i = 0;
    let j = 0;
    while (i < old.length || j < toks.length) {
      if (i < old.length && j < toks.length && old[i].bs === toks[j].bs && old[i].be === toks[j].be && old[i].id === toks[j].id) {
        nodes[j] = oldNodes[i];
        i++;
        j++;
        continue;
      }
      const i0 = i;
      const j0 = j;
      if (i >= old.length) j = toks.length;
      else if (j >= toks.length) i = old.length;
      else {
        let oe = old[i++].be;
        let ne = toks[j++].be;
        while (oe !== ne) {
          if (oe < ne) {
            if (i >= old.length) {
              j = toks.length;
              break;
            }
            oe = old[i++].be;
          } else {
            if (j >= toks.length) {
              i = old.length;
              break;
            }
            ne = toks[j++].be;
          }
        }
      }
      runs.push([i0, i, j0, j]);
    }
    if (runs.length > 16) {
      // many runs: one rebuild of the block that reuses the unchanged spans (cheaper than many insertions)
      for (const [, , j0, j1] of runs) for (let y = j0; y < j1; y++) nodes[y] = this.make(m, toks[y], showWs);
      const frag = document.createDocumentFragment();
      for (let y = 0; y < toks.length; y++) put(frag, nodes[y]);
      st.el.replaceChildren(frag);
      st.nodes = nodes;
      return true;
    }
    for (const [i0, i1, j0, j1] of runs) {
      const next = i1 < old.length ? oldNodes[i1] : null;
      const anchor = next && next._wbr ? next.previousSibling : next;
      for (let x = i0; x < i1; x++) {
        if (oldNodes[x]._wbr) oldNodes[x].previousSibling.remove();
        oldNodes[x].remove();
      }
      const frag = document.createDocumentFragment();
      for (let y = j0; y < j1; y++) {
        nodes[y] = this.make(m, toks[y], showWs);
        put(frag, nodes[y]);
      }
      st.el.insertBefore(frag, anchor);
    }
    st.nodes = nodes;
    return true;
  }

  paint(m, L, cap, o) {
    // o: {ws, mode, maxRank, hl: Set of ranks to highlight or null, version, scale}
    const key = `${o.ws}|${o.mode}|${o.version}`;
    // Unigram: a size range with other blocks (see prepareWP) is drawn afresh
    const newBlocks = m.blockSets ? selectBlocks(m, L) : false;
    if (this.key !== key || this.model !== m || newBlocks || this.blocks !== m.blocks) {
      this.reset(m, key, o.scale || 1);
      this.blocks = m.blocks;
    }
    if (o.mode === "cycle") phaseCss(this.el);
    const blocks = m.blocks;
    const nb = blocks.length;
    // 1. what each block draws (binary searches only)
    const wants = new Int32Array(nb);
    const counts = new Int32Array(nb);
    let start = 0;
    for (let i = 0; i < nb; i++) {
      const c = (counts[i] = blockCount(blocks[i], L));
      const w = Math.min(c, Math.max(cap - start, 0));
      wants[i] = w;
      start += w;
    }
    this.drawn = start;
    // 2. rebuild the blocks that changed; re-phase, recolour and re-mark the others
    const colourKey = o.mode === "rank" ? `r${o.maxRank}` : o.mode;
    const colourOf = colourFn(o.mode, o.maxRank);
    let changedAny = false;
    let deferred = false;
    start = 0;
    for (let i = 0; i < nb; i++) {
      const b = blocks[i];
      const st = this.state[i];
      const w = wants[i];
      // WordPiece draws the text between two words half in each block: the tail only when the next word is drawn
      let tail = null;
      if (b.deltas) tail = i + 1 < nb ? wants[i + 1] > 0 : this.drawn < cap;
      const changed = st.L === null || st.n !== w || st.tail !== tail || blockChanged(b, st.L, L);
      if (changed) {
        st.oldToks = st.toks;
        st.toks = w <= 0 ? [] : b.deltas ? wpRange(m, L, b.u0, b.u1, w, b.U) : bpeRange(m, L, b.bs, b.be, w);
        st.tail = tail;
        if (b.deltas && i + 1 === nb && tail) st.tail = this.restIsSpace(m, b, st.toks);
        this.renderBlock(m, b, st, o.ws, L, w === counts[i]);
        st.oldToks = null;
        st.n = w;
        st.colourKey = null;
        changedAny = true;
      }
      st.L = L;
      if (o.mode === "cycle") {
        const p = start % 8;
        const recolour = changed || !!st.colourDue;
        if (st.phase !== p || recolour) {
          if (st.near) this.cycleColours(st, p, recolour);
          else {
            st.colourDue = { p };
            deferred = true;
          }
        }
      } else if (st.colourKey !== colourKey) {
        for (let j = 0; j < st.nodes.length; j++) {
          const node = st.nodes[j];
          const c = colourOf(st.toks[j], start + j);
          if (node._bg !== c) {
            node.style.background = c;
            node._bg = c;
          }
        }
        st.colourKey = colourKey;
      }
      if (o.hl || st.hl || changed) {
        let any = false;
        const hlKey = o.hlKey || (o.hlById ? "id" : "rank"); // the token field o.hl holds
        for (let j = 0; j < st.toks.length; j++) {
          const h = !!o.hl && o.hl.has(st.toks[j][hlKey]);
          const node = st.nodes[j];
          if (node._hl !== h) {
            node.classList.toggle("hl", h);
            node._hl = h;
          }
          any = any || h;
        }
        st.hl = any;
      }
      start += w;
    }
    if (changedAny) this.flatCache = null;
    if (deferred && !this.checkRaf) this.checkRaf = requestAnimationFrame(() => this.catchUp());
  }

  restIsSpace(m, b, toks) {
    // the original flow drew the text after the last word only when it is whitespace
    const from = toks.length ? toks[toks.length - 1].e : b.cs;
    const rest = m.tm.cps.slice(from, b.ce).join("");
    return rest === "" || /^\s+$/.test(rest);
  }

  flat() {
    // every drawn token and its span, in text order (built when asked: hover, ids, tests)
    if (!this.flatCache) {
      const toks = [];
      const nodes = [];
      for (const st of this.state) {
        for (const t of st.toks) toks.push(t);
        for (const n of st.nodes) nodes.push(n);
      }
      this.flatCache = { toks, nodes };
    }
    return this.flatCache;
  }

  indexOf(node) {
    // the token index of a drawn span (binary search on its first byte, or character for WordPiece)
    const { toks } = this.flat();
    const k = node.dataset.b !== undefined ? Number(node.dataset.b) : Number(node.dataset.s);
    let lo = 0;
    let hi = toks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = toks[mid].k;
      if (v === k) return mid;
      if (v < k) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

function colourFn(mode, maxRank) {
  if (mode === "id") return (t) => idColour(t.id);
  if (mode === "rank") return (t) => rankColour(t.rank, maxRank);
  return (t, i) => PALETTE[i % PALETTE.length];
}

// ---- the view ----

// the token count's note and the per-token cards' (ui/view.py versus_bytes and SAME_AS_BYTES, the server's)
const SAME_AS_BYTES = "= bytes per token: every character is 1 byte";

function versusBytes(tokens, bytes) {
  if (!bytes || tokens === bytes) return bytes ? "as many as bytes" : "";
  const pct = Math.round(Math.abs(1 - tokens / bytes) * 100);
  return `${pct || "<1"}% ${tokens < bytes ? "fewer" : "more"} than bytes`;
}

function paintRange(slider) {
  // the filled part of a range input (live.css draws the track as Streamlit's slider: filled up to the thumb)
  const lo = Number(slider.min) || 0;
  const hi = Number(slider.max) || 0;
  const pct = hi > lo ? (100 * (Number(slider.value) - lo)) / (hi - lo) : 0;
  slider.style.setProperty("--fill", `${Math.min(Math.max(pct, 0), 100)}%`);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
const fmt = (n) => n.toLocaleString("en-US");

function scrollWithin(box, target) {
  // bring `target` into sight inside the scrolling `box` only: the page itself never moves
  const b = box.getBoundingClientRect();
  const t = target.getBoundingClientRect();
  if (t.top < b.top) box.scrollTop -= b.top - t.top + 4;
  else if (t.bottom > b.bottom) box.scrollTop += t.bottom - b.bottom + 4;
}

class LiveView {
  constructor(parent) {
    this.root = el("div", "bpe-live");
    parent.appendChild(this.root);
    this.version = null;
    this.model = null;
    this.size = null;
    this.times = []; // ms per redraw (read by the benchmark)
    this.reported = []; // sizes told to the server and not yet echoed back
    this.build();
  }

  build() {
    const r = this.root;
    this.controls = el("div", "live-controls");
    const label = el("label", "live-label");
    this.sizeText = el("span", "live-size");
    label.append(el("span", null, "Vocabulary size "), this.sizeText);
    this.slider = el("input", "live-slider");
    this.slider.type = "range";
    this.slider.setAttribute("aria-label", "Vocabulary size");
    this.controls.append(label, this.slider);
    this.counts = el("div", "live-counts");
    this.note = el("div", "live-legend live-note");
    this.view = el("div", "bpe-view live-text");
    this.idsBox = el("details", "live-ids");
    const sum = el("summary", null, "Token ids");
    this.copyBtn = el("button", "live-copy", "Copy ids");
    this.copyBtn.type = "button";
    this.idList = el("div", "live-idlist");
    this.idsBox.append(sum, this.copyBtn, this.idList);
    this.tip = el("div", "live-tip");
    this.tip.hidden = true;
    r.append(this.controls, this.counts, this.view, this.note, this.idsBox, this.tip);

    this.slider.addEventListener("input", () => {
      paintRange(this.slider);
      this.setSize(Number(this.slider.value));
    });
    this.slider.addEventListener("change", () => this.report());
    this.view.addEventListener("mouseover", (ev) => this.hover(ev, true));
    this.view.addEventListener("mouseout", (ev) => this.hover(ev, false));
    this.idList.addEventListener("mouseover", (ev) => this.hoverId(ev, true));
    this.idList.addEventListener("mouseout", (ev) => this.hoverId(ev, false));
    this.view.addEventListener("click", (ev) => {
      const t = ev.target instanceof Element ? ev.target.closest(".tk") : null;
      if (t && this.setTriggerValue) this.setTriggerValue("clicked", Number(t.dataset.id));
    });
    this.copyBtn.addEventListener("click", () => {
      const text = this.tokens.map((t) => t.id).join(" ");
      if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
    });
    this.idsBox.addEventListener("toggle", () => this.drawIds());
  }

  update(data) {
    if (data.v !== this.version) {
      this.version = data.v;
      this.pending = decode(data).then((m) => {
        if (this.version !== data.v) return;
        this.model = m;
        this.configure(data);
      });
      return;
    }
    if (this.model) this.configure(data);
  }

  configure(data) {
    const m = this.model;
    this.data = data;
    this.root.style.setProperty("--bpe-scale", String(data.scale || 1));
    this.root.classList.toggle("presenting", !!data.present || (data.scale || 1) > 1); // compact layout (live.css)
    this.slider.min = String(m.lo);
    this.slider.max = String(m.hi);
    this.controls.hidden = m.lo === m.hi;
    this.view.classList.toggle("wp", m.kind !== "bpe");
    // the server's size wins on a new payload, or when it changed on the server's side; an echo of a
    // size this view reported is stale once the user has moved on (a rerun answers a report late)
    let size = this.size;
    const fresh = this.appliedVersion !== data.v; // a new text or tokenizer: always redrawn, even at the same size
    if (fresh) this.reported = [];
    const echo = this.reported.includes(data.size);
    if (fresh || (data.size !== this.serverSize && !echo)) size = data.size;
    if (echo) this.reported = this.reported.slice(this.reported.indexOf(data.size) + 1);
    this.appliedVersion = data.v;
    this.serverSize = data.size;
    const lead = groupLeadSize(this, data); // group.js: a Compare column follows its group's slider
    if (lead !== null) size = lead;
    size = Math.min(Math.max(size, m.lo), m.hi);
    if (fresh || size !== this.size || this.mode !== data.mode || this.ws !== data.ws) {
      this.mode = data.mode;
      this.ws = data.ws;
      this.slider.value = String(size);
      this.setSize(size, true);
    }
    paintRange(this.slider);
  }

  setSize(L, force) {
    if (!this.model || (L === this.size && !force)) return;
    const t0 = performance.now();
    this.size = L;
    this.draw();
    groupFollow(this, L); // group.js: the columns sharing this slider redraw too
    this.times.push(performance.now() - t0);
    if (this.times.length > 5000) this.times.shift();
  }

  get tokens() {
    // the drawn tokens in text order (null before the first draw)
    return this.painter ? this.painter.flat().toks : null;
  }

  get nodes() {
    return this.painter ? this.painter.flat().nodes : null;
  }

  report() {
    // the drag (or key press) ended: tell the server, once things settle
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => {
      if (this.setStateValue && this.size !== null) {
        this.reported.push(this.size);
        this.setStateValue("size", { n: this.size, t: Date.now(), v: this.version });
      }
    }, 150);
  }

  draw() {
    const m = this.model;
    const d = this.data;
    if (!m.blocks) (m.kind === "bpe" ? prepareBPE : prepareWP)(m);
    this.painter = this.painter || new BlockPainter(this.view);
    const maxRank = Math.max(this.size - m.lo - 1, 0);
    this.painter.paint(m, this.size, d.maxTokens, {
      ws: d.ws,
      mode: d.mode,
      maxRank,
      hl: null,
      version: this.version,
      scale: d.scale || 1,
    });
    this.drawCounts();
    if (this.idsBox.open) this.drawIds();
    this.fitBox();
  }

  fitBox() {
    // a text taller than its box: the box gets its max-height as its height and size containment (live.css
    // `.fit`), so the browser lays a slider move out inside the box only, not the page around it.  Checked
    // at the next frame (the layout is due then anyway), at most once per frame
    if (this.fitRaf) return;
    this.fitRaf = requestAnimationFrame(() => {
      this.fitRaf = 0;
      const v = this.view;
      if (!v.isConnected) return;
      const fit = v.classList.contains("fit");
      if (getComputedStyle(v).maxHeight === "none") v.classList.remove("fit");
      else if (!fit && v.scrollHeight > v.clientHeight + 1) v.classList.add("fit");
      else if (fit && v.scrollHeight <= v.clientHeight) v.classList.remove("fit");
    });
  }

  indexOf(node) {
    return this.painter.indexOf(node);
  }

  drawCounts() {
    const m = this.model;
    const d = this.data;
    const L = this.size;
    if (this.sizeText.textContent !== fmt(L)) this.sizeText.textContent = fmt(L);
    const total = m.totals ? m.totals[L - m.lo] : this.painter.drawn;
    const cards = [
      ["Tokens", fmt(total), versusBytes(total, d.textBytes)],
      ["Characters", fmt(d.textChars), ""],
      ["Bytes (UTF-8)", fmt(d.textBytes), ""],
      ["Bytes per token", total ? (d.textBytes / total).toFixed(2) : "0.00", ""],
      ["Characters per token", total ? (d.textChars / total).toFixed(2) : "0.00",
        d.textChars === d.textBytes ? SAME_AS_BYTES : ""],
    ];
    // built once per shape; a slider move only rewrites the texts that changed (less for the page to lay out)
    const shape = cards.map((c) => (c[2] ? 1 : 0)).join("");
    if (this.cardShape !== shape || !this.cardEls || !this.counts.firstChild) {
      const frag = document.createDocumentFragment();
      this.cardEls = cards.map(([k, , sub], i) => {
        const c = el("div", "live-card");
        c.dataset.k = ["tokens", "characters", "bytes", "bpt", "cpt"][i];
        const parts = [el("div", "live-card-k", k), el("div", "live-card-v")];
        if (sub) parts.push(el("div", "live-card-sub"));
        c.append(...parts);
        frag.appendChild(c);
        return parts;
      });
      this.counts.replaceChildren(frag);
      this.cardShape = shape;
    }
    cards.forEach((card, i) => {
      for (let x = 1; x < this.cardEls[i].length; x++)
        if (this.cardEls[i][x].textContent !== card[x]) this.cardEls[i][x].textContent = card[x];
    });
    this.counts.dataset.total = String(total);
    this.view.dataset.size = String(L);
    const drawn = this.painter.drawn;
    this.view.dataset.drawn = String(drawn);
    const note =
      drawn >= total
        ? `${fmt(drawn)} tokens drawn.`
        : `Showing the first ${fmt(drawn)} of ${fmt(total)} tokens; all counts cover the whole text.`;
    if (this.note.textContent !== note) this.note.textContent = note;
    groupCounts(this, total); // group.js: a Compare column's title and count line
  }

  drawIds() {
    if (!this.idsBox.open) return;
    const frag = document.createDocumentFragment();
    this.tokens.forEach((t, i) => {
      if (i) frag.appendChild(document.createTextNode(" "));
      const s = el("span", "tid", String(t.id));
      s.dataset.i = String(i);
      frag.appendChild(s);
    });
    this.idList.replaceChildren(frag);
  }

  link(i, on) {
    const tk = this.nodes ? this.nodes[i] : null;
    const id = this.idsBox.open ? this.idList.querySelector(`.tid[data-i="${i}"]`) : null;
    for (const e of [tk, id]) if (e) e.classList.toggle("linked", on);
    return [tk, id];
  }

  hover(ev, on) {
    const tk = ev.target instanceof Element ? ev.target.closest(".tk") : null;
    if (!tk) return;
    const i = this.indexOf(tk);
    const [, id] = this.link(i, on);
    if (on && id) scrollWithin(this.idList, id);
    if (!on) {
      this.tip.hidden = true;
      return;
    }
    this.tip.textContent = tooltip(this.model, this.tokens[i]);
    const rb = this.root.getBoundingClientRect();
    const tb = tk.getBoundingClientRect();
    this.tip.style.left = `${Math.max(0, tb.left - rb.left)}px`;
    this.tip.style.top = `${tb.bottom - rb.top + 4}px`;
    this.tip.hidden = false;
  }

  hoverId(ev, on) {
    const s = ev.target instanceof Element ? ev.target.closest(".tid") : null;
    if (!s) return;
    const [tk] = this.link(Number(s.dataset.i), on);
    if (on && tk) scrollWithin(this.view, tk);
  }
}


// ---- the Merges page's playback ----

function displayBytes(bytes) {
  // UTF-8 decoded, every byte outside a complete valid character as <0xNN> (bpe_core.spans.display_bytes)
  let out = "";
  const n = bytes.length;
  let i = 0;
  const bad = (b) => "<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">";
  const cont = (j, lo = 0x80, hi = 0xbf) => j < n && bytes[j] >= lo && bytes[j] <= hi;
  while (i < n) {
    const b = bytes[i];
    let len = 0;
    if (b < 0x80) len = 1;
    else if (b >= 0xc2 && b <= 0xdf) len = cont(i + 1) ? 2 : 0;
    else if (b >= 0xe0 && b <= 0xef) {
      const lo = b === 0xe0 ? 0xa0 : 0x80,
        hi = b === 0xed ? 0x9f : 0xbf;
      len = cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
    } else if (b >= 0xf0 && b <= 0xf4) {
      const lo = b === 0xf0 ? 0x90 : 0x80,
        hi = b === 0xf4 ? 0x8f : 0xbf;
      len = cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    }
    if (!len) {
      out += bad(b);
      i += 1;
    } else {
      out += new TextDecoder().decode(bytes.subarray(i, i + len));
      i += len;
    }
  }
  return out;
}

const SPEEDS = [1, 2, 5, 10, 30, 60];

function markMade(m) {
  // Unigram's player: each drawn token learns the step that made it (`made`): the first step of the word
  // version it belongs to, or, when the version before held the same token (id and span), that one's
  // step; so step k highlights exactly the tokens its pruning round re-segmented
  for (const unit of m.units) {
    let prev = new Map();
    for (const [step, rows] of unit) {
      const cur = new Map();
      for (const row of rows) {
        const t = wpToken(m, row);
        const key = `${t.id},${t.s},${t.e}`;
        t.made = prev.has(key) ? prev.get(key) : step;
        cur.set(key, t.made);
      }
      prev = cur;
    }
  }
}

// the words of each story (BPE and WordPiece: merges; Unigram: pruning rounds)
const STORY = {
  merges: { step: "Merge step", speed: "Play speed (merges per second)" },
  pruning: { step: "Pruning round", speed: "Play speed (rounds per second)" },
};

class MergesView {
  constructor(parent) {
    this.root = el("div", "bpe-live bpe-merges");
    parent.appendChild(this.root);
    this.version = null;
    this.model = null;
    this.step = null;
    this.playing = false;
    this.visited = []; // steps drawn while playing (read by the tests)
    this.times = [];
    this.reported = [];
    this.build();
  }

  build() {
    const bar = el("div", "mg-bar");
    const btn = (label, cls) => {
      const b = el("button", "mg-btn " + cls, label);
      b.type = "button";
      return b;
    };
    this.bFirst = btn("« First", "first");
    this.bPrev = btn("‹ Prev", "prev");
    this.bPlay = btn("▶ Play", "play");
    this.bNext = btn("Next ›", "next");
    this.bLast = btn("Last »", "last");
    this.speed = el("select", "mg-speed");
    this.speed.setAttribute("aria-label", "Play speed (merges per second)");
    for (const s of SPEEDS) {
      const o = el("option", null, `${s} / s`);
      o.value = String(s);
      this.speed.appendChild(o);
    }
    this.speed.value = "10";
    bar.append(this.bFirst, this.bPrev, this.bPlay, this.bNext, this.bLast, this.speed);
    const lab = el("label", "live-label");
    this.stepText = el("span", "live-size");
    this.stepLabel = el("span", null, "Merge step ");
    lab.append(this.stepLabel, this.stepText);
    this.slider = el("input", "live-slider");
    this.slider.type = "range";
    this.slider.min = "0";
    this.slider.setAttribute("aria-label", "Merge step");
    this.card = el("div", "mg-card merge-card");
    this.spark = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.spark.setAttribute("class", "mg-spark");
    this.spark.setAttribute("viewBox", "0 0 300 60");
    this.spark.setAttribute("preserveAspectRatio", "none");
    this.caption = el("div", "bpe-legend mg-caption");
    this.view = el("div", "bpe-view live-text focus");
    this.tip = el("div", "live-tip");
    this.tip.hidden = true;
    const left = el("div", "mg-left");
    this.sparkKey = el("div", "bpe-legend mg-key");
    this.sparkKey.append(el("span", "mg-key-tokens", "— tokens of the text"), el("span", "mg-key-loss", "— loss"), el("span", null, "| this step"));
    this.sparkKey.hidden = true;
    left.append(this.card, this.spark, this.sparkKey);
    const right = el("div", "mg-right");
    right.append(this.caption, this.view);
    const body = el("div", "mg-body");
    body.append(left, right);
    this.root.append(bar, lab, this.slider, body, this.tip);

    this.bFirst.addEventListener("click", () => this.go(0, true));
    this.bPrev.addEventListener("click", () => this.go(this.step - 1, true));
    this.bNext.addEventListener("click", () => this.go(this.step + 1, true));
    this.bLast.addEventListener("click", () => this.go(this.n, true));
    this.bPlay.addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    this.speed.addEventListener("change", () => {
      if (this.playing) {
        this.pause(false);
        this.play();
      }
    });
    this.slider.addEventListener("input", () => {
      if (this.playing) this.pause(false);
      this.go(Number(this.slider.value), false);
    });
    this.slider.addEventListener("change", () => this.report());
    this.view.addEventListener("mouseover", (ev) => this.hover(ev, true));
    this.view.addEventListener("mouseout", (ev) => this.hover(ev, false));
  }

  update(data) {
    if (data.v !== this.version) {
      this.version = data.v;
      decode(data).then((m) => {
        if (this.version !== data.v) return;
        m.trace = data.trace;
        if (data.trace.newId) m.trace.rankOf = new Map(data.trace.newId.map((id, r) => [id, r]));
        if (m.kind === "unigram") markMade(m);
        this.model = m;
        this.n = m.hi - m.lo;
        const words = STORY[m.kind === "unigram" ? "pruning" : "merges"];
        this.stepLabel.textContent = words.step + " ";
        this.slider.setAttribute("aria-label", words.step);
        this.speed.setAttribute("aria-label", words.speed);
        this.tokBytes = new Map();
        this.slider.max = String(this.n);
        this.drawSpark();
        this.configure(data, true);
      });
      return;
    }
    if (this.model) this.configure(data, false);
  }

  configure(data, fresh) {
    this.data = data;
    this.root.style.setProperty("--bpe-scale", String(data.scale || 1));
    this.root.classList.toggle("presenting", !!data.present); // compact layout (live.css)
    if (fresh) this.reported = [];
    const echo = this.reported.includes(data.step);
    let k = this.step;
    if (fresh || (data.step !== this.serverStep && !echo && !this.playing)) k = data.step;
    if (echo) this.reported = this.reported.slice(this.reported.indexOf(data.step) + 1);
    this.serverStep = data.step;
    if (fresh || k !== this.step || this.ws !== data.ws || this.mode !== data.mode) {
      this.ws = data.ws;
      this.mode = data.mode;
      this.go(k, false, true);
    }
  }

  bytesOf(id) {
    // a token's bytes, from the trace: a merged token is its two parts joined
    let b = this.tokBytes.get(id);
    if (b) return b;
    const m = this.model;
    const r = m.trace.rankOf.get(id);
    if (r === undefined) {
      b = new Uint8Array([id]); // trained tokenizers: ids 0-255 are the bytes
    } else {
      const l = this.bytesOf(m.trace.left[r]),
        rr = this.bytesOf(m.trace.right[r]);
      b = new Uint8Array(l.length + rr.length);
      b.set(l);
      b.set(rr, l.length);
    }
    this.tokBytes.set(id, b);
    return b;
  }

  get tokens() {
    return this.painter ? this.painter.flat().toks : null;
  }

  go(k, report, force, from) {
    // draw step k; `from`: the first step applied since the last draw (Play applies several per frame)
    if (!this.model) return;
    k = Math.min(Math.max(k, 0), this.n);
    if (k === this.step && !force) return;
    const t0 = performance.now();
    this.step = k;
    this.hlFrom = from === undefined ? null : from;
    this.draw();
    this.times.push(performance.now() - t0);
    if (this.times.length > 5000) this.times.shift();
    if (report) this.report();
  }

  play() {
    if (this.step >= this.n) this.go(0, false);
    this.playing = true;
    this.visited = [];
    this.frames = 0;
    this.bPlay.textContent = "❚❚ Pause";
    const rate = Number(this.speed.value);
    let last = performance.now();
    let owed = 0;
    const tick = (now) => {
      if (!this.playing) return;
      owed += ((now - last) * rate) / 1000;
      last = now;
      this.keepInSight();
      // as many steps as the time since the last frame asks for (speed x elapsed), drawn once; every
      // step is still visited in order (the counter and `visited` see each one); after a stall of the
      // page at most a quarter second's worth is caught up, the rest is dropped from the debt, not the steps
      const due = Math.min(Math.floor(owed), Math.max(2, Math.ceil(rate / 4)), this.n - this.step);
      if (due >= 1) {
        owed = Math.min(owed - due, 1);
        const from = this.step;
        for (let s = from + 1; s <= from + due; s++) this.visited.push(s);
        this.frames++;
        this.go(from + due, false, false, from);
        if (this.step >= this.n) {
          this.pause();
          return;
        }
      }
      this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }

  keepInSight(first = this.firstMade, frames = 60, calm = 0) {
    // keep the tokens the last merge made in sight inside the text box, without scrolling the page.
    // Blocks out of sight are not laid out (content-visibility: auto) and take an estimated height until
    // they are, so the token moves as the blocks around it are laid out: when not playing, measure again
    // at the next frames (at most `frames`, until it stayed in sight for 5 frames running) and scroll
    // again whenever it left the box (on a new page, also until the view is attached).
    this.firstMade = null;
    if (!first || frames <= 0) return;
    let ok = false;
    if (first.isConnected && this.view.isConnected) {
      const vb = this.view.getBoundingClientRect(),
        fb = first.getBoundingClientRect();
      ok = fb.top >= vb.top && fb.bottom <= vb.bottom;
      if (!ok) this.view.scrollTop += fb.top - vb.top - vb.height / 3;
    } else if (!this.view.contains(first)) return; // redrawn since: the new draw keeps its own token in sight
    calm = ok ? calm + 1 : 0;
    if (calm < 5 && !this.playing) requestAnimationFrame(() => this.keepInSight(first, frames - 1, calm));
  }

  pause(report = true) {
    this.playing = false;
    cancelAnimationFrame(this.raf);
    this.bPlay.textContent = "▶ Play";
    if (this.hlFrom !== null && this.hlFrom !== undefined) this.go(this.step, false, true); // the last step's tokens
    if (report) this.report(0);
  }

  report(delay = 150) {
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => {
      if (this.setStateValue && this.step !== null) {
        this.reported.push(this.step);
        this.setStateValue("step", { n: this.step, t: Date.now(), v: this.version });
      }
    }, delay);
  }

  drawSpark() {
    // the training text's tokens after each step (and, for Unigram, the loss after each round), with a
    // marker at the step shown
    const m = this.model;
    const curve = (values, cls) => {
      let hi = -Infinity,
        lo = Infinity;
      for (const t of values)
        if (t !== null && t !== undefined) {
          hi = Math.max(hi, t);
          lo = Math.min(lo, t);
        }
      const n = values.length;
      const pts = [];
      const stride = Math.max(1, Math.floor(n / 300));
      for (let i = 0; i < n; i += stride)
        if (values[i] !== null && values[i] !== undefined)
          pts.push(`${((i / Math.max(n - 1, 1)) * 300).toFixed(1)},${(55 - ((values[i] - lo) / Math.max(hi - lo, 1e-9)) * 50).toFixed(1)}`);
      const path = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
      path.setAttribute("points", pts.join(" "));
      path.setAttribute("class", cls);
      return path;
    };
    const paths = [curve(m.totals, "mg-curve")];
    const loss = m.kind === "unigram" ? m.trace.loss : null;
    if (loss) paths.push(curve(loss, "mg-curve mg-loss"));
    this.sparkKey.hidden = !loss;
    this.marker = document.createElementNS("http://www.w3.org/2000/svg", "line");
    this.marker.setAttribute("class", "mg-marker");
    this.marker.setAttribute("y1", "0");
    this.marker.setAttribute("y2", "60");
    this.spark.replaceChildren(...paths, this.marker);
  }

  drawCard() {
    const m = this.model;
    const k = this.step;
    const frag = document.createDocumentFragment();
    if (m.kind === "unigram") {
      this.pruningCard(frag);
    } else {
      this.mergeCard(frag);
    }
    this.card.replaceChildren(frag);
    this.card.dataset.step = String(k);
    this.marker.setAttribute("x1", String((k / Math.max(this.n, 1)) * 300));
    this.marker.setAttribute("x2", String((k / Math.max(this.n, 1)) * 300));
  }

  pruningCard(frag) {
    // ui/merges/pruning.py pruning_card_html, in the browser: the round's sizes, loss, tokens, removed pieces
    const m = this.model;
    const k = this.step;
    const tr = m.trace;
    const tot = m.totals;
    const loss = (x) => (x === null || x === undefined || Number.isNaN(x) ? "unknown" : x.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }));
    let facts;
    if (!k) {
      frag.appendChild(el("div", "no", "Step 0: the trained vocabulary"));
      facts = [
        ["Vocabulary", fmt(tr.sizes[0]), "the trained size", "Special tokens, the characters and the learned pieces."],
        ["Loss", loss(tr.loss[0]), "nats", "Negative log-likelihood of the training words' best segmentations."],
        ["Tokens of the text", fmt(tot[0]), "", ""],
      ];
    } else {
      const r = k - 1;
      frag.appendChild(el("div", "no", `Pruning round ${tr.round[r]} (step ${fmt(k)} of ${fmt(this.n)})`));
      const lb = tr.lossBefore[r],
        la = tr.lossAfter[r];
      const rise = lb === null || lb === undefined ? null : la - lb;
      const before = tot[k - 1],
        after = tot[k];
      const d = after - before;
      facts = [
        ["Vocabulary", `${fmt(tr.sizes[k - 1])} → ${fmt(tr.sizes[k])}`, `−${fmt(tr.nRemoved[r])} pieces`, ""],
        ["Loss", `${loss(lb)} → ${loss(la)}`, rise === null ? "" : `${rise >= 0 ? "+" : "-"}${loss(Math.abs(rise))} nats`,
          "Negative log-likelihood of the training words' best segmentations before the round and after it (pruned, then re-estimated by EM)."],
        ["Tokens of the text", `${fmt(before)} → ${fmt(after)}`, `${d >= 0 ? "+" : "-"}${fmt(Math.abs(d))}`,
          "Tokens of the whole training text before and after the round."],
      ];
    }
    const fs = el("div", "facts");
    for (const [l, v, d, h] of facts) {
      const f = el("div", "fact");
      if (h) f.title = h;
      f.append(el("div", "l", l), el("div", "v", v), el("div", "d", d));
      fs.appendChild(f);
    }
    frag.appendChild(fs);
    if (k) {
      const box = el("div", "removed");
      box.appendChild(el("span", "no", "Removed, cheapest first (estimated loss increase):"));
      for (const [piece, plus, exact] of tr.removed[k - 1]) {
        const c = el("span", "chip");
        appendVisible(c, piece, true);
        c.appendChild(el("small", null, plus));
        c.title = `loss increase ${exact} nats`;
        box.appendChild(c);
      }
      const more = tr.nRemoved[k - 1] - tr.removed[k - 1].length;
      if (more > 0) box.appendChild(el("span", "no", ` … ${fmt(more)} more`));
      frag.appendChild(box);
    }
  }

  mergeCard(frag) {
    const m = this.model;
    const k = this.step;
    const tr = m.trace;
    const tot = m.totals;
    const no = el("div", "no", k ? `Merge #${fmt(k)}` : "Step 0");
    frag.appendChild(no);
    const wp = m.kind === "wordpiece";
    if (!k) {
      const unit = wp ? "character" : "byte";
      frag.appendChild(el("div", null, `No merge yet: every ${unit} is its own token. The training text is ${fmt(tot[0])} tokens. Press Next or Play.`));
    } else if (wp) {
      const r = k - 1;
      const chip = (text, id, extra) => {
        const c = el("span", "chip" + (extra || ""));
        appendVisible(c, text, true);
        c.appendChild(el("small", null, `id ${id}`));
        c.dataset.id = String(id);
        return c;
      };
      const row = el("div", "mg-pair");
      row.append(chip(tr.leftText[r], tr.left[r]), el("span", "op", "+"), chip(tr.rightText[r], tr.right[r]), el("span", "op", "→"), chip(tr.mergedText[r], tr.newId[r], " new"));
      frag.appendChild(row);
      const before = tot[k - 1],
        after = tot[k];
      const facts = [
        ["Score", Number(tr.score[r]).toPrecision(4), `= ${fmt(tr.pairFreq[r])} / (${fmt(tr.leftFreq[r])} × ${fmt(tr.rightFreq[r])})`],
        ["Pair frequency", fmt(tr.pairFreq[r]), "when chosen"],
        ["Tokens of the text", `${fmt(before)} → ${fmt(after)}`, before ? `−${fmt(before - after)} (${((100 * (before - after)) / before).toFixed(1)}%)` : ""],
      ];
      if (!tr.added[r]) facts.push(["New id", "none", `${tr.mergedText[r]} already existed`]);
      const fs = el("div", "facts");
      for (const [l, v, d] of facts) {
        const f = el("div", "fact");
        f.append(el("div", "l", l), el("div", "v", v), el("div", "d", d));
        fs.appendChild(f);
      }
      frag.appendChild(fs);
    } else {
      const r = k - 1;
      const chip = (id, extra) => {
        const c = el("span", "chip" + (extra || ""));
        appendVisible(c, displayBytes(this.bytesOf(id)), true);
        c.appendChild(el("small", null, `id ${id}`));
        c.dataset.id = String(id);
        return c;
      };
      const row = el("div", "mg-pair");
      row.append(chip(tr.left[r]), el("span", "op", "+"), chip(tr.right[r]), el("span", "op", "→"), chip(tr.newId[r], " new"));
      frag.appendChild(row);
      const before = tot[k - 1],
        after = tot[k];
      const overlap = tr.count[r] - tr.replaced[r];
      const facts = [
        ["Pair count", fmt(tr.count[r]), "when chosen"],
        ["Replaced", fmt(tr.replaced[r]), overlap ? `${fmt(overlap)} overlapped` : "no overlap"],
        ["Tokens of the text", `${fmt(before)} → ${fmt(after)}`, before ? `−${fmt(before - after)} (${((100 * (before - after)) / before).toFixed(1)}%)` : ""],
      ];
      const fs = el("div", "facts");
      for (const [l, v, d] of facts) {
        const f = el("div", "fact");
        f.append(el("div", "l", l), el("div", "v", v), el("div", "d", d));
        fs.appendChild(f);
      }
      frag.appendChild(fs);
    }
  }

  draw() {
    const m = this.model;
    const k = this.step;
    const L = m.lo + k;
    this.stepText.textContent = fmt(k);
    this.slider.value = String(k);
    paintRange(this.slider);
    this.bFirst.disabled = this.bPrev.disabled = k === 0;
    this.bNext.disabled = this.bLast.disabled = k >= this.n;
    const wp = m.kind === "wordpiece";
    const uni = m.kind === "unigram";
    if (!m.blocks) (wp || uni ? prepareWP : prepareBPE)(m);
    this.painter = this.painter || new BlockPainter(this.view);
    // highlighted: the tokens made by this step (while playing: by every step this frame applied); BPE
    // knows them by rank, WordPiece by id (a merge that re-makes a token highlights its earlier copies too),
    // Unigram by the step that re-segmented them (markMade)
    const from = Math.min(this.hlFrom === null || this.hlFrom === undefined ? k - 1 : this.hlFrom, k - 1);
    const hl = new Set();
    for (let r = Math.max(from, 0); r < k; r++) hl.add(wp ? m.trace.newId[r] : uni ? r + 1 : r);
    const hlKey = wp ? "id" : uni ? "made" : "rank";
    this.painter.paint(m, L, this.data.maxTokens, {
      ws: this.data.ws,
      mode: this.data.mode,
      maxRank: Math.max(this.n - 1, 0),
      hl: k ? hl : null,
      hlKey,
      version: this.version,
      scale: this.data.scale || 1,
    });
    let made = 0;
    let first = null;
    if (k)
      for (const st of this.painter.state)
        for (let i = 0; i < st.toks.length; i++)
          if (hl.has(st.toks[i][hlKey])) {
            made++;
            if (first === null) first = st.nodes[i];
          }
    this.view.classList.toggle("focus", k > 0);
    this.view.dataset.step = String(k);
    this.view.dataset.made = String(made);
    const toks = `${fmt(made)} token${made === 1 ? "" : "s"}`;
    if (uni) {
      const tr = m.trace;
      const which = from < k - 1 ? `rounds ${tr.round[from]}–${tr.round[k - 1]}` : `round ${tr.round[k - 1]}`;
      this.caption.textContent = k
        ? `The text after ${fmt(k)} pruning round${k === 1 ? "" : "s"} (${fmt(tr.sizes[k])} tokens of vocabulary). Highlighted: the ${toks} ${which} changed (words re-segmented after the pieces removed and the scores re-estimated); everything else is dimmed.`
        : "The trained vocabulary, before the rounds that prune it further.";
    } else {
      const which = from < k - 1 ? `merges #${fmt(from + 1)}–#${fmt(k)}` : `merge #${fmt(k)}`;
      this.caption.textContent = k
        ? `The text after ${fmt(k)} merge${k === 1 ? "" : "s"}. Highlighted: the ${toks} made by ${which}; everything else is dimmed.`
        : `The text before any merge: one token per ${wp ? "character" : "byte"}.`;
    }
    this.drawCard();
    this.firstMade = first; // scrolled into sight at the next frame, when the layout is fresh anyway
    if (!this.playing) requestAnimationFrame(() => this.keepInSight()); // a step, the slider, a new page
  }

  hover(ev, on) {
    const tk = ev.target instanceof Element ? ev.target.closest(".tk") : null;
    if (!tk) return;
    if (!on) {
      this.tip.hidden = true;
      return;
    }
    this.tip.textContent = tooltip(this.model, this.painter.flat().toks[this.painter.indexOf(tk)]);
    const rb = this.root.getBoundingClientRect(),
      tb = tk.getBoundingClientRect();
    this.tip.style.left = `${Math.max(0, tb.left - rb.left)}px`;
    this.tip.style.top = `${tb.bottom - rb.top + 4}px`;
    this.tip.hidden = false;
  }
}

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  let view = REG.get(parentElement);
  if (!view) {
    view = data && data.kind === "merges" ? new MergesView(parentElement) : new LiveView(parentElement);
    REG.set(parentElement, view);
  }
  view.setStateValue = setStateValue;
  view.setTriggerValue = setTriggerValue;
  // the tests and the benchmark drive the newest view through these
  if (view instanceof MergesView) window.__bpeMerges = view;
  else window.__bpeLive = view;
  if (data && data.role) groupConfigure(view, data); // group.js: Compare's shared slider and its columns
  if (data) view.update(data);
}
