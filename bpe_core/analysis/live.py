"""The data behind the live view: a text's segmentation at every vocabulary size, sent once.

The browser redraws a text at any vocabulary size of a trained (or imported)
tokenizer without asking the server again.  This module computes, once per
(text, tokenizer), compact tables from which the exact segmentation at every
size follows; ``ui/live_view`` sends them and its JavaScript draws them.  Each
algorithm's ``ui`` registration (``ui/algorithms/<name>.py``) picks its functions
here: this module has one set per algorithm and no switch between them (each
function checks it was given its algorithm's tokenizer).  The server-side ``with_vocab_size(k).token_spans``
stays the truth: the tests compare both at every size.

Byte-level BPE (:func:`bpe_boundaries`)
    Inside one pre-token the encoder applies the lowest-rank applicable merge
    until none applies.  With only the first ``m`` merges allowed the encoder
    makes exactly the longest prefix of the full run whose ranks are all below
    ``m`` (the full run's choice is the least applicable rank; while it is
    below ``m`` the restricted run chooses the same).  So every boundary
    between two neighbouring bytes of the text disappears at one vocabulary
    size, ``min_vocab_size + 1 + max(ranks applied up to and including its
    merge)``, or never (pre-token and special-token edges).  A token at size
    ``L`` is a maximal run of bytes whose inner boundaries have all
    disappeared; its id is the id made by the last of those merges (the one
    with the highest step), or the byte's id for a single byte.  For
    tokenizers whose merges only use earlier tokens (every trained one,
    tiktoken's) ranks along a run increase, so the step order is the rank
    order and need not be sent.

WordPiece (:func:`wordpiece_versions`)
    Greedy longest match is not monotone in the vocabulary, so each distinct
    word gets its *versions*: the segmentations it takes over the sizes, each
    with the first size that gives it.  A word's segmentation can only change
    at a size that adds one of its substrings to the vocabulary, so only those
    sizes are evaluated (with the encoder's own greedy rule, re-implemented
    here on public data and tested equal).

Unigram (:func:`unigram_versions`, :func:`unigram_step_versions`)
    Viterbi over a pruned vocabulary does not nest either: each distinct word
    gets its versions over the sizes (one Viterbi per training state plus one
    each time a piece it uses is removed).  The Merges page's player keys the
    same versions by pruning round: step ``k`` is the training state after
    ``k`` rounds.

>>> from bpe_core import train_bpe
>>> tok = train_bpe("low lower lowest " * 20, 262)
>>> b = bpe_boundaries(tok, "lowest")
>>> [s.display for s in b.spans_at(259)] == [s.display for s in tok.with_vocab_size(259).token_spans("lowest")]
True
"""

from __future__ import annotations

import heapq
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..bpe.model import BPETokenizer
from ..pretokenize import pretokenize, split_special
from ..spans import TokenSpan, spans_from_token_bytes
from ..unigram.model import UnigramTokenizer
from ..wordpiece.model import WordPieceTokenizer
from ..wordpiece.trace import WordPieceReplay

__all__ = [
    "NEVER",
    "BPEBoundaries",
    "WordPieceVersions",
    "bpe_boundaries",
    "bpe_size_totals",
    "unigram_size_totals",
    "unigram_step_versions",
    "unigram_versions",
    "wordpiece_size_totals",
    "wordpiece_step_versions",
    "wordpiece_versions",
]

NEVER = 0xFFFFFFFF
"""The size of a boundary that never disappears (pre-token and special-token edges)."""

_INSIDE_SPECIAL = 0xFFFFFFFE
"""The rank recorded for a boundary inside a special token (gone at every size)."""


# ---------------------------------------------------------------------------
# byte-level BPE


@dataclass(frozen=True)
class _BPETables:
    """Public data of a full BPE tokenizer, indexed for replaying its encoder."""

    ranks: dict[tuple[int, int], int]
    new_ids: list[int]
    byte_ids: list[int]
    monotone: bool


_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _bpe_tables(tok: BPETokenizer) -> _BPETables:
    """Pair -> rank (first merge of a pair wins, as the encoder), rank -> new id, byte -> id."""
    full = tok.with_vocab_size(tok.max_vocab_size)
    cached = _TABLES.get(full)
    if cached is not None:
        return cached
    triples = full.merge_ids
    ranks: dict[tuple[int, int], int] = {}
    made_at: dict[int, int] = {}
    monotone = True
    for r, (left, right, new) in enumerate(triples):
        ranks.setdefault((left, right), r)
        made_at.setdefault(new, r)
    for r, (left, right, _new) in enumerate(triples):
        if made_at.get(left, -1) >= r or made_at.get(right, -1) >= r:
            monotone = False  # a merge using a token made later: run ranks can fall
            break
    specials = set(full.special_tokens.values())
    vocab = full.vocab
    byte_ids = [0] * 256
    for i in sorted(vocab, reverse=True):  # the lowest id with a single byte (as the encoder)
        b = vocab[i]
        if len(b) == 1 and i not in specials:
            byte_ids[b[0]] = i
    tables = _BPETables(ranks, [t[2] for t in triples], byte_ids, monotone)
    _TABLES[full] = tables
    return tables


def _piece_events(data: bytes, tables: _BPETables) -> list[tuple[int, int]]:
    """The full encoder's run on one pre-token: ``[(boundary index, rank), ...]`` in step order.

    Boundary ``i`` lies between ``data[i]`` and ``data[i + 1]``.  Lowest rank
    first, leftmost first among equal ranks (the encoder's rule).
    """
    n = len(data)
    if n < 2:
        return []
    get = tables.ranks.get
    new_ids = tables.new_ids
    ids = [tables.byte_ids[b] for b in data]
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        r = get((ids[i], ids[i + 1]))
        if r is not None:
            heap.append((r, i, ids[i], ids[i + 1]))
    heapq.heapify(heap)
    events: list[tuple[int, int]] = []
    while heap:
        r, i, a, b = heapq.heappop(heap)
        j = nxt[i]
        if not alive[i] or j >= n or ids[i] != a or ids[j] != b:
            continue
        events.append((j - 1, r))  # the boundary just before the right token's first byte
        ids[i] = new = new_ids[r]
        alive[j] = False
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            r2 = get((new, ids[k]))
            if r2 is not None:
                heapq.heappush(heap, (r2, i, new, ids[k]))
        p = prv[i]
        if p >= 0:
            r2 = get((ids[p], new))
            if r2 is not None:
                heapq.heappush(heap, (r2, p, ids[p], new))
    return events


@dataclass(frozen=True)
class BPEBoundaries:
    """Where every byte boundary of a text disappears, for one byte-level BPE tokenizer.

    Attributes:
        text: the text (``str``).
        data: its UTF-8 (``bytes``, ``n`` bytes).
        min_vocab_size, max_vocab_size: the tokenizer's size range.
        gone_at: ``n - 1`` sizes; ``gone_at[i]`` is the smallest vocabulary size
            at which the boundary between bytes ``i`` and ``i + 1`` is gone
            (``min_vocab_size`` inside a special token: gone at every size), or
            :data:`NEVER`.
        rank: ``n - 1`` merge ranks: the merge that removes boundary ``i``
            (0-based), :data:`NEVER` for a boundary never removed; inside a
            special token ``0xFFFFFFFE``.
        step: ``n - 1`` step numbers (increasing along each pre-token's run), or
            ``None`` when the tokenizer is monotone (a run's ranks increase, so
            ``rank`` orders the steps).
        new_ids: merge rank -> id of the token it makes (the whole table).
        byte_ids: byte value -> its token id.
        specials: ``(first byte, end byte, id)`` of every special token in the text.
        special_ids: the tokenizer's special ids.
    """

    text: str
    data: bytes
    min_vocab_size: int
    max_vocab_size: int
    gone_at: list[int]
    rank: list[int]
    step: list[int] | None
    new_ids: list[int]
    byte_ids: list[int]
    specials: list[tuple[int, int, int]] = field(default_factory=list)
    special_ids: frozenset[int] = frozenset()

    def token_count(self, size: int) -> int:
        """Tokens of :attr:`text` at vocabulary ``size`` (no encoding: ``n`` minus the boundaries gone)."""
        if not self.data:
            return 0
        return 1 + sum(1 for g in self.gone_at if g > size)

    def cuts_at(self, size: int) -> list[tuple[int, int, int]]:
        """``(first byte, end byte, id)`` of every token of :attr:`text` at vocabulary ``size``.

        Raises:
            ValueError: ``size`` outside ``min_vocab_size..max_vocab_size``.
        """
        if not self.min_vocab_size <= size <= self.max_vocab_size:
            raise ValueError(f"size {size} is outside {self.min_vocab_size}..{self.max_vocab_size}")
        n = len(self.data)
        out: list[tuple[int, int, int]] = []
        special_at = {s: i for s, _e, i in self.specials}
        key = self.step if self.step is not None else self.rank
        start = 0
        best = -1  # the last step inside the current token
        best_rank = -1
        for i in range(n):
            if i == n - 1 or self.gone_at[i] > size:  # the token ends after byte i
                if start in special_at:
                    tid = special_at[start]
                elif best < 0:
                    tid = self.byte_ids[self.data[start]]
                else:
                    tid = self.new_ids[best_rank]
                out.append((start, i + 1, tid))
                start, best, best_rank = i + 1, -1, -1
            elif self.rank[i] != _INSIDE_SPECIAL and key[i] > best:
                best, best_rank = key[i], self.rank[i]
        return out

    def spans_at(self, size: int) -> list[TokenSpan]:
        """:class:`TokenSpan` list of :attr:`text` at ``size`` (what ``with_vocab_size(size).token_spans`` gives)."""
        cuts = self.cuts_at(size)
        ranks = {new: r for r, new in enumerate(self.new_ids)}
        lo = self.min_vocab_size

        def rank_of(i: int) -> int | None:
            r = ranks.get(i)
            return r if r is not None and r < size - lo else None

        return spans_from_token_bytes(
            self.text,
            [c[2] for c in cuts],
            [self.data[s:e] for s, e, _ in cuts],
            special_ids=self.special_ids,
            rank_of=rank_of,
        )


def bpe_boundaries(tok: BPETokenizer, text: str) -> BPEBoundaries:
    """For every byte boundary of ``text``, the vocabulary size at which ``tok`` joins it.

    Args:
        tok: a byte-level BPE tokenizer (any view; its full merge list is used).
        text: the text to draw (``str`` without unpaired surrogates).

    Returns:
        A :class:`BPEBoundaries`; ``cuts_at(k)`` / ``spans_at(k)`` give the tokens
        at size ``k`` exactly as ``tok.with_vocab_size(k)`` encodes.

    Raises:
        TypeError: ``tok`` is not a :class:`BPETokenizer` or ``text`` not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate.

    Cost: one run of the encoder per distinct pre-token (``O(b log b)`` for a
    pre-token of ``b`` bytes), then ``O(n)`` for ``n`` bytes.
    """
    if not isinstance(tok, BPETokenizer):
        raise TypeError(f"bpe_boundaries needs a BPETokenizer, got {type(tok).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text holds an unpaired surrogate at character {exc.start}") from None
    tables = _bpe_tables(tok)
    lo = tok.min_vocab_size
    n = len(data)
    gone_at = [NEVER] * max(n - 1, 0)
    rank = [NEVER] * max(n - 1, 0)
    step = None if tables.monotone else [0] * max(n - 1, 0)
    specials_map = tok.special_tokens
    specials: list[tuple[int, int, int]] = []
    memo: dict[str, list[tuple[int, int]]] = {}
    pos = 0
    for pt in pretokenize(text, tok.pattern, tuple(specials_map)):
        piece = pt.text.encode("utf-8")
        size = len(piece)
        if pt.is_special:
            specials.append((pos, pos + size, specials_map[pt.text]))
            for i in range(pos, pos + size - 1):
                gone_at[i] = lo
                rank[i] = _INSIDE_SPECIAL
        else:
            events = memo.get(pt.text)
            if events is None:
                events = memo[pt.text] = _piece_events(piece, tables)
            top = -1
            for s, (b, r) in enumerate(events):
                top = max(top, r)
                gone_at[pos + b] = lo + 1 + top
                rank[pos + b] = r
                if step is not None:
                    step[pos + b] = s
        pos += size
    return BPEBoundaries(
        text=text,
        data=data,
        min_vocab_size=lo,
        max_vocab_size=tok.max_vocab_size,
        gone_at=gone_at,
        rank=rank,
        step=step,
        new_ids=list(tables.new_ids),
        byte_ids=list(tables.byte_ids),
        specials=specials,
        special_ids=frozenset(specials_map.values()),
    )


COUNTED_MIN_CHARS = 100_000
"""From this many characters on, :func:`bpe_size_totals` counts pre-tokens with the corpus counter."""


def _pretoken_counts(tok: BPETokenizer, text: str) -> tuple[Counter, int]:
    """``(Counter of ordinary pre-tokens, special-token occurrences)`` of ``text`` under ``tok``'s split.

    The textbook way (:func:`~bpe_core.pretokenize.pretokenize`) for a short text; a long one with the corpus
    counter (:func:`bpe_core.analysis.corpus.count_units` and :func:`~bpe_core.analysis.corpus.count_pieces`,
    compiled for the named patterns), whose pieces are the same pre-tokens and special tokens.
    """
    counts: Counter = Counter()
    n_special = 0
    split = tok.corpus_pieces() if len(text) >= COUNTED_MIN_CHARS else None
    if split is None:
        for pt in pretokenize(text, tok.pattern, tuple(tok.special_tokens)):
            if pt.is_special:
                n_special += 1
            else:
                counts[pt.text] += 1
        return counts, n_special
    from .corpus import count_pieces, count_units, unit_cut_table

    pieces = count_pieces(count_units(text, unit_cut_table([split])), split)
    specials = set(tok.special_tokens)
    for piece, c in zip(pieces.pieces, pieces.counts.tolist()):
        if piece in specials:
            n_special += c
        else:
            counts[piece] += c  # a document's first piece is counted apart from the same text elsewhere
    return counts, n_special


def bpe_size_totals(tok: BPETokenizer, text: str) -> list[int]:
    """Tokens of ``text`` at every vocabulary size ``min_vocab_size..max_vocab_size`` (one list entry each).

    Equal to ``[len(tok.with_vocab_size(k).encode(text)) for k in sizes]``, in
    one pass: each distinct pre-token's run is replayed once and every boundary
    it removes lowers the count from the size it disappears at.

    Raises:
        TypeError, ValueError: as :func:`bpe_boundaries`.
    """
    if not isinstance(tok, BPETokenizer):
        raise TypeError(f"bpe_size_totals needs a BPETokenizer, got {type(tok).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    tables = _bpe_tables(tok)
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    counts, n_special = _pretoken_counts(tok, text)
    base = 0
    drop = [0] * (hi - lo + 2)
    for piece, c in counts.items():
        data = piece.encode("utf-8")
        base += c * len(data)
        top = -1
        for _b, r in _piece_events(data, tables):
            top = max(top, r)
            drop[top + 1] += c  # gone from size lo + 1 + top on
    out = []
    total = base + n_special
    for k in range(hi - lo + 1):
        total -= drop[k]
        out.append(total)
    return out


# ---------------------------------------------------------------------------
# WordPiece


@dataclass(frozen=True)
class _WPTables:
    pieces: dict[str, int]
    max_piece: int


_WP_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _wp_tables(tok: WordPieceTokenizer) -> _WPTables:
    full = tok.with_vocab_size(tok.max_vocab_size)
    cached = _WP_TABLES.get(full)
    if cached is not None:
        return cached
    specials = full.special_tokens
    pieces: dict[str, int] = {}
    for i, s in sorted(full.vocab.items()):
        if specials.get(s) == i:
            continue
        pieces.setdefault(s, i)
    tables = _WPTables(pieces, max((len(s) for s in pieces), default=1))
    _WP_TABLES[full] = tables
    return tables


def _greedy(word: str, avail: dict[tuple[int, int], int], size: int, longest: int, unk: int) -> tuple[int, ...]:
    """WordPiece's greedy longest match with the ids below ``size`` (``avail``: (start, end) -> id)."""
    n = len(word)
    out: list[int] = []
    start = 0
    while start < n:
        end = min(n, start + longest)
        while end > start:
            i = avail.get((start, end))
            if i is not None and i < size:
                break
            end -= 1
        else:
            return (unk,)
        out.append(i)
        start = end
    return tuple(out)


def word_versions(tok: WordPieceTokenizer, word: str) -> list[tuple[int, tuple[int, ...]]]:
    """The segmentations of one (normalised) word over all sizes: ``[(first size, ids), ...]``.

    The first entry's size is ``min_vocab_size``; each later entry differs from
    the one before.  ``ids`` is ``(unknown_id,)`` for a word the view cannot spell.

    Args:
        tok: a WordPiece tokenizer (its full vocabulary is used).
        word: one word as the encoder sees it (lower-cased when the tokenizer lower-cases).

    Returns:
        ``list[tuple[int, tuple[int, ...]]]``.
    """
    tables = _wp_tables(tok)
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    unk = tok.unknown_id
    if len(word) > tok.max_input_chars_per_word:
        return [(lo, (unk,))]
    prefix = tok.continuing_subword_prefix
    longest = tables.max_piece
    avail: dict[tuple[int, int], int] = {}
    sizes = {lo}
    n = len(word)
    get = tables.pieces.get
    for a in range(n):
        for b in range(a + 1, min(n, a + longest) + 1):
            i = get(word[a:b] if a == 0 else prefix + word[a:b])
            if i is not None:
                avail[(a, b)] = i
                if lo < i + 1 <= hi:
                    sizes.add(i + 1)
    out: list[tuple[int, tuple[int, ...]]] = []
    for s in sorted(sizes):
        ids = _greedy(word, avail, s, longest, unk)
        if not out or out[-1][1] != ids:
            out.append((s, ids))
    return out


@dataclass(frozen=True)
class WordPieceVersions:
    """A text's WordPiece tokens at every size, as versions of each word occurrence.

    Attributes:
        text: the text.
        min_vocab_size, max_vocab_size: the tokenizer's size range.
        units: one entry per word occurrence or special token, in text order:
            a list of versions ``(first size, spans)``; ``spans`` are the
            :class:`TokenSpan` objects of that occurrence (offsets into
            :attr:`text`).  A special token has one version.
    """

    text: str
    min_vocab_size: int
    max_vocab_size: int
    units: list[list[tuple[int, list[TokenSpan]]]]

    def spans_at(self, size: int) -> list[TokenSpan]:
        """The tokens at ``size`` (what ``with_vocab_size(size).token_spans(text)`` gives, ranks aside).

        Ranks are those of the full tokenizer; a view's ``rank`` is the same for
        every id it contains.

        Raises:
            ValueError: ``size`` outside the range.
        """
        if not self.min_vocab_size <= size <= self.max_vocab_size:
            raise ValueError(f"size {size} is outside {self.min_vocab_size}..{self.max_vocab_size}")
        out: list[TokenSpan] = []
        for versions in self.units:
            chosen = versions[0][1]
            for s, spans in versions:
                if s > size:
                    break
                chosen = spans
            out.extend(chosen)
        return out


def wordpiece_versions(tok: WordPieceTokenizer, text: str) -> WordPieceVersions:
    """Every word occurrence of ``text`` with its segmentations over all sizes of ``tok``.

    Args:
        tok: a WordPiece tokenizer (its full vocabulary is used).
        text: the text to draw.

    Returns:
        A :class:`WordPieceVersions`; ``spans_at(k)`` equals
        ``tok.with_vocab_size(k).token_spans(text)``.

    Raises:
        TypeError: ``tok`` is not a :class:`WordPieceTokenizer`; ``text`` not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate.

    Cost: per distinct word of ``m`` characters, ``O(m * longest piece)``
    look-ups plus one greedy match per size that adds one of its substrings;
    then one layout pass (:meth:`WordPieceTokenizer.token_spans_with`) per
    version depth (the most versions any word has).
    """
    if not isinstance(tok, WordPieceTokenizer):
        raise TypeError(f"wordpiece_versions needs a WordPieceTokenizer, got {type(tok).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    units = _word_units(full, text, lambda word: word_versions(full, word), full.min_vocab_size)
    return WordPieceVersions(text, full.min_vocab_size, full.max_vocab_size, units)


def _word_units(
    full: WordPieceTokenizer, text: str, versions: Callable[[str], list[tuple[int, tuple[int, ...]]]], lo: int
) -> list[list[tuple[int, list[TokenSpan]]]]:
    """Lay out each word occurrence's versions (``versions(word) -> [(first key, ids), ...]``) as spans of ``text``.

    One layout pass (:meth:`WordPieceTokenizer.token_spans_with`) per version depth; a special token is one
    unit with one version keyed ``lo``.
    """
    memo: dict[str, list[tuple[int, tuple[int, ...]]]] = {}

    def versions_of(word: str) -> list[tuple[int, tuple[int, ...]]]:
        v = memo.get(word)
        if v is None:
            v = memo[word] = versions(word)
        return v

    # pass 0 learns the words (and lays out version 0); each further pass lays out version d
    order: list[str] = []

    def first(word: str) -> tuple[int, ...]:
        order.append(word)
        return versions_of(word)[0][1]

    layouts = [full.token_spans_with(text, first)]
    depth = max((len(v) for v in memo.values()), default=1)
    for d in range(1, depth):
        layouts.append(full.token_spans_with(text, lambda w, d=d: versions_of(w)[min(d, len(versions_of(w)) - 1)][1]))
    # cut each layout into units: a special token is one span; a word is len(ids) spans (1 when unknown)
    special_at: set[tuple[int, int]] = set()
    offset = 0
    for segment, is_special in split_special(text, tuple(full.special_tokens)):
        if is_special:
            special_at.add((offset, offset + len(segment)))
        offset += len(segment)
    units: list[list[tuple[int, list[TokenSpan]]]] = []
    pos = [0] * depth
    unk = full.unknown_id
    words = iter(order)
    while pos[0] < len(layouts[0]):
        span = layouts[0][pos[0]]
        if span.is_special and (span.start, span.end) in special_at:
            units.append([(lo, [span])])
            for d in range(depth):
                pos[d] += 1
            continue
        word = next(words)
        vs = versions_of(word)
        unit: list[tuple[int, list[TokenSpan]]] = []
        for d in range(depth):
            ids = vs[min(d, len(vs) - 1)][1]
            n = 1 if ids == (unk,) else len(ids)
            spans = layouts[d][pos[d] : pos[d] + n]
            pos[d] += n
            if d < len(vs):
                unit.append((vs[d][0], spans))
        units.append(unit)
    return units


def wordpiece_step_versions(tok: WordPieceTokenizer, text: str, replay: WordPieceReplay) -> WordPieceVersions:
    """Every word of ``text`` as WordPiece *training* holds it after each merge step ``0..n`` (the Merges page).

    The trainer's segmentation (:meth:`WordPieceReplay.view`), not greedy encoding: versions are keyed by
    the step (merges applied), not the vocabulary size.  A word only ever joins pieces as merges apply, so
    its token count falls at each change: equal segmentations at two steps mean none between, and each
    word's change steps are found by bisection over ``replay.word_pieces(word, k)``.

    Args:
        tok: the trained WordPiece tokenizer (full trace).
        text: the text to draw (normally a prefix of the training text).
        replay: ``tok.replay(training text)`` (:class:`bpe_core.wordpiece.trace.WordPieceReplay`).

    Returns:
        A :class:`WordPieceVersions` whose "sizes" are steps (``min_vocab_size`` 0, ``max_vocab_size`` the
        number of merges); ``spans_at(k)`` equals ``replay.view(k).token_spans(text)``.

    Raises:
        TypeError: ``tok`` is not a :class:`WordPieceTokenizer`; ``text`` not a ``str``.
    """
    if not isinstance(tok, WordPieceTokenizer):
        raise TypeError(f"wordpiece_step_versions needs a WordPieceTokenizer, got {type(tok).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    n = replay.n_merges
    unk = full.unknown_id
    at = replay.word_pieces

    def versions(word: str) -> list[tuple[int, tuple[int, ...]]]:
        first = at(word, 0)
        if first is None:
            return [(0, (unk,))]
        out = [(0, first)]

        def find(a: int, ida: tuple[int, ...], b: int, idb: tuple[int, ...]) -> None:
            if ida == idb:
                return
            if b - a == 1:
                out.append((b, idb))
                return
            mid = (a + b) // 2
            idm = at(word, mid)
            find(a, ida, mid, idm)
            find(mid, idm, b, idb)

        find(0, first, n, at(word, n))
        return out

    return WordPieceVersions(text, 0, n, _word_units(full, text, versions, 0))


def wordpiece_size_totals(tok: WordPieceTokenizer, text: str) -> list[int]:
    """Tokens of ``text`` at every size ``min_vocab_size..max_vocab_size`` (one list entry each).

    Equal to ``[len(tok.with_vocab_size(k).encode(text)) for k in sizes]``,
    from the versions of each distinct word (special tokens count one each).

    Raises:
        TypeError, ValueError: as :func:`wordpiece_versions`.
    """
    if not isinstance(tok, WordPieceTokenizer):
        raise TypeError(f"wordpiece_size_totals needs a WordPieceTokenizer, got {type(tok).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    lo, hi = full.min_vocab_size, full.max_vocab_size
    specials = set(full.special_tokens)
    counts = Counter(full.words(text))
    delta = [0] * (hi - lo + 2)
    for word, c in counts.items():
        if word in specials:
            delta[0] += c
            continue
        prev = 0
        for s, ids in word_versions(full, word):
            delta[s - lo] += c * (len(ids) - prev)
            prev = len(ids)
    out = []
    total = 0
    for k in range(hi - lo + 1):
        total += delta[k]
        out.append(total)
    return out


# ---------------------------------------------------------------------------
# Unigram


def _unigram_word_versions(
    views: dict, full: UnigramTokenizer, bounds: list[tuple[int, int]], word: str, text: str
) -> list[tuple[int, list[TokenSpan]]]:
    """The segmentations of one word (lattice word, and as it appears in the text) over all sizes.

    Returns ``[(first size, spans), ...]``.

    ``bounds``: each training state's size interval ``(a, S]`` (sizes ``a + 1 .. S`` are that state cut
    short).  Inside one interval the scores are fixed and shrinking the size only removes pieces, so the
    Viterbi path at size ``n`` stays best down to (not including) the largest learned id it uses; only
    there is the word segmented again.
    """
    found: list[tuple[int, list[TokenSpan]]] = []
    for a, top in bounds:
        n = top
        while n > a:
            view = views.get(n)
            if view is None:
                view = views[n] = full.with_vocab_size(n)
            spans = view.word_spans(word, text)
            used = [s.id for s in spans if s.rank is not None]
            m = max(used, default=a)
            found.append((max(m, a) + 1, spans))
            n = m
    found.sort(key=lambda v: v[0])
    out: list[tuple[int, list[TokenSpan]]] = []
    for size, spans in found:
        if not out or [(s.id, s.start, s.end) for s in out[-1][1]] != [(s.id, s.start, s.end) for s in spans]:
            out.append((size, spans))
    return out


def _state_bounds(full: UnigramTokenizer) -> list[tuple[int, int]]:
    lo = full.min_vocab_size
    bounds = []
    prev = lo - 1
    for s in full.training_states():
        if s > prev:
            bounds.append((prev, s))
            prev = s
    if prev < full.max_vocab_size:
        bounds.append((prev, full.max_vocab_size))
    return bounds


def unigram_versions(tok: UnigramTokenizer, text: str) -> WordPieceVersions:
    """Every word of ``text`` with its Unigram segmentations over all sizes of ``tok``.

    Each size ``n`` is a point of the pruning sequence (the smallest training
    state of size ``>= n`` cut short to ids below ``n``), and the Viterbi
    segmentation is not monotone in ``n``, so each distinct word gets its
    versions, as WordPiece's (:func:`wordpiece_versions`); the words and their
    offsets come from :meth:`UnigramTokenizer.encode_steps`, each word's
    tokens from ``with_vocab_size(n).word_spans(word, text)`` (a word is
    encoded on its own, so its spans are those in the text, shifted).

    Args:
        tok: a Unigram tokenizer (its full size range is used).
        text: the text to draw.

    Returns:
        A :class:`WordPieceVersions` (the same shape: units of versions);
        ``spans_at(k)`` equals ``tok.with_vocab_size(k).token_spans(text)``.

    Raises:
        TypeError: ``tok`` is not a :class:`UnigramTokenizer`; ``text`` not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate.

    Cost: one lattice pass over ``text``; per distinct word, one Viterbi per
    training state plus one per size at which a piece it uses is removed.
    """
    if not isinstance(tok, UnigramTokenizer):
        raise TypeError(f"unigram_versions needs a UnigramTokenizer, got {type(tok).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    lo = full.min_vocab_size
    bounds = _state_bounds(full)
    views: dict = {full.max_vocab_size: full}
    memo: dict[tuple[str, str], list[tuple[int, list[TokenSpan]]]] = {}
    units: list[list[tuple[int, list[TokenSpan]]]] = []
    for w in full.encode_steps(text, 0):
        if w.is_special:
            (i,) = w.ids
            units.append([(lo, [TokenSpan(i, w.text.encode("utf-8"), w.text, w.start, w.end, True)])])
            continue
        vs = memo.get((w.word, w.text))
        if vs is None:
            vs = memo[w.word, w.text] = _unigram_word_versions(views, full, bounds, w.word, w.text)
        shift = w.start
        units.append(
            [(size, [replace(s, start=s.start + shift, end=s.end + shift) for s in spans]) for size, spans in vs]
        )
    return WordPieceVersions(text, lo, full.max_vocab_size, units)


def unigram_size_totals(tok: UnigramTokenizer, text: str) -> list[int]:
    """Tokens of ``text`` at every size ``min_vocab_size..max_vocab_size`` (one list entry each).

    Equal to ``[len(tok.with_vocab_size(k).encode(text)) for k in sizes]``, from
    the versions of each distinct word (:func:`unigram_versions`).

    Raises:
        TypeError, ValueError: as :func:`unigram_versions`.
    """
    if not isinstance(tok, UnigramTokenizer):
        raise TypeError(f"unigram_size_totals needs a UnigramTokenizer, got {type(tok).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    lo, hi = full.min_vocab_size, full.max_vocab_size
    bounds = _state_bounds(full)
    views: dict = {hi: full}
    counts = Counter((w.word, w.text, w.is_special) for w in full.encode_steps(text, 0))
    delta = [0] * (hi - lo + 2)
    for (word, orig, special), c in counts.items():
        if special:
            delta[0] += c
            continue
        prev = 0
        for s, spans in _unigram_word_versions(views, full, bounds, word, orig):
            delta[s - lo] += c * (len(spans) - prev)
            prev = len(spans)
    out = []
    total = 0
    for k in range(hi - lo + 1):
        total += delta[k]
        out.append(total)
    return out


def unigram_step_versions(tok: UnigramTokenizer, text: str) -> WordPieceVersions:
    """Every word of ``text`` as Unigram's pruning holds it after each round ``0..n`` (the Merges page).

    Step ``k`` is the training state after ``k`` pruning rounds of ``tok``'s trace (step 0: the trained
    vocabulary, ``state_sizes[k]`` its size), so each word's segmentation at step ``k`` is its
    :func:`unigram_versions` version at that size: the versions are re-keyed by step (sizes fall as steps
    rise), keeping a version only where it differs from the step before.

    Args:
        tok: a Unigram tokenizer (its full trace is used).
        text: the text to draw (normally a prefix of the training text).

    Returns:
        A :class:`WordPieceVersions` whose "sizes" are steps (``min_vocab_size`` 0, ``max_vocab_size`` the
        number of rounds); ``spans_at(k)`` equals ``tok.with_vocab_size(state_sizes[k]).token_spans(text)``.

    Raises:
        TypeError, ValueError: as :func:`unigram_versions`.
    """
    if not isinstance(tok, UnigramTokenizer):
        raise TypeError(f"unigram_step_versions needs a UnigramTokenizer, got {type(tok).__name__}")
    full = tok.with_vocab_size(tok.max_vocab_size)
    sizes = full.state_sizes  # sizes[k]: the vocabulary after k rounds, decreasing
    v = unigram_versions(full, text)
    units: list[list[tuple[int, list[TokenSpan]]]] = []
    for versions in v.units:
        firsts = [size for size, _spans in versions]
        unit: list[tuple[int, list[TokenSpan]]] = []
        last = None
        for k, size in enumerate(sizes):
            spans = versions[max(bisect_right(firsts, size) - 1, 0)][1]
            key = [(s.id, s.start, s.end) for s in spans]
            if key != last:
                unit.append((k, spans))
                last = key
        units.append(unit)
    return WordPieceVersions(text, 0, len(sizes) - 1, units)
