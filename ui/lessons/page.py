"""The Learn page: the lesson picker with Previous/Next, the lesson (text, live example), and "Try it on your text".

The lesson on screen is ``st.session_state[LESSON]`` (a slug), which the link carries as
``?lesson=<slug>`` (:mod:`ui.links`); with ``present=1`` the link opens it in presentation
mode (:mod:`ui.present`: large text, captions and secondary parts hidden, so the example and
its figures fill the first screen).  "Try it on your text" writes the lesson's settings into
session state in its callback (before the widgets that read them are drawn) and the next run
switches to the page it names.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import state_keys as sk
from ui.lessons.base import PAGES, Lesson, TryIt
from ui.lessons.catalogue import LESSONS, slugs

NAV_CSS = """<style>
.st-key-lesson_nav { align-items: center; }
.st-key-lesson_nav [data-testid=stSelectbox] { flex: 1 1 12rem; min-width: 9rem; }
@media (max-width: 640px) {  /* a phone: icon-only Previous/Next (the title and padding: ui.present.PHONE_CSS) */
  .st-key-lesson_nav [data-testid=stButton] p { display: none; }
}
</style>"""
"""The lesson row's layout; on a phone, a smaller title and icon-only Previous/Next (the page's CSS only)."""


def _go(slug: str) -> None:
    st.session_state[sk.LESSON] = slug


def _try(target: TryIt) -> None:
    """The button's callback: write the lesson's settings, then ask for the page (switched to on the next run)."""
    for key, value in target.settings(st.session_state).items():
        st.session_state[key] = value
    st.session_state[sk.LESSON_GOTO] = PAGES[target.page]


def current() -> Lesson:
    """The lesson on screen (the first one when the session's slug is missing or unknown)."""
    names = slugs()
    if st.session_state.get(sk.LESSON) not in names:
        st.session_state[sk.LESSON] = names[0]
    return LESSONS[names.index(st.session_state[sk.LESSON])]


def _nav(lesson: Lesson) -> None:
    """Previous, the lesson picker, Next: one row (it stays one row on a phone)."""
    names = slugs()
    i = names.index(lesson.slug)
    titles = {x.slug: f"{n}. {x.title}" for n, x in enumerate(LESSONS, 1)}
    st.html(NAV_CSS)
    with st.container(key=sk.LESSON_NAV, horizontal=True, gap="small"):
        st.button(
            "Previous",
            key=sk.LESSON_PREV,
            icon=":material/arrow_back:",
            disabled=i == 0,
            on_click=_go,
            args=(names[max(i - 1, 0)],),
            help=None if i == 0 else f"Lesson {titles[names[i - 1]]}",
        )
        st.selectbox(
            "Lesson",
            names,
            format_func=titles.get,
            key=sk.LESSON,
            label_visibility="collapsed",
        )
        st.button(
            "Next",
            key=sk.LESSON_NEXT,
            icon=":material/arrow_forward:",
            disabled=i == len(names) - 1,
            on_click=_go,
            args=(names[min(i + 1, len(names) - 1)],),
            help=None if i == len(names) - 1 else f"Lesson {titles[names[i + 1]]}",
        )


def draw(settings: Any) -> None:
    """The whole page; ``settings`` is the sidebar's :class:`ui.inputs.Settings` (the learner's text)."""
    goto = st.session_state.pop(sk.LESSON_GOTO, None)
    if goto is not None:  # "Try it on your text" was pressed: its settings are in place
        st.switch_page(goto)
    lesson = current()
    _nav(lesson)
    st.title(lesson.title)
    st.markdown(lesson.text)
    lesson.example(settings)
    st.button(
        "Try it on your text",
        key=sk.LESSON_TRY,
        type="primary",
        icon=":material/science:",
        on_click=_try,
        args=(lesson.try_it,),
        help=lesson.try_it.what,
    )
    st.caption(lesson.try_it.what)
