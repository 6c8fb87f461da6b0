"""The compiled BPE over characters (Mistral v1's SentencePiece BPE, Gemma 4) equals the textbook per-piece encoders.

:func:`bpe_core.bpe.piece_merge_kernel.encode_pieces` encodes all the distinct pieces of a corpus in one
call; the oracles are the per-piece paths it replaces (each piece through the ``sentencepiece`` package and
``token_spans`` for Mistral v1, :meth:`CharBPE.token_spans` for Gemma 4) and the independent references:
the ``sentencepiece`` package on the whole text, llama.cpp's own test cases for Gemma 4's vocabulary, and a
toy SentencePiece model built here whose scores tie and whose pieces hold characters that are no pieces.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.analysis.corpus import text_units, unit_cut_table
from bpe_core.analysis.metrics import compute_metrics
from bpe_core.counting import native
from bpe_core.interface import corpus_pieces
from bpe_core.pieces import KIND_BYTE_FALLBACK, span_kind
from bpe_core.production.encodings import EncodingUnavailable
from bpe_core.production.sentencepiece_model import SentencePieceTokenizer
from tests.conftest import (
    assert_equal_piece_tokens,
    laid_out_tokens,
    piece_texts,
    production_or_skip,
    sample,
    text_pieces,
)

KEYS = ["mistral_v1", "gemma4"]

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "a",
    " lead and trail  ",
    "👩\u200d👩\u200d👧 中文字 日本語のテキスト 한국어 ▁a ▁ ▁▁b ▁▁ x▁y a ▁ 🦙🦙 🇫🇷",
    "digits 1234567 3.14 1,000,000 ١٢٣ x² 00000000000000000000000000000000",
    "tab\tseparated\tcolumns\n\tindented\n    spaces\n\n\n\ttrailing \t\n\n\n\n",
    "\x00\x01 control\x7f chars\u200b zero\u200dwidth \ufeffbom \ufffd \U000e0041 \U0010fffd",
    "<s> </s> <unk> <bos> <|turn> <0x41> <pad>",
    "a" * 300 + " " + "b" * 5 + "  " * 40 + "c",
    "中" * 2000,
    "ab" * 700 + "\n" + "🦙a" * 300,
]


@pytest.fixture(scope="module", params=KEYS)
def tok(request):
    return production_or_skip(request.param)


def textbook(tok, pieces, first):
    if isinstance(tok, SentencePieceTokenizer):
        return tok._encode_units_textbook(pieces, first)
    return tok._encode_pieces_textbook(pieces, first)


def test_compiled_pieces_equal_the_textbook_encoder(tok):
    pieces, first = [], []
    for text in piece_texts() + ADVERSARIAL:
        p, f = text_pieces(tok, text)
        pieces += p
        first += f
    # every piece also as the start of a document (SentencePiece's dummy ▁ in front of each)
    pieces, first = pieces + pieces, first + [True] * len(pieces)
    got = corpus_pieces(tok).encode(pieces, first)
    assert_equal_piece_tokens(got, textbook(tok, pieces, first), pieces)
    assert int(np.count_nonzero(got.kinds & KIND_BYTE_FALLBACK)) > 100  # emoji, CJK, controls fell back


def test_many_pieces_in_threads_equal_one_call(tok, monkeypatch):
    from bpe_core.bpe import piece_merge_kernel

    pieces, first = text_pieces(tok, sample("english") + " " + sample("multilingual"))
    whole = corpus_pieces(tok).encode(pieces, first)
    monkeypatch.setattr(piece_merge_kernel, "PARALLEL_MIN_PIECES", 100)
    monkeypatch.setattr(piece_merge_kernel.os, "cpu_count", lambda: 4)
    threaded = corpus_pieces(tok).encode(pieces, first)
    assert_equal_piece_tokens(threaded, whole, pieces)


def test_without_compiled_kernels_the_textbook_encodes(tok, monkeypatch):
    pieces, first = text_pieces(tok, ADVERSARIAL[5])
    compiled = corpus_pieces(tok).encode(pieces, first)
    monkeypatch.setattr(native, "carrier", lambda: None)
    assert_equal_piece_tokens(corpus_pieces(tok).encode(pieces, first), compiled, pieces)


def test_pieces_laid_end_to_end_are_the_whole_texts_tokens(tok):
    for text in piece_texts() + ADVERSARIAL:
        want = [(s.id, s.start, s.end, span_kind(s, tok.unknown_id)) for s in tok.token_spans(text)]
        assert laid_out_tokens(tok, text) == want, text[:60]


def test_mistral_ids_are_sentencepieces():
    import sentencepiece

    tok = production_or_skip("mistral_v1")
    sp = sentencepiece.SentencePieceProcessor(model_proto=_model_bytes(tok))
    for text in piece_texts() + ADVERSARIAL:
        assert [t[0] for t in laid_out_tokens(tok, text)] == sp.encode(text), text[:60]


def _model_bytes(tok) -> bytes:
    return tok._sp.serialized_model_proto()


def test_gemma_ids_are_llama_cpps_test_cases():
    from bpe_core.production.gguf_vocab import read_test_cases

    tok = production_or_skip("gemma4")
    try:
        cases = read_test_cases("ggml-vocab-gemma-4.gguf")
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))
    assert len(cases) >= 46
    for text, expected in cases:
        assert [t[0] for t in laid_out_tokens(tok, text)] == expected, text


def test_gemma_byte_fallback_tokens_are_counted_as_byte_fallback():
    tok = production_or_skip("gemma4")
    text = "a 🦙 b"
    spans = tok.token_spans(text)
    assert [s.is_byte_fallback for s in spans] == [False, False, True, True, True, True, False]
    assert compute_metrics(text, spans, tok.vocab_size, tok.unknown_id).byte_fallback_tokens == 4
    assert [t[3] for t in laid_out_tokens(tok, text)] == [0, 0, *[KIND_BYTE_FALLBACK] * 4, 0]


# --- a toy SentencePiece model: tied scores, characters that are no pieces ---------------------------------


def toy_model(normal: list[tuple[str, float]]) -> bytes:
    """A SentencePiece BPE model with byte fallback: ``<unk> <s> </s>``, the 256 byte pieces, then ``normal``."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.byte_fallback = True
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = True
    m.normalizer_spec.escape_whitespaces = True
    m.normalizer_spec.remove_extra_whitespaces = False
    for piece, kind in (("<unk>", pb.ModelProto.SentencePiece.UNKNOWN), ("<s>", pb.ModelProto.SentencePiece.CONTROL),
                        ("</s>", pb.ModelProto.SentencePiece.CONTROL)):  # fmt: skip
        m.pieces.add(piece=piece, score=0.0, type=kind)
    for b in range(256):
        m.pieces.add(piece=f"<0x{b:02X}>", score=0.0, type=pb.ModelProto.SentencePiece.BYTE)
    for piece, score in normal:
        m.pieces.add(piece=piece, score=score, type=pb.ModelProto.SentencePiece.NORMAL)
    return m.SerializeToString()


TOY = [
    ("\u2581", -1.0), ("a", -1.0), ("b", -1.0), ("c", -1.0), ("x", -1.0),
    ("ab", -2.0), ("ba", -2.0), ("bc", -2.0), ("ca", -2.0),  # ties: the leftmost pair merges first
    ("xy", -3.0), ("yz", -3.0), ("éa", -2.5),  # y, z and é are no pieces: they merge, or fall back to bytes
    ("aba", -4.0), ("\u2581a", -5.0), ("\u2581ab", -2.0), ("abc", -2.0), ("cab", -6.0), ("xyz", -6.0),
    ("\u2581\u2581", -7.0),
]  # fmt: skip


@pytest.fixture(scope="module")
def toy():
    import sentencepiece

    model = toy_model(TOY)
    return SentencePieceTokenizer(model, "toy"), sentencepiece.SentencePieceProcessor(model_proto=model)


def test_toy_model_ties_and_characters_that_are_no_pieces(toy):
    tok, sp = toy
    assert tok._merge_tables.is_token.size > tok.vocab_size  # y, z, é: symbols past the vocabulary
    long = ["abcabcabab" * 5, "xyzyzxyéa" * 6, "b" + "ab" * 40]  # past SHORT_PIECE: the heap's loop
    for text in ["aba", "abca", "bab", "xyz y z éa é", "cabab aba  ab", "  xyzyz", "ééa", *long, " ".join(long)]:
        assert [t[0] for t in laid_out_tokens(tok, text)] == sp.encode(text) == tok.encode(text), text
        want = [(s.id, s.start, s.end, span_kind(s, tok.unknown_id)) for s in tok.token_spans(text)]
        assert laid_out_tokens(tok, text) == want, text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet="abcxyzé▁ \n🦙", min_size=0, max_size=30), min_size=1, max_size=8))
def test_toy_model_on_random_text(toy, texts):
    tok, sp = toy
    pieces, first = [], []
    for text in texts:
        p, f = text_pieces(tok, text)
        pieces += p
        first += f
    got = corpus_pieces(tok).encode(pieces, first)
    assert_equal_piece_tokens(got, textbook(tok, pieces, first), pieces)
    for text in texts:
        assert [t[0] for t in laid_out_tokens(tok, text)] == sp.encode(text)


# --- the cuts -----------------------------------------------------------------------------------------------


def textbook_split(tok):
    """The split the fast one must equal: the pattern's pre-tokens (Mistral v1), :meth:`CharBPE._split_textbook`."""
    from bpe_core.pieces import regex_splitter
    from bpe_core.production.sentencepiece_model import UNIT_PATTERN

    return regex_splitter(UNIT_PATTERN) if isinstance(tok, SentencePieceTokenizer) else tok._split_textbook


def units_of(tok, texts) -> list[str]:
    table = unit_cut_table([corpus_pieces(tok)])
    return [u for text in texts for u in text_units(text, table)]


def test_fast_cuts_equal_the_textbook_cuts(tok):
    extra = ["<bos>a b<|turn>\n\n<eos> x>\u2581</y >▁</ a>▁<b", "a\n  b \n\n c  \u2581\u2581d\u2581 \n"]
    units = units_of(tok, piece_texts() + ADVERSARIAL + extra)
    split, want = corpus_pieces(tok), textbook_split(tok)
    for some in (units, [*units, " x\uffffy"]):  # all units in one findall; a unit with the separator: one by one
        pieces, sizes = split.split_units(some, [False] * len(some))
        assert pieces == [p for u in some for p in want(u)]
        assert sizes.tolist() == [len(want(u)) for u in some]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet="ab<>/▁ \n\t中🦙", max_size=40), max_size=6))
def test_fast_cuts_on_random_text(tok, texts):
    want = textbook_split(tok)
    units = units_of(tok, texts)
    pieces, sizes = corpus_pieces(tok).split_units(units, [False] * len(units))
    assert pieces == [p for u in units for p in want(u)]
    assert sizes.tolist() == [len(want(u)) for u in units]
