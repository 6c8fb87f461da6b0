"""The live token view: the text redrawn in the browser at every slider position.

A JavaScript-only ``st.components.v2`` component (as :mod:`ui.token_click`):
Python sends, once per (text, tokenizer), the tables of :mod:`bpe_core.analysis.live`
(:func:`text_payload`); which tables, and how they are built, is the algorithm's
(:attr:`ui.algorithms.AlgorithmView.live`, a :class:`ui.algorithms.LiveTables`): this
module only packs, caches and draws them.  The browser re-segments the drawn text on every
slider ``input`` event and key press, with the counts, bytes per token,
hover details and the token-id list following.  When a drag ends the browser
sets the state value ``size``; :func:`live_text` copies it into the shared
``st.session_state["vocab_size"]`` in a callback (before the page runs, so
the address bar written by :func:`ui.links.publish` follows at once).

User text travels as JSON data and is drawn with ``textContent`` only.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import itertools
import json
import math
import sys
import weakref
from array import array
from pathlib import Path
from typing import Any

import streamlit as st

from bpe_core.analysis.live import NEVER, WordPieceVersions
from bpe_core.interface import TrainedTokenizer
from bpe_core.pretokenize import pretoken_prefix
from ui import state_keys as sk
from ui.algorithms import LiveTables, view_of
from ui.limits import MAX_DRAW_CHARS, MAX_DRAW_TOKENS, MAX_STEP_CHARS, MAX_STEP_TOKENS
from ui.present import PRESENTATION_SCALE  # 15 px -> 22.5 px, as the server views (ui.present.TOKEN_FONT)
from ui.view import session_size  # one rule for the shared slider value, server slider and live view

_HERE = Path(__file__).resolve().parent
_JS = (_HERE / "live.js").read_text(encoding="utf-8") + (_HERE / "group.js").read_text(encoding="utf-8")
_CSS = (_HERE / "live.css").read_text(encoding="utf-8")


_component = st.components.v2.component("bpe_playground.live_view", js=_JS, css=_CSS, isolate_styles=True)


def payload_head(lo: int, hi: int, text: str, drawn: str, totals: list[int] | None) -> dict[str, Any]:
    """The fields every live payload starts with (Playground and Merges players alike).

    The slider range ``lo..hi``, the drawn text, the whole text's length in characters and UTF-8 bytes,
    the token cap, and the whole text's token count per position (packed; ``None`` when not known).
    """
    return {
        "lo": lo,
        "hi": hi,
        "text": drawn,
        "textChars": len(text),
        "textBytes": len(text.encode("utf-8", errors="surrogatepass")),
        "maxTokens": MAX_DRAW_TOKENS,
        "totals": pack(totals) if totals is not None else None,
    }


def pack(values: list[int]) -> dict[str, Any]:
    """Little-endian ints, gzip, base64: ``{"w": 2 or 4, "z": str}``.

    Width 2 when every value except the two sentinels (``NEVER``, ``NEVER - 1``)
    is below ``0xFFFE``; the sentinels then become ``0xFFFF`` / ``0xFFFE``.
    """
    real = [v for v in values if v < NEVER - 1]
    if max(real, default=0) < 0xFFFE:
        arr = array("H", [v if v < NEVER - 1 else v - NEVER + 0xFFFF for v in values])
        width = 2
    else:
        arr = array("I", values)
        width = 4
    if sys.byteorder == "big":
        arr.byteswap()
    return {"w": width, "z": base64.b64encode(gzip.compress(arr.tobytes(), 6, mtime=0)).decode("ascii")}


def _gz_json(obj: Any) -> str:
    raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, 6, mtime=0)).decode("ascii")


def live_tables(tok: TrainedTokenizer) -> LiveTables:
    """The live-view tables of ``tok``'s algorithm (its registration's :attr:`~ui.algorithms.AlgorithmView.live`).

    Raises:
        ValueError: the algorithm is drawn on the server only (check :func:`supports` first).
    """
    live = view_of(tok.algorithm).live
    if live is None:
        raise ValueError(f"{tok.name} is not drawn in the browser")
    return live


def whole_text_totals(tok: TrainedTokenizer, text: str, trained_on_text: bool) -> list[int]:
    """Tokens of the whole ``text`` at every vocabulary size, ``min_vocab_size`` first.

    Its algorithm's :attr:`~ui.algorithms.LiveTables.totals` (BPE trained on ``text``: read off the
    trace, free; otherwise computed by :mod:`bpe_core.analysis.live`, each distinct pre-token or word once).
    """
    full = tok.with_vocab_size(tok.max_vocab_size)
    memo = _TOTALS.setdefault(full, {})
    key = (hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest(), trained_on_text)
    totals = memo.get(key)
    if totals is None:
        totals = live_tables(full).totals(full, text, trained_on_text)
        if len(memo) >= 2:
            memo.pop(next(iter(memo)))
        memo[key] = totals
    return totals


_TOTALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per full tokenizer: ``{(text digest, trained on it): totals}``, the last two texts.  Apart from the payloads:
Compare's drawn prefix changes with the tokenizers chosen beside a live column, the whole text's totals do not."""


def text_payload(tok: TrainedTokenizer, text: str, drawn: str, totals: list[int] | None) -> dict[str, Any]:
    """The data the browser needs to draw ``drawn`` at every size of ``tok`` (JSON-ready).

    Args:
        tok: the tokenizer (any view; its full size range is sent).
        text: the whole text (its character and byte counts are sent).
        drawn: the part drawn (a pre-token-aligned prefix of ``text``).
        totals: the whole text's tokens at every size (:func:`whole_text_totals`), or ``None``.

    Returns:
        A ``dict``; ``"v"`` identifies it (the browser decodes a payload once).
    """
    full = tok.with_vocab_size(tok.max_vocab_size)
    lo, hi = full.min_vocab_size, full.max_vocab_size
    out = payload_head(lo, hi, text, drawn, totals)
    out.update(live_tables(full).tables(full, drawn, lo))
    out["v"] = payload_version(out)
    return out


def payload_version(payload: dict[str, Any]) -> str:
    """The version that identifies a payload (the browser decodes each one once): a digest of its JSON."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _split_at_newlines(text: str, units: list) -> list:
    """Cut each unit after every newline inside it that is a token edge in all its versions.

    A Unigram word can hold newlines (``Point``, two newlines, ``Every`` is one word); the browser starts a block of
    lines only between units, so without this cut a text with few spaces before its newlines would be one
    block.  Each part keeps the versions in which it differs (the first one always).
    """
    out = []
    for versions in units:
        first = versions[0][1]
        if not first or "\n" not in text[first[0].start : first[-1].end]:
            out.append(versions)
            continue
        cuts = []
        for p in range(first[0].start + 1, first[-1].end):
            if text[p - 1] == "\n" and all(
                any(t.end == p for t in spans) and any(t.start == p for t in spans) for _size, spans in versions
            ):
                cuts.append(p)
        if not cuts:
            out.append(versions)
            continue
        edges = [None, *cuts, None]
        for a, b in itertools.pairwise(edges):
            part = []
            for size, spans in versions:
                piece = [
                    t for t in spans if (a is None or t.start >= a) and (b is None or (t.end <= b and t.start < b))
                ]
                if not part or [(t.id, t.start, t.end) for t in part[-1][1]] != [(t.id, t.start, t.end) for t in piece]:
                    part.append((size, piece))
            out.append(part)
    return out


def word_tables(kind: str, full: TrainedTokenizer, v: WordPieceVersions, *, always_display: bool) -> dict[str, Any]:
    """Units of versions (WordPiece, Unigram: each word's segmentations) as gzipped JSON rows.

    Rows are ``[id, start, end, flags(, display)]``; ``kind`` names the browser's drawing (``"wordpiece"``,
    ``"unigram"``: the algorithm's name, which ``live.js`` knows).

    ``display`` travels when the token is partial, or always (Unigram: the piece with its ``▁``).
    """
    ids: set[int] = set()
    units = []
    for versions in _split_at_newlines(v.text, v.units):
        unit = []
        for size, spans in versions:
            row = []
            for s in spans:
                ids.add(s.id)
                flags = int(s.is_partial) | (int(s.is_special) << 1) | (int(s.is_continuation) << 2)
                row.append([s.id, s.start, s.end, flags] + ([s.display] if s.is_partial or always_display else []))
            unit.append([size, row])
        units.append(unit)
    return {
        "kind": kind,
        "wp": _gz_json(
            {
                "units": units,
                "rank": [[i, full.rank_of(i)] for i in sorted(ids) if full.rank_of(i) is not None],
                "tokens": [[i, full.token_bytes(i).decode("utf-8", errors="replace")] for i in sorted(ids)],
            }
        ),
    }


_PAYLOADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cached_payload(tok: TrainedTokenizer, text: str, trained_on_text: bool) -> dict[str, Any]:
    """:func:`text_payload` of ``text``'s drawn prefix, remembered per (full tokenizer, text)."""
    full = tok.with_vocab_size(tok.max_vocab_size)
    memo = _PAYLOADS.setdefault(full, {})
    key = (hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest(), trained_on_text)
    payload = memo.get(key)
    if payload is None:
        drawn = pretoken_prefix(text, MAX_DRAW_CHARS, full.pattern, tuple(full.special_tokens))
        payload = text_payload(full, text, drawn, whole_text_totals(full, text, trained_on_text))
        if len(memo) >= 4:
            memo.pop(next(iter(memo)))
        memo[key] = payload
    return payload


def _presentation(font_scale: float | None, present: bool) -> dict[str, Any]:
    """The payload's ``scale`` (token text size factor) and ``present`` (compact layout) entries."""
    scale = (PRESENTATION_SCALE if present else 1.0) if font_scale is None else float(font_scale)
    return {"scale": scale, "present": bool(present)}


def _copy_size(component_key: str, key: str) -> None:
    """Callback: the browser's final size -> the shared session value (before the page runs).

    The browser's state value is ``{"n": size, "t": time, "v": payload version}`` (the time makes
    every report a change).  A report about another payload than the one last drawn (a late report
    from the previous text or tokenizer) is ignored.
    """
    state = st.session_state.get(component_key)
    value = state.get("size") if hasattr(state, "get") else getattr(state, "size", None)
    current = isinstance(value, dict) and value.get("v") == st.session_state.get(
        sk.component_version_key(component_key)
    )
    size = value.get("n") if current else None
    if isinstance(size, int | float) and not isinstance(size, bool):
        st.session_state[key] = int(size)


def live_text(
    tok: TrainedTokenizer,
    text: str,
    *,
    trained_on_text: bool = True,
    show_whitespace: bool = True,
    colour_mode: str = "cycle",
    font_scale: float | None = None,
    present: bool = False,
    key: str = "live_view",
    size_key: str = "vocab_size",
) -> tuple[int, int | None]:
    """Draw the live view of ``text`` under ``tok``; return ``(size shown, clicked token id or None)``.

    Args:
        tok: the tokenizer at its full trained size.
        text: the whole text (about :data:`MAX_DRAW_CHARS` of it are drawn).
        trained_on_text: ``tok`` was trained on ``text`` (the counts come from its trace).
        show_whitespace: draw spaces, tabs and newlines visibly.
        colour_mode: a key of ``ui.render.COLOUR_MODES``.
        font_scale: token text size factor; ``None``: :data:`PRESENTATION_SCALE` when ``present``, else 1.
        present: presentation mode (:mod:`ui.present`): the slider and the token count on one row,
            the other counts, the note under the text and the token-id list hidden.
        key: the component's widget key.
        size_key: the session-state key of the shared vocabulary size.

    Returns:
        The vocabulary size the server knows (the last one the browser reported),
        and the id of a token clicked since the last run (``None`` otherwise).
    """
    size = session_size(tok, size_key)
    payload = dict(cached_payload(tok, text, trained_on_text))
    payload.update(size=size, ws=bool(show_whitespace), mode=colour_mode, **_presentation(font_scale, present))
    st.session_state[sk.component_version_key(key)] = payload["v"]
    result = _component(
        key=key,
        data=payload,
        on_size_change=lambda: _copy_size(key, size_key),
        on_clicked_change=lambda: None,
    )
    clicked = getattr(result, "clicked", None)
    clicked_id = int(clicked) if isinstance(clicked, int | float) and not isinstance(clicked, bool) else None
    return st.session_state.get(size_key, size), clicked_id


def merges_payload(tok: TrainedTokenizer, text: str) -> dict[str, Any]:
    """The Merges player's data: the drawn text at every step plus the whole trace (JSON-ready).

    Args:
        tok: a BPE, WordPiece or Unigram tokenizer trained on ``text`` here (its trace covers every step).
        text: its training text.

    Returns:
        The algorithm's :attr:`~ui.algorithms.LiveTables.player` payload with ``kind="merges"``: the drawn
        text's tables at every step and ``"trace"``, each step's card (see ``ui/algorithms/<name>.py``);
        ``totals`` is the training text's token count after each step (step 0 first).

    Raises:
        ValueError: ``tok`` has no full training trace.
    """
    full = tok.with_vocab_size(tok.max_vocab_size)
    trace = full.trace
    live = view_of(full.algorithm).live
    build = live.player if live is not None else None
    if build is None or full.training is None or not trace:
        raise ValueError("this tokenizer has no training trace, so its merges cannot be played")
    memo = _PAYLOADS.setdefault(full, {})
    key = ("merges", hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest())
    payload = memo.get(key)
    if payload is None:
        drawn = pretoken_prefix(text, MAX_STEP_CHARS, full.pattern, tuple(full.special_tokens))
        payload = build(full, text, drawn)
        payload["maxTokens"] = MAX_STEP_TOKENS
        payload["kind"] = "merges"
        payload["v"] = "m" + payload["v"]
        memo[key] = payload
    return payload


def finite(x: float | None) -> float | None:
    """``x``, or ``None`` for an unknown or not finite loss (JSON has no NaN; the card says "unknown")."""
    return x if x is not None and math.isfinite(x) else None


def _copy_step(component_key: str, key: str) -> None:
    """Callback: the step the player stopped at -> ``st.session_state[key]`` (before the page runs)."""
    state = st.session_state.get(component_key)
    value = state.get("step") if hasattr(state, "get") else getattr(state, "step", None)
    current = isinstance(value, dict) and value.get("v") == st.session_state.get(
        sk.component_version_key(component_key)
    )
    step = value.get("n") if current else None
    if isinstance(step, int | float) and not isinstance(step, bool):
        st.session_state[key] = int(step)


def merges_player(
    tok: TrainedTokenizer,
    text: str,
    step: int,
    *,
    show_whitespace: bool = True,
    colour_mode: str = "cycle",
    font_scale: float | None = None,
    present: bool = False,
    key: str = "merges_player",
    step_key: str = "merge_step",
) -> int:
    """Draw the Merges player (Play/Pause/Next/Previous/step slider, card, text) of a tokenizer that has one.

    Playing, stepping and sliding happen in the browser; when it stops (Pause,
    the end, a button, the slider released) the browser reports the step and a
    callback writes it to ``st.session_state[step_key]`` before the page runs.

    Args:
        tok: a tokenizer trained on ``text`` (full trace) whose algorithm has a player
            (:attr:`ui.algorithms.LiveTables.player`: BPE, WordPiece, Unigram).
        text: its training text.
        step: the step to show (0 = no merge, or Unigram's trained vocabulary) when the page draws.
        show_whitespace: draw spaces, tabs and newlines visibly.
        colour_mode: a key of ``ui.render.COLOUR_MODES``.
        font_scale: token text size factor; ``None``: :data:`PRESENTATION_SCALE` when ``present``, else 1.
        present: presentation mode (:mod:`ui.present`): the text box fits the window beside the card.
        key: the component's widget key.
        step_key: the session-state key of the Merges page's step.

    Returns:
        The step the server knows.

    Raises:
        ValueError: ``tok`` has no full training trace.
    """
    payload = dict(merges_payload(tok, text))
    n = payload["hi"] - payload["lo"]
    step = min(max(int(step), 0), n)
    payload.update(step=step, ws=bool(show_whitespace), mode=colour_mode, **_presentation(font_scale, present))
    st.session_state[sk.component_version_key(key)] = payload["v"]
    _component(key=key, data=payload, on_step_change=lambda: _copy_step(key, step_key))
    return st.session_state.get(step_key, step)


_TYPING_JS = """
export default function ({ data }) {
  // Commit the sidebar's text box while the user types: after `delay` ms without a keystroke, the
  // text area gets the Ctrl+Enter that Streamlit's text area commits on (its own key handler).
  window.__bpeTyping = data;
  if (window.__bpeTypingInstalled) return;
  window.__bpeTypingInstalled = true;
  let timer = null;
  document.addEventListener("input", (ev) => {
    const t = ev.target;
    const cfg = window.__bpeTyping;
    if (!(t instanceof HTMLTextAreaElement) || !cfg || !cfg.labels.includes(t.getAttribute("aria-label"))) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!t.isConnected) return;
      t.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", keyCode: 13, which: 13,
                                                      ctrlKey: true, bubbles: true, cancelable: true }));
    }, cfg.delay);
  }, true);
}
"""

TYPING_DELAY_MS = 300
"""Milliseconds without a keystroke after which typed text is used (at most 500 feels immediate)."""

_typing = st.components.v2.component("bpe_playground.follow_typing", js=_TYPING_JS)


def follow_typing(labels: tuple[str, ...] = ("Your text",), delay_ms: int = TYPING_DELAY_MS) -> None:
    """Use what is typed in the text areas labelled ``labels`` once typing pauses, without Ctrl+Enter.

    Mount once per page (the sidebar is a good place: it takes no visible room).
    Each pause of ``delay_ms`` commits the text area's value as Ctrl+Enter
    would; the page then retrains (with the progress bar and Cancel for long
    texts) and redraws.

    Args:
        labels: the ``aria-label`` (the label) of each text area to follow.
        delay_ms: the pause, in milliseconds.
    """
    _typing(key=sk.FOLLOW_TYPING, data={"labels": list(labels), "delay": int(delay_ms)}, height=0)


def plays_merges(history: Any) -> bool:
    """Whether the Merges page's history can be played in the browser: its algorithm's live view has a player.

    The players (:attr:`ui.algorithms.LiveTables.player`): byte-level merges replayed from the boundary sizes,
    WordPiece's from each word's segmentation per step, Unigram's pruning rounds from each word's
    segmentation per round.
    """
    live = view_of(history.tokenizer.algorithm).live
    return live is not None and live.player is not None


def supports(tok: TrainedTokenizer, text: str = "") -> bool:
    """Whether the live view draws ``tok`` on ``text``; otherwise the page draws on the server.

    True when its algorithm registers live tables (:attr:`ui.algorithms.AlgorithmView.live`) and ``text``
    is within their :attr:`~ui.algorithms.LiveTables.max_chars` (characters).
    """
    live = view_of(tok.algorithm).live
    return live is not None and (live.max_chars is None or len(text) <= live.max_chars)


# ---------------------------------------------------------------------------
# Compare: one slider, several live columns (the browser side is group.js)


def _memo_payload(tok: Any, memo_key: tuple, make: Any) -> dict[str, Any]:
    """``make(full)`` remembered per (full tokenizer, ``memo_key``), 4 per tokenizer at most (as ``cached_payload``)."""
    full = tok.with_vocab_size(tok.max_vocab_size)
    memo = _PAYLOADS.setdefault(full, {})
    payload = memo.get(memo_key)
    if payload is None:
        payload = make(full)
        if len(memo) >= 4:
            memo.pop(next(iter(memo)))
        memo[memo_key] = payload
    return payload


def group_slider(
    tok: TrainedTokenizer,
    *,
    group: str,
    key: str,
    size_key: str = "vocab_size",
    present: bool = False,
) -> int:
    """A vocabulary-size slider drawn in the browser that drives the :func:`group_column` views of ``group``.

    Every ``input`` event of the slider (each position while dragging, each
    arrow key) redraws the group's columns in the browser; when the drag ends
    the size is reported and a callback writes it to
    ``st.session_state[size_key]`` before the page runs (as :func:`live_text`).

    Args:
        tok: the tokenizer whose size range the slider spans (its size is the
            shared session value, :func:`ui.view.session_size`).
        group: the name the columns share.
        key: the component's widget key.
        size_key: the session-state key of the shared vocabulary size.
        present: presentation mode (the compact slider row).

    Returns:
        The vocabulary size the server knows.
    """
    size = session_size(tok, size_key)
    payload = dict(_memo_payload(tok, ("slider",), lambda full: text_payload(full, "", "", None)))
    payload.update(size=size, ws=True, mode="cycle", role="slider", group=group, **_presentation(None, present))
    st.session_state[sk.component_version_key(key)] = payload["v"]
    _component(key=key, data=payload, on_size_change=lambda: _copy_size(key, size_key))
    return st.session_state.get(size_key, size)


def group_column(
    tok: TrainedTokenizer,
    text: str,
    drawn: str,
    *,
    group: str,
    key: str,
    label: str,
    trained_on_text: bool,
    show_whitespace: bool = True,
    colour_mode: str = "cycle",
    max_tokens: int = MAX_DRAW_TOKENS,
    present: bool = False,
) -> None:
    """A live column: ``drawn`` under ``tok`` at the size of ``group``'s :func:`group_slider`, redrawn in the browser.

    Drawn as a title (``"<label> · <size>"``), one line ``"N tokens · B bytes/token"``
    (``N``: the whole ``text`` at that size; ``B``: its UTF-8 bytes per token)
    and the coloured text; all three follow the slider while it is dragged.

    Args:
        tok: the tokenizer at the size the server shows (the size the page
            opens at before the group's slider is drawn); every size of its
            full range is sent once.
        text: the whole text (its counts are shown).
        drawn: the part drawn: a pre-token-aligned prefix of ``text``.
        group: the slider's group name.
        key: the component's widget key (stable across sizes).
        label: the title before the size, such as ``"BPE (gpt2)"`` (drawn as text).
        trained_on_text: ``tok`` was trained on ``text`` here (counts then come off its trace).
        show_whitespace: draw spaces, tabs and newlines visibly.
        colour_mode: a key of ``ui.render.COLOUR_MODES``.
        max_tokens: at most this many tokens are drawn.
        present: presentation mode: the tokens at :data:`PRESENTATION_SCALE` (as the server-drawn columns).
    """
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
    drawn_digest = hashlib.sha256(drawn.encode("utf-8", errors="surrogatepass")).hexdigest()

    def make(full: Any) -> dict[str, Any]:
        return text_payload(full, text, drawn, whole_text_totals(full, text, trained_on_text))

    payload = dict(_memo_payload(tok, ("column", digest, drawn_digest, trained_on_text), make))
    payload.update(
        size=tok.vocab_size,
        ws=bool(show_whitespace),
        mode=colour_mode,
        **_presentation(None, present),
        role="column",
        group=group,
        label=label,
        maxTokens=int(max_tokens),
    )
    _component(key=key, data=payload)
