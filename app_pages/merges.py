"""Merges: step or play through training, one merge at a time."""

from __future__ import annotations

import streamlit as st

from ui import live_view, merges_view, render, view

settings = st.session_state["settings"]

st.title("Merges")
if settings.algorithm == "wordpiece":
    st.caption(
        "WordPiece training repeats one move: score every pair of neighbouring pieces inside a word by "
        "freq(pair) / (freq(left) × freq(right)) and merge the best-scoring pair into a new piece. "
        "Step through the merges, or press Play, and watch the words join up."
    )
else:
    st.caption(
        "Training repeats one move: find the most frequent pair of neighbouring tokens and merge it into a new "
        "token. Step through the merges, or press Play, and watch the text shrink into fewer, longer tokens."
    )

view.trained_or_stop(settings, brief=True)
history = merges_view.history_or_stop(settings)
if history.algorithm == "bpe" and not st.session_state.get("server_view"):
    # played in the browser (ui.live_view); the server's panels follow the step where it stops
    merges_view.reset_for(history)
    k = live_view.merges_player(
        history.tokenizer,
        settings.text,
        st.session_state.get(merges_view.STEP_KEY, 1),
        show_whitespace=st.session_state.get("show_ws", True),
        colour_mode=render.session_colour_mode(),
        font_scale=live_view.PRESENTATION_SCALE if st.session_state.get("presentation") else 1.0,
    )
    w1, w2 = st.columns(2, gap="large")
    with w1:
        st.subheader("Why this pair?", divider="gray")
        merges_view.why_panel(history, k, False)
    with w2:
        figs = history.figures(k)
        st.plotly_chart(figs[0], key="merge_fig_counts", config={"displayModeBar": False})
        st.plotly_chart(figs[1], key="merge_fig_tokens", config={"displayModeBar": False})
    st.subheader("All merges", divider="gray")
    merges_view.merge_table(history, k)
else:
    merges_view.stepper(history, settings.text)
