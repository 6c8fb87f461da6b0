"""What a lesson is, and the small views lessons share.

A lesson is a :class:`Lesson` registered with :func:`register` (the catalogue lists
the lesson modules in reading order): its slug (the link's ``?lesson=``), its title, a
few sentences written for this project, the live example drawn with the app's own views,
and where "Try it on your text" goes (:class:`TryIt`: a page and the settings written
where the sidebar and the pages read them, so the learner's own text -- the sidebar's
sample, paste or upload -- is shown with the lesson's setting).

Everything drawn from text escapes it (:func:`html.escape`, :func:`ui.render.visible_text`,
:func:`ui.safe_text.md`): a typed ``<b>`` is shown as text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from bpe_core.interface import Tokenizer
from bpe_core.production import PRODUCTION, EncodingUnavailable, load_production
from ui import render, training
from ui import state_keys as sk

INPUT_LABEL = "Your own example"
"""The label of every lesson's input box; ``app.py`` has the page follow typing in boxes with this label."""

MAX_INPUT_CHARS = 2_000
"""Longest text a lesson's input box takes (characters)."""

PAGES: dict[str, str] = {
    "playground": "app_pages/playground.py",
    "merges": "app_pages/merges.py",
    "compare": "app_pages/compare.py",
    "insights": "app_pages/insights.py",
    "encode": "app_pages/encode.py",
}
"""The pages "Try it on your text" opens: key -> the page's file (what ``st.switch_page`` takes)."""


@dataclass(frozen=True)
class TryIt:
    """Where a lesson's "Try it on your text" button goes.

    Attributes:
        page: a key of :data:`PAGES`.
        what: one sentence under the button saying what opens, with which settings.
        settings: ``settings(session_state) -> {session-state key: value}``: the values written
            before the page opens (the sidebar's algorithm, pattern and size, Compare's tokenizers,
            Encode's word, the Merges step...); the text stays the learner's.
    """

    page: str
    what: str
    settings: Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Lesson:
    """One lesson of the Learn page.

    Attributes:
        slug: its stable name, in links as ``?lesson=<slug>``.
        title: the heading.
        text: a few sentences (Markdown) written for this project.
        example: ``example(settings)`` draws the live example with the sidebar's
            :class:`ui.inputs.Settings` at hand (for the lessons that use the learner's tokenizer).
        try_it: the "Try it on your text" target.
    """

    slug: str
    title: str
    text: str
    example: Callable[[Any], None]
    try_it: TryIt


LESSONS: list[Lesson] = []
"""Every registered lesson (in import order; :data:`ui.lessons.catalogue.LESSONS` puts them in reading order)."""


def register(lesson: Lesson) -> Lesson:
    """Add ``lesson`` (a slug registered twice is an error); returns it.

    Raises:
        ValueError: the slug is taken or not lower-case letters, digits and ``-``.
    """
    if not lesson.slug or not all(c.islower() or c.isdigit() or c == "-" for c in lesson.slug):
        raise ValueError(f"lesson slug {lesson.slug!r}: lower-case letters, digits and '-' only")
    if any(other.slug == lesson.slug for other in LESSONS):
        raise ValueError(f"lesson {lesson.slug!r} is registered twice")
    if lesson.try_it.page not in PAGES:
        raise ValueError(f"lesson {lesson.slug!r}: unknown page {lesson.try_it.page!r}")
    LESSONS.append(lesson)
    return lesson


# ---------------------------------------------------------------------------
# views lessons share

CSS = """<style>
.lesson-facts { display: flex; flex-wrap: wrap; gap: 8px; margin: 2px 0 6px 0; }
.lesson-facts .fact { flex: 1 1 9rem; border: 1px solid rgba(128,128,128,.3); border-radius: 8px;
  padding: 5px 10px; background: rgba(128,128,128,.04); min-width: 0; }
.lesson-facts .l { font-size: 13px; opacity: .75; white-space: pre-wrap; }
.lesson-facts .v { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 19px;
  font-weight: 600; overflow-wrap: anywhere; white-space: pre-wrap; }
.lesson-facts .d { font-size: 12px; opacity: .7; }
.lesson-chips { display: flex; flex-wrap: wrap; gap: 4px; align-items: flex-start; margin: 2px 0 6px 0; }
.lesson-chips .lab { font-size: 13px; opacity: .75; align-self: center; min-width: 7.5rem; }
.lesson-chips .chip { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 16px;
  padding: 2px 7px; border-radius: 5px; color: #1b1b1f; white-space: pre; }
.lesson-chips .chip small { display: block; font-size: 11px; opacity: .7; text-align: center; }
.lesson-chips .chip.dim { opacity: .55; outline: 1px dashed rgba(27,27,31,.45); }
.lesson-chips .chip.special { background: #3d3d4a !important; color: #fafafa; font-weight: 600; }
.lesson-chips .chip.hl { background: #ffd166 !important; outline: 2px solid #d1495b; font-weight: 600; }
.lesson-note { font-size: 14px; opacity: .85; margin: 2px 0 6px 0; }
</style>"""
"""Style sheet of :func:`facts` and :func:`chips` (included by each call: Streamlit draws each ``st.html`` apart)."""


_MARKS = frozenset(("", "special", "hl", "dim"))


def facts_html(items: Sequence[tuple[str, str, str]]) -> str:
    """A row of figure cards: ``(label, value, detail)`` each (all escaped)."""
    cards = "".join(
        f'<div class="fact"><div class="l">{html.escape(label)}</div><div class="v">{html.escape(value)}</div>'
        f'<div class="d">{html.escape(detail)}</div></div>'
        for label, value, detail in items
    )
    return f'<div class="lesson-facts">{cards}</div>'


def facts(items: Sequence[tuple[str, str, str]]) -> None:
    """Draw a row of figure cards (:func:`facts_html`)."""
    st.html(CSS + facts_html(items))


def chips_html(items: Sequence[tuple[str, str | None]], label: str | None = None, *, marks: Sequence[str] = ()) -> str:
    """A row of token chips: ``(text, small line under it or None)`` each, whitespace made visible, escaped.

    Args:
        items: the chips.
        label: a caption at the row's start.
        marks: one word per chip (or fewer): ``"special"`` draws it as a special token (dark),
            ``"hl"`` highlights it, ``"dim"`` fades it, ``""`` leaves it as it is.
    """
    out = [f'<div class="lesson-chips">{"" if label is None else f"<span class=lab>{html.escape(label)}</span>"}']
    for i, (text, sub) in enumerate(items):
        colour = render.PALETTE[i % len(render.PALETTE)]
        mark = marks[i] if i < len(marks) and marks[i] in _MARKS else ""
        cls = f"chip {mark}".strip()
        small = "" if sub is None else f"<small>{html.escape(sub)}</small>"
        out.append(f'<span class="{cls}" style="background:{colour}">{render.visible_text(text)}{small}</span>')
    out.append("</div>")
    return "".join(out)


def chips(items: Sequence[tuple[str, str | None]], label: str | None = None, *, marks: Sequence[str] = ()) -> None:
    """Draw a row of token chips (:func:`chips_html`)."""
    st.html(CSS + chips_html(items, label, marks=marks))


def note(text: str) -> None:
    """One sentence under an example (HTML-escaped; not a caption, so presentation mode keeps it)."""
    st.html(CSS + f'<div class="lesson-note">{html.escape(text)}</div>')


def tokens(tok: Tokenizer, text: str, *, show_whitespace: bool = True, mode: str | None = None) -> None:
    """Draw ``text`` cut by ``tok`` in the app's coloured view (:func:`ui.render.tokens_html`)."""
    spans = tok.token_spans(text)
    st.html(render.tokens_html(spans, show_whitespace=show_whitespace, text=text, mode=mode))


def input_box(slug: str, default: str, *, help: str | None = None) -> str:
    """The lesson's input box (one per lesson, kept for the session); recomputed as the learner types.

    ``app.py`` has the page follow typing in text areas labelled :data:`INPUT_LABEL`
    (:func:`ui.live_view.follow_typing`), so the example redraws after a short pause, without Ctrl+Enter.

    Returns:
        The box's text (``default`` until the learner types).
    """
    key = sk.lesson_key(slug, "text")
    st.session_state[key] = st.session_state.get(key, default)
    return st.text_area(INPUT_LABEL, key=key, height=68, max_chars=MAX_INPUT_CHARS, help=help, persist_state="session")


def sidebar_tokenizer(settings: Any) -> tuple[Any, str | None]:
    """The tokenizer the sidebar trains on the learner's text (cached, as every page shares it), or why there is none.

    A training long enough to need the progress bar and Cancel (:func:`ui.training.shows_progress`) is left to
    the pages that have them: the lesson then says so instead of blocking.

    Returns:
        ``(tokenizer at its full size, None)`` or ``(None, a sentence saying why not)``.
    """
    if settings.problem:
        return None, settings.problem
    key = training.settings_key(settings)
    if (
        training.cached(key) is None
        and settings.imported is None
        and training.shows_progress(settings.text, settings.spec)
    ):
        return (
            None,
            "Your tokenizer is not trained yet and takes a while on this text: open the Playground to train it.",
        )
    try:
        return training.for_settings(settings), None
    except (ValueError, TypeError) as exc:
        return None, f"The sidebar's settings do not train: {exc}"


def production(key: str) -> tuple[Tokenizer | None, str | None]:
    """A production tokenizer (:func:`bpe_core.production.load_production`, loaded offline), or why it is missing.

    Returns:
        ``(tokenizer, None)`` or ``(None, one line saying why it cannot be had)``.
    """
    try:
        return load_production(key), None
    except (EncodingUnavailable, ValueError) as exc:
        return None, str(exc)


def production_label(key: str) -> str:
    """The production tokenizer's display name (``"GPT-2 (r50k_base)"``)."""
    return PRODUCTION[key].label
