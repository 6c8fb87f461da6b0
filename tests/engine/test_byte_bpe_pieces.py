"""The compiled byte-level BPE over distinct pieces equals the textbook per-piece encoders.

:meth:`bpe_core.production.byte_bpe.ByteLevelBPE._encode_pieces` and
:meth:`bpe_core.bpe.encoder.BPEEncoder._encode_pieces` send every distinct piece's UTF-8 through the compiled
merge loop of :mod:`bpe_core.bpe.piece_merge_kernel` (bytes as its symbols) and lay the tokens out in
characters without a loop (:func:`bpe_core.pieces.piece_tokens_from_byte_ranges`).  The oracles: the per-piece
paths they replace (``_encode_pieces_textbook``), each piece's ``token_spans`` on its own, the whole text's
``token_spans``, and the independent references -- Hugging Face ``tokenizers`` built from each production file
(as ``tests/engine/test_production_families.py`` builds them) and tiktoken for the trained BPE.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.counting import native
from bpe_core.interface import TrainingSpec, corpus_pieces
from bpe_core.pieces import pack_utf8, piece_tokens_from_byte_ranges, piece_tokens_from_spans, span_kind
from bpe_core.production.encodings import EncodingUnavailable
from tests.conftest import (
    assert_equal_piece_tokens,
    laid_out_tokens,
    piece_texts,
    production_or_skip,
    sample,
    stdlib_code,
    text_pieces,
)

KEYS = ["deepseek_v4", "deepseek_llm", "deepseek_coder", "falcon", "starcoder", "command_r", "mpt", "refact"]
EOT = "<|endoftext|>"

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "a",
    " lead and trail  ",
    "👩\u200d👩\u200d👧 中文字 日本語のテキスト 한국어 ▁a ▁ ▁▁b ▁▁ x▁y a ▁ 🦙🦙 🇫🇷 🏳️\u200d🌈",
    "é e\u0301 \u0301x \u0301 \u0301\u0302 a\u0308\u0301\u0323 ǅemal İstanbul ß ﬁn",
    "digits 1234567 3.14 1,000,000 ١٢٣ x² 00000000000000000000000000000000",
    "tab\tseparated\tcolumns\n\tindented\n    spaces\n\n\n\ttrailing \t\n\n\n\n\r\n\r\n  \u3000\u00a0 x",
    "\x00\x01 control\x7f chars\u200b zero\u200dwidth \ufeffbom \ufffd \U000e0041 \U0010fffd \U00040000",
    f"{EOT}x{EOT} {EOT}  {EOT}\n{EOT}word{EOT}. <|endoftext|",
    "a" * 300 + " " + "b" * 5 + "  " * 40 + "c",
    "中" * 700 + " " + "🦙" * 100 + " " + "naïveté" * 40,
    "ab" * 300 + "\n" + "🦙a" * 100 + " " + "x" * 25 + " " + "é" * 13,
]


def with_specials(tok) -> list[str]:
    """The adversarial texts, and one more holding a few of the tokenizer's added tokens between words."""
    specials = list(tok.special_tokens)[:6]
    return [*ADVERSARIAL, " x".join(specials) + " " + "".join(specials) + "y " + " ".join(specials)]


@pytest.fixture(scope="module")
def trained():
    text = sample("english") + sample("multilingual") + stdlib_code()[:10_000]
    out = [TrainingSpec("bpe", 700, pattern=p, special_tokens=(EOT,)).train(text) for p in ("gpt2", "cl100k", "o200k")]
    return [*out, out[0].with_vocab_size(400), TrainingSpec("bpe", 600, pattern="sentencepiece").train(text)]


@pytest.fixture(scope="module", params=KEYS)
def key(request):
    return request.param


@pytest.fixture(scope="module")
def tok(key):
    return production_or_skip(key)


def all_pieces(tok) -> tuple[list[str], list[bool]]:
    pieces, first = [], []
    for text in piece_texts() + with_specials(tok):
        p, f = text_pieces(tok, text)
        pieces += p
        first += f
    return pieces, first


def each_alone(tok, pieces) -> object:
    """The independent oracle: each piece's ``token_spans`` on its own."""
    return piece_tokens_from_spans([tok.token_spans(p) for p in pieces], tok.unknown_id)


def check_against_textbooks(tok, pieces, first) -> int:
    """The compiled tokens equal the textbook encoder's, and each piece's own ``token_spans`` where it is one piece.

    (A split sequence may cut a piece alone otherwise than inside its unit: DeepSeek LLM's ``" × "``.)
    """
    split = corpus_pieces(tok)
    got = split.encode(pieces, first)
    assert_equal_piece_tokens(got, tok._encode_pieces_textbook(pieces, first), pieces)
    alone = [p for p in pieces if split.split_units([p], [False])[0] == [p]]
    assert_equal_piece_tokens(split.encode(alone, [False] * len(alone)), each_alone(tok, alone), alone)
    return len(alone)


def test_production_pieces_equal_the_textbook_encoders(tok):
    pieces, first = all_pieces(tok)
    assert max(len(p.encode("utf-8")) for p in pieces) > 200  # long pieces go through the heap
    assert check_against_textbooks(tok, pieces, first) >= 0.95 * len(pieces)
    if tok.special_tokens:
        got = corpus_pieces(tok).encode(pieces, first)
        assert int(np.count_nonzero(got.kinds)) >= 3  # the added tokens, as special tokens


def test_trained_pieces_equal_the_textbook_encoders(trained):
    for tok in trained:
        pieces, first = all_pieces(tok)
        assert check_against_textbooks(tok, pieces, first) >= 0.95 * len(pieces)


def test_a_byte_without_a_token_goes_through_token_spans():
    tok = production_or_skip("starcoder")  # no token for the lead byte 0xF1 (U+40000..U+7FFFF)
    assert b"\xf1" in tok.missing_bytes
    pieces = ["a", "\U000e0041", " x\U00050000y", "中文", "\U00040000", "\U0007ffff\U0007ffff"]
    got = corpus_pieces(tok).encode(pieces, [False] * len(pieces))
    assert_equal_piece_tokens(got, each_alone(tok, pieces), pieces)


def test_many_pieces_in_threads_equal_one_call(tok, trained, monkeypatch):
    from bpe_core.bpe import piece_merge_kernel

    for t in (tok, trained[1]):
        pieces, first = text_pieces(t, sample("english") + " " + sample("multilingual"))
        whole = corpus_pieces(t).encode(pieces, first)
        with monkeypatch.context() as m:
            m.setattr(piece_merge_kernel, "PARALLEL_MIN_PIECES", 100)
            m.setattr(piece_merge_kernel.os, "cpu_count", lambda: 4)
            assert_equal_piece_tokens(corpus_pieces(t).encode(pieces, first), whole, pieces)


def test_without_compiled_kernels_the_textbook_encodes(tok, trained, monkeypatch):
    for t in (tok, trained[0]):
        pieces, first = text_pieces(t, ADVERSARIAL[5] + " " + ADVERSARIAL[10])
        compiled = corpus_pieces(t).encode(pieces, first)
        with monkeypatch.context() as m:
            m.setattr(native, "carrier", lambda: None)
            assert_equal_piece_tokens(corpus_pieces(t).encode(pieces, first), compiled, pieces)


def test_pieces_laid_end_to_end_are_the_whole_texts_tokens(tok, trained):
    for t in (tok, *trained):
        for text in piece_texts() + with_specials(t):
            want = [(s.id, s.start, s.end, span_kind(s, t.unknown_id)) for s in t.token_spans(text)]
            assert laid_out_tokens(t, text) == want, (t.name, text[:60])


def test_production_ids_are_hugging_faces(key, tok):
    from tests.engine.test_production_families import reference

    hf = reference(key)
    for text in piece_texts() + with_specials(tok):
        assert [t[0] for t in laid_out_tokens(tok, text)] == hf(text), (tok.name, text[:60])


def test_trained_ids_are_tiktokens(trained):
    for tok in trained:
        assert tok.tiktoken_exact(), tok.name
        enc = tok.to_tiktoken()
        for text in piece_texts() + with_specials(tok):
            assert [t[0] for t in laid_out_tokens(tok, text)] == enc.encode(text, allowed_special="all"), text[:60]


HARD = st.sampled_from(
    [
        *"aAzZ09 _-.,'\t\n\r\u00a0\u3000éüß中文字한🦙👍\u200d\u0301\u0308ΣσЖع▁\x00\U000e0041\U00010940\U00040000",
        EOT,
        " " * 5,
        "ab" * 20,
        "\U0001f1eb\U0001f1f7",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(HARD, max_size=60))
def test_random_texts(tok, trained, parts):
    text = "".join(parts)
    for t in (tok, trained[2]):
        pieces, first = text_pieces(t, text)
        check_against_textbooks(t, pieces, first)


def test_piece_tokens_from_byte_ranges_puts_a_partial_character_under_its_character():
    data, offsets = pack_utf8(["a🦙b", "é"])  # 🦙 is 4 bytes: tokens F0 9F, A6 99 each cover it
    got = piece_tokens_from_byte_ranges(
        data, offsets, np.array([0, 4, 5]), np.array([1, 2, 3, 4, 5]), np.array([0, 1, 3, 5, 0]),
        np.array([1, 3, 5, 6, 2]), frozenset({4}),
    )  # fmt: skip
    assert got.starts.tolist() == [0, 1, 1, 2, 0]
    assert got.ends.tolist() == [1, 2, 2, 3, 1]
    assert got.kinds.tolist() == [0, 0, 0, 1, 0]


def gguf_byte_bpe(name: str):
    """The byte-level BPE of one of llama.cpp's vocabularies with test cases, and those cases; skip without it."""
    from bpe_core.production.gguf_models import byte_bpe_from_gguf
    from bpe_core.production.gguf_vocab import load_gguf_vocab, read_test_cases

    try:
        vocab, cases = load_gguf_vocab(name), read_test_cases(name)
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))
    if vocab.model != "gpt2":
        pytest.skip(f"{name} is not byte-level BPE")
    return byte_bpe_from_gguf(vocab, name), cases


@pytest.mark.parametrize("name", ["ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf", "ggml-vocab-gpt-2.gguf"])
def test_llama_cpps_cases_by_pieces(name):
    tok, cases = gguf_byte_bpe(name)  # llama-bpe: ignore_merges (a piece that is a token is taken whole)
    for text, expected in cases:
        assert [t[0] for t in laid_out_tokens(tok, text)] == expected, (name, text)
    pieces, first = all_pieces(tok)
    check_against_textbooks(tok, pieces, first)
    if tok.ignore_merges:  # the tokens no merge reaches, alone and after a space: looked up whole, as the textbook
        not_merged = list(tok._not_merged)
        assert len(not_merged) > 500
        extra = [p for p in [*not_merged, *(" " + p for p in not_merged)] if p not in set(pieces)]
        check_against_textbooks(tok, extra, [False] * len(extra))
        whole = tok._whole_ids(not_merged, np.diff(pack_utf8(not_merged)[1]))
        assert whole.tolist() == [tok.token_ids_by_bytes[p.encode("utf-8")] for p in not_merged]
