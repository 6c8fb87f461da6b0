r"""Counting a text's *units* in compiled code: the first step of corpus figures by distinct pieces.

A unit (see :mod:`bpe_core.analysis.corpus`) runs from one cut to the next,
where a *cut* is a space (U+0020) whose previous character is not whitespace
and may be cut after (``cut_after[cp]``, the intersection of what the measured
tokenizers allow).  So the text ``"Hello, world  of\ntext"`` has the units
``"Hello,"``, ``" world  of\ntext"``: every word (maximal run of non-whitespace
characters) lies inside one unit, every unit but the text's first starts with
the space of its cut, and every unit but the last ends with a non-space.

:func:`count_units` finds the units of a chunk of UTF-8 text (checked as
Python's strict decoder checks it, character by character) and counts the
distinct ones in an open-addressing table keyed by their bytes, as
:func:`bpe_core.counting.kernel.count_gpt2` counts pre-tokens -- no Python
object per unit.  A chunk's first unit, when it starts a document, and its
last, when it ends one, are not counted in the table but returned (their
encoding can differ: a SentencePiece-style dummy prefix, the end of a text),
so :mod:`bpe_core.analysis.corpus` keys them apart.

The textbook version it must equal is :func:`bpe_core.analysis.corpus.text_units`
(``tests/engine/test_corpus.py``).
"""

from __future__ import annotations

import numpy as np

from . import kernel as ck
from .kernel import read_only
from .native import kernel

__all__ = ["count_units", "warm"]


@kernel("u1[]", "u1[]", "i8[:,:]", "i8[]")
def _scan_units(buf, cut_after, table, st):
    """Split ``buf`` into units and count them, from byte ``st[0]``, until done or the table is full.

    ``table``: ``int64[size, 4]`` rows ``(start, length, count, key)`` (start -1:
    empty).  ``st``: position, current unit's start, table entries, units
    counted, the first unit's end (-1 until known), whether the first unit is
    kept out of the table (1) -- in, and ``st[6]`` the last unit's start on return.
    Returns 0 when done, 1 when the table must grow (the caller grows it and
    calls again), 2 at invalid UTF-8 (``st[0]`` is then its byte offset).
    """
    size = table.shape[0]
    mask = size - 1
    v = buf.size
    i = st[0]
    s = st[1]
    prev = -1  # the previous character's code point (-1: none, or whitespace not checked)
    if i > 0:  # resuming: the character before ``i`` (a unit never resumes inside a character)
        k = i - 1
        while k > 0 and buf[k] & 0xC0 == 0x80:
            k -= 1
        prev, _n = ck._char(buf, k, v)
    while i < v:
        c = buf[i]
        if c == 32 and prev >= 0 and cut_after[prev] != 0 and i > s:
            if st[4] < 0:  # the first unit ends here
                st[4] = i
                if st[5] != 0:
                    s = i
                    prev = 32
                    i += 1
                    continue
            if 2 * (st[2] + 1) > size:
                st[0] = i
                st[1] = s
                return 1
            ck._count_one(buf, s, i, table, mask, st)
            st[3] += 1
            s = i
            prev = 32
            i += 1
            continue
        if c < 0x80:
            prev = c
            i += 1
        else:
            cp, n2 = ck._char(buf, i, v)
            if n2 == 0:
                st[0] = i
                return 2
            prev = cp
            i += n2
    st[0] = v
    st[1] = s
    st[6] = s
    return 0


def count_units(data, cut_after: np.ndarray, *, keep_first: bool) -> tuple | None:
    """The distinct units of a chunk of UTF-8 text with their counts (see the module docstring).

    The chunk must start at a cut or at the start of a document, and end at a
    cut or at the end of a document (``file_chunks``-style cutting, see
    :func:`bpe_core.analysis.corpus.unit_chunks`).

    Args:
        data: the chunk's UTF-8 bytes (``bytes`` or ``uint8`` array).
        cut_after: ``uint8[0x110000]``: 1 for the code points a unit may end
            after (never whitespace).
        keep_first: the chunk starts a document: its first unit is returned
            apart, not counted in the table.

    Returns:
        ``(buf, starts, lengths, counts, units, first, last)``: each distinct unit
        counted in the table as ``buf[starts[i]:starts[i] + lengths[i]]`` with its
        count, the units counted there, the byte range ``(start, end)`` of the
        first unit when ``keep_first`` (else ``None``) and of the last unit,
        which is never in the table (the caller decides whether it ends a
        document; an empty chunk has none: ``None``).  ``None`` instead of all
        that when ``data`` is not valid UTF-8.
    """
    buf = read_only(np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data)
    table = np.full((1 << 12, 4), -1, dtype=np.int64)
    st = np.zeros(7, dtype=np.int64)
    st[4] = -1
    st[5] = 1 if keep_first else 0
    while True:
        status = _scan_units(buf, cut_after, table, st)
        if status == 0:
            break
        if status == 2:
            return None
        grown = np.full((2 * table.shape[0], 4), -1, dtype=np.int64)
        ck._rehash(table, grown)
        table = grown
    rows = table[table[:, 0] >= 0]
    v = buf.size
    last = (int(st[6]), v) if v else None
    first = None
    if keep_first and v:
        first = (0, int(st[4]) if st[4] >= 0 else v)
        if first[1] == v:  # one unit only: it is both
            last = None
    return buf, rows[:, 0], rows[:, 1], rows[:, 2], int(st[3]), first, last


def warm() -> None:
    """Run the kernel once on tiny inputs (compiling it under numba's JIT), the table growth included."""
    table = np.ones(0x110000, dtype=np.uint8)
    count_units(b"a b c", table, keep_first=True)
    count_units(b" ".join(b"w%d" % i for i in range(3000)), table, keep_first=False)
