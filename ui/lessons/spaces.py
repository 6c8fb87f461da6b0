"""Lesson ``spaces-and-numbers``: how GPT-2 and GPT-4 (cl100k) cut runs of spaces, indented code and long numbers."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import state_keys as sk
from ui.lessons import base
from ui.safe_text import md

TRAINED = "bpe"
"""The algorithm the lesson trains on the learner's text (its Compare column has the same key)."""

SLUG = "spaces-and-numbers"

SPACES = "   Hello World!!!"
"""Karpathy's lecture notes' example: three leading spaces."""

CODE = "def area(r):\n        if r < 0:\n            return None\n        return 3.14159 * r * r\n"
"""Indented code (eight and twelve spaces)."""

NUMBER = "Order 12345678901234567890 shipped on 2024-07-15."
"""A long number and a date."""

SHOWN = ("gpt2", "cl100k_base")


def ids_text(ids: list[int]) -> str:
    """Token ids separated by spaces."""
    return " ".join(str(i) for i in ids)


def shown(text: str) -> str:
    """``text`` with its spaces drawn as ``·`` (as the coloured view draws them), for a label."""
    return text.replace(" ", "·")


def counts_table(toks: dict, examples: list[tuple[str, str]]) -> pd.DataFrame:
    """Tokens of each example under each tokenizer."""
    rows = [
        {"Example": name, **{base.production_label(k): len(t.encode(s)) for k, t in toks.items()}}
        for name, s in examples
    ]
    return pd.DataFrame(rows).set_index("Example")


def example(_settings) -> None:
    """The three leading spaces under both tokenizers, then the learner's text, indented code and a long number."""
    toks = {}
    for key in SHOWN:
        tok, problem = base.production(key)
        if tok is None:
            base.note(problem)
            return
        toks[key] = tok
    base.facts(
        [
            (
                f"{base.production_label(k)}: “{shown(SPACES)}”",
                ids_text(t.encode(SPACES)),
                f"{len(t.encode(SPACES))} tokens",
            )
            for k, t in toks.items()
        ]
    )
    text = base.input_box(SLUG, SPACES, help="Any text: both tokenizers below follow your typing.")
    examples = [("Your text", text)] if text else []
    examples += [("Indented code", CODE), ("A long number", NUMBER)]
    for col, (key, tok) in zip(st.columns(len(toks), gap="medium"), toks.items()):
        with col:
            st.markdown(f"**{md(base.production_label(key))}**")
            for _name, s in examples:
                base.tokens(tok, s)
    st.table(counts_table(toks, examples))


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Spaces and numbers",
        text=(
            "GPT-2's pattern puts one space in front of a word and leaves any other spaces alone, so each extra "
            "space costs a token of its own: indented code is expensive. GPT-4's cl100k "
            "learned tokens for runs of spaces and cuts numbers into groups of at most three digits, so the same "
            "text takes fewer tokens and every number is cut the same way."
        ),
        example=example,
        try_it=base.TryIt(
            page="compare",
            what="Opens Compare on your text: GPT-2 and GPT-4 (cl100k) side by side with a BPE trained on it.",
            settings=lambda state: {
                sk.COMPARE_TOKENIZERS: [TRAINED, *SHOWN],
                sk.COMPARE_SOURCE: "Training text",
            },
        ),
    )
)
