"""Training and encoding, one step at a time: the data behind the Merges page.

Two questions a learner asks, answered as pure data (no Streamlit here):

* *Why was this pair merged?*  :class:`TrainingReplay` replays the first ``k``
  merges of a trained :class:`~bpe_core.bpe.model.BPETokenizer` on the training text's
  table of distinct pre-tokens and ranks every adjacent pair the way the trainer
  did at that moment (:meth:`TrainingReplay.candidates`), with the tie-break rule
  spelled out in words (:func:`explain_tie_break`).
* *How does this word get encoded?*  :func:`bpe_encode_steps` encodes a text
  pre-token by pre-token, one line per applied merge, in the order the encoder
  applies them (lowest rank first), as the :class:`~bpe_core.steps.PieceSteps`
  records every algorithm's ``encode_steps(text)`` returns.

Both are written independently of the trainer's incremental loop and of the
encoder's fast path, so the tests can cross-check them against the trace and
against ``encode()``.
"""

from __future__ import annotations

import heapq
import threading
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..interface import TrainedTokenizer
from ..pretokenize import count_pretokens, pretokenize
from ..spans import display_bytes
from ..steps import EncodeStep, PieceSteps, check_top, merge_pair

__all__ = [
    "CandidateRanking",
    "PairCandidate",
    "TrainingReplay",
    "bpe_encode_steps",
    "explain_tie_break",
    "is_bpe",
]


def is_bpe(tokenizer: object) -> bool:
    """Whether ``tokenizer`` is a byte-level BPE tokenizer (a :class:`~bpe_core.bpe.model.BPETokenizer`).

    Asked of the declared interface (``algorithm == "bpe"`` and a ``merge_ids``
    table) rather than the class, so this module need not import the model
    that imports it.
    """
    return getattr(tokenizer, "algorithm", None) == "bpe" and hasattr(tokenizer, "merge_ids")


# ---------------------------------------------------------------------------
# why this pair: replaying training to step k


@dataclass(frozen=True, slots=True)
class PairCandidate:
    """One adjacent pair competing to be merged at some step.

    Attributes:
        left_id, right_id: token ids of the pair.
        left, right: bytes of the two tokens.
        count: adjacent occurrences over all pre-tokens, weighted by pre-token
            frequency; overlapping occurrences (the two ``a a`` in ``a a a``) both
            count.  This is the number training ranks pairs by.
        replaceable: occurrences a merge of this pair would actually replace
            (left to right, never reusing a token), weighted the same way.
            ``count - replaceable`` is the overlap.
        overlap_example: a pre-token (its bytes) where occurrences of the pair
            overlap, the most frequent such pre-token; ``None`` when none overlap.
    """

    left_id: int
    right_id: int
    left: bytes
    right: bytes
    count: int
    replaceable: int
    overlap_example: bytes | None = None

    @property
    def merged(self) -> bytes:
        """Bytes of the token merging this pair would create (``left + right``)."""
        return self.left + self.right


@dataclass(frozen=True, slots=True)
class CandidateRanking:
    """The pairs competing for one merge, best first.

    Attributes:
        rank: the 0-based merge rank they compete for (merge number ``rank + 1``),
            i.e. the state after ``rank`` merges.
        candidates: the top pairs, best first; ``candidates[0]`` is the pair
            training picks.  Empty when no adjacent pair is left.
        distinct_pairs: how many different adjacent pairs exist at this step.
        tied: how many pairs (shown or not) have the winner's count, the winner
            included; ``tied > 1`` means the tie-break rule decided.
    """

    rank: int
    candidates: tuple[PairCandidate, ...]
    distinct_pairs: int
    tied: int

    @property
    def winner(self) -> PairCandidate | None:
        """The pair training merges at this step, or ``None`` when none is left."""
        return self.candidates[0] if self.candidates else None

    def tie_break_lines(self) -> list[str]:
        """One sentence per shown pair that ties with the winner, saying why the winner goes first.

        Returns:
            ``[]`` when the winner's count is unique; otherwise the explanation of
            :func:`explain_tie_break` for each tied pair among :attr:`candidates`.
        """
        w = self.winner
        if w is None:
            return []
        return [explain_tie_break(w, c) for c in self.candidates[1:] if c.count == w.count]


def _q(data: bytes) -> str:
    """A token's bytes as a quoted readable string (``repr`` of its display form)."""
    return repr(display_bytes(data))


def _byte_name(b: int) -> str:
    return f"0x{b:02X} ({chr(b)!r})" if 0x21 <= b < 0x7F else f"0x{b:02X}"


def _why_greater(a: bytes, b: bytes) -> str:
    """Why ``a > b`` as byte strings (``a != b`` and ``a > b`` assumed)."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            pos = f"at byte {i + 1}" if i else "at the first byte"
            return f"{_q(a)} > {_q(b)}: they differ {pos}, {_byte_name(a[i])} > {_byte_name(b[i])}"
    return f"{_q(a)} > {_q(b)}: {_q(b)} is a prefix of {_q(a)}, and a shorter prefix sorts first"


def explain_tie_break(winner: PairCandidate, rival: PairCandidate) -> str:
    """Say in words why ``winner`` is merged before ``rival`` when their counts tie.

    The rule (as in the trainer, :mod:`bpe_core.bpe`): among pairs with the same
    count, the lexicographically greatest ``(left bytes, right bytes)`` wins --
    left parts are compared first, byte by byte, and only when they are equal do
    the right parts decide.

    Args:
        winner: the pair that goes first.
        rival: a pair with the same count.

    Returns:
        One English sentence, e.g. ``"(b'w' + 'est') beats ..."`` (``str``).

    Raises:
        ValueError: the counts differ, the pairs are the same, or ``rival`` is in
            fact the greater pair.
    """
    if winner.count != rival.count:
        raise ValueError(f"no tie: counts {winner.count} and {rival.count} differ")
    if (winner.left, winner.right) == (rival.left, rival.right):
        raise ValueError("a pair does not tie with itself")
    if (winner.left, winner.right) < (rival.left, rival.right):
        raise ValueError("the rival is the greater pair, so it would win the tie")
    head = (
        f"{_q(winner.left)} + {_q(winner.right)} beats {_q(rival.left)} + {_q(rival.right)} (both {winner.count:,}): "
    )
    if winner.left != rival.left:
        return head + "left parts compared first, " + _why_greater(winner.left, rival.left) + "."
    return (
        head + f"the left parts are equal ({_q(winner.left)}), so the right parts decide, "
        + _why_greater(winner.right, rival.right) + "."
    )  # fmt: skip


def _non_overlapping(ids: Sequence[int], a: int, b: int) -> tuple[int, int]:
    """(all adjacent occurrences of (a, b), occurrences replaced left to right) in one word."""
    total = replaced = 0
    i, n = 0, len(ids)
    skip_until = -1
    while i < n - 1:
        if ids[i] == a and ids[i + 1] == b:
            total += 1
            if i >= skip_until:
                replaced += 1
                skip_until = i + 2
        i += 1
    return total, replaced


class TrainingReplay:
    """A trained tokenizer's training text, as a pre-token table that can be replayed to any step.

    The state after ``k`` merges is got by encoding every distinct pre-token with
    the tokenizer's first ``k`` merges (``with_vocab_size``).  That equals running
    the first ``k`` training steps: applying merges lowest rank first never
    recreates a lower-rank pair, because every new adjacency involves the token
    just made, and pairs with it were learned later.

    Scaling: building the table costs one pre-tokenization pass over the text
    (the same as training's counting phase).  A new ``k`` re-encodes every
    distinct pre-token -- O(sum of len(p)**2) over distinct pre-tokens ``p``
    (bytes), independent of ``k`` -- unless step ``k - 1`` is memoised, when one
    merge is applied instead (O(sum of len(p))); then pairs are counted in
    O(sum of len(p)).  Measured for :meth:`candidates` on English text: 300 KB
    (14k distinct pre-tokens) 0.03 s one step on, 0.1 s for a jump; 1 MB (31k)
    0.15 s and 0.3 s -- fine for the app's texts, slow for tens of MB.  The
    last :attr:`MEMO` states and rankings are kept, and a lock
    makes the memo safe to share between threads.

    Args:
        tokenizer: a :class:`BPETokenizer` (normally the full trained one).
        word_counts: ``{pre-token UTF-8 bytes: count}`` of the training text.

    Raises:
        TypeError: ``tokenizer`` is not a :class:`BPETokenizer`.
    """

    MEMO = 8
    """How many replayed states (pre-token segmentations) are kept."""

    def __init__(self, tokenizer: TrainedTokenizer, word_counts: Mapping[bytes, int]) -> None:
        if not is_bpe(tokenizer):
            raise TypeError(f"TrainingReplay needs a BPETokenizer, got {type(tokenizer).__name__}")
        self.tokenizer = tokenizer
        # one-byte pre-tokens hold no pair: leave them out, as training does
        self.words: list[tuple[bytes, int]] = [(w, c) for w, c in word_counts.items() if len(w) > 1]
        self._merge_ids = tokenizer.merge_ids
        self._states: dict[int, list[tuple[int, ...]]] = {}
        self._rankings: dict[tuple[int, int], CandidateRanking] = {}
        self._lock = threading.Lock()  # the app shares one replay between sessions (threads)

    @classmethod
    def from_text(cls, tokenizer: TrainedTokenizer, text: str) -> TrainingReplay:
        """Build the pre-token table of ``text`` with the tokenizer's pattern and special tokens.

        Args:
            tokenizer: the trained :class:`BPETokenizer`.
            text: its training text (``str``).

        Returns:
            The replay.

        Raises:
            TypeError: ``text`` is not a ``str``, or ``tokenizer`` not a BPETokenizer.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        specials = sorted(tokenizer.special_tokens, key=tokenizer.special_tokens.get)
        counts, _n_special = count_pretokens(text, tokenizer.pattern, specials)
        table: dict[bytes, int] = {}
        for piece, c in counts.items():
            try:
                b = piece.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"text contains an unpaired surrogate U+{ord(piece[exc.start]):04X}, which has no UTF-8 form"
                ) from None
            table[b] = table.get(b, 0) + c
        return cls(tokenizer, table)

    @property
    def n_merges(self) -> int:
        """Merges of the tokenizer: ``k`` may range over ``0..n_merges``."""
        return self.tokenizer.vocab_size - self.tokenizer.min_vocab_size

    def _check_k(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"step must be an int, got {type(k).__name__}")
        if not 0 <= k <= self.n_merges:
            raise ValueError(f"step {k} is out of range: this tokenizer has merges 0..{self.n_merges}")

    def segmentation(self, k: int) -> list[tuple[tuple[int, ...], int]]:
        """Every distinct multi-byte pre-token as token ids after ``k`` merges, with its count.

        Args:
            k: number of merges applied, ``0 <= k <= n_merges``.

        Returns:
            ``[(ids, count), ...]`` in the table's order.

        Raises:
            TypeError, ValueError: ``k`` is not an int in range.
        """
        self._check_k(k)
        state = self._states.get(k)
        if state is None:
            prev = self._states.get(k - 1)
            if prev is not None:
                # one step on from the cached previous state: apply merge k - 1 where its left token occurs
                a, b, new = self._merge_ids[k - 1]
                state = [merge_pair(ids, a, b, new) if a in ids else ids for ids in prev]
            else:
                view = self.tokenizer.with_vocab_size(self.tokenizer.min_vocab_size + k)
                enc = view._encode_piece
                state = [enc(w) for w, _c in self.words]
            with self._lock:
                while len(self._states) >= self.MEMO:
                    self._states.pop(next(iter(self._states)), None)
                self._states[k] = state
        return [(ids, c) for ids, (_w, c) in zip(state, self.words)]

    def pair_counts(self, k: int) -> Counter:
        """Weighted counts of every adjacent pair after ``k`` merges.

        Returns:
            ``Counter`` mapping ``(left_id, right_id)`` to its count (overlaps counted).

        Raises:
            TypeError, ValueError: ``k`` is not an int in range.
        """
        counts: Counter = Counter()
        for ids, c in self.segmentation(k):
            for p in pairwise(ids):
                counts[p] += c
        return counts

    def candidates(self, k: int, top: int = 10) -> CandidateRanking:
        """The pairs competing for merge rank ``k`` (the state after ``k`` merges), best first.

        Pairs are ranked as training ranks them: by count, then by the
        lexicographically greatest ``(left bytes, right bytes)``.

        Args:
            k: number of merges already applied, ``0 <= k <= n_merges``; for
                ``k < n_merges`` the winner is the tokenizer's merge ``k``.
            top: how many pairs to return (``>= 1``).

        Returns:
            A :class:`CandidateRanking`.

        Raises:
            TypeError: ``k`` or ``top`` is not an int.
            ValueError: ``k`` is out of range, or ``top < 1``.
        """
        check_top(top)
        memo = self._rankings.get((k, top))
        if memo is not None:
            return memo
        seg = self.segmentation(k)
        counts = self.pair_counts(k)
        tb = self.tokenizer.token_bytes
        # the top counts first (cheap), then the full (count, left bytes, right bytes) order among them
        floor = min(heapq.nlargest(top, counts.values()), default=0)
        contenders = [(p, c) for p, c in counts.items() if c >= floor]
        best = heapq.nlargest(top, contenders, key=lambda pc: (pc[1], tb(pc[0][0]), tb(pc[0][1])))
        out = []
        for (a, b), count in best:
            replaceable = 0
            example, example_count = None, 0
            for ids, c in seg:
                if a not in ids or b not in ids:  # a fast scan skips most words
                    continue
                total, replaced = _non_overlapping(ids, a, b)
                replaceable += replaced * c
                if total > replaced and c > example_count:
                    example, example_count = b"".join(tb(i) for i in ids), c
            out.append(PairCandidate(a, b, tb(a), tb(b), count, replaceable, example))
        tied = sum(1 for c in counts.values() if out and c == out[0].count)
        ranking = CandidateRanking(k, tuple(out), len(counts), tied)
        with self._lock:
            while len(self._rankings) >= 4 * self.MEMO:
                self._rankings.pop(next(iter(self._rankings)), None)
            self._rankings[(k, top)] = ranking
        return ranking


# ---------------------------------------------------------------------------
# how a word is encoded: one line per step


class _RankTable:
    """A tokenizer view's ``(left, right) -> (rank, new id)`` and byte -> id maps, built from its public API."""

    def __init__(self, tok: TrainedTokenizer) -> None:
        self.pairs: dict[tuple[int, int], tuple[int, int]] = {}
        for r, (a, b, new) in enumerate(tok.merge_ids):
            self.pairs.setdefault((a, b), (r, new))
        specials = set(tok.special_tokens.values())
        byte_id: dict[int, int] = {}
        for i, data in tok.vocab.items():
            if len(data) == 1 and i not in specials and (data[0] not in byte_id or i < byte_id[data[0]]):
                byte_id[data[0]] = i
        self.byte_id = [byte_id[x] for x in range(256)]


_RANK_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rank_table(tok: TrainedTokenizer) -> _RankTable:
    table = _RANK_TABLES.get(tok)
    if table is None:
        table = _RANK_TABLES[tok] = _RankTable(tok)
    return table


def _piece_steps(tok: TrainedTokenizer, table: _RankTable, data: bytes) -> list[EncodeStep]:
    """Byte-pair encode one pre-token, recording every merge (the textbook loop, no shortcuts)."""
    label = tok.describe_token
    ids = [table.byte_id[x] for x in data]
    steps = [EncodeStep(tuple(ids), tuple(label(i) for i in ids), f"{len(ids)} byte{'s' * (len(ids) != 1)}")]
    pairs = table.pairs
    while len(ids) > 1:
        found = [(pairs[p][0], p) for p in pairwise(ids) if p in pairs]
        if not found:
            break
        rank, (a, b) = min(found)
        new = pairs[a, b][1]
        out: list[int] = []
        marked: list[int] = []
        i = 0
        while i < len(ids):
            if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                marked.append(len(out))
                out.append(new)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        times = f" ({len(marked)}×)" if len(marked) > 1 else ""
        note = f"merge #{rank + 1}: {label(a)!r} + {label(b)!r} → {label(new)!r}{times}"
        ids = out
        steps.append(EncodeStep(tuple(ids), tuple(label(i) for i in ids), note, rank, tuple(marked)))
    return steps


def bpe_encode_steps(tokenizer: TrainedTokenizer, text: str) -> list[PieceSteps]:
    """Encode ``text`` with a BPE tokenizer, recording each pre-token's merges one by one.

    Inside each pre-token the lowest-rank merge present is applied to all its
    occurrences (left to right), then the next, until no merge applies -- the
    encoding rule of GPT-2 and tiktoken.  Each application is one
    :class:`EncodeStep`.  Special tokens come out whole, with one line.

    Works for any :class:`BPETokenizer`, including GPT-2, cl100k and o200k built
    by :func:`bpe_core.production.encodings.bpe_from_encoding` (whose byte tokens are not
    ids 0-255).  Cost: O(len(p)**2) per pre-token ``p`` (in bytes), plus, once
    per tokenizer view, a table of its merges (about 0.1 s for cl100k).

    Args:
        tokenizer: the tokenizer (or a ``with_vocab_size`` view of it).
        text: any ``str`` without unpaired surrogates.

    Returns:
        One :class:`PieceSteps` per pre-token, in text order; concatenating their
        ``ids`` gives exactly ``tokenizer.encode(text)``.

    Raises:
        TypeError: ``tokenizer`` is not a BPETokenizer or ``text`` not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate.
    """
    if not is_bpe(tokenizer):
        raise TypeError(f"bpe_encode_steps needs a BPETokenizer, got {type(tokenizer).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    table = _rank_table(tokenizer)
    specials = tokenizer.special_tokens
    out: list[PieceSteps] = []
    for pt in pretokenize(text, tokenizer.pattern, sorted(specials, key=specials.get)):
        if pt.is_special:
            sid = specials[pt.text]
            step = EncodeStep((sid,), (pt.text,), "special token: one id, never merged")
            out.append(PieceSteps(pt.text, pt.start, pt.end, True, (step,)))
            continue
        try:
            data = pt.text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"text contains an unpaired surrogate U+{ord(pt.text[exc.start]):04X}, which has no UTF-8 form"
            ) from None
        out.append(PieceSteps(pt.text, pt.start, pt.end, False, tuple(_piece_steps(tokenizer, table, data))))
    return out
