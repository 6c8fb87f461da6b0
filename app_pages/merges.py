"""Merges: step or play through training, one merge at a time."""

from __future__ import annotations

import streamlit as st

from ui import live_view, render, view
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.merges import page as merges_page
from ui.merges.tables import merge_table
from ui.merges.why import why_panel

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
    # the candidates table needs ~400 px: at 1280 px two equal columns with a large gap leave it 376
    w1, w2 = st.columns([6, 5], gap="medium")
    with w1:
        st.subheader("Why this pair?", divider="gray")
        why_panel(history, k, False)
    with w2:
        figs = history.figures(k)
        st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
        st.plotly_chart(figs[1], key=sk.MERGE_FIG_TOKENS, config={"displayModeBar": False})
    st.subheader("All merges", divider="gray")
    merge_table(history, k)
else:
    merges_page.stepper(history, settings.text)
