r"""GPT-2 pre-token counting in compiled kernels (numba, carried by :mod:`bpe_core.counting.native`).

Counting is bounded by the regex split (about 10 MB per CPU-second with the
``str`` objects it creates and the ``Counter`` that hashes them).  For GPT-2's
pattern the split is a small state machine over character classes, written
here over the UTF-8 bytes (each character decoded, and checked as Python's
strict decoder checks it), and the pre-tokens are counted in an
open-addressing table keyed by their bytes (compared byte by byte, so exact),
with no Python object per occurrence.

The pattern is GPT-2's, as :data:`bpe_core.pretokenize.PATTERNS` has it::

    '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s

Its four character classes (``\p{L}``, ``\p{N}``, ``\s`` and the rest) are
taken for every code point from the ``regex`` module itself, as
:func:`bpe_core.pretokenize.tiktoken_compat.exact_pattern` rewrites them for the code
points on which ``regex`` and tiktoken disagree (:func:`char_classes`), so the
counts are those of :func:`bpe_core.pretokenize.count_pretokens`.  Tested
against the regex split on real, adversarial and random text in many scripts
(``tests/engine/test_count_compiled.py``).

:class:`CountAccumulator` adds the per-chunk tables into one table held in
numpy arrays (a byte arena of the distinct pre-tokens, their lengths and
counts), which the compiled merge loop reads directly.  The counting kernels
release the GIL, so chunks are counted by threads of one process
(:mod:`bpe_core.counting.stream`).

The kernels are compiled by numba, once per machine, into the shared library
of :mod:`bpe_core.counting.native` (or by numba's JIT when the library is not built);
they allocate nothing: :func:`count_gpt2` and :class:`CountAccumulator` size
every array and grow the tables when a kernel asks.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np
import regex

from .cache_files import cached_table, source_key
from .native import kernel, njit

__all__ = [
    "CountAccumulator",
    "char_classes",
    "count_gpt2",
    "gather",
    "read_only",
    "warm",
]

LETTER, DIGIT, SPACE, OTHER = 1, 2, 3, 4

_CLASS_ATOMS = ((LETTER, r"\p{L}"), (DIGIT, r"\p{N}"), (SPACE, r"\s"), (OTHER, r"[^\s\p{L}\p{N}]"))


def _compute_char_classes() -> np.ndarray:
    """:func:`char_classes` computed with the ``regex`` module (about 0.1 s)."""
    from ..pretokenize.tiktoken_compat import exact_pattern

    cps = np.arange(0x110000, dtype=np.uint32)
    cps[0xD800:0xE000] = 0x20  # surrogates: never in UTF-8 text; any class will do
    every = cps.tobytes().decode("utf-32-le")
    out = np.zeros(0x110000, dtype=np.uint8)
    hits = np.zeros(0x110000, dtype=np.uint8)
    for cls, atom in _CLASS_ATOMS:
        for m in regex.finditer(f"(?:{exact_pattern(atom)})+", every):
            out[m.start() : m.end()] = cls
            hits[m.start() : m.end()] += 1
    out[0xD800:0xE000], hits[0xD800:0xE000] = OTHER, 1
    if not (hits == 1).all():  # the four classes must partition the code points, or the state machine is wrong
        raise RuntimeError("the GPT-2 pattern's character classes overlap: the compiled counter cannot be used")
    return out


_CLASSES_LOCK = threading.Lock()


def char_classes() -> np.ndarray:
    r"""``uint8[0x110000]``: each code point's class under GPT-2's pattern as this project splits it.

    :data:`LETTER`, :data:`DIGIT`, :data:`SPACE` or :data:`OTHER`, from the
    ``regex`` module's ``\p{L}``, ``\p{N}``, ``\s`` and ``[^\s\p{L}\p{N}]`` as
    :func:`bpe_core.pretokenize.tiktoken_compat.exact_pattern` rewrites them (the code points
    on which ``regex`` and tiktoken disagree are classed as tiktoken classes
    them, as the regex path does).  Checked to be a partition.  Kept in numba's
    cache directory beside the kernels' library (1.1 MB; computing it takes
    about 0.1 s).

    Raises:
        RuntimeError: the classes overlap (a ``regex`` or table change broke an assumption).
    """
    with _CLASSES_LOCK:  # built once per process even when counting threads ask at once
        return _char_classes()


@lru_cache(maxsize=1)
def _char_classes() -> np.ndarray:
    """:func:`char_classes`, cached (load from the cache directory, or compute and keep it there)."""

    def valid(table: np.ndarray) -> bool:
        return table.shape == (0x110000,) and table.dtype == np.uint8 and table.min() >= 1 and table.max() <= 4

    key = source_key("counting/kernel.py", "pretokenize/tiktoken_compat.py")
    return cached_table("gpt2_classes", key, _compute_char_classes, valid)


@njit(inline="always")
def _char(buf, i, v):
    """``(code point, bytes)`` of the UTF-8 character at ``buf[i]`` (``i < v``); ``(0, 0)`` if it is not valid UTF-8.

    Valid means what Python's strict decoder accepts: no overlong forms, no
    surrogates, nothing past U+10FFFF, no character running past ``v``.
    """
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xC2 or b0 > 0xF4:
        return 0, 0
    if b0 < 0xE0:
        if i + 1 >= v or buf[i + 1] & 0xC0 != 0x80:
            return 0, 0
        return (b0 & 0x1F) << 6 | np.int64(buf[i + 1] & 0x3F), 2
    if b0 < 0xF0:
        if i + 2 >= v:
            return 0, 0
        b1, b2 = np.int64(buf[i + 1]), np.int64(buf[i + 2])
        lo = 0xA0 if b0 == 0xE0 else 0x80
        hi = 0x9F if b0 == 0xED else 0xBF
        if b1 < lo or b1 > hi or b2 & 0xC0 != 0x80:
            return 0, 0
        return (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F), 3
    if i + 3 >= v:
        return 0, 0
    b1, b2, b3 = np.int64(buf[i + 1]), np.int64(buf[i + 2]), np.int64(buf[i + 3])
    lo = 0x90 if b0 == 0xF0 else 0x80
    hi = 0x8F if b0 == 0xF4 else 0xBF
    if b1 < lo or b1 > hi or b2 & 0xC0 != 0x80 or b3 & 0xC0 != 0x80:
        return 0, 0
    return (b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F), 4


@njit(inline="always")
def _token_end(buf, i, v, cls):
    """End of the GPT-2 pre-token starting at ``i`` in the segment ``buf[:v]``; -1 at invalid UTF-8.

    The pattern's alternatives, in order: a contraction (``'s`` ...), an optional
    space and a run of letters, of digits, or of other characters; whitespace up
    to the segment's end; whitespace not followed by a non-space (all but the
    last whitespace character of a run that a non-space follows); one whitespace
    character.
    """
    c = buf[i]
    if c == 39 and i + 1 < v:  # 's 't 'm 'd 're 've 'll
        d = buf[i + 1]
        if d == 115 or d == 116 or d == 109 or d == 100:  # noqa: PLR1714 -- s t m d; numba-friendly
            return i + 2
        if i + 2 < v:
            e = buf[i + 2]
            if (d == 114 and e == 101) or (d == 118 and e == 101) or (d == 108 and e == 108):
                return i + 3
    if c < 0x80:
        k = cls[c]
        j = i + 1
    else:
        cp, n = _char(buf, i, v)
        if n == 0:
            return -1
        k = cls[cp]
        j = i + n
    if c == 32 and j < v:  # ' ?X': a space before a non-space starts the run
        d = buf[j]
        if d < 0x80:
            k2 = cls[d]
            n2 = 1
        else:
            cp, n2 = _char(buf, j, v)
            if n2 == 0:
                return -1
            k2 = cls[cp]
        if k2 != SPACE:
            k = k2
            j += n2
    if k != SPACE:
        while j < v:
            d = buf[j]
            if d < 0x80:
                if cls[d] != k:
                    break
                j += 1
            else:
                cp, n2 = _char(buf, j, v)
                if n2 == 0:
                    return -1
                if cls[cp] != k:
                    break
                j += n2
        return j
    chars = 1
    last = i  # start of the run's last whitespace character
    while j < v:
        d = buf[j]
        if d < 0x80:
            if cls[d] != SPACE:
                break
            n2 = 1
        else:
            cp, n2 = _char(buf, j, v)
            if n2 == 0:
                return -1
            if cls[cp] != SPACE:
                break
        last = j
        j += n2
        chars += 1
    if j == v:  # \s++$: the whole run
        return j
    if chars >= 2:  # \s+(?!\S): all but the last, which goes with what follows
        return last
    return j  # \s: one whitespace character before a non-space


@njit(inline="always")
def _key(buf, s, e):
    """A token's 64-bit key: its bytes themselves when at most 8 (exact), else their FNV-1a hash."""
    h = np.uint64(0)
    if e - s <= 8:
        for k in range(s, e):
            h = (h << np.uint64(8)) | np.uint64(buf[k])
        return h
    h = np.uint64(14695981039346656037)
    for k in range(s, e):
        h = (h ^ np.uint64(buf[k])) * np.uint64(1099511628211)
    return h


@njit(inline="always")
def _home(key, n, mask):
    """The slot where a token's probe starts (a multiplicative hash of its key and length)."""
    x = (key ^ np.uint64(n)) * np.uint64(11400714819323198485)
    return np.int64(x >> np.uint64(24)) & mask


@njit(inline="always")
def _count_one(buf, s, e, table, mask, st):
    """Count one occurrence of ``buf[s:e]`` in ``table``, a new row when it is not there yet (``st[2] += 1``).

    ``table``: ``int64[size, 4]`` rows ``(start, length, count, key)`` of an
    open-addressing table (start -1: empty; ``mask = size - 1``), with a free
    row left (the caller checks ``2 * (st[2] + 1) <= size``).  Keys as
    :func:`_key`, exact: bytes longer than 8 are compared.  Shared by
    :func:`_scan` (pre-tokens) and :func:`bpe_core.counting.unit_kernel._scan_units` (units),
    both compiled without reference counting (``nrt=False``, see :class:`bpe_core.counting.native.Kernel`):
    with it, the arrays passed here cost about 20% of :func:`_scan`'s time.
    """
    n = e - s
    key = _key(buf, s, e)
    ikey = np.int64(key)
    slot = _home(key, n, mask)
    while True:
        s0 = table[slot, 0]
        if s0 < 0:
            table[slot, 0] = s
            table[slot, 1] = n
            table[slot, 2] = 1
            table[slot, 3] = ikey
            st[2] += 1
            return
        if table[slot, 3] == ikey and table[slot, 1] == n:
            same = True
            if n > 8:  # the key is a hash: compare the bytes
                for k in range(n):
                    if buf[s0 + k] != buf[s + k]:
                        same = False
                        break
            if same:
                table[slot, 2] += 1
                return
        slot = (slot + 1) & mask


@kernel("i8[:,:]", "i8[:,:]", returns=None)
def _rehash(table, out):
    """Move the rows of ``table`` (``start, length, count, key``; start -1 = empty) into ``out``.

    ``out`` is all -1, its length a power of two.
    """
    mask = out.shape[0] - 1
    for t in range(table.shape[0]):
        if table[t, 0] >= 0:
            u = _home(np.uint64(table[t, 3]), table[t, 1], mask)
            while out[u, 0] >= 0:
                u = (u + 1) & mask
            for c in range(4):
                out[u, c] = table[t, c]


@kernel("u1[]", "i8[]", "u1[]", "i8[:,:]", "i8[]")
def _scan(buf, bounds, cls, table, st):
    """Split and count from segment ``st[0]``, byte ``st[1]``, until done or the table is full.

    ``table``: ``int64[size, 4]`` rows ``(start, length, count, key)`` of an
    open-addressing table (one row per slot: one cache line per probe).
    ``st``: segment, position, table entries, pre-tokens counted.
    Returns 0 when done, 1 when the table must grow (the caller grows it and
    calls again: no array is rebound in here, which would cost numba
    reference-count updates per token), 2 at invalid UTF-8.
    """
    size = table.shape[0]
    mask = size - 1
    for seg in range(st[0], bounds.size - 1):
        lo, hi = bounds[seg], bounds[seg + 1]
        i = max(lo, st[1])
        st[0] = seg
        while i < hi:
            if 2 * (st[2] + 1) > size:
                st[1] = i
                return 1
            e = _token_end(buf, i, hi, cls)
            if e < 0:
                return 2
            st[3] += 1
            _count_one(buf, i, e, table, mask, st)
            i = e
        st[1] = 0
    st[0] = bounds.size - 1
    return 0


_SCRATCH = threading.local()
"""Each counting thread's table, kept from one chunk to the next (``table``)."""


def count_gpt2(buf: np.ndarray, bounds: np.ndarray, cls: np.ndarray) -> tuple | None:
    """Split segments of UTF-8 text into GPT-2 pre-tokens and count them.

    Args:
        buf: ``uint8``, the UTF-8 bytes of the segments, concatenated.
        bounds: ``int64``, segment ``i`` is ``buf[bounds[i]:bounds[i + 1]]``
            (pre-tokens never cross a segment boundary; each segment starts at a
            character boundary).
        cls: :func:`char_classes`.

    Returns:
        ``(starts, lengths, counts, pretokens)``: each distinct pre-token as
        ``buf[starts[i]:starts[i] + lengths[i]]`` (its first occurrence) with its
        count, and the number of pre-token occurrences; ``None`` when ``buf`` is
        not valid UTF-8 (the caller words the error).

    The open-addressing table is kept per thread and reused by the thread's next
    call (cleared, and grown as needed): chunk after chunk, no new pages to
    fault in (with :func:`bpe_core.counting.native.release_large_blocks`, every new table
    would be fresh pages from the system).
    """
    buf = read_only(buf)
    table = getattr(_SCRATCH, "table", None)  # this thread's table from its last chunk: its pages are mapped
    if table is None:
        table = np.full((1 << 14, 4), -1, dtype=np.int64)
    else:
        table.fill(-1)
    st = np.zeros(4, dtype=np.int64)
    while True:
        status = _scan(buf, bounds, cls, table, st)
        if status == 0:
            break
        if status == 2:
            return None
        grown = np.full((2 * table.shape[0], 4), -1, dtype=np.int64)
        _rehash(table, grown)
        table = grown
    _SCRATCH.table = table
    used = np.flatnonzero(table[:, 0] >= 0)  # three contiguous columns: no copy of the whole rows
    return table[used, 0], table[used, 1], table[used, 2], int(st[3])


@kernel("i4[]", "i8[:,:]", "u1[]", "i8[]", "u1[]", "i8[]", "i8[]", "i8[]", returns=None)
def _accumulate(slots, ent, arena, st, buf, starts, lens, counts):
    """Add the pre-tokens ``buf[starts[i]:starts[i] + lens[i]]`` (``counts[i]`` times each) to the table.

    ``slots``: ``int32[size]``, an open-addressing table of entry indices (-1 =
    empty) with room for every insertion; ``ent``: ``int64[cap, 4]`` rows
    ``(start in arena, length, count, key)``, one per distinct pre-token, in
    the order first seen; ``arena``: ``uint8``, the distinct pre-tokens' bytes
    in that order; ``st``: entries, arena bytes used.  The caller sizes all
    three for the worst case (every pre-token new).  Runs without the GIL.
    """
    mask = slots.size - 1
    for i in range(starts.size):
        s = starts[i]
        n = lens[i]
        key = _key(buf, s, s + n)
        ikey = np.int64(key)
        h = _home(key, n, mask)
        while True:
            e = slots[h]
            if e < 0:
                e = st[0]
                used = st[1]
                for k in range(n):
                    arena[used + k] = buf[s + k]
                ent[e, 0] = used
                ent[e, 1] = n
                ent[e, 2] = counts[i]
                ent[e, 3] = ikey
                slots[h] = e
                st[0] = e + 1
                st[1] = used + n
                break
            if ent[e, 3] == ikey and ent[e, 1] == n:
                same = True
                if n > 8:  # the key is a hash: compare the bytes
                    a = ent[e, 0]
                    for k in range(n):
                        if arena[a + k] != buf[s + k]:
                            same = False
                            break
                if same:
                    ent[e, 2] += counts[i]
                    break
            h = (h + 1) & mask


@kernel("i8[:,:]", "i8", "i4[]", returns=None)
def _reslot(ent, n, slots):
    """Fill ``slots`` (all -1, a power of two) with an index of the first ``n`` entries of ``ent``."""
    mask = slots.size - 1
    for e in range(n):
        h = _home(np.uint64(ent[e, 3]), ent[e, 1], mask)
        while slots[h] >= 0:
            h = (h + 1) & mask
        slots[h] = e


@kernel("u1[]", "i8[]", "i8[]", "u1[]", returns=None)
def _gather(buf, starts, lens, out):
    pos = 0
    for i in range(starts.size):
        n = lens[i]
        s = starts[i]
        for k in range(n):
            out[pos + k] = buf[s + k]
        pos += n


def gather(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``buf[starts[i]:starts[i] + lens[i]]`` for every ``i``, concatenated (``uint8``): a chunk's table made compact.

    Args:
        buf: ``uint8``, read-only.
        starts: ``int64``, contiguous.
        lens: ``int64``, contiguous, same length.
    """
    out = np.empty(int(lens.sum()), dtype=np.uint8)
    _gather(read_only(buf), np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(lens, np.int64), out)
    return out


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself if it is read-only, else a read-only view of it.

    numba compiles one machine-code version per argument type, and read-only
    arrays (those over ``bytes``) are another type than writable ones: kernels
    are always given read-only inputs, as the warm-up gives them, so no large
    training meets a type the warm-up did not compile.
    """
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


class CountAccumulator:
    """A growing table of pre-token counts held in numpy arrays: no Python object per pre-token.

    Pre-tokens are added as byte ranges of a buffer with their counts
    (:meth:`add`); each distinct one is stored once, its bytes copied into an
    arena in the order first seen, so the table is three arrays (:meth:`result`)
    that a merge loop reads directly.  Keys and exact comparison as in
    :func:`count_gpt2`.  :meth:`add` runs compiled code without the GIL,
    but one accumulator must not be used by two threads at once.

    >>> acc = CountAccumulator()
    >>> acc.add(b"ab cd ab", [0, 3, 6], [2, 2, 2], [1, 1, 1])
    >>> data, lens, counts = acc.result()
    >>> bytes(data), lens.tolist(), counts.tolist()
    (b'abcd', [2, 2], [2, 1])
    """

    def __init__(self) -> None:
        self._slots = np.full(1 << 12, -1, dtype=np.int32)
        self._ent = np.zeros((1 << 10, 4), dtype=np.int64)
        self._arena = np.zeros(1 << 14, dtype=np.uint8)
        self._st = np.zeros(2, dtype=np.int64)

    def __len__(self) -> int:
        return int(self._st[0])

    def add(self, buf, starts, lens, counts) -> None:
        """Add ``counts[i]`` occurrences of ``buf[starts[i]:starts[i] + lens[i]]`` for every ``i``.

        Args:
            buf: ``bytes`` or a ``uint8`` array.
            starts: where each pre-token starts in ``buf`` (an integer array or list).
            lens: its length in bytes (same length as ``starts``).
            counts: its occurrences to add (same length).
        """
        # one argument layout (read-only, contiguous), so that the kernel compiled by the warm-up serves
        buf = read_only(np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf)
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        lens = np.ascontiguousarray(lens, dtype=np.int64)
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        k = starts.size
        if not k:
            return
        n, used = int(self._st[0]), int(self._st[1])
        # room for the worst case (every pre-token new), grown by doubling
        if n + k > self._ent.shape[0]:
            ent = np.zeros((max(2 * self._ent.shape[0], n + k), 4), dtype=np.int64)
            ent[:n] = self._ent[:n]
            self._ent = ent
        need = used + int(lens.sum())
        if need > self._arena.size:
            arena = np.zeros(max(2 * self._arena.size, need), dtype=np.uint8)
            arena[:used] = self._arena[:used]
            self._arena = arena
        if 2 * (n + k) > self._slots.size:
            size = self._slots.size
            while 2 * (n + k) > size:
                size *= 2
            self._slots = np.full(size, -1, dtype=np.int32)
            _reslot(self._ent, n, self._slots)
        _accumulate(self._slots, self._ent, self._arena, self._st, buf, starts, lens, counts)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(data, lens, counts)``: pre-token ``i`` is ``data[o:o + lens[i]]`` with ``o = lens[:i].sum()``.

        ``data`` is ``uint8``, ``lens`` and ``counts`` are ``int64``; in the order
        first added.  The arrays are views of the accumulator's: do not add after.
        """
        n, used = int(self._st[0]), int(self._st[1])
        return self._arena[:used], self._ent[:n, 1], self._ent[:n, 2]


def warm() -> None:
    """Run every kernel of this module once on tiny inputs (on the current :func:`bpe_core.counting.native.carrier`).

    With the ``"jit"`` carrier this compiles them all (or loads them from numba's
    cache), the table growths included (:func:`_rehash`, :func:`_reslot`), which
    small inputs never reach.
    """
    count_gpt2(np.frombuffer(b"a b", dtype=np.uint8), np.array([0, 3], dtype=np.int64), char_classes())
    _rehash(np.full((4, 4), -1, dtype=np.int64), np.full((8, 4), -1, dtype=np.int64))
    CountAccumulator().add(b"ab", [0], [2], [1])
    gather(np.frombuffer(b"ab", dtype=np.uint8), np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64))
    _reslot(np.zeros((1, 4), dtype=np.int64), 1, np.full(8, -1, dtype=np.int32))
