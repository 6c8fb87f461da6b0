"""Merges: step or play through training, one merge at a time."""

from __future__ import annotations

import streamlit as st

from ui import state_keys as sk
from ui import view
from ui.merges import page as merges_page

settings = st.session_state[sk.SETTINGS]

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
history = merges_page.history_or_stop(settings)
merges_page.stepper(history, settings.text)
