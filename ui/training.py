"""Training, cached per (text, parameters): moving a slider never retrains."""

from __future__ import annotations

import streamlit as st

from bpe_core import BPETokenizer, train_bpe
from bpe_core.wordpiece import WordPieceTokenizer, train_wordpiece
from ui import imported as imported_tokenizers


def train(
    text: str,
    algorithm: str,
    pattern: str,
    max_vocab: int,
    special_tokens: tuple[str, ...],
    lowercase: bool = False,
    imported: str | None = None,
) -> BPETokenizer | WordPieceTokenizer:
    """Train (once) and return the tokenizer for these settings, or the imported one.

    With ``imported`` (a key from :mod:`ui.imported`) the imported tokenizer is
    returned as it is and nothing is trained.  Otherwise see :func:`_train`.

    Raises:
        ValueError: the imported tokenizer is no longer loaded; or from :func:`_train`.
    """
    if imported is not None:
        return imported_tokenizers.get(imported)
    return _train(text, algorithm, pattern, max_vocab, special_tokens, lowercase)


@st.cache_resource(max_entries=8, show_spinner=False)
def _train(
    text: str,
    algorithm: str,
    pattern: str,
    max_vocab: int,
    special_tokens: tuple[str, ...],
    lowercase: bool = False,
) -> BPETokenizer | WordPieceTokenizer:
    """Train (once) and return the tokenizer for these settings.

    Args:
        text: training text.
        algorithm: ``"bpe"`` or ``"wordpiece"``.
        pattern: pattern name (BPE only; WordPiece always splits BERT-style).
        max_vocab: vocabulary size to train to.
        special_tokens: special-token strings.
        lowercase: WordPiece only: lower-case the text first.

    Returns:
        The trained tokenizer at its full size; pages take views of it with
        ``with_vocab_size``.

    Raises:
        ValueError, TypeError: from the engine, with its message; not cached.
    """
    if algorithm == "wordpiece":
        return train_wordpiece(text, max_vocab, special_tokens, lowercase=lowercase)
    if algorithm != "bpe":
        raise ValueError(f"unknown algorithm {algorithm!r}")
    return train_bpe(text, max_vocab, special_tokens, pattern)
