"""pretoken_prefix: the drawn part of a long text is tokenized exactly as in the whole text."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import train_bpe, train_wordpiece
from bpe_core.pretokenize import aligned_chunks, pretoken_prefix, pretokenize, shared_pretoken_prefix
from tests.conftest import sample

PATTERNS = ["gpt2", "cl100k", "o200k", "bert", "none", "sentencepiece"]
# custom patterns (no fast path): one with a look-ahead that sees past a cut, one with a look-behind
CUSTOM = [r"\w+(?=\s)|\w+|\s+|[^\w\s]", r"(?<=\s)\w+|\w|\s+|[^\w\s]+"]
SPECIALS = ("<|endoftext|>",)

# a small alphabet that exercises every pattern's branches: letters, digits, contractions,
# runs of spaces/tabs/newlines (GPT-2's \s+(?!\S) look-ahead), punctuation, CJK, a special token
pieces = st.sampled_from(
    [
        "a",
        "bc",
        "Déf",
        "12",
        "3456",
        "'s",
        "'ll",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        " \n",
        "\r\n",
        ".",
        "!?",
        "/",
        "中文",
        "🙂",
        "<|endoftext|>",
    ]
)
texts = st.lists(pieces, min_size=1, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=texts, cut=st.integers(min_value=0, max_value=60), pattern=st.sampled_from(PATTERNS))
def test_prefix_pretokens_are_the_whole_texts_first_pretokens(text, cut, pattern):
    prefix = pretoken_prefix(text, cut, pattern, SPECIALS)
    assert text.startswith(prefix) and len(prefix) >= min(cut, len(text))
    whole = [(p.start, p.end, p.is_special) for p in pretokenize(text, pattern, SPECIALS)]
    part = [(p.start, p.end, p.is_special) for p in pretokenize(prefix, pattern, SPECIALS)]
    assert part == [w for w in whole if w[1] <= len(prefix)]


@pytest.fixture(scope="module")
def english_tokenizers():
    text = sample("english")
    return text, train_bpe(text, 600, SPECIALS), train_wordpiece(text, 600)


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=1, max_value=3000))
def test_drawn_tokens_are_the_first_tokens_of_the_whole_text(english_tokenizers, cut):
    text, bpe, wp = english_tokenizers
    for tok in (bpe, wp):
        prefix = pretoken_prefix(text, cut, tok.pattern, tuple(tok.special_tokens))
        part = tok.token_spans(prefix)
        assert part == tok.token_spans(text)[: len(part)]


def test_one_huge_word_is_kept_whole():
    # 100 KB with no boundary inside: the only exact prefix is the whole word
    text = "x" * 50_000 + "y" * 50_000 + " tail"
    assert pretoken_prefix(text, 20_000, "gpt2") == "x" * 50_000 + "y" * 50_000
    # past the slack it gives up and cuts at max_chars + slack
    assert len(pretoken_prefix(text, 20_000, "gpt2", slack=1_000)) == 21_000


def test_cap_inside_a_special_token_cuts_after_it():
    text = "ab<|endoftext|>cd"
    assert pretoken_prefix(text, 4, "gpt2", SPECIALS) == "ab<|endoftext|>"
    # without the special token registered, GPT-2 cuts "ab", "<|", "endoftext", "|>", "cd":
    # a boundary falls exactly at 4, and the next one after 5 is at 13
    assert pretoken_prefix(text, 4, "gpt2") == "ab<|"
    assert pretoken_prefix(text, 5, "gpt2") == "ab<|endoftext"


def test_gpt2_whitespace_run_is_not_cut_where_the_lookahead_differs():
    # In "a   b" GPT-2 cuts "a", "  ", " b" (the run leaves its last space to the word).
    # A cut after "a" + "  " would re-match "  " as one pre-token -- the same -- but a cut at
    # a boundary inside the run must be refused if the re-match differs; the result always
    # agrees with the whole text's pre-tokens.
    text = "a   b"
    prefix = pretoken_prefix(text, 2, "gpt2")
    whole = [(p.start, p.end) for p in pretokenize(text, "gpt2")]
    part = [(p.start, p.end) for p in pretokenize(prefix, "gpt2")]
    assert part == [w for w in whole if w[1] <= len(prefix)]


def test_a_shared_prefix_rechecks_the_pre_tokens_before_an_earlier_boundary():
    # found by hypothesis: GPT-2 cuts " \na" after the space, cl100k only after "\n"; a prefix " \n" would be
    # one GPT-2 pre-token (its look-ahead sees the end), so the shared prefix must run on to the text's end
    text = " \na"
    assert [(p.start, p.end) for p in pretokenize(text, "gpt2")] == [(0, 1), (1, 2), (2, 3)]
    assert [(p.start, p.end) for p in pretokenize(" \n", "gpt2")] == [(0, 2)]
    assert shared_pretoken_prefix(text, 1, [("gpt2", ()), ("cl100k", ())]) == text


def _pretokens(text: str, pattern: str, specials=SPECIALS, offset: int = 0) -> list[tuple[int, int, bool]]:
    return [(p.start + offset, p.end + offset, p.is_special) for p in pretokenize(text, pattern, specials)]


splits = st.lists(
    st.tuples(st.sampled_from(PATTERNS + CUSTOM), st.sampled_from([(), SPECIALS])), min_size=1, max_size=3
)


@settings(max_examples=300, deadline=None)
@given(text=texts, cut=st.integers(min_value=0, max_value=60), splits=splits)
def test_shared_prefix_is_exact_for_every_tokenizer(text, cut, splits):
    prefix = shared_pretoken_prefix(text, cut, splits)
    assert text.startswith(prefix) and len(prefix) >= min(cut, len(text))
    for pattern, specials in splits:
        whole = _pretokens(text, pattern, specials)
        assert _pretokens(prefix, pattern, specials) == [w for w in whole if w[1] <= len(prefix)]


@settings(max_examples=300, deadline=None)
@given(text=texts, size=st.integers(min_value=1, max_value=30), splits=splits)
def test_aligned_chunks_tokenize_exactly_as_the_whole_text(text, size, splits):
    chunks = aligned_chunks(text, size, splits)
    assert "".join(text[a:b] for a, b in chunks) == text
    assert all(b - a >= size for a, b in chunks[:-1])
    words = [m.span() for m in regex.finditer(r"\S+", text)]
    for _a, cut in chunks[:-1]:
        assert not any(ws < cut < we for ws, we in words), f"a word runs over the cut at {cut}"
    for pattern, specials in splits:
        pieces = [t for a, b in chunks for t in _pretokens(text[a:b], pattern, specials, a)]
        assert pieces == _pretokens(text, pattern, specials)


def test_windows_line_ends_are_cut_exactly():
    # every newline follows a carriage return, so no cut comes from the safe-newline rule
    text = "First line, with words.\r\nSecond line: more words here.\r\n" * 200
    for pattern in PATTERNS:
        prefix = pretoken_prefix(text, 1_000, pattern)
        assert _pretokens(prefix, pattern) == [w for w in _pretokens(text, pattern) if w[1] <= len(prefix)]
        chunks = aligned_chunks(text, 700, [(pattern, ())])
        assert len(chunks) > 5
        assert [t for a, b in chunks for t in _pretokens(text[a:b], pattern, (), a)] == _pretokens(text, pattern)


def test_sentencepiece_words_hold_newlines_and_are_never_cut_there():
    # "beta\ngamma" is one sentencepiece word: the newline shortcut the other named patterns take must not apply
    text = "alpha beta\ngamma delta,\nepsilon zeta\n" * 300
    expect = _pretokens(text, "sentencepiece")
    start = text.index(" beta")
    assert (start, start + 11, False) in expect and text[start : start + 11] == " beta\ngamma"
    prefix = pretoken_prefix(text, 5_000, "sentencepiece")
    assert _pretokens(prefix, "sentencepiece") == [w for w in expect if w[1] <= len(prefix)]
    chunks = aligned_chunks(text, 700, [("sentencepiece", ())])
    assert len(chunks) > 5
    assert [t for a, b in chunks for t in _pretokens(text[a:b], "sentencepiece", (), a)] == expect
