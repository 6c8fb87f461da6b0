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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.counting import pretoken_kernel as pk
from bpe_core.pretokenize import PATTERNS as PATTERNS_BY_NAME
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


def kernel_cuts(pattern, units: list[str], specials=()) -> list[list[int]]:
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
    runner = pattern if isinstance(pattern, pk.Program) else pk.machine_for(pattern)
    cut_off, cuts = pk.split_units(np.frombuffer(data, dtype=np.uint8), offsets, runner, np.array(occ, dtype=np.int64))
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


def test_distinct_pieces_counted_by_bytes():
    units = [" the", " cat", " the", "the", " the,", "x"]
    data = np.frombuffer("".join(units).encode(), dtype=np.uint8)
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u) for u in units], out=offsets[1:])
    cut_off, cuts = pk.split_units(data, offsets, pk.machine_for(sorted(pk.MACHINES)[0]))
    first = np.array([True, False, False, False, False, False])
    d = pk.distinct_pieces(data, cut_off, cuts, first, np.array([1, 2, 3, 4, 5, 6]))
    pieces = [bytes(data[s : s + n]).decode() for s, n in zip(d.starts, d.lengths, strict=True)]
    got = {(p, bool(f)): int(c) for p, f, c in zip(pieces, d.first, d.counts, strict=True)}
    assert got == {(" the", True): 1, (" cat", False): 2, (" the", False): 3 + 5, ("the", False): 4,
                   (",", False): 5, ("x", False): 6}  # fmt: skip
    assert [pieces[r] for r in d.refs] == [" the", " cat", " the", "the", " the", ",", "x"]


def test_distinct_pieces_equal_a_dict_count_through_table_growth():
    """Thousands of distinct pieces (the table grows twice), long ones hashed, a first unit's piece apart.

    Oracle: a dict keyed by ``(bytes, starts a document)`` in order of first sight.
    """
    rng = random.Random(7)
    words = [" " + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzé中") for _ in range(rng.randint(1, 14)))
             for _ in range(12_000)]  # fmt: skip
    units = [" ".join(words[i : i + 40]) for i in range(0, len(words), 40)] + [words[0], words[1] * 2]
    data = np.frombuffer("".join(units).encode(), dtype=np.uint8)
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u.encode()) for u in units], out=offsets[1:])
    cut_off, cuts = pk.split_units(data, offsets, pk.machine_for(sorted(pk.MACHINES)[0]))
    first = np.zeros(len(units), dtype=bool)
    first[[0, len(units) - 1]] = True
    unit_counts = np.arange(1, len(units) + 1, dtype=np.int64)
    got = pk.distinct_pieces(data, cut_off, cuts, first, unit_counts)

    index: dict = {}
    counts: list[int] = []
    refs = []
    for u in range(len(units)):
        s = offsets[u]
        for k in range(cut_off[u], cut_off[u + 1]):
            key = (bytes(data[s : cuts[k]]), bool(first[u] and k == cut_off[u]))
            j = index.setdefault(key, len(index))
            counts += [0] * (len(index) - len(counts))
            counts[j] += int(unit_counts[u])
            refs.append(j)
            s = cuts[k]
    assert len(index) > 4096  # past the first table and its first growth
    pieces = list(index)
    assert got.counts.tolist() == counts and got.refs.tolist() == refs
    assert got.first.tolist() == [f for _p, f in pieces]
    assert bytes(got.packed) == b"".join(p for p, _f in pieces)
    assert bytes(got.joined) == b"".join(p + b"\0" for p, _f in pieces)
    assert [bytes(data[a : a + n]) for a, n in zip(got.starts, got.lengths, strict=True)] == [p for p, _f in pieces]
    assert np.diff(got.offsets).tolist() == got.lengths.tolist()


def test_a_workspace_reused_gives_what_fresh_arrays_give():
    """One :class:`Workspace` through splits of different sizes (cuts and table growing, then shrinking).

    Oracle: the same calls without a workspace (fresh arrays).
    """
    texts = [sample("english")[:3000], "1,2;3 4!" * 900, sample("multilingual")[:2000]]
    work = pk.Workspace()
    for text in texts:
        units = text.split("\n") or [text]
        data = np.frombuffer("".join(units).encode(), dtype=np.uint8)
        offsets = np.zeros(len(units) + 1, dtype=np.int64)
        np.cumsum([len(u.encode()) for u in units], out=offsets[1:])
        first, counts = np.zeros(len(units), dtype=bool), np.ones(len(units), dtype=np.int64)
        for runner in (pk.machine_for(sorted(pk.MACHINES)[0]), pk.program_for((r"\p{N}", r" ?\p{L}+|\s+|[^\s]"))):
            want_off, want = pk.split_units(data, offsets, runner)
            got_off, got = pk.split_units(data, offsets, runner, work=work)
            assert np.array_equal(got_off, want_off) and np.array_equal(got, want)
            fresh = pk.distinct_pieces(data, want_off, want, first, counts)
            reused = pk.distinct_pieces(data, got_off, got, first, counts, work)
            for name in ("starts", "lengths", "counts", "first", "refs", "packed", "offsets", "joined"):
                assert np.array_equal(getattr(reused, name), getattr(fresh, name)), name


# ---------------------------------------------------------------------------
# programs: the split sequences no machine runs (DeepSeek, Falcon, Gemma 4's pieces, SentencePiece-style units)


def production_sequences() -> dict[str, tuple[str, ...]]:
    """Every split sequence of the production tokenizers that the compiled programs run, by name."""
    from bpe_core.production.char_bpe import PIECE_PATTERNS
    from bpe_core.production.gguf_models import PRE_SPLITS
    from bpe_core.production.registry import load_production
    from bpe_core.production.sentencepiece_model import UNIT_PATTERN

    out = {name: patterns for name, (patterns, _ignore) in PRE_SPLITS.items() if pk.machine_for(patterns) is None}
    out["deepseek_v4"] = load_production("deepseek_v4").splits.patterns
    out["gemma4 pieces"] = PIECE_PATTERNS
    out["sentencepiece units"] = (UNIT_PATTERN,)
    out["sentencepiece"] = (PATTERNS_BY_NAME["sentencepiece"],)
    out["bert"] = (PATTERNS_BY_NAME["bert"],)
    return out


SEQUENCES = production_sequences()


def sequence_cuts(patterns: tuple[str, ...], text: str, specials=()) -> list[int]:
    """The oracle: Hugging Face's Sequence of Isolated splits, as SplitSequence (each level on each piece)."""
    from bpe_core.production.byte_bpe import SplitSequence

    seq = SplitSequence(patterns)
    out, pos = [], 0
    for segment, is_special in split_special(text, specials):
        for p in [segment] if is_special else seq.split(segment):
            pos += len(p.encode("utf-8"))
            out.append(pos)
    return out


def check_program(patterns: tuple[str, ...], texts: list[str], specials=()) -> None:
    program = pk.program_for(patterns)
    assert program is not None, patterns
    got = kernel_cuts(program, texts, specials)
    for text, cuts in zip(texts, got, strict=True):
        assert cuts == sequence_cuts(patterns, text, specials), (patterns, text)


def test_every_production_split_sequence_has_a_program():
    assert {"falcon", "deepseek-coder", "deepseek-llm", "deepseek_v4", "gemma4 pieces"} <= set(SEQUENCES)
    for name, patterns in SEQUENCES.items():
        assert pk.program_for(patterns) is not None, name


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_programs_on_adversarial_and_real_text(name):
    patterns = SEQUENCES[name]
    extra = ["x  \n", " \n", "a \n\n", "\n\n  \n", "  ", "a\u2581\u2581b \u2581 c\u2581", "1234567 12 1 x1234y ١٢٣٤٥",
             "a$b+c<d=e>f^g~h|i`j 'S 'ſ 'K", "（全角）！？。「」 ‘quote’ “dq” \u3000x"]  # fmt: skip
    check_program(patterns, ADVERSARIAL + extra)
    check_program(patterns, [sample("english"), sample("multilingual"), stdlib_code()[:30_000], seed_text()[:30_000]])
    check_program(patterns, [" a<|endoftext|>b", "<|endoftext|> \n", "x.<|endoftext|>\n\n"], ("<|endoftext|>",))


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_programs_on_every_code_point_in_context(name):
    rng = random.Random(11)
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    chars = [chr(c) for c in cps[::41]] + list(ALPHABET) + ["\u2581", "\u3000", "\uff01", "\u201c"]
    texts = []
    for ch in chars:
        left, right = rng.choice(ALPHABET), rng.choice(ALPHABET)
        texts.append(f"{left}{ch}{right} {ch}{ch}x'{ch} a{ch}\n{ch} \n")
    check_program(SEQUENCES[name], texts)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET + "\u2581\u3000\uff01\u201c一가", max_size=40), min_size=1, max_size=6))
def test_programs_on_random_strings(texts):
    for patterns in SEQUENCES.values():
        check_program(patterns, texts)


@pytest.mark.parametrize(
    "patterns",
    [
        (r"\s+$",),  # $ at the end and before a final newline, after giving back characters
        (r"[a-z]+$|\s+$|\S+",),
        (r"\s+(?!\S)|\s+",),
        (r"a++b|a+b|\w",),  # possessive: never gives back
        (r"[ab]{2,3}|x{2}|\d{1,}",),
        (r"(?i:'s|'ll)|'(?:[dm]|ve)|(?i:k+)|\p{L}+|.",),  # groups written out, case-insensitive (ſ, K)
        (r"(?=\d)\w+|(?!\d)\w|\W",),
        (r"\p{N}", r"[\p{P}\$]+", r" ?\p{L}+|\s+(?!\S)"),
    ],
)
def test_programs_follow_the_regex_module_quantifiers_anchors_and_groups(patterns):
    more = ["aab aaab ab b", "abc \n", "x \n \n", "K k \u212a 'S 'ſ 'LL 'Ve 'd", "12ab 3 c4 ___", "$$ a"]
    texts = [*ADVERSARIAL, *more]
    check_program(patterns, texts)


@pytest.mark.parametrize(
    "source",
    [
        r"(\w+)",  # a capture
        r"\w+?",  # lazy
        r"(?<=a)b",  # look-behind
        r"(?i)\w+",  # a global flag
        r"(?:ab)+",  # a quantified group
        r"a*(?:b|ab)",  # a group after an atom that gives back characters
        r"\w+|x*",  # an alternative that matches nothing
        r"\bx",  # an anchor other than $
        r"[[:alpha:]]",  # a POSIX class
        r"\x41+",  # an escape not read
        "'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s",  # tiktoken's
    ],
)
def test_programs_refuse_what_they_do_not_read(source):
    assert pk.program_for(source) is None
    assert pk.program_for(("\\p{N}", source)) is None


PROGRAM_ATOMS = ["a", "b", "[ab]", r"\s", r"\S", r"\d", r"\p{L}", ".", r"[^a\s]", " ", "\n", "(?i:A)"]
PROGRAM_QUANTIFIERS = ["", "?", "*", "+", "{1,2}", "{2}", "{0,3}", "++", "*+", "?+", "{1,}"]
PROGRAM_ANCHORS = ["$", r"(?!\S)", r"(?!a)", "(?=b)", r"(?=\s)"]


@st.composite
def random_pattern(draw) -> str:
    """A random pattern of the read syntax: alternatives of quantified classes, anchors and look-aheads."""
    alts = []
    for _ in range(draw(st.integers(1, 4))):
        parts = []
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 4)) == 0:
                parts.append(draw(st.sampled_from(PROGRAM_ANCHORS)))
            else:
                parts.append(draw(st.sampled_from(PROGRAM_ATOMS)) + draw(st.sampled_from(PROGRAM_QUANTIFIERS)))
        # one atom that must match a character, so that the alternative cannot match nothing
        must = draw(st.sampled_from(PROGRAM_ATOMS)) + draw(st.sampled_from(["", "+", "{2}", "{1,2}", "++", "{1,}"]))
        parts.insert(draw(st.integers(0, len(parts))), must)
        alts.append("".join(parts))
    return "|".join(alts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    st.lists(random_pattern(), min_size=1, max_size=2),
    st.lists(st.text(alphabet="aAbB \n\t1é\u2581,", max_size=24), min_size=1, max_size=4),
)
def test_programs_match_the_regex_module_on_random_patterns(patterns, texts):
    """The matcher's backtracking against the ``regex`` module itself, pattern by random pattern."""
    from hypothesis import assume

    try:
        compile_pattern(patterns[0]), compile_pattern(patterns[-1])
    except ValueError:
        assume(False)
    assume(pk.program_for(tuple(patterns)) is not None)
    check_program(tuple(patterns), texts)
