"""Lesson ``naive-vs-fast``: the textbook trainer (recount every pair at every merge) against the incremental one."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from bpe_core import train_bpe
from bpe_core.pretokenize import pretoken_prefix
from bpe_core.textbook import train_merges
from ui import state_keys as sk
from ui.lessons import base

SLUG = "naive-vs-fast"

MERGES = 100
"""Merges each trainer learns."""

FRACTIONS = (1 / 8, 1 / 4, 1 / 2, 1)
"""The shares of the learner's text (up to :data:`MAX_CHARS`) each run trains on, cut at a pre-token boundary."""

MAX_CHARS = 16_000
"""At most this many characters of the learner's text are trained on (the textbook trainer is slow on purpose)."""


REPEATS = 2
"""Each training is timed this many times and the shortest counts (the machine is shared: the others wait more)."""


def timed(run, *args):
    """``(run(*args)'s result, its shortest wall time in seconds over :data:`REPEATS` runs)``."""
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = run(*args)
        best = min(best, time.perf_counter() - t0)
    return out, best


@st.cache_data(max_entries=8, show_spinner=False)
def measure(text: str, pattern: str, specials: tuple[str, ...]) -> list[dict[str, object]]:
    """Train both ways on growing prefixes of ``text``; each row: size, merges learned, both times, same merges.

    Cached per text and settings: the times are measured once (on a shared machine they vary from run to run).
    """
    rows = []
    seen = set()
    vocab = 256 + len(specials) + MERGES
    train_bpe("warm up the trainer", 258, list(specials), pattern)  # the first call's set-up is not the algorithm's
    whole = pretoken_prefix(text, MAX_CHARS, pattern, specials)
    for share in FRACTIONS:
        part = pretoken_prefix(whole, max(1, round(len(whole) * share)), pattern, specials)
        if not part or part in seen:
            continue
        seen.add(part)
        naive, naive_s = timed(train_merges, part, vocab, pattern, specials)
        fast, fast_s = timed(train_bpe, part, vocab, list(specials), pattern)
        rows.append({
            "Characters": len(part),
            "Merges learned": len(naive),
            "Textbook (s)": naive_s,
            "Incremental (s)": fast_s,
            "Same merges": [(m.left, m.right) for m in naive] == list(fast.merges),
        })  # fmt: skip
    return rows


def example(settings) -> None:
    """Both trainers on growing prefixes of the learner's text: the times, the speed-up, and that the merges agree."""
    if settings.problem:
        base.note(settings.problem)
        return
    spec = settings.spec
    with st.spinner("Training both ways…"):
        rows = measure(settings.text, spec.pattern, tuple(spec.special_tokens))
    if not rows:
        base.note("The text is too short to train on.")
        return
    last = rows[-1]
    speedup = last["Textbook (s)"] / max(last["Incremental (s)"], 1e-9)
    same = "yes" if all(r["Same merges"] for r in rows) else "NO"
    size = f"{last['Characters']:,} characters of {settings.text_label}"
    base.facts(
        [
            ("Same merges, every size", same, f"{MERGES} merges each"),
            ("Textbook", f"{last['Textbook (s)']:.3f} s", size),
            ("Incremental", f"{last['Incremental (s)']:.3f} s", f"{speedup:.0f}× faster"),
        ]
    )
    table = pd.DataFrame(
        [
            {
                "Characters": f"{r['Characters']:,}",
                "Merges": r["Merges learned"],
                "Textbook": f"{r['Textbook (s)']:.3f} s",
                "Incremental": f"{r['Incremental (s)']:.3f} s",
                "Speed-up": f"{r['Textbook (s)'] / max(r['Incremental (s)'], 1e-9):.0f}×",
                "Same merges": "yes" if r["Same merges"] else "no",
            }
            for r in rows
        ]
    ).set_index("Characters")
    st.table(table)
    base.note(
        "Times are measured once, on this server, when the lesson first opens for a text; "
        "the textbook's grow with the text times the merges, the incremental trainer's far more slowly."
    )


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Naive and fast training",
        text=(
            "The textbook trainer recounts every pair of every word at every merge: easy to check, slow. The "
            "incremental trainer counts once, then after each merge updates only the counts around the places it "
            "changed, with an index from each pair to the words that hold it and a priority queue for the best "
            "pair. Both must learn exactly the same merges; the table trains both on more and more of your text."
        ),
        example=example,
        try_it=base.TryIt(
            page="playground",
            what="Opens the Playground with a byte-level BPE trained on all of your text by the fast trainer; "
            "“How this tokenizer was trained” there gives its time.",
            settings=lambda state: {sk.ALGORITHM: "bpe"},
        ),
    )
)
