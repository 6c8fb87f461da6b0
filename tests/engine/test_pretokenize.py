"""Pre-tokenization: named patterns against published examples and independent splitters."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import pre_tokenizers

from bpe_core.pretokenize import (
    GPT2_ORIGINAL_PATTERN,
    PATTERNS,
    count_pretokens,
    iter_pretoken_strings,
    pretokenize,
    resolve_pattern,
    split_special,
    validate_special_tokens,
)


def test_gpt2_split_published_in_seed_004():
    # The lecture seed prints GPT-2's pre-tokenizer on "Hello, how are  you?" (two spaces before
    # "you", as the offsets show): Hello (0,5) , (5,6) Ġhow (6,10) Ġare (10,14) Ġ (14,15)
    # Ġyou (15,19) ? (19,20) -- Ġ is GPT-2's printable stand-in for a space.
    got = [(p.text, (p.start, p.end)) for p in pretokenize("Hello, how are  you?", "gpt2")]
    assert got == [
        ("Hello", (0, 5)),
        (",", (5, 6)),
        (" how", (6, 10)),
        (" are", (10, 14)),
        (" ", (14, 15)),
        (" you", (15, 19)),
        ("?", (19, 20)),
    ]


def test_gpt2_split_published_in_seed_002():
    # Seed 002 prints ['Hello', "'s", ' World', '123', ' ', ' !!', ' '] for the GPT-2 pattern; the
    # lone ' ' before ' !!' means two spaces there (the page collapsed them).
    got = [p.text for p in pretokenize("Hello's World123  !! ", "gpt2")]
    assert got == ["Hello", "'s", " World", "123", " ", " !!", " "]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1 \t\n\r'sldmtvre!.,é語😀\u00a0\u2003")), max_size=60))
def test_tiktoken_form_of_gpt2_pattern_equals_original(text):
    assert regex.findall(PATTERNS["gpt2"], text) == regex.findall(GPT2_ORIGINAL_PATTERN, text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1 \t\n\r\x0b\x0c\x1c\x85'sldmtvre!.,_é語😀\u00a0\u2003")), max_size=60))
def test_gpt2_fast_split_equals_regex_findall(text):
    # iter_pretoken_strings matches ASCII stretches of GPT-2 text with the standard re module and
    # cuts the text where a visible ASCII character is followed by a space or a newline; the
    # regex module's own findall on the whole text is the independent reference.
    rx = regex.compile(PATTERNS["gpt2"])
    assert iter_pretoken_strings(text, rx) == rx.findall(text)


def test_gpt2_fast_split_on_mixed_real_text(english, multilingual, code):
    # Real text: ASCII code and English around multilingual lines, so the split alternates
    # between the two matchers many times; again regex.findall on the whole text is the reference.
    rx = regex.compile(PATTERNS["gpt2"])
    text = "\n".join(
        f"{a}\n{b}\n{c}"
        for a, b, c in zip(english.splitlines(), multilingual.splitlines(), code.splitlines(), strict=False)
    )
    assert not text.isascii() and regex.search("[!-~][ \n]", text)  # both matchers and cuts are exercised
    for t in (text, english, code, text + "\n \n", " \n" + text):
        assert iter_pretoken_strings(t, rx) == rx.findall(t)
    # windows at many offsets put the non-ASCII characters at every position of the
    # 256-character blocks the fast path scans
    for k in range(0, 3000, 37):
        t = text[k : k + 4000]
        assert iter_pretoken_strings(t, rx) == rx.findall(t)


def test_bert_pattern_matches_hugging_face_bert_pretokenizer(multilingual, english):
    hf = pre_tokenizers.BertPreTokenizer()
    for text in (english, multilingual, "Hello, how are  you?", "don't stop--ever!!! (ok) [x] {y} ~z~ `q`"):
        expected = [(w, span) for w, span in hf.pre_tokenize_str(text)]
        got = [(p.text, (p.start, p.end)) for p in pretokenize(text, "bert") if not p.text.isspace()]
        assert got == expected


def test_none_pattern_keeps_lines():
    got = [p.text for p in pretokenize("a b, c\n\nd e\n", "none")]
    assert got == ["a b, c", "\n\n", "d e", "\n"]


@pytest.mark.parametrize("name", list(PATTERNS))
def test_pretokens_cover_text(name, multilingual, code):
    for text in (multilingual, code):
        pts = pretokenize(text, name, ["<|endoftext|>"])
        assert "".join(p.text for p in pts) == text
        assert all(text[p.start : p.end] == p.text for p in pts)


def test_custom_pattern_gaps_are_kept():
    # \d+ matches only digits; the letters between become pre-tokens of their own, so nothing is lost
    assert [p.text for p in pretokenize("ab12cd3", r"\d+")] == ["ab", "12", "cd", "3"]


def test_special_split_longest_first():
    assert split_special("x<a><b>y<a>", ["<a>", "<a><b>"]) == [
        ("x", False),
        ("<a><b>", True),
        ("y", False),
        ("<a>", True),
    ]


def test_count_pretokens_removes_specials():
    counts, n_special = count_pretokens("hi hi<|eot|>hi", "gpt2", ["<|eot|>"])
    assert counts == {"hi": 2, " hi": 1} and n_special == 1


@pytest.mark.parametrize(
    ("tokens", "error", "message"),
    [
        (["<s>", ""], ValueError, "special token #2 is empty"),
        (["<s>", "<s>"], ValueError, "'<s>' is given twice"),
        ("<s>", TypeError, "list of strings, not one string"),
        ([1], TypeError, "must be a str"),
    ],
)
def test_bad_special_tokens(tokens, error, message):
    with pytest.raises(error, match=message):
        validate_special_tokens(tokens)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(unclosed", "invalid pattern: missing \\)"), ("a*", "matches the empty string"), ("", "pattern is empty")],
)
def test_bad_patterns(pattern, message):
    with pytest.raises(ValueError, match=message):
        resolve_pattern(pattern)
