"""The tiktoken-form encodings' compiled pieces encoder equals tiktoken on every piece.

:meth:`bpe_core.production.encodings.TiktokenTokenizer._encode_pieces` sends every distinct pre-token's UTF-8
through the compiled merge loop of :mod:`bpe_core.bpe.piece_merge_kernel` over the pair table
:func:`bpe_core.production.encodings.tiktoken_pair_ranks`, a piece that is one token looked up first.  The
oracles: tiktoken itself (``encode_single_piece`` on each piece, through the textbook
``_encode_pieces_textbook``, and ``encode``/``encode_ordinary`` on whole texts), and a naive byte-pair merge
written here (which tokens only tiktoken's look-up reaches).  Every tiktoken-form encoding of the registry is
checked (:func:`bpe_core.production.registry.byte_level_production_keys`), none hard-coded.
"""

from __future__ import annotations

import itertools
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.bpe.piece_merge_kernel import encode_byte_pieces, tokens_not_merged
from bpe_core.counting import native
from bpe_core.interface import corpus_pieces
from bpe_core.pieces import pack_utf8
from bpe_core.production import tiktoken_merge
from bpe_core.production.encodings import TiktokenTokenizer
from bpe_core.production.registry import byte_level_production_keys
from bpe_core.production.tiktoken_merge import tiktoken_merge_tables, tiktoken_pair_arrays, tiktoken_pair_ranks
from tests.conftest import (
    SEEDS,
    assert_equal_piece_tokens,
    piece_texts,
    production_or_skip,
    sample,
    stdlib_code,
    text_pieces,
)

KEYS = byte_level_production_keys()

ADVERSARIAL = [
    "a" * 5000,
    " " * 300,
    "\n" * 200 + "\t" * 50 + " \n" * 40,
    "0123456789" * 40 + " 3.14159 1,000,000 ١٢٣٤٥ ²³ 0000000000000000",
    "👩\u200d👩\u200d👧\u200d👦 👨🏽\u200d💻 🏳️\u200d🌈 🇫🇷🇯🇵 " + "👍🏿" * 30,
    "中文字 日本語のテキスト 한국어 Ελληνικά русский עברית العربية हिन्दी ไทย a中b한c🦙d",
    "é e\u0301 \u0301x \u0301\u0302 a\u0308\u0301\u0323 ǅemal İstanbul ß ﬁn Å Å",
    "\x00\x01 control\x7f \u200b zero\u200dwidth \ufeffbom \ufffd \U000e0041 \U0010fffd \U00040000",
    "ab" * 400 + " " + "🦙a" * 100 + " " + "é" * 300 + " " + "中" * 500,
    "'s 're 've 'll 'd 'S 'RE n't I'M ''' \"\"\" ``` --- === ... ___",
    "camelCaseWord HTTPServer getHTTPResponseCode x86_64 UPPER lower MiXeD ǅǈǋ",
]


@pytest.fixture(scope="module", params=KEYS)
def tok(request) -> TiktokenTokenizer:
    tok = production_or_skip(request.param)
    assert isinstance(tok, TiktokenTokenizer)
    return tok


def seeds() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt"))] if SEEDS.is_dir() else []


def texts(tok) -> list[str]:
    """Real texts (prose, scripts, code, seeds, numbers), adversarial ones, and one holding special tokens."""
    specials = list(tok.special_tokens)[:6]
    with_specials = " x".join(specials) + " " + "".join(specials) + "y " + " ".join(specials) + " <|endoftext|"
    return [*piece_texts(), *seeds(), sample("multilingual") + stdlib_code(), *ADVERSARIAL, with_specials]


def distinct_pieces(tok) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts(tok):
        seen.update(dict.fromkeys(text_pieces(tok, text)[0]))
    return list(seen)


def tiktoken_ids(tok, piece: str) -> list[int]:
    """Tiktoken's own ids of one piece: a special token the text reads, else ``encode_single_piece``."""
    if tok.special_text and piece in tok.special_tokens:
        return [tok.special_tokens[piece]]
    return list(tok.encoding._core_bpe.encode_single_piece(piece.encode("utf-8")))


def check(tok, pieces: list[str]) -> None:
    """The compiled tokens equal the textbook's (tiktoken per piece), and their ids tiktoken's."""
    first = [False] * len(pieces)
    got = tok._encode_pieces(pieces, first)
    assert_equal_piece_tokens(got, tok._encode_pieces_textbook(pieces, first), pieces)
    for k, piece in enumerate(pieces):
        assert got.ids[got.offsets[k] : got.offsets[k + 1]].tolist() == tiktoken_ids(tok, piece), (tok.name, piece)


def merged_without_look_up(data: bytes, ranks) -> list[bytes]:
    """A naive byte-pair merge, no look-up of the whole piece: the lowest rank, the leftmost of equal ranks."""
    parts = [data[i : i + 1] for i in range(len(data))]
    while len(parts) > 1:
        found = [(ranks[a + b], i) for i, (a, b) in enumerate(itertools.pairwise(parts)) if a + b in ranks]
        if not found:
            break
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


@pytest.fixture(scope="module")
def look_up_only():
    """Llama 3's tokens no merge reaches (tiktoken's look-up of the whole piece finds them), as text."""
    ranks = production_or_skip("llama3").mergeable_ranks
    out = [t for t in ranks if len(t) > 1 and len(merged_without_look_up(t, ranks)) > 1]
    assert len(out) == 588  # as the Llama 3 steps view says
    return [t.decode("utf-8") for t in out if t.decode("utf-8", errors="replace").encode("utf-8") == t]


def test_real_and_adversarial_pieces_equal_tiktoken(tok):
    pieces = distinct_pieces(tok)
    assert len(pieces) > 3000 and max(len(p.encode("utf-8")) for p in pieces) >= 5000  # long pieces: the heap
    check(tok, pieces)
    if tok.special_text:
        got = corpus_pieces(tok).encode(pieces, [False] * len(pieces))
        specials = {tok.special_tokens[s] for s in list(tok.special_tokens)[:6]}
        assert set(got.ids[got.kinds != 0].tolist()) == specials  # the special tokens, as special tokens


def test_the_pieces_only_the_look_up_reaches(tok, look_up_only):
    """Llama 3's 588 look-up-only tokens, alone, after a space, and with a character after (then merged)."""
    assert len(look_up_only) > 500
    pieces = list(dict.fromkeys([*look_up_only, *(" " + p for p in look_up_only), *(p + "x" for p in look_up_only)]))
    check(tok, pieces)
    if tok.encoding_name == "llama3":
        got = tok._encode_pieces(look_up_only, [False] * len(look_up_only))
        assert np.diff(got.offsets).tolist() == [1] * len(look_up_only)  # each one token, as tiktoken looks it up


def test_the_tokens_not_merged_are_the_naive_merges_misses(look_up_only):
    """The tokens looked up whole (all others merge into themselves) are the ones the naive merge leaves apart."""
    llama3 = production_or_skip("llama3")
    got = tokens_not_merged(llama3._byte_tables, llama3.mergeable_ranks)
    assert sorted(got) == sorted(look_up_only) and len(got) == 588
    assert all(llama3.mergeable_ranks[t.encode("utf-8")] == i for t, i in got.items())
    gpt2 = production_or_skip("gpt2")
    ranks = gpt2.mergeable_ranks
    text = [t for t in ranks if t.decode("utf-8", "replace").encode("utf-8") == t]
    naive = [t for t in text if len(merged_without_look_up(t, ranks)) > 1]
    assert tokens_not_merged(gpt2._byte_tables, ranks) == {} and naive == []


def test_whole_texts_laid_out_by_pieces_are_tiktokens_ids(tok):
    for text in texts(tok):
        pieces, first = text_pieces(tok, text)
        got = corpus_pieces(tok).encode(pieces, first)
        form = tok.spec.normalization
        normal = unicodedata.normalize(form, text) if form else text  # what tiktoken reads (Qwen: NFC)
        enc = tok.encoding
        want = enc.encode(normal, allowed_special="all") if tok.special_text else enc.encode_ordinary(normal)
        assert got.ids.tolist() == want, (tok.name, text[:60])


def test_many_pieces_in_threads_equal_one_call(tok, monkeypatch):
    from bpe_core.bpe import piece_merge_kernel

    pieces = distinct_pieces(tok)
    whole = tok._encode_pieces(pieces, [False] * len(pieces))
    monkeypatch.setattr(piece_merge_kernel, "PARALLEL_MIN_PIECES", 100)
    monkeypatch.setattr(piece_merge_kernel.os, "cpu_count", lambda: 4)
    assert_equal_piece_tokens(tok._encode_pieces(pieces, [False] * len(pieces)), whole, pieces)


def test_without_compiled_kernels_the_textbook_encodes(tok, monkeypatch):
    pieces, first = text_pieces(tok, ADVERSARIAL[4] + " " + ADVERSARIAL[7] + " " + " ".join(tok.special_tokens)[:300])
    compiled = corpus_pieces(tok).encode(pieces, first)
    called = []
    textbook = tok._encode_pieces_textbook
    monkeypatch.setattr(native, "carrier", lambda: None)
    monkeypatch.setattr(tok, "_encode_pieces_textbook", lambda p, f: called.append(len(p)) or textbook(p, f))
    assert_equal_piece_tokens(corpus_pieces(tok).encode(pieces, first), compiled, pieces)
    assert called


def test_the_pair_table_is_every_split_into_two_tokens():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5, b"ca": 6}
    pairs = {(k >> 4, k & 15): r for k, r in tiktoken_pair_ranks(ranks, 4).items()}
    assert pairs == {(0, 1): 3, (1, 2): 4, (3, 2): 5, (0, 4): 5, (2, 0): 6}


def as_dict(arrays, shift: int = 20) -> dict[int, int]:
    left, right, rank = (a.tolist() for a in arrays)
    assert len(set(zip(left, right))) == len(left)  # no pair twice
    return {a << shift | b: r for a, b, r in zip(left, right, rank)}


def test_the_pair_arrays_equal_the_textbook_pair_table(tok):
    ranks = tok.mergeable_ranks
    assert max(ranks.values()) < 1 << 20
    got = as_dict(tiktoken_pair_arrays(ranks))
    assert got == tiktoken_pair_ranks(ranks, 20)
    assert len(got) > 2 * len(ranks) // 3


def test_a_hash_match_is_checked_byte_for_byte(monkeypatch):
    """With a weak hash (the sum of the bytes), ``ba`` matches token ``ab``: the byte check rejects it."""

    def weak(data):
        prefix = np.r_[0, np.cumsum(data.astype(np.int64))]
        return lambda a, b: (prefix[b] - prefix[a]).astype(np.uint64)

    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"aba": 3, b"bab": 4}
    want = tiktoken_pair_ranks(ranks, 20)
    monkeypatch.setattr(tiktoken_merge, "_substring_hashes", weak)
    assert as_dict(tiktoken_pair_arrays(ranks)) == want == {0 << 20 | 1: 2, 2 << 20 | 0: 3, 1 << 20 | 2: 4}
    assert tiktoken_pair_arrays({**ranks, b"ba": 5}) is None  # two tokens share a hash: the caller's textbook


def test_without_the_pair_arrays_the_textbook_table_encodes_the_same(tok, monkeypatch):
    pieces = distinct_pieces(tok)[:3000]
    data, offsets = pack_utf8(pieces)
    whole = np.full(len(pieces), -1, dtype=np.int64)
    fast = encode_byte_pieces(tok._byte_tables, data, offsets, whole)
    monkeypatch.setattr(tiktoken_merge, "tiktoken_pair_arrays", lambda ranks: None)
    textbook = encode_byte_pieces(tiktoken_merge_tables(tok.mergeable_ranks), data, offsets, whole)
    assert all(np.array_equal(a, b) for a, b in zip(fast, textbook))


HARD = st.sampled_from(
    [
        *"aAzZ09 _-.,'\t\n\r\u00a0\u3000éüß中文字한🦙👍\u200d\u0301\u0308ΣσЖع▁\x00\U000e0041\U00010940",
        "<|endoftext|>",
        " " * 5,
        "ab" * 20,
        "'ll",
        "\U0001f1eb\U0001f1f7",
        " việc",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(HARD, max_size=60), raw=st.lists(st.text(min_size=1, max_size=40), max_size=20))
def test_random_pre_tokens_and_strings_equal_tiktoken(tok, parts, raw):
    """Random texts' pre-tokens, and random strings taken as pieces whole (any string: tiktoken merges it)."""
    pieces = text_pieces(tok, "".join(parts))[0]
    raw = [s for s in raw if not any(0xD800 <= ord(c) < 0xE000 for c in s)]
    check(tok, list(dict.fromkeys(pieces + raw)))
