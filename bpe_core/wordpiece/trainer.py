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
positions with a pair -> positions index (:class:`_LongWords`), so a merge
costs the occurrences it replaces, not the word's length: one 100 KB word
trains to 1,000 tokens in a fraction of a second, not 35 s.
The vocabulary and merges must equal the textbook's
:func:`bpe_core.textbook.wordpiece.train` (tests/engine/test_wordpiece.py).
"""

from __future__ import annotations

import heapq
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence

import regex

from ..interface import ProgressCallback, TrainingInfo
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
    firsts: set[str] = set()
    inners: set[str] = set()
    for w in counts:
        firsts.add(w[0])
        if len(w) > 1:
            inners.update(w[1:])
    alphabet = sorted(firsts | {prefix + c for c in inners})
    n_base = len(specials) + len(alphabet)
    if vocab_size < n_base:
        raise ValueError(
            f"vocab_size {vocab_size} is below the initial vocabulary: WordPiece on this text needs at least "
            f"{n_base} ({len(specials)} special tokens + {len(alphabet)} alphabet tokens: {len(firsts)} "
            f"word-initial characters and {len(inners)} {prefix}-prefixed inner characters)"
        )
    strs: list[str] = list(specials) + alphabet
    piece_ids: dict[str, int] = {s: len(specials) + i for i, s in enumerate(alphabet)}
    tlen = [len(s) for s in specials] + [1] * len(alphabet)

    words: list[list[int]] = []
    freqs: list[int] = []
    tf = [0] * len(strs)
    initial_tokens = n_special
    for k, (w, c) in enumerate(counts.items()):
        if not k & 1023 or len(w) > 4096:
            ticker.tick("merge", 0, vocab_size - len(strs))  # seeding: counts the merge phase's 0
        ids = [piece_ids[w[0]]] + [piece_ids[prefix + ch] for ch in w[1:]]
        for t in ids:
            tf[t] += c
        initial_tokens += len(ids) * c
        if len(ids) > 1:
            words.append(ids)
            freqs.append(c)

    steps = _merge_loop(words, freqs, strs, tlen, tf, piece_ids, prefix, vocab_size, initial_tokens, progress, ticker)
    info = TrainingInfo(
        requested_vocab_size=vocab_size,
        pretokens=sum(counts.values()),
        unique_pretokens=len(counts),
        special_occurrences=n_special,
        initial_tokens=initial_tokens,
        count_seconds=count_seconds,
        merge_seconds=time.perf_counter() - t1,
    )
    if len(strs) < vocab_size:
        info.stop_reason = (
            f"training stopped at {len(strs)} tokens instead of {vocab_size}: after {len(steps)} merges every "
            "word of the training text is a single token, so no pair is left to merge (a longer or more varied "
            "text gives more merges)"
        )
    tok = WordPieceTokenizer.from_parts(
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
    return tok


_LONG_WORD = 256
"""Words of more than this many characters are trained on as linked lists of positions (:class:`_LongWords`)."""

_NONE = 1 << 100
"""The first-occurrence key of a pair with no occurrence in a part of the words: after every real key."""

_TICK_EVERY = 4096
"""Occurrences (or characters, when seeding) handled between two progress ticks inside one long word."""


class _LongWords:
    """The long words of a training run, as doubly linked lists with a pair -> positions index.

    A word of 100 KB (a base64 line, minified code, a run of one letter)
    holds each frequent pair hundreds of times; rewriting it per merge costs its
    whole length per merge (quadratic overall).  Here every character of every
    long word has a *position* (its offset in their concatenation, the words
    in order of first appearance): ``tok[p]`` is the token starting at ``p``
    (``-1`` once merged into its left neighbour), ``nxt``/``prv`` link the live
    positions of one word, and ``pos[pair]`` is a min-heap of the positions where
    ``pair`` started when it was made.  A merge visits only those positions, so
    its cost is proportional to the occurrences it touches.  Entries go stale
    when a neighbour merges; a visit checks each against the lists and skips the
    stale ones.  A stale entry never becomes live again (the tokens at a position
    and at its right neighbour only grow), so the first live entry of a heap is
    the pair's first occurrence in the long words: WordPiece's tie-break.
    This is the structure of :mod:`bpe_core.bpe.trainer`'s long pre-tokens,
    with WordPiece's token ids and first occurrences.
    """

    __slots__ = ("nxt", "pos", "prv", "starts", "tok", "wgt", "wids")

    def __init__(self, words: Sequence[list[int]], wids: Sequence[int], counts: Sequence[int]) -> None:
        tok: list[int] = []
        for w in words:
            tok.extend(w)
        n = len(tok)
        self.tok = tok
        # positions, links and weights as machine integers: 8 bytes each instead of an int object per position
        self.nxt = array("q", range(1, n + 1))
        self.prv = array("q", range(-1, n - 1))
        self.wgt = array("q")
        self.starts: list[int] = []
        self.wids = list(wids)
        at = 0
        for w, c in zip(words, counts, strict=True):
            self.starts.append(at)
            self.wgt += array("q", [c]) * len(w)
            at += len(w)
            self.nxt[at - 1] = -1
            self.prv[at - len(w)] = -1
        self.pos: dict[int, list[int]] = {}

    def seed(self, shift: int, tick: Callable[[], None]) -> dict[int, int]:
        """Index every adjacent pair's positions; returns ``{pair: weighted count}`` over the long words."""
        counts: dict[int, int] = {}
        pos, tok, nxt, wgt = self.pos, self.tok, self.nxt, self.wgt
        for start in self.starts:
            c = wgt[start]
            p = start
            r = nxt[p]
            k = 0
            while r >= 0:
                q = tok[p] << shift | tok[r]
                lst = pos.get(q)
                if lst is None:
                    pos[q] = [p]  # positions ascend: each list is a heap already
                    counts[q] = c
                else:
                    lst.append(p)
                    counts[q] += c
                p, r = r, nxt[r]
                k += 1
                if not k % _TICK_EVERY:
                    tick()
            tick()
        return counts

    def first(self, q: int, shift: int) -> int:
        """The first live occurrence of pair ``q`` as ``word index << 40 | character offset``, or :data:`_NONE`."""
        lst = self.pos.get(q)
        if lst is None:
            return _NONE
        tok, nxt = self.tok, self.nxt
        x, y = q >> shift, q & ((1 << shift) - 1)
        while lst:
            p = lst[0]
            r = nxt[p]
            if tok[p] == x and r >= 0 and tok[r] == y:
                k = bisect_right(self.starts, p) - 1
                return self.wids[k] << _FIRST_SHIFT | (p - self.starts[k])
            heapq.heappop(lst)
        del self.pos[q]
        return _NONE

    def merge(self, a: int, b: int, m: int, shift: int, delta: dict[int, int], tick: Callable[[], None]) -> int:
        """Replace every occurrence of ``(a, b)`` by ``m``, left to right; returns the weighted replacements.

        Pairs that lose an occurrence lose its weight in ``delta``, pairs made
        with ``m`` gain it there (their positions are indexed); the pair
        ``(a, b)`` itself is left out of ``delta`` (the merge loop drops it).
        """
        best = a << shift | b
        lst = self.pos.pop(best, None)
        if not lst:
            return 0
        if a == b:
            lst.sort()  # overlapping occurrences: left to right, as the merge of one word does
        tok, nxt, prv, wgt, pos = self.tok, self.nxt, self.prv, self.wgt, self.pos
        get = delta.get
        heappush = heapq.heappush
        replaced = 0
        ms = m << shift
        bs = b << shift
        visited = 0
        for p in lst:
            visited += 1
            if not visited % _TICK_EVERY:
                tick()
            if tok[p] != a:
                continue
            r = nxt[p]
            if r < 0 or tok[r] != b:
                continue
            c = wgt[p]
            replaced += c
            x = prv[p]
            if x >= 0:
                tx = tok[x] << shift
                old = tx | a
                if old != best:
                    delta[old] = get(old, 0) - c
                made = tx | m
                delta[made] = get(made, 0) + c
                hp = pos.get(made)
                if hp is None:
                    pos[made] = [x]
                else:
                    heappush(hp, x)
            y = nxt[r]
            if y >= 0:
                ty = tok[y]
                old = bs | ty
                if old != best:
                    delta[old] = get(old, 0) - c
                made = ms | ty
                delta[made] = get(made, 0) + c
                hp = pos.get(made)
                if hp is None:
                    pos[made] = [p]
                else:
                    heappush(hp, p)
                prv[y] = p
            tok[p] = m
            tok[r] = -1
            nxt[p] = y
        return replaced


def _merge_loop(
    words: list[list[int]],
    freqs: list[int],
    strs: list[str],
    tlen: list[int],
    tf: list[int],
    piece_ids: dict[str, int],
    prefix: str,
    vocab_size: int,
    initial_tokens: int,
    progress: ProgressCallback | None,
    ticker: Ticker | None = None,
) -> list[WordPieceMerge]:
    """The incremental merge loop; appends new tokens to ``strs``/``tlen``/``tf`` in place.

    Exact scores: with ``T`` the total token count (an upper bound of every
    frequency), two different scores ``p/q`` differ by more than ``1/T**4``, so
    ``(p << K) // q`` with ``K = 4 * bitlen(T) + 1`` is an integer with the same
    order as the exact scores.  Heap entries are ``(-score_key, first, pair)``
    where ``first`` (word index << 40 | character offset) is the pair's first
    occurrence; an entry is acted on only when both still hold (lazy
    invalidation), and a pair gets a new entry whenever its true key improves.

    Words of up to :data:`_LONG_WORD` characters are lists of token ids,
    rewritten whole when they hold the merged pair (``where``: pair -> words,
    ``first_s``: pair -> first occurrence among them); longer words live in a
    :class:`_LongWords` whose merges touch only the pair's occurrences.  A
    pair's first occurrence is the earlier of the two parts' firsts.
    """
    plen = len(prefix)
    shift = max(vocab_size, 2).bit_length()
    mask = (1 << shift) - 1
    big_k = 4 * max(initial_tokens, 1).bit_length() + 1
    fs = _FIRST_SHIFT

    pf: dict[int, int] = {}  # pair -> weighted adjacent count
    where: dict[int, set[int]] = {}  # pair -> short words that hold it (exact)
    first_s: dict[int, int] = {}  # pair -> first occurrence in the short words
    by_tok: dict[int, set[int]] = {}  # token -> live pairs it is part of
    ticker = ticker or Ticker(progress)
    n_wanted = vocab_size - len(strs)
    tick = ticker.tick
    rank = 0

    def tick_now() -> None:
        tick("merge", rank, n_wanted)

    long_ids = [wi for wi, w in enumerate(words) if len(w) > _LONG_WORD]
    for wi, w in enumerate(words):
        if not wi & 1023:
            tick("merge", 0, n_wanted)
        if len(w) > _LONG_WORD:
            continue
        c = freqs[wi]
        prev = w[0]
        off = 0
        for t in w[1:]:
            q = prev << shift | t
            if q in pf:
                pf[q] += c
                where[q].add(wi)
            else:
                pf[q] = c
                where[q] = {wi}
                first_s[q] = wi << fs | off
                by_tok.setdefault(prev, set()).add(q)
                by_tok.setdefault(t, set()).add(q)
            off += tlen[prev]
            prev = t
    longs: _LongWords | None = None
    if long_ids:
        longs = _LongWords([words[i] for i in long_ids], long_ids, [freqs[i] for i in long_ids])
        for wi in long_ids:
            words[wi] = []  # the long words live in ``longs`` now
        for q, c in longs.seed(shift, tick_now).items():
            if q in pf:
                pf[q] += c
            else:
                pf[q] = c
                by_tok.setdefault(q >> shift, set()).add(q)
                by_tok.setdefault(q & mask, set()).add(q)

    if longs is None:
        first_of = first_s.__getitem__
    else:
        long_first = longs.first
        long_pos = longs.pos
        fs_get = first_s.get

        def first_of(q: int) -> int:
            f = fs_get(q, _NONE)
            return min(f, long_first(q, shift)) if q in long_pos else f

    heap = [(-((c << big_k) // (tf[q >> shift] * tf[q & mask])), first_of(q), q) for q, c in pf.items()]
    pushed: dict[int, tuple[int, int]] = {e[2]: (e[0], e[1]) for e in heap}
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop

    steps: list[WordPieceMerge] = []
    tokens = initial_tokens
    report_every = max(1, n_wanted // 200)
    while len(strs) < vocab_size:
        # the best pair: the smallest entry whose key is still its pair's true key
        while heap:
            negn, fk, q = heappop(heap)
            c = pf.get(q)
            if c is None:
                continue
            a, b = q >> shift, q & mask
            true_n = -((c << big_k) // (tf[a] * tf[b]))
            true_f = first_of(q)
            if true_n == negn and true_f == fk:
                break
            if pushed.get(q) == (negn, fk):  # its newest entry is gone: queue the true key
                heappush(heap, (true_n, true_f, q))
                pushed[q] = (true_n, true_f)
        else:
            break  # no pair left
        best = q
        pair_count = c
        left_freq, right_freq = tf[a], tf[b]
        merged = strs[a] + strs[b][plen:]
        m = piece_ids.get(merged)
        added = m is None
        if m is None:
            m = len(strs)
            strs.append(merged)
            tlen.append(tlen[a] + tlen[b])
            tf.append(0)
            piece_ids[merged] = m
        del pf[best]
        del pushed[best]
        first_s.pop(best, None)
        affected = where.pop(best, ())
        by_tok[a].discard(best)
        by_tok[b].discard(best)

        delta: dict[int, int] = {}
        touched: set[int] = set()  # pairs whose first occurrence moved
        dirty: set[int] = set()  # pairs that left the word of their first occurrence
        replaced = 0
        for wi in affected:
            w = words[wi]
            c = freqs[wi]
            n = len(w)
            # the pairs of the word before the merge: count and first offset
            old_n: dict[int, int] = {}
            old_f: dict[int, int] = {}
            prev = w[0]
            off = 0
            for t in w[1:]:
                q = prev << shift | t
                if q in old_n:
                    old_n[q] += 1
                else:
                    old_n[q] = 1
                    old_f[q] = off
                off += tlen[prev]
                prev = t
            # merge left to right, without overlaps
            new: list[int] = []
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
            words[wi] = new
            replaced += c * k
            new_n: dict[int, int] = {}
            new_f: dict[int, int] = {}
            if len(new) > 1:
                prev = new[0]
                off = 0
                for t in new[1:]:
                    q = prev << shift | t
                    if q in new_n:
                        new_n[q] += 1
                    else:
                        new_n[q] = 1
                        new_f[q] = off
                    off += tlen[prev]
                    prev = t
            wkey = wi << fs
            for q, oc in old_n.items():
                if q == best:
                    continue
                nc = new_n.get(q)
                if nc is None:
                    delta[q] = delta.get(q, 0) - c * oc
                    where[q].discard(wi)
                    if first_s[q] >> fs == wi:
                        dirty.add(q)
                else:
                    if nc != oc:
                        delta[q] = delta.get(q, 0) + c * (nc - oc)
                    if new_f[q] != old_f[q] and first_s[q] >> fs == wi:
                        first_s[q] = wkey | new_f[q]
                        touched.add(q)
            for q, nc in new_n.items():
                if q in old_n:
                    continue
                delta[q] = delta.get(q, 0) + c * nc
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
        if longs is not None:
            replaced += longs.merge(a, b, m, shift, delta, tick_now)

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
            first_s[q] = wmin << fs | off

        if a == b:
            tf[a] -= 2 * replaced
        else:
            tf[a] -= replaced
            tf[b] -= replaced
        tf[m] += replaced
        tokens -= replaced

        # re-key every pair whose count, first occurrence or part frequencies changed
        candidates = set(delta)
        candidates |= touched
        candidates |= dirty
        for t in (a, b, m):
            s = by_tok.get(t)
            if s:
                candidates |= s
        for q in candidates:
            c = pf.get(q)
            if c is None:
                continue
            neg = -((c << big_k) // (tf[q >> shift] * tf[q & mask]))
            old = pushed.get(q)
            if old is not None and neg > old[0]:
                continue  # a lower score: the queued entry is acted on only after re-checking
            key = (neg, first_of(q))
            if old is None or key < old:
                pushed[q] = key
                heappush(heap, (neg, key[1], q))

        steps.append(
            WordPieceMerge(
                rank, a, b, m, strs[a], strs[b], merged, pair_count, left_freq, right_freq, replaced, tokens, added
            )
        )
        rank += 1
        if len(heap) > 4 * len(pf) + 100_000:  # drop stale entries now and then
            heap = [(k[0], k[1], q) for q, k in pushed.items()]
            heapq.heapify(heap)
        if progress is not None and rank % report_every == 0:
            ticker.now("merge", min(len(strs) - (vocab_size - n_wanted), n_wanted), n_wanted)
        else:
            tick("merge", min(len(strs) - (vocab_size - n_wanted), n_wanted), n_wanted)
    if progress is not None:
        progress("merge", len(strs) - (vocab_size - n_wanted), n_wanted)
    return steps


def train_from_spec(text, spec, *, progress=None, num_workers=None) -> WordPieceTokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"wordpiece"`` (``num_workers`` is not used)."""
    del num_workers  # WordPiece counts words in this process
    return train_wordpiece(text, spec.vocab_size, spec.special_tokens, lowercase=spec.lowercase, progress=progress)
