"""Lesson ``unigram``: the course's toy corpus: seed vocabulary, segmentation probabilities, Viterbi, loss, pruning."""

from __future__ import annotations

import math
from functools import cache

import pandas as pd
import streamlit as st

from bpe_core.textbook import unigram_training as ut
from bpe_core.textbook.unigram import segmentations, viterbi
from bpe_core.unigram import UnigramTokenizer
from ui import state_keys as sk
from ui.lattice_view import lattices_html
from ui.lessons import base, course

SLUG = "unigram"

WORDS = dict(course.TOY_WORDS)

SHOWN_SEGMENTATIONS = 3


@cache
def seed() -> dict[str, int]:
    """The course's initial vocabulary: every strict substring of the words, with its count."""
    return ut.initial_vocabulary(WORDS, strict=True)


@cache
def scores() -> dict[str, float]:
    """``log(count / total)`` of every piece of :func:`seed`."""
    return ut.scores_from_counts(seed())


@cache
def lattice_tokenizer() -> UnigramTokenizer:
    """The seed vocabulary as a Unigram tokenizer that does not pre-tokenize (for the lattice view of a word)."""
    return UnigramTokenizer.from_pieces(list(scores().items()), pattern="none", name="Course seed vocabulary")


def probability(score: float) -> str:
    """A log-probability as the course prints probabilities (six decimals)."""
    return f"{math.exp(score):.6f}"


def segmentation_table() -> pd.DataFrame:
    """Each word: its count, its best segmentations with their probabilities (ties shown), the runner-up."""
    rows = []
    for word, n in WORDS.items():
        segs = segmentations(word, scores())
        best = segs[0][1]
        rows.append({
            "Word": word,
            "Count": n,
            "Best (equal probability)": "  |  ".join(" ".join(p) for p, s in segs if s == best),
            "P(best)": probability(best),
            "Next": " ".join(next((p for p, s in segs if s < best), [])),
            "All": len(segs),
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("Word")


def removal_table() -> pd.DataFrame:
    """What removing each piece of two or more characters costs (the course: re-encode without it), cheapest first."""
    full = ut.loss(WORDS, scores())
    rows = [
        {"Piece": p, "Loss without it": f"{full + cost:.1f}", "Cost": f"{cost:.1f}"}
        for p, cost in sorted(
            ((p, ut.loss_without(WORDS, scores(), p)) for p in scores() if len(p) > 1), key=lambda pc: (pc[1], pc[0])
        )
    ]
    return pd.DataFrame(rows).set_index("Piece")


def viterbi_table(word: str) -> pd.DataFrame:
    """For each position of ``word``, the best segmentation of the characters up to it and its probability."""
    rows = []
    for end in range(1, len(word) + 1):
        pieces, score = viterbi(word[:end], scores())
        rows.append({
            "Character": f"{end - 1} ({word[end - 1]})",
            "Best segmentation ending here": " ".join(p if p is not None else "<unk>" for _s, _e, p in pieces),
            "Probability": probability(score),
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("Character")


def example(_settings) -> None:
    """The seed vocabulary, the words' segmentations, Viterbi on a typed word, the loss and the cheapest removals."""
    total = sum(seed().values())
    full = ut.loss(WORDS, scores())
    removal = removal_table()
    unhug = [p for _s, _e, p in viterbi("unhug", scores())[0]]
    hug = " ".join(p for _s, _e, p in viterbi("hug", scores())[0])
    base.facts(
        [
            ("Initial vocabulary", f"{len(seed())} pieces", f"counts sum to {total}"),
            ("Viterbi", f"hug → {hug} · unhug → {' '.join(unhug)}", ""),
            ("Loss", f"{full:.1f}", "−Σ count × log P(best segmentation)"),
            ("Removing hug costs", removal.loc["hug", "Cost"], f"removing pu costs {removal.loc['pu', 'Cost']}"),
        ]
    )
    base.chips([(p, f"{n}/{total}") for p, n in seed().items()], "Pieces and P = count/total")
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.table(segmentation_table())
    with right:
        st.table(removal)
    base.note(
        "The course prints 0.000389 for p u g and 0.0022676 for pu g: it took P(p) and P(pu) as 5/210, the count of "
        "the word pug, instead of 17/210; its loss section uses 17 and prints 0.007710, as here."
    )
    word = base.input_box(SLUG, "unhug", help="A word made of the pieces' letters: its lattice follows your typing.")
    word = word.strip()
    if word:
        st.table(viterbi_table(word))
        st.html(lattices_html(lattice_tokenizer().encode_steps(word)))


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Unigram: the course's example",
        text=(
            "Unigram works the other way round from BPE: it starts from a big vocabulary and removes pieces. Each "
            "piece has a probability (its count over the total), a segmentation's probability is the product of its "
            "pieces', and a word is cut the most probable way, found by the Viterbi algorithm. Training removes the "
            "pieces whose loss grows least without them. The course's corpus: hug 10, pug 5, pun 12, bun 4, hugs 5."
        ),
        example=example,
        try_it=base.TryIt(
            page="encode",
            what="Opens Encode step by step with a Unigram trained on your text: the lattice of the word you typed.",
            settings=lambda state: {
                sk.ALGORITHM: "unigram",
                sk.PATTERN: "sentencepiece",
                sk.ENCODE_WORD: (state.get(sk.lesson_key(SLUG, "text")) or "unhug").strip()[:100] or "unhug",
                sk.ENCODE_TOKENIZERS: ["trained"],
            },
        ),
    )
)
