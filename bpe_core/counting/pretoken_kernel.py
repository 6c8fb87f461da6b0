r"""Compiled pre-tokenization of the tiktoken-style patterns, and compiled counting of distinct pieces.

Corpus figures (:mod:`bpe_core.analysis.corpus`) cut every distinct unit of a
text into pieces once per split; for the patterns tiktoken runs (GPT-2's,
cl100k's, o200k's and the open models' that follow them) this module does the
cutting in compiled code, as one state machine with a few switches
(:class:`Machine`), each alternative of the patterns written out in the order
the regex tries them:

* contractions first (GPT-2: ``'(?:[sdmt]|ll|ve|re)``; case-insensitive in
  cl100k, Llama 3, Qwen), or after a run of letters (o200k: ``(?i:'s|...)?``);
* letters: ``` ?\p{L}+``` (GPT-2), ``[^\r\n\p{L}\p{N}]?\p{L}+`` (cl100k, Llama 3,
  Qwen 2; Qwen 3.5 with ``[\p{L}\p{M}]``), or o200k's two case-aware
  alternatives ``P?[Lu..]*[Ll..]+`` and ``P?[Lu..]+[Ll..]*``, backtracking as the
  regex does;
* digits: ``` ?\p{N}+``` (GPT-2), ``\p{N}{1,3}``, ``\p{N}`` (Qwen, Tekken), or each
  digit a piece of its own before anything else (StarCoder's ``\p{N}`` split);
* punctuation: ``` ?[^\s\p{L}\p{N}]+`` and a tail of ``[\r\n]*`` (cl100k) or
  ``[\r\n/]*`` (o200k);
* whitespace: ``\s++$``, ``\s*[\r\n]+`` (cl100k's ``\s*[\r\n]``: the same
  match), ``\s+(?!\S)`` and a single character.

Each character's classes come from the patterns' own atoms, as tiktoken's
regex engine classes them (:func:`bpe_core.pretokenize.tiktoken_compat.exact_pattern`),
so the cuts are those of :func:`bpe_core.pretokenize.iter_pretoken_strings`
(tested against it on every code point in context, on adversarial and random
texts, ``tests/engine/test_pretoken_kernel.py``).

Any other split the production tokenizers declare -- a pattern, or a sequence
of patterns each cutting the pieces the one before left (DeepSeek's and
Falcon's ``pre_tokenizers.Sequence``, Gemma 4's lines and ``▁`` runs, Mistral
v1's units) -- is a :class:`Program` (:func:`program_for`): alternatives of
quantified character classes, ``$`` and one-class look-aheads, matched with
backtracking as the ``regex`` module matches them, each class's characters
taken from the ``regex`` module itself (:func:`class_bits`).

:func:`distinct_pieces` adds the pieces of every unit, whatever cut them, into
an open-addressing table keyed by their bytes, as :func:`bpe_core.counting.kernel.count_gpt2`
counts pre-tokens.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import regex

from . import kernel as ck
from .cache_files import cached_table, source_key
from .native import kernel, njit, prefetch

__all__ = [
    "MACHINES",
    "DistinctPieces",
    "Machine",
    "Program",
    "Workspace",
    "class_bits",
    "distinct_pieces",
    "machine_for",
    "pattern_classes",
    "program_for",
    "register_machine",
    "split_units",
    "warm",
]

# the atoms of the patterns, one bit each (as tiktoken's engine classes each code point)
ATOMS = (
    r"\p{L}",
    r"\p{N}",
    r"\s",
    r"[^\s\p{L}\p{N}]",
    r"[^\r\n\p{L}\p{N}]",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    r"[\p{L}\p{M}]",
    r"[^\s\p{L}\p{M}\p{N}]",
)
B_L, B_N, B_S, B_PUNCT, B_PREFIX, B_UP, B_LO, B_LM, B_PUNCT35 = (1 << k for k in range(len(ATOMS)))

# the switches of a machine
LETTERS_SPACE, LETTERS_PREFIX, LETTERS_CASED, LETTERS_MARKS = 1, 2, 3, 4
DIGITS_RUN, DIGITS_THREE, DIGITS_ONE = 1, 2, 3
PUNCT_PLAIN, PUNCT_CRLF, PUNCT_CRLF_SLASH, PUNCT_MARKS = 1, 2, 3, 4
SPACE_GPT2, SPACE_CL100K, SPACE_O200K = 1, 2, 3


@dataclass(frozen=True)
class Machine:
    r"""The switches that make the state machine one pattern (see the module docstring).

    Attributes:
        contraction: 0 none, 1 GPT-2's case-sensitive ``'(?:[sdmt]|ll|ve|re)``, 2 case-insensitive (first alternative).
        letters: :data:`LETTERS_SPACE`, :data:`LETTERS_PREFIX`, :data:`LETTERS_CASED` (o200k), :data:`LETTERS_MARKS`.
        suffix: o200k's ``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` after the letters.
        digits: :data:`DIGITS_RUN` (with a space before), :data:`DIGITS_THREE`, :data:`DIGITS_ONE`.
        punct: :data:`PUNCT_PLAIN`, :data:`PUNCT_CRLF` (``[\r\n]*`` tail), :data:`PUNCT_CRLF_SLASH`,
            :data:`PUNCT_MARKS`.
        space: :data:`SPACE_GPT2`, :data:`SPACE_CL100K` (``\s++$`` then ``\s*[\r\n]``), :data:`SPACE_O200K`.
        isolate_digits: every digit is cut out first (a split sequence ``\p{N}`` then the pattern).
    """

    contraction: int
    letters: int
    suffix: bool
    digits: int
    punct: int
    space: int
    isolate_digits: bool = False

    def params(self) -> np.ndarray:
        """The switches as the kernel reads them (``int64[7]``)."""
        return np.array(
            [self.contraction, self.letters, self.suffix, self.digits, self.punct, self.space, self.isolate_digits],
            dtype=np.int64,
        )


MACHINES: dict[str, Machine] = {}
"""Pattern source (or a split sequence's key) -> its :class:`Machine`; see :func:`register_machine`."""


def register_machine(source: str, machine: Machine) -> None:
    """Declare that ``machine`` cuts text exactly as the pattern ``source`` (tests check each registered one)."""
    MACHINES[source] = machine


ISOLATED_DIGITS = r"\p{N}"
"""A split sequence's first pattern that cuts out every digit (StarCoder 2, Command R, Refact)."""


def machine_for(source: str | tuple[str, ...]) -> Machine | None:
    r"""The :class:`Machine` of a pattern source, or ``None`` when there is none (the regex cuts it).

    A tuple is a split sequence (:class:`bpe_core.production.byte_bpe.SplitSequence`'s
    patterns): one pattern, or ``\p{N}`` then a pattern with a machine (``isolate_digits``).
    """
    if isinstance(source, tuple):
        if len(source) == 1:
            return MACHINES.get(source[0])
        if len(source) == 2 and source[0] == ISOLATED_DIGITS and source[1] in MACHINES:
            return replace(MACHINES[source[1]], isolate_digits=True)
        return None
    return MACHINES.get(source)


def _compute_classes() -> np.ndarray:
    """:func:`pattern_classes` computed with the ``regex`` module (about a second)."""
    from ..pretokenize.tiktoken_compat import exact_pattern

    cps = np.arange(0x110000, dtype=np.uint32)
    cps[0xD800:0xE000] = 0x20  # surrogates: never in UTF-8 text
    every = cps.tobytes().decode("utf-32-le")
    out = np.zeros(0x110000, dtype=np.uint16)
    for bit, atom in enumerate(ATOMS):
        for m in regex.finditer(f"(?:{exact_pattern(atom)})+", every):
            out[m.start() : m.end()] |= 1 << bit
    return out


_LOCK = threading.Lock()


def pattern_classes() -> np.ndarray:
    """``uint16[0x110000]``: for each code point, a bit per atom of :data:`ATOMS` it belongs to (as tiktoken sees it).

    Kept in the kernels' cache directory beside :func:`bpe_core.counting.kernel.char_classes`.
    """
    with _LOCK:
        return _classes()


@lru_cache(maxsize=1)
def _classes() -> np.ndarray:
    key = source_key("counting/pretoken_kernel.py", "pretokenize/tiktoken_compat.py")
    return cached_table(
        "pattern_classes", key, _compute_classes, lambda t: t.shape == (0x110000,) and t.dtype == np.uint16
    )


# ---------------------------------------------------------------------------
# the state machine


@njit(inline="always")
def _at(buf, i, cls):
    """``(classes, code point, bytes)`` of the character at ``buf[i]`` (valid UTF-8)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return np.int64(cls[b0]), b0, 1
    if b0 < 0xE0:
        cp = (b0 & 0x1F) << 6 | np.int64(buf[i + 1] & 0x3F)
        return np.int64(cls[cp]), cp, 2
    if b0 < 0xF0:
        cp = (b0 & 0x0F) << 12 | np.int64(buf[i + 1] & 0x3F) << 6 | np.int64(buf[i + 2] & 0x3F)
        return np.int64(cls[cp]), cp, 3
    cp = (b0 & 0x07) << 18 | np.int64(buf[i + 1] & 0x3F) << 12 | np.int64(buf[i + 2] & 0x3F) << 6
    cp |= np.int64(buf[i + 3] & 0x3F)
    return np.int64(cls[cp]), cp, 4


@njit(inline="always")
def _run(buf, i, v, cls, bit):
    """End of the run of characters with ``bit`` starting at ``i`` (``i`` itself when none)."""
    while i < v:
        b, _cp, n = _at(buf, i, cls)
        if b & bit == 0:
            break
        i += n
    return i


@njit(inline="always")
def _is(c, lower):
    """Whether the code point ``c`` is the ASCII letter ``lower`` in either case (and ``ſ`` for ``s``: ``(?i)``)."""
    return c == lower or c == lower - 32 or (lower == 115 and c == 0x17F)


@njit(inline="always")
def _contraction(buf, i, v, cls, insensitive):
    """End of a contraction at ``i`` (``'s 't 'm 'd 're 've 'll``), or -1; case-insensitive when asked."""
    if i + 1 >= v or buf[i] != 39:
        return -1
    _b, c1, n1 = _at(buf, i + 1, cls)
    if insensitive:
        if _is(c1, 115) or _is(c1, 116) or _is(c1, 109) or _is(c1, 100):
            return i + 1 + n1
        j = i + 1 + n1
        if j < v:
            _b, c2, n2 = _at(buf, j, cls)
            if (_is(c1, 114) and _is(c2, 101)) or (_is(c1, 118) and _is(c2, 101)) or (_is(c1, 108) and _is(c2, 108)):
                return j + n2
        return -1
    if c1 == 115 or c1 == 116 or c1 == 109 or c1 == 100:  # noqa: PLR1714 -- s t m d (numba)
        return i + 2
    if i + 2 < v:
        c2 = buf[i + 2]
        if (c1 == 108 and c2 == 108) or (c1 == 118 and c2 == 101) or (c1 == 114 and c2 == 101):
            return i + 3
    return -1


@njit(inline="always")
def _suffix(buf, i, v, cls):
    """``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` at ``i``: the end after it (``i`` when none)."""
    e = _contraction(buf, i, v, cls, True)
    return e if e > 0 else i


@njit(inline="always")
def _cased_first(buf, s, v, cls):
    """o200k's ``[Lu..]*[Ll..]+`` from ``s``: the end, or -1 (``[Lu..]*`` gives back characters as the regex does)."""
    u = _run(buf, s, v, cls, B_UP)
    if u < v:
        b, _cp, _n = _at(buf, u, cls)
        if b & B_LO:
            return _run(buf, u, v, cls, B_LO)
    k = u  # give back characters of the [Lu..] run, last first, until one is also [Ll..]
    while k > s:
        k -= 1
        while k > s and buf[k] & 0xC0 == 0x80:
            k -= 1
        b, _cp, _n = _at(buf, k, cls)
        if b & B_LO:
            return _run(buf, k, v, cls, B_LO)
    return -1


@njit(inline="always")
def _cased(buf, i, v, cls, suffix):
    """o200k's two letter alternatives at ``i`` (each with its optional prefix, tried first): the end, or -1."""
    b0, _cp, n0 = _at(buf, i, cls)
    pre = (b0 & B_PREFIX) != 0 and i + n0 < v
    for alt in range(2):
        for take in range(2):
            if take == 0 and not pre:
                continue
            s = i + n0 if take == 0 else i
            if alt == 0:
                e = _cased_first(buf, s, v, cls)
            else:
                e = -1
                if s < v:
                    b, _cp, _n = _at(buf, s, cls)
                    if b & B_UP:
                        e = _run(buf, _run(buf, s, v, cls, B_UP), v, cls, B_LO)
            if e >= 0:
                return _suffix(buf, e, v, cls) if suffix else e
    return -1


@njit(inline="always")
def _letters(buf, i, v, cls, mode, suffix):
    """The letters alternative(s) at ``i``: the end, or -1."""
    b0, _cp, n0 = _at(buf, i, cls)
    if mode == LETTERS_CASED:
        return _cased(buf, i, v, cls, suffix)
    bit = B_LM if mode == LETTERS_MARKS else B_L
    if b0 & bit:
        return _run(buf, i, v, cls, bit)
    if i + n0 >= v:
        return -1
    prefix = buf[i] == 32 if mode == LETTERS_SPACE else (b0 & B_PREFIX) != 0
    if prefix:
        b1, _cp, _n = _at(buf, i + n0, cls)
        if b1 & bit:
            return _run(buf, i + n0, v, cls, bit)
    return -1


@njit(inline="always")
def _digits(buf, i, v, cls, mode):
    """The digits alternative at ``i``: the end, or -1."""
    b0, _cp, n0 = _at(buf, i, cls)
    if b0 & B_N:
        if mode == DIGITS_RUN:
            return _run(buf, i, v, cls, B_N)
        if mode == DIGITS_ONE:
            return i + n0
        e = i + n0
        for _k in range(2):
            if e >= v:
                break
            b, _cp, n = _at(buf, e, cls)
            if b & B_N == 0:
                break
            e += n
        return e
    if mode == DIGITS_RUN and buf[i] == 32 and i + 1 < v:
        b1, _cp, _n = _at(buf, i + 1, cls)
        if b1 & B_N:
            return _run(buf, i + 1, v, cls, B_N)
    return -1


@njit(inline="always")
def _punct(buf, i, v, cls, mode):
    r"""`` ?[^\s\p{L}\p{N}]+`` and its tail at ``i``: the end, or -1."""
    bit = B_PUNCT35 if mode == PUNCT_MARKS else B_PUNCT
    b0, _cp, _n0 = _at(buf, i, cls)
    s = -1
    if b0 & bit:
        s = i
    elif buf[i] == 32 and i + 1 < v:
        b1, _cp, _n = _at(buf, i + 1, cls)
        if b1 & bit:
            s = i + 1
    if s < 0:
        return -1
    e = _run(buf, s, v, cls, bit)
    if mode != PUNCT_PLAIN:
        while e < v and (buf[e] == 13 or buf[e] == 10 or (mode == PUNCT_CRLF_SLASH and buf[e] == 47)):
            e += 1
    return e


@njit(inline="always")
def _space(buf, i, v, cls, mode):
    """The whitespace alternatives at ``i`` (a whitespace character): the end."""
    r = _run(buf, i, v, cls, B_S)
    if r == v and mode != SPACE_O200K:
        return r  # \s++$
    if mode != SPACE_GPT2:  # \s*[\r\n]+: up to the run's last CR or LF
        k = r
        while k > i:
            k -= 1
            if buf[k] == 13 or buf[k] == 10:
                return k + 1
    if r == v:
        return r  # \s+(?!\S) at the end
    last = r - 1  # \s+(?!\S): all but the run's last character, when it has two or more
    while buf[last] & 0xC0 == 0x80:
        last -= 1
    if last > i:
        return last
    return r  # \s: one character


@njit(inline="always")
def _pretoken_end(buf, i, v, cls, p):
    """End of the pre-token starting at ``i`` in the segment ending at ``v`` (see :class:`Machine`)."""
    if p[0] != 0:
        e = _contraction(buf, i, v, cls, p[0] == 2)
        if e > 0:
            return e
    e = _letters(buf, i, v, cls, p[1], p[2] != 0)
    if e > 0:
        return e
    e = _digits(buf, i, v, cls, p[3])
    if e > 0:
        return e
    e = _punct(buf, i, v, cls, p[4])
    if e > 0:
        return e
    b0, _cp, n0 = _at(buf, i, cls)
    if b0 & B_S:
        return _space(buf, i, v, cls, p[5])
    return i + n0  # not matched by any alternative: a piece of its own (no named pattern leaves one)


@njit(inline="always")
def _segment(specials, st, i, hi, cuts, k):
    """The next stretch of a unit ending at ``hi`` to cut from ``i``: ``(i, seg, k)``, shared by the split kernels.

    ``specials`` holds the special tokens' occurrences as ``(start, end)`` pairs,
    ascending; ``st[1]`` is the next pair not before ``i`` (advanced here).  When
    no special token starts at ``i``, the stretch is ``buf[i:seg]``, ``seg`` the
    next one's start or ``hi``.  When one does, it is a piece: its end is written
    to ``cuts[k]`` and returned as ``i`` with ``seg = -1`` and ``k + 1``.
    """
    n_sp = specials.size // 2
    while st[1] < n_sp and specials[2 * st[1]] < i:
        st[1] += 1
    if st[1] < n_sp and specials[2 * st[1]] < hi:
        seg = specials[2 * st[1]]
        if seg == i:
            end = specials[2 * st[1] + 1]
            cuts[k] = end
            st[1] += 1
            return end, np.int64(-1), k + 1
        return i, seg, k
    return i, hi, k


@kernel("u1[]", "i8[]", "u2[]", "i8[]", "i8[]", "i8[]", "i8[]", "i8[]")
def _split_units(buf, offsets, cls, p, specials, cut_off, cuts, st):
    r"""Cut units ``st[0]..`` into pre-tokens, writing each piece's end into ``cuts`` (absolute byte offsets).

    Unit ``u`` is ``buf[offsets[u]:offsets[u + 1]]``; its pieces' ends go to
    ``cuts[cut_off[u]:cut_off[u + 1]]`` (``cut_off`` filled here).
    ``specials`` holds the special tokens' occurrences as ``(start, end)`` pairs,
    ascending (none crosses a unit's end): each is a piece, and the text between
    them is cut as texts of their own (``$`` and ``(?!\S)`` see their ends);
    ``st[1]`` is the next pair.  With ``p[6]`` (isolated digits) each digit is a
    piece and the stretches between digits are cut as texts of their own.
    Returns 1 when ``cuts`` may not have room for a unit (the caller grows it and
    calls again from unit ``st[0]``), else 0.
    """
    size = cuts.size
    k = cut_off[st[0]]
    for u in range(st[0], offsets.size - 1):
        lo, hi = offsets[u], offsets[u + 1]
        if k + (hi - lo) > size:  # room for the worst case: a piece per byte
            st[0] = u
            return 1
        i = lo
        while i < hi:
            i, seg, k = _segment(specials, st, i, hi, cuts, k)
            if seg < 0:  # a special token: one piece
                continue
            v = seg
            if p[6] != 0:  # the stretch up to the next digit, or the digit itself
                b0, _cp, n0 = _at(buf, i, cls)
                if b0 & B_N:
                    i += n0
                    cuts[k] = i
                    k += 1
                    continue
                v = i
                while v < seg:
                    b, _cp, n = _at(buf, v, cls)
                    if b & B_N:
                        break
                    v += n
            while i < v:
                i = _pretoken_end(buf, i, v, cls, p)
                cuts[k] = i
                k += 1
        cut_off[u + 1] = k
    st[0] = offsets.size - 1
    return 0


class Workspace:
    """Large work arrays kept from one call to the next, for one thread at a time.

    A fresh array of many MiB is fresh pages, each faulted in and zeroed as the
    kernel first writes it (about an eighth of the time of cutting and counting
    a split).  :func:`split_units` and :func:`distinct_pieces` given a workspace take
    their work arrays from it; what they return that is a view of it (``cuts``,
    :attr:`DistinctPieces.joined`) holds until the next call with the same workspace.
    """

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def take(self, name: str, size: int, dtype: type) -> np.ndarray:
        """A 1-D array of ``size`` elements of ``dtype`` (contents undefined), the one named ``name`` reused."""
        a = self._arrays.get(name)
        if a is None or a.dtype != dtype or a.size < size:
            a = self._arrays[name] = np.empty(size, dtype=dtype)
        return a[:size]


def _take(work: Workspace | None, name: str, size: int, dtype: type) -> np.ndarray:
    """``work.take(...)``, or a new array when there is no workspace."""
    return np.empty(size, dtype=dtype) if work is None else work.take(name, size, dtype)


def split_units(
    data: np.ndarray,
    offsets: np.ndarray,
    machine: Machine | Program,
    specials: np.ndarray | None = None,
    work: Workspace | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cut every unit with a :class:`Machine` or :class:`Program`: ``(cut_off int64[n + 1], cuts int64)``.

    As :func:`_split_units` (or :func:`_split_program`) fills them.

    Args:
        data: ``uint8``, the units' UTF-8 concatenated (valid UTF-8).
        offsets: ``int64[n + 1]``, their byte offsets.
        machine: the pattern's switches, or a split sequence's :class:`Program`.
        specials: the special tokens' occurrences in ``data`` as ``int64[m, 2]`` ``(start, end)`` rows,
            ascending, none crossing a unit's end (found as :func:`bpe_core.pretokenize.split_special` finds them).
        work: a :class:`Workspace` to take ``cuts`` from (then returned as a view of it).
    """
    n = offsets.size - 1
    cut_off = np.zeros(n + 1, dtype=np.int64)
    cuts = _take(work, "cuts", max(16, data.size // 3), np.int64)
    st = np.zeros(2, dtype=np.int64)
    buf = ck.read_only(data)
    occ = np.ascontiguousarray(specials if specials is not None else np.zeros((0, 2)), dtype=np.int64).reshape(-1)
    if isinstance(machine, Program):
        longest = int(np.diff(offsets).max()) if n else 0
        table, one, two = machine.table(), np.zeros(longest + 2, dtype=np.int64), np.zeros(longest + 2, dtype=np.int64)
        bt = np.zeros(2 * MAX_ATOMS, dtype=np.int64)
        args = (machine.atoms, machine.alts, machine.levels, machine.first, occ, cut_off)

        def run(cuts):
            return _split_program(buf, offsets, table, *args, cuts, st, one, two, bt)
    else:
        params, classes = machine.params(), pattern_classes()

        def run(cuts):
            return _split_units(buf, offsets, classes, params, occ, cut_off, cuts, st)

    while run(cuts):
        old = cuts
        cuts = _take(work, "cuts", max(2 * old.size, int(cut_off[st[0]]) + int(offsets[-1] - offsets[st[0]])), np.int64)
        cuts[: old.size] = old
        st[1] = 0
    return cut_off, cuts[: cut_off[-1]]


# ---------------------------------------------------------------------------
# distinct pieces


@njit(inline="always")
def _new_piece(buf, s, n, c, ikey, f, rows, arena, joined, st):
    """Row ``st[1]`` for the new piece ``buf[s:s + n]``, its bytes appended to ``arena`` and (then a NUL) ``joined``."""
    j = st[1]
    rows[j, 0] = ikey
    rows[j, 1] = 2 * n + f
    rows[j, 2] = c
    rows[j, 3] = s
    a, b = st[3], st[3] + j
    for q in range(n):
        arena[a + q] = buf[s + q]
        joined[b + q] = buf[s + q]
    joined[b + n] = 0
    st[1] = j + 1
    st[3] = a + n
    return j


_AHEAD = 32
"""How many pieces ahead :func:`_count_pieces` hashes a piece and prefetches its slot (a power of two;
16, 32 and 64 measured alike, 8 slower)."""


@njit(inline="always")
def _key_ahead(buf, s, q, cuts, refs, slots, mask):
    """Key piece ``q`` (bytes ``s:cuts[q]``), keep the key in its (unwritten) ``refs`` entry, prefetch its slot."""
    key = ck._key(buf, s, cuts[q])
    refs[q] = np.int64(key)
    prefetch(slots, ck._home(key, cuts[q] - s, mask))


@njit(inline="always")
def _look_ahead(buf, cuts, k, end, refs, slots, rows, mask):
    """The look-ahead of :func:`_count_pieces` while it counts piece ``k``.

    Keys piece ``k + _AHEAD`` and prefetches its slot (:func:`_key_ahead`); reads
    the slot of piece ``k + _AHEAD // 2`` (prefetched by now) and prefetches its row.
    """
    ahead = k + _AHEAD
    if ahead < end:
        _key_ahead(buf, cuts[ahead - 1], ahead, cuts, refs, slots, mask)
    half = k + _AHEAD // 2
    if half < end:
        j = slots[ck._home(np.uint64(refs[half]), cuts[half] - cuts[half - 1], mask)]
        if j >= 0:
            prefetch(rows, np.int64(j))


@kernel("u1[]", "i8[]", "i8[]", "u1[]", "i8[]", "i4[]", "i8[:,:]", "u1[]", "u1[]", "i8[]", "i8[]")
def _count_pieces(buf, cut_off, cuts, first, unit_counts, slots, rows, arena, joined, refs, st):
    """Add every piece of every unit to the table, weighted by its unit's count; each piece's index into ``refs``.

    ``cuts[cut_off[u]:cut_off[u + 1]]`` are the ends of unit ``u``'s pieces;
    the unit starts at the end of the previous unit's last piece (``st[2]``
    at the start).  A unit with ``first[u]`` has its first piece keyed apart.
    The distinct pieces are ``rows`` ``(key, 2 * length + first, count, start)``, in
    order of first occurrence, their bytes end to end in ``arena`` (and each
    followed by a NUL in ``joined``); ``slots`` (a power of two, -1: empty) is an
    open-addressing table of row indices, 4 bytes a slot so that the probes stay
    in cache.  ``st``: next unit, rows used, the current unit's start, bytes in
    ``arena``.  Returns 1 when ``rows`` may not have room for a unit's pieces
    (grow them and ``slots``, then call again), else 0.

    Nearly all of the time is two cache misses a piece: its slot, then its row.
    So each piece's key is made :data:`_AHEAD` pieces early (kept in its ``refs``
    entry until the piece's index replaces it) and its slot prefetched, and
    half-way there the slot is read and its row prefetched; the misses of many
    pieces then overlap.  On the 20 MB corpus's units under GPT-2, cl100k, o200k
    and Qwen (2.2-2.5 million pieces each), the four together: 0.97-1.10 s
    before, 0.50-0.55 s with it (and without reference counting, :class:`~bpe_core.counting.native.Kernel`).
    """
    mask = slots.size - 1
    room = min(rows.shape[0], slots.size // 2)
    end = cut_off[cut_off.size - 1]
    k0 = cut_off[st[0]]
    for q in range(k0, min(k0 + _AHEAD, end)):  # the first pieces' keys, their slots prefetched
        _key_ahead(buf, cuts[q - 1] if q > k0 else st[2], q, cuts, refs, slots, mask)
    for u in range(st[0], cut_off.size - 1):
        if st[1] + cut_off[u + 1] - cut_off[u] > room:
            st[0] = u
            return 1
        s = st[2]
        c = unit_counts[u]
        for k in range(cut_off[u], cut_off[u + 1]):
            e = cuts[k]
            n = e - s
            f = 1 if (first[u] != 0 and k == cut_off[u]) else 0
            key = np.uint64(refs[k]) ^ np.uint64(f * 0x9E3779B97F4A7C15)
            _look_ahead(buf, cuts, k, end, refs, slots, rows, mask)
            ikey = np.int64(key)
            slot = ck._home(key, n, mask)
            while True:
                j = np.int64(slots[slot])
                if j < 0:
                    j = _new_piece(buf, s, n, c, ikey, f, rows, arena, joined, st)
                    slots[slot] = j
                    break
                if rows[j, 0] == ikey and rows[j, 1] == 2 * n + f:
                    s0 = rows[j, 3]
                    same = True
                    for q in range(n if n > 8 else 0):  # keys of up to 8 bytes are the bytes themselves
                        if buf[s0 + q] != buf[s + q]:
                            same = False
                            break
                    if same:
                        rows[j, 2] += c
                        break
                slot = (slot + 1) & mask
            refs[k] = j
            s = e
        st[2] = s
    st[0] = cut_off.size - 1
    return 0


@kernel("i8[:,:]", "i8[]", "i4[]", returns=None)
def _reslot(rows, st, slots):
    """Put rows ``0..st[1]`` into ``slots`` (all -1, a power of two) by key and length, as :func:`_count_pieces`."""
    mask = slots.size - 1
    for j in range(st[1]):
        u = ck._home(np.uint64(rows[j, 0]), rows[j, 1] >> 1, mask)
        while slots[u] >= 0:
            u = (u + 1) & mask
        slots[u] = j


@dataclass(frozen=True, eq=False)
class DistinctPieces:
    """The distinct pieces of cut units (:func:`distinct_pieces`), numbered in order of first occurrence.

    Attributes:
        starts, lengths: ``int64``: piece ``j`` is ``data[starts[j]:starts[j] + lengths[j]]`` of the units'
            UTF-8 (its first occurrence).
        counts: ``int64``, its occurrences (each unit's pieces weighted by the unit's count).
        first: ``bool``, it starts a document (counted apart from the same bytes elsewhere).
        refs: ``int64``, for each cut, the index of the piece ending there.
        packed, offsets: ``uint8`` the pieces' bytes end to end, and ``int64[pieces + 1]`` their offsets there.
        joined: ``uint8``, the pieces' bytes each followed by a NUL (``packed`` with a 0 after each piece).
    """

    starts: np.ndarray
    lengths: np.ndarray
    counts: np.ndarray
    first: np.ndarray
    refs: np.ndarray
    packed: np.ndarray
    offsets: np.ndarray
    joined: np.ndarray


def distinct_pieces(
    data: np.ndarray,
    cut_off: np.ndarray,
    cuts: np.ndarray,
    first: np.ndarray,
    unit_counts: np.ndarray,
    work: Workspace | None = None,
) -> DistinctPieces:
    """The distinct pieces of cut units, counted in one compiled pass (:class:`DistinctPieces`).

    Args:
        data: ``uint8``, the units' UTF-8 concatenated.
        cut_off: ``int64[n + 1]``: unit ``u``'s pieces end at ``cuts[cut_off[u]:cut_off[u + 1]]``.
        cuts: ``int64``, absolute byte offsets into ``data``, increasing.
        first: ``bool[n]``: the unit starts a document (its first piece is counted apart).
        unit_counts: ``int64[n]``: each unit's occurrences.
        work: a :class:`Workspace` to take the table and ``joined`` from (``joined`` then a view of it).
    """
    # slots for as many pieces as units to start with (distinct pieces are usually fewer): rarely a growth
    slots = _take(work, "slots", 1 << max(12, (cut_off.size - 1).bit_length() + 1), np.int32)
    slots.fill(-1)
    rows = _take(work, "rows", slots.size // 2 * 4, np.int64).reshape(-1, 4)
    arena, joined = np.empty(data.size, dtype=np.uint8), _take(work, "joined", data.size + cuts.size, np.uint8)
    refs = np.empty(cuts.size, dtype=np.int64)
    st = np.zeros(4, dtype=np.int64)
    buf = ck.read_only(data)
    flags = np.ascontiguousarray(first, dtype=np.uint8)
    while _count_pieces(buf, cut_off, cuts, flags, unit_counts, slots, rows, arena, joined, refs, st):
        slots = _take(work, "slots", 2 * slots.size, np.int32)
        slots.fill(-1)
        _reslot(rows, st, slots)
        old = rows
        rows = _take(work, "rows", slots.size // 2 * 4, np.int64).reshape(-1, 4)
        rows[: st[1]] = old[: st[1]]
    n, size = int(st[1]), int(st[3])
    offsets = np.zeros(n + 1, dtype=np.int64)
    lengths = rows[:n, 1] >> 1
    np.cumsum(lengths, out=offsets[1:])
    return DistinctPieces(
        rows[:n, 3].copy(), lengths, rows[:n, 2].copy(), (rows[:n, 1] & 1).astype(bool), refs,
        ck.read_only(arena[:size]), offsets, ck.read_only(joined[: size + n]),
    )  # fmt: skip


# ---------------------------------------------------------------------------
# split programs: other patterns, and sequences of them, read as quantified character classes

ATOM_CLASS, ATOM_END, ATOM_NOT_AHEAD, ATOM_AHEAD = 0, 1, 2, 3
"""Kinds of a :class:`Program`'s atoms: a quantified character class, ``$``, ``(?!C)`` and ``(?=C)``."""

MAX_CLASSES = 32
"""Distinct character classes a program may use (one bit each of ``uint32``)."""

MAX_ATOMS = 16
"""Atoms an alternative may have (the matcher's backtracking stack)."""

MAX_ALTERNATIVES = 64
"""Alternatives a pattern may have once its groups are written out."""

_MANY = 1 << 62
"""An unbounded quantifier's maximum."""

_QUANTIFIER = regex.compile(r"\{(\d+)(?:(,)(\d*))?\}")


@dataclass(frozen=True, eq=False)
class Program:
    r"""A split sequence of regexes made only of quantified character classes, for the compiled matcher.

    Each pattern is a list of alternatives, tried in order at each position as
    the ``regex`` module tries them (leftmost first, greedy quantifiers giving
    back one character at a time, possessive ones never), each alternative a
    list of atoms (:data:`ATOM_CLASS` ``C{min,max}``, :data:`ATOM_END` ``$``,
    :data:`ATOM_NOT_AHEAD` ``(?!C)``, :data:`ATOM_AHEAD` ``(?=C)``).  A
    pattern cuts each piece the previous one left into its matches and the
    stretches between them (Hugging Face's ``Split`` with ``Isolated``, as
    :class:`bpe_core.production.byte_bpe.SplitSequence` and
    :func:`bpe_core.pretokenize.iter_pretoken_strings` do); see :func:`program_for`
    for what is read.

    Attributes:
        patterns: the regex sources, in order.
        classes: each class's source (``regex`` syntax, one character), bit ``k`` of :meth:`table`.
        atoms: ``int64[n, 5]``: ``(kind, class, min, max, possessive)`` per atom.
        alts: ``int64[m + 1]``: alternative ``a``'s atoms are ``atoms[alts[a]:alts[a + 1]]``.
        levels: ``int64[len(patterns) + 1]``: pattern ``p``'s alternatives are ``levels[p]:levels[p + 1]``.
        first: ``int64[m]``: the classes (bits) a character must be in for alternative ``a`` to match from it.
    """

    patterns: tuple[str, ...]
    classes: tuple[str, ...]
    atoms: np.ndarray
    alts: np.ndarray
    levels: np.ndarray
    first: np.ndarray

    def table(self) -> np.ndarray:
        """``uint32[0x110000]``: for each code point, bit ``k`` when the ``regex`` module puts it in class ``k``."""
        return _program_table(self.classes)


def _class_text(src: str, i: int) -> tuple[str, int] | None:
    """The character class (one character) starting at ``src[i]`` and the index after it, or ``None``."""
    n, c = len(src), src[i]
    if c == "[":
        j = i + 1
        j += j < n and src[j] == "^"
        j += j < n and src[j] == "]"
        while j < n and src[j] != "]":
            if src[j] == "[":  # a nested set or a POSIX class: not read here
                return None
            j += 2 if src[j] == "\\" else 1
        return (src[i : j + 1], j + 1) if j < n else None
    if c == "\\":
        if i + 1 >= n:
            return None
        d = src[i + 1]
        if d in "pP":
            end = src.find("}", i) if src[i + 2 : i + 3] == "{" else i + 2
            return (src[i : end + 1], end + 1) if end > 0 else None
        if d in "sSdDwWrnt" or not (d.isalnum() or d == "_"):
            return src[i : i + 2], i + 2
        return None  # \b \A \Z \x.. \u.. \N{..} backreferences ...: not read
    if c in "()|*+?{}^$":
        return None
    return c, i + 1  # a literal character, or "."


def _quantifier(src: str, i: int) -> tuple[int, int, bool, int] | None:
    """``(min, max, possessive, index after)`` of the quantifier at ``src[i]`` (``{1}`` if none), ``None`` if lazy."""
    lo, hi = 1, 1
    if i < len(src) and src[i] in "?*+":
        lo, hi = {"?": (0, 1), "*": (0, _MANY), "+": (1, _MANY)}[src[i]]
        i += 1
    elif i < len(src) and src[i] == "{":
        m = _QUANTIFIER.match(src, i)
        if m is None:
            return None
        lo = int(m.group(1))
        hi = lo if m.group(2) is None else int(m.group(3)) if m.group(3) else _MANY
        if hi < lo:
            return None
        i = m.end()
    else:
        return lo, hi, False, i
    if i < len(src) and src[i] == "?":
        return None  # lazy
    possessive = i < len(src) and src[i] == "+"
    return lo, hi, possessive, i + possessive


def _group_end(src: str, i: int) -> int:
    """The index of the ``)`` closing the group whose contents start at ``src[i]`` (-1 when none)."""
    depth, n = 1, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            found = _class_text(src, i)
            if found is None:
                return -1
            i = found[1]
            continue
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return i
        i += 1
    return -1


def _alternatives(src: str, insensitive: bool) -> list[list[tuple]] | None:
    """``src`` (a pattern or a group's contents) as alternatives of atoms ``(kind, class, min, max, possessive)``.

    ``None`` when it uses anything else (see :func:`program_for`).  A group
    ``(?:...)`` or ``(?i:...)`` is written out into the alternatives (``a(?:b|c)d``
    -> ``abd|acd``, the same first match when no atom before it can give back characters).
    """
    alts: list[list[tuple]] = [[]]
    done: list[list[tuple]] = []
    i = 0
    while i < len(src):
        if src[i] == "|":
            done += alts
            alts = [[]]
            i += 1
            continue
        step = _group(src, i, insensitive) if src[i] == "(" else _atom(src, i, insensitive)
        if step is None:
            return None
        tails, i = step
        if len(tails) > 1 and any(kind == ATOM_CLASS and not fixed for a in alts for kind, _c, _l, _h, fixed in a):
            return None  # an atom before the group could give back characters: writing it out would differ
        alts = [[*a, *b] for a in alts for b in tails]
    return done + alts


def _atom(src: str, i: int, insensitive: bool) -> tuple[list[list[tuple]], int] | None:
    """``([[atom]], index after)`` of ``$`` or a quantified class at ``src[i]``, or ``None``."""
    if src[i] == "$":
        return [[(ATOM_END, "", 0, 0, True)]], i + 1
    found = _class_text(src, i)
    q = _quantifier(src, found[1]) if found is not None else None
    if q is None:
        return None
    lo, hi, possessive, end = q
    cls = f"(?i:{found[0]})" if insensitive else found[0]
    return [[(ATOM_CLASS, cls, lo, hi, possessive or lo == hi)]], end


def _group(src: str, i: int, insensitive: bool) -> tuple[list[list[tuple]], int] | None:
    """``(alternatives, index after)`` of the group at ``src[i]`` (a look-ahead: one atom), or ``None``."""
    head = next((h for h in ("(?:", "(?i:", "(?!", "(?=") if src.startswith(h, i)), None)
    end = _group_end(src, i + len(head)) if head else -1
    if end < 0:
        return None
    inner = src[i + len(head) : end]
    if head in ("(?!", "(?="):
        found = _class_text(inner, 0) if inner else None
        if found is None or found[1] != len(inner):
            return None
        cls = f"(?i:{found[0]})" if insensitive else found[0]
        return [[(ATOM_NOT_AHEAD if head == "(?!" else ATOM_AHEAD, cls, 0, 0, True)]], end + 1
    sub = _alternatives(inner, insensitive or head == "(?i:")
    q = _quantifier(src, end + 1)
    if sub is None or q is None or q[3] != end + 1:
        return None  # a quantified group: not read
    return sub, end + 1


@lru_cache(maxsize=64)
def _program(patterns: tuple[str, ...]) -> Program | None:
    from ..pretokenize import compile_pattern

    classes: dict[str, int] = {}
    atoms: list[tuple[int, int, int, int, int]] = []
    alts, levels, first = [0], [0], []
    for source in patterns:
        if compile_pattern(source).flags & ~_PLAIN_FLAGS:
            return None
        found = _alternatives(source, False)
        if found is None or not found or len(found) > MAX_ALTERNATIVES:
            return None
        for alt in found:
            if len(alt) > MAX_ATOMS or not any(kind == ATOM_CLASS and lo > 0 for kind, _c, lo, _h, _p in alt):
                return None  # an alternative that can match nothing is not read (compile_pattern refuses most)
            mask, open_ = 0, True  # the first character is in a class up to the first that must match
            for kind, cls, lo, hi, possessive in alt:
                bit = classes.setdefault(cls, len(classes)) if cls else 0
                atoms.append((kind, bit, lo, hi, int(possessive)))
                if kind == ATOM_CLASS and open_:
                    mask |= 1 << bit
                    open_ = lo == 0
            alts.append(len(atoms))
            first.append(mask)
        levels.append(len(alts) - 1)
    if len(classes) > MAX_CLASSES:
        return None
    return Program(
        tuple(patterns),
        tuple(classes),
        np.array(atoms, dtype=np.int64).reshape(-1, 5),
        np.array(alts, dtype=np.int64),
        np.array(levels, dtype=np.int64),
        np.array(first, dtype=np.int64),
    )


_PLAIN_FLAGS = regex.UNICODE | regex.VERSION0
"""The flags a pattern with no inline flags compiles with (a global ``(?i)``, ``(?x)``, ``(?s)`` ... is not read)."""


def program_for(patterns: str | tuple[str, ...]) -> Program | None:
    r"""The :class:`Program` of a pattern or split sequence, or ``None`` when it uses what the matcher does not read.

    Read: alternatives of character classes (``[...]`` sets, ``\p{..}``, ``\s``
    and the other escapes, literal characters, ``.``), each with a greedy or
    possessive quantifier (``? * + {m} {m,} {m,n}``, possessive with a ``+``
    after); ``$`` (the end, or before a newline that ends the piece); ``(?!C)``
    and ``(?=C)`` of one class; non-capturing groups ``(?:...)`` and ``(?i:...)``
    without a quantifier, after atoms that cannot give back characters.  Not
    read: anything else (captures, lazy quantifiers, look-behind, inline flags,
    anchors but ``$``), an alternative that can match nothing, tiktoken's
    patterns (:data:`bpe_core.pretokenize.TIKTOKEN_SOURCES`: characters
    classified as tiktoken's engine does; :data:`MACHINES` runs them).

    Each class's characters come from the ``regex`` module itself (:meth:`Program.table`),
    so the cuts are the regex's: ``tests/engine/test_pretoken_kernel.py``
    checks every production split sequence against :class:`~bpe_core.production.byte_bpe.SplitSequence`.

    >>> p = program_for((r"\p{N}{1,3}", r" ?\p{L}+|\s+"))
    >>> [len(p.patterns), len(p.classes), p.levels.tolist()]
    [2, 4, [0, 1, 3]]
    """
    from ..pretokenize import TIKTOKEN_SOURCES  # (asked each time: encodings add theirs when imported)

    seq = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    if not seq or not all(isinstance(p, str) and p not in TIKTOKEN_SOURCES for p in seq):
        return None
    try:
        return _program(seq)
    except ValueError:  # a pattern that does not compile: the regex path raises its error
        return None


@lru_cache(maxsize=16)
def _program_table(classes: tuple[str, ...]) -> np.ndarray:
    """``uint32[0x110000]``: bit ``k`` set for the code points in ``classes[k]`` (:func:`class_bits` of each)."""
    out = np.zeros(0x110000, dtype=np.uint32)
    for bit, cls in enumerate(classes):
        out |= np.unpackbits(class_bits(cls), count=0x110000).astype(np.uint32) << np.uint32(bit)
    return out


@lru_cache(maxsize=256)
def class_bits(cls: str) -> np.ndarray:
    """The code points the ``regex`` module puts in the one-character class ``cls``, packed (``np.packbits``, 136 KiB).

    Computed by matching ``(?:cls)+`` over every code point (0.1-1.5 s), kept in the
    kernels' cache directory, one file per class (a program's table is put together from them).
    """

    def compute() -> np.ndarray:
        cps = np.arange(0x110000, dtype=np.uint32)
        cps[0xD800:0xE000] = 0x20  # surrogates: never in UTF-8 text
        member = np.zeros(0x110000, dtype=bool)
        for m in regex.finditer(f"(?:{cls})+", cps.tobytes().decode("utf-32-le")):
            member[m.start() : m.end()] = True
        return np.packbits(member)

    def valid(packed: np.ndarray) -> bool:
        return packed.shape == (0x110000 // 8,) and packed.dtype == np.uint8

    return cached_table("class_bits", source_key(extra=cls), compute, valid, prune=False)


@njit(inline="always")
def _match(buf, i, v, cls, atoms, a0, a1, bt):
    """End of alternative ``atoms[a0:a1]`` matched at ``i`` in the piece ending at ``v``, or -1.

    Backtracks as the ``regex`` module does: the last greedy class that can
    give back a character gives back one and the atoms after it are tried again.
    ``bt[2k]``, ``bt[2k + 1]``: atom ``k``'s count and end.
    """
    n = a1 - a0
    k = 0
    pos = i
    while True:
        if k == n:
            return pos
        a = a0 + k
        kind = atoms[a, 0]
        ok = False
        if kind == ATOM_CLASS:
            bit = atoms[a, 1]
            mx = atoms[a, 3]
            c = 0
            e = pos
            while c < mx and e < v:
                b, _cp, nb = _at(buf, e, cls)
                if (b >> bit) & 1 == 0:
                    break
                e += nb
                c += 1
            if c >= atoms[a, 2]:
                ok = True
                bt[2 * k] = c
                pos = e
        elif kind == ATOM_END:
            ok = pos == v or (pos + 1 == v and buf[pos] == 10)
            bt[2 * k] = 0
        else:
            hit = False
            if pos < v:
                b, _cp, _n = _at(buf, pos, cls)
                hit = (b >> atoms[a, 1]) & 1 == 1
            ok = hit == (kind == ATOM_AHEAD)
            bt[2 * k] = 0
        if ok:
            bt[2 * k + 1] = pos
            k += 1
            continue
        while True:  # backtrack: the last class that can give back a character gives back one
            k -= 1
            if k < 0:
                return -1
            a = a0 + k
            if atoms[a, 0] != ATOM_CLASS or atoms[a, 4] != 0 or bt[2 * k] <= atoms[a, 2]:
                continue
            e = bt[2 * k + 1]
            if k + 1 < n and atoms[a + 1, 0] == ATOM_END and not (e == v and buf[v - 1] == 10):
                continue  # "$" next: only giving back a final newline can still match
            e -= 1
            while buf[e] & 0xC0 == 0x80:
                e -= 1
            bt[2 * k] -= 1
            bt[2 * k + 1] = e
            pos = e
            k += 1
            break


@njit(inline="always")
def _level_cuts(buf, lo, hi, cls, atoms, alts, first, l0, l1, out, n, bt):
    """Cut ``buf[lo:hi]`` by alternatives ``l0..l1``: append the ends of its matches and of the stretches between.

    An alternative is tried only where the character is in one of its first classes (``first``).
    """
    pos = lo
    gap = lo
    while pos < hi:
        e = -1
        b, _cp, nb = _at(buf, pos, cls)
        for alt in range(l0, l1):
            if b & first[alt] == 0:
                continue
            e = _match(buf, pos, hi, cls, atoms, alts[alt], alts[alt + 1], bt)
            if e > pos:
                break
        if e > pos:
            if pos > gap:
                out[n] = pos
                n += 1
            out[n] = e
            n += 1
            pos = e
            gap = e
        else:
            pos += nb
    if gap < hi:
        out[n] = hi
        n += 1
    return n


@kernel("u1[]", "i8[]", "u4[]", "i8[:,:]", *["i8[]"] * 10)
def _split_program(buf, offsets, cls, atoms, alts, levels, first, specials, cut_off, cuts, st, one, two, bt):
    """Cut units ``st[0]..`` by a :class:`Program`, as :func:`_split_units` cuts them by a :class:`Machine`.

    Between special tokens, each pattern of the program cuts every piece the
    one before left (``one``, ``two``: room for a piece per byte of the longest unit).
    Returns 1 when ``cuts`` may not have room for a unit, else 0.
    """
    size = cuts.size
    n_lev = levels.size - 1
    k = cut_off[st[0]]
    for u in range(st[0], offsets.size - 1):
        lo, hi = offsets[u], offsets[u + 1]
        if k + (hi - lo) > size:
            st[0] = u
            return 1
        i = lo
        while i < hi:
            i, seg, k = _segment(specials, st, i, hi, cuts, k)
            if seg < 0:  # a special token: one piece
                continue
            cur = one
            nxt = two
            cur[0] = seg
            n_cur = 1
            for lev in range(n_lev):
                n_nxt = 0
                s = i
                for q in range(n_cur):
                    n_nxt = _level_cuts(
                        buf, s, cur[q], cls, atoms, alts, first, levels[lev], levels[lev + 1], nxt, n_nxt, bt
                    )
                    s = cur[q]
                cur, nxt = nxt, cur
                n_cur = n_nxt
            for q in range(n_cur):
                cuts[k] = cur[q]
                k += 1
            i = seg
        cut_off[u + 1] = k
    st[0] = offsets.size - 1
    return 0


def _register_named() -> None:
    from ..pretokenize import CL100K_PATTERN, GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, O200K_PATTERN

    gpt2 = Machine(1, LETTERS_SPACE, False, DIGITS_RUN, PUNCT_PLAIN, SPACE_GPT2)
    register_machine(GPT2_PATTERN, gpt2)
    register_machine(GPT2_ORIGINAL_PATTERN, gpt2)
    register_machine(CL100K_PATTERN, Machine(2, LETTERS_PREFIX, False, DIGITS_THREE, PUNCT_CRLF, SPACE_CL100K))
    register_machine(O200K_PATTERN, Machine(0, LETTERS_CASED, True, DIGITS_THREE, PUNCT_CRLF_SLASH, SPACE_O200K))


_register_named()


def warm() -> None:
    """Run each kernel once on tiny inputs (compiling them under numba's JIT), the table growth included."""
    data = np.frombuffer(" ".join(f"w{i}" for i in range(3000)).encode(), dtype=np.uint8)
    offsets = np.array([0, data.size], dtype=np.int64)
    cut_off, cuts = split_units(data, offsets, Machine(1, LETTERS_SPACE, False, DIGITS_RUN, PUNCT_PLAIN, SPACE_GPT2))
    distinct_pieces(data, cut_off, cuts, np.ones(1, dtype=bool), np.ones(1, dtype=np.int64))
    split_units(data, offsets, program_for((r"\p{N}", r" ?\p{L}+|\s+(?!\S)|\s+$")))
