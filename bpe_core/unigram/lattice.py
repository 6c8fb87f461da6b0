"""The lattices of all training words at once (numpy): forward-backward, Viterbi, and the loss estimate of pruning.

The training words' lattices are processed together, one *layer* (a
character offset within the words) at a time, with numpy: every arc of the
layer in one vectorized step.  :class:`Lattices` holds the arcs;
:func:`loss_increase` is SentencePiece's estimate of what removing each piece
would cost.
"""

from __future__ import annotations

import itertools
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["CompiledLattices", "Lattices", "loss_increase"]

_SPAN_CHUNK = 4096  # used pieces whose alternatives are found together (bounds the sub-lattices' memory)


class Lattices:
    """The lattices of many strings at once: arcs ``(string, start, end, piece)``, processed a layer at a time.

    Nodes are numbered per string: string ``w`` has nodes ``node0[w] .. node0[w] + len[w]``.
    Arcs are stored in forward order (by end offset, then end node; Viterbi and
    the forward pass), with ``bw``, the permutation of the backward order (by
    start offset descending, then start node); :meth:`keep` filters both
    without re-sorting.  Memory per arc: ``S``, ``P``, ``W`` and ``bw``
    (``int32``), ``L`` (``uint8`` while pieces are shorter than 256
    characters) and each order's group index (``int32``), about 25 bytes; the
    passes work one layer (or one chunk of arcs) at a time, so their
    temporaries are per layer, not per arc of the corpus.
    """

    def __init__(self, lens: np.ndarray, arcs: list[np.ndarray]):
        """``lens``: string lengths; ``arcs``: ``[position, length, piece]`` or ``[string, offset, length, piece]``.

        A position is in the strings joined (:attr:`bpe_core.unigram.seed.Seed.arcs`).
        ``arcs`` is emptied as its arrays are consumed, so that they are freed
        (when the caller holds no other reference) before the next is built.
        """
        if len(arcs) == 3:  # positions in the strings joined: to (string, offset)
            wstart = np.zeros(len(lens) + 1, dtype=np.int64)
            np.cumsum(lens, out=wstart[1:])
            arc_w = (np.searchsorted(wstart, arcs[0], side="right") - 1).astype(np.int32)
            arc_s = (arcs[0] - wstart[arc_w]).astype(np.int32)
            arcs[:] = [arc_w, arc_s, arcs[1], arcs[2]]
            del wstart, arc_w, arc_s
        arc_w, arc_s, arc_len = arcs[0], arcs[1], arcs[2]
        self.lens = lens.astype(np.int64)
        self.node0 = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(self.lens + 1, out=self.node0[1:])
        self.n_nodes = int(self.node0[-1])
        maxlen = int(arc_len.max()) if len(arc_len) else 1
        ldt = np.uint8 if maxlen < 256 else np.int16 if maxlen < 32768 else np.int32
        nn = self.n_nodes
        # forward order: by end offset, end node, then start ascending (longest first); built in place
        key = arc_s.astype(np.int64)
        key += arc_len  # end offset
        key *= nn
        for c in range(0, len(key), self._CHUNK):  # + the string's first node (no int64 temporary per arc)
            key[c : c + self._CHUNK] += self.node0[arc_w[c : c + self._CHUNK]]
        key += arc_s
        key += arc_len  # end node
        key *= maxlen + 1
        key += maxlen
        key -= arc_len
        fw = np.argsort(key, kind="stable")
        del key
        # int32 everywhere below: nodes, offsets and pieces stay far under 2**31, and memory halves
        self.W = arc_w[fw].astype(np.int32)
        del arc_w
        arcs[0] = None
        s = arc_s[fw].astype(np.int32)
        del arc_s
        arcs[1] = None
        s += self.node0[:-1].astype(np.int32)[self.W]
        self.S = s
        del s
        self.L = arc_len[fw].astype(ldt)
        del arc_len
        arcs[2] = None
        self.P = arcs[3][fw].astype(np.int32)
        arcs.clear()
        del fw
        # backward order: by start offset descending, then start node
        bkey = self.S - self.node0[self.W]  # start offset
        bkey *= -nn
        bkey += self.S
        self.bw = np.argsort(bkey, kind="stable").astype(np.int32)
        del bkey
        self._layers()

    def keep(self, alive: np.ndarray) -> None:
        """Keep only the arcs of the pieces ``alive`` (a ``bool`` per piece)."""
        self.keep_arcs(alive[self.P])

    def keep_arcs(self, mask: np.ndarray) -> None:
        """Keep only the arcs where ``mask`` (forward order) is true."""
        newpos = (np.cumsum(mask) - 1).astype(np.int32)
        self.bw = newpos[self.bw[mask[self.bw]]]
        del newpos
        self.S, self.L, self.P, self.W = (a[mask] for a in (self.S, self.L, self.P, self.W))
        self._layers()

    @staticmethod
    def _groups(layer_key: np.ndarray, group_key: np.ndarray) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
        """Per layer: ``(a, b, group starts relative to a, group of each arc)`` over arrays sorted by (layer, group)."""
        n = len(layer_key)
        if n == 0:
            return []
        brk = np.flatnonzero(group_key[1:] != group_key[:-1]) + 1
        gstarts = np.concatenate(([0], brk))
        del brk
        lbrk = np.flatnonzero(layer_key[1:] != layer_key[:-1]) + 1
        lstarts = np.concatenate(([0], lbrk, [n]))
        gidx = np.searchsorted(gstarts, lstarts)
        out = []
        for j in range(len(lstarts) - 1):
            a, b = int(lstarts[j]), int(lstarts[j + 1])
            rel = (gstarts[gidx[j] : gidx[j + 1]] - a).astype(np.int32)
            row = np.repeat(np.arange(len(rel), dtype=np.int32), np.diff(np.append(rel, b - a)))
            out.append((a, b, rel, row))
        return out

    def _layers(self) -> None:
        start0 = self.node0[:-1].astype(np.int32)[self.W]  # each arc's string's first node
        E = self.S + self.L
        self.fw_layers = self._groups(E - start0, E)
        self.fw_nodes = [E[a + rel] for a, b, rel, row in self.fw_layers]
        del E
        bw = self.bw
        bS = self.S[bw]
        self.bw_layers = self._groups(bS - start0[bw], bS)
        self.bw_nodes = [bS[a + rel] for a, b, rel, row in self.bw_layers]

    _CHUNK = 1 << 18  # arcs per chunk of the posterior pass

    def forward_backward(self, scores: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
        """Expected piece counts over all segmentations (weighted by ``weights`` per string), and ``-sum w log Z``."""
        S, L, P, W = self.S, self.L, self.P, self.W
        alpha = np.zeros(self.n_nodes)
        for (a, b, rel, row), nodes in zip(self.fw_layers, self.fw_nodes):
            v = alpha[S[a:b]]
            v += scores[P[a:b]]
            alpha[nodes] = _lse(v, rel, row)
        beta = np.zeros(self.n_nodes)
        bw = self.bw
        for (a, b, rel, row), nodes in zip(self.bw_layers, self.bw_nodes):
            idx = bw[a:b]
            v = beta[S[idx] + L[idx]]
            v += scores[P[idx]]
            beta[nodes] = _lse(v, rel, row)
        logz = alpha[self.node0[1:] - 1]
        expected = np.zeros(len(scores))
        for a in range(0, len(S), self._CHUNK):
            s, w, p = S[a : a + self._CHUNK], W[a : a + self._CHUNK], P[a : a + self._CHUNK]
            post = alpha[s]
            post += scores[p]
            post += beta[s + L[a : a + self._CHUNK]]
            post -= logz[w]
            np.exp(post, out=post)
            post *= weights[w]
            expected += np.bincount(p, weights=post, minlength=len(scores))
        return expected, float(-(weights * logz).sum())

    def viterbi(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best path of every string: ``(best total per string, best arc (forward index) per node)``.

        Ties go to the arc starting earliest (the encoder's and Hugging Face's rule).
        """
        best = np.zeros(self.n_nodes)
        barc = np.full(self.n_nodes, -1, dtype=np.int64)
        S, P = self.S, self.P
        for (a, b, rel, row), nodes in zip(self.fw_layers, self.fw_nodes):
            v = best[S[a:b]]
            v += scores[P[a:b]]
            if len(rel) == len(v):
                barc[nodes] = np.arange(a, b)
                best[nodes] = v
                continue
            m = np.maximum.reduceat(v, rel)
            hit = np.flatnonzero(v == m[row])  # arcs reaching their node's best; the first per node starts earliest
            hrow = row[hit]
            first = np.ones(len(hit), dtype=bool)
            first[1:] = hrow[1:] != hrow[:-1]
            barc[nodes] = hit[first] + a
            best[nodes] = m
        return best[self.node0[1:] - 1], barc

    def best(self, scores: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray, int]:
        """``(loss, Viterbi count of each piece, tokens)`` of every string's best path, weighted by ``weights``.

        The loss is ``-sum(weight * best path's score)`` (nats); the paths' arcs are kept for :meth:`occurrences`.
        """
        best, barc = self.viterbi(scores)
        pw, pa = self.paths(barc)
        self._path_arcs = pa
        freq = np.bincount(self.P[pa], weights=weights[pw], minlength=len(scores))
        return float(-(weights * best).sum()), freq, int(weights[pw].sum())

    def occurrences(self, pieces: np.ndarray, piece_len: np.ndarray) -> tuple[np.ndarray, list]:
        """The alternatives of :func:`loss_increase` for ``pieces`` (each on a Viterbi path of :meth:`best`).

        Returns ``(string of each alternative's piece, the pieces)``: for every
        piece of ``pieces`` its best segmentation without itself, last piece first.
        """
        n_pieces = int(self.P.max()) + 1 if len(self.P) else 0
        pa = self._path_arcs
        first = np.full(max(n_pieces, int(pieces.max()) + 1 if len(pieces) else 0), -1, dtype=np.int64)
        first[self.P[pa][::-1]] = pa[::-1]
        order = np.argsort(self.S, kind="stable").astype(np.int32)  # arcs by start node
        s_sorted = self.S[order]
        reps, alts = [], []
        for c in range(0, len(pieces), _SPAN_CHUNK):  # the arcs inside the spans (up to max_len ** 2 each) stay small
            chunk = pieces[c : c + _SPAN_CHUNK]
            u0 = self.S[first[chunk]]
            k = piece_len[chunk]
            lo = np.searchsorted(s_sorted, u0, side="left")
            hi = np.searchsorted(s_sorted, u0 + k, side="left")
            cnt = hi - lo
            rep = np.repeat(np.arange(len(chunk)), cnt)
            idx = order[np.repeat(lo, cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))]
            s_off = self.S[idx] - u0[rep]
            a_len = self.L[idx]
            inside = (s_off + a_len <= k[rep]) & ~((s_off == 0) & (a_len == k[rep]))
            rep, s_off, a_len, idx = rep[inside], s_off[inside], a_len[inside], idx[inside]
            sub = Lattices(k, [rep, s_off, a_len, self.P[idx]])
            _best, barc = sub.viterbi(self._scores)
            aw, aa = sub.paths(barc)
            reps.append(aw + c)
            alts.append(sub.P[aa])
        return (np.concatenate(reps), np.concatenate(alts)) if reps else (np.zeros(0, np.int64), np.zeros(0, np.int32))

    def paths(self, barc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The arcs of every string's best path: ``(string index, forward arc index)`` for each token."""
        ws, arcs = [], []
        cur_w = np.arange(len(self.lens))
        cur = self.node0[1:] - 1
        while len(cur):
            arc = barc[cur]
            ws.append(cur_w)
            arcs.append(arc)
            cur = self.S[arc]
            more = cur != self.node0[cur_w]
            cur, cur_w = cur[more], cur_w[more]
        if not ws:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(ws), np.concatenate(arcs)


def _lse(v: np.ndarray, rel: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Log-sum-exp of the groups of ``v`` starting at ``rel`` (``row``: the group of each element)."""
    if len(rel) == len(v):
        return v
    m = np.maximum.reduceat(v, rel)
    e = np.exp(v - m[row])
    return m + np.log(np.bincount(row, weights=e, minlength=len(rel)))


def loss_increase(
    lat: Lattices | CompiledLattices,
    piece_len: np.ndarray,
    alive: np.ndarray,
    is_char: np.ndarray,
    scores: np.ndarray,
    freq: np.ndarray,
) -> np.ndarray:
    """Each alive piece's estimated loss increase (nats) if removed: its Viterbi uses re-segmented without it.

    Pieces no Viterbi path uses get 0.  For the used multi-character pieces
    the alternative is the best segmentation of the piece's own text without
    the piece, found in the lattice of a word that contains it (the arcs
    inside the piece's span, the whole-span arc left out):
    ``freq * (log p - sum(log p_alt'))`` with ``p_alt' = (freq_alt + freq) /
    (total + freq * (len(alt) - 1))`` (SentencePiece's estimate).  ``freq`` are
    the Viterbi counts of :meth:`Lattices.best` just before.
    """
    inc = np.zeros(len(freq))
    used = np.flatnonzero((freq > 0) & alive & ~is_char)
    if len(used) == 0:
        return inc
    lat._scores = scores
    aw, alt_p = lat.occurrences(used, piece_len)
    total = freq.sum()
    f = freq[used]
    n_alt = np.bincount(aw, minlength=len(used)).astype(np.float64)
    logsum_alt = np.log(total + f * (n_alt - 1))
    logprob_alt = np.bincount(aw, weights=np.log(freq[alt_p] + f[aw]), minlength=len(used)) - n_alt * logsum_alt
    logprob_sp = np.log(f) - math.log(total)
    inc[used] = f * (logprob_sp - logprob_alt)
    return inc


# ---------------------------------------------------------------------------
# the same, word by word in compiled kernels


_CHUNKS = 2
"""Fixed word ranges the compiled passes split the words into (sums added in this order whatever the threads)."""

_THREADS = min(2, os.cpu_count() or 1)
"""Threads that run the compiled passes (each on its chunks; ``ctypes`` releases the GIL)."""


class CompiledLattices:
    """:class:`Lattices`' passes in the compiled kernels of :mod:`bpe_core.unigram.kernels`, word by word.

    The arcs are grouped by start position in the words joined (``off``,
    ``alen``, ``apiece``: 5 bytes an arc and 8 a position).  Words are split
    into :data:`_CHUNKS` fixed ranges of about equal length, run by
    :data:`_THREADS` threads; each range adds into its own counts (arrays made
    once, here, in the calling thread), summed in range order, so results do
    not depend on the number of threads.

    Results: :meth:`best` and :meth:`occurrences` are those of
    :class:`Lattices` (the same sums in the same order); :meth:`forward_backward`
    computes in probability space and agrees to rounding (relative 1e-12).
    """

    def __init__(self, lens: np.ndarray, arcs: list[np.ndarray], n_pieces: int, *, grouped: bool = False):
        """Group the arcs by start position (unless ``grouped`` already).

        Args:
            lens: each word's length.
            arcs: :attr:`bpe_core.unigram.seed.Seed.arcs` (emptied here), ``[position,
                length, piece]``, or ``[off, length, piece]`` when ``grouped``.
            n_pieces: the pieces' count.
            grouped: the arcs are grouped by position (:func:`~bpe_core.unigram.seed.seed_pieces_compiled`).
        """
        from . import kernels as K

        self.n_pieces = n_pieces
        self.wstart = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=self.wstart[1:])
        npos = int(self.wstart[-1])
        first, alen, piece = arcs
        arcs.clear()
        if grouped:
            self.off, self.alen, self.apiece = first, alen, piece
        else:
            self.off = np.zeros(npos + 1, dtype=np.int64)
            self.off[1:] = np.bincount(first, minlength=npos)
            self.alen = np.empty(len(first), dtype=np.uint8)
            self.apiece = np.empty(len(first), dtype=np.int32)
            K._bucket_arcs(first.astype(np.int32, copy=False), alen.astype(np.uint8, copy=False),
                           piece.astype(np.int32, copy=False), self.off, self.alen, self.apiece)  # fmt: skip
        del first, alen, piece
        self.longest = int(lens.max()) if len(lens) else 0
        cuts = np.searchsorted(self.wstart, np.linspace(0, npos, _CHUNKS + 1), side="left")
        cuts[0], cuts[-1] = 0, len(lens)
        self.chunks = [(int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a]
        self._pool = ThreadPoolExecutor(_THREADS) if _THREADS > 1 else None
        n = self.longest + 1
        # per range: its counts, and scratch of the longest word (alpha, beta, their exponents)
        self._buffers = [
            (np.empty(n_pieces), np.empty(n), np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64))
            for _ in self.chunks
        ]
        self._first = [np.empty(n_pieces, np.int64) for _ in self.chunks]  # per range: where each piece is on a path

    def _sum(self, fn) -> np.ndarray:
        """``fn(k)`` for every word range ``k`` (it fills ``self._buffers[k][0]``), added up in range order."""
        if self._pool is None:
            for k in range(len(self.chunks)):
                fn(k)
        else:
            list(self._pool.map(fn, range(len(self.chunks))))
        total = self._buffers[0][0].copy()
        for b in self._buffers[1:]:
            total += b[0]
        return total

    def keep(self, alive: np.ndarray) -> None:
        """Keep only the arcs of the pieces ``alive`` (a ``bool`` per piece)."""
        from . import kernels as K

        m = K._keep_arcs(self.off, self.alen, self.apiece, alive.astype(np.uint8))
        if m < len(self.apiece) // 2:  # give memory back once it halves (the kernels read up to off[-1] only)
            self.alen = self.alen[:m].copy()
            self.apiece = self.apiece[:m].copy()

    def forward_backward(self, scores: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
        """Expected piece counts over all segmentations (weighted by ``weights`` per word), and 0.0.

        (:meth:`Lattices.forward_backward`'s second value, ``-sum w log Z``, is not computed here.)
        """
        from . import kernels as K

        prob = np.exp(scores)

        def run(k: int) -> None:
            (w0, w1), (expected, *scratch) = self.chunks[k], self._buffers[k]
            expected.fill(0.0)
            K._forward_backward(self.wstart, self.off, self.alen, self.apiece, weights, prob, w0, w1, expected,
                                *scratch)  # fmt: skip

        return self._sum(run), 0.0

    def best(self, scores: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray, int]:
        """As :meth:`Lattices.best`: ``(loss, Viterbi count of each piece, tokens)``."""
        from . import kernels as K

        n_words = len(self.wstart) - 1
        best_out = np.zeros(n_words)
        ntok = np.zeros(n_words)

        def run(k: int) -> None:
            (w0, w1), (freq, best, _beta, back, _eb) = self.chunks[k], self._buffers[k]
            freq.fill(0.0)
            self._first[k].fill(-1)
            K._viterbi(self.wstart, self.off, self.alen, self.apiece, weights, scores, w0, w1, freq, best_out, ntok,
                       back, best, self._first[k])  # fmt: skip

        freq = self._sum(run)
        return float(-(weights * best_out).sum()), freq, int((weights * ntok).sum())

    def occurrences(self, pieces: np.ndarray, piece_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Lattices.occurrences`: ``(index into pieces, piece)`` of each alternative's pieces."""
        from . import kernels as K

        where = np.full(len(pieces), -1, dtype=np.int64)  # where each is on a path (best() just before)
        for first in reversed(self._first):
            found = first[pieces]
            where = np.where(found >= 0, found, where)
        plen = piece_len[pieces]
        alt_off = np.empty(len(pieces) + 1, dtype=np.int64)
        alt = np.empty(int(plen.sum()), dtype=np.int32)
        longest = int(plen.max()) + 1
        scratch = (np.empty(longest, np.int64), np.empty(longest))
        K._alternatives(pieces.astype(np.int32), where.astype(np.int64), plen.astype(np.uint8), self.off, self.alen,
                        self.apiece, self._scores, alt_off, alt, *scratch)  # fmt: skip
        n = np.diff(alt_off)
        return np.repeat(np.arange(len(pieces)), n), alt[: alt_off[-1]]
