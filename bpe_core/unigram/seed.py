r"""The seed vocabulary of Unigram training: SentencePiece's, exactly (``sentencepiece`` 0.2.3).

SentencePiece (``unigram_model_trainer.cc``, ``MakeSeedSentencePieces``)
joins its sentences into one byte array, each followed by a ``0`` byte (the
sentence boundary), builds the suffix array of those bytes with its LCP array,
and walks the LCP intervals (the internal nodes of the suffix tree) before it
splits the sentences into words.  The seed is:

* **every character** of the text, with its count;
* **the substrings** of 2 to ``max_piece_length`` characters that some LCP
  interval spells, cut at character boundaries and after any trailing ``0``,
  with no ``0`` inside and a ``▁`` only in front -- at most ``seed_size`` of
  them, by score ``frequency * length`` (descending; ties: the longer UTF-8
  first, then byte order).

Here the text is already cut into words (a piece never spans two words: it
may hold ``▁`` only in front, and every word starts at a ``▁``), so the same
seed comes from the distinct words and their counts.  Spelled out, a
substring ``x`` of the words is in the seed when

* ``x`` is an interval: its occurrences are followed by at least two
  different *first bytes* (the next character's first UTF-8 byte inside a
  word; at the end of a word, ``0xE2`` -- the ``▁`` that starts the next
  word -- or ``0`` where the word ends its sentence).  So ``x`` followed only
  by ``é`` and ``è`` (both ``0xC3 ..``) is no interval, as in SentencePiece's
  byte array; its frequency is then its number of occurrences; or
* ``x`` + boundary is an interval: ``x`` ends two or more sentences whose
  next sentences start with different first bytes (the end of the text counts
  as different from every byte).  SentencePiece trims that interval's ``0``
  and **adds its size to the count of** ``x`` (so such an ``x`` can count
  some occurrences twice); here too.

Sentences are the stretches of text between special tokens
(:func:`bpe_core.unigram.trainer.count_sentences`): given the same sentences
-- the first with the ``"▁"`` put in front of the text, spaces written
``▁``, ``add_dummy_prefix=False``, ``normalization_rule_name="identity"``,
``split_by_unicode_script=False``, ``split_by_number=False`` -- SentencePiece
seeds the same pieces with the same frequencies (tested, ``tests/engine/test_unigram_exact.py``).
Characters it reserves are ordinary characters here: ``U+0000`` and
``U+001F`` (SentencePiece makes them unknown), ``U+2585`` (it drops a
sentence holding it).

The initial score of a piece is SentencePiece's: ``log(score / sum of
scores)``, where a character's score is its count and a substring's its
``frequency * length`` in 32-bit floats.

:func:`seed_pieces` is written with numpy, one substring length at a time;
:mod:`bpe_core.unigram.kernels` builds the same seed from a suffix array in
compiled code (tests check both give the same).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["PieceTexts", "Seed", "first_bytes", "seed_order", "seed_pieces", "seed_pieces_compiled"]

WORD_END = 0xE2
"""The first byte that follows a word inside its sentence: the ``▁`` (``E2 96 81``) that starts the next word."""


class Seed(NamedTuple):
    """The seed vocabulary and the arcs of its pieces in the words.

    Attributes:
        pieces: characters first (count descending, then code point), then substrings (SentencePiece's order);
            a ``list`` (:func:`seed_pieces`) or a :class:`PieceTexts` (:func:`seed_pieces_compiled`).
        freqs: each piece's frequency (``float64``): a character's count, a substring's SentencePiece frequency.
        scores: each piece's initial score (log-probability), SentencePiece's (see the module docstring).
        n_chars: how many of ``pieces`` are characters.
        lens: each word's length in characters (``int64``).
        arcs: every occurrence of a piece in a word, as ``[position, length, piece]`` arrays, the
            position in the words joined (``int32``; the lengths ``uint8`` when ``max_len < 256``),
            in no particular order (:func:`seed_pieces`); or grouped by position, ``[off, length,
            piece]`` with the arcs of position ``j`` at ``off[j] .. off[j + 1]`` (``off``
            ``int64``, one longer than the positions: :func:`seed_pieces_compiled`).
    """

    pieces: list[str]
    freqs: np.ndarray
    scores: np.ndarray
    n_chars: int
    lens: np.ndarray
    arcs: list


def first_bytes(codes: np.ndarray) -> np.ndarray:
    """The first UTF-8 byte of each code point (``int32``).

    >>> first_bytes(np.array([0x61, 0xE9, 0x2581, 0x1F600])).tolist()
    [97, 195, 226, 240]
    """
    c = codes.astype(np.int64)
    out = np.where(
        c < 0x80, c, np.where(c < 0x800, 0xC0 | c >> 6, np.where(c < 0x10000, 0xE0 | c >> 12, 0xF0 | c >> 18))
    )
    return out.astype(np.int32)


def seed_order(codes: np.ndarray, start: np.ndarray, length: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """SentencePiece's order of seed substrings (``BoundedPriorityQueue::Get``), as a permutation.

    Score ``float32(freq) * float32(length)`` descending, then the longer UTF-8
    first, then the smaller UTF-8 bytes (code point order).

    Args:
        codes: the code points of the words joined (``uint32``).
        start: each substring's start in ``codes``.
        length: each substring's length in characters.
        freq: each substring's frequency.
    """
    n = len(start)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(length.max())
    # big-endian code + 1 per character, 0 after the end: bytes order == code point order, prefixes first
    idx = start[:, None] + np.arange(width)[None, :]
    mat = np.where(np.arange(width)[None, :] < length[:, None], codes[np.minimum(idx, len(codes) - 1)] + 1, 0)
    keys = mat.astype(">u4").view(f"V{4 * width}").ravel()
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(keys, kind="stable")] = np.arange(n)
    utf8 = np.where(mat == 0, 0, np.where(mat <= 0x80, 1, np.where(mat <= 0x800, 2, np.where(mat <= 0x10000, 3, 4))))
    score = freq.astype(np.float32) * length.astype(np.float32)
    return np.lexsort((rank, -utf8.sum(axis=1), -score.astype(np.float64)))


def _final_counts(words: list[str], ends: Sequence[tuple[str, int]]) -> np.ndarray:
    """How many occurrences of each word end a sentence (``float64``)."""
    last = Counter(w for w, _next in ends)
    fin = np.zeros(len(words))
    for i, w in enumerate(words):
        if w in last:
            fin[i] = last[w]
    return fin


def _boundary_intervals(ends: Sequence[tuple[str, int]], max_len: int) -> dict[str, tuple[str, int]]:
    """``{x: (a word it ends, occurrences)}`` of the substrings ``x`` for which ``x`` + boundary is an interval.

    ``x`` ends two or more sentences (a suffix of their last words, 2 to
    ``max_len`` characters) whose next sentences start with different first
    bytes (``-1``: no next sentence).
    """
    if len({nxt for _w, nxt in ends}) < 2:
        return {}  # one next byte for every sentence: no x has two
    seen: dict[str, list] = {}  # x -> [occurrences, first next byte, two next bytes differ, a word x ends]
    for (w, nxt), n in Counter(ends).items():  # each distinct (last word, next byte) once
        for k in range(2, min(len(w), max_len) + 1):
            entry = seen.get(w[-k:])
            if entry is None:
                seen[w[-k:]] = [n, nxt, False, w]
            else:
                entry[0] += n
                entry[2] = entry[2] or entry[1] != nxt
    return {x: (w, n) for x, (n, _first, differ, w) in seen.items() if n >= 2 and differ}


class _Levels:
    """The occurrences of the words' substrings, one length at a time (numpy).

    Level ``k`` holds the start positions (in the words joined) of the
    substrings of ``k`` characters whose first ``k - 1`` characters occur
    twice or more, each with its substring's id among them (``gram``).
    """

    def __init__(self, words: list[str], counts: np.ndarray, fin: np.ndarray):
        flat = "".join(words)
        self.flat = flat
        self.lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        codes = np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32)
        wstart = np.zeros(len(words), dtype=np.int64)
        np.cumsum(self.lens[:-1], out=wstart[1:])
        self.wstart = wstart
        self.wid = np.repeat(np.arange(len(words), dtype=np.int32), self.lens)
        self.rem = (wstart[self.wid] + self.lens[self.wid] - np.arange(len(codes), dtype=np.int64)).astype(np.int32)
        self.weight = counts[self.wid]  # each position stands for its word's occurrences
        self.fbyte = first_bytes(codes)
        # the first bytes that follow the end of each word: 0 where it ends a sentence, 0xE2 otherwise
        self.end_lo = np.where(fin[self.wid] > 0, 0, WORD_END)
        self.end_hi = np.where(counts[self.wid] > fin[self.wid], WORD_END, 0)
        self.codes = codes
        self.alphabet, cid = np.unique(codes, return_inverse=True)
        self.cid = cid.astype(np.int32)

    def branching(self, pos: np.ndarray, gram: np.ndarray, k: int, n_grams: int) -> np.ndarray:
        """Whether each gram of length ``k`` is followed by two or more different first bytes."""
        inside = self.rem[pos] > k
        nxt = self.fbyte[np.minimum(pos + k, len(self.fbyte) - 1)]
        lo = np.where(inside, nxt, self.end_lo[pos])
        hi = np.where(inside, nxt, self.end_hi[pos])
        gmin = np.full(n_grams, 256, dtype=np.int32)
        gmax = np.full(n_grams, -1, dtype=np.int32)
        np.minimum.at(gmin, gram, lo)
        np.maximum.at(gmax, gram, hi)
        return gmin != gmax


def seed_pieces(
    words: list[str], counts: np.ndarray, max_len: int, seed_size: int, ends: Sequence[tuple[str, int]] = ()
) -> Seed:
    """The seed vocabulary of the words (see the module docstring) and every occurrence of its pieces.

    Args:
        words: the distinct lattice words.
        counts: their counts (``float64``).
        max_len: the longest substring, in characters.
        seed_size: substrings kept at most (characters are not counted), the best first.
        ends: ``(last word, next sentence's first byte or -1)`` per sentence
            (:attr:`bpe_core.unigram.trainer.CountedWords.ends`); none: every
            word is taken as followed by another.

    Returns:
        A :class:`Seed`.

    >>> s = seed_pieces(["▁hug", "▁pug", "▁hugs"], np.array([3.0, 2.0, 1.0]), 16, 100, [("▁hugs", -1)])
    >>> [(p, int(f)) for p, f in zip(s.pieces, s.freqs) if len(p) > 1]
    [('▁hug', 4), ('hug', 4), ('ug', 6)]
    """
    index = {w: i for i, w in enumerate(words)}
    lv = _Levels(words, counts, _final_counts(words, ends))
    bonus = {  # x -> (a start position of x, occurrences to add)
        x: (int(lv.wstart[index[w]]) + len(w) - len(x), n) for x, (w, n) in _boundary_intervals(ends, max_len).items()
    }
    n_chars = len(lv.alphabet)
    pos = np.arange(len(lv.cid), dtype=np.int32)
    gram = lv.cid
    levels = [(pos, gram, np.bincount(gram, weights=lv.weight, minlength=n_chars))]  # level 1: the characters
    for k in range(2, max_len + 1):
        ppos, pgram, _ = levels[-1]
        pcount = np.bincount(pgram, weights=lv.weight[ppos])
        ext = (lv.rem[ppos] >= k) & (pcount[pgram] >= 2)
        pos = ppos[ext]
        if len(pos) == 0:
            break
        key = pgram[ext].astype(np.int64) * n_chars + lv.cid[pos + (k - 1)]
        uniq, gram = np.unique(key, return_inverse=True)
        gram = gram.astype(np.int32)
        count = np.bincount(gram, weights=lv.weight[pos], minlength=len(uniq))
        freq = np.where(lv.branching(pos, gram, k, len(uniq)), count, 0.0)
        for x, (p, n) in bonus.items():  # x + boundary is an interval: SentencePiece adds its size to x
            if len(x) == k:
                freq[gram[np.searchsorted(pos, p)]] += n
        levels.append((pos, gram, freq))
    return _assemble(levels, lv, seed_size)


def _assemble(levels: list, lv: _Levels, seed_size: int) -> Seed:
    """Order the characters and the candidates (frequency >= 2), keep ``seed_size`` of these; the arcs."""
    cfreq = levels[0][2]
    chars = np.lexsort((lv.alphabet, -cfreq))
    n_chars = len(chars)
    char_id = np.empty(n_chars, dtype=np.int32)
    char_id[chars] = np.arange(n_chars, dtype=np.int32)
    cand = []  # per level >= 2: (k, grams, a start position, freq)
    for k, (pos, gram, freq) in enumerate(levels[1:], start=2):
        first = np.full(len(freq), -1, dtype=np.int64)
        first[gram[::-1]] = pos[::-1]
        ok = np.flatnonzero(freq >= 2)
        cand.append((np.full(len(ok), k), ok, first[ok], freq[ok]))
    ck, cg, cs, cf = (np.concatenate([c[j] for c in cand]) if cand else np.zeros(0) for j in range(4))
    order = seed_order(lv.codes, cs.astype(np.int64), ck.astype(np.int64), cf)
    order = order[:seed_size]
    ck, cg, cs, cf = ck[order].astype(np.int64), cg[order].astype(np.int64), cs[order].astype(np.int64), cf[order]
    pieces = [chr(c) for c in lv.alphabet[chars].tolist()]
    pieces += [lv.flat[p : p + k] for p, k in zip(cs.tolist(), ck.tolist())]
    freqs = np.concatenate([cfreq[chars], cf]).astype(np.float64)
    seed_of = [char_id] + [np.full(len(f), -1, dtype=np.int32) for _, _, f in levels[1:]]
    for j, (k, g) in enumerate(zip(ck.tolist(), cg.tolist())):
        seed_of[k - 1][g] = n_chars + j
    arcs = _arcs(levels, seed_of, lv)
    scores = _initial_scores(pieces, freqs, n_chars)
    return Seed(pieces, freqs, scores, n_chars, lv.lens, arcs)


def _initial_scores(pieces, freqs: np.ndarray, n_chars: int) -> np.ndarray:
    """SentencePiece's ``ToLogProb``: ``log(score) - log(sum)``.

    A character's score is its count, a substring's ``float32(freq) * float32(length)``.
    """
    if isinstance(pieces, PieceTexts):
        lens = pieces.lengths.astype(np.float32)
    else:
        lens = np.fromiter(map(len, pieces), dtype=np.float32, count=len(pieces))
    score = freqs.astype(np.float32)
    score[n_chars:] *= lens[n_chars:]
    score = score.astype(np.float64)
    return np.log(score) - math.log(score.sum())


def _arcs(levels: list, seed_of: list, lv: _Levels) -> list:
    """``[position, length, piece]`` of every occurrence of a seed piece (each level's arrays freed as used)."""
    ap, al, apc = [], [], []
    ldt = np.uint8 if len(levels) < 256 else np.int32
    for j in range(len(levels)):
        pos, gram, _ = levels[j]
        sp = seed_of[j][gram]
        hit = sp >= 0
        ap.append(pos[hit])
        al.append(np.full(int(hit.sum()), j + 1, dtype=ldt))
        apc.append(sp[hit])
        levels[j] = None
    arcs = []
    for parts in (ap, al, apc):  # one array at a time, its parts freed as it is made
        arcs.append(np.concatenate(parts))
        parts.clear()
    return arcs


# ---------------------------------------------------------------------------
# the same seed from a suffix array (compiled kernels)


def seed_pieces_compiled(
    words: list[str],
    counts: np.ndarray,
    max_len: int,
    seed_size: int,
    ends: Sequence[tuple[str, int]] = (),
    tick: Callable[[], None] | None = None,
) -> Seed:
    """:func:`seed_pieces` from a suffix array of the words, in compiled kernels (:mod:`bpe_core.unigram.kernels`).

    The words are joined, each followed by a symbol of its own (a word some
    of whose occurrences end a sentence and some not is written twice, once
    for each, with the counts split), the symbols ordered by first UTF-8 byte
    first (an end symbol as ``0`` or ``0xE2``); the suffix array, sorted on
    ``max_len + 1`` symbols, and its LCP array give the LCP intervals: an
    interval of depth ``d`` whose first and last suffixes are followed by
    different first bytes is a seed candidate, its weighted size the
    frequency.  The rest (boundary intervals, the order, the arcs) as
    :func:`seed_pieces`.  Same arguments and result (``max_len < 256``);
    ``tick()`` is called between the steps (the trainer's progress: it may
    raise to stop).
    """
    from . import kernels as K

    tick = tick or (lambda: None)
    fin = _final_counts(words, ends)
    text = _SuffixText(words, counts, fin)
    n = len(text.sym)
    tick()
    sa = np.empty(n, dtype=np.int32)
    rank = text.ranks()
    del text.sym  # the ranks order the symbols now
    K._suffix_array(rank, max_len + 1, sa, *(np.empty(n, dtype=np.int32) for _ in range(3)),
                    np.empty(n + 2, dtype=np.int32))  # fmt: skip
    del rank
    tick()
    lcp = np.empty(n, dtype=np.int32)
    K._lcp(text.codes, text.rem, sa, max_len + 1, lcp)
    wprefix = np.empty(n + 1)
    K._weight_prefix(sa, text.cstart, text.cweight, wprefix)
    tick()
    stack = (np.empty(max_len + 3, dtype=np.int64), np.empty(max_len + 3, dtype=np.int64))
    none = (np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.uint8), np.empty(0))
    found = K._intervals(sa, lcp, text.fol, text.rem, wprefix, max_len, *none, *stack)  # count, then fill
    cl, cr, clen, cf = np.empty(found, np.int32), np.empty(found, np.int32), np.empty(found, np.uint8), np.empty(found)
    K._intervals(sa, lcp, text.fol, text.rem, wprefix, max_len, cl, cr, clen, cf, *stack)
    del lcp, wprefix
    cl, cr, clen, cf = _add_boundary_intervals(text, sa, cl, cr, clen, cf, _boundary_intervals(ends, max_len))
    del text.fol, text.rem
    tick()
    order = text.order(sa, cl, clen, cf)[:seed_size]
    cl, cr, clen, cf = cl[order], cr[order], clen[order], cf[order]
    chars, cfreq = text.characters()
    n_chars = len(chars)
    pieces = PieceTexts(chars, text.codes, sa[cl].astype(np.int64), clen.astype(np.int64))
    freqs = np.concatenate([cfreq, cf]).astype(np.float64)
    cpiece = np.arange(n_chars, n_chars + len(cl), dtype=np.int32)
    real = text.real_codes
    by_code = np.argsort(chars)
    char_piece = by_code[np.searchsorted(chars[by_code], real)].astype(np.int32)
    tick()
    off = np.zeros(len(real) + 1, dtype=np.int64)  # the arcs grouped by start position (CompiledLattices' form)
    K._count_arcs(sa, cl, cr, text.realpos, off)
    off[1:] += 1  # the character's own arc
    np.cumsum(off, out=off)
    alen, piece = np.empty(int(off[-1]), dtype=np.uint8), np.empty(int(off[-1]), dtype=np.int32)
    K._fill_arcs(sa, cl, cr, clen, cpiece, text.realpos, char_piece, off, alen, piece)
    return Seed(pieces, freqs, _initial_scores(pieces, freqs, n_chars), n_chars, text.lens, [off, alen, piece])


class PieceTexts(Sequence[str]):
    """The seed's pieces as a sequence of ``str``, made when asked for (a ``str`` each would cost 50 bytes more).

    The characters, then each substring as ``length`` code points at ``start`` in ``codes``.
    """

    def __init__(self, chars: np.ndarray, codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        self._chars = chars
        self._codes = codes
        self._starts = starts
        self.lengths = np.concatenate([np.ones(len(chars), dtype=np.int64), lengths])

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i):  # an index (a slice is a list)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self._chars)
        if i < 0:
            i += len(self)
        if i < n:
            return chr(self._chars[i])
        a = self._starts[i - n]
        return self._codes[a : a + self.lengths[i]].tobytes().decode("utf-32-le")


class _SuffixText:
    """The words joined for the suffix array: per symbol its sort key, first byte, characters left, code point."""

    def __init__(self, words: list[str], counts: np.ndarray, fin: np.ndarray):
        from . import kernels as K

        self.lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self.real_codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32)
        wstart = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(self.lens, out=wstart[1:])
        # copies: (word, weight, end byte, primary); a word ending some sentences and not others is written twice
        inner = counts - fin
        w_a = np.flatnonzero(inner > 0)
        w_b = np.flatnonzero(fin > 0)
        cw = np.concatenate([w_a, w_b])
        order = np.argsort(cw, kind="stable")
        cw = cw[order]
        cweight = np.concatenate([inner[w_a], fin[w_b]])[order]
        cend = np.concatenate([np.full(len(w_a), WORD_END), np.zeros(len(w_b), dtype=np.int64)])[order]
        cprimary = np.concatenate([np.ones(len(w_a), bool), inner[w_b] <= 0])[order]
        self.cstart = np.zeros(len(cw) + 1, dtype=np.int64)  # each copy's first position
        np.cumsum(self.lens[cw] + 1, out=self.cstart[1:])
        self.cweight = cweight.astype(np.float64)
        n = int(self.cstart[-1])
        self.sym = np.empty(n, dtype=np.int64)
        self.fol = np.empty(n, dtype=np.uint8)
        self.rem, self.realpos = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
        self.codes = np.empty(n, dtype=np.uint32)
        K._suffix_text(self.real_codes, wstart, cw, cend, cprimary.astype(np.uint8), self.sym, self.fol, self.rem,
                       self.realpos, self.codes)  # fmt: skip
        self.counts = counts
        self.word_of_copy = cw

    def ranks(self) -> np.ndarray:
        """Each symbol's rank among the distinct symbols, ``1 ..`` (``int32``), in sort-key order."""
        idx = np.argsort(self.sym, kind="stable")
        ordered = self.sym[idx]
        new = np.empty(len(idx), dtype=np.int32)
        new[0] = 1
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        del ordered
        rank = np.empty(len(idx), dtype=np.int32)
        rank[idx] = np.cumsum(new, dtype=np.int32)
        return rank

    def order(self, sa: np.ndarray, cl: np.ndarray, clen: np.ndarray, freq: np.ndarray) -> np.ndarray:
        """:func:`seed_order` of the candidates ``(sa[cl], clen)``, from the suffix array.

        The suffixes are sorted by code point (first byte first is the same
        order), so a candidate's first index ``cl`` in the suffix array orders
        the candidates as their UTF-8 bytes, a prefix (same ``cl``) before its
        extensions: ``(cl, clen)`` is the bytes order.
        """
        u8 = np.zeros(len(self.codes) + 1, dtype=np.int32)  # UTF-8 bytes of the symbols before each position
        np.cumsum((self.codes >= 0x80).astype(np.int8) + (self.codes >= 0x800) + (self.codes >= 0x10000) + 1,
                  out=u8[1:])  # fmt: skip
        start = sa[cl].astype(np.int64)
        blen = u8[start + clen] - u8[start]
        score = freq.astype(np.float32) * clen.astype(np.float32)
        return np.lexsort((clen, cl, -blen, -score.astype(np.float64)))

    def characters(self) -> tuple[np.ndarray, np.ndarray]:
        """The characters in SentencePiece's order (count descending, then code point) and their counts."""
        counts = np.repeat(self.counts, self.lens)
        alphabet, inv = np.unique(self.real_codes, return_inverse=True)
        freq = np.bincount(inv, weights=counts, minlength=len(alphabet))
        order = np.lexsort((alphabet, -freq))
        return alphabet[order], freq[order]


def _add_boundary_intervals(text: _SuffixText, sa, cl, cr, clen, cf, bonus: dict) -> tuple:
    """Add the sizes of the intervals "x + boundary" (module docstring) to the candidates ``x`` (new ones too)."""
    from . import kernels as K

    extra_l, extra_r, extra_len, extra_f = [], [], [], []
    for x, (_w, n) in bonus.items():
        key = np.frombuffer(x.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        packed = K._find_range(text.codes, text.fol, text.rem, sa, key)
        lo, hi = packed >> 32, packed & 0xFFFFFFFF
        hit = np.flatnonzero((cl == lo) & (clen == len(x)))
        if len(hit):
            cf[hit[0]] += n
        else:
            extra_l.append(lo)
            extra_r.append(hi - 1)
            extra_len.append(len(x))
            extra_f.append(n)
    if extra_l:
        cl = np.concatenate([cl, np.array(extra_l, dtype=np.int32)])
        cr = np.concatenate([cr, np.array(extra_r, dtype=np.int32)])
        clen = np.concatenate([clen, np.array(extra_len, dtype=np.uint8)])
        cf = np.concatenate([cf, np.array(extra_f, dtype=np.float64)])
    return cl, cr, clen, cf
