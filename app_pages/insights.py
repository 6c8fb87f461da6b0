"""Insights: what no token counter shows -- genealogy, vocabulary diff, held-out, scripts, splits, unused tokens."""

from __future__ import annotations

import streamlit as st

from ui import insights_view as iv
from ui import state_keys as sk
from ui import view
from ui.insights_tabs import VIEWS

settings = st.session_state[sk.SETTINGS]

st.title("Insights")
st.caption(
    "Where each token comes from, how your vocabulary differs from GPT-4's or Llama's (a WordPiece's from BERT's, "
    "a Unigram's from XLM-R's), whether it "
    "holds up on text it has not seen, what each script costs, how the split pattern shapes the merges, and "
    "which tokens are only stepping stones."
)

full = view.trained_or_stop(settings, brief=True)
iv.production_picker(settings.spec.algorithm)
size = view.vocab_slider(full)
tok = full.with_vocab_size(size)

labels = list(VIEWS.values())
if st.session_state.get(sk.INS_TAB) not in labels:
    st.session_state[sk.INS_TAB] = labels[0]
tabs = dict(zip(VIEWS, st.tabs(labels, key=sk.INS_TAB, on_change="rerun")))
if tabs["genealogy"].open:
    with tabs["genealogy"]:
        iv.genealogy_view(settings, tok)
if tabs["diff"].open:
    with tabs["diff"]:
        iv.diff_view(settings, tok)
if tabs["heldout"].open:
    with tabs["heldout"]:
        iv.heldout_view(settings, tok, size)
if tabs["scripts"].open:
    with tabs["scripts"]:
        iv.scripts_view(settings, tok)
if tabs["pretok"].open:
    with tabs["pretok"]:
        iv.pretok_view(settings)
if tabs["unused"].open:
    with tabs["unused"]:
        iv.unused_view(settings, tok, size)
