"""The compiled loops of corpus figures: totals of the units, figures of each piece, the walk over the units.

:mod:`bpe_core.analysis.corpus` calls these on the distinct units and pieces
of a text (numba kernels, carried as every kernel of the package is, see
:mod:`bpe_core.counting.native`).  Each equals, summed with the counts, what
:func:`bpe_core.analysis.metrics.compute_metrics` finds on the whole text's
spans (``tests/engine/test_corpus.py``): characters and words per
:func:`~bpe_core.analysis.metrics.word_ranges`, a word split when two or
more non-empty tokens overlap it (:func:`~bpe_core.analysis.metrics.word_pieces`),
tokens shared among the characters they cover in proportion to their UTF-8
lengths (:func:`bpe_core.analysis.scripts.script_breakdown`), combining marks
in the group of the character before them.

Characters are decoded from the pieces' UTF-8 (which the callers have checked).
"""

from __future__ import annotations

import numpy as np

from ..counting.native import kernel, njit
from ..wordpiece import encode_kernel as wk  # its code-point trie table serves the special tokens too

__all__ = ["piece_stats", "special_matches", "special_trie", "unit_totals", "walk_units"]

PASS = 255
"""A group code meaning "the group of the character before" (:data:`bpe_core.analysis.scripts.INHERITED`)."""


@njit(inline="always")
def _decode(buf, i):
    """``(code point, bytes)`` of the UTF-8 character at ``buf[i]`` (valid UTF-8)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return (b0 & 0x1F) << 6 | np.int64(buf[i + 1] & 0x3F), 2
    if b0 < 0xF0:
        return (b0 & 0x0F) << 12 | np.int64(buf[i + 1] & 0x3F) << 6 | np.int64(buf[i + 2] & 0x3F), 3
    return ((b0 & 0x07) << 18 | np.int64(buf[i + 1] & 0x3F) << 12 | np.int64(buf[i + 2] & 0x3F) << 6) | np.int64(
        buf[i + 3] & 0x3F
    ), 4


@kernel("u1[]", "i8[]", "i8[]", "u1[]", "u1[]", "i8", "i8[]", "i8[]", returns=None)
def _unit_totals(data, offsets, counts, space, groups, other, totals, group_chars):
    """Characters, bytes and words of the units (``totals``), and characters per group, each times its count.

    ``totals``: ``[characters, bytes, words]`` (added to); ``group_chars[g]``
    (added to).  A unit's first character, when a combining mark, joins
    ``other`` (nothing precedes a unit but a non-space, whose cut the unit's
    space starts; a document's first unit has nothing before it).
    """
    for u in range(counts.size):
        c = counts[u]
        i = offsets[u]
        end = offsets[u + 1]
        ctx = other
        in_word = False
        chars = 0
        words = 0
        while i < end:
            cp, n = _decode(data, i)
            i += n
            chars += 1
            g = np.int64(groups[cp])
            if g == PASS:
                g = ctx
            ctx = g
            group_chars[g] += c
            if space[cp] != 0:
                in_word = False
            elif not in_word:
                in_word = True
                words += 1
        totals[0] += c * chars
        totals[1] += c * (end - offsets[u])
        totals[2] += c * words


@kernel(
    "u1[]",
    "i8[]",
    "i8[]",
    "u1[]",
    "u1[]",
    "i8[]",
    "i8[]",
    "i8[]",
    "u1[]",
    "i8[:,:]",
    "f8[]",
    "f8[]",
    "i8[]",
    "i8[]",
    returns=None,
)
def _piece_stats(data, offsets, counts, space, groups, tok_off, starts, ends, kinds, out, lead, shares, blen, grp):
    """Each piece's figures under one tokenizer, and its tokens' shares of the groups (times the piece's count).

    Per piece ``p``, ``out[p]``: tokens, special, unknown, byte-fallback
    tokens, words inside the piece split (runs of non-space characters touching
    neither end, overlapped by two or more non-empty tokens), tokens
    overlapping the run at the piece's start (-1: it starts with a space), the
    same for the run at its end, whether one run covers the whole piece, the
    group of its last character that is not a combining mark (-1: none).
    ``lead[p]``: the tokens' share of the combining marks the piece starts
    with, whose group is the character's before (added in :func:`walk_units`);
    every other share goes to ``shares[group]``, times ``counts[p]``.
    ``blen``, ``grp``: scratch arrays as long as the longest piece (characters).
    """
    for p in range(counts.size):
        c = counts[p]
        i = offsets[p]
        end = offsets[p + 1]
        n = 0
        n_lead = 0
        last = -1
        leading = True
        while i < end:
            cp, nb = _decode(data, i)
            i += nb
            g = np.int64(groups[cp])
            if g == PASS:
                if leading:
                    n_lead += 1
                else:
                    g = last
            else:
                leading = False
                last = g
            grp[n] = g if space[cp] == 0 else -1 - g  # negative: a space (of group -1 - g)
            blen[n] = nb
            n += 1
        t0, t1 = tok_off[p], tok_off[p + 1]
        special = unknown = fallback = 0
        lead_share = 0.0
        for t in range(t0, t1):
            k = kinds[t]
            special += k & 1
            unknown += (k >> 1) & 1
            fallback += (k >> 2) & 1
            a, b = starts[t], ends[t]
            if b <= a:
                continue
            total = 0
            for q in range(a, b):
                total += blen[q]
            for q in range(a, b):
                w = blen[q] / total
                if q < n_lead:
                    lead_share += w
                else:
                    g = grp[q]
                    shares[g if g >= 0 else -1 - g] += c * w
        # runs of non-space characters and the non-empty tokens overlapping each
        inner = 0
        first_ov = -1
        last_ov = -1
        whole = 0
        tp = t0
        q = 0
        while q < n:
            if grp[q] < 0:
                q += 1
                continue
            a = q
            while q < n and grp[q] >= 0:
                q += 1
            b = q
            while tp < t1 and (ends[tp] <= a or ends[tp] <= starts[tp]):
                tp += 1
            ov = 0
            t = tp
            while t < t1 and starts[t] < b:
                if ends[t] > a and ends[t] > starts[t]:
                    ov += 1
                t += 1
            if a == 0 and b == n:
                whole = 1
                first_ov = ov
                last_ov = ov
            elif a == 0:
                first_ov = ov
            elif b == n:
                last_ov = ov
            elif ov >= 2:
                inner += 1
        out[p, 0] = t1 - t0
        out[p, 1] = special
        out[p, 2] = unknown
        out[p, 3] = fallback
        out[p, 4] = inner
        out[p, 5] = first_ov
        out[p, 6] = last_ov
        out[p, 7] = whole
        out[p, 8] = last
        lead[p] = lead_share


@kernel("i8[]", "i8[]", "i8[]", "i8[:,:]", "f8[]", "i8", "f8[]", "i8[]", returns=None)
def _walk_units(unit_off, refs, counts, stats, lead, other, shares, totals):
    """Words split over whole units, and the combining marks' shares, from each piece's figures.

    Unit ``u`` (``counts[u]`` times) is the pieces ``refs[unit_off[u]:unit_off[u + 1]]``
    in order; ``stats`` is :func:`piece_stats`' ``out``.  A word runs on from a
    piece into the next when the first ends and the second starts with a
    non-space: it is split when the non-empty tokens of all its parts number
    two or more.  ``totals[0]`` is added the words split; ``shares`` the
    leading marks' shares, in the group of the character before them.
    """
    split = 0
    for u in range(counts.size):
        c = counts[u]
        ctx = other
        open_ov = -1
        for k in range(unit_off[u], unit_off[u + 1]):
            p = refs[k]
            if lead[p] != 0.0:
                shares[ctx] += c * lead[p]
            if stats[p, 8] >= 0:
                ctx = stats[p, 8]
            first_ov = stats[p, 5]
            last_ov = stats[p, 6]
            whole = stats[p, 7]
            if first_ov >= 0:
                ov = first_ov + (open_ov if open_ov >= 0 else 0)
                if whole != 0:
                    open_ov = ov
                    continue
                if ov >= 2:
                    split += c
            elif open_ov >= 2:
                split += c
            open_ov = -1
            split += c * stats[p, 4]
            if last_ov >= 0:
                open_ov = last_ov
        if open_ov >= 2:
            split += c
    totals[0] += split


def unit_totals(
    data: np.ndarray, offsets: np.ndarray, counts: np.ndarray, space: np.ndarray, groups: np.ndarray, other: int
) -> tuple[np.ndarray, np.ndarray]:
    r""":func:`_unit_totals` with its outputs made here: ``([characters, bytes, words], characters per group)``.

    Args:
        data: ``uint8``, the units' UTF-8, concatenated.
        offsets: ``int64[n + 1]`` byte offsets of the units in ``data``.
        counts: ``int64[n]``, each unit's occurrences.
        space: ``uint8[0x110000]``, 1 for whitespace (``regex``'s ``\s``).
        groups: :func:`bpe_core.analysis.scripts.char_group_table`.
        other: the code of the group ``"Other"`` (what a mark with nothing before it joins).
    """
    totals = np.zeros(3, dtype=np.int64)
    group_chars = np.zeros(256, dtype=np.int64)
    _unit_totals(data, offsets, counts, space, groups, other, totals, group_chars)
    return totals, group_chars


def piece_stats(
    data: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    space: np.ndarray,
    groups: np.ndarray,
    tokens,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_piece_stats` of distinct pieces under one tokenizer: ``(stats int64[n, 9], lead float64[n], shares)``.

    Args:
        data: the pieces' UTF-8, concatenated.
        offsets: their byte offsets (``int64[n + 1]``).
        counts: each piece's occurrences in the text.
        space: as :func:`unit_totals`.
        groups: as :func:`unit_totals`.
        tokens: the tokenizer's :class:`bpe_core.pieces.PieceTokens` of these pieces.
    """
    n = counts.size
    longest = int(np.diff(offsets).max()) if n else 0  # bytes: at least the characters
    stats = np.zeros((n, 9), dtype=np.int64)
    lead = np.zeros(n, dtype=np.float64)
    shares = np.zeros(256, dtype=np.float64)
    blen = np.zeros(longest + 1, dtype=np.int64)
    grp = np.zeros(longest + 1, dtype=np.int64)
    _piece_stats(
        data, offsets, counts, space, groups, tokens.offsets, tokens.starts, tokens.ends, tokens.kinds,
        stats, lead, shares, blen, grp,
    )  # fmt: skip
    return stats, lead, shares


def walk_units(
    unit_off: np.ndarray, refs: np.ndarray, counts: np.ndarray, stats: np.ndarray, lead: np.ndarray, other: int,
    shares: np.ndarray,
) -> int:  # fmt: skip
    """:func:`_walk_units`: the words split in the units (``shares`` gets the leading marks' shares)."""
    totals = np.zeros(1, dtype=np.int64)
    _walk_units(unit_off, refs, counts, stats, lead, other, shares, totals)
    return int(totals[0])


def warm() -> None:
    """Run each kernel once on tiny inputs (compiling them under numba's JIT)."""
    from ..pieces import PieceTokens

    data = np.frombuffer(b" ab", dtype=np.uint8)
    off = np.array([0, 3], dtype=np.int64)
    one = np.ones(1, dtype=np.int64)
    space = np.zeros(0x110000, dtype=np.uint8)
    space[32] = 1
    groups = np.zeros(0x110000, dtype=np.uint8)
    unit_totals(data, off, one, space, groups, 0)
    tokens = PieceTokens(
        np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.array([3], dtype=np.int64), np.zeros(1, dtype=np.uint8),
    )  # fmt: skip
    stats, lead, shares = piece_stats(data, off, one, space, groups, tokens)
    walk_units(np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), one, stats, lead, 0, shares)


# ---------------------------------------------------------------------------
# special tokens


@kernel("u1[]", "i8[]", "u1[]", "i8[:,:]", "u1[]", "i8[:,:]")
def _special_matches(buf, ends, first, table, final, out):
    """The special tokens in ``buf``: leftmost, then longest, never past the end of a unit.

    ``ends``: each unit's end offset (ascending).  The tokens' byte trie is
    WordPiece's trie table (:func:`bpe_core.wordpiece.encode_kernel.fill_trie`,
    walked with its ``_child``; the root is node 0), ``final[node]`` when a token
    ends there, ``first[byte]`` when some token starts with that byte.  Writes the
    ranges ``(start, end)`` into ``out`` as far as it has rows, and returns how
    many there are.
    """
    mask = table.shape[0] - 1
    found = 0
    u = 0
    p = 0
    while p < buf.size:
        while ends[u] <= p:
            u += 1
        if first[buf[p]] == 0:
            p += 1
            continue
        limit = ends[u]
        node = 0
        best = -1
        q = p
        while q < limit:
            node = wk._child(table, mask, node, np.int64(buf[q]))
            if node < 0:
                break
            q += 1
            if final[node] != 0:
                best = q
        if best < 0:
            p += 1
            continue
        if found < out.shape[0]:
            out[found, 0] = p
            out[found, 1] = best
        found += 1
        p = best
    return found


def special_trie(tokens) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, table, final)``: the byte trie of ``tokens`` (``bytes``) as :func:`special_matches` reads it.

    Raises:
        ValueError: an empty token.
    """
    edges: dict[int, int] = {}  # node * CODES + byte -> child, WordPiece's trie keys
    final = [False]
    for token in tokens:
        if not token:
            raise ValueError("a special token is empty")
        node = 0
        for b in token:
            node = edges.setdefault(node * wk.CODES + b, len(final))
            if node == len(final):
                final.append(False)
        final[node] = True
    keys = np.fromiter(edges, dtype=np.int64, count=len(edges))
    children = np.fromiter(edges.values(), dtype=np.int64, count=len(edges))
    first = np.zeros(256, dtype=np.uint8)
    first[[t[0] for t in tokens]] = 1
    return first, wk.fill_trie(keys, children), np.array(final, dtype=np.uint8)


def special_matches(data: np.ndarray, offsets: np.ndarray, trie: tuple) -> np.ndarray:
    """``int64[m, 2]``: the byte ranges of the special tokens in the units, leftmost then longest in each unit.

    Args:
        data: ``uint8``, the units' UTF-8 concatenated.
        offsets: ``int64[n + 1]``, their byte offsets.
        trie: :func:`special_trie` of the tokens.

    What :func:`bpe_core.pretokenize.split_special` finds in each unit alone
    (``tests/engine/test_corpus.py``).
    """
    first, table, final = trie
    ends = np.ascontiguousarray(offsets[1:], dtype=np.int64)
    out = np.zeros((max(1024, data.size // 64), 2), dtype=np.int64)
    found = _special_matches(data, ends, first, table, final, out)
    if found > out.shape[0]:
        out = np.zeros((found, 2), dtype=np.int64)
        _special_matches(data, ends, first, table, final, out)
    return out[:found]
