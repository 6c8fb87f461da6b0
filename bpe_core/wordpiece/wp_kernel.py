"""WordPiece's merge loop compiled with numba: the same merges as the Python loop, for large tables.

:func:`bpe_core.wordpiece.trainer._merge_loop` (the readable loop, :class:`~bpe_core.wordpiece.trainer._MergeLoop`)
is the function this kernel must equal: the same pair at every step, the same counts, frequencies and
replacements, so the same vocabulary and trace (``tests/engine/test_wordpiece_compiled.py`` checks it on real and
random text; the trainer runs this loop only on tables without words over 256 characters).  Each step of
:class:`~bpe_core.wordpiece.trainer._MergeLoop` has its counterpart here, on arrays instead of dicts and sets:

* the words are one ``int32`` array of token ids, each word a slice rewritten in place (and shortened);
* a pair ``(x, y)`` has a dense id found through an open-addressing hash table keyed by ``x << 32 | y``;
  its fields are the columns of ``P`` (rows :data:`PA` ... :data:`MARK`): its count, its first occurrence
  (``word << 40 | character offset``), the head of a linked list of the words that held it when it was
  made (``where``; entries go stale when a word loses the pair: a visit checks), its links in the lists
  of pairs by left and by right token (``by_tok``), the key of its newest heap entry (``pushed``) and
  per-merge scratch;
* the heap holds ``(count, denominator, first, pair)``: a score is compared exactly as ``count /
  (freq(left) * freq(right))`` with 128-bit cross products, then the first occurrence, then the pair's
  ids -- the order of the Python loop's integer keys;
* a merged token's identity (an existing token reused, no new id) is found by a hash of its characters;
  a hit returns to Python, which compares the strings (:data:`NEEDS_TOKEN`).

The kernels allocate nothing: :class:`WordPieceMergeLoop` sizes every array and grows what a merge lacks
when :func:`_run_merges` returns :data:`NEEDS_ROOM`, before that merge changes anything.
"""

from __future__ import annotations

import numpy as np

from ..bpe import merge_kernel as mk  # mk._slot: the open-addressing table's probe, shared
from ..counting.native import kernel, njit

__all__ = ["WordPieceMergeLoop"]

_EMPTY = mk._EMPTY  # an empty slot of the pair table
NONE = (1 << 63) - 1
"""The first occurrence of a pair that has none: after every real one (``word << 40 | offset``)."""
HMOD = 2147483647
"""Token hashes are polynomials in the characters modulo this prime (2**31 - 1): products fit in 63 bits."""
HBASE = 1000003

PA, PB, PCOUNT, PFIRST, WHEAD, NL_NEXT, NR_NEXT, PK_C, PK_D, PK_F, PK_OK, OLD_N, OLD_F, NEW_N, NEW_F, DELTA, MARK = (
    range(17)
)
PAIR_ROWS = 17
"""Rows of ``P``, one column per pair id."""
M_DELTA, M_CAND, M_DIRTY, M_TOUCHED, M_LISTED, M_WHERE = 1, 2, 4, 8, 16, 32
"""Bits of ``P[MARK]``: in this merge's delta list, candidates, dirty, touched; linked into the token lists;
has a ``where`` entry (the Python loop's ``q in where``)."""
TF, TLEN, HFULL, HCHARS, PPOW, HEAD_L, HEAD_R = range(7)
TOKEN_ROWS = 7
"""Rows of ``T``, one column per token id: frequency, length in characters, hashes, heads of its pair lists."""
DLIST, CLIST, DIRTYLIST, TOUCHLIST, OLIST, NLIST = range(6)
LIST_ROWS = 6
"""Rows of ``L``: per-merge lists of pair ids."""
NEXT_ID, NPAIRS, NODES, HEAP, DONE, PENDING, PENDING_M, ROOM, LIMIT = range(9)
STATE_FIELDS = 9
NO_PAIR_LEFT, STEPS_DONE, NEEDS_ROOM, NEEDS_TOKEN = 0, 1, 2, 3
"""What :func:`_run_merges` returns."""


@njit(inline="always")
def _mul(a, b):
    """``a * b`` for ``0 <= a, b < 2**56`` as ``(high, low)``: ``high * 2**62 + low``, ``low < 2**62``."""
    a1, a0 = a >> 31, a & 0x7FFFFFFF
    b1, b0 = b >> 31, b & 0x7FFFFFFF
    mid = a1 * b0 + a0 * b1
    low = a0 * b0 + (mid & 0x7FFFFFFF) * 2147483648
    return a1 * b1 + (mid >> 31) + (low >> 62), low & 0x3FFFFFFFFFFFFFFF


@njit(inline="always")
def _cmp_score(c1, d1, c2, d2):
    """-1, 0 or 1 as ``c1 / d1`` compares with ``c2 / d2``, exactly."""
    h1, l1 = _mul(c1, d2)
    h2, l2 = _mul(c2, d1)
    if h1 != h2:
        return 1 if h1 > h2 else -1
    if l1 != l2:
        return 1 if l1 > l2 else -1
    return 0


@njit(inline="always")
def _before(c1, d1, f1, a1, b1, c2, d2, f2, a2, b2):
    """True when key 1 ranks before key 2: higher score, then earlier first occurrence, then smaller pair."""
    s = _cmp_score(c1, d1, c2, d2)
    if s != 0:
        return s > 0
    if f1 != f2:
        return f1 < f2
    if a1 != a2:
        return a1 < a2
    return b1 < b2


@njit(inline="always")
def _heap_push(H, P, size, c, d, f, p):
    a, b = P[PA, p], P[PB, p]
    i = size
    while i > 0:
        k = (i - 1) >> 1
        pk = H[3, k]
        if not _before(c, d, f, a, b, H[0, k], H[1, k], H[2, k], P[PA, pk], P[PB, pk]):
            break
        H[0, i], H[1, i], H[2, i], H[3, i] = H[0, k], H[1, k], H[2, k], pk
        i = k
    H[0, i], H[1, i], H[2, i], H[3, i] = c, d, f, p


@njit(inline="always")
def _sift_down(H, P, size, i):
    c, d, f, p = H[0, i], H[1, i], H[2, i], H[3, i]
    a, b = P[PA, p], P[PB, p]
    while True:
        k = 2 * i + 1
        if k >= size:
            break
        if k + 1 < size:
            p1, p0 = H[3, k + 1], H[3, k]
            if _before(H[0, k + 1], H[1, k + 1], H[2, k + 1], P[PA, p1], P[PB, p1],
                       H[0, k], H[1, k], H[2, k], P[PA, p0], P[PB, p0]):  # fmt: skip
                k += 1
        pk = H[3, k]
        if not _before(H[0, k], H[1, k], H[2, k], P[PA, pk], P[PB, pk], c, d, f, a, b):
            break
        H[0, i], H[1, i], H[2, i], H[3, i] = H[0, k], H[1, k], H[2, k], pk
        i = k
    H[0, i], H[1, i], H[2, i], H[3, i] = c, d, f, p


@kernel("i8[:,:]", "i8[:,:]", "i8", returns=None)
def _heapify(H, P, size):
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(H, P, size, i)


@kernel("i8[]", "i8[]", "i8[]", returns=None)
def _index(keys, hkeys, hvals):
    """Put entry ``i`` (key ``keys[i]``) in the hash table ``hkeys``/``hvals`` (a power of two, load under 1/2)."""
    for i in range(keys.size):
        j = mk._slot(hkeys, keys[i])
        hkeys[j] = keys[i]
        hvals[j] = i


@kernel("i8[]", "i8[]", "i8[]", "i8[]", returns=None)
def _rehash(hkeys, hvals, nk, nv):
    """Move the entries of ``hkeys``/``hvals`` into ``nk`` (all empty, a power of two) and ``nv``."""
    for i in range(hkeys.size):
        k = hkeys[i]
        if k != _EMPTY:
            j = mk._slot(nk, k)
            nk[j] = k
            nv[j] = hvals[i]


@njit(inline="always")
def _list_pair(P, T, q):
    """Link pair ``q`` into its tokens' pair lists (once: a pair that dies keeps its links, skipped while dead)."""
    if P[MARK, q] & M_LISTED:
        return
    P[MARK, q] |= M_LISTED
    a, b = P[PA, q], P[PB, q]
    P[NL_NEXT, q] = T[HEAD_L, a]
    T[HEAD_L, a] = q
    P[NR_NEXT, q] = T[HEAD_R, b]
    T[HEAD_R, b] = q


@kernel("i8[:,:]", "i8[:,:]", "i8", returns=None)
def _list_pairs(P, T, n_pairs):
    for q in range(n_pairs):
        _list_pair(P, T, q)


@njit(inline="always")
def _pair(hkeys, hvals, x, y):
    j = mk._slot(hkeys, (x << 32) | y)
    return hvals[j] if hkeys[j] != _EMPTY else -1


@njit(inline="always")
def _make_pair(hkeys, hvals, P, st, x, y):
    """The id of pair ``(x, y)``, made (count 0, no first occurrence, no ``where``) if it has none."""
    key = (x << 32) | y
    j = mk._slot(hkeys, key)
    if hkeys[j] != _EMPTY:
        return hvals[j]
    q = st[NPAIRS]
    st[NPAIRS] += 1
    hkeys[j] = key
    hvals[j] = q
    P[PA, q], P[PB, q], P[PCOUNT, q], P[PFIRST, q], P[WHEAD, q] = x, y, 0, NONE, -1
    P[NL_NEXT, q], P[NR_NEXT, q], P[PK_OK, q], P[OLD_N, q], P[NEW_N, q], P[DELTA, q], P[MARK, q] = -1, -1, 0, 0, 0, 0, 0
    return q


@njit(inline="always")
def _add_delta(P, L, st_lists, q, v):
    if not P[MARK, q] & M_DELTA:
        P[MARK, q] |= M_DELTA
        P[DELTA, q] = 0
        L[DLIST, st_lists[0]] = q
        st_lists[0] += 1
    P[DELTA, q] += v


@njit(inline="always")
def _mark(P, L, st_lists, q, bit, row, at):
    if not P[MARK, q] & bit:
        P[MARK, q] |= bit
        L[row, st_lists[at]] = q
        st_lists[at] += 1


@njit(inline="always")
def _holds(ids, s, n, x, y):
    for i in range(n - 1):  # noqa: SIM110 -- a plain loop compiles best in numba
        if ids[s + i] == x and ids[s + i + 1] == y:
            return True
    return False


@njit(inline="always")
def _census(ids, s, n, T, P, L, hkeys, hvals, st, row, cnt_row, first_row, make):
    """Count the pairs of one word into ``P[cnt_row]`` with their first offsets in ``P[first_row]``; list them."""
    k = 0
    off = 0
    for i in range(n - 1):
        x, y = ids[s + i], ids[s + i + 1]
        q = _make_pair(hkeys, hvals, P, st, x, y) if make else _pair(hkeys, hvals, x, y)
        if P[cnt_row, q] == 0:
            P[first_row, q] = off
            L[row, k] = q
            k += 1
        P[cnt_row, q] += 1
        off += T[TLEN, x]
    return k


@njit(inline="always")
def _add_node(P, N, st, q, w):
    node = st[NODES]
    st[NODES] += 1
    N[0, node] = w
    N[1, node] = P[WHEAD, q]
    P[WHEAD, q] = node


@njit(inline="always")
def _merge_word(ids, words, w, a, b, m, best, T, P, L, N, hkeys, hvals, st, lists):
    """:meth:`~bpe_core.wordpiece.trainer._MergeLoop.merge_words` for one word; returns its weighted replacements."""
    s, n, c = words[w, 0], words[w, 1], words[w, 2]
    if not _holds(ids, s, n, a, b):
        return 0  # a stale entry: the word lost the pair earlier (or was visited already)
    n_old = _census(ids, s, n, T, P, L, hkeys, hvals, st, OLIST, OLD_N, OLD_F, False)
    i = 0
    j = 0
    k = 0
    while i < n:
        if ids[s + i] == a and i + 1 < n and ids[s + i + 1] == b:
            ids[s + j] = m
            i += 2
            k += 1
        else:
            ids[s + j] = ids[s + i]
            i += 1
        j += 1
    words[w, 1] = j
    n_new = _census(ids, s, j, T, P, L, hkeys, hvals, st, NLIST, NEW_N, NEW_F, True)
    wkey = w << 40
    for t in range(n_old):
        q = L[OLIST, t]
        if q == best:
            continue
        oc, nc = P[OLD_N, q], P[NEW_N, q]
        here = P[PFIRST, q] != NONE and (P[PFIRST, q] >> 40) == w
        if nc == 0:
            _add_delta(P, L, lists, q, -c * oc)
            if here:
                _mark(P, L, lists, q, M_DIRTY, DIRTYLIST, 2)
        else:
            if nc != oc:
                _add_delta(P, L, lists, q, c * (nc - oc))
            if P[NEW_F, q] != P[OLD_F, q] and here:
                P[PFIRST, q] = wkey | P[NEW_F, q]
                _mark(P, L, lists, q, M_TOUCHED, TOUCHLIST, 3)
    for t in range(n_new):
        q = L[NLIST, t]
        if P[OLD_N, q] > 0:
            continue
        _add_delta(P, L, lists, q, c * P[NEW_N, q])
        fk = wkey | P[NEW_F, q]
        if not P[MARK, q] & M_WHERE:
            P[MARK, q] |= M_WHERE
            _add_node(P, N, st, q, w)
            P[PFIRST, q] = fk
        else:
            _add_node(P, N, st, q, w)
            if not P[MARK, q] & M_DIRTY and fk < P[PFIRST, q]:
                P[PFIRST, q] = fk
                _mark(P, L, lists, q, M_TOUCHED, TOUCHLIST, 3)
    for t in range(n_old):
        P[OLD_N, L[OLIST, t]] = 0
    for t in range(n_new):
        P[NEW_N, L[NLIST, t]] = 0
    return c * k


@njit(inline="always")
def _apply_delta(P, T, L, lists):
    """:meth:`~bpe_core.wordpiece.trainer._MergeLoop.apply_delta`."""
    for t in range(lists[0]):
        q = L[DLIST, t]
        d = P[DELTA, q]
        if d == 0:
            continue
        old = P[PCOUNT, q]
        nc = old + d
        if nc > 0:
            P[PCOUNT, q] = nc
            if old == 0:
                _list_pair(P, T, q)
        else:  # the pair is gone from every word
            P[PCOUNT, q] = 0
            P[WHEAD, q] = -1
            P[PFIRST, q] = NONE
            P[PK_OK, q] = 0
            P[MARK, q] &= ~(M_DIRTY | M_WHERE)


@njit(inline="always")
def _refresh_firsts(ids, words, P, T, L, N, lists):
    """:meth:`~bpe_core.wordpiece.trainer._MergeLoop.refresh_firsts`; drops the stale words of each list walked."""
    for t in range(lists[2]):
        q = L[DIRTYLIST, t]
        if not P[MARK, q] & M_DIRTY:
            continue
        x, y = P[PA, q], P[PB, q]
        wmin = -1
        prev = -1
        node = P[WHEAD, q]
        while node != -1:
            w = N[0, node]
            nxt = N[1, node]
            if _holds(ids, words[w, 0], words[w, 1], x, y):
                if wmin < 0 or w < wmin:
                    wmin = w
                prev = node
            elif prev < 0:
                P[WHEAD, q] = nxt
            else:
                N[1, prev] = nxt
            node = nxt
        if wmin < 0:
            P[PFIRST, q] = NONE
            continue
        s = words[wmin, 0]
        off = 0
        for j in range(words[wmin, 1] - 1):
            if ids[s + j] == x and ids[s + j + 1] == y:
                break
            off += T[TLEN, ids[s + j]]
        P[PFIRST, q] = (wmin << 40) | off


@njit(inline="always")
def _candidates_of(P, L, T, lists, t):
    for side in range(2):
        q = T[HEAD_L, t] if side == 0 else T[HEAD_R, t]
        while q != -1:
            if P[PCOUNT, q] > 0:
                _mark(P, L, lists, q, M_CAND, CLIST, 1)
            q = P[NL_NEXT, q] if side == 0 else P[NR_NEXT, q]


@njit(inline="always")
def _rekey(P, T, H, L, st, lists):
    """:meth:`~bpe_core.wordpiece.trainer._MergeLoop.rekey` over the candidates; clears every mark of the merge."""
    for row, at, bit in ((DLIST, 0, M_DELTA), (TOUCHLIST, 3, M_TOUCHED), (DIRTYLIST, 2, M_DIRTY)):
        for t in range(lists[at]):
            q = L[row, t]
            if P[MARK, q] & bit:
                _mark(P, L, lists, q, M_CAND, CLIST, 1)
    for t in range(lists[1]):
        q = L[CLIST, t]
        c = P[PCOUNT, q]
        if c == 0:
            continue
        a, b = P[PA, q], P[PB, q]
        d = T[TF, a] * T[TF, b]
        f = P[PFIRST, q]
        if P[PK_OK, q]:
            s = _cmp_score(c, d, P[PK_C, q], P[PK_D, q])
            if s < 0:
                continue  # a lower score: the queued entry is acted on only after re-checking
            if s == 0 and f >= P[PK_F, q]:
                continue
        P[PK_C, q], P[PK_D, q], P[PK_F, q], P[PK_OK, q] = c, d, f, 1
        _heap_push(H, P, st[HEAP], c, d, f, q)
        st[HEAP] += 1
    for row, at in ((DLIST, 0), (CLIST, 1), (DIRTYLIST, 2), (TOUCHLIST, 3)):
        for t in range(lists[at]):
            P[MARK, L[row, t]] &= ~(M_DELTA | M_CAND | M_DIRTY | M_TOUCHED)
        lists[at] = 0


@njit(inline="always")
def _pop_best(P, T, H, st):
    """:meth:`~bpe_core.wordpiece.trainer._MergeLoop.pop_best`: the best pair id (its count in ``P``), or -1."""
    while st[HEAP] > 0:
        c_e, d_e, f_e, q = H[0, 0], H[1, 0], H[2, 0], H[3, 0]
        st[HEAP] -= 1
        size = st[HEAP]
        if size > 0:
            H[0, 0], H[1, 0], H[2, 0], H[3, 0] = H[0, size], H[1, size], H[2, size], H[3, size]
            _sift_down(H, P, size, 0)
        c = P[PCOUNT, q]
        if c == 0:
            continue
        d = T[TF, P[PA, q]] * T[TF, P[PB, q]]
        f = P[PFIRST, q]
        if _cmp_score(c, d, c_e, d_e) == 0 and f == f_e:
            return q
        if P[PK_OK, q] and _cmp_score(P[PK_C, q], P[PK_D, q], c_e, d_e) == 0 and P[PK_F, q] == f_e:
            P[PK_C, q], P[PK_D, q], P[PK_F, q] = c, d, f
            _heap_push(H, P, st[HEAP], c, d, f, q)
            st[HEAP] += 1
    return -1


@njit(inline="always")
def _token_hash(T, a, b):
    """The hashes and power of token ``a`` followed by the characters of token ``b``."""
    pb = T[PPOW, b]
    return (T[HFULL, a] * pb + T[HCHARS, b]) % HMOD, (T[HCHARS, a] * pb + T[HCHARS, b]) % HMOD, (T[PPOW, a] * pb) % HMOD


@njit(inline="always")
def _room(ids, words, P, N, st, best):
    """Pairs, index entries and heap entries one merge of ``best`` may add: at most one per position touched."""
    room = 0
    node = P[WHEAD, best]
    while node != -1:
        room += words[N[0, node], 1]
        node = N[1, node]
    return room


@kernel(
    "i4[]", "i8[:,:]", "i8[:,:]", "i8[:,:]", "i8[:,:]", "i8[:,:]", "i8[:,:]", "i8[]", "i8[]", "i8[]", "i8[]",
    "i8[]", "i8[]", "i8[:,:]", "i8",
)  # fmt: skip
def _run_merges(ids, words, P, T, H, L, N, hkeys, hvals, tkeys, tvals, st, lists, out, n_steps):
    """Do up to ``n_steps`` merges, or stop before one that lacks room or whose token may exist already.

    Args:
        ids: ``int32``, the token ids of all words, concatenated; rewritten in place.
        words: ``int64[n, 3]``: each word's start in ``ids``, current length and count.
        P: ``int64[PAIR_ROWS, pair capacity]``, the pairs' fields.
        T: ``int64[TOKEN_ROWS, vocab_size]``, the tokens' fields.
        H: ``int64[4, heap capacity]``: the heap's counts, denominators, first occurrences, pair ids.
        L: ``int64[LIST_ROWS, pair capacity]``: per-merge lists of pair ids.
        N: ``int64[2, node capacity]``: the ``where`` lists' words and links.
        hkeys: the pairs' hash table keys (``x << 32 | y``, -1 empty).
        hvals: the pair id of each slot.
        tkeys: the tokens' hash table keys (:func:`_token_hash`).
        tvals: the token id of each slot.
        st: ``int64[STATE_FIELDS]``, the loop's counters, updated in place.
        lists: ``int64[4]``, the lengths of ``L``'s first four rows (scratch).
        out: ``int64[8, n_merges]``: column ``rank`` gets the merge's left id, right id, new id, pair
            count, left frequency, right frequency, weighted replacements and 1 if it added a token.
        n_steps: merges to do at most in this call.

    Returns:
        :data:`STEPS_DONE`, :data:`NO_PAIR_LEFT`, :data:`NEEDS_TOKEN` (the next merge's pair is
        ``st[PENDING]``; the caller sets ``st[PENDING_M]`` to the merged token's id, existing or
        ``st[NEXT_ID]``) or :data:`NEEDS_ROOM` (``st[ROOM]`` pairs, nodes and heap entries may be added).
    """
    done = 0
    while done < n_steps and st[NEXT_ID] < st[LIMIT]:
        best = st[PENDING]
        if best < 0:
            best = _pop_best(P, T, H, st)
            if best < 0:
                return NO_PAIR_LEFT
            st[PENDING] = best
            st[PENDING_M] = -1
        a, b = P[PA, best], P[PB, best]
        hf, hc, pp = _token_hash(T, a, b)
        if st[PENDING_M] < 0:
            j = mk._slot(tkeys, hf)
            if tkeys[j] != _EMPTY:
                return NEEDS_TOKEN
            st[PENDING_M] = st[NEXT_ID]
        room = _room(ids, words, P, N, st, best)
        if (
            st[NPAIRS] + room > P.shape[1]
            or 2 * (st[NPAIRS] + room) > hkeys.size
            or st[NODES] + room > N.shape[1]
            or st[HEAP] + st[NPAIRS] + room > H.shape[1]
            or st[DONE] >= out.shape[1]
        ):
            st[ROOM] = room
            return NEEDS_ROOM
        m = st[PENDING_M]
        added = m == st[NEXT_ID]
        if added:
            st[NEXT_ID] += 1
            T[TF, m], T[TLEN, m], T[HEAD_L, m], T[HEAD_R, m] = 0, T[TLEN, a] + T[TLEN, b], -1, -1
            T[HFULL, m], T[HCHARS, m], T[PPOW, m] = hf, hc, pp
            j = mk._slot(tkeys, hf)
            if tkeys[j] == _EMPTY:
                tkeys[j] = hf
                tvals[j] = m
        r = st[DONE]
        out[0, r], out[1, r], out[2, r], out[3, r] = a, b, m, P[PCOUNT, best]
        out[4, r], out[5, r], out[7, r] = T[TF, a], T[TF, b], 1 if added else 0
        # forget the pair, then rewrite the words that held it
        P[PCOUNT, best] = 0
        P[PK_OK, best] = 0
        P[PFIRST, best] = NONE
        P[MARK, best] &= ~M_WHERE
        replaced = 0
        node = P[WHEAD, best]
        P[WHEAD, best] = -1
        while node != -1:
            replaced += _merge_word(ids, words, N[0, node], a, b, m, best, T, P, L, N, hkeys, hvals, st, lists)
            node = N[1, node]
        _apply_delta(P, T, L, lists)
        _refresh_firsts(ids, words, P, T, L, N, lists)
        T[TF, a] -= replaced
        T[TF, b] -= replaced
        T[TF, m] += replaced
        for t in (a, b, m):
            _candidates_of(P, L, T, lists, t)
        _rekey(P, T, H, L, st, lists)
        out[6, r] = replaced
        st[DONE] += 1
        st[PENDING] = -1
        done += 1
    return STEPS_DONE


def _grown_cols(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` (2-D) itself if it has ``need`` columns, else a copy with at least 1.5 times as many."""
    if need <= a.shape[1]:
        return a
    b = np.zeros((a.shape[0], max(need, a.shape[1] + a.shape[1] // 2)), dtype=a.dtype)
    b[:, : a.shape[1]] = a
    return b


def _table_size(n: int) -> int:
    size = 16
    while size < 2 * n + 16:
        size *= 2
    return size


class WordPieceMergeLoop:
    """The compiled merge loop's state over a table of words, run in steps.

    Args:
        flat: ``int64``, the token ids of the words, concatenated (each word two ids or more, none over
            256 characters).
        starts: ``int64``, each word's start in ``flat``; ``lens``: their lengths; ``counts``: their counts.
        census: ``(keys, counts, firsts, node_pair, node_word)``: every pair (``x << shift | y``, as
            :meth:`~bpe_core.wordpiece.trainer._WordTable.pair_census` groups them, in that order), its
            weighted count and first occurrence, and one ``(pair index, word)`` row per word holding it.
        shift: bits of the right id in ``keys``.
        tokens: ``(tf, tlen, firsts, chars)`` of the initial vocabulary: frequencies, lengths in
            characters, whether each is a word's first character (else ``##``-prefixed) and its code point
            (-1 for special tokens, which no merge can make).
        vocab_size: ids the loop may reach.
    """

    def __init__(self, flat, starts, lens, counts, census, shift, tokens, vocab_size: int) -> None:
        self.ids = flat.astype(np.int32)
        n = lens.size
        self.words = words = np.empty((n, 3), dtype=np.int64)
        words[:, 0], words[:, 1], words[:, 2] = starts, lens, counts
        keys, pcounts, firsts, node_pair, node_word = census
        n_pairs = keys.size
        cap = n_pairs + n_pairs // 2 + 1024
        self.P = P = np.zeros((PAIR_ROWS, cap), dtype=np.int64)
        mask = (1 << shift) - 1
        P[PA, :n_pairs], P[PB, :n_pairs] = keys >> shift, keys & mask
        P[PCOUNT, :n_pairs], P[PFIRST, :n_pairs] = pcounts, firsts
        P[MARK, :n_pairs] = M_WHERE
        P[NL_NEXT], P[NR_NEXT], P[WHEAD] = -1, -1, -1
        # the where lists: node k is (node_word[k]); each pair's nodes linked in order
        n_nodes = node_pair.size
        self.N = N = np.zeros((2, n_nodes + n_nodes // 2 + 1024), dtype=np.int64)
        N[0, :n_nodes] = node_word
        N[1, :n_nodes] = np.arange(1, n_nodes + 1)
        if n_nodes:
            last = np.flatnonzero(np.append(node_pair[1:] != node_pair[:-1], True))
            N[1, last] = -1
            heads = np.concatenate(([0], last[:-1] + 1))
            P[WHEAD, node_pair[heads]] = heads
        self.hkeys = np.full(_table_size(cap), _EMPTY, dtype=np.int64)
        self.hvals = np.zeros(self.hkeys.size, dtype=np.int64)
        _index(P[PA, :n_pairs] << 32 | P[PB, :n_pairs], self.hkeys, self.hvals)
        tf, tlen, is_first, chars = tokens
        n_tok = len(tf)
        self.T = T = np.zeros((TOKEN_ROWS, max(vocab_size, n_tok)), dtype=np.int64)
        T[TF, :n_tok], T[TLEN, :n_tok] = tf, tlen
        T[HEAD_L], T[HEAD_R] = -1, -1
        chars = np.asarray(chars, dtype=np.int64)
        T[HCHARS, :n_tok] = chars + 1
        T[PPOW, :n_tok] = HBASE
        T[HFULL, :n_tok] = (np.where(is_first, 1, 2) * HBASE + chars + 1) % HMOD
        real = np.flatnonzero(chars >= 0)
        self.tkeys = np.full(_table_size(vocab_size), _EMPTY, dtype=np.int64)
        self.tvals = np.zeros(self.tkeys.size, dtype=np.int64)
        idx = np.full(self.tkeys.size, _EMPTY, dtype=np.int64)
        _index(np.ascontiguousarray(T[HFULL, real]), self.tkeys, idx)
        self.tvals[idx >= 0] = real[idx[idx >= 0]]
        _list_pairs(P, T, n_pairs)
        self.H = H = np.zeros((4, 2 * cap + 1024), dtype=np.int64)
        H[0, :n_pairs] = pcounts
        H[1, :n_pairs] = T[TF, P[PA, :n_pairs]] * T[TF, P[PB, :n_pairs]]
        H[2, :n_pairs] = firsts
        H[3, :n_pairs] = np.arange(n_pairs)
        P[PK_C, :n_pairs], P[PK_D, :n_pairs], P[PK_F, :n_pairs], P[PK_OK, :n_pairs] = (
            H[0, :n_pairs],
            H[1, :n_pairs],
            firsts,
            1,
        )
        _heapify(H, P, n_pairs)
        self.L = np.zeros((LIST_ROWS, cap), dtype=np.int64)
        self.lists = np.zeros(4, dtype=np.int64)
        self.st = np.zeros(STATE_FIELDS, dtype=np.int64)
        self.st[[NEXT_ID, NPAIRS, NODES, HEAP, DONE, PENDING, PENDING_M, LIMIT]] = (
            n_tok, n_pairs, n_nodes, n_pairs, 0, -1, -1, vocab_size,
        )  # fmt: skip
        self.out = np.zeros((8, max(vocab_size - n_tok, 1)), dtype=np.int64)

    @property
    def done(self) -> int:
        """Merges done so far."""
        return int(self.st[DONE])

    def pending_pair(self) -> tuple[int, int]:
        """The ids of the pair whose merge waits for :meth:`resolve` (after :data:`NEEDS_TOKEN`)."""
        q = int(self.st[PENDING])
        return int(self.P[PA, q]), int(self.P[PB, q])

    def resolve(self, m: int) -> None:
        """Give the pending merge its token id: an existing token's, or ``st[NEXT_ID]`` for a new one."""
        self.st[PENDING_M] = m

    def run(self, n_steps: int) -> int:
        """Up to ``n_steps`` merges, growing arrays as asked.

        Returns :data:`STEPS_DONE` (also when the vocabulary is full), :data:`NO_PAIR_LEFT` or :data:`NEEDS_TOKEN`.
        """
        st = self.st
        target = int(st[DONE]) + n_steps
        while st[DONE] < target:
            status = _run_merges(
                self.ids, self.words, self.P, self.T, self.H, self.L, self.N, self.hkeys, self.hvals, self.tkeys,
                self.tvals, st, self.lists, self.out, target - int(st[DONE]),
            )  # fmt: skip
            if status != NEEDS_ROOM:
                return status
            self._grow(int(st[ROOM]))
        return STEPS_DONE

    def _grow(self, room: int) -> None:
        """Make room for a merge that may add ``room`` pairs, nodes and heap entries (and one trace column)."""
        st = self.st
        need = int(st[NPAIRS]) + room
        self.P = _grown_cols(self.P, need)
        self.L = _grown_cols(self.L, need)
        self.N = _grown_cols(self.N, int(st[NODES]) + room)
        self.out = _grown_cols(self.out, int(st[DONE]) + 1)
        if int(st[HEAP]) + need > self.H.shape[1]:
            self._compact_heap()
        self.H = _grown_cols(self.H, int(st[HEAP]) + need)
        if 2 * need > self.hkeys.size:
            size = _table_size(need + need // 2)
            nk = np.full(size, _EMPTY, dtype=np.int64)
            nv = np.zeros(size, dtype=np.int64)
            _rehash(self.hkeys, self.hvals, nk, nv)
            self.hkeys, self.hvals = nk, nv

    def _compact_heap(self) -> None:
        """Rebuild the heap from each live pair's newest entry (the stale ones dropped: the merges stay the same)."""
        P, H, n = self.P, self.H, int(self.st[NPAIRS])
        live = np.flatnonzero((P[PCOUNT, :n] > 0) & (P[PK_OK, :n] == 1))
        k = live.size
        H[0, :k], H[1, :k], H[2, :k], H[3, :k] = P[PK_C, live], P[PK_D, live], P[PK_F, live], live
        self.st[HEAP] = k
        _heapify(H, P, k)
