"""Merges: step or play through training, one merge at a time."""

from __future__ import annotations

import streamlit as st

from ui import state_keys as sk
from ui import view
from ui.algorithms import view_of
from ui.merges import page as merges_page

settings = st.session_state[sk.SETTINGS]

st.title("Merges")
st.caption(view_of(settings.spec.algorithm).merges_caption)

view.trained_or_stop(settings, brief=True)
history = merges_page.history_or_stop(settings)
merges_page.stepper(history, settings.text)
