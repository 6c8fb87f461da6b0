"""The Hugging Face course's worked examples (NLP course, chapter 6): its corpus and toy word counts.

These are the lessons' inputs, not their outputs: every merge, vocabulary, score and
probability the lessons show is computed from them by the engine.
"""

from __future__ import annotations

CORPUS: tuple[str, ...] = (
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
)
"""The course's four-sentence corpus (the BPE, WordPiece and Unigram sections train on it)."""

TEXT = "\n".join(CORPUS)
"""The corpus as one text, a sentence per line (WordPiece's pre-tokenizer splits on the newlines)."""

ENDOFTEXT = "<|endoftext|>"
"""GPT-2's special token: the course's BPE starts its vocabulary with it."""

BPE_TEXT = ENDOFTEXT.join(CORPUS)
"""The corpus for byte-level BPE: the sentences cut apart by the special token, so each is pre-tokenized on its own
and the first word of each has no space before it (as the course pre-tokenizes each sentence apart)."""

TOY_WORDS: tuple[tuple[str, int], ...] = (("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5))
"""The course's toy corpus: each word and how often it occurs (the BPE and Unigram sections' example)."""
