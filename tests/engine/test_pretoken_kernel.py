"""The compiled pre-tokenizer (bpe_core.counting.pretoken_kernel) cuts exactly where the regex cuts.

Oracle: :func:`bpe_core.pretokenize.iter_pretoken_strings` (the ``regex`` module on each
pattern, with tiktoken's classes for the code points the two engines see differently;
itself checked against tiktoken in test_pretokenize.py and test_tiktoken_compat.py),
on every registered pattern: real text, adversarial text aimed at each alternative
(contractions in both cases and ``ſ``, prefixes before letters, case changes inside
words, digit runs, punctuation followed by newlines and slashes, whitespace runs at the
end and before non-spaces, marks after every kind of character), every code point
between two contexts, and random strings over an alphabet mixing all of these.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.counting import pretoken_kernel as pk
from bpe_core.pretokenize import compile_pattern, iter_pretoken_strings, split_special
from tests.conftest import sample, seed_text, stdlib_code

pytest.importorskip("numba")

import bpe_core.production.encodings  # noqa: F401 -- registers the open models' patterns

PATTERNS = sorted(pk.MACHINES)

ALPHABET = (
    "aAzZsStTmMdDrReEvVlLſ'’ \t\n\r\x0b\x0c\x85\u00a0\u2028\u3000"
    '09٣²½.,;:!?/\\-_()[]{}<>"#$%&*+=@^`|~'
    "éÉßǅǈⅷ\u0301\u0308\u20dd\u064b中文日本語한국어ابجกขαβΓΔжЖ😀👩\u200d\ufe0f\U00010940\U0001e900"
)


def regex_cuts(pattern: str, text: str, specials=()) -> list[int]:
    rx = compile_pattern(pattern)
    out, pos = [], 0
    for segment, _special in split_special(text, specials):
        pieces = [segment] if _special else iter_pretoken_strings(segment, rx)
        for p in pieces:
            pos += len(p.encode("utf-8"))
            out.append(pos)
    return out


def kernel_cuts(pattern: str, units: list[str], specials=()) -> list[list[int]]:
    data = "".join(units).encode("utf-8")
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u.encode("utf-8")) for u in units], out=offsets[1:])
    occ = []
    if specials:
        from bpe_core.pretokenize.special import special_regex

        rx = special_regex(tuple(specials))
        for k, u in enumerate(units):
            base = int(offsets[k])
            pos = 0
            for seg, is_special in split_special(u, specials):
                n = len(seg.encode("utf-8"))
                if is_special:
                    occ.append((base + pos, base + pos + n))
                pos += n
        assert rx is not None
    cut_off, cuts = pk.split_units(
        np.frombuffer(data, dtype=np.uint8), offsets, pk.machine_for(pattern), np.array(occ, dtype=np.int64)
    )
    return [(cuts[cut_off[k] : cut_off[k + 1]] - offsets[k]).tolist() for k in range(len(units))]


def check(pattern: str, texts: list[str], specials=()) -> None:
    got = kernel_cuts(pattern, texts, specials)
    for text, cuts in zip(texts, got, strict=True):
        assert cuts == regex_cuts(pattern, text, specials), (pattern, text)


ADVERSARIAL = [
    "it's 'S 'll ''s ' x' 're' 'd've 'm'm 'l 'v 'r l'll IT'S WE'RE They'Ve Iſ'ſ 'ſ X'ſ",
    "a  b   c    d\t\te\n\nf \n g\r\n h \x0b\x0c i\n\n\n  j \n\t\nk",
    "trailing spaces   ",
    "trailing newline  \n",
    "trailing mixed \n  \n ",
    "   leading",
    "\n",
    " ",
    "x\x1c\x1d\x1e\x1fy \x00\x01 \x7f!!",
    "12 345 6789 1a2b 3.14 -5 ++x -- ==> 1234567 ١٢٣٤ ²³ ½",
    "(hello) [world] {x}: a,b;c. 'quote' \"dq\" `bt` x.\ny.\r\n\nz/\n/a//\nb",
    "camelCase HTMLParser iPhone ABCdef aBC ǅemal ǈubljana ÉCOLE école Straße STRASSE",
    "e\u0301 \u0301x a\u0301\u0302b \u0301 \u20dd \u064bا زَيد मैं",
    "日本語のテキスト中文 한국어 混ぜ書きtext テキストABC",
    "emoji 😀😀 a😀b 👩\u200d👩\u200d👧 🏳️\u200d🌈 x\ufe0fy",
    "\U00010940 \U0001e900\U0001e922 new letters",
    "end with apostrophe'",
    "'",
    "a'",
    "",
]


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: str(PATTERNS.index(p)))
def test_adversarial_and_real_text(pattern):
    check(pattern, ADVERSARIAL)
    check(pattern, [sample("english"), sample("multilingual"), stdlib_code()[:30_000], seed_text()[:30_000]])
    check(pattern, [" a<|endoftext|>b", "<|endoftext|> \n", "x.<|endoftext|>\n\n"], ("<|endoftext|>",))


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: str(PATTERNS.index(p)))
def test_every_code_point_in_context(pattern):
    rng = random.Random(7)
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    chars = [chr(c) for c in cps[::37]] + list(ALPHABET)
    texts = []
    for ch in chars:
        left, right = rng.choice(ALPHABET), rng.choice(ALPHABET)
        texts.append(f"{left}{ch}{right} {ch}{ch}x'{ch} a{ch}")
    check(pattern, texts)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=6))
def test_random_strings(texts):
    for pattern in PATTERNS:
        check(pattern, texts)


def test_count_pieces_counts_distinct_pieces_by_bytes():
    units = [" the", " cat", " the", "the", " the,", "x"]
    data = np.frombuffer("".join(units).encode(), dtype=np.uint8)
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u) for u in units], out=offsets[1:])
    cut_off, cuts = pk.split_units(data, offsets, pk.machine_for(sorted(pk.MACHINES)[0]))
    first = np.array([True, False, False, False, False, False])
    starts, lens, counts, flags, refs = pk.count_pieces(data, cut_off, cuts, first, np.array([1, 2, 3, 4, 5, 6]))
    pieces = [bytes(data[s : s + n]).decode() for s, n in zip(starts, lens, strict=True)]
    got = {(p, bool(f)): int(c) for p, f, c in zip(pieces, flags, counts, strict=True)}
    assert got == {(" the", True): 1, (" cat", False): 2, (" the", False): 3 + 5, ("the", False): 4,
                   (",", False): 5, ("x", False): 6}  # fmt: skip
    assert [pieces[r] for r in refs] == [" the", " cat", " the", "the", " the", ",", "x"]
