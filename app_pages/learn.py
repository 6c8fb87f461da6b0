"""Learn: the lessons, in order, each live on the app's own views, with its own link and "Try it on your text"."""

from __future__ import annotations

import streamlit as st

from ui import state_keys as sk
from ui.lessons import page

page.draw(st.session_state[sk.SETTINGS])
