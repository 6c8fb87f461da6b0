"""The Hugging Face course's worked examples (NLP course, chapter 6): its corpus and toy word counts.

These are the lessons' inputs, not their outputs: every merge, vocabulary, score and
probability the lessons show is computed from them by the engine.
"""

from __future__ import annotations

from functools import cache

from bpe_core.formats.huggingface import byte_to_unicode
from bpe_core.textbook import BPE
from bpe_core.textbook.bpe import count_words

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

VOCAB_SIZE = 50
"""The course's BPE vocabulary size: the special token, the corpus's characters and the merges."""

SENTENCE = "This is not a token."
"""The sentence the course tokenizes with its BPE."""


def glyphs(data: bytes) -> str:
    """Bytes as GPT-2's byte-level pre-tokenizer prints them: each byte one printable character (a space is ``Ġ``)."""
    table = byte_to_unicode()
    return "".join(table[b] for b in data)


def alphabet(text: str = BPE_TEXT) -> list[str]:
    """The characters (as :func:`glyphs`) the corpus's pre-tokens use, sorted: the course's initial alphabet."""
    used = {b for word in count_words(text, "gpt2", [ENDOFTEXT]) for token in word for b in token}
    return sorted(glyphs(bytes([b])) for b in used)


@cache
def course_bpe(tie: str = "first", text: str = BPE_TEXT) -> BPE:
    """The textbook's byte-level BPE on the corpus with the course's budget of :data:`VOCAB_SIZE`.

    The budget counts the special token, the alphabet and the merges; ``tie="first"`` is the course's
    rule (the pair met first), ``"lexicographic"`` this project's (the greatest pair).
    """
    n_merges = VOCAB_SIZE - 1 - len(alphabet(text))
    return BPE.train(text, 256 + 1 + n_merges, special_tokens=[ENDOFTEXT], tie=tie)


def course_vocab(tok: BPE, text: str = BPE_TEXT) -> list[str]:
    """The vocabulary as the course prints it: the special token, the alphabet, then each merge's token."""
    return [ENDOFTEXT, *alphabet(text), *(glyphs(a + b) for a, b in tok.merges)]


def tokenized(tok: BPE, text: str) -> list[str]:
    """``text``'s tokens under ``tok``, as the course prints them (:func:`glyphs`)."""
    return [glyphs(tok.vocab[i]) for i in tok.encode(text)]
