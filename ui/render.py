"""Token spans -> HTML.  Every piece of user text is escaped: text is data, never markup."""

from __future__ import annotations

import colorsys
import html
import unicodedata
from collections.abc import Callable, Mapping, Sequence

from bpe_core.spans import TokenSpan, display_bytes
from ui import state_keys as sk

PALETTE = ("#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffc6ff", "#fdffb6", "#a0c4ff", "#ffadad")
"""Token background colours, cycled by position so neighbours always differ."""

COLOUR_MODES: dict[str, str] = {
    "cycle": "Cycle by position",
    "id": "One colour per token id",
    "rank": "Gradient by merge rank",
}
"""Colour mode key -> label.  The keys are what :func:`tokens_html` takes and what links store."""

RANK_EARLY = (255, 236, 179)
"""RGB of the first merge in ``"rank"`` mode (light amber)."""

RANK_LATE = (134, 150, 245)
"""RGB of the last merge in ``"rank"`` mode (periwinkle): every channel moves linearly, luminance falls."""

BASE_COLOUR = "#e6e6ea"
"""``"rank"`` mode: tokens no merge made (single bytes, WordPiece's alphabet)."""


def _hex(rgb: Sequence[float]) -> str:
    return "#" + "".join(f"{round(c):02x}" for c in rgb)


def id_colour(token_id: int) -> str:
    """A light background colour that depends only on the token id (``"id"`` mode).

    The hue steps by the golden angle (about 137.5 degrees) per id, so nearby
    ids get far-apart hues; lightness and saturation are fixed so dark text
    stays readable.  Distinct ids can share a colour; the same id never
    changes colour, in any view or text.

    Args:
        token_id: the token id (``int``, any size).

    Returns:
        A ``#rrggbb`` string.
    """
    hue = (token_id * 0.6180339887498949) % 1.0
    r, g, b = colorsys.hls_to_rgb(hue, 0.82, 0.85)
    return _hex((r * 255, g * 255, b * 255))


def rank_colour(rank: int | None, max_rank: int) -> str:
    """Background colour of a token in ``"rank"`` mode: early merges amber, late merges blue.

    Linear interpolation in RGB from :data:`RANK_EARLY` (rank 0) to
    :data:`RANK_LATE` (rank ``max_rank``); a token with no rank (byte, alphabet
    character) is :data:`BASE_COLOUR`.

    Args:
        rank: merge rank (0 = first merge) or ``None``.
        max_rank: the largest rank of the scale (e.g. the tokenizer's number of
            merges minus one); ranks above it are drawn as ``max_rank``.

    Returns:
        A ``#rrggbb`` string.
    """
    if rank is None:
        return BASE_COLOUR
    t = min(max(rank, 0), max_rank) / max_rank if max_rank > 0 else 0.0
    return _hex([a + (b - a) * t for a, b in zip(RANK_EARLY, RANK_LATE)])


def session_colour_mode() -> str:
    """The colour mode the sidebar's Display section chose (``"cycle"`` outside a Streamlit session)."""
    try:
        import streamlit as st

        mode = st.session_state.get(sk.COLOUR_MODE, "cycle")
    except Exception:  # no Streamlit session (plain Python, tests of this module)
        return "cycle"
    return mode if mode in COLOUR_MODES else "cycle"


def token_colours(
    spans: Sequence[TokenSpan], mode: str, palette: Sequence[str] = PALETTE, max_rank: int | None = None
) -> list[str]:
    """One background colour per span under a colour mode.

    Args:
        spans: the tokens, in order.
        mode: a key of :data:`COLOUR_MODES`: ``"cycle"`` (``palette[i % len]``: two
            neighbours never share a colour when the palette has two or more),
            ``"id"`` (:func:`id_colour`), ``"rank"`` (:func:`rank_colour`).
        palette: the colours ``"cycle"`` uses.
        max_rank: the top of the ``"rank"`` scale; default the largest rank among ``spans``.

    Returns:
        ``len(spans)`` ``#rrggbb`` strings.

    Raises:
        ValueError: unknown ``mode``.
    """
    if mode == "cycle":
        return [palette[i % len(palette)] for i in range(len(spans))]
    if mode == "id":
        return [id_colour(s.id) for s in spans]
    if mode == "rank":
        if max_rank is None:
            max_rank = max((s.rank for s in spans if s.rank is not None), default=0)
        return [rank_colour(s.rank, max_rank) for s in spans]
    raise ValueError(f"unknown colour mode {mode!r}; expected one of {', '.join(COLOUR_MODES)}")


CSS = """
<style>
.bpe-view { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 15px;
  line-height: 1.9; padding: 14px 16px; border: 1px solid rgba(128,128,128,.3); border-radius: 8px;
  max-height: 560px; overflow-y: auto; overflow-wrap: anywhere; background: rgba(128,128,128,.04); }
.bpe-view .tk { color: #1b1b1f; border-radius: 4px; padding: 2px 1px; margin-right: 1px;
  white-space: pre-wrap; box-decoration-break: clone; -webkit-box-decoration-break: clone; }
.bpe-view .tk:hover { position: relative; outline: 2px solid #3b3b45; z-index: 5; }
.bpe-view .tk:hover::after { content: attr(data-tip); position: absolute; left: 0; top: calc(100% + 4px);
  z-index: 20; background: #26262c; color: #f4f4f6; padding: 5px 8px; border-radius: 6px; white-space: pre;
  font-size: 12px; line-height: 1.45; pointer-events: none; box-shadow: 0 2px 8px rgba(0,0,0,.25); }
.bpe-view .ws { color: rgba(27,27,31,.38); }
.bpe-view .partial { font-size: 11px; outline: 1px dashed rgba(27,27,31,.45); outline-offset: -1px; }
.bpe-view .special { background: #3d3d4a !important; color: #fafafa; font-weight: 600; }
.bpe-view .cont { margin-left: -1px; border-top-left-radius: 0; border-bottom-left-radius: 0;
  box-shadow: inset 1px 0 0 rgba(27,27,31,.55); }
.bpe-view .tk:has(+ .cont) { border-top-right-radius: 0; border-bottom-right-radius: 0; }
.bpe-view .tk.alt { background-image: linear-gradient(rgba(27,27,31,.16), rgba(27,27,31,.16)) !important; }
.bpe-view .gap { color: rgba(27,27,31,.38); white-space: pre-wrap; }
.bpe-view.marking .tk:not(.mark) { opacity: .38; }
.bpe-view .tk.mark { box-shadow: inset 0 -3px 0 #d1495b; }
.bpe-view .tk.cont.mark { box-shadow: inset 1px 0 0 rgba(27,27,31,.55), inset 0 -3px 0 #d1495b; }
.bpe-view.focus .tk:not(.hl) { opacity: .5; }
.bpe-view .tk.hl { background: #ffd166 !important; outline: 2px solid #d1495b; outline-offset: 0; font-weight: 600; }
.bpe-view .seam { display: inline-block; width: 0; height: 1.05em; vertical-align: -.18em; margin: 0 1px;
  border-left: 2px solid #d1495b; }
.bpe-view .bgrp { display: inline-flex; flex-direction: column; align-items: center; vertical-align: middle;
  line-height: 1.15; margin: 0 1px; }
.bpe-view .bgrp .bbytes { display: inline-flex; gap: 1px; white-space: pre; }
.bpe-view .bgrp .bchar { font-size: 12px; opacity: .8; padding: 0 2px; }
.bpe-view .tk.zw { opacity: .55; outline: 1px dashed rgba(27,27,31,.45); outline-offset: -1px; }
.bpe-legend { font-size: 13px; opacity: .75; margin-top: 4px; }
.bpe-legend code { font-size: 12px; }
</style>
"""
"""Style sheet for :func:`tokens_html`, added once to every page run by :func:`ui.present.apply`.

One copy in the page instead of one per view: Compare draws up to a dozen views, and every copy of a sheet is
matched against every token again at each style recalculation.  A token is positioned (for its tooltip) only
while hovered: a positioned inline box is a paint layer of its own, and a column of a thousand of them tripled
the page's paint work (Chromium trace of a Compare click: 4,374 paint calls, 138 ms; 202 calls, 64 ms without)."""

_WS = {" ": "·", "\t": "→\t", "\r": "␍", "\n": "↵"}


def _visible(text: str, show_whitespace: bool) -> str:
    """Escape ``text`` for HTML, with whitespace and control characters made visible."""
    out: list[str] = []
    for ch in text:
        if ch == "\n":
            out.append('<span class="ws">↵</span>\n' if show_whitespace else "\n")
        elif ch in _WS and show_whitespace:
            out.append(f'<span class="ws">{_WS[ch]}</span>')
        elif ch.isspace() and show_whitespace and ch not in _WS:
            out.append(f'<span class="ws" title="U+{ord(ch):04X}">⍽</span>')
        elif ord(ch) < 0x20:
            out.append(f'<span class="ws">{chr(0x2400 + ord(ch))}</span>')
        elif ch == "\x7f":
            out.append('<span class="ws">␡</span>')
        else:
            out.append(html.escape(ch, quote=True))
    return "".join(out)


def token_tooltip(span: TokenSpan, rank_label: Callable[[int], str] | None = None) -> str:
    """Plain-text hover text of a token: id, kind or merge rank, vocabulary string, bytes in hex.

    ``rank_label(token_id)`` says what a learned token's rank is (the tokenizer's
    :attr:`ui.algorithms.AlgorithmView.rank_label`); default ``"merge #<rank + 1>"``.

    The vocabulary string is shown only when it differs from the text drawn (WordPiece:
    ``##ing`` drawn as ``ing``, ``hugg`` drawn as ``Hugg`` when lower-casing, ``[UNK]``).
    """
    kind = (
        "special token"
        if span.is_special
        else "base token"
        if span.rank is None
        else rank_label(span.id)
        if rank_label is not None
        else f"merge #{span.rank + 1}"
    )
    hexes = " ".join(f"{b:02X}" for b in span.token_bytes[:24]) + (" …" if len(span.token_bytes) > 24 else "")
    lines = [f"id {span.id} · {kind}"]
    if not span.is_partial:
        # WordPiece: "##ing" for the shown "ing", "hugg" for "Hugg" (lower-cased), "[UNK]" for an unknown word
        token = span.token_bytes.decode("utf-8", errors="replace")
        if token != span.display:
            lines.append(f"token {token}")
    lines.append(f"bytes {hexes} ({len(span.token_bytes)})")
    if span.is_partial:
        lines.append("part of a multi-byte character")
    return "\n".join(lines)


def tokens_html(
    spans: Sequence[TokenSpan],
    *,
    show_whitespace: bool = True,
    total_tokens: int | None = None,
    palette: Sequence[str] = PALETTE,
    text: str | None = None,
    mark: Sequence[bool] | None = None,
    highlight: Mapping[int, int | None] | None = None,
    mode: str | None = None,
    max_rank: int | None = None,
    rank_label: Callable[[int], str] | None = None,
) -> str:
    """HTML of coloured tokens (without the style sheet, see :data:`CSS`).

    Args:
        spans: the tokens to draw, in order.
        show_whitespace: draw spaces as ``·``, tabs ``→``, newlines ``↵``.
        total_tokens: the text's full token count when ``spans`` is only a prefix;
            a note then says how many are shown.
        palette: background colours, cycled by position (``"cycle"`` mode).
        text: the text the spans index into.  When given, text that no token
            covers (WordPiece drops whitespace) is drawn uncoloured between the
            tokens (``span.gap``).  Continuation pieces (``##``) are drawn joined
            to the token before them, with no line break between.
        mark: one flag per span; when given, flagged tokens are underlined and
            the others dimmed (class ``mark`` on the token, ``marking`` on the view).
        highlight: token ids to highlight (class ``hl``; the other tokens are
            dimmed), each mapped to where to draw a seam inside the token: the
            byte length of its left part (the Merges page marks the two halves
            of a just-merged pair), or ``None`` for no seam.  The seam is drawn
            only where both halves display as they do in the whole token.
        mode: colour mode, a key of :data:`COLOUR_MODES` (see :func:`token_colours`);
            ``None`` = the sidebar's choice (:func:`session_colour_mode`).
        max_rank: top of the ``"rank"`` scale (default: the largest rank drawn).
        rank_label: ``rank_label(token_id)``, a learned token's rank in words for its hover
            (:func:`token_tooltip`); default ``"merge #<rank + 1>"``.

    Returns:
        An HTML string; every text and attribute value from ``spans`` is escaped.

    Raises:
        ValueError: unknown ``mode``.
    """
    highlight = highlight or {}
    colours = token_colours(spans, mode or session_colour_mode(), palette, max_rank)
    view_classes = ["bpe-view"] + (["marking"] if mark is not None else []) + (["focus"] if highlight else [])
    parts = [f'<div class="{" ".join(view_classes)}">']
    pos = 0
    groups = byte_groups(spans, text) if text is not None else {}
    group_end = -1
    in_word = 0  # a continuation's place in its word (WordPiece's ## pieces)
    for i, s in enumerate(spans):
        if text is not None and s.start > pos:
            parts.append(f'<wbr><span class="gap">{_visible(text[pos : s.start], show_whitespace)}</span>')
        pos = max(pos, s.end)
        if i and not s.is_continuation and i <= group_end:
            pass  # inside a group of byte pieces: no break between them
        elif i and not s.is_continuation:
            parts.append("<wbr>")  # a line may break before a token, never inside a word
        if i in groups:
            group_end = groups[i]
            ch = text[s.start : s.end]
            hexes = " ".join(f"{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
            parts.append(
                f'<span class="bgrp" title="{html.escape(ch, quote=True)} = UTF-8 bytes {hexes}">'
                f'<span class="bchar">{_visible(ch, show_whitespace)}</span><span class="bbytes">'
            )
        classes = ["tk"]
        if text is not None and s.start == s.end and not s.is_special:
            classes.append("zw")  # covers no character (SentencePiece's dummy prefix)
        if mark is not None and mark[i]:
            classes.append("mark")
        if s.is_partial:
            classes.append("partial")
        if s.is_special:
            classes.append("special")
        if s.is_continuation:
            classes.append("cont")
            in_word += 1
            if in_word % 2:  # every other piece of a word a shade darker: each edge inside a word shows
                classes.append("alt")
        else:
            in_word = 0
        # (partial tokens too: " <0xD7>" must show its space)
        content = _visible(s.display, show_whitespace)
        if s.id in highlight:
            classes.append("hl")
            content = _with_seam(s, highlight[s.id], show_whitespace) or content
        tip = html.escape(token_tooltip(s, rank_label), quote=True)
        style = f"background:{colours[i]}"
        parts.append(
            f'<span class="{" ".join(classes)}" style="{style}" data-id="{s.id}" data-tip="{tip}">{content}</span>'
        )
        if i == group_end:
            parts.append("</span></span>")
    if text is not None and pos < len(text) and text[pos:].isspace():  # trailing whitespace no token covers
        parts.append(f'<wbr><span class="gap">{_visible(text[pos:], show_whitespace)}</span>')
    parts.append("</div>")
    if total_tokens is not None and total_tokens > len(spans):
        parts.append(
            f'<div class="bpe-legend">Showing the first {len(spans):,} of {total_tokens:,} tokens; '
            "all counts cover the whole text.</div>"
        )
    return "".join(parts)


def byte_groups(spans: Sequence[TokenSpan], text: str) -> dict[int, int]:
    """Runs of byte tokens that together spell exactly one character: ``{first span index: last span index}``.

    A run is two or more consecutive partial spans (:attr:`~bpe_core.spans.TokenSpan.is_partial`)
    covering the same single character whose bytes add up to that
    character's UTF-8 (SentencePiece's byte fallback ``<0xE4><0xB8><0x96>``
    for 世, or a byte-level BPE that cut 世 into two tokens).  The coloured view
    draws such a run as the character with its hex bytes under it.

    Args:
        spans: the tokens, in order.
        text: the text they index into.
    """
    out: dict[int, int] = {}
    i, n = 0, len(spans)
    while i < n:
        s = spans[i]
        if not (s.is_partial and s.end == s.start + 1 and s.end <= len(text)):
            i += 1
            continue
        j = i
        while j + 1 < n and spans[j + 1].is_partial and (spans[j + 1].start, spans[j + 1].end) == (s.start, s.end):
            j += 1
        want = len(text[s.start].encode("utf-8", "surrogatepass"))
        if j > i and sum(len(spans[k].token_bytes) for k in range(i, j + 1)) == want:
            out[i] = j
        i = j + 1
    return out


def _with_seam(span: TokenSpan, seam: int | None, show_whitespace: bool) -> str | None:
    """The token's content with a seam after ``seam`` bytes, or ``None`` when it cannot be drawn faithfully."""
    tb = span.token_bytes
    if span.is_continuation and seam is not None:
        # a WordPiece "##" piece: the seam counts the prefix's bytes, the drawing does not show them
        shown = span.display.encode("utf-8")
        if tb.endswith(shown):
            seam, tb = seam - (len(tb) - len(shown)), shown
    if seam is None or not 0 < seam < len(tb) or span.is_special:
        return None
    left, right = display_bytes(tb[:seam]), display_bytes(tb[seam:])
    if left + right != span.display:
        return None  # the seam falls inside a character that the whole token shows decoded
    return _visible(left, show_whitespace) + '<span class="seam"></span>' + _visible(right, show_whitespace)


WS_MARKS = str.maketrans({" ": "·", "\n": "↵", "\t": "→", "\r": "␍"})
"""Whitespace made visible in tables and captions: space ``·``, newline ``↵``, tab ``→``, carriage return ``␍``."""


def readable(data: bytes) -> str:
    """A token's bytes for tables and captions: decoded, ``<0xNN>`` for partial characters, whitespace visible.

    Spaces become ``·``, newlines ``↵``, tabs ``→`` and carriage returns ``␍`` (as in
    the coloured view), so that a token such as ``b" t"`` reads ``·t``.
    """
    return display_bytes(data).translate(WS_MARKS)


def shown_token(tok, token_id: int) -> str:
    """A token's printable form (:meth:`~bpe_core.interface.Tokenizer.describe_token`) with whitespace visible.

    For a byte-level tokenizer this is :func:`readable` of its bytes; for
    WordPiece its vocabulary string (``##ing``), which holds no whitespace.
    """
    return tok.describe_token(token_id).translate(WS_MARKS)


def visible_text(text: str, show_whitespace: bool = True) -> str:
    """``text`` escaped for HTML, with whitespace drawn as in the coloured view (``·`` ``→`` ``↵``)."""
    return _visible(text, show_whitespace)


def table_token_html(shown: str) -> str:
    """A token's printable form (:func:`shown_token`, :func:`readable`) as the content of a table cell.

    Escaped; isolated from the table's own direction (``<bdi>``), so a right-to-left token (Arabic,
    Hebrew) reads in its own order without pulling the cell's other text or the row around it; a
    character that draws nothing on its own (a zero-width joiner, a direction mark: Unicode's format
    characters) is written as its code point, ``U+200D``; a leading combining mark is drawn on a
    dotted circle (``◌ो``), as Unicode's charts show it.

    >>> table_token_html("<0xD8>ي")
    '<bdi>&lt;0xD8&gt;ي</bdi>'
    >>> table_token_html("\u200d")
    '<bdi><span class="cp">U+200D</span></bdi>'
    """
    out = []
    for k, ch in enumerate(shown):
        cat = unicodedata.category(ch)
        if cat == "Cf":
            out.append(f'<span class="cp">U+{ord(ch):04X}</span>')
        elif k == 0 and cat in ("Mn", "Mc", "Me"):
            out.append("\u25cc" + ch)
        else:
            out.append(html.escape(ch))
    return f"<bdi>{''.join(out)}</bdi>"


LEGEND_HTML = (
    '<div class="bpe-legend">Each coloured box is one token; hover it for its id, merge rank and bytes, '
    "click it (on the Playground) to see how it was built. "
    "<code>·</code> space, <code>→</code> tab, <code>↵</code> newline, "
    "<code>&lt;0xE2&gt;</code> a byte that is only part of a character.</div>"
)
"""A one-line key to the coloured view."""
