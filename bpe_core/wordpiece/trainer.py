"""WordPiece, the trainer: likelihood-score merges over the words of a text.

The algorithm is WordPiece as the Hugging Face NLP course, chapter 6, describes
and prints it (Google never published BERT's trainer; the course's version is
the one learners meet, and ``../shared/seeds/004_*`` reproduces it):

* text is split on special tokens first (they are removed from training and
  encoded as their ids), optionally lower-cased (per character, so offsets can
  be mapped back), and pre-tokenized BERT-style: whitespace separates words and
  every punctuation character is a word of its own
  (:data:`bpe_core.pretokenize.BERT_PATTERN`, as Hugging Face ``BertPreTokenizer``);
* the initial vocabulary is the special tokens in the order given, then the
  alphabet sorted by code point: every first character of a word, and every
  non-first character with the continuing-subword prefix (``"##"``);
* each step merges the adjacent pair with the highest score
  ``freq(pair) / (freq(first) * freq(second))``, where frequencies count
  occurrences in the current segmentation of the training words, weighted by
  word counts; the merged token is ``first + second`` without the ``##`` of
  ``second``.  Ties go to the pair whose first occurrence comes earliest when
  scanning the words in order of first appearance, left to right (the order in
  which the course's code meets the pairs).  Scores are compared exactly;
* encoding is greedy longest-match-first inside each word, with ``##`` on every
  piece but the first; a word that cannot be covered, or that is longer than
  ``max_input_chars_per_word`` characters (100, as in BERT), becomes the
  unknown token.

Training keeps incremental pair counts, token frequencies, a pair -> words
index, a token -> pairs index and a priority queue with lazy invalidation: a
merge updates only the pairs whose count, first occurrence or score changes.
Words longer than 256 characters are doubly linked lists of character
positions with a pair -> positions index (:class:`_LongWords`, the shared
:class:`bpe_core.linked_words.LinkedWords`), so a merge
costs the occurrences it replaces, not the word's length: one 100 KB word
trains to 1,000 tokens in a fraction of a second, not 35 s.  Tables of
:data:`COMPILED_MIN_WORDS` words or more without long words run the same loop
compiled (:mod:`bpe_core.wordpiece.wp_kernel`, :func:`merge_engine`), with
the same merges.  The vocabulary and merges must equal the textbook's
:func:`bpe_core.textbook.wordpiece.train` (tests/engine/test_wordpiece.py).

Hugging Face's ``WordPieceTrainer`` is another algorithm: its BPE trainer with
``##`` (the pair of highest count, ties to the smaller pair of ids, every
character of the words unprefixed in the alphabet, special tokens trained on
like text).  ``tests/engine/test_wordpiece_hf.py`` states the differences exactly and
checks everything else: given that rule, this merge loop learns its tokens.
"""

from __future__ import annotations

import gc
import heapq
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import regex

from ..counting import kernels_mode, kernels_ready
from ..interface import ProgressCallback, TrainingInfo, VocabSizeTooSmall
from ..linked_words import LinkedWords
from ..pretokenize import check_word_count, validate_special_tokens
from .model import (
    DEFAULT_MAX_INPUT_CHARS_PER_WORD,
    DEFAULT_SPECIAL_TOKENS,
    WordPieceMerge,
    WordPieceTokenizer,
    check_options,
)
from .words import COUNT_CHUNK, count_words, surrogate_error

_SPACE = regex.compile(r"\s")

__all__ = [
    "PROGRESS_INTERVAL",
    "Ticker",
    "train_from_spec",
    "train_wordpiece",
    "train_wordpiece_from_counts",
]

_FIRST_SHIFT = 40  # a first occurrence is stored as word_index << 40 | character offset

PROGRESS_INTERVAL = 0.2
"""Longest time, in seconds, between two calls of the progress callback while training (so Cancel works)."""


class Ticker:
    """Calls ``progress(phase, done, total)`` at most every :data:`PROGRESS_INTERVAL` seconds, when asked often.

    The trainer calls :meth:`tick` at cheap, frequent points (per word, per
    merge); only when the interval has passed does it call ``progress``, whose
    :class:`~bpe_core.interface.TrainingCancelled` then stops training.

    Args:
        progress: the callback, or ``None`` (every tick is then a no-op).
        interval: seconds between calls (default :data:`PROGRESS_INTERVAL`).
    """

    __slots__ = ("interval", "last", "progress")

    def __init__(self, progress: ProgressCallback | None, interval: float | None = None) -> None:
        self.progress = progress
        self.interval = PROGRESS_INTERVAL if interval is None else interval
        self.last = time.monotonic()

    def tick(self, phase: str, done: int, total: int) -> None:
        """Report ``done`` of ``total`` in ``phase`` when the interval has passed since the last report."""
        if self.progress is not None and time.monotonic() - self.last >= self.interval:
            self.progress(phase, done, total)
            self.last = time.monotonic()

    def now(self, phase: str, done: int, total: int) -> None:
        """Report at once (phase boundaries)."""
        if self.progress is not None:
            self.progress(phase, done, total)
            self.last = time.monotonic()


def train_wordpiece(
    text: str,
    vocab_size: int,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
    *,
    lowercase: bool = False,
    continuing_subword_prefix: str = "##",
    unk_token: str = "[UNK]",
    max_input_chars_per_word: int = DEFAULT_MAX_INPUT_CHARS_PER_WORD,
    progress: ProgressCallback | None = None,
    name: str | None = None,
) -> WordPieceTokenizer:
    """Train a WordPiece tokenizer on a text (see the module docstring for the exact rules).

    Args:
        text: the training text (``str``).
        vocab_size: target vocabulary size in tokens, counting the special
            tokens, the alphabet and the merged tokens.  Training stops earlier,
            with ``tokenizer.training.stop_reason`` set, when every word is a
            single token.
        special_tokens: special-token strings, ids 0, 1, ... in the order given;
            cut out of the text before training and never merged.
        lowercase: lower-case the text (per character, :func:`lowercase_text`)
            before pre-tokenization, in training and in encoding.
        continuing_subword_prefix: the mark of a non-first piece of a word.
        unk_token: the token for words that cannot be encoded; must be one of
            ``special_tokens``.
        max_input_chars_per_word: longer words encode as ``unk_token`` (characters).
        progress: optional ``progress(phase, done, total)`` callback; it may raise
            :class:`TrainingCancelled` to stop.
        name: display name (default ``"WordPiece"``, ``"WordPiece (lower-cased)"``).

    Returns:
        The trained :class:`WordPieceTokenizer`; its ``trace`` records every merge.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: ``vocab_size`` is below the initial vocabulary (the message
            gives the minimum for this text); ``unk_token`` is not a special
            token; bad special tokens or prefix; ``text`` holds an unpaired
            surrogate.
        TrainingCancelled: raised by ``progress``.

    Every pair scores 1/3 at each step here, so the first pair met wins:

    >>> tok = train_wordpiece("hug hugs hug", 8, special_tokens=["[UNK]"])
    >>> list(tok.vocab.values())
    ['[UNK]', '##g', '##s', '##u', 'h', 'hu', 'hug', 'hugs']
    >>> tok.encode("hugs hug"), tok.decode(tok.encode("hugs hug"))
    ([7, 6], 'hugs hug')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    specials = validate_special_tokens(special_tokens)
    check_options(vocab_size, specials, unk_token, continuing_subword_prefix, max_input_chars_per_word)
    err = surrogate_error(text)
    if err is not None:
        raise err
    t0 = time.perf_counter()
    ticker = Ticker(progress)
    chunks = max(1, -(-len(text) // COUNT_CHUNK))
    ticker.now("count", 0, chunks)
    counts, n_special = count_words(text, specials, lowercase, progress=ticker.tick)
    ticker.now("count", chunks, chunks)
    return _train_counted(
        counts,
        n_special,
        time.perf_counter() - t0,
        vocab_size,
        specials,
        lowercase,
        continuing_subword_prefix,
        unk_token,
        max_input_chars_per_word,
        ticker,
        progress,
        name,
    )


def train_wordpiece_from_counts(
    word_counts: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
    *,
    lowercase: bool = False,
    special_occurrences: int = 0,
    continuing_subword_prefix: str = "##",
    unk_token: str = "[UNK]",
    max_input_chars_per_word: int = DEFAULT_MAX_INPUT_CHARS_PER_WORD,
    progress: ProgressCallback | None = None,
    name: str | None = None,
) -> WordPieceTokenizer:
    """Train a WordPiece tokenizer on word counts instead of a text (a count table's, say).

    The result equals :func:`train_wordpiece` on any text whose BERT-style
    words (:func:`bpe_core.wordpiece.count_words`, after lower-casing when
    ``lowercase``) are ``word_counts`` **in the same order of first
    appearance**: ties between equal scores go to the pair met first when
    scanning the words in that order, so the mapping's order is part of the input.

    Args:
        word_counts: ``{word: occurrences}`` (``str`` words without whitespace,
            counts >= 1), iterated in order of first appearance.
        vocab_size: target vocabulary size in tokens (as :func:`train_wordpiece`).
        special_tokens: special-token strings, ids 0, 1, ... in the order given
            (those the words were counted with).
        lowercase: the words were lower-cased; the tokenizer lower-cases the
            text it encodes.
        special_occurrences: special-token occurrences cut out when counting
            (recorded in ``tokenizer.training``).
        continuing_subword_prefix: as :func:`train_wordpiece`.
        unk_token: as :func:`train_wordpiece`.
        max_input_chars_per_word: as :func:`train_wordpiece`.
        progress: as :func:`train_wordpiece`, from the merge phase on (no counting).
        name: as :func:`train_wordpiece`.

    Returns:
        The trained :class:`WordPieceTokenizer`.

    Raises:
        TypeError: a word is not a ``str`` or a count not an ``int``.
        ValueError: an empty word, a word holding whitespace or an unpaired
            surrogate, a count below 1; the errors of :func:`train_wordpiece`.
        TrainingCancelled: raised by ``progress``.

    >>> tok = train_wordpiece_from_counts({"hug": 2, "hugs": 1}, 8, special_tokens=["[UNK]"])
    >>> tok.vocab == train_wordpiece("hug hugs hug", 8, special_tokens=["[UNK]"]).vocab
    True
    """
    specials = validate_special_tokens(special_tokens)
    check_options(vocab_size, specials, unk_token, continuing_subword_prefix, max_input_chars_per_word)
    counts: dict[str, int] = {}
    for w, c in word_counts.items():
        check_word_count(w, c)
        if c < 1:
            raise ValueError(f"the count of word {w!r:.40} is {c}; counts must be at least 1")
        if not w or _SPACE.search(w):
            raise ValueError(f"{w!r:.40} is not a word: WordPiece words are non-empty and hold no whitespace")
        err = surrogate_error(w)
        if err is not None:
            raise err
        counts[w] = c
    if not isinstance(special_occurrences, int) or special_occurrences < 0:
        raise ValueError(f"special_occurrences must be an int >= 0, got {special_occurrences!r}")
    ticker = Ticker(progress)
    return _train_counted(
        counts,
        special_occurrences,
        0.0,
        vocab_size,
        specials,
        lowercase,
        continuing_subword_prefix,
        unk_token,
        max_input_chars_per_word,
        ticker,
        progress,
        name,
    )


def _train_counted(
    counts: dict[str, int],
    n_special: int,
    count_seconds: float,
    vocab_size: int,
    specials: tuple[str, ...],
    lowercase: bool,
    prefix: str,
    unk_token: str,
    max_input_chars_per_word: int,
    ticker: Ticker,
    progress: ProgressCallback | None,
    name: str | None,
) -> WordPieceTokenizer:
    """Train on counted words (in order of first appearance): the alphabet, the seeding and the merge loop."""
    t1 = time.perf_counter()
    table = _WordTable.from_counts(counts, specials, prefix)
    n_base = len(table.strs)
    if vocab_size < n_base:
        raise VocabSizeTooSmall(
            f"vocab_size {vocab_size} is below the initial vocabulary: WordPiece on this text needs at least "
            f"{n_base} ({len(specials)} special tokens + {n_base - len(specials)} alphabet tokens: {table.n_firsts} "
            f"word-initial characters and {table.n_inners} {prefix}-prefixed inner characters)",
            n_base,
        )
    ticker.tick("merge", 0, vocab_size - n_base)  # seeding counts as the merge phase's 0
    initial_tokens = n_special + table.initial_tokens
    # The loop makes hundreds of thousands of small containers (sets, dicts, heap entries) and frees
    # none in cycles: the cyclic garbage collector would only rescan them, so it is off meanwhile.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if merge_engine(len(table.freqs), bool(table.lens.size) and int(table.lens.max()) > _LONG_WORD) == "compiled":
            steps = _compiled_merge_loop(table, prefix, vocab_size, initial_tokens, progress, ticker)
        else:
            steps = _merge_loop(table, prefix, vocab_size, initial_tokens, progress, ticker)
    finally:
        if gc_was_enabled:
            gc.enable()
    info = TrainingInfo(
        requested_vocab_size=vocab_size,
        pretokens=sum(counts.values()),
        unique_pretokens=len(counts),
        special_occurrences=n_special,
        initial_tokens=initial_tokens,
        count_seconds=count_seconds,
        merge_seconds=time.perf_counter() - t1,
    )
    strs = table.strs
    if len(strs) < vocab_size:
        info.stop_reason = (
            f"training stopped at {len(strs)} tokens instead of {vocab_size}: after {len(steps)} merges every "
            "word of the training text is a single token, so no pair is left to merge (a longer or more varied "
            "text gives more merges)"
        )
    return WordPieceTokenizer.from_parts(
        tokens=strs,
        special_tokens=specials,
        unk_token=unk_token,
        prefix=prefix,
        lowercase=lowercase,
        max_input_chars_per_word=max_input_chars_per_word,
        name=name or ("WordPiece (lower-cased)" if lowercase else "WordPiece"),
        base_size=n_base,
        trace=steps,
        training=info,
        train_words=(counts, n_special),
    )


_LONG_WORD = 256
"""Words of more than this many characters are trained on as linked lists of positions (:class:`LinkedWords`)."""

_NONE = 1 << 100
"""The first-occurrence key of a pair with no occurrence in a part of the words: after every real key."""


@dataclass(slots=True)
class _WordTable:
    """The words of a training run in their initial segmentation: what the merge loop starts from.

    ``strs`` is the initial vocabulary (special tokens, then the alphabet sorted
    by code point); the words of two characters or more, in order of first
    appearance, are ``flat`` (their token ids, one per character, concatenated)
    with each word's start and length in ``starts``/``lens`` (:meth:`word_lists`
    gives them as lists), ``freqs`` their counts; ``tf`` each token's frequency
    (weighted by word counts).
    """

    strs: list[str]
    tlen: list[int]
    freqs: list[int]
    tf: list[int]
    initial_tokens: int  # tokens of the words before merging (weighted)
    n_specials: int
    n_firsts: int
    n_inners: int
    flat: np.ndarray
    starts: np.ndarray
    lens: np.ndarray

    @classmethod
    def from_counts(cls, counts: dict[str, int], specials: tuple[str, ...], prefix: str) -> _WordTable:
        """Split each word into characters (``##`` on every one but the first) and number the alphabet."""
        lens = np.fromiter(map(len, counts), dtype=np.int64, count=len(counts))
        cnt = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        cps = np.frombuffer("".join(counts).encode("utf-32-le"), dtype=np.uint32)
        starts = np.cumsum(lens) - lens
        inner = np.ones(cps.size, dtype=bool)
        inner[starts] = False
        firsts, inners = np.unique(cps[~inner]), np.unique(cps[inner])
        alphabet = sorted([*map(chr, firsts.tolist()), *(prefix + chr(c) for c in inners.tolist())])
        strs = [*specials, *alphabet]
        ids = {s: i for i, s in enumerate(alphabet, len(specials))}
        tok = np.empty(cps.size, dtype=np.int64)
        if cps.size:
            first_ids = np.array([ids[chr(c)] for c in firsts.tolist()], dtype=np.int64)
            inner_ids = np.array([ids[prefix + chr(c)] for c in inners.tolist()], dtype=np.int64)
            tok[~inner] = first_ids[np.searchsorted(firsts, cps[~inner])]
            tok[inner] = inner_ids[np.searchsorted(inners, cps[inner])] if inners.size else 0
        weights = np.repeat(cnt, lens)
        tf = np.bincount(tok, weights=weights, minlength=len(strs)).astype(np.int64).tolist()  # exact below 2**53
        multi = lens > 1  # one-character words hold no pair
        m_starts, m_lens = starts[multi], lens[multi]
        return cls(
            strs=strs,
            tlen=[len(s) for s in specials] + [1] * len(alphabet),
            freqs=cnt[multi].tolist(),
            tf=tf,
            initial_tokens=int(lens @ cnt),
            n_specials=len(specials),
            n_firsts=int(firsts.size),
            n_inners=int(inners.size),
            flat=tok,
            starts=m_starts,
            lens=m_lens,
        )

    def word_lists(self) -> list[list[int]]:
        """Each word of two characters or more as a list of token ids (what the Python loop rewrites)."""
        shared = list(range(len(self.strs)))  # one int object per token id, shared by every list
        flat = list(map(shared.__getitem__, self.flat.tolist()))
        return [flat[s : s + n] for s, n in zip(self.starts.tolist(), self.lens.tolist(), strict=True)]

    def pair_arrays(self, shift: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every adjacent pair of the words up to :data:`_LONG_WORD` characters, counted at once with numpy.

        Returns:
            ``(keys, counts, firsts, rows, row_words)``: the distinct pairs
            (``left << shift | right``, ascending), each one's count weighted by
            word counts and first occurrence (``word index << 40 | character
            offset``); and one row per (pair, word holding it): the pair's index
            in ``keys`` and the word's index in ``words`` (rows grouped by pair,
            words ascending).  The per-word version, for one word's pairs, is
            :func:`_pair_census`.
        """
        short = np.flatnonzero(self.lens <= _LONG_WORD)
        lens, starts = self.lens[short], self.starts[short]
        npairs = lens - 1
        total = int(npairs.sum())
        wid = np.repeat(short, npairs)
        off = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(npairs) - npairs, npairs)  # = character offset
        at = np.repeat(starts, npairs) + off
        codes = self.flat[at] << shift | self.flat[at + 1]
        del at
        order = np.argsort(codes, kind="stable")  # stable: (word, offset) ascending within each pair
        codes, wid, off = codes[order], wid[order], off[order]
        del order
        bounds = np.flatnonzero(np.diff(codes, prepend=codes[:1] + 1))
        totals = np.add.reduceat(np.asarray(self.freqs, dtype=np.int64)[wid], bounds) if total else bounds
        firsts = wid[bounds] << _FIRST_SHIFT | off[bounds]
        del off
        distinct = np.ones(total, dtype=bool)  # the first row of each (pair, word)
        distinct[1:] = (codes[1:] != codes[:-1]) | (wid[1:] != wid[:-1])
        keys = codes[bounds]
        del codes
        heads = np.zeros(total, dtype=np.int32)
        heads[bounds] = 1
        group = np.cumsum(heads, dtype=np.int64)[distinct] - 1  # each row's pair index
        return keys, totals, firsts, group, wid[distinct]

    def pair_census(self, shift: int) -> tuple[dict[int, int], dict[int, set[int]], dict[int, int]]:
        """:meth:`pair_arrays` as the Python loop keeps them: ``(pf, where, first)`` dicts by pair.

        ``pf``: pair -> count weighted by word counts; ``where``: pair -> the
        set of indices (into ``words``) of the words holding it; ``first``: pair ->
        its first occurrence as ``word index << 40 | character offset``.
        """
        keys, totals, firsts, rows, row_words = self.pair_arrays(shift)
        keys_list = keys.tolist()
        edges = [*np.flatnonzero(np.diff(rows, prepend=-1)).tolist(), rows.size]
        shared = list(range(self.lens.size))  # one int object per word, shared by every set (not one per row)
        flat_wid = list(map(shared.__getitem__, row_words.tolist()))
        where = {q: set(flat_wid[lo:hi]) for q, lo, hi in zip(keys_list, edges, edges[1:], strict=False)}
        pf = dict(zip(keys_list, totals.tolist(), strict=True))
        return pf, where, dict(zip(keys_list, firsts.tolist(), strict=True))


def _pair_census(w: list[int], tlen: list[int], shift: int) -> tuple[dict[int, int], dict[int, int]]:
    """The pairs of one word: ``({pair: occurrences}, {pair: character offset of its first occurrence})``."""
    n: dict[int, int] = {}
    f: dict[int, int] = {}
    prev = w[0]
    off = 0
    for t in w[1:]:
        q = prev << shift | t
        if q in n:
            n[q] += 1
        else:
            n[q] = 1
            f[q] = off
        off += tlen[prev]
        prev = t
    return n, f


def _pairs_by_token(pairs: Iterable[int], shift: int) -> dict[int, set[int]]:
    """Each token -> the set of ``pairs`` (``left << shift | right``) it is part of, grouped with numpy."""
    objs = list(pairs)  # the sets hold these int objects (the pair-count dict's keys), not copies
    keys = np.array(objs, dtype=np.int64)
    out: dict[int, set[int]] = {}
    for side in (keys >> shift, keys & ((1 << shift) - 1)):
        order = np.argsort(side, kind="stable")
        tokens, grouped = side[order], list(map(objs.__getitem__, order.tolist()))
        bounds = np.flatnonzero(np.diff(tokens, prepend=tokens[:1] - 1)).tolist() if tokens.size else []
        edges = [*bounds, len(grouped)]
        for t, lo, hi in zip(tokens[bounds].tolist(), edges, edges[1:], strict=False):
            s = out.get(t)
            if s is None:
                out[t] = set(grouped[lo:hi])
            else:
                s.update(grouped[lo:hi])
    return out


def _merge_word(w: list[int], a: int, b: int, m: int) -> tuple[list[int], int]:
    """``w`` with every ``(a, b)`` replaced by ``m``, left to right without overlaps; and the replacements made.

    The rewrite of :func:`bpe_core.textbook.wordpiece.train` (and
    :meth:`bpe_core.linked_words.LinkedWords.merge` on a linked word).
    """
    new: list[int] = []
    n = len(w)
    i = 0
    k = 0
    while i < n:
        if w[i] == a and i + 1 < n and w[i + 1] == b:
            new.append(m)
            i += 2
            k += 1
        else:
            new.append(w[i])
            i += 1
    return new, k


class _LongWords(LinkedWords):
    """The long words of a training run (:class:`~bpe_core.linked_words.LinkedWords`, ordered), with first occurrences.

    ``wids[k]`` is the index in ``words`` of the ``k``-th long word.  A pair's
    first occurrence among them is the first live entry of its position heap.
    """

    __slots__ = ("wids",)

    def __init__(self, words: Sequence[list[int]], wids: Sequence[int], counts: Sequence[int], shift: int) -> None:
        super().__init__(words, counts, shift, ordered=True)
        self.wids = list(wids)

    def first(self, q: int) -> int:
        """The first live occurrence of pair ``q`` as ``word index << 40 | character offset``, or :data:`_NONE`."""
        p = self.first_position(q)
        if p is None:
            return _NONE
        k = bisect_right(self.starts, p) - 1
        return self.wids[k] << _FIRST_SHIFT | (p - self.starts[k])  # a long word's tokens start one character each


class _MergeLoop:
    """WordPiece's incremental merge loop over a :class:`_WordTable`: the state and its named steps.

    Exact scores: with ``T`` the total token count (an upper bound of every
    frequency), two different scores ``p/q`` differ by more than ``1/T**4``, so
    ``(p << K) // q`` with ``K = 4 * bitlen(T) + 1`` is an integer with the same
    order as the exact scores.  A pair's key orders as ``(-score_key, first)``
    where ``first`` (word index << 40 | character offset) is the pair's first
    occurrence, packed in one ``int`` (:meth:`key`); a heap entry is the key and
    the pair.  An entry is acted on only when its key still holds (lazy
    invalidation), and a pair gets a new entry whenever its true key improves.

    Words of up to :data:`_LONG_WORD` characters are lists of token ids,
    rewritten whole when they hold the merged pair (``where``: pair -> words,
    ``first_s``: pair -> first occurrence among them); longer words live in a
    :class:`_LongWords` whose merges touch only the pair's occurrences.  A
    pair's first occurrence is the earlier of the two parts' firsts.

    One :meth:`step` is: :meth:`pop_best`, :meth:`new_token`, :meth:`merge_words`
    (and the long words' :meth:`~bpe_core.linked_words.LinkedWords.merge`),
    :meth:`apply_delta`, :meth:`refresh_firsts`, the part frequencies, :meth:`rekey`.
    """

    def __init__(
        self, table: _WordTable, prefix: str, vocab_size: int, initial_tokens: int, tick_now: Callable[[], None]
    ) -> None:
        self.words, self.freqs, self.strs = table.word_lists(), table.freqs, table.strs
        self.tlen, self.tf = table.tlen, table.tf
        self.piece_ids = {s: i for i, s in enumerate(table.strs) if i >= table.n_specials}  # not the specials
        self.plen = len(prefix)
        self.shift = shift = max(vocab_size, 2).bit_length()
        self.mask = (1 << shift) - 1
        self.big_k = 4 * max(initial_tokens, 1).bit_length() + 1
        self.tick_now = tick_now
        self.pf, self.where, self.first_s = table.pair_census(shift)
        self.longs: _LongWords | None = None
        long_ids = np.flatnonzero(table.lens > _LONG_WORD).tolist()
        if long_ids:
            tick_now()
            words = self.words
            self.longs = _LongWords([words[i] for i in long_ids], long_ids, [self.freqs[i] for i in long_ids], shift)
            for wi in long_ids:
                words[wi] = []  # the long words live in ``longs`` now
            pf = self.pf
            for q, c in self.longs.seed().items():
                pf[q] = pf.get(q, 0) + c
        self.by_tok = _pairs_by_token(self.pf, shift)  # token -> live pairs it is part of
        self.fbits = fbits = len(self.words).bit_length() + _FIRST_SHIFT  # a first occurrence fits in it
        self.qbits = qbits = 2 * shift
        tf, big_k, mask, first_of = self.tf, self.big_k, self.mask, self.first_of
        self.pushed: dict[int, int] = {  # pair -> its newest entry's key, as key(q, c)
            q: -((c << big_k) // (tf[q >> shift] * tf[q & mask])) << fbits | first_of(q) for q, c in self.pf.items()
        }
        self.heap = [k << qbits | q for q, k in self.pushed.items()]
        heapq.heapify(self.heap)

    def key(self, q: int, c: int) -> int:
        """Pair ``q``'s heap key at count ``c``: ``-score_key << fbits | first occurrence`` (smallest is best).

        One ``int`` orders as the tuple ``(-score_key, first)`` (``0 <= first <
        2**fbits``), and a heap entry is that key ``<< qbits | q``: plain integers
        compare faster than tuples.
        """
        tf, shift = self.tf, self.shift
        return -((c << self.big_k) // (tf[q >> shift] * tf[q & self.mask])) << self.fbits | self.first_of(q)

    def first_of(self, q: int) -> int:
        """Pair ``q``'s first occurrence over all words (``word index << 40 | character offset``)."""
        f = self.first_s.get(q, _NONE)
        longs = self.longs
        if longs is not None and q in longs.pos:
            return min(f, longs.first(q))
        return f

    def pop_best(self) -> tuple[int, int] | None:
        """Pop the best pair: the smallest heap entry whose key is still its pair's true key; ``(pair, count)``."""
        heap, pf_get, pushed, tf = self.heap, self.pf.get, self.pushed, self.tf
        shift, mask, big_k, fbits, qbits = self.shift, self.mask, self.big_k, self.fbits, self.qbits
        first_get, longs = self.first_s.get, self.longs
        long_pos = longs.pos if longs is not None else {}
        qmask = (1 << qbits) - 1
        heappop, heappush = heapq.heappop, heapq.heappush
        while heap:
            entry = heappop(heap)
            q = entry & qmask
            c = pf_get(q)
            if c is None:
                continue
            k = entry >> qbits
            f = first_get(q, _NONE)
            if q in long_pos:
                f = min(f, longs.first(q))
            true = -((c << big_k) // (tf[q >> shift] * tf[q & mask])) << fbits | f  # as key(q, c)
            if true == k:
                return q, c
            if pushed.get(q) == k:  # its newest entry is gone: queue the true key
                heappush(heap, true << qbits | q)
                pushed[q] = true
        return None

    def new_token(self, a: int, b: int) -> tuple[int, str, bool]:
        """The id and string of ``a + b`` (without ``b``'s prefix), added to the vocabulary unless already there."""
        merged = self.strs[a] + self.strs[b][self.plen :]
        m = self.piece_ids.get(merged)
        if m is not None:
            return m, merged, False
        m = len(self.strs)
        self.strs.append(merged)
        self.tlen.append(self.tlen[a] + self.tlen[b])
        self.tf.append(0)
        self.piece_ids[merged] = m
        return m, merged, True

    def forget(self, best: int, a: int, b: int) -> list[int] | set[int]:
        """Drop the merged pair from every table; returns the short words that held it."""
        del self.pf[best]
        del self.pushed[best]
        self.first_s.pop(best, None)
        self.by_tok[a].discard(best)
        self.by_tok[b].discard(best)
        return self.where.pop(best, ())

    def merge_words(
        self, affected: Iterable[int], best: int, a: int, b: int, m: int
    ) -> tuple[dict[int, int], set[int], set[int], int]:
        """Rewrite the short words holding ``best``; each word's pairs before and after give the changes.

        Returns:
            ``(delta, touched, dirty, replaced)``: pair -> change of its count;
            pairs whose first occurrence moved within its word; pairs that left
            the word of their first occurrence; weighted replacements.
        """
        words, freqs, tlen, shift = self.words, self.freqs, self.tlen, self.shift
        where, first_s = self.where, self.first_s
        fs = _FIRST_SHIFT
        delta: dict[int, int] = {}
        get = delta.get
        touched: set[int] = set()
        dirty: set[int] = set()
        replaced = 0
        for wi in affected:
            w = words[wi]
            c = freqs[wi]
            old_n, old_f = _pair_census(w, tlen, shift)
            new, k = _merge_word(w, a, b, m)
            words[wi] = new
            replaced += c * k
            new_n, new_f = _pair_census(new, tlen, shift) if len(new) > 1 else ({}, {})
            wkey = wi << fs
            for q, oc in old_n.items():
                if q == best:
                    continue
                nc = new_n.get(q)
                if nc is None:
                    delta[q] = get(q, 0) - c * oc
                    where[q].discard(wi)
                    if first_s[q] >> fs == wi:
                        dirty.add(q)
                else:
                    if nc != oc:
                        delta[q] = get(q, 0) + c * (nc - oc)
                    if new_f[q] != old_f[q] and first_s[q] >> fs == wi:
                        first_s[q] = wkey | new_f[q]
                        touched.add(q)
            for q, nc in new_n.items():
                if q in old_n:
                    continue
                delta[q] = get(q, 0) + c * nc
                fk = wkey | new_f[q]
                s = where.get(q)
                if s is None:
                    where[q] = {wi}
                    first_s[q] = fk
                else:
                    s.add(wi)
                    if q not in dirty and fk < first_s.get(q, _NONE):
                        first_s[q] = fk
                        touched.add(q)
        return delta, touched, dirty, replaced

    def apply_delta(self, delta: dict[int, int], dirty: set[int]) -> None:
        """Move the pair counts by ``delta``; a pair whose count reaches 0 leaves every table."""
        pf, where, first_s, pushed, by_tok, longs = (
            self.pf,
            self.where,
            self.first_s,
            self.pushed,
            self.by_tok,
            self.longs,
        )
        shift, mask = self.shift, self.mask
        for q, d in delta.items():
            if d == 0:
                if longs is not None and q not in pf:  # made and unmade within this merge (runs of one token)
                    longs.pos.pop(q, None)
                continue
            old_c = pf.get(q)
            nc = (old_c or 0) + d
            if nc > 0:
                pf[q] = nc
                if old_c is None:
                    by_tok.setdefault(q >> shift, set()).add(q)
                    by_tok.setdefault(q & mask, set()).add(q)
            else:  # the pair is gone from every word
                pf.pop(q, None)
                where.pop(q, None)
                first_s.pop(q, None)
                pushed.pop(q, None)
                dirty.discard(q)
                if longs is not None:
                    longs.pos.pop(q, None)
                by_tok[q >> shift].discard(q)
                by_tok[q & mask].discard(q)

    def refresh_firsts(self, dirty: set[int]) -> None:
        """Find again the first occurrence (among the short words) of each pair that left its first word."""
        where, first_s, words, tlen, shift, mask = (
            self.where,
            self.first_s,
            self.words,
            self.tlen,
            self.shift,
            self.mask,
        )
        for q in dirty:
            s = where[q]
            if not s:  # left every short word; its long-word occurrences remain
                first_s.pop(q, None)
                continue
            wmin = min(s)
            w = words[wmin]
            x, y = q >> shift, q & mask
            off = 0
            for j in range(len(w) - 1):
                if w[j] == x and w[j + 1] == y:
                    break
                off += tlen[w[j]]
            first_s[q] = wmin << _FIRST_SHIFT | off

    def rekey(self, candidates: set[int]) -> None:
        """Queue a new entry for each pair of ``candidates`` whose true key beats its newest entry's."""
        pf_get, tf, pushed, heap = self.pf.get, self.tf, self.pushed, self.heap
        shift, mask, big_k, fbits, qbits = self.shift, self.mask, self.big_k, self.fbits, self.qbits
        first_get, longs = self.first_s.get, self.longs
        long_pos = longs.pos if longs is not None else {}
        pushed_get = pushed.get
        heappush = heapq.heappush
        for q in candidates:
            c = pf_get(q)
            if c is None:
                continue
            neg = -((c << big_k) // (tf[q >> shift] * tf[q & mask])) << fbits
            old = pushed_get(q)
            if old is not None and neg > old:
                continue  # a lower score: the queued entry is acted on only after re-checking
            k = neg | first_get(q, _NONE)  # as key(q, c)
            if q in long_pos:
                k = neg | min(k & ((1 << fbits) - 1), longs.first(q))
            if old is None or k < old:
                pushed[q] = k
                heappush(heap, k << qbits | q)

    def step(self, rank: int, tokens: int) -> WordPieceMerge | None:
        """Do merge ``rank`` on a segmentation of ``tokens`` tokens; ``None`` when no pair is left."""
        found = self.pop_best()
        if found is None:
            return None
        best, pair_count = found
        a, b = best >> self.shift, best & self.mask
        tf = self.tf
        left_freq, right_freq = tf[a], tf[b]
        m, merged, added = self.new_token(a, b)
        affected = self.forget(best, a, b)
        delta, touched, dirty, replaced = self.merge_words(affected, best, a, b, m)
        if self.longs is not None:
            replaced += self.longs.merge(a, b, m, delta, self.tick_now)
        self.apply_delta(delta, dirty)
        self.refresh_firsts(dirty)
        tf[a] -= replaced
        tf[b] -= replaced  # twice for a pair of one token
        tf[m] += replaced
        # re-key every pair whose count, first occurrence or part frequencies changed
        candidates = set(delta)
        candidates |= touched
        candidates |= dirty
        for t in (a, b, m):
            s = self.by_tok.get(t)
            if s:
                candidates |= s
        self.rekey(candidates)
        if len(self.heap) > 4 * len(self.pf) + 100_000:  # drop stale entries now and then
            self.heap = [k << self.qbits | q for q, k in self.pushed.items()]
            heapq.heapify(self.heap)
        strs = self.strs
        return WordPieceMerge(
            rank,
            a,
            b,
            m,
            strs[a],
            strs[b],
            merged,
            pair_count,
            left_freq,
            right_freq,
            replaced,
            tokens - replaced,
            added,
        )


COMPILED_MIN_WORDS = 1_000
"""Tables with at least this many words of two characters or more may use the compiled merge loop.

Below it (a page of text) the Python loop runs, with nothing to load.  Measured
on prefixes of the 1 MB benchmark corpus, vocabulary 3,000, merge seconds Python
/ compiled (load 7): 1,320 words 0.36 / 0.08, 4,755: 0.38 / 0.08, 14,221:
0.93 / 0.15."""


def merge_engine(n_words: int, has_long_words: bool) -> str:
    """Which merge loop trains a table: ``"compiled"`` (:mod:`bpe_core.wordpiece.wp_kernel`) or ``"python"``.

    Both give identical merges and traces.  ``"compiled"`` needs no word over
    :data:`_LONG_WORD` characters (those train on linked lists, in Python) and,
    unless :data:`bpe_core.counting.KERNELS_ENV` says ``compiled``, at least
    :data:`COMPILED_MIN_WORDS` words and the kernels' library built (a first
    large training on a machine runs the Python loop while it builds: see
    :func:`bpe_core.counting.kernels_ready`).

    Args:
        n_words: words of two characters or more.
        has_long_words: whether any is longer than :data:`_LONG_WORD` characters.

    Returns:
        ``"compiled"`` or ``"python"``.

    Raises:
        ValueError: :data:`bpe_core.counting.KERNELS_ENV` holds another value.
    """
    mode = kernels_mode()
    if mode == "python" or has_long_words or (mode == "auto" and n_words < COMPILED_MIN_WORDS):
        return "python"
    return "compiled" if kernels_ready(mode == "compiled") else "python"


def _compiled_merge_loop(
    table: _WordTable,
    prefix: str,
    vocab_size: int,
    initial_tokens: int,
    progress: ProgressCallback | None,
    ticker: Ticker,
) -> list[WordPieceMerge]:
    """:func:`_merge_loop` run by :class:`bpe_core.wordpiece.wp_kernel.WordPieceMergeLoop` (same result).

    The kernel does the merges; this side names the new tokens (and tells the
    kernel whether a merged string exists already when its hash says it may),
    builds the trace and reports progress.
    """
    from . import wp_kernel

    shift = max(vocab_size, 2).bit_length()
    strs, plen, n_specials = table.strs, len(prefix), table.n_specials
    alphabet = strs[n_specials:]
    tokens = (
        table.tf,
        table.tlen,
        np.array([False] * n_specials + [len(s) == 1 for s in alphabet]),
        [-1] * n_specials + [ord(s[-1]) for s in alphabet],
    )
    loop = wp_kernel.WordPieceMergeLoop(
        table.flat, table.starts, table.lens, table.freqs, table.pair_arrays(shift), shift, tokens, vocab_size
    )
    piece_ids = {s: i for i, s in enumerate(strs) if i >= n_specials}
    n_wanted = vocab_size - len(strs)
    report_every = max(1, n_wanted // 200)
    steps: list[WordPieceMerge] = []
    tokens_now = initial_tokens
    while len(strs) < vocab_size:
        status = loop.run(report_every)
        for a, b, m, count, fa, fb, replaced, added in loop.out[:, len(steps) : loop.done].T.tolist():
            merged = strs[a] + strs[b][plen:]
            if added:
                strs.append(merged)
                piece_ids[merged] = m
            tokens_now -= replaced
            steps.append(
                WordPieceMerge(len(steps), a, b, m, strs[a], strs[b], merged, count, fa, fb, replaced, tokens_now,
                               bool(added))
            )  # fmt: skip
        ticker.now("merge", min(len(strs) - (vocab_size - n_wanted), n_wanted), n_wanted)
        if status == wp_kernel.NEEDS_TOKEN:
            a, b = loop.pending_pair()
            loop.resolve(piece_ids.get(strs[a] + strs[b][plen:], len(strs)))
        elif status == wp_kernel.NO_PAIR_LEFT:
            break
    if progress is not None:
        progress("merge", len(strs) - (vocab_size - n_wanted), n_wanted)
    return steps


def _merge_loop(
    table: _WordTable,
    prefix: str,
    vocab_size: int,
    initial_tokens: int,
    progress: ProgressCallback | None,
    ticker: Ticker | None = None,
) -> list[WordPieceMerge]:
    """Merge until ``vocab_size`` tokens or no pair is left (:class:`_MergeLoop`); the trace, in rank order.

    Appends the new tokens to ``table.strs`` in place; reports ``progress("merge",
    done, wanted)`` about 200 times, and ticks ``ticker`` after each merge (and
    inside the long words' merges), so Cancel works.
    """
    ticker = ticker or Ticker(progress)
    strs = table.strs
    n_wanted = vocab_size - len(strs)
    rank = 0
    tick = ticker.tick

    def tick_now() -> None:
        tick("merge", rank, n_wanted)

    loop = _MergeLoop(table, prefix, vocab_size, initial_tokens, tick_now)
    steps: list[WordPieceMerge] = []
    tokens = initial_tokens
    report_every = max(1, n_wanted // 200)
    while len(strs) < vocab_size:
        step = loop.step(rank, tokens)
        if step is None:
            break  # no pair left
        tokens = step.tokens_after
        steps.append(step)
        rank += 1
        done = min(len(strs) - (vocab_size - n_wanted), n_wanted)
        if progress is not None and rank % report_every == 0:
            ticker.now("merge", done, n_wanted)
        else:
            tick("merge", done, n_wanted)
    if progress is not None:
        progress("merge", len(strs) - (vocab_size - n_wanted), n_wanted)
    return steps


def train_from_spec(text, spec, *, progress=None, num_workers=None) -> WordPieceTokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"wordpiece"`` (``num_workers`` is not used)."""
    del num_workers  # WordPiece counts words in this process
    return train_wordpiece(text, spec.vocab_size, spec.special_tokens, lowercase=spec.lowercase, progress=progress)
