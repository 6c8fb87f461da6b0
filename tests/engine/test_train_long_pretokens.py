"""Training on long pre-tokens (the linked-list path of the merge loop) is exact.

The oracle is the textbook trainer ``bpe_core.textbook.bpe.train_merges`` (recounts every pair
of every pre-token at each step, picks ``max((count, left, right))``); the
token counts of the trace are checked against tiktoken encoding the training
text with the learned ranks.  Inputs: runs of one byte (every pair overlaps),
alternations, random letters over small alphabets, base64 on one line, UTF-8
multi-byte text without spaces, and long pre-tokens mixed with short ones and
repeated (weighted counts).
"""

from __future__ import annotations

import base64
import random

import pytest

from bpe_core import PATTERNS, train_bpe
from bpe_core.textbook.bpe import train_merges as naive_train


def _rand(alphabet: str, n: int, seed: int) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=n))


CASES = {
    "run of one letter": ("a" * 3000, "gpt2"),
    "run of one letter, odd length, twice": ("a" * 1001 + " " + "a" * 1001, "gpt2"),
    "alternation": ("ab" * 900 + "a", "gpt2"),
    "two letters at random": (_rand("ab", 4000, 1), "gpt2"),
    "ten letters at random": (_rand("abcdefghij", 6000, 2), "gpt2"),
    "base64 on one line": (base64.b64encode(random.Random(3).randbytes(3000)).decode(), "none"),
    "multi-byte letters": (_rand("日本語éß", 1500, 4), "gpt2"),
    "long and short words mixed, repeated": (
        " ".join([_rand("abc", 600, 5), "abc abc cab", _rand("abc", 600, 5), _rand("abc", 300, 6), "aaaa aaa"] * 2),
        "gpt2",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n_merges", [40, 400])
def test_long_pretokens_match_the_naive_trainer(name, n_merges):
    text, pattern = CASES[name]
    assert max(len(w.encode()) for w in text.split()) > 500  # past the merge loop's long-pre-token cut (128 B)
    tok = train_bpe(text, 256 + n_merges, [], pattern)
    expected = naive_train(text, 256 + n_merges, PATTERNS[pattern], [])
    got = [(s.left, s.right, s.count) for s in tok.trace]
    assert got == expected


@pytest.mark.parametrize("name", ["run of one letter", "alternation", "ten letters at random", "base64 on one line"])
def test_trace_token_counts_equal_tiktoken_encodings(name):
    text, pattern = CASES[name]
    tok = train_bpe(text, 256 + 300, [], pattern)
    trace = tok.trace
    before = len(text.encode("utf-8"))
    for s in trace:  # each step removes exactly the occurrences it replaced
        assert s.tokens_after == before - s.replaced and 0 < s.replaced <= s.count
        before = s.tokens_after
    for k in sorted({1, 7, 60, len(trace)} & set(range(1, len(trace) + 1))):
        enc = tok.with_vocab_size(256 + k).to_tiktoken()
        assert len(enc.encode(text)) == trace[k - 1].tokens_after, k


def test_overlapping_runs_replace_left_to_right():
    # "aaaaa" (5 a's) as one long pre-token among others: (a, a) counts 4 per run, replaces 2 per run
    text = " ".join(["a" * 5 + "b" * 200] * 3)
    tok = train_bpe(text, 256 + 30, [], "gpt2")
    first = next(s for s in tok.trace if (s.left, s.right) == (b"a", b"a"))
    assert (first.count, first.replaced) == (4 * 3, 2 * 3)
