"""The linked-list pair merge shared by the BPE and WordPiece trainers, for their long words.

A word of 100 KB (minified code, base64, a language written without spaces
under a custom pattern, a run of one letter) holds each frequent pair
thousands of times; rewriting it per merge costs its whole length per merge
(quadratic overall).  Here every token of every long word has a *position*
(its offset in their concatenation, one per initial token): ``tok[p]`` is the
token id at ``p`` (``-1`` once merged into its left neighbour) and ``left[p]`` that
id shifted into a pair's left half (one shared ``int`` per id: no allocation per
visit), ``nxt``/``prv``
link the live positions of one word (``-1`` at its ends), ``wgt[p]`` is the
count of the word holding ``p``, and ``pos[pair]`` lists the positions where
``pair`` started when it was made (the "bigram-location index" of the seed
articles).  A merge visits only those positions, so its cost is proportional
to the occurrences it touches.  Entries go stale when a neighbour merges; a
visit checks each against the lists and skips the stale ones.

A pair is one ``int``, ``left << shift | right`` (``shift`` bits hold any id).

The merge is BPE's (and WordPiece's) left-to-right, non-overlapping
replacement: in ``x a b a b y`` the pair ``(a, b)`` becomes ``x N N y``;
in ``a a a`` the pair ``(a, a)`` becomes ``N a``.  It is the same rewrite as
the textbook's per-word loop (:func:`bpe_core.textbook.bpe.train_merges`, the
``while i < len(w)`` loop building ``out``) and as the compiled BPE kernel's
(:func:`bpe_core.bpe.merge_kernel._run_merges`), done in place on the lists.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["LinkedWords"]

TICK_EVERY = 4096
"""Occurrences visited between two calls of a merge's ``tick`` callback."""


def _no_tick() -> None:
    return None


class LinkedWords:
    """Long words as doubly linked lists of token positions, with a pair -> positions index.

    Args:
        words: the words, each a sequence of token ids (``int`` >= 0) of length 2 or more.
        counts: each word's count (its weight in every pair count), same order.
        shift: bits of the right id in a pair key (``1 << shift`` exceeds every id to come).
        ordered: keep each pair's positions as a min-heap (``list``), so that
            :meth:`first_position` finds the pair's first live occurrence (WordPiece's
            tie-break); otherwise as ``array('q')`` appended to (8 bytes a position: BPE).

    Positions, links and weights are machine integers (``array('q')``): 8 bytes
    each, where a ``list`` would hold an ``int`` object per position as well.
    """

    __slots__ = ("_push", "left", "mask", "nxt", "ordered", "pos", "prv", "shift", "starts", "tok", "wgt")

    def __init__(self, words: Sequence[Sequence[int]], counts: Sequence[int], shift: int, ordered: bool) -> None:
        tok: list[int] = []
        for w in words:
            tok.extend(w)
        n = len(tok)
        self.tok = tok
        shifted = {t: t << shift for t in set(tok)}
        self.left: list[int] = list(map(shifted.__getitem__, tok))  # tok[p] << shift, one shared object per id
        self.shift = shift
        self.mask = (1 << shift) - 1
        self.ordered = ordered
        self.nxt = array("q", range(1, n + 1))
        self.prv = array("q", range(-1, n - 1))
        self.wgt = array("q")
        self.starts: list[int] = []
        at = 0
        for w, c in zip(words, counts, strict=True):
            self.starts.append(at)
            self.wgt += array("q", [c]) * len(w)
            at += len(w)
            self.nxt[at - 1] = -1
            self.prv[at - len(w)] = -1
        self.pos: dict[int, list[int] | array] = {}
        self._push: Callable = heapq.heappush if ordered else array.append

    def seed(self) -> dict[int, int]:
        """Index every adjacent pair's positions (ascending) and return ``{pair: weighted count}``.

        Vectorised with numpy: the pair keys of all positions that have a right
        neighbour, sorted stably (positions stay ascending per pair: a sorted
        list is also a min-heap), then grouped.
        """
        nxt = np.frombuffer(self.nxt, dtype=np.int64)
        at = np.flatnonzero(nxt >= 0)
        try:
            ids = np.frombuffer(bytes(self.tok), dtype=np.uint8).astype(np.int64)  # bytes (BPE's start): fast
        except ValueError:
            ids = np.array(self.tok, dtype=np.int64)
        if ids.size and ids.max() < 256:  # bytes (BPE's start): 16-bit codes, which numpy sorts by radix
            codes = (ids[at] << 8 | ids[nxt[at]]).astype(np.uint16)
            lo_bits, left_shift = 8, self.shift - 8
        else:
            codes = ids[at] << self.shift | ids[nxt[at]]
            lo_bits, left_shift = self.shift, 0
        del ids
        order = np.argsort(codes, kind="stable")
        codes, at = codes[order], at[order]
        del order
        bounds = np.flatnonzero(np.diff(codes, prepend=codes[:1] + 1)) if codes.size else np.zeros(0, np.int64)
        heads = codes[bounds].astype(np.int64)
        keys = ((heads >> lo_bits) << (lo_bits + left_shift) | (heads & ((1 << lo_bits) - 1))).tolist()
        del codes, heads
        totals = np.add.reduceat(np.frombuffer(self.wgt, dtype=np.int64)[at], bounds) if at.size else bounds
        edges = [*bounds.tolist(), at.size]
        pos = self.pos
        if self.ordered:
            flat = at.tolist()
            for q, lo, hi in zip(keys, edges, edges[1:], strict=False):
                pos[q] = flat[lo:hi]
        else:
            raw = at.tobytes()
            for q, lo, hi in zip(keys, edges, edges[1:], strict=False):
                pos[q] = a = array("q")
                a.frombytes(raw[lo * 8 : hi * 8])
        return dict(zip(keys, totals.tolist(), strict=True))

    def pair_counts(self) -> dict[int, int]:
        """Every adjacent pair's count over the words (weighted), walking the lists (the index is not read)."""
        out: dict[int, int] = {}
        get = out.get
        tok, left, nxt, wgt = self.tok, self.left, self.nxt, self.wgt
        for start in self.starts:
            c = wgt[start]
            p, r = start, nxt[start]
            while r >= 0:
                k = left[p] | tok[r]
                out[k] = get(k, 0) + c
                p, r = r, nxt[r]
        return out

    def first_position(self, q: int) -> int | None:
        """The first live position of pair ``q`` (``ordered`` only), dropping stale entries; ``None`` if it has none.

        A stale entry never becomes live again (the tokens at a position and at
        its right neighbour only grow), so the first live entry of the heap is
        the pair's first occurrence.
        """
        lst = self.pos.get(q)
        if lst is None:
            return None
        tok, nxt = self.tok, self.nxt
        x, y = q >> self.shift, q & self.mask
        while lst:
            p = lst[0]
            r = nxt[p]
            if tok[p] == x and r >= 0 and tok[r] == y:
                return p
            heapq.heappop(lst)
        del self.pos[q]
        return None

    def merge(self, a: int, b: int, m: int, delta: dict[int, int], tick: Callable[[], None] | None = None) -> int:
        """Replace every occurrence of ``(a, b)`` by ``m``, left to right; returns the weighted replacements.

        Args:
            a: the pair's left id.
            b: the pair's right id.
            m: the merged token's id.
            delta: ``{pair: change}``, updated: each pair that loses an occurrence
                loses its word's count, each pair made with ``m`` gains it (and its
                position is indexed).  ``(a, b)`` itself is left out (the caller drops it).
            tick: called every :data:`TICK_EVERY` occurrences visited (progress, Cancel).

        Returns:
            The replaced occurrences, weighted by their words' counts.
        """
        shift = self.shift
        best = a << shift | b
        lst = self.pos.pop(best, None)
        if not lst:
            return 0
        if a == b:
            lst = sorted(lst)  # overlapping occurrences: left to right, as the merge of one word does
        tick = tick or _no_tick
        tok, left, nxt, prv, wgt, pos = self.tok, self.left, self.nxt, self.prv, self.wgt, self.pos
        get = delta.get
        push, ordered = self._push, self.ordered
        ms, bs = m << shift, b << shift
        replaced = 0
        for lo in range(0, len(lst), TICK_EVERY):
            for p in lst[lo : lo + TICK_EVERY]:
                if tok[p] != a:
                    continue
                r = nxt[p]
                if r < 0 or tok[r] != b:
                    continue
                c = wgt[p]
                replaced += c
                x = prv[p]
                if x >= 0:
                    tx = left[x]
                    old = tx | a
                    delta[old] = get(old, 0) - c
                    made = tx | m
                    delta[made] = get(made, 0) + c
                    at = pos.get(made)
                    if at is None:
                        pos[made] = [x] if ordered else array("q", (x,))
                    else:
                        push(at, x)
                y = nxt[r]
                if y >= 0:
                    ty = tok[y]
                    old = bs | ty
                    delta[old] = get(old, 0) - c
                    made = ms | ty
                    delta[made] = get(made, 0) + c
                    at = pos.get(made)
                    if at is None:
                        pos[made] = [p] if ordered else array("q", (p,))
                    else:
                        push(at, p)
                    prv[y] = p
                tok[p] = m
                left[p] = ms
                tok[r] = -1
                nxt[p] = y
            tick()
        delta.pop(best, None)  # (a, a) loses its overlapping occurrences too: the caller drops the pair
        return replaced
