"""WordPiece, one step at a time: the trainer's segmentation after ``k`` merges, and greedy encoding step by step.

The WordPiece counterpart of :mod:`bpe_core.bpe.trace` (pure data, no Streamlit):

* *What did training see after k merges, and why was merge k+1 chosen?*
  :class:`WordPieceReplay` replays the trace of a trained
  :class:`~bpe_core.wordpiece.model.WordPieceTokenizer` on the training text's table of
  distinct words.  :meth:`WordPieceReplay.segmentation` is the trainer's own
  view -- every word as its pieces after the first ``k`` merges, which is *not*
  what greedy longest-match encoding gives -- and
  :meth:`WordPieceReplay.candidates` ranks every adjacent pair by the score
  ``freq(pair) / (freq(first) * freq(second))`` exactly as the trainer did,
  with ties explained in words by :func:`explain_score_tie`.
* *How does greedy longest-match-first encode this word?*
  :func:`wordpiece_encode_steps` records, for every word, each position's
  candidates from the longest to the shorter and the piece taken, as
  :class:`~bpe_core.steps.PieceSteps` whose final ids are ``encode()``'s.

Both are written independently of the trainer's incremental loop and of the
encoder's cached fast path, so the tests can cross-check them.  The rules are
the Hugging Face NLP course's (chapter 6; ``../shared/seeds/004_*``), as in
:mod:`bpe_core.wordpiece.trainer`.
"""

from __future__ import annotations

import heapq
import threading
import weakref
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from ..interface import TrainedTokenizer
from ..pretokenize import split_special
from ..spans import TokenSpan
from ..steps import EncodeStep, PieceSteps, check_top, merge_pair
from .words import BERT_RX, count_words, normalize_with_origin

__all__ = [
    "GreedyStep",
    "ScoreRanking",
    "ScoredPair",
    "TrainerView",
    "WordPieceReplay",
    "explain_score_tie",
    "is_wordpiece",
    "wordpiece_encode_steps",
]


def is_wordpiece(tokenizer: object) -> bool:
    """Whether ``tokenizer`` is a :class:`~bpe_core.wordpiece.model.WordPieceTokenizer`.

    Asked of the declared interface (``algorithm == "wordpiece"`` and a
    continuing-subword prefix) rather than the class, so this module need not
    import the model that imports it.
    """
    return getattr(tokenizer, "algorithm", None) == "wordpiece" and hasattr(tokenizer, "continuing_subword_prefix")


# ---------------------------------------------------------------------------
# the candidates of one step


@dataclass(frozen=True, slots=True)
class ScoredPair:
    """One adjacent pair competing to be merged at some WordPiece training step.

    Attributes:
        left_id, right_id: token ids of the pair (``right`` is a ``##`` piece).
        left, right: the two tokens' vocabulary strings.
        merged: the token merging them makes (``left`` + ``right`` without its prefix).
        pair_freq: adjacent occurrences over the training words, weighted by
            word counts (overlapping ones all count).
        left_freq, right_freq: occurrences of each part in the segmentation,
            weighted the same way.
        first_word: 0-based index, in order of first appearance, of the first
            distinct word holding the pair.
        first_offset: character offset (``##`` not counted) of the pair's first
            occurrence inside that word.
        word: that word's text (normalized as training saw it).
    """

    left_id: int
    right_id: int
    left: str
    right: str
    merged: str
    pair_freq: int
    left_freq: int
    right_freq: int
    first_word: int
    first_offset: int
    word: str

    @property
    def score(self) -> Fraction:
        """``pair_freq / (left_freq * right_freq)``, exact."""
        return Fraction(self.pair_freq, self.left_freq * self.right_freq)

    @property
    def first(self) -> tuple[int, int]:
        """``(first_word, first_offset)``: the tie-break key (smaller goes first)."""
        return (self.first_word, self.first_offset)


@dataclass(frozen=True, slots=True)
class ScoreRanking:
    """The pairs competing for one WordPiece merge, best first.

    Attributes:
        rank: the 0-based merge rank they compete for (the state after ``rank`` merges).
        candidates: the top pairs by (score descending, first occurrence
            ascending); ``candidates[0]`` is the pair training merges.
        distinct_pairs: how many different adjacent pairs exist at this step.
        tied: how many pairs (shown or not) have exactly the winner's score,
            the winner included; ``tied > 1`` means the tie-break rule decided.
        most_frequent: the pair with the highest ``pair_freq`` (the earliest
            among equals), which BPE would merge; ``None`` when no pair is left.
    """

    rank: int
    candidates: tuple[ScoredPair, ...]
    distinct_pairs: int
    tied: int
    most_frequent: ScoredPair | None

    @property
    def winner(self) -> ScoredPair | None:
        """The pair training merges at this step, or ``None`` when none is left."""
        return self.candidates[0] if self.candidates else None

    def tie_break_lines(self) -> list[str]:
        """One sentence per shown pair that ties with the winner (:func:`explain_score_tie`); ``[]`` if none."""
        w = self.winner
        if w is None:
            return []
        return [explain_score_tie(w, c) for c in self.candidates[1:] if c.score == w.score]


def _fraction_text(p: ScoredPair) -> str:
    return f"{p.pair_freq:,} / ({p.left_freq:,} × {p.right_freq:,})"


def explain_score_tie(winner: ScoredPair, rival: ScoredPair) -> str:
    """Say in words why ``winner`` is merged before ``rival`` when their scores are equal.

    The rule (the Hugging Face course's code, chapter 6): ties go to the pair
    whose first occurrence comes earliest when scanning the words in order of
    first appearance, left to right.

    Args:
        winner: the pair that goes first.
        rival: a pair with exactly the same score.

    Returns:
        One English sentence (``str``).

    Raises:
        ValueError: the scores differ, the pairs are the same, or ``rival``
            occurs first (so it would win the tie).
    """
    if winner.score != rival.score:
        raise ValueError(f"no tie: scores {winner.score} and {rival.score} differ")
    if (winner.left_id, winner.right_id) == (rival.left_id, rival.right_id):
        raise ValueError("a pair does not tie with itself")
    if rival.first < winner.first:
        raise ValueError("the rival occurs first, so it would win the tie")
    head = (
        f"{winner.left!r} + {winner.right!r} beats {rival.left!r} + {rival.right!r} "
        f"(both score {winner.score}: {_fraction_text(winner)} and {_fraction_text(rival)}): "
    )
    if winner.first_word != rival.first_word:
        return head + (
            f"it first occurs in word #{winner.first_word + 1:,} {winner.word!r}, which the scan meets before "
            f"word #{rival.first_word + 1:,} {rival.word!r}, where {rival.left!r} + {rival.right!r} first occurs."
        )
    return head + (
        f"both first occur in word #{winner.first_word + 1:,} {winner.word!r}; reading it left to right, "
        f"{winner.left!r} + {winner.right!r} starts at character {winner.first_offset + 1} and "
        f"{rival.left!r} + {rival.right!r} at character {rival.first_offset + 1}."
    )


# ---------------------------------------------------------------------------
# replaying training


class WordPieceReplay:
    """A trained WordPiece tokenizer's training words, replayable to any step of its trace.

    For every distinct word the replay runs the trace once, up front: starting
    from the word's characters, it repeatedly applies the lowest-ranked merge
    not yet passed whose pair occurs in the word (all non-overlapping
    occurrences, left to right).  Merges whose pair is absent do nothing, so
    this is exactly applying merges ``0, 1, 2, ...`` in order, as training did
    to every word; and unlike BPE's "lowest rank present" rule it stays exact
    when a token is reached again by another pair (a merge with
    ``added=False``).  Each word keeps the ranks at which it changed, so the
    segmentation after ``k`` merges is a binary search per word.

    Cost: building is O(sum over distinct words ``w`` of len(w)**2 log n)
    (characters; about as long as training); a new ``k`` costs O(distinct
    words) plus O(total characters of distinct words) to count pairs.
    Measured on the seed articles repeated to 300 KB (1.7k distinct words,
    4.8k merges): building 0.11 s, one ranking 0.01-0.03 s, the trainer's view
    of a 4,000-character prefix 0.014 s.  The last :attr:`MEMO` rankings are
    kept; a lock makes the memo safe to share between threads.

    Args:
        tokenizer: a trained :class:`WordPieceTokenizer` whose trace covers its
            vocabulary (the full view is used whatever view is given).
        word_counts: ``{word: count}`` of the training text in order of first
            appearance (:func:`bpe_core.wordpiece.words.count_words`).
        n_special: special-token occurrences removed from the training text
            (each is one token of the training text).

    Raises:
        TypeError: ``tokenizer`` is not a :class:`WordPieceTokenizer`.
        ValueError: it has no training trace.
    """

    MEMO = 8
    """How many rankings are kept."""

    def __init__(self, tokenizer: TrainedTokenizer, word_counts: Mapping[str, int], n_special: int = 0) -> None:
        if not is_wordpiece(tokenizer):
            raise TypeError(f"WordPieceReplay needs a WordPieceTokenizer, got {type(tokenizer).__name__}")
        full = tokenizer.with_vocab_size(tokenizer.max_vocab_size)
        self.tokenizer = full
        self.trace = full.trace
        if full.training is None or (not self.trace and full.max_vocab_size > full.min_vocab_size):
            raise ValueError("this tokenizer has no training trace, so its merges cannot be replayed")
        self.prefix = full.continuing_subword_prefix
        self.n_special = n_special
        self._strs = full.vocab
        self._merges = [(s.left_id, s.right_id, s.new_id) for s in self.trace]
        self._pair_ranks: dict[tuple[int, int], list[int]] = {}
        for r, (a, b, _new) in enumerate(self._merges):
            self._pair_ranks.setdefault((a, b), []).append(r)
        specials = set(full.special_tokens.values())
        self._alphabet = {s: i for i, s in self._strs.items() if i not in specials and i < full.min_vocab_size}
        self.words: list[str] = list(word_counts)
        self.counts: list[int] = [word_counts[w] for w in self.words]
        self._index = {w: i for i, w in enumerate(self.words)}
        self._hist = [self._history(w) for w in self.words]
        self._extra: dict[str, tuple] = {}
        self._rankings: dict[tuple[int, int], ScoreRanking] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_text(cls, tokenizer: TrainedTokenizer, text: str) -> WordPieceReplay:
        """Count the words of ``text`` with the tokenizer's special tokens and lower-casing, and build the replay.

        Args:
            tokenizer: the trained :class:`WordPieceTokenizer`.
            text: its training text (``str``).

        Raises:
            TypeError: ``text`` is not a ``str`` or ``tokenizer`` not a WordPieceTokenizer.
            ValueError: no training trace.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not is_wordpiece(tokenizer):
            raise TypeError(f"WordPieceReplay needs a WordPieceTokenizer, got {type(tokenizer).__name__}")
        specials = sorted(tokenizer.special_tokens, key=tokenizer.special_tokens.get)
        counts, n_special = count_words(text, specials, tokenizer.lowercase)
        return cls(tokenizer, counts, n_special)

    @property
    def n_merges(self) -> int:
        """Merges in the trace: ``k`` may range over ``0..n_merges``."""
        return len(self.trace)

    def _check_k(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"step must be an int, got {type(k).__name__}")
        if not 0 <= k <= self.n_merges:
            raise ValueError(f"step {k} is out of range: this tokenizer has merges 0..{self.n_merges}")

    def _initial(self, word: str) -> tuple[int, ...] | None:
        """The word as alphabet ids, or ``None`` when a character is not in the alphabet."""
        get = self._alphabet.get
        ids = [get(word[0])] + [get(self.prefix + ch) for ch in word[1:]]
        return None if None in ids else tuple(ids)

    def _history(self, word: str) -> tuple[tuple[int, ...] | None, list[int], list[tuple[int, ...]]]:
        """``(initial ids, ranks at which the word changed, the state after each)``."""
        ids = self._initial(word)
        ranks: list[int] = []
        states: list[tuple[int, ...]] = []
        if ids is None:
            return None, ranks, states
        pair_ranks = self._pair_ranks
        t = 0
        cur = ids
        while len(cur) > 1:
            best = None
            for p in pairwise(cur):
                rl = pair_ranks.get(p)
                if rl is None:
                    continue
                j = bisect_left(rl, t)
                if j < len(rl) and (best is None or rl[j] < best):
                    best = rl[j]
            if best is None:
                break
            a, b, new = self._merges[best]
            cur = merge_pair(cur, a, b, new)
            ranks.append(best)
            states.append(cur)
            t = best + 1
        return ids, ranks, states

    @staticmethod
    def _at(hist: tuple, k: int) -> tuple[int, ...] | None:
        initial, ranks, states = hist
        j = bisect_left(ranks, k)  # changes with rank < k
        return states[j - 1] if j else initial

    def word_pieces(self, word: str, k: int) -> tuple[int, ...] | None:
        """One word as the trainer would hold it after ``k`` merges.

        Args:
            word: a word (normalized: lower-cased when the tokenizer lower-cases).
            k: merges applied, ``0 <= k <= n_merges``.

        Returns:
            Token ids, or ``None`` when the word has a character outside the
            training alphabet (it was not in the training text).

        Raises:
            TypeError, ValueError: ``k`` is not an int in range.
        """
        self._check_k(k)
        i = self._index.get(word)
        if i is not None:
            return self._at(self._hist[i], k)
        hist = self._extra.get(word)
        if hist is None:
            hist = self._history(word)
            with self._lock:
                if len(self._extra) > 50_000:
                    self._extra.clear()
                self._extra[word] = hist
        return self._at(hist, k)

    def segmentation(self, k: int) -> list[tuple[tuple[int, ...], int]]:
        """Every distinct training word as token ids after ``k`` merges, with its count.

        Returns:
            ``[(ids, count), ...]`` in order of first appearance.

        Raises:
            TypeError, ValueError: ``k`` is not an int in range.
        """
        self._check_k(k)
        at = self._at
        return [(at(h, k), c) for h, c in zip(self._hist, self.counts)]

    def token_count(self, k: int) -> int:
        """Tokens of the training text in the trainer's segmentation after ``k`` merges (specials one each)."""
        return self.n_special + sum(len(ids) * c for ids, c in self.segmentation(k))

    def _piece_chars(self, token_id: int, position: int) -> int:
        s = self._strs[token_id]
        return len(s) - len(self.prefix) if position else len(s)

    def candidates(self, k: int, top: int = 10) -> ScoreRanking:
        """The pairs competing for merge rank ``k`` (the state after ``k`` merges), best first.

        Pairs are ranked as the trainer ranks them: by exact score, highest first;
        equal scores by first occurrence (words in order of first appearance,
        then left to right).

        Args:
            k: merges already applied, ``0 <= k <= n_merges``; for ``k < n_merges``
                the winner is the trace's merge ``k``.
            top: how many pairs to return (``>= 1``).

        Returns:
            A :class:`ScoreRanking`.

        Raises:
            TypeError: ``k`` or ``top`` is not an int.
            ValueError: ``k`` is out of range, or ``top < 1``.
        """
        check_top(top)
        self._check_k(k)
        memo = self._rankings.get((k, top))
        if memo is not None:
            return memo
        tf: dict[int, int] = {}
        pf: dict[tuple[int, int], int] = {}
        first: dict[tuple[int, int], tuple[int, int]] = {}
        for wi, (ids, c) in enumerate(self.segmentation(k)):
            if ids is None:
                continue
            for t in ids:
                tf[t] = tf.get(t, 0) + c
            off = 0
            for j in range(len(ids) - 1):
                p = (ids[j], ids[j + 1])
                if p in pf:
                    pf[p] += c
                else:
                    pf[p] = c
                    first[p] = (wi, off)
                off += self._piece_chars(ids[j], j)
        # floats to find the contenders, exact fractions to order them (a float is within 1e-15 of the score)
        approx = {p: c / (tf[p[0]] * tf[p[1]]) for p, c in pf.items()}
        floor = min(heapq.nlargest(top, approx.values()), default=0.0) * (1 - 1e-9)
        contenders = [p for p, s in approx.items() if s >= floor]

        def key(p: tuple[int, int]) -> tuple[Fraction, int, int]:
            wi, off = first[p]
            return (-Fraction(pf[p], tf[p[0]] * tf[p[1]]), wi, off)

        contenders.sort(key=key)
        out = tuple(self._scored(p, pf, tf, first) for p in contenders[:top])
        tied = 0
        if out:
            best = out[0].score
            tied = sum(1 for p in contenders if Fraction(pf[p], tf[p[0]] * tf[p[1]]) == best)
        most = None
        if pf:
            mp = min(pf, key=lambda p: (-pf[p], first[p]))
            most = self._scored(mp, pf, tf, first)
        ranking = ScoreRanking(k, out, len(pf), tied, most)
        with self._lock:
            while len(self._rankings) >= self.MEMO:
                self._rankings.pop(next(iter(self._rankings)), None)
            self._rankings[(k, top)] = ranking
        return ranking

    def _scored(self, p: tuple[int, int], pf: dict, tf: dict, first: dict) -> ScoredPair:
        a, b = p
        wi, off = first[p]
        left, right = self._strs[a], self._strs[b]
        return ScoredPair(
            a, b, left, right, left + right[len(self.prefix) :], pf[p], tf[a], tf[b], wi, off, self.words[wi]
        )

    def view(self, k: int) -> TrainerView:
        """The trainer's segmentation after ``k`` merges as an object with ``token_spans(text)``."""
        self._check_k(k)
        return TrainerView(self, k)


class TrainerView:
    """The training segmentation after ``k`` merges, drawn on any text (normally a prefix of the training text).

    Args:
        replay: the :class:`WordPieceReplay`.
        k: merges applied.
    """

    def __init__(self, replay: WordPieceReplay, k: int) -> None:
        self.replay = replay
        self.k = k

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The words of ``text`` as the trainer holds them after ``k`` merges, with offsets into ``text``.

        Same conventions as :meth:`WordPieceTokenizer.token_spans` (special
        tokens whole; offsets into the original text when lower-casing changes
        lengths; ``is_continuation`` on ``##`` pieces; ``rank`` the merge that
        first made the token).  A word with a character the training alphabet
        lacks is one unknown-token span.

        Args:
            text: any ``str``.

        Returns:
            ``list[TokenSpan]`` in text order.
        """
        replay = self.replay
        k = self.k
        return _spans(replay.tokenizer, text, lambda w: replay.word_pieces(w, k))


def _spans(tok: TrainedTokenizer, text: str, pieces_of) -> list[TokenSpan]:
    """Token spans of ``text`` where each word is cut by ``pieces_of(word) -> ids | None`` (``None``: unknown)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return tok.token_spans_with(text, pieces_of)


# ---------------------------------------------------------------------------
# greedy longest-match-first, step by step


@dataclass(frozen=True, slots=True)
class GreedyStep(EncodeStep):
    """One greedy decision of WordPiece encoding (an :class:`~bpe_core.steps.EncodeStep` with its candidates).

    Attributes (beyond :class:`EncodeStep`'s):
        tried: the vocabulary strings looked up and not found, longest first
            (``"##izati"``, ``"##izat"``, ...); empty on the starting line.
        matched: the piece taken (``"##iz"``), or ``None`` on the starting line
            and when the word becomes the unknown token.
        start: character offset in the word where this step's search began.
        end: character offset one past the piece taken (``start`` when none).
    """

    tried: tuple[str, ...] = ()
    matched: str | None = None
    start: int = 0
    end: int = 0


_PIECE_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _piece_table(tok: TrainedTokenizer) -> tuple[dict[str, int], int]:
    """``({piece string: id}, longest piece in characters without the prefix)`` of a view, from its public API.

    A vocabulary entry repeating a special token's string is an ordinary piece;
    the special token itself is not (as :class:`WordPieceTokenizer` defines).
    """
    table = _PIECE_TABLES.get(tok)
    if table is None:
        specials = set(tok.special_tokens.values())
        pieces: dict[str, int] = {}
        for i, s in tok.vocab.items():
            if i not in specials:
                pieces.setdefault(s, i)
        plen = len(tok.continuing_subword_prefix)
        prefix = tok.continuing_subword_prefix
        longest = max((len(s) - plen if s.startswith(prefix) else len(s) for s in pieces), default=1)
        table = _PIECE_TABLES[tok] = (pieces, max(longest, 1))
    return table


def _shorten(tried: Sequence[str], keep: int = 6) -> str:
    if len(tried) <= keep:
        return ", ".join(repr(t) for t in tried)
    return ", ".join(repr(t) for t in tried[: keep - 1]) + f", … ({len(tried) - keep} more), {tried[-1]!r}"


def _word_steps(tok: TrainedTokenizer, word: str) -> list[GreedyStep]:
    """The course's ``encode_word`` (greedy longest-match-first, with BERT's length cap), one line per decision."""
    pieces, longest = _piece_table(tok)
    prefix = tok.continuing_subword_prefix
    unk, unk_s = tok.unknown_id, tok.unk_token
    n = len(word)
    head = GreedyStep((), (), f"{n} character{'s' * (n != 1)}: take the longest vocabulary piece at each position")
    if n > tok.max_input_chars_per_word:
        return [
            head,
            GreedyStep(
                (unk,), (unk_s,),
                f"{n} characters is more than max_input_chars_per_word = {tok.max_input_chars_per_word}: "
                f"the whole word becomes {unk_s} without any lookup",
                marked=(0,),
            ),
        ]  # fmt: skip
    steps = [head]
    ids: list[int] = []
    labels: list[str] = []
    start = 0
    while start < n:
        end = min(n, start + longest)
        tried: list[str] = []
        found = None
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            i = pieces.get(piece)
            if i is not None:
                found = (piece, i)
                break
            tried.append(piece)
            end -= 1
        where = "at the start" if start == 0 else f"at character {start + 1}"
        skipped = (
            f" (pieces longer than {longest} characters are not tried: the vocabulary has none)"
            if start + longest < n
            else ""
        )
        if found is None:
            steps.append(
                GreedyStep(
                    (unk,), (unk_s,),
                    f"{where}: no candidate ({_shorten(tried)}){skipped} is in the vocabulary, so the whole "
                    f"word becomes {unk_s}",
                    marked=(0,), tried=tuple(tried), start=start, end=start,
                )
            )  # fmt: skip
            return steps
        piece, i = found
        ids.append(i)
        labels.append(piece)
        missed = (
            f"{len(tried)} longer candidate{'s' * (len(tried) != 1)} not in the vocabulary ({_shorten(tried, 3)}); "
            if tried
            else ""
        )
        rest = f"; remainder {prefix + word[end:]!r}" if end < n else "; the word is done"
        steps.append(
            GreedyStep(
                tuple(ids), tuple(labels),
                f"{where}: {missed}{piece!r} is the longest match{skipped}{rest}",
                marked=(len(ids) - 1,), tried=tuple(tried), matched=piece, start=start, end=end,
            )
        )  # fmt: skip
        start = end
    return steps


def wordpiece_encode_steps(tokenizer: TrainedTokenizer, text: str) -> list[PieceSteps]:
    """Encode ``text`` with WordPiece, recording every greedy longest-match decision.

    Special tokens (longest match first) come out whole with one line.  The
    rest is lower-cased if the tokenizer lower-cases, split BERT-style into
    words, and each word gets a starting line and then one :class:`GreedyStep`
    per position: the candidates from the longest to the shorter (never longer
    than the longest vocabulary piece), the piece taken, and the remainder,
    which continues with ``##``.  A word that cannot be matched, or that is
    longer than ``max_input_chars_per_word`` characters, ends in one line giving
    the unknown token.  This is the course's ``encode_word``, written
    independently of the tokenizer's cached encoder.

    Args:
        tokenizer: a :class:`WordPieceTokenizer` (any view).
        text: any ``str`` without unpaired surrogates.

    Returns:
        One :class:`~bpe_core.steps.PieceSteps` per word or special token, in
        text order (``start``/``end`` are offsets into ``text``; ``text`` is the
        original characters); their ``ids`` concatenate to exactly
        ``tokenizer.encode(text)``.

    Raises:
        TypeError: ``tokenizer`` is not a WordPieceTokenizer or ``text`` not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate.
    """
    if not is_wordpiece(tokenizer):
        raise TypeError(f"wordpiece_encode_steps needs a WordPieceTokenizer, got {type(tokenizer).__name__}")
    tokenizer.words(text)  # the encoder's own checks: TypeError for a non-str, ValueError for a lone surrogate
    specials = tokenizer.special_tokens
    out: list[PieceSteps] = []
    offset = 0
    for segment, is_special in split_special(text, tuple(specials)):
        if is_special:
            step = EncodeStep((specials[segment],), (segment,), "special token: one id, never split")
            out.append(PieceSteps(segment, offset, offset + len(segment), True, (step,)))
            offset += len(segment)
            continue
        norm, origin = normalize_with_origin(segment, tokenizer.lowercase)
        for m in BERT_RX.finditer(norm):
            ws, we = m.span()
            s, e = (ws, we) if origin is None else (origin[ws], origin[we - 1] + 1)
            steps = _word_steps(tokenizer, m.group())
            if m.group() != segment[s:e]:
                first = steps[0]
                steps[0] = GreedyStep((), (), f"lower-cased to {m.group()!r}; " + first.note)
            out.append(PieceSteps(segment[s:e], offset + s, offset + e, False, tuple(steps)))
        offset += len(segment)
    return out
