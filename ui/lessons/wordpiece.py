"""Lesson ``wordpiece``: the course's WordPiece at 70, its score, and greedy longest-match encoding."""

from __future__ import annotations

from functools import cache

import pandas as pd
import streamlit as st

from bpe_core import WordPieceTokenizer, train_wordpiece
from ui import state_keys as sk
from ui.lessons import base, course
from ui.merges.card import card_html
from ui.merges.history import WordPieceMergeHistory

SLUG = "wordpiece"

VOCAB_SIZE = 70
"""The course's WordPiece vocabulary size."""

FIRST_MERGES = 6
"""The score table lists this many merges."""

WORDS = ("Hugging", "H0gging")
"""The course's two encoding examples."""


@cache
def course_wordpiece() -> WordPieceTokenizer:
    """WordPiece trained on the course's corpus to 70 tokens (the project's trainer; the course's tie rule)."""
    return train_wordpiece(course.TEXT, VOCAB_SIZE)


def pieces(tok: WordPieceTokenizer, word: str) -> list[str]:
    """The vocabulary strings ``tok`` encodes ``word`` to (``##`` pieces, ``[UNK]``)."""
    return [tok.vocab[i] for i in tok.encode(word)]


def outside(tok: WordPieceTokenizer, word: str) -> list[str]:
    """The characters of ``word`` the vocabulary has no piece for (first as itself, later ones as ``##c``)."""
    known = set(tok.vocab.values())
    return [c for k, c in enumerate(word) if (c if k == 0 else "##" + c) not in known]


def score_table(tok: WordPieceTokenizer, n: int = FIRST_MERGES) -> pd.DataFrame:
    """The first ``n`` merges: the pair, the three frequencies and the score, exact and in decimals."""
    rows = [
        {
            "Merge": f"#{s.rank + 1}",
            "Pair": f"{s.left} + {s.right} → {s.merged}",
            "freq(pair)": s.pair_freq,
            "freq(first)": s.left_freq,
            "freq(second)": s.right_freq,
            "Score": f"{s.pair_freq}/({s.left_freq}×{s.right_freq}) = {s.score:.3g}",
        }
        for s in tok.trace[:n]
    ]
    return pd.DataFrame(rows).set_index("Merge")


def example(_settings) -> None:
    """The course's figures, the first merges' scores, merge #1's card, the vocabulary, and a word to encode."""
    tok = course_wordpiece()
    first = tok.trace[0]
    hugging, unknown = WORDS
    base.facts(
        [
            (
                "Vocabulary",
                f"{tok.vocab_size}",
                f"5 special + {tok.min_vocab_size - 5} characters + {len(tok.trace)} merges",
            ),
            ("First merge", f"{first.left} + {first.right} → {first.merged}", f"score {first.score:g}"),
            (hugging, " ".join(pieces(tok, hugging)), "longest match first"),
            (
                unknown,
                " ".join(pieces(tok, unknown)),
                f"{' '.join(outside(tok, unknown)) or 'none'}: not in the alphabet",
            ),
        ]
    )
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.table(score_table(tok))
    with right:
        st.html(card_html(WordPieceMergeHistory(tok, course.TEXT).card(1)))
    base.chips([(t, str(i)) for i, t in sorted(tok.vocab.items())], "Vocabulary in order")
    word = base.input_box(SLUG, hugging, help="A word to encode with the course's vocabulary.")
    if word:
        base.chips([(p, None) for p in pieces(tok, word)], f"{word[:40]} →")


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="WordPiece: the course's example",
        text=(
            "WordPiece (BERT's tokenizer) also merges pairs, but it ranks a pair by "
            "**score = freq(pair) / (freq(first) × freq(second))**: a pair whose parts are rare on their own wins "
            "over a frequent pair of common parts. The course trains it on four sentences to 70 tokens; pieces inside "
            "a word carry `##`. Encoding takes the longest vocabulary entry from the start of the word, again and "
            "again; a word it cannot spell becomes `[UNK]`."
        ),
        example=example,
        try_it=base.TryIt(
            page="merges",
            what="Opens the Merges page on your text with WordPiece, at its first merge.",
            settings=lambda state: {sk.ALGORITHM: "wordpiece", sk.MERGE_STEP: 1, sk.PENDING_STEP: 1},
        ),
    )
)
