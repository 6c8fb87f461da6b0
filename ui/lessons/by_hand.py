"""Lesson ``bpe-by-hand``: Wikipedia's ``aaabdaaabac`` merged by hand, then trained on bytes as minbpe does."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pandas as pd
import streamlit as st

from bpe_core import BPETokenizer, train_bpe
from bpe_core.textbook import BPE
from bpe_core.textbook.bpe import count_pairs, count_words, merge_word, training_steps
from ui import state_keys as sk
from ui.lessons import base
from ui.merges.card import card_html
from ui.merges.history import BPEMergeHistory

SLUG = "bpe-by-hand"

TEXT = "aaabdaaabac"
"""Wikipedia's example string (and minbpe's)."""

HAND = ((b"a", b"a"), (b"a", b"b"), (b"aa", b"ab"))
"""The three merges Wikipedia makes by hand, in its order (at the second it picks ``ab`` among two pairs of count 2)."""

SYMBOLS = {b"aa": "Z", b"ab": "Y", b"aaab": "X"}
"""The letters Wikipedia names the new symbols by."""

MERGES = 3


@dataclass(frozen=True)
class Step:
    """One step of a replay: the text before the merge, the pair counts, the pair merged and the pairs it tied."""

    text: str
    counts: dict[tuple[bytes, bytes], int]
    merged: tuple[bytes, bytes] | None
    tied: tuple[tuple[bytes, bytes], ...]


def symbol(token: bytes) -> str:
    """A token in Wikipedia's notation: a new symbol's letter, or the byte's character."""
    return SYMBOLS.get(token, token.decode("utf-8", "replace"))


def spelled(word: tuple[bytes, ...], name=symbol) -> str:
    """A word's tokens in Wikipedia's notation, run together."""
    return "".join(name(t) for t in word)


def replay(text: str, merges) -> list[Step]:
    """The text (one word: no pre-tokenization) through ``merges``, with the pair counts before each merge.

    The counts are the textbook's (:func:`bpe_core.textbook.bpe.count_pairs`, overlapping pairs all counted);
    ``tied`` lists the other pairs whose count equals the merged pair's.
    """
    words = count_words(text, None)
    steps = []
    for pair in merges:
        (word,) = words
        counts = count_pairs(words)
        tied = tuple(p for p, n in counts.items() if p != pair and n == counts[pair])
        steps.append(Step(spelled(word), counts, pair, tied))
        words = {merge_word(w, pair): n for w, n in words.items()}
    (word,) = words
    steps.append(Step(spelled(word), count_pairs(words), None, ()))
    return steps


def counts_text(counts: dict, name=symbol) -> str:
    """Pair counts in the order first met: ``aa 4 · ab 2 · ...``."""
    return " · ".join(f"{name(a)}{name(b)} {n}" for (a, b), n in counts.items())


def hand_table(steps: list[Step]) -> pd.DataFrame:
    """Wikipedia's steps: the text, every pair's count, the pair merged and what it tied with."""
    rows = []
    for k, s in enumerate(steps):
        if s.merged is None:
            stop = "stop: no pair occurs twice" if max(s.counts.values(), default=0) < 2 else ""
            rows.append({"Step": k, "Text": s.text, "Pair counts": counts_text(s.counts), "Merged": stop})
            continue
        a, b = s.merged
        tie = f" (tied with {', '.join(symbol(x) + symbol(y) for x, y in s.tied)})" if s.tied else ""
        rows.append({"Step": k, "Text": s.text, "Pair counts": counts_text(s.counts),
                     "Merged": f"{symbol(a)}{symbol(b)} → {symbol(a + b)}{tie}"})  # fmt: skip
    return pd.DataFrame(rows).set_index("Step")


@cache
def byte_level(text: str, tie: str) -> BPE:
    """The textbook's byte-level BPE on ``text`` as one raw string (no pre-tokenization), :data:`MERGES` merges."""
    return BPE.train(text, 256 + MERGES, pattern=None, tie=tie)


@cache
def fast(text: str) -> BPETokenizer:
    """The app's trainer on the same raw string (pattern ``none``: a line is one pre-token), for the merge cards."""
    return train_bpe(text, 256 + MERGES, pattern="none")


def byte_table(text: str, tie: str) -> pd.DataFrame:
    """The textbook's training steps on ``text``: the ids before each merge, the top pair counts, the pair merged."""
    tok = byte_level(text, tie)

    def shown(t: bytes) -> str:
        return tok.describe_token(tok.id_of[t])

    words = count_words(text, None)
    rows = []
    for step in training_steps(words, MERGES, tie):
        (word,) = words
        top = max(step.pair_counts.values())
        tied = [p for p, n in step.pair_counts.items() if n == top]
        rows.append({
            "Merge": f"#{step.rank + 1}",
            "Ids before": " ".join(str(tok.id_of[t]) for t in word),
            "Most frequent pairs": " · ".join(f"{shown(a)}+{shown(b)} {top}" for a, b in tied),
            "Merged": f"{shown(step.merge.left)} + {shown(step.merge.right)} → id {256 + step.rank}",
        })  # fmt: skip
        words = step.words
    return pd.DataFrame(rows).set_index("Merge")


def pair_symbols(pair: tuple[bytes, bytes]) -> str:
    """A pair in Wikipedia's notation (``Za``)."""
    return symbol(pair[0]) + symbol(pair[1])


def example(_settings) -> None:
    """Wikipedia's steps by hand, minbpe's ids, the byte-level steps and their merge cards, and a box to try."""
    steps = replay(TEXT, HAND)
    first, lex = byte_level(TEXT, "first"), byte_level(TEXT, "lexicographic")
    ids = first.encode(TEXT)
    tie = steps[1]
    base.facts(
        [
            ("By hand (Wikipedia)", " → ".join(s.text for s in steps), f"{MERGES} merges: Z = aa, Y = ab, X = ZY"),
            (
                "On bytes (minbpe)",
                " ".join(map(str, ids)),
                f"ids {', '.join(str(256 + k) for k in range(MERGES))}: the merges",
            ),
            (
                "The tie at step 2",
                " = ".join(f"{pair_symbols(p)} {tie.counts[p]}" for p in (*tie.tied, tie.merged)),
                f"Wikipedia takes {pair_symbols(tie.merged)}; first met: {pair_symbols(first.merges[1])}, "
                f"lexicographic: {pair_symbols(lex.merges[1])}",
            ),
        ]
    )
    st.table(hand_table(steps))
    final = tuple(first.vocab[i] for i in ids)
    same_end = spelled(final) == steps[-1].text
    base.note(
        f"On bytes the second merge is {pair_symbols(first.merges[1])}, not Wikipedia's {pair_symbols(tie.merged)}: "
        "the pair met first and the greater pair agree here. "
        + (f"Both still end in {steps[-1].text}, X = {final[0].decode()} = id {ids[0]}." if same_end else "")
    )
    history = BPEMergeHistory(fast(TEXT), TEXT)
    for col, k in zip(st.columns(MERGES, gap="small"), range(1, MERGES + 1)):
        col.html(card_html(history.card(k)))
    text = base.input_box(SLUG, TEXT, help="Any string: the byte-level steps below follow your typing.")
    if len(text.encode("utf-8")) >= 2:
        st.table(byte_table(text, "first"))


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="BPE by hand",
        text=(
            "Byte-pair encoding began as compression: find the pair of neighbours that occurs most often, give it a "
            "new symbol, repeat. Wikipedia does it by hand on `aaabdaaabac`, naming the new symbols Z, Y and X; at "
            "its second step two pairs are equally frequent, a **tie** that some rule has to break. A tokenizer does "
            "the same on bytes: ids 0-255 are the bytes, and each merge gets the next id."
        ),
        example=example,
        try_it=base.TryIt(
            page="merges",
            what="Opens the Merges page on your text with a byte-level BPE that does not pre-tokenize "
            "(one pre-token per line), at its first merge.",
            settings=lambda state: {sk.ALGORITHM: "bpe", sk.PATTERN: "none", sk.MERGE_STEP: 1, sk.PENDING_STEP: 1},
        ),
    )
)
