"""Lesson ``efficiency``: bytes per token, from one token per byte to one per word, and where BPE lands."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bpe_core.analysis.metrics import basic_counts
from ui import state_keys as sk
from ui.lessons import base
from ui.safe_text import md

TRAINED = "bpe"
"""The algorithm the lesson trains on the learner's text (its Compare column has the same key)."""

SLUG = "efficiency"

SENTENCE = "The apparent meaning is for the masses, and the inner meaning is for the learned."
"""The sentence of the efficiency article (seed 001)."""

SEED_BYTES = 93
"""The byte count the article prints for :data:`SENTENCE` (it is 81: the lesson says so)."""

PRODUCTION_KEYS = ("gpt2", "cl100k_base", "o200k_base")


def row(name: str, text: str, n_tokens: int) -> dict[str, object]:
    """One table row: the tokenizer, its token count and bytes per token on ``text``."""
    c = basic_counts(text, n_tokens)
    return {"Tokenizer": name, "Tokens": f"{n_tokens:,}", "Bytes per token": f"{c['bytes_per_token']:.2f}"}


def efficiency_table(text: str, settings) -> tuple[pd.DataFrame, list[tuple[str, object]], list[str]]:
    """The table's rows (words, bytes, each production tokenizer, the learner's), the tokenizers drawn, the notes."""
    rows = [
        row("One token per word (split on spaces)", text, len(text.split())),
        row("One token per byte", text, len(text.encode())),
    ]
    drawn, notes = [], []
    for key in PRODUCTION_KEYS:
        tok, problem = base.production(key)
        if tok is None:
            notes.append(problem)
            continue
        rows.append(row(base.production_label(key), text, len(tok.encode(text))))
        drawn.append((base.production_label(key), tok))
    mine, problem = base.sidebar_tokenizer(settings)
    if mine is None:
        notes.append(problem)
    else:
        name = f"Yours: {mine.name} · {mine.vocab_size:,} on {settings.text_label}"
        rows.append(row(name, text, len(mine.encode(text))))
        drawn.append((name, mine))
    return pd.DataFrame(rows).set_index("Tokenizer"), drawn, notes


def example(settings) -> None:
    """The sentence (or the typed text) under words, bytes, the production tokenizers and the learner's."""
    text = base.input_box(SLUG, SENTENCE, help="Any sentence: every count below follows your typing.")
    if not text.strip():
        base.note("Type a sentence above.")
        return
    n_bytes = len(text.encode("utf-8"))
    table, drawn, notes = efficiency_table(text, settings)
    n_words = max(len(text.split()), 1)
    base.facts(
        [
            ("Bytes (UTF-8)", f"{n_bytes:,}", f"{len(text):,} characters"),
            ("One token per word", f"{n_bytes / n_words:.2f}", f"bytes/token: {n_words:,} words"),
            *[
                (name, f"{n_bytes / len(tok.encode(text)):.2f}", f"bytes/token: {len(tok.encode(text)):,} tokens")
                for name, tok in drawn
            ],
        ]
    )
    if text == SENTENCE:
        base.note(
            f"The article prints {SEED_BYTES} bytes and 6.2 bytes per word for this sentence; "
            f"as printed it is {n_bytes} bytes, {n_bytes / len(text.split()):.1f} per word."
        )
    left, right = st.columns([2, 3], gap="medium")
    with left:
        st.table(table)
    with right:
        for name, tok in drawn:
            st.markdown(f"**{md(name)}**: {len(tok.encode(text)):,} tokens")
            base.tokens(tok, text)
    for n in notes:
        base.note(n)


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Bytes per token",
        text=(
            "A model pays for every token: attention grows with the square of the sequence length. **Bytes per "
            "token** says how much text one token carries. One token per byte (1.0) can write anything but makes "
            "long sequences; one token per word compresses well but cannot write a word it has never seen. "
            "Subword tokenizers sit between: common words whole, rare ones in pieces."
        ),
        example=example,
        try_it=base.TryIt(
            page="compare",
            what="Opens Compare on your text: a BPE trained on it beside GPT-2, GPT-4 and GPT-4o, bytes per token "
            "included.",
            settings=lambda state: {
                sk.ALGORITHM: TRAINED,
                sk.PATTERN: "gpt2",
                sk.COMPARE_TOKENIZERS: [TRAINED, *PRODUCTION_KEYS],
                sk.COMPARE_SOURCE: "Training text",
            },
        ),
    )
)
