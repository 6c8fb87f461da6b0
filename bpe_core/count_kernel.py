r"""GPT-2 pre-token counting of ASCII text compiled with numba, and the readiness of the numba kernels.

Counting is bounded by the regex split (about 10 MB per CPU-second with the
``str`` objects it creates and the ``Counter`` that hashes them).  For GPT-2's
pattern on ASCII text the split is a small state machine, written here over
the UTF-8 bytes, and the pre-tokens are counted in an open-addressing table
keyed by their bytes (compared byte by byte, so exact), with no Python object
per occurrence.  What is not ASCII goes back to the exact regex path:

* a stretch holding a non-ASCII byte is widened to the nearest *cuts* on both
  sides -- positions ``p`` where a visible ASCII character (``[!-~]``) is
  followed by a space or a newline.  GPT-2's pattern has a pre-token boundary
  at such a cut and matches each side of it independently (no alternative
  matches whitespace after a non-whitespace character, a space may only start
  a match, and the pattern never looks behind), as
  :func:`bpe_core.pretokenize.iter_pretoken_strings` also relies on; the
  stretch is returned as a byte range for the caller to split with the regex;
* everything else is split here, with the character classes (``\p{L}``,
  ``\p{N}``, ``\s``) of the ASCII range taken from the ``regex`` module itself.

The pattern is GPT-2's, as :data:`bpe_core.pretokenize.PATTERNS` has it::

    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+

Tested against the regex split on real and adversarial ASCII text
(``tests/test_count_compiled.py``).

The kernels of this module and of :mod:`bpe_core.bpe.merge_kernel` are
compiled on first use and cached on disk by numba (``cache=True``);
:func:`is_ready` tells whether that compile has happened for the current
sources, so that callers never wait for it (see
:func:`bpe_core.bpe.trainer.merge_engine`).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys

import numpy as np
import regex

from .jit import HAVE_NUMBA, njit

__all__ = [
    "HAVE_NUMBA",
    "CountAccumulator",
    "ascii_classes",
    "cache_dir",
    "count_gpt2_ascii",
    "is_ready",
    "mark_ready",
    "warm",
]

LETTER, DIGIT, SPACE, OTHER = 1, 2, 3, 4


def ascii_classes() -> np.ndarray:
    r"""``uint8[128]``: the class of each ASCII character under ``regex``'s ``\p{L}``, ``\p{N}``, ``\s``.

    Returns:
        :data:`LETTER`, :data:`DIGIT`, :data:`SPACE` or :data:`OTHER` per code point.
    """
    out = np.full(128, OTHER, dtype=np.uint8)
    for c in range(128):
        ch = chr(c)
        if regex.fullmatch(r"\p{L}", ch):
            out[c] = LETTER
        elif regex.fullmatch(r"\p{N}", ch):
            out[c] = DIGIT
        elif regex.fullmatch(r"\s", ch):
            out[c] = SPACE
    return out


@njit(cache=True, inline="always")
def _is_cut(buf, p, lo, hi):
    """True when ``p`` (``lo < p < hi``) is a cut: a visible ASCII byte, then a space or newline."""
    return lo < p < hi and 0x21 <= buf[p - 1] <= 0x7E and (buf[p] == 0x20 or buf[p] == 0x0A)


@njit(cache=True, inline="always")
def _token_end(buf, i, v, cls):
    """End of the GPT-2 pre-token starting at ``i`` in the ASCII stretch ``buf[:v]``."""
    c = buf[i]
    if c == 39 and i + 1 < v:  # 's 't 'm 'd 're 've 'll
        d = buf[i + 1]
        if d == 115 or d == 116 or d == 109 or d == 100:  # noqa: PLR1714 -- s t m d; numba-friendly
            return i + 2
        if i + 2 < v:
            e = buf[i + 2]
            if (d == 114 and e == 101) or (d == 118 and e == 101) or (d == 108 and e == 108):
                return i + 3
    k = cls[c]
    j = i
    if c == 32 and i + 1 < v and cls[buf[i + 1]] != SPACE:  # ' ?X': the space starts the run
        j = i + 1
        k = cls[buf[j]]
    if k != SPACE:
        j += 1
        while j < v and cls[buf[j]] == k:
            j += 1
        return j
    while j < v and cls[buf[j]] == SPACE:
        j += 1
    if j == v:  # \s++$ (and \s+(?!\S) at the end): the whole run
        return j
    if j - i >= 2:  # \s+(?!\S): all but the last, which goes with what follows
        return j - 1
    return j  # \s+: one whitespace character before a non-space


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _home(key, n, mask):
    """The slot where a token's probe starts (a multiplicative hash of its key and length)."""
    x = (key ^ np.uint64(n)) * np.uint64(11400714819323198485)
    return np.int64(x >> np.uint64(24)) & mask


@njit(cache=True, nogil=True)
def _rehash(table, size):
    """The table's rows (``start, length, count, key``; start -1 = empty) in ``size`` slots."""
    out = np.full((size, 4), -1, dtype=np.int64)
    mask = size - 1
    for t in range(table.shape[0]):
        if table[t, 0] >= 0:
            u = _home(np.uint64(table[t, 3]), table[t, 1], mask)
            while out[u, 0] >= 0:
                u = (u + 1) & mask
            out[u] = table[t]
    return out


@njit(cache=True, nogil=True)
def _scan(buf, bounds, cls, table, regions, st):
    """Split and count from segment ``st[0]``, byte ``st[1]``, until done or an array is full.

    ``table``: ``int64[size, 4]`` rows ``(start, length, count, key)`` of an
    open-addressing table (one row per slot: one cache line per probe).
    ``st``: segment, position, table entries, pre-tokens counted, regions found.
    Returns 0 when done, 1 when the table must grow, 2 when ``regions`` must
    (the caller grows it and calls again: no array is rebound in here, which
    would cost numba reference-count updates per token).
    """
    size = table.shape[0]
    mask = size - 1
    for seg in range(st[0], bounds.size - 1):
        lo, hi = bounds[seg], bounds[seg + 1]
        pos = max(lo, st[1])
        st[0] = seg
        while pos < hi:
            # the next non-ASCII byte, and the region around it widened to cuts
            q = pos
            while q < hi and buf[q] < 128:
                q += 1
            v = hi
            r_end = hi
            if q < hi:
                if st[4] == regions.shape[0]:
                    st[1] = pos
                    return 2
                v = q
                while v > pos and not _is_cut(buf, v, lo, hi):
                    v -= 1
                r_end = q
                while True:  # past the non-ASCII run, then on to the next cut; swallow regions that meet
                    while r_end < hi and buf[r_end] >= 128:
                        r_end += 1
                    while r_end < hi and buf[r_end] < 128 and not _is_cut(buf, r_end, lo, hi):
                        r_end += 1
                    if r_end >= hi or _is_cut(buf, r_end, lo, hi):
                        break
            # split and count the ASCII stretch [pos, v)
            i = pos
            while i < v:
                if 2 * (st[2] + 1) > size:
                    st[1] = i
                    return 1
                e = _token_end(buf, i, v, cls)
                st[3] += 1
                n = e - i
                key = _key(buf, i, e)
                ikey = np.int64(key)
                slot = _home(key, n, mask)
                while True:
                    s0 = table[slot, 0]
                    if s0 < 0:
                        table[slot, 0] = i
                        table[slot, 1] = n
                        table[slot, 2] = 1
                        table[slot, 3] = ikey
                        st[2] += 1
                        break
                    if table[slot, 3] == ikey and table[slot, 1] == n:
                        same = True
                        if n > 8:  # the key is a hash: compare the bytes
                            for k in range(n):
                                if buf[s0 + k] != buf[i + k]:
                                    same = False
                                    break
                        if same:
                            table[slot, 2] += 1
                            break
                    slot = (slot + 1) & mask
                i = e
            if q < hi:
                regions[st[4], 0] = v
                regions[st[4], 1] = r_end
                st[4] += 1
                pos = r_end
            else:
                pos = hi
        st[1] = 0
    st[0] = bounds.size - 1
    return 0


def count_gpt2_ascii(buf: np.ndarray, bounds: np.ndarray, cls: np.ndarray) -> tuple:
    """Split and count the ASCII parts of segments; return the non-ASCII parts as byte ranges.

    Args:
        buf: ``uint8``, the UTF-8 bytes of the segments, concatenated.
        bounds: ``int64``, segment ``i`` is ``buf[bounds[i]:bounds[i + 1]]``
            (pre-tokens never cross a segment boundary).
        cls: :func:`ascii_classes`.

    Returns:
        ``(starts, lengths, counts, tokens, regions)``: each distinct pre-token of
        the ASCII parts as ``buf[starts[i]:starts[i] + lengths[i]]`` (its first
        occurrence) with its count; the number of pre-token occurrences counted;
        ``int64[n, 2]`` byte ranges ``[start, end)`` left to the regex (each
        between two cuts or segment edges, holding a non-ASCII character).
    """
    table = np.full((1 << 14, 4), -1, dtype=np.int64)
    regions = np.empty((64, 2), dtype=np.int64)
    st = np.zeros(5, dtype=np.int64)
    while True:
        status = _scan(buf, bounds, cls, table, regions, st)
        if status == 0:
            break
        if status == 1:
            table = _rehash(table, 2 * table.shape[0])
        else:
            regions = np.concatenate([regions, np.empty_like(regions)])
    rows = table[table[:, 0] >= 0]
    return rows[:, 0], rows[:, 1], rows[:, 2], int(st[3]), regions[: st[4]]


@njit(cache=True, nogil=True)
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
                arena[used : used + n] = buf[s : s + n]
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


@njit(cache=True, nogil=True)
def _reslot(ent, n, size):
    """A slot table of ``size`` (a power of two) indexing the first ``n`` entries of ``ent``."""
    slots = np.full(size, -1, dtype=np.int32)
    mask = size - 1
    for e in range(n):
        h = _home(np.uint64(ent[e, 3]), ent[e, 1], mask)
        while slots[h] >= 0:
            h = (h + 1) & mask
        slots[h] = e
    return slots


class CountAccumulator:
    """A growing table of pre-token counts held in numpy arrays: no Python object per pre-token.

    Pre-tokens are added as byte ranges of a buffer with their counts
    (:meth:`add`); each distinct one is stored once, its bytes copied into an
    arena in the order first seen, so the table is three arrays (:meth:`result`)
    that a merge loop reads directly.  Keys and exact comparison as in
    :func:`count_gpt2_ascii`.  :meth:`add` runs compiled code without the GIL,
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
        buf = np.frombuffer(buf, dtype=np.uint8) if isinstance(buf, bytes | bytearray | memoryview) else buf
        starts = np.asarray(starts, dtype=np.int64)
        lens = np.asarray(lens, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
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
            self._slots = _reslot(self._ent, n, size)
        _accumulate(self._slots, self._ent, self._arena, self._st, buf, starts, lens, counts)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(data, lens, counts)``: pre-token ``i`` is ``data[o:o + lens[i]]`` with ``o = lens[:i].sum()``.

        ``data`` is ``uint8``, ``lens`` and ``counts`` are ``int64``; in the order
        first added.  The arrays are views of the accumulator's: do not add after.
        """
        n, used = int(self._st[0]), int(self._st[1])
        return self._arena[:used], self._ent[:n, 1], self._ent[:n, 2]


def warm() -> None:
    """Compile (or load from the disk cache) every kernel of this module.

    Includes the table growth (:func:`_rehash`), which is called from Python and
    which small inputs never reach: a kernel first met in a large count would
    otherwise be compiled there, in every counting process.
    """
    count_gpt2_ascii(np.frombuffer(b"a b", dtype=np.uint8), np.array([0, 3], dtype=np.int64), ascii_classes())
    _rehash(np.full((4, 4), -1, dtype=np.int64), 8)
    CountAccumulator().add(b"ab", [0], [2], [1])
    _reslot(np.zeros((1, 4), dtype=np.int64), 1, 8)  # the slot table's growth, likewise


# ---------------------------------------------------------------------------
# readiness of the compiled kernels (this module's and bpe_core.bpe.merge_kernel's)


def cache_dir() -> str | None:
    """The directory where numba caches this module's machine code, or ``None`` if numba does not say.

    numba puts it in the ``__pycache__`` beside this file when that is writable,
    else in its user-wide cache directory (``NUMBA_CACHE_DIR`` overrides both).
    """
    path = getattr(getattr(_scan, "_cache", None), "_cache_path", None)
    return path if isinstance(path, str) else None


def _marker() -> str | None:
    """Path of the file that says the kernels of these very sources are compiled and cached."""
    folder = cache_dir() if HAVE_NUMBA else None
    if folder is None:
        return None
    import numba

    key = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in (os.path.join(here, "count_kernel.py"), os.path.join(here, "bpe", "merge_kernel.py")):
        with open(name, "rb") as f:
            key.update(f.read())
    key.update(f"{numba.__version__} {sys.version} {platform.machine()}".encode())
    return os.path.join(folder, f"bpe_core_kernels-{key.hexdigest()[:16]}.ready")


def is_ready() -> bool:
    """True when the numba kernels of these sources are in numba's disk cache (loading takes ~0.2 s).

    Set by :func:`mark_ready` after a process compiled and checked them
    (:func:`bpe_core.bpe.trainer.warm_compiled_loop`); a changed source, numba or
    Python version gives another marker name, so a stale cache reads as not ready.
    """
    path = _marker()
    return path is not None and os.path.exists(path)


def mark_ready() -> None:
    """Record that the kernels are compiled and cached (call after running them once).

    Raises:
        OSError: the cache directory is not writable.
    """
    path = _marker()
    if path is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("compiled\n")
