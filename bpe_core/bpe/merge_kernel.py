"""The BPE merge loop compiled with numba: the same merges as the Python loop, for large tables.

:mod:`bpe_core.bpe.trainer` runs its pure-Python merge loop on small tables
(the app's texts) and this one on large ones (see
:func:`bpe_core.bpe.trainer.merge_engine`); both pick, at every step, the pair
of highest weighted count, ties going to the greatest ``(left bytes, right
bytes)`` and then to the smaller ``(left id, right id)`` -- exactly the order of
the Python loop's heap -- so the merges and the trace are identical (tested
on real text against the Python loop and the textbook trainer,
:func:`bpe_core.textbook.bpe.train_merges`).

Data layout (all numpy arrays, nothing per pre-token is a Python object):

* the distinct pre-tokens ("words") are one ``int32`` array ``ids``: each word is
  a header of :data:`HEADER` entries -- its current length ``n`` in tokens, then
  its count as two 32-bit halves -- followed by its ``n`` token ids, rewritten in
  place (and shortened) as merges apply.  A word is known by the offset ``w`` of
  its header, so a visit reads one stretch of memory, the header mostly in the
  same cache line as the ids (kept in a separate table, a word's row and its
  ids were two misses, the second waiting for the first);
* a pair ``(x, y)`` has a dense id ``pid``, found through an open-addressing
  hash table keyed by ``x << 32 | y``; per pair its two ids, its weighted
  count, and a growable vector (in one shared ``pool``) of the words that held
  it when it was made (entries go stale as words change: a visit that finds no
  occurrence skips the word);
* a binary max-heap of ``(count, pid)`` with lazy invalidation: an entry whose
  count is stale when popped is pushed back with the current count (a pair's
  count never grows after the merge that makes it, so the top entry that is
  current is the true maximum).

A merge rewrites each word of the pair's vector left to right (BPE's
non-overlapping replacement) and moves the weighted counts of the neighbouring
pairs as Hugging Face ``tokenizers``' ``Word::merge`` does: for each replaced
occurrence ``x a b y``, ``(x, a)``, ``(a, b)`` and ``(b, y)`` lose the word's
count and ``(x, new)``, ``(new, y)`` gain it, where ``x`` is read from the
already rewritten word (so ``a b a b`` ends with one ``(new, new)``).  That
rewrite is the linked-list merge of :meth:`bpe_core.linked_words.LinkedWords.merge`
and the ``str.replace`` of :meth:`bpe_core.bpe.trainer._MergeLoop.rewrite_words`,
done on arrays; the function this kernel must equal is the Python loop
:func:`bpe_core.bpe.trainer._merge_loop` (same merges, counts and trace, checked
by ``tests/engine/test_train_compiled.py`` on real text, overlaps and ties, and by
:func:`bpe_core.bpe.trainer.warm_compiled_loop` before a built library is used).

The kernels are compiled by numba into the shared library of
:mod:`bpe_core.counting.native` (once per machine; numba's JIT when it is not built)
and allocate nothing: :class:`MergeLoop` sizes every array and grows what a
merge lacks when :func:`_run_merges` asks, before that merge changes anything.
"""

from __future__ import annotations

import numpy as np

from ..counting.native import kernel, njit, prefetch

__all__ = ["MergeLoop"]

_EMPTY = -1
_MUL = np.uint64(11400714819323198485)  # 2**64 / golden ratio: Fibonacci hashing
_SHIFT = np.uint64(32)


@njit(inline="always")
def _slot(hkeys, key):
    """Index of ``key`` in the open-addressing table, or of the empty slot where it would go."""
    mask = hkeys.size - 1
    i = np.int64((np.uint64(key) * _MUL) >> _SHIFT) & mask
    while True:
        k = hkeys[i]
        if k == key or k == _EMPTY:  # noqa: PLR1714, SIM109 -- plain compares compile best in numba
            return i
        i = (i + 1) & mask


@kernel("i8[]", "i4[]", "i8[]", "i4[]", returns=None)
def _rehash(hkeys, hvals, nk, nv):
    """Move the entries of ``hkeys``/``hvals`` into ``nk`` (all empty, a power of two) and ``nv``."""
    for i in range(hkeys.size):
        k = hkeys[i]
        if k != _EMPTY:
            j = _slot(nk, k)
            nk[j] = k
            nv[j] = hvals[i]


@kernel("i4[]", "i8[]", "i4[]", "i8[]", "i8")
def _compact_pool(pool, vstart, vlen, pcount, n_pairs):
    """Slide the word vectors of pairs ``0 .. n_pairs - 1`` still counted to the front of ``pool``.

    Vectors lie in the pool in pair-id order (each merge lays out its new pairs'
    at the end), so moving each left in that order never overwrites one not yet
    moved.  Pairs of count 0 lose their vector.  Returns the pool entries used.
    """
    pos = 0
    for q in range(n_pairs):
        n = vlen[q]
        if n == 0:
            continue
        if pcount[q] <= 0:
            vlen[q] = 0
            continue
        s = vstart[q]
        if s != pos:
            for k in range(n):
                pool[pos + k] = pool[s + k]
            vstart[q] = pos
        pos += n
    return pos


@njit(inline="always")
def _cmp_tokens(x, y, tb, tstart, tlen):
    """-1, 0 or 1 as the bytes of token ``x`` compare with those of token ``y``."""
    if x == y:
        return 0
    sx, sy, lx, ly = tstart[x], tstart[y], tlen[x], tlen[y]
    for k in range(min(lx, ly)):
        bx, by = tb[sx + k], tb[sy + k]
        if bx != by:
            return 1 if bx > by else -1
    if lx == ly:
        return 0
    return 1 if lx > ly else -1


@njit(inline="always")
def _before(ci, pi, cj, pj, pa, pb, tb, tstart, tlen):
    """True when heap entry ``(ci, pi)`` (count, pair id) ranks before ``(cj, pj)``.

    The order: higher count, then greater left bytes, greater right bytes,
    smaller left id, smaller right id (the Python loop's heap order).
    """
    if ci != cj:
        return ci > cj
    c = _cmp_tokens(pa[pi], pa[pj], tb, tstart, tlen)
    if c != 0:
        return c > 0
    c = _cmp_tokens(pb[pi], pb[pj], tb, tstart, tlen)
    if c != 0:
        return c > 0
    if pa[pi] != pa[pj]:
        return pa[pi] < pa[pj]
    return pb[pi] < pb[pj]


@njit(inline="always")
def _sift_down(hc, hp, n, i, pa, pb, tb, tstart, tlen):
    c, p = hc[i], hp[i]
    while True:
        k = 2 * i + 1
        if k >= n:
            break
        if k + 1 < n and _before(hc[k + 1], hp[k + 1], hc[k], hp[k], pa, pb, tb, tstart, tlen):
            k += 1
        if not _before(hc[k], hp[k], c, p, pa, pb, tb, tstart, tlen):
            break
        hc[i], hp[i] = hc[k], hp[k]
        i = k
    hc[i], hp[i] = c, p


@njit(inline="always")
def _sift_up(hc, hp, i, pa, pb, tb, tstart, tlen):
    c, p = hc[i], hp[i]
    while i > 0:
        k = (i - 1) // 2
        if not _before(c, p, hc[k], hp[k], pa, pb, tb, tstart, tlen):
            break
        hc[i], hp[i] = hc[k], hp[k]
        i = k
    hc[i], hp[i] = c, p


@kernel("i8[]", "i8[]", "i8", "i4[]", "i4[]", "u1[]", "i8[]", "i8[]", returns=None)
def _heapify(hc, hp, n, pa, pb, tb, tstart, tlen):
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(hc, hp, n, i, pa, pb, tb, tstart, tlen)


HEADER = 3
"""Entries before each word's token ids in ``ids``: its length in tokens, then its count's low and high 32 bits."""


@njit(inline="always")
def _word_count(ids, w):
    """The count of the word whose header is at ``ids[w]``."""
    return (np.int64(ids[w + 2]) << 32) | (np.int64(ids[w + 1]) & 0xFFFFFFFF)


@kernel("u1[]", "i8[]", "i8[]", "i4[]", returns=None)
def _lay_out(data, lens, counts, ids):
    """Write each word of ``data`` (bytes, ``lens[k]`` each) into ``ids`` as its header and its byte ids.

    ``ids`` holds ``lens.sum() + HEADER * lens.size`` entries.
    """
    src = 0
    w = 0
    for k in range(lens.size):
        n = lens[k]
        ids[w] = n
        ids[w + 1] = np.int32(counts[k] & 0xFFFFFFFF)
        ids[w + 2] = np.int32(counts[k] >> 32)
        for t in range(n):
            ids[w + HEADER + t] = data[src + t]
        src += n
        w += HEADER + n


@kernel("i4[]", "i8[]", "i8[]", "i8[]", returns=None)
def _pair_census(ids, pcnt, nvec, last):
    """First pass over the words (as byte ids): each byte pair's weighted count and number of words holding it.

    ``pcnt``, ``nvec`` (zeros) and ``last`` (all -1) have 65,536 entries, one per
    16-bit pair code ``left << 8 | right``.
    """
    w = 0
    while w < ids.size:
        m, c, s = ids[w], _word_count(ids, w), w + HEADER
        for j in range(s, s + m - 1):
            code = np.int64(ids[j]) << 8 | np.int64(ids[j + 1])
            pcnt[code] += c
            if last[code] != w:
                last[code] = w
                nvec[code] += 1
        w = s + m


@kernel("i4[]", "i8[]", "i8[]", "i4[]", "i4[]", "i8[]", returns=None)
def _file_pairs(ids, pid, vstart, vlen, pool, last):
    """Second pass: file each word (its header's offset) once under every pair it holds (``pool[vstart[q]:...]``).

    Each vector comes out ascending.  ``pid``: the pair id of each 16-bit code;
    ``vlen`` (zeros) counts what is filed; ``last`` (all -1) as in :func:`_pair_census`.
    """
    w = 0
    while w < ids.size:
        m, s = ids[w], w + HEADER
        for j in range(s, s + m - 1):
            code = np.int64(ids[j]) << 8 | np.int64(ids[j + 1])
            if last[code] != w:
                last[code] = w
                q = pid[code]
                pool[vstart[q] + vlen[q]] = w
                vlen[q] += 1
        w = s + m


@kernel("i8[]", "i8[]", "i4[]", returns=None)
def _index_pairs(pair_keys, hkeys, hvals):
    """Put pair ``i`` (key ``pair_keys[i]``) in the hash table ``hkeys``/``hvals`` (all empty, a power of two)."""
    for i in range(pair_keys.size):
        j = _slot(hkeys, pair_keys[i])
        hkeys[j] = pair_keys[i]
        hvals[j] = i


# the fields of _run_merges' state vector ``st``
(
    NEXT_ID, TB_USED, PAIRS, POOL_USED, HEAP_SIZE, HASH_USED, DONE, PENDING, PENDING_COUNT, ROOM, TB_NEED,
    PAIR_ROOM, POOL_LIMIT,
) = range(13)  # fmt: skip
STATE_FIELDS = 13


def _hash_size(n: int) -> int:
    """Slots of a pair hash table for ``n`` keys: a power of two, at most 3/4 full.

    :func:`_run_merges` asks for a larger table before a merge could fill more
    than 3/4 of it.  Linear probing with Fibonacci hashing stays short at that
    load (eight keys share a cache line); at 1/2 the table doubled near the end
    of the 20 MB corpus's training (258,000 pairs: 12 MiB more, plus the old
    table's while it was copied), the run's peak memory.
    """
    size = 16
    while 4 * n > 3 * size:
        size *= 2
    return size


POOL_SLACK = 4
"""After a compaction the pool may grow by ``1 / POOL_SLACK`` of what it then holds before the next one."""

_AHEAD = 8
"""While the merge rewrites a word of the pair's vector, it prefetches the word this many places further on.

Visited one by one, each word was a cache miss waited for in turn (two fifths of
the loop's time on the 100 MB corpus); prefetched ahead, the misses overlap.
(The pass before, which bounds what the merge adds, loads them too, but a
vector of many thousands of words leaves the cache before the rewrite reaches
them.)  Measured on the 100 MB corpus's merge loop, best of 3 alternating: no
prefetch (loads of blocks of 16 words instead) 1.07-1.20 s; 4, 8 and 12 ahead
0.88-1.09 s; 16 ahead 1.11-1.14 s."""

NO_PAIR_LEFT, STEPS_DONE, NEEDS_ROOM = 0, 1, 2
"""What :func:`_run_merges` returns."""


@kernel(
    "i4[]", "u1[]", "i8[]", "i8[]", "i8[]", "i4[]", "i4[]", "i4[]", "i8[]", "i8[]", "i4[]",
    "i4[]", "i8[]", "i8[]", "i8[]", "i4[]", "i8[]", "i8[:,:]", "i8",
)  # fmt: skip
def _run_merges(
    ids, tb, tstart, tlen, hkeys, hvals, pa, pb, pcount, vstart, vlen, pool, hc, hp, new_q, new_w, st, out, n_steps,
):  # fmt: skip
    """Do up to ``n_steps`` merges, or stop before one whose arrays lack room.

    Args:
        ids: ``int32``, every word's header (length in tokens, which shrinks as
            merges apply, and count) and token ids, concatenated; rewritten in place.
        tb: ``uint8``, the bytes of every token so far, concatenated.
        tstart: ``int64``, where token ``i``'s bytes start in ``tb``.
        tlen: ``int64``, their lengths.
        hkeys: ``int64``, the open-addressing table's keys (``left << 32 | right``, -1 = empty).
        hvals: ``int32``, the pair id of each slot.
        pa: ``int32``, each pair's left id.
        pb: ``int32``, its right id.
        pcount: ``int64``, its weighted count.
        vstart: ``int64``, where its word vector starts in ``pool``.
        vlen: ``int32``, that vector's length.
        pool: ``int32``, the word vectors (each word its header's offset in ``ids``).
        hc: ``int64``, the heap's counts.
        hp: ``int64``, the heap's pair ids.
        new_q: ``int64`` scratch: the pair of each index entry one merge makes.
        new_w: ``int32`` scratch: the word of each.
        st: ``int64[STATE_FIELDS]``, the loop's counters (see the ``*_USED`` names above),
            updated in place; ``st[POOL_LIMIT]`` (at most ``pool.size``) is
            where the pool is compacted before it grows further.
        out: ``int64[4, n_merges]``: column ``rank`` gets the merge's left id, right
            id, count and weighted occurrences replaced (rank = ``st[DONE]`` before it).
        n_steps: merges to do at most in this call.

    Returns:
        :data:`STEPS_DONE`, :data:`NO_PAIR_LEFT`, or :data:`NEEDS_ROOM`: the next
        merge (its pair popped and kept in ``st[PENDING]``) may add up to
        ``st[ROOM]`` index entries and ``st[PAIR_ROOM]`` pairs and heap entries
        and needs ``st[TB_NEED]`` token bytes; the caller grows what is short
        (:class:`MergeLoop`) and calls again.  No array is allocated here.

    Bounds: a merge files a word under at most one new pair per token of the
    word, so ``room``, the summed lengths of the words it visits, bounds the
    new index entries; every pair it makes holds the new token next to a token
    that exists (``(x, new)`` with ``x <= new``, ``(new, y)`` with ``y < new``),
    so it makes at most ``2 * new + 1`` pairs whatever the words' lengths.
    """
    done = 0
    while done < n_steps:
        best = st[PENDING]
        count = st[PENDING_COUNT]
        if best < 0:  # the best pair whose heap entry is current
            while st[HEAP_SIZE] > 0:
                c, p = hc[0], hp[0]
                st[HEAP_SIZE] -= 1
                size = st[HEAP_SIZE]
                if size > 0:
                    hc[0], hp[0] = hc[size], hp[size]
                    _sift_down(hc, hp, size, 0, pa, pb, tb, tstart, tlen)
                cur = pcount[p]
                if cur == c:
                    best, count = p, c
                    break
                if cur > 0:
                    hc[size], hp[size] = cur, p
                    st[HEAP_SIZE] += 1
                    _sift_up(hc, hp, size, pa, pb, tb, tstart, tlen)
            if best < 0:
                return NO_PAIR_LEFT
            st[PENDING], st[PENDING_COUNT] = best, count
        a, b = pa[best], pb[best]
        la, lb = tlen[a], tlen[b]
        # bound what this merge can add: at most one new pair and one index entry per position
        vs, vn = vstart[best], vlen[best]
        room = 0
        for k in range(vn):  # independent loads: this pass also brings the words into cache
            room += ids[pool[vs + k]]
        pair_room = min(room, 2 * st[NEXT_ID] + 2)
        if (
            st[TB_USED] + la + lb > tb.size
            or st[PAIRS] + pair_room > pa.size
            or 4 * (st[HASH_USED] + pair_room) > 3 * hkeys.size
            or room > new_q.size
            or st[POOL_USED] + room > st[POOL_LIMIT]
            or st[HEAP_SIZE] + pair_room > hc.size
        ):
            st[ROOM] = room
            st[PAIR_ROOM] = pair_room
            st[TB_NEED] = st[TB_USED] + la + lb
            return NEEDS_ROOM
        st[PENDING] = -1
        new = st[NEXT_ID]
        st[NEXT_ID] += 1
        # the new token's bytes
        t0 = st[TB_USED]
        for k in range(la):
            tb[t0 + k] = tb[tstart[a] + k]
        for k in range(lb):
            tb[t0 + la + k] = tb[tstart[b] + k]
        tstart[new] = t0
        tlen[new] = la + lb
        st[TB_USED] += la + lb

        first_new = st[PAIRS]
        n_new = 0
        replaced = 0
        for k in range(vn):
            if k + _AHEAD < vn:
                prefetch(ids, pool[vs + k + _AHEAD])
            w = pool[vs + k]
            n = ids[w]
            c = _word_count(ids, w)
            s = w + HEADER
            i = 0
            j = 0
            while i < n:
                if i + 1 < n and ids[s + i] == a and ids[s + i + 1] == b:
                    replaced += c
                    pcount[best] -= c
                    for side in range(2):
                        if side == 0:
                            if j == 0:
                                continue
                            x = ids[s + j - 1]
                            old_key = (np.int64(x) << 32) | a
                            new_key = (np.int64(x) << 32) | new
                        else:
                            if i + 2 >= n:
                                continue
                            y = ids[s + i + 2]
                            old_key = (np.int64(b) << 32) | y
                            new_key = (np.int64(new) << 32) | y
                        pcount[hvals[_slot(hkeys, old_key)]] -= c
                        h = _slot(hkeys, new_key)
                        if hkeys[h] == _EMPTY:
                            q = st[PAIRS]
                            st[PAIRS] += 1
                            st[HASH_USED] += 1
                            hkeys[h] = new_key
                            hvals[h] = q
                            pa[q] = new_key >> 32
                            pb[q] = new_key & 0xFFFFFFFF
                            pcount[q] = 0
                            vlen[q] = 0
                        else:
                            q = hvals[h]
                        pcount[q] += c
                        # index the word under the pair, once (a word is visited once per merge)
                        if vlen[q] == 0 or vstart[q] != w:
                            vstart[q] = w  # the last word filed, until the vectors are laid out below
                            vlen[q] += 1
                            new_q[n_new] = q
                            new_w[n_new] = w
                            n_new += 1
                    ids[s + j] = new
                    j += 1
                    i += 2
                else:
                    ids[s + j] = ids[s + i]
                    j += 1
                    i += 1
            ids[w] = j
        # lay out the new pairs' word vectors at the end of the pool (entries are in word-visit order)
        pos = st[POOL_USED]
        for q in range(first_new, st[PAIRS]):
            vstart[q] = pos
            pos += vlen[q]
            vlen[q] = 0
        for k in range(n_new):
            q = new_q[k]
            pool[vstart[q] + vlen[q]] = new_w[k]
            vlen[q] += 1
        st[POOL_USED] = pos
        # queue the pairs made by this merge
        for q in range(first_new, st[PAIRS]):
            if pcount[q] > 0:
                size = st[HEAP_SIZE]
                hc[size], hp[size] = pcount[q], q
                st[HEAP_SIZE] += 1
                _sift_up(hc, hp, size, pa, pb, tb, tstart, tlen)
        r = st[DONE]
        out[0, r] = a
        out[1, r] = b
        out[2, r] = count
        out[3, r] = replaced
        st[DONE] += 1
        done += 1
    return STEPS_DONE


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` itself if it holds ``need`` items, else a copy at least 1.5 times as long (the tail uninitialised)."""
    if need <= a.size:
        return a
    b = np.empty(max(need, a.size + a.size // 2), dtype=a.dtype)
    b[: a.size] = a
    return b


class MergeLoop:
    """The compiled merge loop's state over a table of distinct pre-tokens, run in steps.

    Args:
        data: ``uint8``, the words' bytes, concatenated (each word at least 2 bytes).
        lens: ``int64``, each word's length in bytes.
        counts: ``int64``, each word's count.
        token_bytes: the bytes of every id so far (the 256 bytes, then special tokens).
        n_merges: merges to learn at most.

    :meth:`run` does merges; :attr:`out` columns ``0 .. done - 1`` hold each
    merge's left id, right id, count and weighted occurrences replaced.  The
    initial pair table (counts, and the words holding each pair) is built in two
    linear passes over 16-bit pair codes (no sort).

    Raises:
        ValueError: the words with their headers need 2**31 ``ids`` entries or
            more (the pair vectors hold 32-bit offsets): about 8 GiB of distinct
            pre-tokens.
    """

    def __init__(self, data: np.ndarray, lens: np.ndarray, counts: np.ndarray, token_bytes, n_merges: int) -> None:
        size_ids = data.size + HEADER * lens.size
        if size_ids >= 2**31:
            raise ValueError(f"{lens.size:,} distinct pre-tokens of {data.size:,} bytes are too many for one table")
        self.ids = np.empty(size_ids, dtype=np.int32)
        _lay_out(data, lens, counts, self.ids)
        pcnt = np.zeros(65536, dtype=np.int64)
        nvec = np.zeros(65536, dtype=np.int64)
        last = np.full(65536, -1, dtype=np.int64)
        _pair_census(self.ids, pcnt, nvec, last)
        codes = np.flatnonzero(nvec)
        n_pairs = codes.size
        pair_keys = (codes >> 8) << 32 | (codes & 255)
        vec_len = nvec[codes]
        pair_counts = pcnt[codes]
        used = int(vec_len.sum())
        # room for the pairs the merges will make, about one per word by the end (at vocabulary 10,000: 293,000
        # pairs for 242,000 words of 20 MB, 558,000 for 697,000 of 100 MB).  Zeroed and empty arrays take
        # memory only where written, so reserving saves the copies of growing them (37 growths took 37 ms on
        # 20 MB); the hash table, all written at once, starts at the size expected at the end
        room = n_pairs + lens.size + 8 * n_merges + 1024
        expected_pairs = n_pairs + 3 * lens.size // 4 + 8 * n_merges
        self.vstart = np.zeros(room, dtype=np.int64)
        np.cumsum(vec_len[:-1], out=self.vstart[1:n_pairs])
        self.vlen = np.zeros(room, dtype=np.int32)
        pid = np.full(65536, -1, dtype=np.int64)
        pid[codes] = np.arange(n_pairs)
        # reserved, not touched: only the pages up to ``st[POOL_LIMIT]`` are ever written (the
        # pool is compacted there), so growing seldom copies it (a copy holds both at once)
        self.pool = np.empty(2 * used + 1024, dtype=np.int32)
        last[:] = -1
        _file_pairs(self.ids, pid, self.vstart, self.vlen, self.pool, last)
        del pcnt, nvec, last, pid

        n_tokens = len(token_bytes) + n_merges
        self.tstart = np.zeros(n_tokens, dtype=np.int64)
        self.tlen = np.zeros(n_tokens, dtype=np.int64)
        self.tlen[: len(token_bytes)] = list(map(len, token_bytes))
        np.cumsum(self.tlen[: len(token_bytes) - 1], out=self.tstart[1 : len(token_bytes)])
        known = b"".join(token_bytes)
        self.tb = np.zeros(2 * len(known) + 1024, dtype=np.uint8)
        self.tb[: len(known)] = np.frombuffer(known, dtype=np.uint8)

        size = _hash_size(expected_pairs)
        self.hkeys = np.full(size, _EMPTY, dtype=np.int64)
        self.hvals = np.empty(size, dtype=np.int32)
        _index_pairs(pair_keys, self.hkeys, self.hvals)
        self.pa = np.zeros(room, dtype=np.int32)
        self.pb = np.zeros(room, dtype=np.int32)
        self.pcount = np.zeros(room, dtype=np.int64)
        self.pa[:n_pairs] = pair_keys >> 32
        self.pb[:n_pairs] = pair_keys & 0xFFFFFFFF
        self.pcount[:n_pairs] = pair_counts
        self.hc = np.empty(room, dtype=np.int64)
        self.hc[:n_pairs] = pair_counts
        self.hp = np.empty(room, dtype=np.int64)
        self.hp[:n_pairs] = np.arange(n_pairs)
        _heapify(self.hc, self.hp, n_pairs, self.pa, self.pb, self.tb, self.tstart, self.tlen)
        self.new_q = np.empty(0, dtype=np.int64)
        self.new_w = np.empty(0, dtype=np.int32)
        self.st = np.zeros(STATE_FIELDS, dtype=np.int64)
        self.st[[NEXT_ID, TB_USED, PAIRS, POOL_USED, HEAP_SIZE, HASH_USED, DONE, PENDING, POOL_LIMIT]] = (
            len(token_bytes), len(known), n_pairs, used, n_pairs, n_pairs, 0, -1, used + used // POOL_SLACK + 1024,
        )  # fmt: skip
        self.out = np.zeros((4, max(n_merges, 1)), dtype=np.int64)

    @property
    def done(self) -> int:
        """Merges done so far."""
        return int(self.st[DONE])

    def run(self, n_steps: int) -> int:
        """Do up to ``n_steps`` more merges, growing arrays when the kernel asks; returns how many were done.

        Fewer than ``n_steps`` means no pair is left.
        """
        st = self.st
        target = int(st[DONE]) + n_steps
        while st[DONE] < target:
            status = _run_merges(
                self.ids, self.tb, self.tstart, self.tlen, self.hkeys, self.hvals, self.pa, self.pb,
                self.pcount, self.vstart, self.vlen, self.pool, self.hc, self.hp, self.new_q, self.new_w, st,
                self.out, target - int(st[DONE]),
            )  # fmt: skip
            if status == NO_PAIR_LEFT:
                break
            if status == NEEDS_ROOM:
                self._grow(int(st[ROOM]), int(st[PAIR_ROOM]), int(st[TB_NEED]))
        return int(st[DONE]) - (target - n_steps)

    def _grow(self, room: int, pair_room: int, tb_need: int) -> None:
        """Make room for a merge that may add ``room`` index entries and ``pair_room`` pairs and heap entries.

        ``tb_need``: the token bytes it needs in all.
        """
        st = self.st
        self.tb = _grown(self.tb, tb_need)
        need = int(st[PAIRS]) + pair_room
        if need > self.pa.size:
            self.pa, self.pb, self.pcount = _grown(self.pa, need), _grown(self.pb, need), _grown(self.pcount, need)
            self.vstart, self.vlen = _grown(self.vstart, need), _grown(self.vlen, need)
        size = _hash_size(int(st[HASH_USED]) + pair_room)
        if size > self.hkeys.size:
            nk = np.full(size, _EMPTY, dtype=np.int64)
            nv = np.empty(size, dtype=np.int32)
            _rehash(self.hkeys, self.hvals, nk, nv)
            self.hkeys, self.hvals = nk, nv
        if room > self.new_q.size:
            self.new_q = np.empty(2 * room, dtype=np.int64)
            self.new_w = np.empty(2 * room, dtype=np.int32)
        if int(st[POOL_USED]) + room > int(st[POOL_LIMIT]):
            # first drop the vectors of pairs that are gone (count 0: merged, or all their occurrences
            # merged away; a pair's count never grows again), sliding the others left
            used = _compact_pool(self.pool, self.vstart, self.vlen, self.pcount, int(st[PAIRS]))
            st[POOL_USED] = used
            st[POOL_LIMIT] = limit = used + room + used // POOL_SLACK + 1024
            self.pool = _grown(self.pool, limit)
        self.hc = _grown(self.hc, int(st[HEAP_SIZE]) + pair_room)
        self.hp = _grown(self.hp, int(st[HEAP_SIZE]) + pair_room)
