"""Lesson ``pretokenization``: normalization, then the split into words that merges never cross."""

from __future__ import annotations

import streamlit as st

from bpe_core.formats.huggingface import byte_to_unicode
from bpe_core.pretokenize import PATTERN_LABELS, PATTERNS, bert_normalize, pretokenize
from bpe_core.unigram.encoder import metaspace_word
from ui import state_keys as sk
from ui.insights_tabs import VIEWS
from ui.lessons import base

SLUG = "pretokenization"

NORMALIZED = "Héllò hów are ü?"
"""The Hugging Face course's normalization example (BERT uncased)."""

SPLIT = "Hello's World123 !! "
"""The text of Karpathy's lecture notes for GPT-2's pattern (the input box starts with it)."""

COURSE = "Hello, how are  you?"
"""The course's pre-tokenizer comparison sentence: two spaces before ``you`` (its offsets keep both)."""

SHOWN = ("gpt2", "cl100k", "o200k")


def offsets(start: int, end: int) -> str:
    """Character offsets as ``start–end`` (end excluded)."""
    return f"{start}–{end}"


def byte_level(word: str) -> str:
    """A pre-token as GPT-2's byte-level pre-tokenizer writes it: each byte a printable character (space: ``Ġ``)."""
    m = byte_to_unicode()
    return "".join(m[b] for b in word.encode("utf-8"))


def course_rows(text: str) -> dict[str, list[tuple[str, str]]]:
    """The three pre-tokenizers of the course's comparison on ``text``: ``{label: [(word, "start–end"), ...]}``.

    BERT-style drops whitespace; GPT-2's byte-level writes each word's bytes with ``Ġ`` for a space;
    SentencePiece-style writes ``▁`` for a space and puts one before the first word (the dummy prefix).
    """
    bert = [(p.text, offsets(p.start, p.end)) for p in pretokenize(text, "bert") if not p.text.isspace()]
    gpt2 = [(byte_level(p.text), offsets(p.start, p.end)) for p in pretokenize(text, "gpt2")]
    spm = [(metaspace_word(p.text), offsets(p.start, p.end)) for p in pretokenize(text, "sentencepiece")]
    return {"BERT-style": bert, "GPT-2 byte-level (Ġ)": gpt2, "SentencePiece-style (▁)": spm}


def example(_settings) -> None:
    """Normalization, three patterns on the typed text, and the course's three pre-tokenizers."""
    base.facts(
        [
            ("BERT uncased normalizes", f"{NORMALIZED} → {bert_normalize(NORMALIZED)}", "accents and case dropped"),
        ]
    )
    text = base.input_box(SLUG, SPLIT, help="Any text: each pattern's pre-tokens below follow your typing.")
    for key in SHOWN:
        words = pretokenize(text, key) if text else []
        base.chips([(p.text, offsets(p.start, p.end)) for p in words], f"{PATTERN_LABELS[key]}: {len(words)}")
    if text == SPLIT:
        base.note(
            "Karpathy's lecture notes print one more pre-token here, a lone space before “ !!”: "
            "that needs two spaces after 123, and their copy of the text has one."
        )
    st.markdown(f"**The course's comparison** on `{COURSE}` (offsets in characters, end excluded):")
    for label, words in course_rows(COURSE).items():
        base.chips(words, label)
    base.note(
        "The seed's copy of the course prints this sentence with one space before “you”; "
        "its offsets (you at 16–19) keep the two."
    )


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Normalization and pre-tokenization",
        text=(
            "Before any merge, the text is *normalized* (an uncased model drops accents and capitals) and cut "
            "into *pre-tokens* by a pattern. Merges never cross a pre-token boundary, so the pattern decides "
            "which tokens can exist at all: GPT-2's keeps a space with the word after it and splits `'s` off; "
            "GPT-4o's keeps `'s` on its word. Type below and watch the three patterns cut your text."
        ),
        example=example,
        try_it=base.TryIt(
            page="insights",
            what="Opens the pre-tokenizer playground of Insights on your text: a BPE with GPT-2's pattern "
            "against one with GPT-4's (cl100k) pattern, which you can edit.",
            settings=lambda state: {
                sk.ALGORITHM: "bpe",
                sk.PATTERN: "gpt2",
                sk.INS_TAB: VIEWS["pretok"],
                sk.INS_PATTERN_BASE: "cl100k",
                sk.INS_PATTERN_TEXT: PATTERNS["cl100k"],
            },
        ),
    )
)
