"""Playground: the text drawn token by token, with a vocabulary-size slider that redraws in the browser."""

from __future__ import annotations

import streamlit as st

from ui import export_view, links, live_view, render, token_click, view
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.token_dialog import token_dialog

settings = st.session_state[sk.SETTINGS]

st.title("BPE Playground")
st.caption(
    "Train a tokenizer on your text and watch it cut the text into tokens. Drag the slider left and words "
    "fall apart into smaller pieces; drag it right and the pieces join into whole words."
)

if not st.session_state.get(sk.LINK_HAD_SETTINGS, True) and not st.session_state.get(sk.PRESENT):
    st.page_link(  # a first visit (no settings in the link) is offered the lessons; kept off a projector
        "app_pages/learn.py",
        label="New to tokenizers? Start with Learn",  # short: a page link does not wrap on a phone
        icon=":material/school:",
    )
tok = view.trained_or_stop(settings)
# drawn on the server (asked for, or an algorithm/length the live view does not draw): a slider move reruns
if st.session_state.get(sk.SERVER_VIEW) or not live_view.supports(tok, settings.text):
    size = view.vocab_slider(tok)
    current = tok.with_vocab_size(size)
    counts = view.token_counts(settings.text, tok, current, trained_on_text=settings.imported is None)
    links.keep(sk.SHOW_WS, True)  # not value=: links set it
    show_ws = st.toggle("Show whitespace", key=sk.SHOW_WS, persist_state="session")
    view.coloured_text(settings.text, current, show_whitespace=show_ws, total_tokens=counts["tokens"])
    clicked = token_click.clicked_token(sk.PLAYGROUND_CLICK)
else:  # the live view: the slider, counts and text redraw in the browser
    links.keep(sk.SHOW_WS, True)  # not value=: links set it
    show_ws = st.toggle("Show whitespace", key=sk.SHOW_WS, persist_state="session")
    size, clicked = live_view.live_text(
        tok,
        settings.text,
        trained_on_text=settings.imported is None,
        show_whitespace=show_ws,
        colour_mode=render.session_colour_mode(),
        present=bool(st.session_state.get(sk.PRESENT)),
    )
    current = tok.with_vocab_size(size)
    st.html(view_of(tok.algorithm).legend_html)
if clicked is not None and 0 <= clicked < current.vocab_size:
    token_dialog(settings, current, clicked)
view.training_details(tok)
export_view.download_buttons(current)
