"""Metrics against counts worked out by hand, and against tiktoken on real text."""

from __future__ import annotations

import pytest

from bpe_core.metrics import (
    chunk_bounds,
    compute_metrics,
    compute_metrics_chunked,
    word_pieces,
    words_split_differently,
)
from bpe_core.reference import load_reference
from bpe_core.spans import TokenSpan, safe_prefix, spans_from_token_bytes
from tests.conftest import sample, seed_text


def _spans(text: str, pieces: list[bytes], ids: list[int] | None = None, special_ids=frozenset()):
    ids = ids if ids is not None else list(range(1000, 1000 + len(pieces)))
    assert b"".join(pieces) == text.encode("utf-8")
    return spans_from_token_bytes(text, ids, pieces, special_ids=special_ids)


def test_metrics_hand_counted():
    text = "Tokens split words, don't they? 🙂 ok ok"
    # a hand-made cut, GPT-2 style; 🙂 is F0 9F 99 82 and is cut into two byte tokens
    pieces = [b"Tok", b"ens", b" split", b" words", b",", b" don", b"'t", b" they", b"?", b" ",
              b"\xf0\x9f", b"\x99\x82", b" ok", b" ok"]  # fmt: skip
    ids = [1000, 1001, 1002, 1003, 11, 1004, 1005, 1006, 30, 220, 500, 501, 1007, 1007]
    m = compute_metrics(text, _spans(text, pieces, ids), vocab_size=2000)
    # characters: Tokens 6 + split 5 + "words," 6 + don't 5 + "they?" 5 + 🙂 1 + ok 2 + ok 2 = 32, plus 7 spaces = 39
    assert m.characters == 39
    # bytes: 38 one-byte characters + 4 for 🙂 = 42
    assert m.bytes == 42
    assert m.tokens == 14
    assert m.bytes_per_token == 42 / 14 == 3.0
    assert m.chars_per_token == 39 / 14
    # words: Tokens, split, "words,", don't, "they?", 🙂, ok, ok
    assert m.words == 8
    # split: Tok|ens, words|",", don|'t, they|?, and 🙂 (two byte tokens); not split, ok, ok
    assert m.words_split == 5
    assert m.words_split_share == 5 / 8
    assert m.fertility == 14 / 8
    assert m.distinct_tokens == 13  # " ok" (1007) twice
    assert m.vocab_size == 2000 and m.vocab_used == 13 / 2000
    assert m.special_tokens == 0


def test_metrics_with_a_special_token_inside_a_word():
    text = "a<|endoftext|>b c"
    m = compute_metrics(text, _spans(text, [b"a", b"<|endoftext|>", b"b", b" c"], [97, 256, 98, 257], {256}), 300)
    # two words: "a<|endoftext|>b" (three tokens: split) and "c"
    assert (m.words, m.words_split, m.special_tokens, m.tokens) == (2, 1, 1, 4)
    assert m.characters == 17 and m.bytes == 17


def test_metrics_of_empty_and_whitespace_text():
    m = compute_metrics("", [], 256)
    assert (m.tokens, m.words, m.bytes_per_token, m.fertility, m.vocab_used) == (0, 0, 0.0, 0.0, 0.0)
    m = compute_metrics(" \n", _spans(" \n", [b" \n"], [5]), 256)
    assert (m.tokens, m.words, m.words_split, m.fertility) == (1, 0, 0, 0.0)


def test_metrics_agree_with_tiktoken_on_real_text():
    text = seed_text()
    ref = load_reference("gpt2")
    ids = ref.encoding.encode(text, allowed_special="all")  # tiktoken itself
    m = compute_metrics(text, ref.token_spans(text), ref.vocab_size)
    assert m.tokens == len(ids)
    assert m.distinct_tokens == len(set(ids))
    assert m.bytes == len(text.encode("utf-8"))
    assert m.characters == len(text)
    assert m.words == len(text.split())
    assert m.vocab_used == len(set(ids)) / 50257


def test_word_pieces_clip_tokens_to_words():
    text = "the cat"
    spans = _spans(text, [b"th", b"e c", b"at"])  # a token running over the space belongs to both words
    assert word_pieces(text, spans) == [((0, 2, None), (2, 3, None)), ((4, 5, None), (5, 7, None))]


UNHAPPY = "unhappy cats"


@pytest.mark.parametrize(
    ("cuts", "expected"),
    [
        # same cuts: nothing differs
        ([[b"un", b"happy", b" cats"], [b"un", b"happy", b" cats"]], []),
        # a leading space inside a token is not a difference
        ([[b"un", b"happy", b" cats"], [b"un", b"happy", b" ", b"cats"]], []),
        # unh|appy vs un|happy, and cat|s vs cats
        ([[b"un", b"happy", b" cats"], [b"unh", b"appy", b" cat", b"s"]], [(0, 7), (8, 12)]),
        # three tokenizers: the word differs as soon as one of them cuts it differently
        ([[b"un", b"happy", b" cats"], [b"un", b"happy", b" cats"], [b"unhappy", b" cats"]], [(0, 7)]),
        # one tokenizer: nothing to compare with
        ([[b"unh", b"appy", b" cat", b"s"]], []),
    ],
)
def test_words_split_differently(cuts, expected):
    assert words_split_differently(UNHAPPY, [_spans(UNHAPPY, c) for c in cuts]) == expected


def test_different_byte_cuts_of_one_character_differ():
    text = "hi 🙂"  # 🙂 = F0 9F 99 82
    a = _spans(text, [b"hi", b" ", b"\xf0\x9f", b"\x99\x82"])
    b = _spans(text, [b"hi", b" ", b"\xf0", b"\x9f\x99\x82"])
    c = _spans(text, [b"hi", b" \xf0\x9f", b"\x99\x82"])  # same cut inside the character as a
    assert words_split_differently(text, [a, b]) == [(3, 4)]
    assert words_split_differently(text, [a, c]) == []


def test_chunk_bounds_cut_after_a_line_break_before_a_word():
    text = "ab cd\nef\n gh ij\nkl.\n\nmn op qr"  # 29 characters, \n at 5, 8, 15, 19 and 20
    # At most 10 characters. From 0: the \n at 8 is followed by a space, the one at 5 sits between "d" and
    # "e" -> cut at 6. From 6: the \n at 15 sits between "j" and "k" -> cut at 16. From 16: the \n at 20
    # follows another \n, the one at 19 is followed by one -> hard cut at 26; the rest is 3 characters.
    assert chunk_bounds(text, 10) == [(0, 6), (6, 16), (16, 26), (26, 29)]
    assert chunk_bounds("x" * 10, 4) == [(0, 4), (4, 8), (8, 10)]  # no line break: hard cuts
    assert chunk_bounds("", 4) == []
    with pytest.raises(ValueError, match="at least 1"):
        chunk_bounds("abc", 0)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_chunked_metrics_equal_whole_text_metrics(name):
    ref = load_reference(name)
    text = seed_text() + "<|endoftext|>\n" + sample("multilingual")
    whole = compute_metrics(text, ref.token_spans(text), ref.vocab_size)
    chunks = chunk_bounds(text, 5_000)
    assert len(chunks) > 10
    assert compute_metrics_chunked(text, ref.token_spans, ref.vocab_size, chunk_chars=5_000) == whole


def test_safe_prefix_gives_the_first_tokens_of_the_whole_text():
    # GPT-2 encodes "there.\n\nThe" as ... "." "\n" "\n" "The" (198, 198), but a text *ending* in ".\n\n"
    # as ... "." "\n\n" (628): a prefix must not be cut after a run of whitespace.
    ref = load_reference("gpt2")
    text = "Hello there.\n\nThe end is near.\nAnd far away."
    assert ref.encode(text)[:5] == [15496, 612, 13, 198, 198]
    prefix = safe_prefix(text, 35)
    assert prefix == "Hello there.\n\nThe end is near.\n"
    assert ref.encode(text)[: len(ref.encode(prefix))] == ref.encode(prefix)


def test_unknown_tokens_are_counted_apart_from_specials():
    # WordPiece-style spans: "Café" could not be spelled and became [UNK] (id 1); the literal text "[UNK]"
    # and "[CLS]" are special tokens; "ok" is an ordinary token. Whitespace is covered by no token.
    text = "[CLS] Café ok [UNK]"
    spans = [
        TokenSpan(2, b"[CLS]", "[CLS]", 0, 5, is_special=True),
        TokenSpan(1, b"[UNK]", "Café", 6, 10, is_special=True),
        TokenSpan(40, b"ok", "ok", 11, 13),
        TokenSpan(1, b"[UNK]", "[UNK]", 14, 19, is_special=True),
    ]
    m = compute_metrics(text, spans, 100, unknown_id=1)
    assert (m.tokens, m.special_tokens, m.unknown_tokens, m.words, m.words_split) == (4, 2, 1, 4, 0)
    assert compute_metrics(text, spans, 100).special_tokens == 3  # without an unknown id, all three are special
    assert compute_metrics_chunked(text, lambda t: spans, 100, unknown_id=1) == m
