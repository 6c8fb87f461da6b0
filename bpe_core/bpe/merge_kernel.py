"""The BPE merge loop compiled with numba: the same merges as the Python loop, for large tables.

:mod:`bpe_core.bpe.trainer` runs its pure-Python merge loop on small tables
(the app's texts) and this one on large ones (see
:func:`bpe_core.bpe.trainer.merge_engine`); both pick, at every step, the pair
of highest weighted count, ties going to the greatest ``(left bytes, right
bytes)`` and then to the smaller ``(left id, right id)`` -- exactly the order of
the Python loop's heap -- so the merges and the trace are identical (tested
on real text against the Python loop and the textbook trainer,
:func:`bpe_core.educational.bpe_train`).

Data layout (all numpy arrays, nothing per pre-token is a Python object):

* the distinct pre-tokens are one ``int32`` array of token ids, each word a
  slice ``ids[s : s + n]`` rewritten in place (and shortened) as merges apply,
  where ``s, n, c = words[w]`` (start, current length, count: one row, so a
  visit costs one cache miss for them);
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
already rewritten word (so ``a b a b`` ends with one ``(new, new)``).

The functions are compiled on first use and cached on disk (``cache=True``:
numba's ``__pycache__`` beside this file, or its user-wide cache directory
when that is not writable), so only the first large training on a machine
pays the compile (measured in the README, issue-20 section); whether it has
happened is :func:`bpe_core.count_kernel.is_ready`.
"""

from __future__ import annotations

import numpy as np

from ..jit import HAVE_NUMBA, njit

__all__ = ["HAVE_NUMBA", "build_state", "initial_pairs", "run_merges"]

_EMPTY = -1
_MUL = np.uint64(11400714819323198485)  # 2**64 / golden ratio: Fibonacci hashing
_SHIFT = np.uint64(32)


@njit(cache=True, inline="always")
def _slot(hkeys, key):
    """Index of ``key`` in the open-addressing table, or of the empty slot where it would go."""
    mask = hkeys.size - 1
    i = np.int64((np.uint64(key) * _MUL) >> _SHIFT) & mask
    while True:
        k = hkeys[i]
        if k == key or k == _EMPTY:  # noqa: PLR1714, SIM109 -- plain compares compile best in numba
            return i
        i = (i + 1) & mask


@njit(cache=True)
def _rehash(hkeys, hvals, size):
    """A table of ``size`` slots (a power of two) holding the entries of ``hkeys``/``hvals``."""
    nk = np.full(size, _EMPTY, dtype=np.int64)
    nv = np.empty(size, dtype=hvals.dtype)
    for i in range(hkeys.size):
        k = hkeys[i]
        if k != _EMPTY:
            j = _slot(nk, k)
            nk[j] = k
            nv[j] = hvals[i]
    return nk, nv


@njit(cache=True)
def _grown(a, need):
    """``a`` itself if it holds ``need`` items, else a copy at least 1.5 times as long."""
    if need <= a.size:
        return a
    b = np.empty(max(need, a.size + a.size // 2), dtype=a.dtype)
    b[: a.size] = a
    return b


@njit(cache=True)
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _sift_up(hc, hp, i, pa, pb, tb, tstart, tlen):
    c, p = hc[i], hp[i]
    while i > 0:
        k = (i - 1) // 2
        if not _before(c, p, hc[k], hp[k], pa, pb, tb, tstart, tlen):
            break
        hc[i], hp[i] = hc[k], hp[k]
        i = k
    hc[i], hp[i] = c, p


@njit(cache=True)
def _heapify(hc, hp, n, pa, pb, tb, tstart, tlen):
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(hc, hp, n, i, pa, pb, tb, tstart, tlen)


@njit(cache=True)
def initial_pairs(data, lens, counts):
    """The words as token ids and every adjacent byte pair's count and words, in two linear passes.

    Pairs of bytes have 16-bit codes, so they are counted in arrays indexed by
    code (no sort): a first pass counts each pair (weighted by the words' counts)
    and the words holding it, a second files the words under their pairs.

    Args:
        data: ``uint8``, the words' bytes, concatenated.
        lens: ``int64``, each word's length (at least 2).
        counts: ``int64``, each word's count.

    Returns:
        ``(ids, words, pair_keys, pair_counts, vstart, vlen, pool, used)``:
        ``int32`` token ids (the bytes); ``int64[n, 3]`` rows (start, length,
        count); per pair, in ascending ``(left, right)`` order, its key
        ``left << 32 | right``, weighted count, and the slice ``vstart, vlen``
        of ``pool`` listing the words that hold it (each once, ascending);
        ``pool`` has room past its first ``used`` entries.
    """
    n = lens.size
    ids = np.empty(data.size, dtype=np.int32)
    for i in range(data.size):
        ids[i] = data[i]
    words = np.empty((n, 3), dtype=np.int64)
    pcnt = np.zeros(65536, dtype=np.int64)
    nvec = np.zeros(65536, dtype=np.int64)
    last = np.full(65536, -1, dtype=np.int64)
    s = 0
    for w in range(n):
        m, c = lens[w], counts[w]
        words[w, 0], words[w, 1], words[w, 2] = s, m, c
        for j in range(s, s + m - 1):
            code = np.int64(ids[j]) << 8 | np.int64(ids[j + 1])
            pcnt[code] += c
            if last[code] != w:
                last[code] = w
                nvec[code] += 1
        s += m
    n_pairs = 0
    for code in range(65536):
        if nvec[code] > 0:
            n_pairs += 1
    pair_keys = np.empty(n_pairs, dtype=np.int64)
    pair_counts = np.empty(n_pairs, dtype=np.int64)
    vstart = np.empty(n_pairs, dtype=np.int64)
    vlen = np.empty(n_pairs, dtype=np.int64)
    pid = np.full(65536, -1, dtype=np.int64)
    k = 0
    used = 0
    for code in range(65536):
        if nvec[code] > 0:
            pid[code] = k
            pair_keys[k] = (np.int64(code) >> 8) << 32 | (np.int64(code) & 255)
            pair_counts[k] = pcnt[code]
            vstart[k] = used
            vlen[k] = 0
            used += nvec[code]
            k += 1
    pool = np.empty(used + used // 4 + 1024, dtype=np.int32)
    last[:] = -1
    s = 0
    for w in range(n):
        m = lens[w]
        for j in range(s, s + m - 1):
            code = np.int64(ids[j]) << 8 | np.int64(ids[j + 1])
            if last[code] != w:
                last[code] = w
                q = pid[code]
                pool[vstart[q] + vlen[q]] = w
                vlen[q] += 1
        s += m
    return ids, words, pair_keys, pair_counts, vstart, vlen, pool, used


@njit(cache=True)
def build_state(pair_keys, pair_counts, tb, tstart, tlen):
    """The hash table and the heap over the initial pairs (ids ``0 .. len(pair_keys) - 1``).

    Args:
        pair_keys: ``int64``, ``left << 32 | right`` of each distinct pair.
        pair_counts: ``int64``, each pair's weighted count.
        tb: ``uint8``, the bytes of all tokens so far, concatenated.
        tstart: ``int64``, where token ``i``'s bytes start in ``tb``.
        tlen: ``int64``, their lengths.

    Returns:
        ``(hkeys, hvals, heap_counts, heap_pids)``.
    """
    n = pair_keys.size
    size = 16
    while size < 2 * n + 16:
        size *= 2
    hkeys = np.full(size, _EMPTY, dtype=np.int64)
    hvals = np.empty(size, dtype=np.int32)
    for i in range(n):
        j = _slot(hkeys, pair_keys[i])
        hkeys[j] = pair_keys[i]
        hvals[j] = i
    hc = pair_counts.copy()
    hp = np.arange(n, dtype=np.int64)
    pa = (pair_keys >> 32).astype(np.int32)
    pb = (pair_keys & 0xFFFFFFFF).astype(np.int32)
    _heapify(hc, hp, n, pa, pb, tb, tstart, tlen)
    return hkeys, hvals, hc, hp


@njit(cache=True)
def run_merges(ids, words, arrays, st, out, n_steps):
    """Do up to ``n_steps`` merges; returns ``(arrays, merges done)`` with ``arrays`` possibly regrown.

    Args:
        ids: ``int32``, the token ids of all words, concatenated; rewritten in place.
        words: ``int64[n, 3]``: each word's start in ``ids``, current length in
            tokens (shrinks as merges apply) and count.
        arrays: the growable state, a tuple ``(tb, tstart, tlen, hkeys, hvals, pa, pb,
            pcount, vstart, vlen, pool, hc, hp)`` as :func:`build_state` and the
            trainer prepared it.
        st: ``int64[7]``: next token id, tokens' bytes used, pairs, pool used, heap
            size, hash-table entries, merges done so far; updated in place.
        out: ``int64[4, n_merges]``: column ``rank`` gets the merge's left id, right
            id, count and weighted occurrences replaced (rank = ``st[6]`` before it).
        n_steps: merges to do at most in this call.

    Returns:
        ``(arrays, done)``; ``done < n_steps`` means no pair is left.

    Every array that may grow is grown once per merge, before its words are
    visited, to a bound on what the merge can add (no array variable is rebound
    inside the per-word loop, which would cost numba two atomic reference-count
    updates per iteration).
    """
    tb, tstart, tlen, hkeys, hvals, pa, pb, pcount, vstart, vlen, pool, hc, hp = arrays
    new_q = np.empty(0, dtype=np.int64)  # (pair, word) of every index entry the merge makes
    new_w = np.empty(0, dtype=np.int32)
    done = 0
    while done < n_steps:
        # the best pair whose heap entry is current
        best = -1
        count = 0
        while st[4] > 0:
            c, p = hc[0], hp[0]
            st[4] -= 1
            if st[4] > 0:
                hc[0], hp[0] = hc[st[4]], hp[st[4]]
                _sift_down(hc, hp, st[4], 0, pa, pb, tb, tstart, tlen)
            cur = pcount[p]
            if cur == c:
                best, count = p, c
                break
            if cur > 0:
                hc[st[4]], hp[st[4]] = cur, p
                st[4] += 1
                _sift_up(hc, hp, st[4] - 1, pa, pb, tb, tstart, tlen)
        if best < 0:
            break
        a, b = pa[best], pb[best]
        new = st[0]
        st[0] += 1
        # the new token's bytes
        la, lb = tlen[a], tlen[b]
        tb = _grown(tb, st[1] + la + lb)
        tb[st[1] : st[1] + la] = tb[tstart[a] : tstart[a] + la]
        tb[st[1] + la : st[1] + la + lb] = tb[tstart[b] : tstart[b] + lb]
        tstart[new] = st[1]
        tlen[new] = la + lb
        st[1] += la + lb

        # bound what this merge can add: at most one new pair and one index entry per position
        vs, vn = vstart[best], vlen[best]
        room = 0
        touch = 0
        for k in range(vn):  # independent loads: this pass also brings the words' rows and ids into cache
            w = pool[vs + k]
            room += words[w, 1]
            touch |= ids[words[w, 0]]
        if touch < 0:  # never (ids are >= 0): keeps the loads of ``ids`` above
            room += 1
        need = st[2] + room
        if need > pa.size:
            pa, pb, pcount = _grown(pa, need), _grown(pb, need), _grown(pcount, need)
            vstart, vlen = _grown(vstart, need), _grown(vlen, need)
        if 2 * (st[5] + room) > hkeys.size:
            size = hkeys.size
            while 2 * (st[5] + room) > size:
                size *= 2
            hkeys, hvals = _rehash(hkeys, hvals, size)
        if room > new_q.size:
            new_q = np.empty(2 * room, dtype=np.int64)
            new_w = np.empty(2 * room, dtype=np.int32)
        first_new = st[2]
        n_new = 0
        replaced = 0
        for k in range(vn):
            w = pool[vs + k]
            s = words[w, 0]
            n = words[w, 1]
            c = words[w, 2]
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
                            q = st[2]
                            st[2] += 1
                            st[5] += 1
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
            words[w, 1] = j
        # lay out the new pairs' word vectors in the pool (entries are in word-visit order); when it
        # is full, first drop the vectors of pairs that are gone (count 0: merged, or all their
        # occurrences merged away; a pair's count never grows again), sliding the others left
        if st[3] + n_new > pool.size:
            st[3] = _compact_pool(pool, vstart, vlen, pcount, first_new)
            pool = _grown(pool, st[3] + n_new + pool.size // 4)  # headroom: compactions stay rare
        pos = st[3]
        for q in range(first_new, st[2]):
            vstart[q] = pos
            pos += vlen[q]
            vlen[q] = 0
        for k in range(n_new):
            q = new_q[k]
            pool[vstart[q] + vlen[q]] = new_w[k]
            vlen[q] += 1
        st[3] = pos
        # queue the pairs made by this merge
        hc = _grown(hc, st[4] + st[2] - first_new)
        hp = _grown(hp, st[4] + st[2] - first_new)
        for q in range(first_new, st[2]):
            if pcount[q] > 0:
                hc[st[4]], hp[st[4]] = pcount[q], q
                st[4] += 1
                _sift_up(hc, hp, st[4] - 1, pa, pb, tb, tstart, tlen)
        r = st[6]
        out[0, r] = a
        out[1, r] = b
        out[2, r] = count
        out[3, r] = replaced
        st[6] += 1
        done += 1
    return (tb, tstart, tlen, hkeys, hvals, pa, pb, pcount, vstart, vlen, pool, hc, hp), done
