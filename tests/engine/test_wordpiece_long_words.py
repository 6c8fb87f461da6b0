"""WordPiece training on long words (the linked-list path of the merge loop) is exact.

Words of more than 256 characters are trained on as linked lists of positions
with a pair -> positions index, so a merge touches only the pair's occurrences.
The oracle is the course-style trainer ``bpe_core.textbook.wordpiece.train``
(recounts every pair and token of every word at each step, scores with
``Fraction``, ties to the pair met first); every merge, its counts and the
token count after it must agree.  Inputs: runs of one letter (every pair
overlaps), alternations, random letters over small alphabets, base64 on one
line (BERT splits it at ``+``, ``/`` and ``=`` into words of up to about
150 characters, the short-word path) and without those marks, multi-byte text without
spaces, long words mixed with short ones and repeated (weighted counts, ties
between a long word's and a short word's first occurrence), lower-casing.
"""

from __future__ import annotations

import base64
import random

import pytest

from bpe_core.interface import TrainingCancelled
from bpe_core.textbook.wordpiece import train as naive_train
from bpe_core.wordpiece import train_wordpiece, trainer
from bpe_core.wordpiece.words import count_words

SPECIALS = ["[UNK]"]


def _rand(alphabet: str, n: int, seed: int) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=n))


CASES = {
    "run of one letter": "a" * 2500,
    "run of one letter, odd length, twice, and short runs": "a" * 1001 + " " + "a" * 1001 + " aaa a aaaa",
    "alternation": "ab" * 900 + "a",
    "two letters at random": _rand("ab", 3000, 1),
    "ten letters at random": _rand("abcdefghij", 4000, 2),
    "base64 on one line": base64.b64encode(random.Random(3).randbytes(2400)).decode(),
    "base64 without punctuation": base64.b64encode(random.Random(3).randbytes(2400))
    .decode()
    .translate({ord("+"): None, ord("/"): None}),
    "multi-byte letters": _rand("日本語éßΣ", 1500, 4),
    "long and short words mixed, repeated": " ".join(
        [_rand("abc", 600, 5), "abc abc cab", _rand("abc", 600, 5), _rand("abc", 300, 6), "aaaa aaa ba"] * 2
    ),
    "short words first, then a long word holding their pairs": "ab ba abc cab " + _rand("abc", 900, 7) + " ca",
    "English with long words inside": " ".join(
        ["The quick brown fox", "x" * 400, "jumps over the lazy dog.", _rand("dogfox", 700, 8), "The end."]
    ),
}


def _steps(tok):
    return [(s.left, s.right, s.merged, s.pair_freq, s.left_freq, s.right_freq, s.tokens_after) for s in tok.trace]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n_merges", [40, 300])
def test_long_words_match_the_naive_trainer(name, n_merges):
    text = CASES[name]
    if name != "base64 on one line":
        assert max(map(len, count_words(text)[0])) > 256  # past the merge loop's long-word cut (256 characters)
    size = train_wordpiece(text, 100_000, SPECIALS).min_vocab_size + n_merges
    tok = train_wordpiece(text, size, SPECIALS)
    vocab, merges = naive_train(text, size, SPECIALS)
    assert list(tok.vocab.values()) == vocab
    assert _steps(tok) == merges


@pytest.mark.parametrize("seed", range(6))
def test_random_mixes_of_long_and_short_words_match_the_naive_trainer(seed):
    # a tiny alphabet makes score ties frequent, so the first-occurrence tie-break is exercised across
    # long words, short words and their order of first appearance; capitals exercise lower-casing
    rng = random.Random(seed)
    parts = [_rand("abAB", rng.choice([3, 8, 200, 257, 300, 700]), seed * 100 + i) for i in range(8)]
    text = " ".join(rng.choice(parts) for _ in range(14))
    for lowercase in (False, True):
        size = train_wordpiece(text, 100_000, SPECIALS, lowercase=lowercase).min_vocab_size + 150
        tok = train_wordpiece(text, size, SPECIALS, lowercase=lowercase)
        vocab, merges = naive_train(text, size, SPECIALS, lowercase=lowercase)
        assert list(tok.vocab.values()) == vocab
        assert _steps(tok) == merges


def test_a_run_of_one_letter_grows_its_first_token_one_letter_a_merge():
    # ("a", "##a") scores 1 / (1 * (n - 1)) and beats ("##a", "##a") at (n - 2) / (n - 1)**2, and so on:
    # each merge makes the word-initial token one letter longer, touching one occurrence
    n = 50_000
    tok = train_wordpiece("a" * n, 5 + 2 + 30)
    assert [s.merged for s in tok.trace] == ["a" * k for k in range(2, 32)]
    assert [(s.pair_freq, s.left_freq, s.right_freq) for s in tok.trace[:2]] == [(1, 1, n - 1), (1, 1, n - 2)]
    assert tok.trace[-1].tokens_after == n - 30
    assert tok.encode("a" * 31 + " " + "a" * 3) == [tok.vocab_size - 1, tok.vocab_size - 29]


def test_a_merge_of_a_long_word_reports_progress_and_can_be_cancelled_inside(monkeypatch):
    # merge 0 is ("x", "##y") (score 1/2); merge 1 is ("##b", "##a"), 29,999 occurrences in the long word.
    # After each merge the trainer reports once; more reports with the same ``done`` come from inside a merge.
    monkeypatch.setattr(trainer, "PROGRESS_INTERVAL", 0.0)
    text = "xy xy " + "ab" * 30_000 + " a a"
    calls = []
    tok = train_wordpiece(text, 5 + 5 + 3, progress=lambda *a: calls.append(a))
    assert [s.merged for s in tok.trace[:2]] == ["xy", "##ba"] and tok.trace[1].replaced == 29_999
    inside = [c for c in calls if c == ("merge", 1, 3)]
    assert len(inside) >= 5  # the one report after merge 0, and reports while merge 1 visits the occurrences

    seen = []

    def progress(phase, done, total):
        seen.append((phase, done))
        if (phase, done) == ("merge", 1) and seen.count(("merge", 1)) == 3:
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        train_wordpiece(text, 5 + 5 + 3, progress=progress)
    assert seen[-1] == ("merge", 1)
