"""Lesson ``tie-breaking``: equal counts, two rules (the greatest pair, the pair met first), different merges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from bpe_core import TrainingReplay
from bpe_core.textbook.bpe import best_pair, count_words, training_steps
from ui import state_keys as sk
from ui import training
from ui.lessons import base, course

SLUG = "tie-breaking"

RULES = {"first": "First pair met (the course, minbpe)", "lexicographic": "Greatest pair (CS336, this project)"}
"""The two tie rules of :mod:`bpe_core.textbook.bpe`, as the lesson names them."""

TIE_SCAN = 300
"""Try it looks for the learner's first tie among this many merges."""


def corpus(box: str) -> str:
    """The box's lines as documents joined by the special token, as the course pre-tokenizes each sentence apart."""
    return course.ENDOFTEXT.join(line for line in box.splitlines() if line.strip())


def pair_text(pair: tuple[bytes, bytes]) -> str:
    """A pair as the course prints its tokens: ``Ġt + o``."""
    return f"{course.glyphs(pair[0])} + {course.glyphs(pair[1])}"


def ties_table(text: str, n_merges: int) -> pd.DataFrame:
    """Every step of the course's training (first pair met) where several pairs share the top count.

    Each row: the count, the tied pairs in the order they are met, and what each rule takes there.
    """
    words = count_words(text, "gpt2", [course.ENDOFTEXT])
    rows = []
    for step in training_steps(words, n_merges, "first"):
        top = max(step.pair_counts.values())
        tied = [p for p, n in step.pair_counts.items() if n == top]
        if len(tied) < 2:
            continue
        first, greatest = best_pair(step.pair_counts, "first"), best_pair(step.pair_counts, "lexicographic")
        rows.append({
            "Merge": f"#{step.rank + 1}",
            "Count": top,
            "Pairs with that count": " · ".join(pair_text(p) for p in tied),
            "First met takes": pair_text(first),
            "Greatest takes": pair_text(greatest),
            "Same?": "yes" if first == greatest else "no",
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("Merge") if rows else pd.DataFrame()


def example(_settings) -> None:
    """The ties met while training the typed corpus the course's way, and both rules' merges side by side."""
    box = base.input_box(SLUG, course.TEXT, help="One document per line: the tables below follow your typing.")
    text = corpus(box)
    if not text:
        return
    try:
        first, greatest = course.course_bpe("first", text), course.course_bpe("lexicographic", text)
    except ValueError as exc:
        base.note(str(exc))
        return
    differ = next((k for k, (a, b) in enumerate(zip(first.merges, greatest.merges)) if a != b), None)
    shared = sum(m in first.merges for m in greatest.merges)
    table = ties_table(text, len(first.merges))
    base.facts(
        [
            ("Steps decided by a tie", f"{len(table)} of {len(first.merges)}", "several pairs had the top count"),
            (
                "First disagreement",
                "none" if differ is None else f"merge #{differ + 1}",
                "" if differ is None else f"{pair_text(first.merges[differ])} vs {pair_text(greatest.merges[differ])}",
            ),
            ("Merges in common", f"{shared} of {len(first.merges)}", "the rest differ because a tie went otherwise"),
        ]
    )
    if len(table):
        st.table(table)
    for tok, other, rule in ((first, greatest, "first"), (greatest, first, "lexicographic")):
        base.chips(
            [(course.glyphs(a + b), pair_text((a, b))) for a, b in tok.merges],
            RULES[rule],
            marks=["" if m in other.merges else "hl" for m in tok.merges],
        )


def first_tie_step(state: Mapping[str, Any]) -> int:
    """The first merge of the learner's BPE that a tie decided (1-based; 1 when none is found or it would take long).

    Scans at most :data:`TIE_SCAN` merges, and only a tokenizer the session has already trained.
    """
    settings = state.get(sk.SETTINGS)
    if settings is None or settings.problem:
        return 1
    tok = training.cached(training.settings_key(settings))
    if tok is None or tok.training is None or len(settings.text) > 200_000:
        return 1
    try:
        replay = TrainingReplay.from_text(tok, settings.text)
    except (TypeError, ValueError):  # not a byte-level BPE (the replay is BPE's): the first merge
        return 1
    for k in range(min(TIE_SCAN, replay.n_merges)):
        if replay.candidates(k, top=2).tied > 1:
            return k + 1
    return 1


def try_settings(step: int) -> dict[str, Any]:
    """BPE, and the Merges page at ``step``."""
    return {sk.ALGORITHM: "bpe", sk.MERGE_STEP: step, sk.PENDING_STEP: step}


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Breaking ties",
        text=(
            "When two pairs are equally frequent, the trainer needs a rule, and the rule changes what it learns. "
            "Stanford's CS336 and this project take the **greatest** pair, comparing the two tokens' bytes; the "
            "course and minbpe take the pair **met first** when reading the words in order. On small corpora ties "
            "are everywhere, and one tie decided otherwise changes every merge after it, and with them the ids."
        ),
        example=example,
        try_it=base.TryIt(
            page="merges",
            what="Opens the Merges page on your text at its first merge a tie decided (when the Playground has "
            "trained it); “Why this pair” there names the pairs that tied.",
            settings=lambda state: try_settings(first_tie_step(state)),
        ),
    )
)
