"""pretoken_prefix: the drawn part of a long text is tokenized exactly as in the whole text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import train_bpe, train_wordpiece
from bpe_core.pretokenize import pretoken_prefix, pretokenize
from tests.conftest import sample

PATTERNS = ["gpt2", "cl100k", "o200k", "bert", "none"]
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
        ".",
        "!?",
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
