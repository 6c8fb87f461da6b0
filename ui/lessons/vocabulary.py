"""Lesson ``vocabulary``: what a learned vocabulary says about the text it was learned from."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bpe_core.analysis.insights import learned_tokens, token_occurrences
from ui import render, training
from ui import state_keys as sk
from ui.insights_tabs import VIEWS
from ui.lessons import base
from ui.safe_text import md
from ui.samples import SAMPLES, load_sample

SLUG = "vocabulary"

SHOWN = 10
"""Tokens listed in each table."""


def longest(tok) -> list[tuple[int, int]]:
    """``(merge rank, id)`` of the longest learned tokens (bytes), longest first, earlier merges first among equals."""
    return sorted(learned_tokens(tok), key=lambda ri: (-len(tok.token_bytes(ri[1])), ri[0]))[:SHOWN]


def most_used(tok, text: str) -> list[tuple[int, int]]:
    """``(id, occurrences)`` of the learned tokens used most when ``tok`` encodes ``text``, most first."""
    ids = {i for _r, i in learned_tokens(tok)}
    counts = token_occurrences(tok.encode(text))
    return sorted(((i, n) for i, n in counts.items() if i in ids), key=lambda x: (-x[1], x[0]))[:SHOWN]


def vocabulary_tables(tok, text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two tables of one tokenizer: its longest learned tokens, and the learned tokens its text uses most."""
    long_rows = [
        {"Token": render.shown_token(tok, i), "Bytes": len(tok.token_bytes(i)), "Merge": f"#{r + 1:,}"}
        for r, i in longest(tok)
    ]
    used_rows = [{"Token": render.shown_token(tok, i), "Uses": n} for i, n in most_used(tok, text)]
    return pd.DataFrame(long_rows).set_index("Token"), pd.DataFrame(used_rows).set_index("Token")


def contrast_sample(settings) -> str:
    """The sample set beside the learner's text: Python code, or English prose when the learner's text is the code."""
    return "english" if settings.text == load_sample("python") else "python"


def column(title: str, tok, text: str) -> None:
    """One tokenizer's longest learned token and its two tables."""
    st.markdown(f"**{md(title)}**")
    long_t, used_t = vocabulary_tables(tok, text)
    if len(long_t):
        top = long_t.index[0]
        base.facts(
            [("Longest learned token", top, f"{long_t['Bytes'].iloc[0]} bytes, merge {long_t['Merge'].iloc[0]}")]
        )
    st.table(long_t)
    st.table(used_t)


def example(settings) -> None:
    """The learner's tokenizer beside the same training on a contrasting sample."""
    mine, why = base.sidebar_tokenizer(settings)
    key = contrast_sample(settings)
    other_text = load_sample(key)
    try:
        other = training.train(other_text, settings.spec)  # the sidebar's algorithm, pattern and size, on the sample
    except (ValueError, TypeError) as exc:
        other, other_problem = None, f"The sidebar's settings do not train on the sample: {exc}"
    left, right = st.columns(2, gap="medium")
    with left:
        if mine is None:
            base.note(why)
        else:
            column(f"Yours: {mine.name} · {mine.vocab_size:,} on {settings.text_label}", mine, settings.text)
    with right:
        if other is None:
            base.note(other_problem)
        else:
            column(f"The same training on the sample “{SAMPLES[key][0]}”", other, other_text)


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="What a vocabulary reveals",
        text=(
            "A tokenizer's learned tokens are a portrait of its training text: the longest ones are the strings it "
            "saw over and over (names, phrases, boilerplate, code idioms), and the most used ones are its everyday "
            "words. Trained on prose it learns words; on code, indentation and keywords. Reading the vocabulary is "
            "also a way to spot junk in a corpus before training a model on it."
        ),
        example=example,
        try_it=base.TryIt(
            page="insights",
            what="Opens the Vocabulary diff view of Insights: the tokens your text taught a BPE that GPT-4's lacks.",
            settings=lambda state: {sk.ALGORITHM: "bpe", sk.INS_TAB: VIEWS["diff"]},
        ),
    )
)
