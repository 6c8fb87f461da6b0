"""Merges: step or play through training, one merge at a time."""

from __future__ import annotations

import streamlit as st

from ui import live_view, render, view
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.merges import page as merges_page

settings = st.session_state[sk.SETTINGS]

st.title("Merges")
st.caption(view_of(settings.spec.algorithm).merges_caption)

view.trained_or_stop(settings, brief=True)
history = merges_page.history_or_stop(settings)
if live_view.plays_merges(history) and not st.session_state.get(sk.SERVER_VIEW):
    # played in the browser (ui.live_view); the server's panels follow the step where it stops
    merges_page.reset_for(history)
    k = live_view.merges_player(
        history.tokenizer,
        settings.text,
        st.session_state.get(sk.MERGE_STEP, 1),
        show_whitespace=st.session_state.get(sk.SHOW_WS, True),
        colour_mode=render.session_colour_mode(),
        present=bool(st.session_state.get(sk.PRESENT)),
        step_key=sk.MERGE_STEP,
    )
    merges_page.player_panels(history, k)  # the server's panels follow the step where the player stopped
else:
    merges_page.stepper(history, settings.text)
