"""Metrics against counts worked out by hand, and against tiktoken on real text."""

from __future__ import annotations

import pytest

from bpe_core import train_bpe, train_wordpiece
from bpe_core.analysis.metrics import (
    byte_lengths,
    byte_level_counts,
    byte_level_metrics_chunked,
    compute_metrics,
    compute_metrics_chunked,
    word_pieces,
    words_split_differently,
)
from bpe_core.pretokenize import aligned_chunks, pretoken_prefix, tokenizer_split
from bpe_core.production.encodings import load_encoding
from bpe_core.spans import TokenSpan, spans_from_token_bytes
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
    ref = load_encoding("gpt2")
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


def test_aligned_chunks_cut_after_a_safe_line_break_or_at_a_checked_boundary():
    # GPT-2 cuts "ab cd\nef gh" into "ab" " cd" "\n" "ef" " gh". At least 3 characters: the newline at 5
    # sits between "d" and "e", so the cut falls after it at 6; the rest has no newline, and its
    # pre-tokens end at 8 (not yet 3 characters) and 11, the end.
    assert aligned_chunks("ab cd\nef gh", 3, [("gpt2", ())]) == [(0, 6), (6, 11)]
    # With Windows line ends GPT-2 cuts "ab" " cd" "\r" "\n" "ef" " gh" and cl100k "ab" " cd" "\r\n" "ef"
    # " gh". No newline sits between two non-spaces, so the pre-tokens are scanned: the first boundary at or
    # after 3 that both share and that splits no word is 5 ("cd|\r"); from 5, at or after 8 it is 9
    # ("ef| gh"); 3 characters are left.
    crlf = "ab cd\r\nef gh"
    assert aligned_chunks(crlf, 3, [("gpt2", ()), ("cl100k", ())]) == [(0, 5), (5, 9), (9, 12)]
    # no boundary at all within the slack: cut at max_chars + slack
    assert aligned_chunks("x" * 10, 2, [("gpt2", ())], slack=2) == [(0, 4), (4, 8), (8, 10)]
    assert aligned_chunks("", 4, [("gpt2", ())]) == []
    with pytest.raises(ValueError, match="at least 1"):
        aligned_chunks("abc", 0, [("gpt2", ())])


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_chunked_metrics_equal_whole_text_metrics(name, line_end):
    # Windows line ends leave no newline between two non-spaces: every cut comes from the pre-token scan
    ref = load_encoding(name)
    text = seed_text() + "<|endoftext|>\n" + sample("multilingual")
    if line_end == "\r\n":
        text = _crlf(text)
    whole = compute_metrics(text, ref.token_spans(text), ref.vocab_size)
    chunks = aligned_chunks(text, 5_000, [tokenizer_split(ref)])
    assert len(chunks) > 10
    got = compute_metrics_chunked(text, ref.token_spans, ref.vocab_size, chunk_chars=5_000, split=tokenizer_split(ref))
    assert got == whole


def test_chunked_metrics_of_a_custom_pattern_and_wordpiece_equal_whole_text_metrics():
    text = _crlf(seed_text())
    bpe = train_bpe(text, 400, pattern=r"\w+|[^\w\s]+|\s+")
    wp = train_wordpiece(text, 300)
    for tok in (bpe, wp):
        unk = tok.unknown_id
        whole = compute_metrics(text, tok.token_spans(text), tok.vocab_size, unk)
        got = compute_metrics_chunked(text, tok.token_spans, tok.vocab_size, 3_000, unk, split=tokenizer_split(tok))
        assert got == whole


def test_prefix_gives_the_first_tokens_of_the_whole_text():
    # GPT-2 encodes "there.\n\nThe" as ... "." "\n" "\n" "The" (198, 198), but a text *ending* in ".\n\n"
    # as ... "." "\n\n" (628): a prefix must not be cut after a run of whitespace.
    ref = load_encoding("gpt2")
    text = "Hello there.\n\nThe end is near.\nAnd far away."
    assert ref.encode(text)[:5] == [15496, 612, 13, 198, 198]
    # pre-tokens "Hello" " there" "." "\n" "\n" "The": at least 13 characters can end after the first "\n"
    assert pretoken_prefix(text, 13, *tokenizer_split(ref)) == "Hello there.\n"
    # at least 14 would end after the second "\n", but at the end "\n\n" is one run: the cut moves to 17
    prefix = pretoken_prefix(text, 14, *tokenizer_split(ref))
    assert prefix == "Hello there.\n\nThe"
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
    assert compute_metrics_chunked(text, lambda t: spans, 100, unknown_id=1, split=("bert", ("[CLS]", "[UNK]"))) == m


ODD_WHITESPACE = (
    "tab\there, no\u00a0break, ideographic\u3000space, line\u2028sep, cr\r\nlf, \x1cfile-sep\x1c, em\u2003dash"
)


def _counts_of(m):
    return (m.tokens, m.characters, m.bytes, m.words, m.words_split, m.special_tokens, m.unknown_tokens)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_byte_level_counts_equal_the_span_counts(name):
    # two independent computations of the same figures: spans and word pieces, and numpy over byte offsets
    ref = load_encoding(name)
    lengths = byte_lengths(ref.vocab)
    specials = frozenset(ref.special_tokens.values())
    for text in (
        seed_text() + "<|endoftext|>" + sample("multilingual"),
        ODD_WHITESPACE,
        "👩‍👩‍👧‍👦 family, 🇫🇷 flag, e\u0301 combining, שלום עולם, 中文不用空格",
        "",
        "   \n\n  ",
    ):
        whole = compute_metrics(text, ref.token_spans(text), ref.vocab_size)
        assert _counts_of(byte_level_counts(text, ref.encode(text), lengths, specials)) == _counts_of(whole)


def test_byte_level_counts_of_a_bpe_that_cuts_characters_into_bytes():
    # at 300 tokens a BPE trained on English cuts most CJK and Cyrillic characters into byte tokens
    bpe = train_bpe(sample("english"), 300, ["<|endoftext|>"])
    text = sample("multilingual") + ODD_WHITESPACE
    spans = bpe.token_spans(text)
    assert sum(s.is_partial for s in spans) > 100
    whole = compute_metrics(text, spans, bpe.vocab_size)
    got = byte_level_counts(text, bpe.encode(text), byte_lengths(bpe.vocab), frozenset(bpe.special_tokens.values()))
    assert _counts_of(got) == _counts_of(whole)
    chunked = byte_level_metrics_chunked(
        text * 20, bpe.encode, byte_lengths(bpe.vocab), bpe.vocab_size, chunk_chars=500, split=tokenizer_split(bpe)
    )
    assert chunked == compute_metrics(text * 20, bpe.token_spans(text * 20), bpe.vocab_size)


def test_byte_level_counts_refuse_ids_that_do_not_spell_the_text():
    ref = load_encoding("gpt2")
    lengths = byte_lengths(ref.vocab)
    with pytest.raises(ValueError, match="the tokens hold 5 bytes, the text 6"):
        byte_level_counts("hello!", ref.encode("hello"), lengths)
    with pytest.raises(ValueError, match="outside the tokenizer's vocabulary"):
        byte_level_counts("hi", [len(lengths)], lengths)
