r"""Unigram's compiled kernels: the seed's suffix array, the lattices' forward-backward and Viterbi.

Each kernel is the compiled twin of a numpy function of this package, which
names it and which the tests hold it to (``tests/engine/test_unigram_kernels.py``):

* :func:`_suffix_array`, :func:`_lcp`, :func:`_intervals` -- the seed
  (:func:`bpe_core.unigram.seed.seed_pieces`, numpy one substring length at a
  time): a suffix array of the distinct words (each followed by a symbol of
  its own), sorted by prefix doubling up to ``max_piece_length + 1`` symbols,
  its LCP array, and the walk over its LCP intervals (SentencePiece's
  ``MakeSeedSentencePieces``) -- the same pieces, frequencies and arcs;
* :func:`_forward_backward` -- EM's expected counts
  (:meth:`bpe_core.unigram.lattice.Lattices.forward_backward`, log space), here
  word by word in probability space: ``alpha[e] += alpha[s] * p`` and
  ``beta[s] += p * beta[e]``, rescaled by exact powers of two where a word's
  values would underflow (long words), so one multiplication per arc instead
  of an ``exp`` and a ``log``; equal to rounding (relative 1e-12);
* :func:`_viterbi` -- every word's best path, the pieces' Viterbi counts, the
  loss and the tokens (:meth:`~bpe_core.unigram.lattice.Lattices.viterbi`):
  the same sums in the same order, so the same paths, ties to the arc that
  starts earliest;
* :func:`_alternatives` -- each used piece's best segmentation without itself
  (:func:`bpe_core.unigram.lattice.loss_increase`): the same paths;
* encoding: :func:`_trie_build` and :func:`_encode_words` -- Viterbi over a
  trie of the pieces (:func:`bpe_core.unigram.encoder.viterbi`'s segmentations),
  :func:`_distinct_words` -- each word's first equal word (a ``dict``'s) and
  :func:`_copy_tokens` -- its tokens copied to the others, and,
  for XLM-R's corpus figures, :func:`_sure_breaks` and :func:`_normalized_lattice`
  -- grapheme clusters, the charsmap's values, SentencePiece's spaces and
  words (twins in :mod:`bpe_core.production.unigram_model`).

A word's lattice is its arcs grouped by start position: ``off[j] ..
off[j + 1]`` are the arcs that start at position ``j`` of the words joined,
``alen`` their lengths and ``apiece`` their pieces.  Kernels allocate
nothing (every array comes from :mod:`bpe_core.unigram.lattice`) and release
the GIL, so threads run them on separate ranges of words.
"""

from __future__ import annotations

import numpy as np

from ..counting.native import kernel, njit

__all__: list[str] = []

_UP = 2.0**300  # a word's forward or backward values are rescaled by this when they fall below 1 / _UP
_TINY = 1.0 / _UP
_LOG_UP = 300


# ---------------------------------------------------------------------------
# the seed


@njit(inline="always")
def _first_byte(c):
    """The first UTF-8 byte of code point ``c``."""
    if c < 0x80:
        return c
    if c < 0x800:
        return 0xC0 | (c >> 6)
    if c < 0x10000:
        return 0xE0 | (c >> 12)
    return 0xF0 | (c >> 18)


@kernel("u4[]", "i8[]", "i8[]", "i8[]", "u1[]", "i8[]", "u1[]", "i4[]", "i4[]", "u4[]", returns=None)
def _suffix_text(real, wstart, cw, cend, cprimary, sym, fol, rem, realpos, codes):
    """Write the words joined for the suffix array: each copy ``cw[k]`` of a word, then its end symbol.

    Per symbol: ``sym`` its sort key (first byte << 42, then 1 << 41 and the
    code point for a character, the copy's number for an end symbol: each its
    own, before the characters of the same first byte), ``fol`` its first byte
    (``cend[k]`` for an end symbol), ``rem`` the characters left in the word
    (0 at an end symbol), ``realpos`` the character's position among the real
    words' characters (-1 for an end symbol or a copy that is not
    ``cprimary``), ``codes`` the code point (0 for an end symbol).
    """
    j = 0
    for k in range(cw.size):
        w = cw[k]
        a = wstart[w]
        n = wstart[w + 1] - a
        for q in range(n):
            c = np.int64(real[a + q])
            b = _first_byte(c)
            sym[j] = (b << 42) | (1 << 41) | c
            fol[j] = b
            rem[j] = n - q
            realpos[j] = a + q if cprimary[k] else -1
            codes[j] = c
            j += 1
        sym[j] = (cend[k] << 42) | k
        fol[j] = cend[k]
        rem[j] = 0
        realpos[j] = -1
        codes[j] = 0
        j += 1


@kernel("i4[]", "i8[]", "f8[]", "f8[]", returns=None)
def _weight_prefix(sa, cstart, cweight, out):
    """``out[i + 1] = out[i] +`` the weight of the copy that suffix ``sa[i]`` lies in (``out[0] = 0``).

    ``cstart``: each copy's first position, and the end (``n_copies + 1``).
    """
    out[0] = 0.0
    m = cstart.size - 1
    for i in range(sa.size):
        p = sa[i]
        lo = 0
        hi = m
        while hi - lo > 1:  # the copy k with cstart[k] <= p < cstart[k + 1]
            mid = (lo + hi) // 2
            if cstart[mid] <= p:
                lo = mid
            else:
                hi = mid
        out[i + 1] = out[i] + cweight[lo]


@kernel("i4[]", "i8", "i4[]", "i4[]", "i4[]", "i4[]", "i4[]", returns="i8")
def _suffix_array(rank, depth, sa, sa2, rank2, key2, cnt):
    """Sort the positions by their first ``depth`` symbols: prefix doubling, two counting sorts a round.

    Args (arrays of the symbols' count ``n``; ``cnt`` of ``n + 2``):
        rank: each position's symbol rank, ``1 .. n`` (equal symbols equal ranks); overwritten with
            the ranks of the sorted prefixes.
        depth: symbols that matter (suffixes equal in their first ``depth`` stay in position order).
        sa: out: the positions sorted.
        sa2, rank2, key2, cnt: scratch.

    Returns the number of doubling rounds run.
    """
    n = rank.size
    for i in range(n):
        sa[i] = i
    rounds = 0
    h = 1
    while True:
        # key2: the rank h symbols on (0 past the end); sort by it, then (stably) by rank
        for i in range(n):
            key2[i] = rank[i + h] if i + h < n else 0
        for k in range(n + 2):
            cnt[k] = 0
        for i in range(n):
            cnt[key2[i] + 1] += 1
        for k in range(1, n + 2):
            cnt[k] += cnt[k - 1]
        for i in range(n):
            p = sa[i]
            k = key2[p]
            sa2[cnt[k]] = p
            cnt[k] += 1
        for k in range(n + 2):
            cnt[k] = 0
        for i in range(n):
            cnt[rank[i]] += 1
        for k in range(1, n + 2):
            cnt[k] += cnt[k - 1]
        for i in range(n):
            p = sa2[i]
            k = rank[p] - 1
            sa[cnt[k]] = p
            cnt[k] += 1
        r = 1
        rank2[sa[0]] = 1
        for i in range(1, n):
            a = sa[i - 1]
            b = sa[i]
            if rank[a] != rank[b] or key2[a] != key2[b]:
                r += 1
            rank2[b] = r
        for i in range(n):
            rank[i] = rank2[i]
        rounds += 1
        if r == n or 2 * h >= depth:  # the ranks now order the first 2 * h symbols
            return rounds
        h *= 2


@kernel("u4[]", "i4[]", "i4[]", "i8", "i4[]", returns=None)
def _lcp(codes, rem, sa, depth, lcp):
    """``lcp[i]``: the common prefix (in symbols, at most ``depth``) of suffixes ``sa[i - 1]`` and ``sa[i]``.

    Two symbols are equal when both are characters (``rem > 0``) of the same
    code point: every end symbol is its own.
    """
    n = sa.size
    if n:
        lcp[0] = 0
    for i in range(1, n):
        a = sa[i - 1]
        b = sa[i]
        k = 0
        while k < depth and a + k < n and b + k < n and rem[a + k] > 0 and codes[a + k] == codes[b + k]:
            if rem[b + k] == 0:
                break
            k += 1
        lcp[i] = k


@kernel("i4[]", "i4[]", "u1[]", "i4[]", "f8[]", "i8", "i4[]", "i4[]", "u1[]", "f8[]", "i8[]", "i8[]", returns="i8")
def _intervals(sa, lcp, fol, rem, wprefix, max_len, out_l, out_r, out_len, out_freq, stack_l, stack_d):
    """Walk the LCP intervals (Abouelhoda et al., as SentencePiece does); keep the seed's candidates.

    An interval ``[l, r]`` of depth ``d`` is kept when ``2 <= d <= max_len``,
    its string stays inside one word (``rem[sa[l]] >= d``) and its suffixes are
    followed by two different first bytes: ``fol`` (the first UTF-8 byte of
    each symbol, 0 or 0xE2 for a word's end symbol) differs at ``sa[l] + d``
    and ``sa[r] + d`` (the symbols are ordered by first byte first).

    Args:
        sa: the suffix array (``n``).
        lcp: its LCP array (``n``).
        fol: per position, the symbol's first byte.
        rem: per position, the characters left in its word.
        wprefix: cumulative weights (word counts) in suffix-array order (``n + 1``).
        max_len: the longest piece.
        out_l: out, per kept interval, its first index in ``sa`` (``n``).
        out_r: out, its last index (inclusive).
        out_len: out, its depth.
        out_freq: out, its weighted frequency.
        stack_l: scratch (``max_len + 3`` at least: the depths are capped).
        stack_d: scratch, as ``stack_l``.

    Returns the number of intervals kept (the outputs may be too short: then only the first are written).
    """
    n = sa.size
    top = 0
    stack_l[0] = 0
    stack_d[0] = 0
    found = 0
    for i in range(1, n + 1):
        lv = lcp[i] if i < n else 0
        last_l = i - 1
        while lv < stack_d[top]:
            lo = stack_l[top]
            d = stack_d[top]
            top -= 1
            last_l = lo
            r = i - 1
            p = sa[lo]
            if 2 <= d <= max_len and rem[p] >= d and fol[p + d] != fol[sa[r] + d]:
                if found < out_l.size:  # empty outputs: only count (to size them for a second walk)
                    out_l[found] = lo
                    out_r[found] = r
                    out_len[found] = d
                    out_freq[found] = wprefix[r + 1] - wprefix[lo]
                found += 1
            if lv > stack_d[top]:
                top += 1
                stack_l[top] = lo
                stack_d[top] = lv
        if lv > stack_d[top]:
            top += 1
            stack_l[top] = last_l
            stack_d[top] = lv
    return found


@kernel("u4[]", "u1[]", "i4[]", "i4[]", "i8[]", returns="i8")
def _find_range(codes, fol, rem, sa, pattern):
    """The suffix-array range ``[l, r)`` of the suffixes that start with ``pattern``, as ``l << 32 | r``."""
    n = sa.size
    m = pattern.size
    lo = 0
    hi = n
    while lo < hi:  # first suffix >= pattern
        mid = (lo + hi) // 2
        if _compare(codes, fol, rem, sa[mid], pattern, m, n) < 0:
            lo = mid + 1
        else:
            hi = mid
    first = lo
    hi = n
    while lo < hi:  # first suffix not starting with pattern
        mid = (lo + hi) // 2
        if _compare(codes, fol, rem, sa[mid], pattern, m, n) == 0:
            lo = mid + 1
        else:
            hi = mid
    return (first << 32) | lo


@njit(inline="always")
def _compare(codes, fol, rem, p, pattern, m, n):
    """-1, 0 or 1 as the suffix at ``p`` compares with ``pattern`` on ``len(pattern)`` symbols (sort-key order).

    The keys: first byte, then an end symbol before any character of that first byte, then the code point.
    """
    for k in range(m):
        if p + k >= n:
            return -1
        b = pattern[k]
        fb = _first_byte(b)
        fa = np.int64(fol[p + k])
        if fa != fb:
            return -1 if fa < fb else 1
        if rem[p + k] == 0:  # an end symbol, before the characters of its first byte
            return -1
        a = np.int64(codes[p + k])
        if a != b:
            return -1 if a < b else 1
    return 0


@kernel("i4[]", "i4[]", "i4[]", "i4[]", "i8[]", returns=None)
def _count_arcs(sa, cl, cr, realpos, off):
    """Add to ``off[q + 1]`` the occurrences of the chosen substrings that start at real position ``q``.

    ``realpos`` maps a position of the words joined (with their end symbols) to
    its position among the real words' characters, or -1 for a second copy of
    a word (a word is written twice when some of its occurrences end a
    sentence and some do not; its arcs come from one copy).
    """
    for c in range(cl.size):
        for i in range(cl[c], cr[c] + 1):
            q = realpos[sa[i]]
            if q >= 0:
                off[q + 1] += 1


@kernel("i4[]", "i4[]", "i4[]", "u1[]", "i4[]", "i4[]", "i4[]", "i8[]", "u1[]", "i4[]", returns=None)
def _fill_arcs(sa, cl, cr, clen, cpiece, realpos, char_piece, off, alen, apiece):
    """Write the arcs grouped by start position: each character's, then each chosen substring's occurrences.

    ``off`` comes in as each group's end (:func:`_count_arcs`, one more per
    position for the character, summed) and leaves as each group's start
    (``off[q] .. off[q + 1]``): the arcs are written from the last, each group
    filled from its end, so the order within a group is the order above.
    """
    npos = off.size - 1
    for c in range(cl.size - 1, -1, -1):
        for i in range(cr[c], cl[c] - 1, -1):
            q = realpos[sa[i]]
            if q >= 0:
                k = off[q + 1] - 1
                alen[k] = clen[c]
                apiece[k] = cpiece[c]
                off[q + 1] = k
    for q in range(npos - 1, -1, -1):
        k = off[q + 1] - 1
        alen[k] = 1
        apiece[k] = char_piece[q]
        off[q + 1] = k
    # off[q + 1] is now group q's start: shift
    total = alen.size
    for q in range(npos):
        off[q] = off[q + 1]
    off[npos] = total


@kernel("i4[]", "u1[]", "i4[]", "i8[]", "u1[]", "i4[]", returns=None)
def _bucket_arcs(pos, alen, apiece, off, out_len, out_piece):
    """Group arcs by start position, stably: ``off`` (``n_positions + 1``) holds the counts from ``off[1]`` on."""
    npos = off.size - 1
    for j in range(npos):
        off[j + 1] += off[j]
    for i in range(pos.size):
        j = pos[i]
        k = off[j]
        out_len[k] = alen[i]
        out_piece[k] = apiece[i]
        off[j] = k + 1
    for j in range(npos, 0, -1):
        off[j] = off[j - 1]
    off[0] = 0


@kernel("i8[]", "u1[]", "i4[]", "u1[]", returns="i8")
def _keep_arcs(off, alen, apiece, alive):
    """Drop, in place, the arcs of pieces not ``alive``; ``off`` follows.  Returns the arcs kept."""
    k = 0
    start = off[0]
    for j in range(off.size - 1):
        end = off[j + 1]
        off[j] = k
        for i in range(start, end):
            p = apiece[i]
            if alive[p]:
                alen[k] = alen[i]
                apiece[k] = p
                k += 1
        start = end
    off[off.size - 1] = k
    return k


# ---------------------------------------------------------------------------
# EM and Viterbi over the words' lattices


_LATTICE = ("i8[]", "i8[]", "u1[]", "i4[]", "f8[]", "f8[]", "i8", "i8")  # wstart, off, alen, apiece, counts, ...


@kernel(*_LATTICE, "f8[]", "f8[]", "f8[]", "i8[]", "i8[]", returns=None)
def _forward_backward(wstart, off, alen, apiece, counts, prob, w0, w1, expected, alpha, beta, ea, eb):
    """Add every piece's expected count over words ``w0 .. w1 - 1`` (weighted by ``counts``) to ``expected``.

    Probability space: ``prob[p] = exp(score[p])``.  ``alpha``/``beta`` (the
    longest word + 1) hold one word's values, ``ea``/``eb`` their power-of-two
    exponents: a stored value is the true one times ``2 ** e``.  When the value
    about to be pushed (forward) or just pulled (backward) leaves
    ``[2 ** -300, 2 ** 300]``, the values still in use (the next
    ``max_len`` positions) are multiplied by ``2 ** +-300``, which is exact.
    """
    for w in range(w0, w1):
        a0 = wstart[w]
        n = wstart[w + 1] - a0
        for j in range(n + 1):
            alpha[j] = 0.0
            beta[j] = 0.0
        alpha[0] = 1.0
        e = 0
        for s in range(n):
            ea[s] = e
            a = alpha[s]
            if a == 0.0:
                continue
            if a < _TINY or a > _UP:
                f = _UP if a < _TINY else _TINY
                e += _LOG_UP if a < _TINY else -_LOG_UP
                ea[s] = e
                for j in range(s, min(n, s + 255) + 1):
                    alpha[j] *= f
                a = alpha[s]
            g = a0 + s
            for i in range(off[g], off[g + 1]):
                alpha[s + alen[i]] += a * prob[apiece[i]]
        ea[n] = e
        zn = e
        c = counts[w] / alpha[n]
        # backward, with each arc's posterior alpha[s] * p * beta[t] / Z added as beta[t] is read
        beta[n] = 1.0
        e = 0
        eb[n] = 0
        for s in range(n - 1, -1, -1):
            g = a0 + s
            b = 0.0
            ac = alpha[s] * c
            xs = zn - ea[s]
            for i in range(off[g], off[g + 1]):
                t = s + alen[i]
                p = apiece[i]
                pb = prob[p] * beta[t]
                b += pb
                v = ac * pb
                if xs != 0 or e != 0:  # the word was rescaled: its exponents differ
                    x = xs - eb[t]  # a multiple of 300: v times 2 ** x, exactly
                    while x > 0:
                        v *= _UP
                        x -= _LOG_UP
                    while x < 0:
                        v *= _TINY
                        x += _LOG_UP
                expected[p] += v
            beta[s] = b
            eb[s] = e
            if b != 0.0 and (b < _TINY or b > _UP):
                f = _UP if b < _TINY else _TINY
                e += _LOG_UP if b < _TINY else -_LOG_UP
                for j in range(s, min(n, s + 255) + 1):
                    beta[j] *= f
                    eb[j] = e


@kernel(*_LATTICE, "f8[]", "f8[]", "f8[]", "i8[]", "f8[]", "i8[]", returns=None)
def _viterbi(wstart, off, alen, apiece, counts, scores, w0, w1, freq, best_out, ntok, back, best, first):
    """Every word's best path (``w0 .. w1 - 1``), with ``counts[w]`` added to ``freq`` of each piece on it.

    The path's score goes to ``best_out[w]``, its number of tokens to ``ntok[w]``; ``first[p]`` (-1 in)
    gets the position (in the words joined) where piece ``p`` first starts on a path.

    Ties go to the arc that starts earliest (a later start must be strictly better), as the encoder's.
    ``back`` (arc index per position) and ``best`` are scratch of the longest word + 1.
    """
    for w in range(w0, w1):
        a0 = wstart[w]
        n = wstart[w + 1] - a0
        for j in range(n + 1):
            back[j] = -1
            best[j] = 0.0
        for s in range(n):
            if s > 0 and back[s] < 0:
                continue
            here = best[s]
            g = a0 + s
            for i in range(off[g], off[g + 1]):
                t = s + alen[i]
                v = here + scores[apiece[i]]
                if back[t] < 0 or v > best[t]:
                    best[t] = v
                    back[t] = i
        best_out[w] = best[n]
        c = counts[w]
        k = 0
        t = n
        while t > 0:
            i = back[t]
            p = apiece[i]
            freq[p] += c
            k += 1
            t -= alen[i]
            if first[p] < 0:
                first[p] = a0 + t
        ntok[w] = k


@kernel("i4[]", "i8[]", "u1[]", "i8[]", "u1[]", "i4[]", "f8[]", "i8[]", "i4[]", "i8[]", "f8[]", returns=None)
def _alternatives(pieces, where, plen, off, alen, apiece, scores, alt_off, alt, back, best):
    """Each piece's best segmentation of its own text without itself (SentencePiece's second-best path).

    ``pieces[k]`` occurs at position ``where[k]`` of the words joined, ``plen[k]``
    characters long; its alternative is the best path over the arcs inside
    that span, the whole-span arc left out (ties as :func:`_viterbi`).  The
    pieces go to ``alt[alt_off[k] .. alt_off[k + 1]]``, last piece first (``alt_off`` is
    filled here; ``alt`` must hold ``sum(plen)``).  ``back``/``best``: scratch of the
    longest piece + 1.
    """
    pos = 0
    for k in range(pieces.size):
        alt_off[k] = pos
        j0 = where[k]
        n = plen[k]
        for j in range(n + 1):
            back[j] = -1
            best[j] = 0.0
        for s in range(n):
            if s > 0 and back[s] < 0:
                continue
            here = best[s]
            g = j0 + s
            for i in range(off[g], off[g + 1]):
                t = s + alen[i]
                if t > n or (s == 0 and t == n):
                    continue
                v = here + scores[apiece[i]]
                if back[t] < 0 or v > best[t]:
                    best[t] = v
                    back[t] = i
        t = n
        while t > 0:  # from the end back, as the numpy paths are listed
            i = back[t]
            alt[pos] = apiece[i]
            pos += 1
            t -= alen[i]
    alt_off[pieces.size] = pos


# ---------------------------------------------------------------------------
# encoding


_EMPTY = -1
_MUL = 0x9E3779B97F4A7C15  # Fibonacci hashing


@njit(inline="always")
def _slot(trie, key):
    """The slot of ``key`` in the trie's hash table (``trie[2 * slot]`` holds it), or of the empty slot it goes in."""
    mask = (trie.size >> 1) - 1
    h = (key * _MUL) & 0xFFFFFFFFFFFFFFFF
    i = (h >> 32) & mask
    while True:
        k = trie[2 * i]
        if k == key:
            return i
        if k == _EMPTY:
            return i
        i = (i + 1) & mask


@njit(inline="always")
def _arc(trie, node, code):
    """The entry of the child of ``node`` by code point ``code``, or -1 when there is no such child.

    An entry is ``child * 2**32 + piece id + 1`` (``+ 0``: the child is no piece).
    """
    i = _slot(trie, node * 0x200000 + code)
    return trie[2 * i + 1] if trie[2 * i] != _EMPTY else -1


@kernel("i4[]", "i8[]", "i4[]", "i8[]", returns="i8")
def _trie_build(codes, starts, ids, trie):
    """Insert every piece (``codes[starts[k] : starts[k + 1]]``, id ``ids[k]``) into the trie; returns its nodes.

    ``trie`` is a hash table of ``(node, code point)`` keys, ``node * 2**21 + code
    point``, with its entry beside each key (``trie[2 * slot]``, ``trie[2 * slot + 1]``,
    one cache line): the child node times ``2**32`` plus its piece's id + 1 (0 for a
    node that is no piece).  All -1 in; its slots a power of two larger than the
    nodes.  Node 0 is the root.
    """
    n_nodes = 1
    for k in range(ids.size):
        node = 0
        slot = -1
        for q in range(starts[k], starts[k + 1]):
            key = node * 0x200000 + codes[q]
            slot = _slot(trie, key)
            if trie[2 * slot] == _EMPTY:
                trie[2 * slot] = key
                trie[2 * slot + 1] = n_nodes << 32
                n_nodes += 1
            node = trie[2 * slot + 1] >> 32
        if slot >= 0:
            trie[2 * slot + 1] = (node << 32) + ids[k] + 1
    return n_nodes


@kernel("i4[]", "i8[]", "i8[]", "f8[]", "i8", "f8[]", "i4[]", "i4[]", "i4[]", "f8[]", "i8[]", "i4[]", returns="i8")
def _encode_words(codes, wstart, trie, scores, unk_id, unk, out_id, out_start, out_end, best, back, bid):
    """Every word's Viterbi segmentation with Hugging Face's ties (:func:`bpe_core.unigram.encoder.viterbi`).

    Args:
        codes: the words' code points, joined.
        wstart: each word's start in ``codes`` (``n_words + 1``).
        trie: the pieces' trie (:meth:`bpe_core.unigram.encoder.PieceTable.trie`, see :func:`_trie_build`).
        scores: each id's score.
        unk_id: the unknown id.
        unk: an unknown character's score (one element).
        out_id: out, per token (at most one per character): its id.
        out_start: out, its start in its word.
        out_end: out, its end.
        best: scratch (the longest word + 1).
        back: scratch, as ``best``.
        bid: scratch, as ``best``.

    Returns the tokens written; word ``w``'s tokens end where word ``w + 1``'s begin (their start is 0).
    """
    k = 0
    for w in range(wstart.size - 1):
        a0 = wstart[w]
        n = wstart[w + 1] - a0
        for j in range(n + 1):
            back[j] = -1
            best[j] = 0.0
        for s in range(n):
            here = best[s]
            single = False
            node = 0
            for e in range(s + 1, n + 1):
                v = _arc(trie, node, codes[a0 + e - 1])
                if v < 0:
                    break
                node = v >> 32
                i = (v & 0xFFFFFFFF) - 1
                if i >= 0:
                    cand = scores[i] + here
                    if back[e] < 0 or cand > best[e]:
                        best[e] = cand
                        back[e] = s
                        bid[e] = i
                    if e == s + 1:
                        single = True
            if not single:
                cand = unk[0] + here
                e = s + 1
                if back[e] < 0 or cand > best[e]:
                    best[e] = cand
                    back[e] = s
                    bid[e] = unk_id
        # backtrack, fusing runs of unknown characters (a run that spells a piece gets its id)
        first = k
        e = n
        run_end = -1
        while e > 0:
            s = back[e]
            if bid[e] == unk_id:
                if run_end < 0:
                    run_end = e
            else:
                if run_end >= 0:
                    out_id[k] = _fused(codes, a0, e, run_end, trie, unk_id)
                    out_start[k] = e
                    out_end[k] = run_end
                    k += 1
                    run_end = -1
                out_id[k] = bid[e]
                out_start[k] = s
                out_end[k] = e
                k += 1
            e = s
        if run_end >= 0:
            out_id[k] = _fused(codes, a0, 0, run_end, trie, unk_id)
            out_start[k] = 0
            out_end[k] = run_end
            k += 1
        i = first  # reverse this word's tokens into text order
        j = k - 1
        while i < j:
            out_id[i], out_id[j] = out_id[j], out_id[i]
            out_start[i], out_start[j] = out_start[j], out_start[i]
            out_end[i], out_end[j] = out_end[j], out_end[i]
            i += 1
            j -= 1
    return k


@njit
def _fused(codes, a0, s, e, trie, unk_id):
    """The id of the run ``s .. e`` of unknown characters: the piece it spells, else the unknown id."""
    v = 0
    for q in range(s, e):
        v = _arc(trie, v >> 32, codes[a0 + q])
        if v < 0:
            return unk_id
    i = (v & 0xFFFFFFFF) - 1
    return i if i >= 0 else unk_id


@kernel("i4[]", "i8[]", "u1[]", "u1[]", "i8[]", "i8[]", returns="i8")
def _sure_breaks(codes, starts, simple, brk, run_start, run_len):
    """Where a grapheme cluster surely starts (:func:`bpe_core.production.unigram_model.sure_breaks`' twin).

    Args:
        codes: the strings' code points, joined.
        starts: each string's start in ``codes`` (``n + 1``).
        simple: per code point, 1 for the grapheme-break classes Other, Control, CR and LF.
        brk: out, per character: 1 where a cluster surely starts.
        run_start: out: the runs of more than one character between two sure starts.
        run_len: out: their lengths.

    Returns the number of runs.
    """
    runs = 0
    for k in range(starts.size - 1):
        a = starts[k]
        b = starts[k + 1]
        last = a
        for i in range(a, b):
            sure = i == a
            if not sure:
                x = codes[i - 1]
                y = codes[i]
                sure = simple[x] == 1 and simple[y] == 1 and not (x == 13 and y == 10)
            if sure:
                if i - last > 1:
                    run_start[runs] = last
                    run_len[runs] = i - last
                    runs += 1
                last = i
                brk[i] = 1
            else:
                brk[i] = 0
        if b - last > 1:
            run_start[runs] = last
            run_len[runs] = b - last
            runs += 1
    return runs


@kernel("i4[]", "i8[]", "u1[]", "i8[]", "i4[]", "i8[]", "i4[]", "i8[]", "i8[]", "i8[]", "i8[]", returns="i8")
def _normalized_lattice(codes, starts, brk, key, vcodes, voff, lattice, orig_start, orig_end, wstart, wstring):
    """SentencePiece's normalizer and words over many strings at once: the lattice words, each character's origin.

    The compiled twin of :func:`bpe_core.production.unigram_model.normalized_lattice_numpy`
    (:func:`~bpe_core.production.unigram_model.normalize_packed`, then
    :func:`~bpe_core.production.unigram_model.squeeze_packed`, then
    :func:`bpe_core.unigram.batch.metaspace_lattice`): each grapheme cluster is
    replaced by its value, a space is dropped at a string's start, after a space
    and at its end (``remove_extra_whitespaces``), a ``"▁"`` is put in front of a
    string whose first character is not one, and every space is written ``"▁"``;
    a word starts at every ``"▁"``.

    Args:
        codes: the strings' code points, joined.
        starts: each string's start in ``codes`` (``n + 1``).
        brk: 1 where a grapheme cluster starts (at least at every string's start).
        key: at a cluster's start, its value's row in ``voff``.
        vcodes: the values' code points, joined.
        voff: each value's start in ``vcodes`` (rows + 1).
        lattice: out: the lattice code points (room for every value's characters and one per string).
        orig_start: out, per lattice character: the start in ``codes`` of the cluster it comes from (for a
            ``"▁"`` put in front: the start of the string's first kept character).
        orig_end: out: that cluster's end (for a ``"▁"`` put in front: equal to its start).
        wstart: out: each word's start in ``lattice``, then the lattice's length (room + 1).
        wstring: out: each word's string.

    Returns the number of words.
    """
    pos = 0
    words = 0
    for k in range(starts.size - 1):
        prev_space = True  # a space at the string's start is dropped
        pending = -1  # a kept space not written yet (dropped if nothing follows it): its cluster's start
        pending_end = 0
        written = False
        i = starts[k]
        b = starts[k + 1]
        while i < b:
            j = i + 1
            while j < b and brk[j] == 0:
                j += 1
            row = key[i]
            for q in range(voff[row], voff[row + 1]):
                v = vcodes[q]
                if v == 0x20:
                    if not prev_space:
                        pending = i
                        pending_end = j
                        prev_space = True
                    continue
                if pending >= 0 or (not written and v != 0x2581):  # a kept space, or the "▁" put in front
                    lattice[pos] = 0x2581
                    orig_start[pos] = pending if pending >= 0 else i
                    orig_end[pos] = pending_end if pending >= 0 else i
                    wstart[words] = pos
                    wstring[words] = k
                    words += 1
                    pos += 1
                    pending = -1
                if v == 0x2581:
                    wstart[words] = pos
                    wstring[words] = k
                    words += 1
                lattice[pos] = v
                orig_start[pos] = i
                orig_end[pos] = j
                pos += 1
                written = True
                prev_space = False
            i = j
    wstart[words] = pos
    return words


@kernel("i4[]", "i8[]", "i8[]", "i8[]", returns="i8")
def _distinct_words(codes, wstart, table, first_of):
    """Find equal words: ``first_of[w]`` is the first word equal to word ``w`` (``w`` itself for a new one).

    The compiled twin of a ``dict`` from each word to its first index
    (:func:`bpe_core.unigram.encoder.viterbi_packed` runs Viterbi once per distinct word).

    Args:
        codes: the words' code points, joined.
        wstart: each word's start in ``codes`` (``n_words + 1``).
        table: scratch hash table, all -1, a power of two larger than ``n_words``.
        first_of: out, per word.

    Returns the number of distinct words.
    """
    mask = table.size - 1
    distinct = 0
    for w in range(wstart.size - 1):
        a = wstart[w]
        n = wstart[w + 1] - a
        h = n
        for q in range(n):
            h = h * 1000003 + codes[a + q]
        i = (((h * _MUL) & 0xFFFFFFFFFFFFFFFF) >> 32) & mask
        while True:
            v = table[i]
            if v < 0:
                table[i] = w
                first_of[w] = w
                distinct += 1
                break
            b = wstart[v]
            if wstart[v + 1] - b == n:
                q = 0
                while q < n and codes[b + q] == codes[a + q]:
                    q += 1
                if q == n:
                    first_of[w] = v
                    break
            i = (i + 1) & mask
    return distinct


@kernel("i8[]", "i8[]", "i4[]", "i4[]", "i4[]", "i8[]", "i8[]", "i8[]", "i8[]", returns="i8")
def _copy_tokens(row, toff, out_id, out_start, out_end, word, start, end, ids):
    """Every word's tokens, copied from its distinct word's (:func:`bpe_core.unigram.encoder.viterbi_packed`).

    The compiled twin of gathering ``toff[row[w]] .. toff[row[w] + 1]`` for each word ``w`` in order.

    Args:
        row: per word, its distinct word's row.
        toff: each row's first token in ``out_*`` (rows + 1).
        out_id: the distinct words' tokens (:func:`_encode_words`): ids.
        out_start: their starts.
        out_end: their ends.
        word: out, per token: its word.
        start: out: its start in its word.
        end: out: its end.
        ids: out: its id.

    Returns the tokens written.
    """
    k = 0
    for w in range(row.size):
        r = row[w]
        for t in range(toff[r], toff[r + 1]):
            word[k] = w
            start[k] = out_start[t]
            end[k] = out_end[t]
            ids[k] = out_id[t]
            k += 1
    return k
