"""The training text at step ``k``: the drawn prefix, its tokens, the highlighted merge, examples in context."""

from __future__ import annotations

import dataclasses

from bpe_core.pretokenize import pretoken_prefix, tokenizer_split
from bpe_core.spans import TokenSpan
from ui import render
from ui.limits import MAX_STEP_CHARS, MAX_STEP_TOKENS
from ui.merges.model import MergeHistory


def drawn_text(history: MergeHistory, text: str) -> str:
    """The part of ``text`` the page draws: about :data:`MAX_STEP_CHARS` characters, cut at a pre-token boundary.

    The cut is a boundary of the tokenizer's pre-tokenization (WordPiece: a
    word boundary), so the drawn tokens are exactly the whole text's first
    tokens at every step; a word running far past the cap is cut at
    ``4 * MAX_STEP_CHARS`` characters (see :func:`bpe_core.pretokenize.pretoken_prefix`).
    """
    pattern, specials = tokenizer_split(history.tokenizer)
    return pretoken_prefix(text, MAX_STEP_CHARS, pattern, specials, slack=3 * MAX_STEP_CHARS)


def step_spans(history: MergeHistory, k: int, text: str) -> list[TokenSpan]:
    """The tokens at step ``k`` of the drawn part of ``text`` (:func:`drawn_text`)."""
    return history.view(k).token_spans(drawn_text(history, text))


def step_text_html(
    history: MergeHistory, k: int, text: str, show_whitespace: bool = True, spans: list[TokenSpan] | None = None
) -> tuple[str, int]:
    """The text segmented at step ``k`` with merge ``k``'s tokens highlighted.

    Args:
        history: the merge history.
        k: the step.
        text: the training text (a prefix of it is drawn).
        show_whitespace: draw spaces and newlines visibly.
        spans: :func:`step_spans` output, when the caller already has it.

    Returns:
        ``(html, occurrences)``: the HTML (its style sheet is :data:`ui.render.CSS`) and how many
        tokens of the drawn text merge ``k`` produced.
    """
    prefix = drawn_text(history, text)
    spans = step_spans(history, k, text) if spans is None else spans
    highlight = history.highlight(k)
    occurrences = sum(1 for s in spans if s.id in highlight)
    shown = spans[:MAX_STEP_TOKENS]
    # WordPiece drops whitespace: draw the text between words uncoloured
    gaps = None if history.covers_text else prefix
    body = render.tokens_html(
        shown, show_whitespace=show_whitespace, highlight=highlight, text=gaps, max_rank=max(history.n_steps - 1, 0)
    )
    if len(prefix) < len(text) or len(shown) < len(spans):
        chars = shown[-1].end if shown else 0
        body += (
            f'<div class="bpe-legend">Showing the first {chars:,} of {len(text):,} characters of the training '
            "text; every count covers all of it.</div>"
        )
    return body, occurrences


EXAMPLES_CSS = """
<style>
.merge-examples { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.merge-examples .bpe-view { display: inline-block; padding: 2px 8px; max-height: none; line-height: 1.7; }
.merge-examples .lead { font-size: 13px; opacity: .7; }
</style>
"""


def examples_html(
    spans: list[TokenSpan],
    highlight: dict[int, int | None],
    limit: int = 6,
    context: int = 2,
    text: str | None = None,
) -> str:
    """Up to ``limit`` distinct places where the highlighted tokens occur, each with ``context`` tokens around.

    Args:
        spans: the drawn tokens (:func:`step_spans`).
        highlight: as :meth:`MergeHistory.highlight`.
        limit: most examples to show.
        context: tokens shown on each side.
        text: the text the spans index into, when tokens do not cover it all
            (WordPiece): the whitespace between a window's words is drawn.

    Returns:
        HTML (escaped, with :data:`EXAMPLES_CSS`), or ``""`` when nothing is highlighted.
    """
    if not highlight:
        return ""
    seen: set[tuple[str, ...]] = set()
    parts = []
    for i, s in enumerate(spans):
        if s.id not in highlight:
            continue
        window = spans[max(0, i - context) : i + context + 1]
        key = tuple(w.display for w in window)
        if key in seen:
            continue
        seen.add(key)
        if text is None:
            parts.append(render.tokens_html(window, highlight=highlight))
        else:  # offsets relative to the window, so that only the gaps inside it are drawn
            base = window[0].start
            moved = [dataclasses.replace(w, start=w.start - base, end=w.end - base) for w in window]
            parts.append(render.tokens_html(moved, highlight=highlight, text=text[base : window[-1].end]))
        if len(parts) >= limit:
            break
    if not parts:
        return ""
    return (
        EXAMPLES_CSS + '<div class="merge-examples"><span class="lead">In the text:</span>'
        + "".join(parts) + "</div>"
    )  # fmt: skip
