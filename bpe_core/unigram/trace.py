"""The Unigram training trace, step-by-step encoding (the lattice of a word) and the replay of training.

* :class:`PruneRound` -- one pruning round of training: the loss before and
  after, the pieces removed and the loss increase each would cause.
* :class:`WordLattice` -- how one word is encoded: every candidate piece as an
  arc with its score, the best path, and the runner-up segmentations (the
  exact k best, :func:`k_best`).
* :class:`UnigramReplay` -- training replayed on a text: per training state the
  loss, the pieces removed, the pieces kept and the text's segmentation.

Nothing here imports :mod:`bpe_core.unigram.model`; the tokenizer calls in.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..interface import TrainedTokenizer
from ..spans import TokenSpan
from .encoder import PieceTable, viterbi

__all__ = ["LatticeArc", "PruneRound", "ReplayState", "Segmentation", "UnigramReplay", "WordLattice", "k_best"]


@dataclass(frozen=True)
class PruneRound:
    """One pruning round of Unigram training.

    Ids are those of the trained tokenizer: the state after the round holds
    ids ``0 .. size_after - 1`` and the round removed ids ``size_after ..
    size_before - 1`` -- the higher the id, the earlier it was removed.

    Attributes:
        round: 1-based round number.
        size_before: vocabulary size (tokens, special tokens included) before the round.
        size_after: vocabulary size after it.
        loss_before: the training words' Viterbi loss (negative log-likelihood of
            their best segmentations, weighted by word counts, in nats) under the
            state before the round; for a round cut short by a view (its
            ``size_before`` is the view's size, not a training state's) the loss
            at that size, or ``None`` when the training words are not known (a
            view of a loaded file).
        loss_after: the same under the state after the round (pruned, then
            re-estimated by EM).
        loss_increase: for each removed id, in removal order (``size_before - 1``
            first, down to ``size_after``), the loss increase its removal was
            estimated to cause (nats; see :mod:`bpe_core.unigram.trainer`); ascending.
        tokens_after: tokens of the training text under the state after the
            round (special-token occurrences count one each), or ``None`` when unknown.
    """

    round: int
    size_before: int
    size_after: int
    loss_before: float | None
    loss_after: float
    loss_increase: tuple[float, ...]
    tokens_after: int | None = None

    @property
    def removed(self) -> tuple[int, ...]:
        """The removed ids, in removal order (lowest loss increase first)."""
        return tuple(range(self.size_before - 1, self.size_after - 1, -1))

    @property
    def n_removed(self) -> int:
        """How many pieces the round removed."""
        return self.size_before - self.size_after


@dataclass(frozen=True)
class LatticeArc:
    """One arc of a word's lattice: a piece (or the unknown token) spanning ``word[start:end]``.

    Attributes:
        start, end: character offsets in the word's lattice string.
        id: the piece's id (the unknown id for an unknown character).
        piece: the piece's text (the character itself for an unknown arc).
        score: the arc's score (log-probability; ``min_score - 10`` when unknown).
        is_unknown: an unknown-character arc.
    """

    start: int
    end: int
    id: int
    piece: str
    score: float
    is_unknown: bool = False


@dataclass(frozen=True)
class Segmentation:
    """One segmentation of a word: its arcs and total score (the sum of the arcs' scores, left to right)."""

    arcs: tuple[LatticeArc, ...]
    score: float

    @property
    def pieces(self) -> tuple[str, ...]:
        """The pieces' texts, in order."""
        return tuple(a.piece for a in self.arcs)


@dataclass(frozen=True)
class WordLattice:
    """How one word (or special token) of a text is encoded.

    Attributes:
        text: the word as it appears in the text (a special token: itself).
        word: the lattice string (``"▁"``-prefixed for SentencePiece-style words).
        start, end: the word's character offsets in the encoded text.
        is_special: a special token, emitted whole (no lattice).
        arcs: every arc of the lattice, by start then end.
        best: the best segmentation (Viterbi, Hugging Face's ties); its arcs are
            before fusing unknown characters.
        runners_up: the next best segmentations, best first (the exact k best
            after ``best``; ties as :func:`k_best` orders them).
        ids: the word's final token ids (unknown runs fused, as :meth:`encode`).
    """

    text: str
    word: str
    start: int
    end: int
    is_special: bool
    arcs: tuple[LatticeArc, ...]
    best: Segmentation | None
    runners_up: tuple[Segmentation, ...]
    ids: tuple[int, ...]


def _arc_objects(word: str, table: PieceTable, pieces: list[str]) -> list[LatticeArc]:
    out = []
    for s, e, i in table.arcs(word):
        unknown = i == table.unk_id
        out.append(
            LatticeArc(
                s, e, i, word[s:e] if unknown else pieces[i], table.unk_score if unknown else table.scores[i], unknown
            )
        )
    return out


def k_best(word: str, arcs: list[LatticeArc], k: int) -> list[Segmentation]:
    """The ``k`` highest-scoring segmentations of ``word`` over ``arcs``, exactly.

    Each position keeps its ``k`` best partial paths; a path's score is summed
    left to right as the Viterbi encoder sums it.  Order: score descending;
    between equal scores, the path Hugging Face's Viterbi would prefer first
    (its last piece starting earliest, then recursively), so ``k_best(...)[0]``
    is the Viterbi path.

    Args:
        word: the lattice string.
        arcs: its lattice (:meth:`PieceTable.arcs` as :class:`LatticeArc`).
        k: how many (>= 1).

    Returns:
        Up to ``k`` :class:`Segmentation`, best first (fewer when the word has fewer).
    """
    n = len(word)
    ending: list[list[LatticeArc]] = [[] for _ in range(n + 1)]
    for a in arcs:
        ending[a.end].append(a)
    # a partial path is (score, key, arcs); key = tuple of starts from the end, so smaller key = preferred on ties
    paths: list[list[tuple[float, tuple[int, ...], tuple[LatticeArc, ...]]]] = [[] for _ in range(n + 1)]
    paths[0] = [(0.0, (), ())]
    for e in range(1, n + 1):
        cands = []
        for a in ending[e]:
            for score, key, p in paths[a.start]:
                cands.append((a.score + score, (a.start, *key), (*p, a)))
        paths[e] = heapq.nsmallest(k, cands, key=lambda c: (-c[0], c[1]))
    return [Segmentation(p, score) for score, _key, p in paths[n]]


def word_lattice(
    tok: TrainedTokenizer, text: str, word: str, start: int, end: int, table: PieceTable, k: int
) -> WordLattice:
    """The :class:`WordLattice` of one word of ``tok`` (used by :meth:`UnigramTokenizer.encode_steps`)."""
    arcs = _arc_objects(word, table, tok.pieces)
    segs = k_best(word, arcs, k + 1)
    ids = tuple(i for _s, _e, i in viterbi(word, table))
    return WordLattice(text, word, start, end, False, tuple(arcs), segs[0] if segs else None, tuple(segs[1:]), ids)


@dataclass(frozen=True)
class ReplayState:
    """One training state as the replay shows it.

    Attributes:
        index: 0 for the initial (seed) state, ``r`` for the state after round ``r``.
        vocab_size: the state's vocabulary size (special tokens included).
        loss: the training words' Viterbi loss under this state (nats), ``None`` when not known.
        round: the round that produced it (``None`` for the seed state).
    """

    index: int
    vocab_size: int
    loss: float | None
    round: PruneRound | None


class UnigramReplay:
    """Training replayed on a text: each state's loss, removals, kept pieces and the text's segmentation.

    The segmentation at a state is the tokenizer's own view at that state's
    size (:meth:`UnigramTokenizer.with_vocab_size`), so it equals encoding
    with that view.  Segmentations are computed when asked for.

    Attributes:
        text: the replayed text.
        states: the training states, seed first (:class:`ReplayState`).
    """

    def __init__(self, tok: TrainedTokenizer, text: str):  # a UnigramTokenizer (typed by the protocol: no cycle)
        self.tokenizer = tok
        self.text = text
        sizes = tok.state_sizes
        rounds = tok.trace
        states = []
        for i, size in enumerate(sizes):
            r = rounds[i - 1] if i > 0 and i - 1 < len(rounds) else None
            loss = r.loss_after if r is not None else (rounds[0].loss_before if rounds else None)
            states.append(ReplayState(i, size, loss, r))
        self.states = states

    def removed(self, index: int) -> list[tuple[int, str, float]]:
        """``(id, piece, loss increase)`` of the pieces the round into state ``index`` removed, in removal order."""
        r = self.states[index].round
        if r is None:
            return []
        pieces = self.tokenizer.pieces
        return [(i, pieces[i], inc) for i, inc in zip(r.removed, r.loss_increase)]

    def kept(self, index: int) -> list[tuple[int, str, float]]:
        """``(id, piece, score)`` of every piece alive at state ``index`` (special tokens left out), by id."""
        return self.tokenizer.state_pieces(index)

    def spans(self, index: int) -> list[TokenSpan]:
        """The text's tokens at state ``index`` (a view of that state's size)."""
        return self.tokenizer.with_vocab_size(self.states[index].vocab_size).token_spans(self.text)
