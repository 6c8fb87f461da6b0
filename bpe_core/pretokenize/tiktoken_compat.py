r"""Pre-tokenization exactly as tiktoken's regex engine does it, character for character.

tiktoken runs its split patterns with Rust's ``fancy-regex`` (on the ``regex``
crate's Unicode tables); this project runs the same pattern sources with
Python's ``regex`` module, whose Unicode tables are newer.  For the characters
assigned in the Unicode versions between the two, a class such as ``\p{L}``
disagrees: ``regex`` calls U+10940 (Unicode 17) a letter, tiktoken's engine
does not, so the same ranks would give different ids.

This module closes the gap without slowing the common case:

* :data:`ATOM_DIFFS` lists, for every one-character *atom* of the named
  tiktoken patterns (a bracketed class, ``\p{..}``, ``\s``, ...), the code
  points ``regex`` matches and tiktoken does not (``minus``) and the other way
  round (``plus``).  It was made by :func:`probe_atoms` -- which asks tiktoken
  itself, by running each atom as a split pattern over every code point -- and
  a test checks it against the installed tiktoken and ``regex``.
* :func:`exact_pattern` rewrites a pattern source so that each atom matches
  exactly tiktoken's set: ``A`` becomes ``(?:(?![minus])A|[plus])``.
* :func:`disputed_chars` is a compiled class of every code point on which some
  atom of a pattern disagrees.  Pre-tokenization (:mod:`bpe_core.pretokenize`)
  runs the pattern as written, which is fast, and only a text holding such a
  character goes through the rewritten, slower pattern.

Patterns other than the named tiktoken ones (BERT-style, a user's regex) are
this project's own and follow the ``regex`` module's tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import regex

Ranges = tuple[tuple[int, int], ...]
"""Inclusive code-point ranges ``((first, last), ...)``, ascending."""

_ATOM = regex.compile(r"\[(?:\\.|[^\]\\])+\]|\\[pP]\{[^}]+\}|\\[sSdDwW]")
"""A one-character atom of a split pattern: a bracketed class (no nesting), ``\\p{..}``/``\\P{..}`` or a shorthand."""

# fmt: off
ATOM_DIFFS: dict[str, tuple[Ranges, Ranges]] = {}
"""Atom -> (code points only ``regex`` matches, code points only tiktoken matches); see :func:`probe_atoms`.

Filled from :data:`_TABLE` below; atoms absent from it agree on every code point."""
# fmt: on


def _ranges(code_points: Iterable[int]) -> Ranges:
    cps = sorted(set(code_points))
    out: list[tuple[int, int]] = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return tuple(out)


def atoms(source: str) -> list[str]:
    r"""The distinct one-character atoms of a pattern source, in order of first appearance.

    >>> atoms(r" ?\p{L}++| ?[^\s\p{L}\p{N}]++|\s")
    ['\\p{L}', '[^\\s\\p{L}\\p{N}]', '\\s']
    """
    return list(dict.fromkeys(_ATOM.findall(source)))


def probe_atoms(atom_list: Sequence[str]) -> dict[str, tuple[Ranges, Ranges]]:
    """Ask tiktoken and ``regex`` which code points each atom matches, and return where they differ.

    Each atom is run as a tiktoken split pattern (over 256 single-byte ranks)
    on a string of every code point but the surrogates: tiktoken keeps exactly
    the characters its engine matches.  Takes about 40 ms per atom.

    Args:
        atom_list: atoms as :func:`atoms` returns them.

    Returns:
        ``{atom: (minus, plus)}`` for the atoms that differ (see :data:`ATOM_DIFFS`).

    Raises:
        ImportError: tiktoken is not installed.
    """
    import tiktoken

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    ranks = {bytes([b]): b for b in range(256)}
    out: dict[str, tuple[Ranges, Ranges]] = {}
    for atom in atom_list:
        enc = tiktoken.Encoding("probe", pat_str=atom, mergeable_ranks=ranks, special_tokens={})
        theirs = set(bytes(enc.encode_ordinary(every)).decode("utf-8"))
        ours = set(regex.findall(atom, every))
        if theirs != ours:
            out[atom] = (_ranges(map(ord, ours - theirs)), _ranges(map(ord, theirs - ours)))
    return out


def _class_body(ranges: Ranges) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


@lru_cache(maxsize=32)
def exact_pattern(source: str) -> str:
    """``source`` rewritten so that every atom matches exactly the code points tiktoken's engine matches.

    Atoms without a difference stay as written, so a pattern without any is
    returned unchanged.

    Args:
        source: a split pattern's regex source.

    Returns:
        The rewritten source (``regex`` module syntax).
    """

    def rewrite(m: regex.Match) -> str:
        atom = m.group()
        diff = ATOM_DIFFS.get(atom)
        if diff is None:
            return atom
        minus, plus = diff
        core = f"(?![{_class_body(minus)}]){atom}" if minus else atom
        return f"(?:{core}|[{_class_body(plus)}])" if plus else f"(?:{core})"

    return _ATOM.sub(rewrite, source)


@lru_cache(maxsize=32)
def disputed_chars(source: str) -> frozenset[str]:
    """The characters on which some atom of ``source`` disagrees with tiktoken (empty when none).

    A ``frozenset`` of one-character strings (a ``regex`` class of the same
    ranges searches a text about 40 times slower than a set or table look-up).
    """
    ranges = [r for atom in atoms(source) for part in ATOM_DIFFS.get(atom, ((), ())) for r in part]
    return frozenset(chr(c) for a, b in ranges for c in range(a, b + 1))


# The table, made by `format_table(TIKTOKEN_SOURCES)` with tiktoken 0.14.0 and regex 2026.11.15;
# tests/engine/test_tiktoken_compat.py checks it against the installed packages.
_TABLE: dict[str, tuple[Ranges, Ranges]] = {
    "\\p{L}": (
        (
            (1368, 1368),
            (1419, 1420),
            (2191, 2191),
            (3164, 3164),
            (3292, 3292),
            (8335, 8335),
            (8349, 8351),
            (42958, 42959),
            (42962, 42962),
            (42964, 42964),
            (42973, 42973),
            (42978, 42978),
            (42993, 42993),
            (43884, 43885),
            (67515, 67519),
            (67904, 67929),
            (69317, 69319),
            (69337, 69358),
            (72458, 72458),
            (73136, 73179),
            (73201, 73201),
            (93856, 93880),
            (93883, 93907),
            (94194, 94195),
            (100344, 100351),
            (101590, 101594),
            (101641, 101664),
            (101760, 101874),
            (101888, 102801),
            (102816, 102866),
            (110883, 110888),
            (110952, 110952),
            (120486, 120486),
            (122655, 122660),
            (122667, 122753),
            (122768, 122774),
            (122829, 122879),
            (124608, 124638),
            (124640, 124642),
            (124644, 124645),
            (124647, 124653),
            (124656, 124660),
            (124670, 124671),
            (177978, 177983),
            (178206, 178206),
            (183970, 183981),
            (205744, 210041),
            (249856, 261183),
        ),
        (),
    ),
    "\\p{N}": (
        ((73184, 73193), (74863, 74863), (74869, 74879), (75088, 75398), (94196, 94198)),
        (),
    ),
    "[^\\s\\p{L}\\p{N}]": (
        (),
        (
            (1368, 1368),
            (1419, 1420),
            (2191, 2191),
            (3164, 3164),
            (3292, 3292),
            (8335, 8335),
            (8349, 8351),
            (42958, 42959),
            (42962, 42962),
            (42964, 42964),
            (42973, 42973),
            (42978, 42978),
            (42993, 42993),
            (43884, 43885),
            (67515, 67519),
            (67904, 67929),
            (69317, 69319),
            (69337, 69358),
            (72458, 72458),
            (73136, 73179),
            (73184, 73193),
            (73201, 73201),
            (74863, 74863),
            (74869, 74879),
            (75088, 75398),
            (93856, 93880),
            (93883, 93907),
            (94194, 94198),
            (100344, 100351),
            (101590, 101594),
            (101641, 101664),
            (101760, 101874),
            (101888, 102801),
            (102816, 102866),
            (110883, 110888),
            (110952, 110952),
            (120486, 120486),
            (122655, 122660),
            (122667, 122753),
            (122768, 122774),
            (122829, 122879),
            (124608, 124638),
            (124640, 124642),
            (124644, 124645),
            (124647, 124653),
            (124656, 124660),
            (124670, 124671),
            (177978, 177983),
            (178206, 178206),
            (183970, 183981),
            (205744, 210041),
            (249856, 261183),
        ),
    ),
    "[^\\r\\n\\p{L}\\p{N}]": (
        (),
        (
            (1368, 1368),
            (1419, 1420),
            (2191, 2191),
            (3164, 3164),
            (3292, 3292),
            (8335, 8335),
            (8349, 8351),
            (42958, 42959),
            (42962, 42962),
            (42964, 42964),
            (42973, 42973),
            (42978, 42978),
            (42993, 42993),
            (43884, 43885),
            (67515, 67519),
            (67904, 67929),
            (69317, 69319),
            (69337, 69358),
            (72458, 72458),
            (73136, 73179),
            (73184, 73193),
            (73201, 73201),
            (74863, 74863),
            (74869, 74879),
            (75088, 75398),
            (93856, 93880),
            (93883, 93907),
            (94194, 94198),
            (100344, 100351),
            (101590, 101594),
            (101641, 101664),
            (101760, 101874),
            (101888, 102801),
            (102816, 102866),
            (110883, 110888),
            (110952, 110952),
            (120486, 120486),
            (122655, 122660),
            (122667, 122753),
            (122768, 122774),
            (122829, 122879),
            (124608, 124638),
            (124640, 124642),
            (124644, 124645),
            (124647, 124653),
            (124656, 124660),
            (124670, 124671),
            (177978, 177983),
            (178206, 178206),
            (183970, 183981),
            (205744, 210041),
            (249856, 261183),
        ),
    ),
    "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]": (
        (
            (661, 661),
            (1368, 1368),
            (1419, 1420),
            (1480, 1481),
            (2191, 2191),
            (2899, 2900),
            (3164, 3164),
            (3292, 3292),
            (6863, 6896),
            (8335, 8335),
            (8349, 8351),
            (42958, 42958),
            (42962, 42962),
            (42964, 42964),
            (42973, 42973),
            (42978, 42978),
            (42993, 42993),
            (43884, 43885),
            (67515, 67519),
            (67904, 67929),
            (69317, 69319),
            (69323, 69327),
            (69337, 69358),
            (69360, 69371),
            (72458, 72458),
            (72544, 72551),
            (73136, 73179),
            (73200, 73201),
            (93856, 93880),
            (94194, 94195),
            (100344, 100351),
            (101590, 101594),
            (101641, 101664),
            (101760, 101874),
            (101888, 102801),
            (102816, 102866),
            (110883, 110888),
            (110952, 110952),
            (119079, 119080),
            (119376, 119378),
            (119387, 119388),
            (119391, 119391),
            (119424, 119425),
            (122688, 122688),
            (122696, 122696),
            (122698, 122698),
            (122701, 122701),
            (122705, 122705),
            (122728, 122728),
            (122730, 122730),
            (122732, 122732),
            (122734, 122734),
            (122738, 122738),
            (122740, 122740),
            (122742, 122742),
            (122744, 122744),
            (122746, 122746),
            (122748, 122748),
            (122750, 122750),
            (122752, 122753),
            (122829, 122879),
            (124608, 124638),
            (124640, 124661),
            (124670, 124671),
            (177978, 177983),
            (178206, 178206),
            (183970, 183981),
            (205744, 210041),
            (249856, 261183),
        ),
        (),
    ),
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]": (
        (
            (1368, 1368),
            (1419, 1420),
            (1480, 1481),
            (2191, 2191),
            (2899, 2900),
            (3164, 3164),
            (3292, 3292),
            (6863, 6896),
            (8335, 8335),
            (8349, 8351),
            (42959, 42959),
            (42993, 42993),
            (67515, 67519),
            (67904, 67929),
            (69317, 69319),
            (69323, 69327),
            (69337, 69358),
            (69360, 69371),
            (72458, 72458),
            (72544, 72551),
            (73136, 73179),
            (73200, 73201),
            (93883, 93907),
            (94194, 94195),
            (100344, 100351),
            (101590, 101594),
            (101641, 101664),
            (101760, 101874),
            (101888, 102801),
            (102816, 102866),
            (110883, 110888),
            (110952, 110952),
            (119079, 119080),
            (119376, 119378),
            (119387, 119388),
            (119391, 119391),
            (119424, 119425),
            (120486, 120486),
            (122655, 122660),
            (122667, 122687),
            (122689, 122695),
            (122697, 122697),
            (122699, 122700),
            (122702, 122704),
            (122706, 122727),
            (122729, 122729),
            (122731, 122731),
            (122733, 122733),
            (122735, 122737),
            (122739, 122739),
            (122741, 122741),
            (122743, 122743),
            (122745, 122745),
            (122747, 122747),
            (122749, 122749),
            (122751, 122753),
            (122768, 122774),
            (122829, 122879),
            (124608, 124638),
            (124640, 124661),
            (124670, 124671),
            (177978, 177983),
            (178206, 178206),
            (183970, 183981),
            (205744, 210041),
            (249856, 261183),
        ),
        (),
    ),
}


def format_table(sources: Sequence[str]) -> str:
    """The Python source of :data:`_TABLE` for the installed tiktoken and ``regex`` (a maintenance helper).

    Run ``python -c "from bpe_core.pretokenize import TIKTOKEN_SOURCES as s;
    from bpe_core.pretokenize.tiktoken_compat import format_table; print(format_table(s))"``
    after upgrading either package, and paste the output over :data:`_TABLE`.

    Args:
        sources: the pattern sources whose atoms to probe.

    Returns:
        Python source text.
    """
    found = probe_atoms(list(dict.fromkeys(a for p in sources for a in atoms(p))))
    lines = ["_TABLE: dict[str, tuple[Ranges, Ranges]] = {"]
    for atom, (minus, plus) in found.items():
        lines += [f"    {atom!r}: (", f"        {minus!r},", f"        {plus!r},", "    ),"]
    return "\n".join([*lines, "}"])


ATOM_DIFFS.update(_TABLE)
