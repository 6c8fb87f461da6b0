"""Every bad input of issue 7, at the engine level: a precise error, or correct behaviour.

The page-level counterparts (messages shown, text and settings kept) are in
tests/app/test_bad_input_page.py.
"""

from __future__ import annotations

import pytest

from bpe_core import decode_text_upload, train_bpe, train_wordpiece
from tests.conftest import sample

BOTH = ["bpe", "wordpiece"]


def train(kind: str, text: str, vocab: int = 600, specials=None):
    if kind == "bpe":
        return train_bpe(text, vocab, ["<|endoftext|>"] if specials is None else specials)
    return train_wordpiece(text, vocab) if specials is None else train_wordpiece(text, vocab, specials)


@pytest.mark.parametrize("kind", BOTH)
def test_empty_text_trains_nothing_and_says_why(kind):
    tok = train(kind, "")
    assert tok.vocab_size == tok.min_vocab_size
    assert tok.training.stop_reason and "no pair is left" in tok.training.stop_reason
    assert tok.encode("") == [] and tok.decode([]) == ""


@pytest.mark.parametrize("text", [" ", "   \n\t  \n", "\u3000\u00a0 "])
def test_whitespace_only_text(text):
    tok = train("bpe", text)
    # byte-level BPE keeps every byte: the whitespace round-trips exactly
    assert tok.decode(tok.encode(text)) == text
    wp = train("wordpiece", text)
    # WordPiece has no words to learn from, and whitespace is not a token
    assert wp.encode(text) == [] and wp.training.stop_reason


@pytest.mark.parametrize("kind", BOTH)
def test_single_character(kind):
    tok = train(kind, "x")
    assert tok.training.stop_reason  # nothing to merge
    assert tok.decode(tok.encode("x")) == "x"


def test_text_with_no_repeated_pair_stops_early_with_the_size_reached():
    # "abcdefg": 6 adjacent pairs, each seen once; BPE merges count-1 pairs too, so after 6 merges
    # the whole word is one token and nothing is left: vocabulary 256 + 6 = 262, asked 300.
    tok = train_bpe("abcdefg", 300)
    assert tok.vocab_size == 262
    assert "262 tokens instead of 300" in tok.training.stop_reason
    assert tok.encode("abcdefg") == [261]


@pytest.mark.parametrize(("kind", "minimum"), [("bpe", "at least 257"), ("wordpiece", "at least")])
def test_vocab_size_below_the_base_alphabet(kind, minimum):
    with pytest.raises(ValueError, match=minimum):
        train(kind, sample("english"), vocab=10)


@pytest.mark.parametrize(
    ("specials", "message"),
    [(["", "<s>"], "is empty"), (["<s>", "<s>"], "given twice"), ("<s>", "not one string")],
)
@pytest.mark.parametrize("kind", BOTH)
def test_bad_special_tokens(kind, specials, message):
    with pytest.raises((ValueError, TypeError), match=message):
        train(kind, "some text", specials=specials)


def test_overlapping_special_tokens_take_the_longest_match():
    tok = train_bpe("a<x>b<x><y>c", 300, ["<x>", "<x><y>"])
    assert tok.encode("<x><y>") == [257] and tok.encode("<x>") == [256]


@pytest.mark.parametrize(
    "text",
    [
        "nul\x00byte\x00\x00 in text",
        "combining: e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937",
        "right-to-left: \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 \u200fmark\u200e",
        "emoji ZWJ: \U0001f469\u200d\U0001f4bb \U0001f3f3\ufe0f\u200d\U0001f308 "
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    ],
)
@pytest.mark.parametrize("kind", BOTH)
def test_odd_characters_round_trip(kind, text):
    tok = train(kind, sample("multilingual") + text)
    if kind == "bpe":
        assert tok.decode(tok.encode(text)) == text
    else:
        assert tok.decode(tok.encode(text)) == tok.normalize(text)
    spans = tok.token_spans(text)
    assert all(0 <= s.start <= s.end <= len(text) for s in spans)


@pytest.mark.parametrize("kind", BOTH)
def test_lone_surrogate_is_a_precise_error(kind):
    tok = train(kind, sample("english"))
    for fn in (tok.encode, tok.token_spans):
        with pytest.raises(ValueError, match="surrogate"):
            fn("ok \udc80 not ok")
    with pytest.raises(ValueError, match="surrogate"):
        train(kind, "text \ud83d alone")


def test_very_long_word_without_spaces():
    word = ("tokenization" * 9000)[:100_000]  # 100 KB, one pre-token
    tok = train_bpe(word, 400)
    ids = tok.encode(word)
    assert tok.decode(ids) == word and len(ids) < 100_000 / 10
    wp = train_wordpiece(word + " short words here", 200)
    # longer than 100 characters: WordPiece (like BERT) gives [UNK] for the whole word
    assert wp.encode(word) == [wp.unknown_id]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty \\(0 bytes\\)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "looks like a binary file"),
        ("Caf\u00e9 cr\u00e8me na\u00efve".encode("latin-1"), "not valid UTF-8: byte 0xE9 at offset 3.*Latin-1"),
    ],
)
def test_bad_uploads(data, message):
    with pytest.raises(ValueError, match=message):
        decode_text_upload(data, "upload.txt")


def test_upload_over_the_limit_and_bom():
    with pytest.raises(ValueError, match="over the 1 MiB upload limit"):
        decode_text_upload(b"a" * (2**20 + 1), "big.txt", max_bytes=2**20)
    assert decode_text_upload("\ufeffhello".encode(), "bom.txt") == "hello"
    with pytest.raises(TypeError):
        decode_text_upload("not bytes", "x.txt")  # type: ignore[arg-type]
