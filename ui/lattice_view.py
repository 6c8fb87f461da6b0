"""Unigram's "Encode step by step": the lattice of each word as escaped HTML.

:meth:`bpe_core.unigram.UnigramTokenizer.encode_steps` gives one
:class:`~bpe_core.unigram.WordLattice` per word: every candidate piece as an
arc (start and end character of the word, id, score), the best segmentation
(Viterbi) and the runners-up with their totals.  :func:`lattice_html` draws
one word as a grid -- a column per character, each arc a box spanning its
characters with its score, the best path's arcs highlighted -- and lists the
segmentations under it.  Every piece and character is HTML-escaped (user text
is data); whitespace is drawn visibly.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ui.limits import LATTICE_ARCS, LATTICE_WORDS
from ui.render import visible_text

LATTICE_CSS = """
<style>
.lat-word { border: 1px solid rgba(128,128,128,.28); border-radius: 8px; padding: 8px 10px; margin-bottom: 10px;
  background: rgba(128,128,128,.03); font-size: 14px; overflow-x: auto; }
.lat-word .head { font-size: 12px; opacity: .7; margin-bottom: 6px; }
.lat-grid { display: grid; grid-auto-flow: row dense; gap: 3px 2px; align-items: stretch; }
.lat-char { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; text-align: center;
  font-weight: 600; border-bottom: 2px solid rgba(128,128,128,.5); padding: 0 2px 2px 2px; white-space: pre; }
.lat-arc { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px;
  background: rgba(160,196,255,.45); color: inherit; border-radius: 4px; padding: 1px 4px; text-align: center;
  white-space: pre; overflow: hidden; text-overflow: ellipsis; }
.lat-arc small { display: block; font-size: 10px; opacity: .7; }
.lat-arc.best { background: #ffd166; color: #1b1b1f; outline: 2px solid #d1495b; font-weight: 600; }
.lat-arc.unk { background: #3d3d4a; color: #fafafa; }
.lat-segs { margin-top: 8px; font-size: 13px; }
.lat-seg { display: flex; flex-wrap: wrap; gap: 3px; align-items: center; margin: 2px 0; }
.lat-seg .tot { font-size: 12px; opacity: .75; min-width: 8.5em; }
.lat-seg .pc { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px;
  background: #a0c4ff; color: #1b1b1f; border-radius: 4px; padding: 0 4px; white-space: pre; }
.lat-seg.best .pc { background: #ffd166; }
.lat-special { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #3d3d4a;
  color: #fafafa; border-radius: 4px; padding: 1px 5px; }
.lat-note { font-size: 12px; opacity: .7; }
</style>
"""
"""Style sheet for :func:`lattices_html`."""


def _score(x: float) -> str:
    return f"{x:.3f}"


def _segmentation_html(seg, label: str, best: bool) -> str:
    pieces = "".join(f'<span class="pc">{visible_text(a.piece)}</span>' for a in seg.arcs)
    cls = "lat-seg best" if best else "lat-seg"
    return f'<div class="{cls}"><span class="tot">{html.escape(label)} {_score(seg.score)}</span>{pieces}</div>'


def lattice_html(lattice) -> str:
    """One word's lattice: a grid of its arcs (the best path's marked ``best``), then its segmentations.

    Args:
        lattice: a :class:`~bpe_core.unigram.WordLattice` (a special token is drawn as one chip).

    Returns:
        HTML without the style sheet (see :data:`LATTICE_CSS`); each arc is a
        ``<div class="lat-arc ...">`` with ``data-start``, ``data-end`` and
        ``data-id`` attributes (characters of ``lattice.word``, token id).
    """
    if lattice.is_special:
        return (
            f'<div class="lat-word"><span class="head">special token</span> '
            f'<span class="lat-special">{visible_text(lattice.text)}</span>'
            '<span class="lat-note"> never split</span></div>'
        )
    word = lattice.word
    best = {(a.start, a.end) for a in lattice.best.arcs} if lattice.best is not None else set()
    arcs = list(lattice.arcs)
    hidden = 0
    if len(arcs) > LATTICE_ARCS:
        keep = [a for a in arcs if (a.start, a.end) in best]
        rest = [a for a in arcs if (a.start, a.end) not in best][: LATTICE_ARCS - len(keep)]
        hidden = len(arcs) - len(keep) - len(rest)
        arcs = sorted(keep + rest, key=lambda a: (a.start, a.end))
    cells = [
        f'<div class="lat-char" style="grid-column:{i + 1};grid-row:1">{visible_text(c)}</div>'
        for i, c in enumerate(word)
    ]
    # longer arcs first, so that rows fill from the widest pieces down to the characters
    for a in sorted(arcs, key=lambda a: (a.start - a.end, a.start)):
        classes = "lat-arc" + (" best" if (a.start, a.end) in best else "") + (" unk" if a.is_unknown else "")
        label = "&lt;unk&gt;" if a.is_unknown else visible_text(a.piece)
        title = f"{'unknown character' if a.is_unknown else 'piece'} {a.piece!r}, id {a.id}, score {a.score:.6g}"
        cells.append(
            f'<div class="{classes}" style="grid-column:{a.start + 1} / {a.end + 1}" data-start="{a.start}" '
            f'data-end="{a.end}" data-id="{a.id}" title="{html.escape(title, quote=True)}">'
            f"{label}<small>{_score(a.score)}</small></div>"
        )
    grid = (
        f'<div class="lat-grid" style="grid-template-columns:repeat({len(word)}, minmax(2.4em, auto))">'
        + "".join(cells)
        + "</div>"
    )
    segs = []
    if lattice.best is not None:
        segs.append(_segmentation_html(lattice.best, "best:", True))
    for k, seg in enumerate(lattice.runners_up, 2):
        segs.append(_segmentation_html(seg, f"#{k}:", False))
    note = f'<div class="lat-note">… {hidden:,} more arcs not drawn.</div>' if hidden else ""
    n_arcs = len(lattice.arcs)
    return (
        f'<div class="lat-word"><div class="head">{visible_text(lattice.text)} → lattice of '
        f"{visible_text(word)}: {n_arcs:,} candidate piece{'s' * (n_arcs != 1)}, best path highlighted</div>"
        f'{grid}{note}<div class="lat-segs">{"".join(segs)}</div></div>'
    )


def lattices_html(lattices: Sequence, max_words: int = LATTICE_WORDS) -> str:
    """Every word's :func:`lattice_html`, with the style sheet; at most ``max_words`` (a note counts the rest)."""
    out = [LATTICE_CSS, '<div class="lat-steps">']
    out.extend(lattice_html(w) for w in lattices[:max_words])
    if len(lattices) > max_words:
        out.append(f'<div class="lat-note">… {len(lattices) - max_words:,} more words not drawn.</div>')
    out.append("</div>")
    return "".join(out)
