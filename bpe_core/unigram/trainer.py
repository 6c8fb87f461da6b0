r"""Unigram training: frequent-substring seed, EM re-estimation, loss-based pruning (numpy, exact).

The algorithm is the one of the Hugging Face course (chapter 6, "Unigram
tokenization") made efficient the way SentencePiece (``unigram_model_trainer.cc``)
does it:

1. **Words.**  Special tokens are cut out of the text (and never learned);
   the rest is cut into words -- SentencePiece-style by default (Hugging Face's
   ``Metaspace``: a space becomes ``▁``, which begins every word), or by any
   other pattern of :mod:`bpe_core.pretokenize`, whose words are used as they
   are.  Distinct words are counted; everything below works on the table of
   distinct words weighted by their counts.
2. **Seed vocabulary.**  Every character of the words (the *required
   characters*: they are never removed, so every word can be spelt), plus the
   substrings of 2 to ``max_piece_length`` characters that occur at least
   twice and are *right-branching* (not always followed by the same character;
   exactly the substrings a suffix tree has a node for, which is what
   SentencePiece's suffix-array seed enumerates), the ``seed_size`` best by
   ``frequency * length`` (SentencePiece's seed score).  Occurrences are
   counted exactly, level by level (a substring of ``k`` characters is counted
   only where its first ``k - 1`` characters occur twice or more).  A piece's
   initial score is ``log(frequency / total)``.
3. **EM.**  ``em_iterations`` times: the expected count of every piece over
   all segmentations of each word (forward-backward over the word's lattice,
   weighted by the word's count), then the new score
   ``digamma(count) - digamma(sum of counts)`` (SentencePiece's and Hugging
   Face's Bayesian M-step).
4. **Pruning rounds**, until only the required characters are left.  Each
   round segments every word by Viterbi and estimates, for every piece, the
   corpus loss increase its removal would cause: each of its Viterbi
   occurrences is replaced by the piece's best segmentation *without* it
   (its second-best path), whose pieces take over its count --
   ``freq * (log p - sum(log p_alt'))`` with ``p_alt' = (freq_alt + freq) /
   (total + freq * (len(alt) - 1))``, SentencePiece's estimate (which it
   multiplies by ``1 / number of words``; here it stays in nats of corpus
   loss).  A piece no Viterbi path uses costs 0.  The round removes the
   ``percent_to_remove`` share of the vocabulary with the lowest increase
   (at least one piece, and every unused piece), never a required character;
   then EM re-estimates the scores of what is left.  The schedule does not
   depend on ``vocab_size``: the rounds run down to the required characters
   whatever size was asked for, and the tokenizer returned is the view at
   ``vocab_size`` (the smallest state of at least that size, cut short by the
   removal order of the next round) on its own
   (:meth:`~bpe_core.unigram.UnigramTokenizer.truncated`: ``max_vocab_size``
   is the size asked for, the states above it are dropped), so training to
   any size equals the view of a longer training at that size.  The
   *loss* reported per state is the course's: the words' Viterbi negative
   log-likelihood, weighted by counts, in nats.

From the same vocabulary and word counts, the EM step, the loss and the pruning costs must equal
:mod:`bpe_core.textbook.unigram_training`'s ``em_step``, ``loss`` and ``removal_costs``
(tests/engine/test_textbook_unigram.py).

Differences from SentencePiece, and why:

* no normalisation (NFKC, whitespace folding): the playground shows text as
  typed; pre-tokenization is Hugging Face's ``Metaspace`` so that the export to
  ``tokenizer.json`` encodes identically (SentencePiece works on lines; here a
  newline is an ordinary character inside a word);
* all characters are kept (``character_coverage = 1``; with ``byte_fallback``
  SentencePiece would drop the rarest characters to bytes, here the bytes
  only serve characters the training text did not have);
* pieces are not split by Unicode script or digits (SentencePiece's
  ``split_by_unicode_script`` and ``split_by_number``, on by default, forbid
  pieces such as ``s,``, ``▁end.`` or ``1990s``): fewer rules to explain,
  mixed pieces are visible in the trace, and Hugging Face's
  ``UnigramTrainer`` with ``Metaspace`` has no such rule either.  This is the
  largest difference in the results: on the 1 MB corpus at 8,000 pieces
  SentencePiece's defaults give 4.4 % more held-out tokens than ours,
  SentencePiece with the two rules off 1.6 % more, Hugging Face 1.4 % fewer
  (``benchmarks/bench_unigram.py`` compares with the rules off and prints
  the defaults too);
* the loss estimate's ``log(sum + freq * (n_alt - 1))`` counts the pieces of
  this piece's own alternative (older SentencePiece releases wrote
  ``alternatives.size()``, the size of the whole list, and later corrected it
  to ``alternatives[i].size()``, the form used here);
* the seed's initial scores are ``log(frequency / total)`` (SentencePiece:
  ``log(frequency * length / total)``); EM re-estimates them at once, and
  the seed pieces, their order and the arcs are the same;
* pieces never contain ``▁`` other than first (SentencePiece with
  ``split_by_whitespace``; here the words are cut before every ``▁``), and
  ``▁`` marks the start of a word (``treat_whitespace_as_suffix = False``),
  as SentencePiece's defaults;
* the seed counts distinct words with their counts (SentencePiece runs its
  suffix array over the sentences): the same frequencies, computed on the
  smaller table;
* pieces with expected count below 0.5 are not dropped in the M-step: every
  removal happens in a pruning round with a recorded loss increase (such
  pieces get very low scores, no Viterbi path uses them, and the next round
  removes them at cost 0);
* the share removed per round is 10 % (the course's ``percent_to_remove``;
  SentencePiece's ``shrinking_factor`` 0.75 removes 25 %) and pruning goes
  straight to ``vocab_size`` by loss (SentencePiece stops at 1.1 x the size
  and keeps the best scores): smaller steps make more training states for the
  slider, and every state is chosen by the same rule;
* training continues below ``vocab_size`` down to the required characters,
  so every smaller vocabulary is a real training state too.

Differences from the Hugging Face course, and why: the course's initial
vocabulary is the most frequent substrings (no right-branching filter) and it
does no EM (scores stay the initial frequencies, renormalised); it computes
each piece's loss increase by re-encoding the corpus without it (quadratic);
here the seed, the EM and the estimate are SentencePiece's, which the course
names as the efficient version.  The course's numbers are reproduced by the
tests with an exhaustive oracle.

Defaults shared with SentencePiece (and Hugging Face's ``UnigramTrainer``):
``max_piece_length`` 16, ``seed_size`` 1,000,000 (``seed_sentencepiece_size``),
``em_iterations`` 2 (``num_sub_iterations``), EM's digamma M-step, the
right-branching frequent-substring seed scored ``frequency * length``, the
loss estimate by each piece's second-best segmentation.

Performance: all lattices of a state are processed at once with numpy, one
layer (a character offset within the words) at a time; Viterbi ties go to the
arc that starts earliest, as in the encoder.  Memory: the lattice keeps about
25 bytes per arc (``int32`` start node, piece and word, a ``uint8`` length, the
backward permutation and the layer groups), the passes' temporaries are per
layer or per chunk of 2**18 arcs, the alternatives of the loss estimate are
found 4,096 pieces at a time, and words are counted a 1 M-character chunk at
a time.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import regex

from ..interface import TrainingCancelled
from ..pretokenize import (
    PATTERNS,
    check_word_count,
    compile_pattern,
    iter_pretoken_strings,
    resolve_pattern,
    split_special,
    validate_special_tokens,
)
from .encoder import SENTENCEPIECE, SENTENCEPIECE_RX, metaspace_word
from .model import BYTE_PIECES, DEFAULT_UNK_TOKEN, UnigramTokenizer, UnigramTrainingInfo
from .trace import PruneRound

__all__ = ["DEFAULT_SEED_SIZE", "TrainingCancelled", "count_unigram_words", "digamma", "train_unigram"]

DEFAULT_SEED_SIZE = 1_000_000
"""Pieces of the seed vocabulary at most (SentencePiece's and Hugging Face's ``seed_sentencepiece_size``)."""

ProgressCallback = Callable[[str, int, int], None]

_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_SPAN_CHUNK = 4096  # used pieces whose alternatives are found together (bounds the sub-lattices' memory)
_TINY = 1e-10  # the smallest expected count the M-step uses (digamma(0) is -inf)


# ---------------------------------------------------------------------------
# input


def _read_text(text) -> str:
    if isinstance(text, CountedWords):
        return ""  # counted already (train_unigram_from_counts): no text to read
    if isinstance(text, bytes | bytearray | memoryview):
        raise TypeError("text must be a str (the text), an os.PathLike (a file) or an iterable of str, got bytes")
    if isinstance(text, str):
        return text
    if isinstance(text, os.PathLike):
        with open(text, encoding="utf-8-sig") as f:
            try:
                return f.read()
            except UnicodeDecodeError as exc:
                raise ValueError(f"{os.fspath(text)}: not UTF-8 text ({exc})") from None
    if isinstance(text, Iterable):
        parts = []
        for i, part in enumerate(text):
            if not isinstance(part, str):
                raise TypeError(f"item #{i + 1} of the text is a {type(part).__name__}, not a str")
            parts.append(part)
        return "".join(parts)
    raise TypeError(
        f"text must be a str (the text), an os.PathLike (a file) or an iterable of str, got {type(text).__name__}"
    )


class CountedWords(NamedTuple):
    """Words counted already, given to :func:`train_unigram` in place of a text (:func:`train_unigram_from_counts`).

    Attributes:
        counts: ``{word: occurrences}`` in order of first appearance (as :func:`count_unigram_words` gives).
        special_occurrences: special-token occurrences cut out when counting.
    """

    counts: dict[str, int]
    special_occurrences: int


def train_unigram_from_counts(
    word_counts: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = SENTENCEPIECE,
    *,
    special_occurrences: int = 0,
    **options,
) -> UnigramTokenizer:
    """Train a Unigram tokenizer on word counts instead of a text (a count table's, say).

    The result equals :func:`train_unigram` on any text whose
    :func:`count_unigram_words` (with ``pattern`` and ``special_tokens`` plus the
    unknown token) are ``word_counts`` in the same order of first appearance
    (the order sets the seed's and the lattices' order).

    Args:
        word_counts: ``{word: occurrences}`` (non-empty ``str`` words, counts >= 1),
            iterated in order of first appearance.
        vocab_size: as :func:`train_unigram`.
        special_tokens: as :func:`train_unigram` (those the words were counted with).
        pattern: the pattern the words were counted with (``"sentencepiece"``:
            ``▁``-marked words); the tokenizer encodes with it.
        special_occurrences: special-token occurrences cut out when counting.
        options: the keyword options of :func:`train_unigram` (``progress``,
            ``name``, ``unk_token``, ...).

    Returns:
        The trained :class:`UnigramTokenizer`.

    Raises:
        TypeError: a word is not a ``str`` or a count not an ``int``.
        ValueError: an empty word, an unpaired surrogate, a count below 1; the
            errors of :func:`train_unigram`.

    >>> text = "hug pug pun bun hugs " * 20
    >>> words, n = count_unigram_words(text, special_tokens=["<unk>"])
    >>> train_unigram_from_counts(words, 20).vocab == train_unigram(text, 20).vocab
    True
    """
    counts: dict[str, int] = {}
    for w, c in word_counts.items():
        check_word_count(w, c)
        if c < 1 or not w:
            raise ValueError(f"word {w!r:.40} has count {c}: words must be non-empty and counted at least once")
        if _SURROGATE.search(w):
            raise ValueError(f"word {w!r:.40} holds an unpaired surrogate, which is not a character")
        counts[w] = c
    if not isinstance(special_occurrences, int) or special_occurrences < 0:
        raise ValueError(f"special_occurrences must be an int >= 0, got {special_occurrences!r}")
    return train_unigram(CountedWords(counts, special_occurrences), vocab_size, special_tokens, pattern, **options)


def count_unigram_words(
    text: str, pattern: str = SENTENCEPIECE, special_tokens: Sequence[str] = ()
) -> tuple[dict[str, int], int]:
    """Count the lattice words of a text: special tokens cut out, then the pattern's words.

    Args:
        text: the training text.
        pattern: ``"sentencepiece"`` (words ``"▁"``-prefixed, as the encoder
            sees them) or a pattern name / regex of :mod:`bpe_core.pretokenize`.
        special_tokens: special-token strings (removed, counted apart).

    Returns:
        ``({word: count}, special-token occurrences)``.

    Raises:
        TypeError, ValueError: bad pattern or special tokens.
    """
    specials = validate_special_tokens(special_tokens)
    counts: Counter = Counter()
    n_special = 0
    metaspace = pattern == SENTENCEPIECE
    rx = SENTENCEPIECE_RX if metaspace else compile_pattern(resolve_pattern(pattern))
    for segment, is_special in split_special(text, specials):
        if is_special:
            n_special += 1
        elif metaspace:
            for part in _chunks(segment):  # a bounded list of words at a time (a 20 MB text has 3.5 M)
                counts.update(rx.findall(part))
        else:
            counts.update(iter_pretoken_strings(segment, rx))
    if metaspace:
        merged: Counter = Counter()
        for w, c in counts.items():
            merged[metaspace_word(w)] += c
        counts = merged
    return dict(counts), n_special


_CHUNK_CHARS = 1 << 20


def _chunks(segment: str):
    """``segment`` in pieces of about :data:`_CHUNK_CHARS` characters, each cut just before a space or ``▁``.

    A SentencePiece-style word starts at a space or ``▁`` (or at the segment's
    start), so cutting there gives the same words as the whole segment.
    """
    n = len(segment)
    a = 0
    while a < n:
        b = a + _CHUNK_CHARS
        if b >= n:
            yield segment[a:]
            return
        cut = min((i for i in (segment.find(" ", b), segment.find("\u2581", b)) if i >= 0), default=n)
        yield segment[a:cut]
        a = cut


# ---------------------------------------------------------------------------
# digamma


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function of positive values (float64, absolute error about 1e-13).

    Recurrence ``psi(x) = psi(x + 1) - 1/x`` up to ``x >= 10``, then the
    asymptotic series ``ln x - 1/(2x) - sum B_2k / (2k x^2k)`` to ``x^-10``.

    >>> abs(float(digamma(np.array([1.0]))[0]) + 0.5772156649015329) < 1e-13  # psi(1) = -Euler-Mascheroni
    True
    """
    x = np.array(x, dtype=np.float64)
    acc = np.zeros_like(x)
    small = x < 10.0
    while small.any():
        acc[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return acc + np.log(x) - 0.5 / x - series


# ---------------------------------------------------------------------------
# lattices of many words at once


class _Lattices:
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
        """``lens``: each string's length; ``arcs``: ``[string, start offset, length, piece]`` per arc.

        ``arcs`` is emptied as its arrays are consumed, so that they are freed
        (when the caller holds no other reference) before the next is built.
        """
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

    def keep(self, mask: np.ndarray) -> None:
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


# ---------------------------------------------------------------------------
# the seed


def _keep_candidates(level_pos: list, level_gram: list, level_freq: list, level_rmax: list) -> None:
    """Keep, of the last level's positions (not characters'), those of seed candidates (twice or more, branching)."""
    j = len(level_pos) - 1
    if j > 0:
        keep = ((level_freq[j] >= 2) & level_rmax[j])[level_gram[j]]
        level_pos[j] = level_pos[j][keep]
        level_gram[j] = level_gram[j][keep]


def _seed(words: list[str], counts: np.ndarray, max_len: int, seed_size: int):
    """Required characters and frequent right-branching substrings; their arcs in every word.

    Returns ``(pieces, freqs, n_chars, lens, [arc_w, arc_s, arc_len, arc_p])``: the arcs as
    ``int32`` arrays (``arc_len`` ``uint8`` when ``max_len < 256``).
    """
    flat = "".join(words)
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    codes = np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32)
    wstart = np.zeros(len(words), dtype=np.int64)
    np.cumsum(lens[:-1], out=wstart[1:])
    wid = np.repeat(np.arange(len(words), dtype=np.int32), lens)
    rem = (wstart[wid] + lens[wid] - np.arange(len(codes), dtype=np.int64)).astype(np.int32)
    wpos = counts[wid]
    alphabet, cid = np.unique(codes, return_inverse=True)
    cid = cid.astype(np.int32)
    A = len(alphabet)
    n_chars = A
    level_pos = [np.arange(len(codes), dtype=np.int32)]
    level_gram = [cid]
    level_freq = [np.bincount(cid, weights=wpos, minlength=A)]
    level_first = [None]
    level_rmax: list[np.ndarray | None] = [None]
    for k in range(2, max_len + 2):
        P, G, F = level_pos[-1], level_gram[-1], level_freq[-1]
        mask = (rem[P] >= k) & (F[G] >= 2)
        Pk = P[mask]
        if len(Pk) == 0:
            level_rmax[-1] = np.ones(len(F), dtype=bool)
            _keep_candidates(level_pos, level_gram, level_freq, level_rmax)
            break
        key = G[mask].astype(np.int64) * A + cid[Pk + (k - 1)]
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        Fk = np.bincount(inv, weights=wpos[Pk], minlength=len(uniq))
        parent = uniq // A
        starts = np.flatnonzero(np.concatenate(([True], parent[1:] != parent[:-1])))
        maxext = np.zeros(len(F))
        maxext[parent[starts]] = np.maximum.reduceat(Fk, starts)
        level_rmax[-1] = maxext < F  # right-branching: not always followed by one character
        _keep_candidates(level_pos, level_gram, level_freq, level_rmax)
        if k == max_len + 1:
            break
        level_pos.append(Pk)
        level_gram.append(inv.astype(np.int32))
        level_freq.append(Fk)
        level_first.append(Pk[first])
        level_rmax.append(None)
    if level_rmax[-1] is None:
        level_rmax[-1] = np.ones(len(level_freq[-1]), dtype=bool)
    # candidates: levels 2.., frequency >= 2, right-branching; best frequency * length first
    cand_level, cand_gram, cand_score = [], [], []
    for j in range(1, len(level_freq)):
        F = level_freq[j]
        ok = np.flatnonzero((F >= 2) & level_rmax[j])
        cand_level.append(np.full(len(ok), j, dtype=np.int64))
        cand_gram.append(ok)
        cand_score.append(F[ok] * (j + 1))
    if cand_level:
        cl, cg, cs = np.concatenate(cand_level), np.concatenate(cand_gram), np.concatenate(cand_score)
    else:
        cl = cg = np.zeros(0, dtype=np.int64)
        cs = np.zeros(0)
    order = np.argsort(-cs, kind="stable")[: max(0, seed_size - n_chars)]
    cl, cg = cl[order], cg[order]
    pieces = [chr(c) for c in alphabet.tolist()]
    freqs = [level_freq[0]]
    seed_of = [np.arange(A, dtype=np.int32)]
    for j in range(1, len(level_freq)):
        seed_of.append(np.full(len(level_freq[j]), -1, dtype=np.int32))
    for idx, (j, g) in enumerate(zip(cl.tolist(), cg.tolist())):
        seed_of[j][g] = A + idx
        p = int(level_first[j][g])
        pieces.append(flat[p : p + j + 1])
    freqs.append(np.array([level_freq[j][g] for j, g in zip(cl.tolist(), cg.tolist())], dtype=np.float64))
    # arcs: every occurrence of a seed piece
    aw, as_, al, ap = [], [], [], []
    for j in range(len(level_freq)):
        P = level_pos[j]
        sp = seed_of[j][level_gram[j]]
        hit = sp >= 0
        Ph = P[hit]
        aw.append(wid[Ph])
        as_.append((Ph - wstart[wid[Ph]]).astype(np.int32))
        al.append(np.full(len(Ph), j + 1, dtype=np.uint8 if max_len < 256 else np.int32))
        ap.append(sp[hit])
        level_pos[j] = level_gram[j] = None  # free each level once its arcs are out
    arcs = []
    for parts in (aw, as_, al, ap):  # one array at a time, its parts freed as it is made
        arcs.append(np.concatenate(parts))
        parts.clear()
    return pieces, np.concatenate(freqs), n_chars, lens, arcs


# ---------------------------------------------------------------------------
# training


def _check(vocab_size, unk_token, percent_to_remove, max_piece_length, em_iterations, seed_size) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if not isinstance(unk_token, str):
        raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
    if unk_token == "":
        raise ValueError("unk_token is empty; the unknown token needs at least one character (e.g. '<unk>')")
    if isinstance(percent_to_remove, bool) or not isinstance(percent_to_remove, int | float):
        raise TypeError(f"percent_to_remove must be a number, got {type(percent_to_remove).__name__}")
    if not 0.0 < percent_to_remove < 1.0:
        raise ValueError(f"percent_to_remove must be between 0 and 1 (a share, e.g. 0.1), got {percent_to_remove}")
    for label, value, lo in (("max_piece_length", max_piece_length, 1), ("em_iterations", em_iterations, 0),
                             ("seed_size", seed_size, 1)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{label} must be an int, got {type(value).__name__}")
        if value < lo:
            raise ValueError(f"{label} must be at least {lo}, got {value}")


def train_unigram(
    text: str | os.PathLike | Iterable[str],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = SENTENCEPIECE,
    *,
    progress: ProgressCallback | None = None,
    name: str | None = None,
    unk_token: str = DEFAULT_UNK_TOKEN,
    percent_to_remove: float = 0.1,
    max_piece_length: int = 16,
    em_iterations: int = 2,
    seed_size: int = DEFAULT_SEED_SIZE,
    byte_fallback: bool = False,
) -> UnigramTokenizer:
    """Train a Unigram tokenizer (see the module docstring for the exact rules).

    Args:
        text: a ``str`` (the text), an ``os.PathLike`` (a UTF-8 file, read
            whole; a leading byte-order mark is dropped) or an iterable of
            ``str`` (the text ``"".join(text)``).
        vocab_size: the vocabulary size to reach, in tokens: special tokens,
            ``<unk>``, the required characters and the learned pieces.
        special_tokens: cut out of the text, never learned; ids 0, 1, ... in order.
        pattern: ``"sentencepiece"`` (default: ``▁``-marked words, as Hugging
            Face's ``Metaspace``) or a pattern of :mod:`bpe_core.pretokenize`
            (``"gpt2"``, ``"bert"``, ... or a regex), whose words are used as they are.
        progress: ``progress(phase, done, total)``: ``("count", 0|1, 1)``,
            ``("seed", 0|1, 1)``, then ``("prune", pieces removed, pieces to
            remove down to the required characters)`` during EM and pruning;
            raising :class:`TrainingCancelled` in it stops training (it propagates).
        name: display name (default ``"Unigram"`` or ``"Unigram (<pattern>)"``).
        unk_token: the unknown token; appended after ``special_tokens`` unless among them.
        percent_to_remove: the share of the vocabulary each round removes (0 < p < 1).
        max_piece_length: the longest piece, in characters.
        em_iterations: EM iterations after the seed and after each round.
        seed_size: the seed vocabulary's size at most (characters included).
        byte_fallback: add the 256 byte pieces ``<0x00>`` .. ``<0xFF>`` (score
            0, after the special tokens, counted in ``vocab_size``, never
            removed) and encode characters outside the vocabulary as the pieces
            of their UTF-8 bytes instead of ``<unk>`` (SentencePiece's
            ``byte_fallback=True``, Hugging Face ``Unigram``'s ``byte_fallback``).

    Returns:
        The :class:`UnigramTokenizer` at ``vocab_size`` (or at the seed size,
        with ``training.stop_reason`` set, when the text offers fewer pieces),
        which is also its ``max_vocab_size``; every smaller training state is a
        :meth:`~UnigramTokenizer.with_vocab_size` view.

    Raises:
        TypeError: ``text`` is bytes or not a str / path / iterable of str; an
            argument has the wrong type.
        ValueError: the text has no words; ``vocab_size`` is below special tokens
            + ``<unk>`` + the text's characters (the message gives the minimum);
            an unpaired surrogate; bad special tokens, pattern or settings; a
            file that is not UTF-8.
        OSError: a file cannot be read.
        TrainingCancelled: raised by ``progress``.

    >>> tok = train_unigram("hug pug pun bun hugs " * 20, 20)
    >>> tok.vocab_size, [tok.describe_token(i) for i in tok.encode("hugs")]
    (20, ['▁hugs'])
    """
    specials = list(validate_special_tokens(special_tokens))
    _check(vocab_size, unk_token, percent_to_remove, max_piece_length, em_iterations, seed_size)
    if not isinstance(byte_fallback, bool):
        raise TypeError(f"byte_fallback must be a bool, got {type(byte_fallback).__name__}")
    if pattern != SENTENCEPIECE:
        resolve_pattern(pattern)
    raw = _read_text(text)
    m = _SURROGATE.search(raw)
    if m is not None:
        raise ValueError(
            f"text contains an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}, which is not a "
            "character and has no UTF-8 form; remove it or replace it with U+FFFD"
        )
    if unk_token not in specials:
        specials.append(unk_token)
    n_spec = len(specials) + (len(BYTE_PIECES) if byte_fallback else 0)  # the ids before the characters

    t0 = time.perf_counter()
    if progress:
        progress("count", 0, 1)
    word_counts, n_special_occ = text if isinstance(text, CountedWords) else count_unigram_words(raw, pattern, specials)
    del raw
    if progress:
        progress("count", 1, 1)
    if not word_counts:
        raise ValueError("the text has no words to train on (it is empty or holds only special tokens)")
    count_seconds = time.perf_counter() - t0

    words = list(word_counts)
    counts = np.fromiter(word_counts.values(), dtype=np.float64, count=len(words))
    n_chars_text = len(set().union(*map(set, words)))
    base = n_spec + n_chars_text
    if vocab_size < base:
        raise ValueError(
            f"vocab_size {vocab_size} is below the minimum for this text: Unigram needs at least {base} "
            f"({len(specials)} special tokens with {unk_token!r} + {'256 byte pieces + ' * byte_fallback}"
            f"{n_chars_text} characters of the text, which are kept so that every word can be spelt)"
        )

    t1 = time.perf_counter()
    if progress:
        progress("seed", 0, 1)
    pieces, freqs, n_chars, lens, arcs = _seed(words, counts, max_piece_length, seed_size)
    collide = (set(specials) | (set(BYTE_PIECES) if byte_fallback else set())) & set(pieces)
    if collide:
        raise ValueError(
            f"special token or byte piece {sorted(collide)[0]!r} is also a piece of the text's words; choose "
            "special tokens that cannot occur inside a word"
        )
    lat = _Lattices(lens, arcs)  # empties arcs
    if progress:
        progress("seed", 1, 1)
    seed_seconds = time.perf_counter() - t1

    n_pieces = len(pieces)
    is_char = np.zeros(n_pieces, dtype=bool)
    is_char[:n_chars] = True
    piece_len = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=n_pieces)
    alive = np.ones(n_pieces, dtype=bool)
    removed_round = np.full(n_pieces, np.iinfo(np.int64).max, dtype=np.int64)
    removal_seq: list[np.ndarray] = []  # per round, the removed pieces in removal order
    scores = np.log(freqs) - math.log(freqs.sum())
    info = UnigramTrainingInfo(
        requested_vocab_size=vocab_size, pretokens=int(counts.sum()), unique_pretokens=len(words),
        special_occurrences=n_special_occ, characters=n_chars, seed_size=n_pieces, count_seconds=count_seconds,
        seed_seconds=seed_seconds,
    )  # fmt: skip
    total_to_remove = n_pieces - n_chars

    def report() -> None:
        if progress:
            progress("prune", int(n_pieces - alive.sum()), total_to_remove)

    em_seconds = 0.0
    prune_seconds = 0.0

    def em(scores: np.ndarray) -> np.ndarray:
        nonlocal em_seconds
        t = time.perf_counter()
        for _ in range(em_iterations):
            report()
            expected, _obj = lat.forward_backward(scores, counts)
            expected = np.maximum(expected, _TINY)
            new = np.full(n_pieces, -np.inf)
            idx = np.flatnonzero(alive)
            new[idx] = digamma(expected[idx]) - digamma(np.array([expected[idx].sum()]))[0]
            scores = new
        em_seconds += time.perf_counter() - t
        return scores

    scores = em(scores)
    state_scores = [scores[alive].copy()]  # per state, the scores of the alive pieces (by training index)
    best, barc = lat.viterbi(scores)
    loss = float(-(counts * best).sum())
    pw, pa = lat.paths(barc)
    info.initial_tokens = n_special_occ + int(counts[pw].sum())
    rounds: list[PruneRound] = []
    sizes = [n_spec + n_pieces]
    while True:
        size = n_spec + int(alive.sum())
        n_multi = size - n_spec - n_chars
        if n_multi == 0:
            break
        report()
        t = time.perf_counter()
        # Viterbi frequencies of the pieces
        freq = np.bincount(lat.P[pa], weights=counts[pw], minlength=n_pieces)
        inc = _loss_increase(lat, pieces, piece_len, alive, is_char, scores, freq, pa)
        cand = np.flatnonzero(alive & ~is_char)
        order = cand[np.lexsort((cand, scores[cand], inc[cand]))]  # lowest increase, then lowest score first
        n_remove = max(1, int(size * percent_to_remove), int((freq[cand] == 0).sum()))
        n_remove = min(n_remove, n_multi)  # the schedule does not depend on vocab_size: training to any size is a view
        gone = order[:n_remove]
        alive[gone] = False
        removed_round[gone] = len(rounds)
        removal_seq.append(gone)
        lat.keep(alive[lat.P])
        prune_seconds += time.perf_counter() - t
        new_scores = scores.copy()
        new_scores[gone] = -np.inf
        scores = em(new_scores)
        t = time.perf_counter()
        best, barc = lat.viterbi(scores)
        new_loss = float(-(counts * best).sum())
        pw, pa = lat.paths(barc)
        prune_seconds += time.perf_counter() - t
        tokens = n_special_occ + int(counts[pw].sum())
        rounds.append(
            PruneRound(len(rounds) + 1, size, size - n_remove, loss, new_loss, tuple(inc[gone].tolist()), tokens)
        )
        sizes.append(size - n_remove)
        state_scores.append(scores[alive].copy())
        loss = new_loss
    report()
    info.rounds = len(rounds)
    info.em_seconds = em_seconds
    info.prune_seconds = prune_seconds

    # ids: specials, characters by final score (highest first), then the pieces, last removed first
    final = scores[:n_chars]
    char_order = np.lexsort((np.arange(n_chars), -final))
    order_ids = np.concatenate([char_order] + [g[::-1] for g in reversed(removal_seq)]).astype(np.int64)
    id_of = np.empty(n_pieces, dtype=np.int64)
    id_of[order_ids] = np.arange(n_pieces) + n_spec
    texts = specials + (list(BYTE_PIECES) if byte_fallback else []) + [pieces[i] for i in order_ids.tolist()]
    alive_now = np.ones(n_pieces, dtype=bool)
    id_scores = []
    for k, sc in enumerate(state_scores):
        if k > 0:
            alive_now[removal_seq[k - 1]] = False
        arr = np.zeros(sizes[k])
        arr[id_of[np.flatnonzero(alive_now)]] = sc
        id_scores.append(arr)
    n = min(vocab_size, sizes[0])
    if n < vocab_size:
        info.stop_reason = (
            f"training stopped at {n} tokens instead of {vocab_size}: the seed vocabulary of this text has only "
            f"{n_pieces} pieces ({n_chars} characters and the substrings that occur at least twice); a longer or "
            "more varied text gives more"
        )
    pname = pattern if pattern == SENTENCEPIECE or pattern in PATTERNS else resolve_pattern(pattern)
    if name is None:
        name = "Unigram" if pattern == SENTENCEPIECE else f"Unigram ({pattern if pattern in PATTERNS else 'custom'})"
    full = UnigramTokenizer.from_states(
        texts, specials, unk_token, base=base, sizes=sizes, scores=id_scores, rounds=rounds, n=n, name=name,
        pattern_name=pname, training=info, train_words=(word_counts, n_special_occ),
        initial_tokens=info.initial_tokens, byte_fallback=byte_fallback,
    )  # fmt: skip
    return full.truncated()  # max_vocab_size is the trained size; the states above are not offered


def _loss_increase(
    lat: _Lattices,
    pieces: list[str],
    piece_len: np.ndarray,
    alive: np.ndarray,
    is_char: np.ndarray,
    scores: np.ndarray,
    freq: np.ndarray,
    path_arcs: np.ndarray,
) -> np.ndarray:
    """Each alive piece's estimated loss increase (nats) if removed: its Viterbi uses re-segmented without it.

    Pieces no Viterbi path uses get 0.  For the used multi-character pieces
    the alternative is the best segmentation of the piece's own text without
    the piece, found in the lattice of a word that contains it (the arcs
    inside the piece's span, the whole-span arc left out).
    """
    n_pieces = len(pieces)
    inc = np.zeros(n_pieces)
    used = np.flatnonzero((freq > 0) & alive & ~is_char)
    if len(used) == 0:
        return inc
    # one occurrence of each used piece: an arc of the Viterbi paths
    pa_p = lat.P[path_arcs]
    first = np.full(n_pieces, -1, dtype=np.int64)
    first[pa_p[::-1]] = path_arcs[::-1]
    order = np.argsort(lat.S, kind="stable").astype(np.int32)  # arcs by start node
    sS = lat.S[order]
    f_all = freq[used]
    total = freq.sum()
    # the pieces a chunk at a time: the arcs inside their spans (up to max_piece_length ** 2 each) stay small
    for c in range(0, len(used), _SPAN_CHUNK):
        chunk = used[c : c + _SPAN_CHUNK]
        u0 = lat.S[first[chunk]]
        k = piece_len[chunk]
        # arcs starting inside each span, from the arcs sorted by start node
        lo = np.searchsorted(sS, u0, side="left")
        hi = np.searchsorted(sS, u0 + k, side="left")
        cnt = hi - lo
        rep = np.repeat(np.arange(len(chunk)), cnt)
        idx = order[np.repeat(lo, cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))]
        s_off = lat.S[idx] - u0[rep]
        a_len = lat.L[idx]
        inside = (s_off + a_len <= k[rep]) & ~((s_off == 0) & (a_len == k[rep]))
        rep, s_off, a_len, idx = rep[inside], s_off[inside], a_len[inside], idx[inside]
        sub = _Lattices(k, [rep, s_off, a_len, lat.P[idx]])
        _best, barc = sub.viterbi(scores)
        aw, aa = sub.paths(barc)
        alt_p = sub.P[aa]
        f = f_all[c : c + _SPAN_CHUNK]
        n_alt = np.bincount(aw, minlength=len(chunk)).astype(np.float64)
        logsum_alt = np.log(total + f * (n_alt - 1))
        logprob_alt = np.bincount(aw, weights=np.log(freq[alt_p] + f[aw]), minlength=len(chunk)) - n_alt * logsum_alt
        logprob_sp = np.log(f) - math.log(total)
        inc[chunk] = f * (logprob_sp - logprob_alt)
    return inc
