"""Download buttons: the tokenizer on screen, in every format other tools read."""

from __future__ import annotations

import re

import streamlit as st

from bpe_core.interface import TrainedTokenizer
from ui.algorithms import view_of


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "tokenizer"


def download_buttons(tok: TrainedTokenizer) -> None:
    """An expander with one download button per export format of ``tok`` (the view on screen).

    The formats are its algorithm's (:attr:`ui.algorithms.AlgorithmView.exports`).
    Files are built only when a button is clicked (deferred ``data`` callables).
    """
    base = f"{_slug(tok.name)}-{tok.vocab_size}"
    with st.expander(f"Export this tokenizer ({tok.vocab_size:,} tokens)", icon=":material/download:"):
        cols = st.columns(4)
        for col, export in zip(cols, view_of(tok.algorithm).exports(tok, base)):
            col.download_button(
                export.label,
                data=export.data,
                on_click="ignore",
                file_name=export.file_name,
                mime=export.mime,
                disabled=export.disabled,
                help=export.help,
                icon=export.icon,
            )
        st.caption("Every format is read back by its own library in the test suite and gives the same token ids.")
