"""The compiled GPT-2 counter (bpe_core.counting.kernel) counts exactly what the regex split counts.

Oracle: :func:`bpe_core.pretokenize.count_pretokens` (the ``regex`` module with
GPT-2's pattern, itself checked against tiktoken in tests/engine/test_pretokenize.py),
on real text (English with code, many scripts, Python source), on ASCII made to
hit every alternative of the pattern (contractions, whitespace runs before
letters, at the end, control characters), on non-ASCII characters right next to
ASCII, on letters, digits and whitespace of other scripts (and the code points
regex and tiktoken class differently), on random strings over alphabets mixing
all of these, and on invalid UTF-8 (the same error as the regex path).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.counting.stream import KERNELS_ENV, count_file, count_pretokens_fast, count_text
from bpe_core.pretokenize import count_pretokens

pytest.importorskip("numba")

EOT = "<|endoftext|>"


def _regex_counts(text: str, specials=(EOT,)) -> tuple[dict[bytes, int], int, int]:
    counts, n_special = count_pretokens(text, "gpt2", specials)
    return {k.encode("utf-8"): v for k, v in counts.items()}, sum(counts.values()), n_special


def _check(text: str, specials=(EOT,)) -> None:
    got = count_pretokens_fast(text, tuple(specials), force=True)
    assert got is not None
    assert got == _regex_counts(text, specials)


ADVERSARIAL_ASCII = [
    "it's 'S 'll ''s ' x' 're' 'd've 'm'm 'l 'v 'r l'll",  # contractions, and near misses
    "a  b   c    d\t\te\n\nf \n g\r\n h \x0b\x0c i",  # whitespace runs before letters
    "trailing spaces   ",
    "   leading",
    "\n",
    " ",
    "x\x1c\x1d\x1e\x1fy \x00\x01 \x7f!!",  # controls: not \s for regex, so punctuation-like
    "12 345 6789 1a2b 3.14 -5 ++x -- ==>",
    "(hello) [world] {x}: a,b;c. 'quote' \"dq\" `bt`",
    "end with apostrophe'",
    "'",
    "a'",
]


@pytest.mark.parametrize("text", ADVERSARIAL_ASCII)
def test_ascii_alternatives_match_the_regex(text):
    _check(text)
    _check(text + EOT + text + EOT)  # segments cut by a special token, one empty


@pytest.mark.parametrize(
    "text",
    [
        "café au lait, naïve résumé",
        "é",
        "éa b",
        "a bé",
        "x日本語y z",
        "hello\u00a0world  \u3000 spaces\u2028lines",  # non-ASCII whitespace
        "emoji 😀😀 a😀b 'é 's",
        "abc" * 50 + "é" + "def " * 50,  # a region far from any cut on one side
        "x. é y. z. ü w.\nq. 日本 r.  é\n\né. ".replace("q", "q" * 3) * 3,  # many regions, split in one pass
        "é. a. ü" + EOT + "ü b. é" + EOT + "é",  # regions at the edges of segments
    ],
)
def test_non_ascii_regions_go_to_the_regex(text):
    _check(text)


def test_real_text_matches_the_regex(seeds, multilingual, code):
    _check(seeds)
    _check(multilingual)
    _check(code)
    _check(EOT.join([seeds, multilingual, code]))


ALPHABET = st.sampled_from([*"ab Z09'sltmdrve \t\n\r\x0b\x0c\x1c.,!-_", "é", "日", "\u00a0", "😀", EOT])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=80).map("".join))
def test_random_strings_match_the_regex(text):
    _check(text)


def test_counting_a_file_in_processes_is_the_same_with_and_without_kernels(tmp_path, monkeypatch, seeds, multilingual):
    path = tmp_path / "corpus.txt"
    path.write_text((EOT.join([seeds, multilingual]) + "\n") * 40, encoding="utf-8")
    runs = {}
    for mode in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, mode)
        runs[mode] = count_file(path, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 16)
    assert runs["compiled"].word_counts == runs["python"].word_counts
    assert runs["compiled"].pretokens == runs["python"].pretokens
    assert runs["compiled"].special_occurrences == runs["python"].special_occurrences >= 40


def test_other_patterns_and_small_inputs_keep_the_regex_path(monkeypatch, seeds):
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    cl = count_text(seeds, "cl100k", [EOT], num_workers=1)  # not GPT-2's pattern: regex split
    counts, _ = count_pretokens(seeds, "cl100k", [EOT])
    assert cl.word_counts == {k.encode(): v for k, v in counts.items()}
    monkeypatch.setenv(KERNELS_ENV, "bogus")
    with pytest.raises(ValueError, match="BPE_CORE_KERNELS must be auto, python or compiled"):
        count_text(seeds, "gpt2", [EOT], num_workers=1)


def test_unpaired_surrogates_fall_back_to_the_regex_path_and_its_message():
    assert count_pretokens_fast("a \ud800 b", (), force=True) is None
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        count_text("a \ud800 b " * 10, "gpt2", num_workers=1)


@pytest.mark.parametrize(
    "text",
    [
        "\u3000\u3000a \u3000a\u2028\u2028b\u00a0 x \u00a0\u00a0",  # non-ASCII whitespace runs, at the end
        "a\u0301b \u0301\u0301 x\u0301",  # combining marks: neither letters nor digits
        "\u0663\u0664 x\u0665 \u00b2\u00bd",  # digits of other scripts, superscripts and fractions
        "\u0558\u058b ab\u0558 \u208f\u1e900",  # code points regex and tiktoken class differently
        "\U00012400\U00012401 \U0001f600x \U0010fffd",  # beyond the BMP
        "'s\u00e9 '\u00e9 \u00e9's",  # contractions next to non-ASCII
    ],
)
def test_non_ascii_classes_and_whitespace_match_the_regex(text):
    _check(text)
    _check(text + EOT + text)


WIDE = st.sampled_from(
    [*"ab Z09's \t\n\r.!", "é", "日", "\u00a0", "\u3000", "\u2028", "\u0301", "\u0663", "\u00b2", "\u0558", "😀", EOT]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WIDE, max_size=60).map("".join))
def test_random_unicode_strings_match_the_regex(text):
    _check(text)


@pytest.mark.parametrize(
    "bad",
    [b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80", b"\xf0\x9f"],
)
def test_invalid_utf8_gives_the_regex_paths_message(tmp_path, monkeypatch, bad):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"some text\n" * 50 + b"x " + bad + EOT.encode() + b" more\n")
    messages = []
    for mode in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, mode)
        with pytest.raises(ValueError, match="is not valid UTF-8") as err:
            count_file(path, "gpt2", [EOT], num_workers=1)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
