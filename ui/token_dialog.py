"""The click-a-token dialog: one token's genealogy, opened by the Playground when a token is clicked."""

from __future__ import annotations

import streamlit as st

from bpe_core.interface import TrainedTokenizer
from ui import render
from ui.algorithms import view_of
from ui.inputs import Settings
from ui.insights_view import genealogy_details
from ui.safe_text import md


@st.dialog("Where this token comes from", width="large")
def token_dialog(settings: Settings, tok: TrainedTokenizer, token_id: int) -> None:
    """A dialog with one token's genealogy (the Playground opens it when a token is clicked)."""
    shown = render.shown_token(tok, token_id)
    rank = tok.rank_of(token_id)
    made = view_of(tok.algorithm).rank_label(tok, token_id) if rank is not None else "base token"
    chip = f'<span class="tk" style="background:{render.id_colour(token_id)}">{render.visible_text(shown)}</span>'
    st.html(f'<div class="bpe-view" style="font-size:1.6rem;padding:.4em .6em">{chip}</div>')
    st.caption(f"id {token_id} · {made} · {md(tok.name)} at {tok.vocab_size:,} tokens")
    genealogy_details(settings, tok, token_id)
