"""Unigram's compiled kernels against the numpy and Python functions they replace (bpe_core.unigram.kernels).

Each kernel names its twin; here the twins meet on real and random text: the
seed (pieces, frequencies, order, arcs) and Viterbi (losses, counts, paths)
exactly, the forward-backward to rounding, whole trainings to the same pieces
and ids, and the compiled encoder to the same ids as the Python Viterbi.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.unigram import UnigramTokenizer, train_unigram
from bpe_core.unigram.encoder import PieceTable, viterbi, viterbi_many
from bpe_core.unigram.lattice import CompiledLattices, Lattices, loss_increase
from bpe_core.unigram.seed import seed_pieces, seed_pieces_compiled
from bpe_core.unigram.trainer import count_sentences
from tests.conftest import sample

TEXTS = {
    "english": sample("english"),
    "multilingual": sample("multilingual"),
    "python": sample("python"),
    "sentences": "<s>".join(sample("english").split("\n")) + "<s>" + sample("multilingual"),
}


@pytest.fixture(autouse=True)
def _compiled(monkeypatch):
    monkeypatch.setenv("BPE_CORE_KERNELS", "compiled")  # numba's JIT when the library is not built


def _words(text: str, specials=("<s>",)):
    counted = count_sentences(text, special_tokens=(*specials, "<unk>"))
    words = list(counted.counts)
    return words, np.array([counted.counts[w] for w in words], dtype=np.float64), counted.ends


def _arc_set(arcs, grouped: bool = False) -> list:
    if grouped:  # [off, length, piece] -> [position, length, piece]
        off, alen, piece = arcs
        arcs = [np.repeat(np.arange(len(off) - 1), np.diff(off)), alen, piece]
    return sorted(zip(*[a.tolist() for a in arcs]))


def _check_seed(text: str, seed_size: int = 1_000_000, max_len: int = 16):
    words, counts, ends = _words(text)
    a = seed_pieces(words, counts, max_len, seed_size, ends)
    b = seed_pieces_compiled(words, counts, max_len, seed_size, ends)
    assert a.pieces == list(b.pieces) and a.n_chars == b.n_chars
    assert np.array_equal(a.freqs, b.freqs) and np.array_equal(a.scores, b.scores) and np.array_equal(a.lens, b.lens)
    assert _arc_set(a.arcs) == _arc_set(b.arcs, grouped=True)
    return a


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_seed_from_the_suffix_array_equals_the_numpy_seed(name):
    seed = _check_seed(TEXTS[name])
    assert len(seed.pieces) > seed.n_chars + 100


@pytest.mark.parametrize("seed_size", [1, 10, 99, 500])
def test_seed_order_at_every_cut(seed_size):
    """The suffix array orders the tied candidates as SentencePiece's bytes order does."""
    _check_seed(TEXTS["multilingual"] + TEXTS["english"], seed_size)
    _check_seed(TEXTS["english"], seed_size, max_len=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["a", "b", "ab", "é", "è", "日", "🙂", " ", "  ", "\n", "<s>", "x"]), max_size=60))
def test_seed_on_random_corpora(parts):
    text = "".join(parts)
    if count_sentences(text, special_tokens=("<s>", "<unk>")).counts:
        _check_seed(text)


def _lattices(text: str):
    words, counts, ends = _words(text)
    s = seed_pieces(words, counts, 16, 1_000_000, ends)
    numpy_lat = Lattices(s.lens, [a.copy() for a in s.arcs])
    compiled_lat = CompiledLattices(s.lens, [a.copy() for a in s.arcs], len(s.pieces))
    return s, counts, numpy_lat, compiled_lat


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_passes_equal_the_numpy_lattices(name):
    s, counts, lat, fast = _lattices(TEXTS[name])
    e1, _ = lat.forward_backward(s.scores, counts)
    e2, _ = fast.forward_backward(s.scores, counts)
    np.testing.assert_allclose(e2, e1, rtol=1e-11, atol=1e-300)
    b1, b2 = lat.best(s.scores, counts), fast.best(s.scores, counts)
    assert b1[0] == b2[0] and np.array_equal(b1[1], b2[1]) and b1[2] == b2[2]
    n = len(s.pieces)
    is_char = np.arange(n) < s.n_chars
    plen = np.array([len(p) for p in s.pieces])
    alive = np.ones(n, dtype=bool)
    inc1 = loss_increase(lat, plen, alive, is_char, s.scores, b1[1])
    inc2 = loss_increase(fast, plen, alive, is_char, s.scores, b2[1])
    assert np.array_equal(inc1, inc2) and (inc1 > 0).sum() > 50
    # after removing a third of the pieces (dead arcs dropped), still the same
    alive[s.n_chars :: 3] = False
    scores = np.where(alive, s.scores, -np.inf)
    lat.keep(alive)
    fast.keep(alive)
    assert lat.best(scores, counts)[:1] == fast.best(scores, counts)[:1]
    np.testing.assert_allclose(fast.forward_backward(scores, counts)[0], lat.forward_backward(scores, counts)[0],
                               rtol=1e-11, atol=1e-300)  # fmt: skip


def test_forward_backward_rescales_long_words():
    """A 3,000-character word (no spaces: Japanese) underflows in probability space unless rescaled."""
    text = (TEXTS["multilingual"].replace(" ", "").replace("\n", "") * 4)[:3000] + " x"
    s, counts, lat, fast = _lattices(text + " " + text)
    e1, _ = lat.forward_backward(s.scores, counts)
    e2, _ = fast.forward_backward(s.scores, counts)
    assert np.isfinite(e2).all() and e1.sum() > 1000
    np.testing.assert_allclose(e2, e1, rtol=1e-9, atol=1e-250)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("english", {}),
        ("multilingual", {}),
        ("sentences", {"special_tokens": ["<s>"]}),
        ("python", {"pattern": "gpt2"}),
    ],
)
def test_trainings_are_identical(name, kwargs, monkeypatch):
    """Both engines choose the same pieces in the same rounds; the scores agree to rounding."""
    monkeypatch.setenv("BPE_CORE_KERNELS", "python")
    a = train_unigram(TEXTS[name], 600, **kwargs)
    monkeypatch.setenv("BPE_CORE_KERNELS", "compiled")
    b = train_unigram(TEXTS[name], 600, **kwargs)
    assert a.pieces == b.pieces and a.state_sizes == b.state_sizes
    assert [r.removed for r in a.trace] == [r.removed for r in b.trace]
    assert [r.tokens_after for r in a.trace] == [r.tokens_after for r in b.trace]
    np.testing.assert_allclose(b.scores, a.scores, rtol=1e-9)
    text = TEXTS["english"] + TEXTS["multilingual"]
    assert a.encode(text) == b.encode(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(st.sampled_from("abcéè日▁ "), min_size=1, max_size=4), min_size=1, max_size=30, unique=True),
    st.lists(st.sampled_from([-1.0, -2.0, -2.5, -4.0]), min_size=30, max_size=30),
    st.lists(st.text(st.sampled_from("abcéè日▁ z🙂"), min_size=1, max_size=12), min_size=1, max_size=20),
)
def test_compiled_encoder_equals_the_python_viterbi(pieces, scores, words):
    """Ties (scores drawn from four values), unknown characters and fused unknown runs, as the Python Viterbi."""
    table = PieceTable({p: i + 1 for i, p in enumerate(pieces)}, [0.0, *scores[: len(pieces)]], 0, min(scores))
    assert viterbi_many(words, table) == [viterbi(w, table) for w in words]
    assert viterbi_many(words, table, ids_only=True) == [tuple(i for _s, _e, i in viterbi(w, table)) for w in words]


def test_encode_uses_the_compiled_encoder_and_agrees(monkeypatch):
    tok = train_unigram(TEXTS["english"], 500)
    text = TEXTS["multilingual"] + TEXTS["python"] + TEXTS["english"]
    compiled = tok.with_vocab_size(499).encode(text)
    monkeypatch.setenv("BPE_CORE_KERNELS", "python")
    fresh = UnigramTokenizer.from_dict(tok.with_vocab_size(499).to_dict())
    assert fresh.encode(text) == compiled
