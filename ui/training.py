"""Training, cached per (text, parameters): moving a slider never retrains."""

from __future__ import annotations

import streamlit as st

from bpe_core import BPETokenizer, train_bpe


@st.cache_resource(max_entries=8, show_spinner=False)
def train(text: str, algorithm: str, pattern: str, max_vocab: int, special_tokens: tuple[str, ...]) -> BPETokenizer:
    """Train (once) and return the tokenizer for these settings.

    Args:
        text: training text.
        algorithm: ``"bpe"``.
        pattern: pattern name.
        max_vocab: vocabulary size to train to.
        special_tokens: special-token strings.

    Returns:
        The trained tokenizer at its full size; pages take views of it with
        ``with_vocab_size``.

    Raises:
        ValueError, TypeError: from the engine, with its message; not cached.
    """
    if algorithm != "bpe":
        raise ValueError(f"unknown algorithm {algorithm!r}")
    return train_bpe(text, max_vocab, special_tokens, pattern)
