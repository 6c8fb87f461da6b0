"""The lessons built on the textbook, in AppTest, against their sources: Wikipedia and minbpe (bpe-by-hand), the
course's printed merges, vocabulary and tokenization (course-bpe, tie-breaking), the course's Unigram numbers
(unigram), and the merges of both trainers (naive-vs-fast), the textbook oracle's longest token (vocabulary).

The course's training loop is re-run here with Hugging Face ``tokenizers``' GPT-2 pre-tokenizer
(:func:`tests.learn_sources.course_bpe`); it reproduces the seed's printed merges, which pins it down.
"""

from __future__ import annotations

import math

import pytest

from bpe_core.textbook import train_merges
from tests import learn_sources as src
from tests.app.learn_helpers import chip_row, chip_rows, fact, open_lesson, page_text
from tests.conftest import sample
from ui import state_keys as sk


def test_the_course_loop_here_reproduces_the_seed():
    merges = src.course_bpe(src.COURSE_CORPUS)
    if src.seed_bpe_merges() is not None:
        assert merges == src.seed_bpe_merges()
    assert merges[0] == ("Ġ", "t") and merges[-1] == ("Ġtoken", "i")  # the issue: ('Ġ', 't') first ... ('Ġtoken', 'i')
    assert src.minbpe_train("aaabdaaabac", 3) == src.MINBPE_IDS


def test_bpe_by_hand_lesson():
    at = open_lesson("bpe-by-hand")
    assert fact(at, "By hand (Wikipedia)")[0] == " → ".join(src.WIKIPEDIA_STEPS)
    assert fact(at, "On bytes (minbpe)")[0] == " ".join(map(str, src.MINBPE_IDS))
    tie, detail = fact(at, "The tie at step 2")
    assert tie == "Za 2 = ab 2"  # ZabdZabac: Za at 0 and 4, ab at 1 and 5
    assert "Wikipedia takes ab" in detail and "first met: Za" in detail and "lexicographic: Za" in detail
    steps = at.table[0].value
    assert list(steps["Text"]) == src.WIKIPEDIA_STEPS
    assert steps["Pair counts"].iloc[0].startswith("aa 4 · ab 2")  # aaa holds aa twice (overlapping), twice over
    assert steps["Merged"].iloc[1] == "ab → Y (tied with Za)"
    text = page_text(at)
    assert "Merge #3" in text and "aaab" in text  # the third merge's card
    # the box: a typed string's byte-level steps, minbpe's way
    typed = "abababcab"
    at.text_area(key=sk.lesson_key("bpe-by-hand", "text")).set_value(typed).run()
    byte_steps = at.table[1].value
    assert list(byte_steps["Ids before"]) == [" ".join(map(str, src.minbpe_train(typed, k))) for k in range(3)]


def test_course_bpe_lesson():
    at = open_lesson("course-bpe")
    merges = src.course_bpe(src.COURSE_CORPUS)
    rows = dict(chip_rows(at))
    shown = rows["The course's merges (first pair met)"]
    assert [t for t, _ in shown] == [a + b for a, b in merges]
    assert [s.split(" · ")[0] for _, s in shown] == [f"{a} + {b}" for a, b in merges]
    vocab = src.seed_bpe_vocab()
    if vocab is not None:
        assert chip_row(at, "Vocabulary in order") == vocab
    assert len(chip_row(at, "Vocabulary in order")) == 50
    tokens, _count = fact(at, "“This is not a token.”")
    assert tokens.split(" ") == src.COURSE_TOKENIZED != src.SEED_TOKENIZED
    assert src.COURSE_TOKENIZED[:-1] == src.SEED_TOKENIZED[:-1]  # the slide garbles only the last token
    assert "Ġ.Ġ" in page_text(at)  # ... and the page says so
    ours = src.course_bpe(src.COURSE_CORPUS, rule="lexicographic")
    assert [t for t, _ in rows["This project's rule (greatest pair)"]] == [a + b for a, b in ours]
    assert fact(at, "First merge")[0] == "Ġ + t" and fact(at, "Last merge")[0] == "Ġtoken + i"


def test_tie_breaking_lesson():
    at = open_lesson("tie-breaking")
    first, ours = src.course_bpe(src.COURSE_CORPUS), src.course_bpe(src.COURSE_CORPUS, rule="lexicographic")
    k = next(i for i, (a, b) in enumerate(zip(first, ours)) if a != b)
    value, detail = fact(at, "First disagreement")
    assert value == f"merge #{k + 1}" and detail == f"{' + '.join(first[k])} vs {' + '.join(ours[k])}"
    shared = sum(m in first for m in ours)
    assert fact(at, "Merges in common")[0] == f"{shared} of {len(first)}"
    assert chip_row(at, "First pair met") == [a + b for a, b in first]
    assert chip_row(at, "Greatest pair") == [a + b for a, b in ours]
    table = at.table[0].value
    row = table.loc[f"#{k + 1}"]
    assert row["First met takes"] == " + ".join(first[k]) and row["Greatest takes"] == " + ".join(ours[k])
    assert row["Same?"] == "no"
    # the box: another corpus, recomputed as typed; "ab" (met first) and "cd" (greater) tie at 2
    corpus = ["ab ab cd cd", "abcd"]
    at.text_area(key=sk.lesson_key("tie-breaking", "text")).set_value("\n".join(corpus)).run()
    assert chip_row(at, "First pair met") == [a + b for a, b in src.course_bpe(corpus)]
    assert chip_row(at, "Greatest pair") == [a + b for a, b in src.course_bpe(corpus, rule="lexicographic")]
    assert chip_row(at, "First pair met")[0] == "ab" and chip_row(at, "Greatest pair")[0] == "cd"


def test_unigram_lesson():
    at = open_lesson("unigram")
    total = sum(src.UNIGRAM_SEED.values())
    assert fact(at, "Initial vocabulary") == (f"{len(src.UNIGRAM_SEED)} pieces", f"counts sum to {total}")
    assert dict((p, int(n.split("/")[0])) for p, n in chip_rows(at)[0][1]) == src.UNIGRAM_SEED
    assert fact(at, "Loss")[0] == f"{src.UNIGRAM_LOSS}"
    assert fact(at, "Removing hug costs") == (f"{src.UNIGRAM_HUG_COST}", "removing pu costs 0.0")
    assert fact(at, "Viterbi")[0] == "hug → hug · unhug → un hug"
    segs = at.table[0].value
    for word, p in src.UNIGRAM_BEST.items():
        assert float(segs.loc[word, "P(best)"]) == pytest.approx(p, abs=1.5e-6), word
    assert "pu g" in segs.loc["pug", "Best (equal probability)"]  # the course's choice is among the best
    viterbi = at.table[2].value
    assert list(viterbi["Best segmentation ending here"]) == [s for s, _ in src.UNIGRAM_UNHUG]
    for got, (_s, p) in zip(viterbi["Probability"], src.UNIGRAM_UNHUG):
        assert float(got) == pytest.approx(p, abs=1.5e-6)
    # the course's misprint: its pug figures are 5/210 where P(p) = P(pu) = 17/210
    assert math.isclose(5 * 36 * 20 / 210**3, src.UNIGRAM_COURSE_PUG["p u g"], abs_tol=1e-6)
    assert math.isclose(5 * 20 / 210**2, src.UNIGRAM_COURSE_PUG["pu g"], abs_tol=1e-7)
    assert "0.000389" in page_text(at) and "17/210" in page_text(at)
    assert math.isclose(src.UNIGRAM_BEST["pug"], 17 * 20 / 210**2, abs_tol=1e-6)


def test_naive_vs_fast_lesson():
    at = open_lesson("naive-vs-fast")
    assert fact(at, "Same merges, every size")[0] == "yes"
    table = at.table[0].value
    assert len(table) == 4 and set(table["Same merges"]) == {"yes"}
    sizes = [int(s.replace(",", "")) for s in table.index]
    assert sizes == sorted(sizes) and sizes[-1] == len(sample("english"))


def test_vocabulary_lesson_shows_the_oracles_longest_token():
    at = open_lesson("vocabulary")
    text = sample("english")  # the sidebar's default: English prose, BPE 1,000, GPT-2's pattern, <|endoftext|>
    merges = train_merges(text, 1000, "gpt2", ["<|endoftext|>"])
    longest = max((m.left + m.right for m in merges), key=len)
    value, detail = fact(at, "Longest learned token")
    assert value == longest.decode().replace(" ", "·") and detail.startswith(f"{len(longest)} bytes")
