"""Lesson ``sentencepiece``: ``▁``, the dummy prefix and byte fallback, on Mistral v1 and the learner's Unigram."""

from __future__ import annotations

import streamlit as st

from ui import state_keys as sk
from ui import training
from ui.lessons import base
from ui.safe_text import md

TRAINED = "unigram"
"""The algorithm the lesson trains on the learner's text (its Compare column has the same key)."""

SLUG = "sentencepiece"

TEXT = "Hello 世界 🦙"
"""The input box's first text: a word, two CJK characters and an emoji."""

SPACE = "\u2581"


def piece(tok, token_id: int) -> str:
    """A token as SentencePiece writes it: ``▁`` for a space, ``<0xNN>`` for a byte piece."""
    return tok.describe_token(token_id).replace(" ", SPACE)


def summary(tok, text: str) -> list[tuple[str, str, str]]:
    """The figures of one tokenizer on ``text``: its pieces, the dummy prefix, the byte pieces."""
    pieces = [piece(tok, i) for i in tok.encode(text)]
    fallback = [p for p in pieces if p.startswith("<0x") and p.endswith(">")]
    first = pieces[0] if pieces else ""
    return [
        ("Pieces", f"{len(pieces)}", " ".join(pieces)),
        (
            "Dummy prefix",
            first,
            "the text starts without a space, the first piece with ▁"
            if first.startswith(SPACE) and not text.startswith(" ")
            else "",
        ),
        ("Byte fallback", f"{len(fallback)} byte pieces", " ".join(fallback) or "every character has a piece"),
    ]


def learners_unigram(settings):
    """A Unigram with byte fallback trained on the learner's text at the sidebar's size (cached), or why not."""
    if settings.problem:
        return None, settings.problem
    spec = settings.spec.replace(
        algorithm="unigram", pattern="sentencepiece", special_tokens=(), lowercase=False, byte_fallback=True
    )
    if training.cached(training.training_key(settings.text, spec)) is None and training.shows_progress(
        settings.text, spec
    ):
        return None, "A Unigram on your text takes a while to train: try it on the Playground."
    try:
        return training.train(settings.text, spec), None
    except (ValueError, TypeError) as exc:
        return None, f"A Unigram does not train on your text: {exc}"


def column(title: str, tok, text: str) -> None:
    """One tokenizer's figures and coloured view of ``text``."""
    st.markdown(f"**{md(title)}**")
    base.facts(summary(tok, text))
    base.tokens(tok, text)


def example(settings) -> None:
    """The typed text under Mistral v1 and under a Unigram trained on the learner's text."""
    text = base.input_box(SLUG, TEXT, help="Any text: both tokenizers below follow your typing.")
    if not text:
        return
    mistral, problem = base.production("mistral_v1")
    mine, why = learners_unigram(settings)
    left, right = st.columns(2, gap="medium")
    with left:
        if mistral is None:
            base.note(problem)
        else:
            column(base.production_label("mistral_v1"), mistral, text)
    with right:
        if mine is None:
            base.note(why)
        else:
            column(f"Your Unigram ({mine.vocab_size:,} pieces, byte fallback) on {settings.text_label}", mine, text)


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="SentencePiece: ▁, the dummy prefix, byte fallback",
        text=(
            "SentencePiece reads text as characters, not bytes, and writes every space as `▁`, so a piece can carry "
            "its space and decoding gives the spaces back exactly. It also puts a `▁` before the text (the *dummy "
            "prefix*), so the first word looks like every other word. A character with no piece of its own is not "
            "lost: with *byte fallback* it is written as its UTF-8 bytes, `<0xF0>` and so on."
        ),
        example=example,
        try_it=base.TryIt(
            page="compare",
            what="Opens Compare on your text: a Unigram trained on it beside Mistral v1's SentencePiece.",
            settings=lambda state: {
                sk.ALGORITHM: TRAINED,
                sk.PATTERN: "sentencepiece",
                sk.COMPARE_TOKENIZERS: [TRAINED, "mistral_v1"],
                sk.COMPARE_SOURCE: "Training text",
            },
        ),
    )
)
