"""The Unigram tokenizers' batched corpus encoders equal their textbook per-piece encoders, and the production package.

Corpus figures (``bpe_core.analysis.corpus``) ask every tokenizer for the tokens of
each distinct piece.  Two Unigram tokenizers answer for all pieces at once, in
arrays, without a Python object per token:

* a trained :class:`~bpe_core.unigram.UnigramTokenizer`
  (:func:`bpe_core.unigram.batch.unigram_piece_tokens`), held to
  :func:`~bpe_core.unigram.batch.textbook_piece_tokens` (``token_spans`` per piece);
* XLM-R (:meth:`bpe_core.production.unigram_model.UnigramXLMR.unit_tokens`), held to
  :meth:`~bpe_core.production.unigram_model.UnigramXLMR.textbook_unit_tokens` and,
  put back together over a text's units, to Hugging Face ``tokenizers`` built from the
  same pieces, scores and charsmap (``tests/engine/test_production_families.py``'s reference).

Both are checked with the compiled kernels (numba's JIT when the library is not built)
and with their numpy / Python twins, on the distinct pieces of real texts (the samples,
the seeds, code, multilingual text) and of adversarial ones (odd Unicode, whitespace of
every kind, ``▁`` in the text, special-token strings glued to words, unknown characters,
combining marks at piece starts), plus empty pieces and pieces that start a document.
The kernels meet their twins one by one at the end.
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.analysis.corpus import count_pieces, count_units, text_units, unit_cut_table
from bpe_core.interface import TrainingSpec
from bpe_core.pieces import KIND_BYTE_FALLBACK, KIND_SPECIAL, KIND_UNKNOWN, code_points
from bpe_core.production.encodings import EncodingUnavailable
from bpe_core.production.registry import load_production
from bpe_core.production.unigram_model import cluster_values, normalized_lattice, sure_breaks
from bpe_core.unigram import UnigramTokenizer, batch
from bpe_core.unigram import kernels as K
from bpe_core.unigram.batch import (
    special_kinds,
    textbook_piece_tokens,
    unigram_piece_tokens,
    unknown_kinds,
)
from bpe_core.unigram.encoder import PREPEND_ALWAYS, PREPEND_FIRST, viterbi, viterbi_packed
from tests.conftest import sample, seed_text, stdlib_code
from tests.engine.test_corpus import ADVERSARIAL, ALPHABET

FIELDS = ("offsets", "ids", "starts", "ends", "kinds")

EDGE_PIECES = [
    "", " ", "  ", "▁", "▁▁", " ▁x", "x▁y", " x", "x", "\u0301", " \u0301", "\u0301x", "\r\n", " \r\n", "\t", "\n\n",
    "<unk>", "<s>", "a<s>b", " <s>", "<s><s>", "<unk>x", "𝔘𝔫𝔦", " 中文字", "🦙🎉", " 👩\u200d👩\u200d👧", "ﬁ①",
    " ｈｅｌｌｏ", "\x00\x01", " \u200b", "\ufeffbom", " ΣΑΣ", " ٣٤٥", " \U000e0041", " 🇫🇷🇯🇵", " \U0010ffff",
]  # fmt: skip
"""Hand-made pieces: empty, spaces, ``▁``, combining marks and CRLF at the start, special tokens alone and glued,
characters no trained vocabulary here has, ZWJ and flag sequences, the last code point."""


@pytest.fixture(params=["compiled", "python"])
def compiled(request, monkeypatch) -> bool:
    """Both paths: the compiled kernels (numba's JIT when the library is not built) and the Python twins."""
    monkeypatch.setenv("BPE_CORE_KERNELS", request.param)
    return request.param == "compiled"


def probe_text() -> str:
    return "\n".join(
        [
            *ADVERSARIAL,
            sample("english")[:6_000],
            sample("multilingual"),
            stdlib_code()[:4_000],
            seed_text()[:6_000],
            sample("numbers")[:2_000],
            " <s>x a<s> <s> <unk>. x<unk>y",
        ]
    )


def distinct_pieces(tok, text: str) -> tuple[list[str], list[bool]]:
    """The corpus figures' distinct pieces of ``text`` under ``tok``, then the edge pieces (each both ways)."""
    split = tok.corpus_pieces()
    counted = count_pieces(count_units(text, unit_cut_table([split])), split)
    pieces = [*counted.pieces, *EDGE_PIECES, *EDGE_PIECES]
    first = [*map(bool, counted.first), *[True] * len(EDGE_PIECES), *[False] * len(EDGE_PIECES)]
    return pieces, first


def assert_equal_tokens(got, want, pieces) -> None:
    for f in FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        if not np.array_equal(a, b):
            bad = np.flatnonzero(np.diff(got.offsets) != np.diff(want.offsets))
            where = pieces[bad[0]] if bad.size else None
            raise AssertionError(f"{f} differs ({a.size} vs {b.size}); first piece with other tokens: {where!r}")
        assert a.dtype == b.dtype, f


# --- the trained Unigram ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained() -> dict:
    text = sample("english") + sample("multilingual") + stdlib_code()[:10_000]
    return {
        "plain": TrainingSpec("unigram", 900, pattern="sentencepiece", special_tokens=("<unk>",)).train(text),
        "byte fallback": TrainingSpec(
            "unigram", 400, pattern="sentencepiece", special_tokens=("<unk>", "<s>"), byte_fallback=True
        ).train(sample("english")),
        "gpt2 pattern": TrainingSpec("unigram", 500, pattern="gpt2", special_tokens=("<unk>", "<s>")).train(text),
    }


@pytest.mark.parametrize("name", ["plain", "byte fallback", "gpt2 pattern"])
@pytest.mark.parametrize("prepend", [PREPEND_FIRST, PREPEND_ALWAYS])
def test_trained_unigram_batch_equals_the_textbook(trained, name, prepend, compiled):
    tok = trained[name]
    if tok.prepend != prepend:
        tok = tok.from_dict({**tok.to_dict(), "prepend": prepend})
    pieces, first = distinct_pieces(tok, probe_text())
    want = textbook_piece_tokens(tok, pieces, first)
    assert_equal_tokens(unigram_piece_tokens(tok, pieces, first, compiled=compiled), want, pieces)
    assert_equal_tokens(tok.corpus_pieces().encode(pieces, first), want, pieces)  # what corpus figures call
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(batch, "BATCH_CHARS", 300)  # many batches, joined in order
        assert_equal_tokens(unigram_piece_tokens(tok, pieces, first, compiled=compiled), want, pieces)
    kinds = set(want.kinds.tolist())
    assert KIND_SPECIAL in kinds  # the pieces "<unk>", "<s>": special tokens
    assert (KIND_BYTE_FALLBACK if name == "byte fallback" else KIND_UNKNOWN) in kinds  # "𝔘𝔫𝔦" and friends
    assert (want.starts == want.ends).any() == (tok.pattern_name == "sentencepiece")  # a "▁" put in front alone


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET + "<s>unk", max_size=10), max_size=30), st.booleans())
def test_trained_unigram_batch_equals_the_textbook_on_random_pieces(trained, pieces, at_start):
    # (the module-scoped fixture is the same for every example)
    for tok in (trained["plain"], trained["byte fallback"]):
        first = [at_start ^ (k % 3 == 0) for k in range(len(pieces))]
        want = textbook_piece_tokens(tok, pieces, first)
        assert_equal_tokens(unigram_piece_tokens(tok, pieces, first, compiled=False), want, pieces)


@pytest.mark.parametrize("byte_fallback", [False, True])
@pytest.mark.parametrize("prepend", [PREPEND_FIRST, PREPEND_ALWAYS])
def test_a_vocabulary_without_the_space_mark(byte_fallback, prepend, compiled):
    """No ``▁`` piece: the ``▁`` put in front is an unknown character (or its three byte pieces), of no width."""
    tok = UnigramTokenizer.from_pieces(
        [("a", -1.0), ("b", -2.0), ("ab", -1.5), ("é", -3.0)], ["<s>"], byte_fallback=byte_fallback, prepend=prepend
    )
    pieces = ["ab", " ab", "  b", "", "▁a", "xé", " <s>a", "<s>", "ba ", " ́", "a🦙b"]
    for first in ([True] * len(pieces), [False] * len(pieces)):
        want = textbook_piece_tokens(tok, pieces, first)
        assert_equal_tokens(unigram_piece_tokens(tok, pieces, first, compiled=compiled), want, pieces)
        assert (want.kinds == (KIND_BYTE_FALLBACK if byte_fallback else KIND_UNKNOWN)).sum() >= 3
        assert (want.starts == want.ends).any() or not (first[0] or prepend == PREPEND_ALWAYS)  # "▁" put in front


def test_a_surrogate_takes_the_textbook_path(trained):
    """No UTF-32 for an unpaired surrogate (counted pieces never hold one): the textbook encodes them all."""
    pieces, first = ["ok", " a\ud800b", "<s>"], [True, False, False]
    want = textbook_piece_tokens(trained["plain"], pieces, first)
    assert_equal_tokens(unigram_piece_tokens(trained["plain"], pieces, first, compiled=False), want, pieces)


# --- XLM-R ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def xlmr():
    try:
        return load_production("xlmr")
    except EncodingUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}: {exc.how_to_add}")
        pytest.skip(f"{exc} ({exc.how_to_add})")


def test_xlmr_batch_equals_the_textbook(xlmr, compiled, monkeypatch):
    pieces, first = distinct_pieces(xlmr, probe_text())
    want = xlmr.textbook_unit_tokens(pieces, first)
    assert_equal_tokens(xlmr.unit_tokens(pieces, first, compiled=compiled), want, pieces)
    monkeypatch.setattr(batch, "BATCH_CHARS", 500)  # many batches, joined in order
    assert_equal_tokens(xlmr.unit_tokens(pieces, first, compiled=compiled), want, pieces)
    assert_equal_tokens(xlmr.corpus_pieces().encode(pieces, first), want, pieces)  # what corpus figures call
    assert KIND_SPECIAL in set(want.kinds.tolist())  # "<s>" in units: the textbook path, merged in place
    assert (want.starts == want.ends).any()  # a "▁" that stands for no character


RANDOM_ALPHABET = ALPHABET + (
    "ｆｕｌｌ①ﬁ\u3000\u00a0\r\n\t<s>/unk\u0308\u200d\U0001f1eb\U0001f1f7\u1100\u1161\u11a8\u0915\u094d"
)
"""Adds fullwidth letters, compatibility characters, CRLF, flags, Hangul jamo and an Indic conjunct."""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=RANDOM_ALPHABET, max_size=14), max_size=25), st.booleans())
def test_xlmr_batch_equals_the_textbook_on_random_units(xlmr, pieces, at_start):
    first = [at_start ^ (k % 2 == 0) for k in range(len(pieces))]
    want = xlmr.textbook_unit_tokens(pieces, first)
    assert_equal_tokens(xlmr.unit_tokens(pieces, first, compiled=False), want, pieces)


def xlmr_texts() -> list[str]:
    from tests.engine.test_production_families import TEXTS

    rng = random.Random(31)
    return [*TEXTS, *ADVERSARIAL[1:], *("".join(rng.choice(RANDOM_ALPHABET) for _ in range(60)) for _ in range(100))]


def test_xlmr_units_put_together_equal_hugging_face(xlmr, compiled):
    """A text's units, encoded at once, give the ids of Hugging Face ``tokenizers`` on the whole text."""
    from tests.engine.test_production_families import reference

    hf = reference("xlmr")
    table = unit_cut_table([xlmr.corpus_pieces()])
    texts = [t for t in xlmr_texts() if t]
    units = [text_units(t, table) for t in texts]
    flat = [u for us in units for u in us]
    first = [k == 0 for us in units for k in range(len(us))]
    got = xlmr.unit_tokens(flat, first, compiled=compiled)
    ids = got.ids.tolist()
    k = 0
    for text, us in zip(texts, units, strict=True):
        mine = ids[got.offsets[k] : got.offsets[k + len(us)]]
        assert mine == hf(text), text
        assert mine == xlmr.encode(text), text
        k += len(us)
    assert k == len(flat) and len(texts) >= 500


# --- the pieces of the batch, and the kernels against their twins ----------------------------------------------


def test_special_kinds_and_unknown_kinds():
    assert special_kinds(["<s>", "x<s>", "<s", "", "</s>", "<s><s>"], ["<s>", "</s>"]).tolist() == [1, 2, 0, 0, 1, 2]
    assert special_kinds(["a\x00b", "<s>"], ["\x00", "<s>"]).tolist() == [2, 1]  # no separator a special holds
    assert special_kinds(["a", "b"], []).tolist() == [0, 0]
    lattice, _ = code_points(["x<unk>y"])
    kinds = unknown_kinds(lattice, np.array([1, 0]), np.array([6, 1]), "<unk>")
    assert kinds.tolist() == [KIND_SPECIAL, KIND_UNKNOWN]  # a run that spells the unknown token's own text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=RANDOM_ALPHABET, max_size=16), max_size=20))
def test_clusters_are_the_regex_grapheme_clusters(strings):
    text = "".join(strings)
    codes, starts = code_points(strings)
    want = set()
    for s, a in zip(strings, starts.tolist()):
        pos = a
        for g in regex.findall(r"\X", s):
            want.add(pos)
            pos += len(g)
    brk = cluster_values(_identity_charsmap(), text, codes, starts)[0]
    assert set(np.flatnonzero(brk).tolist()) == want


class _identity_charsmap:  # a stand-in with the one method of Charsmap used here
    @staticmethod
    def _cluster(g: str) -> str:
        return g


def test_the_kernels_equal_their_twins(xlmr, monkeypatch):
    monkeypatch.setenv("BPE_CORE_KERNELS", "compiled")
    strings = [*xlmr_texts()[-300:], "", " ", "a  ", "▁", "  ▁ x ▁"]
    strings += ["a" + t for t in strings]
    text = "".join(strings)
    codes, starts = code_points(strings)
    simple = np.zeros(0x110000, dtype=np.uint8)
    simple[np.unique(codes)] = [1 if regex.match(r"[\p{GCB=Other}\p{GCB=Control}\p{GCB=CR}\p{GCB=LF}]", chr(c)) else 0
                               for c in np.unique(codes).tolist()]  # fmt: skip
    brk, run_start, run_len = sure_breaks(codes, starts, simple)
    cbrk, crs, crl = np.empty_like(brk), np.empty(codes.size, np.int64), np.empty(codes.size, np.int64)
    runs = K._sure_breaks(codes, starts, simple, cbrk, crs, crl)
    assert np.array_equal(cbrk, brk) and np.array_equal(crs[:runs], run_start) and np.array_equal(crl[:runs], run_len)
    assert runs > 10
    for got, want in zip(
        cluster_values(xlmr.charsmap, text, codes, starts, compiled=True),
        cluster_values(xlmr.charsmap, text, codes, starts, compiled=False),
        strict=True,
    ):
        assert np.array_equal(got, want)
    clusters = cluster_values(xlmr.charsmap, text, codes, starts)
    fast = normalized_lattice(codes, starts, *clusters, compiled=True)
    slow = normalized_lattice(codes, starts, *clusters, compiled=False)
    for got, want in zip(fast, slow, strict=True):
        assert np.array_equal(got, want)
    lattice, wstart = fast[0], fast[3]
    table = xlmr.unigram.piece_table()
    a = viterbi_packed(lattice, wstart, table, compiled=True)
    b = viterbi_packed(lattice, wstart, table, compiled=False)
    for got, want in zip(a, b, strict=True):
        assert np.array_equal(got, want)
    words = lattice.astype("<u4").tobytes().decode("utf-32-le")
    w = wstart.tolist()
    assert [viterbi(words[x:y], table) for x, y in itertools.pairwise(w[:4])] == [
        [(int(s), int(e), int(i)) for s, e, i in zip(a[1][a[0] == k], a[2][a[0] == k], a[3][a[0] == k])]
        for k in range(3)
    ]


def test_distinct_words_finds_each_first_occurrence(monkeypatch):
    monkeypatch.setenv("BPE_CORE_KERNELS", "compiled")
    rng = random.Random(5)
    words = ["".join(rng.choice("ab▁é") for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    codes, wstart = code_points(words)
    first_of = np.empty(len(words), dtype=np.int64)
    slots = np.full(1 << 13, -1, dtype=np.int64)
    distinct = K._distinct_words(codes, wstart, slots, first_of)
    seen: dict[str, int] = {}
    want = [seen.setdefault(w, k) for k, w in enumerate(words)]
    assert first_of.tolist() == want and distinct == len(seen)
