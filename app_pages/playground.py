"""Playground: the text drawn token by token, with a vocabulary-size slider that redraws in the browser."""

from __future__ import annotations

import streamlit as st

from ui import export_view, live_view, render, view
from ui.insights_view import token_dialog

settings = st.session_state["settings"]

st.title("BPE Playground")
st.caption(
    "Train a tokenizer on your text and watch it cut the text into tokens. "
    "Drag the slider to see the same tokenizer with fewer merges."
)

tok = view.trained_or_stop(settings)
show_ws = st.toggle("Show whitespace", value=True, key="show_ws", persist_state="session")
size, clicked = live_view.live_text(
    tok,
    settings.text,
    trained_on_text=settings.imported is None,
    show_whitespace=show_ws,
    colour_mode=render.session_colour_mode(),
)
current = tok.with_vocab_size(size)
legend = render.WORDPIECE_LEGEND_HTML if tok.algorithm == "wordpiece" else render.LEGEND_HTML
st.html(render.CSS + legend)
if clicked is not None and 0 <= clicked < current.vocab_size:
    token_dialog(settings, current, clicked)
view.training_details(tok)
export_view.download_buttons(current)
