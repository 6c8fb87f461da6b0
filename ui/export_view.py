"""Download buttons: the tokenizer on screen, in every format other tools read."""

from __future__ import annotations

import json
import re

import streamlit as st

from bpe_core import BPETokenizer, bpe_to_hf_json, bpe_to_tiktoken_files, wordpiece_to_hf_json, wordpiece_to_vocab_txt
from bpe_core.wordpiece import WordPieceTokenizer


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "tokenizer"


def download_buttons(tok: BPETokenizer | WordPieceTokenizer) -> None:
    """An expander with one download button per export format of ``tok`` (the view on screen).

    Files are built only when a button is clicked (deferred ``data`` callables).
    """
    base = f"{_slug(tok.name)}-{tok.vocab_size}"
    with st.expander(f"Export this tokenizer ({tok.vocab_size:,} tokens)", icon=":material/download:"):
        cols = st.columns(4)
        cols[0].download_button(
            "Project JSON",
            data=lambda: json.dumps(tok.to_dict(), ensure_ascii=False),
            on_click="ignore",
            file_name=f"{base}.json",
            mime="application/json",
            help="Everything: vocab, merges, special tokens, pattern and the training trace. Load it back here.",
            icon=":material/data_object:",
        )
        if isinstance(tok, BPETokenizer):
            unique = len(set(tok.vocab.values())) == tok.vocab_size
            cols[1].download_button(
                "tiktoken ranks",
                data=lambda: bpe_to_tiktoken_files(tok, base)[0],
                on_click="ignore",
                file_name=f"{base}.tiktoken",
                mime="text/plain",
                help="Read with tiktoken.load.load_tiktoken_bpe; pair it with the metadata file.",
                icon=":material/format_list_numbered:",
            )
            cols[2].download_button(
                "tiktoken metadata",
                data=lambda: bpe_to_tiktoken_files(tok, base)[1],
                on_click="ignore",
                file_name=f"{base}.tiktoken.json",
                mime="application/json",
                help="pat_str, special_tokens and explicit_n_vocab for tiktoken.Encoding(...).",
                icon=":material/settings:",
            )
            cols[3].download_button(
                "Hugging Face tokenizer.json",
                data=lambda: bpe_to_hf_json(tok),
                on_click="ignore",
                file_name=f"{base}.tokenizer.json",
                mime="application/json",
                disabled=not unique,
                help=(
                    "Load with tokenizers.Tokenizer.from_file: same ids as here."
                    if unique
                    else "Unavailable: two merges produced the same bytes, which tokenizer.json cannot hold."
                ),
                icon=":material/hub:",
            )
        else:
            cols[1].download_button(
                "BERT vocab.txt",
                data=lambda: wordpiece_to_vocab_txt(tok),
                on_click="ignore",
                file_name=f"{base}.vocab.txt",
                mime="text/plain",
                help="One token per line, line number = id; BERT's [UNK] and ## conventions.",
                icon=":material/format_list_numbered:",
            )
            cols[2].download_button(
                "Hugging Face tokenizer.json",
                data=lambda: wordpiece_to_hf_json(tok),
                on_click="ignore",
                file_name=f"{base}.tokenizer.json",
                mime="application/json",
                help="WordPiece model with the BERT pre-tokenizer: same ids as here.",
                icon=":material/hub:",
            )
        st.caption("Every format is read back by its own library in the test suite and gives the same token ids.")
