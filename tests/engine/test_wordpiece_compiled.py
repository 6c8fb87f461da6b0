"""WordPiece's compiled merge loop gives exactly the Python loop's vocabulary and trace.

The function it must equal is :func:`bpe_core.wordpiece.trainer._merge_loop` (the same
words, ``BPE_CORE_KERNELS=python``); the Python loop itself is checked against the
course-style textbook trainer and the course's printed vocabulary in ``test_wordpiece.py``.
Texts: the seed articles, multilingual text, Python source, lower-cased and not, trained
to exhaustion (every word one token), and hypothesis-drawn words over tiny alphabets:
many ties, pairs of one token repeated, and merged strings reached a second time by
another pair (an existing token reused, which the kernel asks Python to confirm).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.counting import KERNELS_ENV
from bpe_core.wordpiece import train_wordpiece, trainer, wp_kernel
from tests.conftest import sample, seed_text, stdlib_code

pytest.importorskip("numba")

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _both(text: str, vocab_size: int, lowercase: bool = False):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KERNELS_ENV, "python")
        python = train_wordpiece(text, vocab_size, SPECIALS, lowercase=lowercase)
        mp.setenv(KERNELS_ENV, "compiled")
        compiled = train_wordpiece(text, vocab_size, SPECIALS, lowercase=lowercase)
    return python, compiled


def _assert_same(python, compiled):
    assert compiled.vocab == python.vocab
    assert compiled.trace == python.trace
    assert compiled.training.stop_reason == python.training.stop_reason
    assert compiled.training.initial_tokens == python.training.initial_tokens


def test_the_engine_is_chosen_as_documented(monkeypatch):
    monkeypatch.setenv(KERNELS_ENV, "auto")
    assert trainer.merge_engine(10, False) == "python"  # under COMPILED_MIN_WORDS
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    assert trainer.merge_engine(10, False) == "compiled"
    assert trainer.merge_engine(10, True) == "python"  # words over 256 characters: the linked-list path
    monkeypatch.setenv(KERNELS_ENV, "python")
    assert trainer.merge_engine(trainer.COMPILED_MIN_WORDS + 1, False) == "python"


def test_the_compiled_loop_runs_when_asked(monkeypatch):
    calls = []
    real = trainer._compiled_merge_loop
    monkeypatch.setattr(trainer, "_compiled_merge_loop", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    train_wordpiece("hug hugs hugging pug pugs", 30)
    assert calls


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("name", ["seeds", "multilingual", "code"])
def test_same_as_the_python_loop_on_real_text(name, lowercase):
    text = {"seeds": seed_text()[:150_000], "multilingual": sample("multilingual"), "code": stdlib_code()}[name]
    for vocab_size in (800, 3000):
        python, compiled = _both(text, vocab_size, lowercase)
        _assert_same(python, compiled)
        assert len(compiled.trace) > 100


def test_same_as_the_python_loop_down_to_single_tokens():
    text = seed_text()[:20_000] + " [SEP] " + sample("multilingual")
    python, compiled = _both(text, 100_000)
    _assert_same(python, compiled)
    assert compiled.training.stop_reason is not None  # every word became one token


def test_a_token_hash_hit_is_settled_by_comparing_strings(monkeypatch):
    # The kernel names a merged token by a hash of its characters; a hit (an existing token, or a
    # collision) stops it, and Python compares the strings.  Plant the hash of the first merge's
    # token in the table so that it collides, and check that training goes on as before.
    text = seed_text()[:20_000]
    monkeypatch.setenv(KERNELS_ENV, "python")
    python = train_wordpiece(text, 600, SPECIALS)
    first = python.trace[0]
    real_init, resolved = wp_kernel.WordPieceMergeLoop.__init__, []

    def init(self, *args):
        real_init(self, *args)
        T, a, b = self.T, first.left_id, first.right_id
        planted = (
            int(T[wp_kernel.HFULL, a]) * int(T[wp_kernel.PPOW, b]) + int(T[wp_kernel.HCHARS, b])
        ) % wp_kernel.HMOD
        mask = self.tkeys.size - 1
        j = ((planted * 11400714819323198485) % 2**64 >> 32) & mask
        while self.tkeys[j] != -1:
            j = (j + 1) & mask
        self.tkeys[j], self.tvals[j] = planted, 0

    monkeypatch.setattr(wp_kernel.WordPieceMergeLoop, "__init__", init)
    real_resolve = wp_kernel.WordPieceMergeLoop.resolve
    monkeypatch.setattr(
        wp_kernel.WordPieceMergeLoop, "resolve", lambda self, m: resolved.append(m) or real_resolve(self, m)
    )
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    compiled = train_wordpiece(text, 600, SPECIALS)
    _assert_same(python, compiled)
    assert resolved == [first.new_id]  # a new token after all: the strings differ


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet="abcab", min_size=1, max_size=12), min_size=1, max_size=60),
    st.integers(min_value=0, max_value=80),
    st.booleans(),
)
def test_same_as_the_python_loop_on_random_words(words, extra, lowercase):
    text = " ".join(words) + " " + " ".join(w.upper() for w in words[::3])
    python, compiled = _both(text, len(SPECIALS) + 12 + extra, lowercase)
    _assert_same(python, compiled)
