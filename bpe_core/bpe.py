"""Byte-level BPE: trainer, encoder/decoder and merge trace.

The algorithm is byte-level byte-pair encoding as in GPT-2 (Radford et al.,
2019) and tiktoken, trained the way Stanford CS336 assignment 1 specifies:

* ids 0-255 are the single bytes (id == byte value), then the special tokens
  in the order given, then one id per merge in merge order;
* training text is split on the special tokens (which are removed), then
  pre-tokenized with a regex, and each pre-token is UTF-8 encoded; merges never
  cross a pre-token boundary;
* each step merges the most frequent adjacent pair over all pre-tokens,
  weighted by their counts; ties go to the lexicographically greatest pair
  compared as ``(bytes_of_left, bytes_of_right)``;
* encoding applies, inside each pre-token, the lowest-rank merge present until
  none applies (leftmost occurrence first).

Training works on the table of distinct pre-tokens with incremental pair
counts, a pair -> pre-tokens index and a max-priority queue with lazy
invalidation; the corpus is never rescanned per merge.
"""

from __future__ import annotations

import base64
import copy
import gc
import heapq
import json
import os
import sys
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from operator import add, mul
from pathlib import Path

import numpy as np

from .counting import DEFAULT_CHUNK_BYTES, count_file, count_files, count_iterable, count_text
from .interface import Algorithm, TrainingCancelled, register_algorithm
from .pretokenize import (
    PATTERNS,
    compile_pattern,
    iter_pretoken_strings,
    pretokenize,
    resolve_pattern,
    split_special,
    surrogate_message,
    validate_special_tokens,
)
from .spans import TokenSpan, display_bytes, spans_from_token_bytes

__all__ = [
    "BPETokenizer",
    "MergeStep",
    "TrainingCancelled",
    "TrainingInfo",
    "train_bpe",
    "train_bpe_from_counts",
]

ProgressCallback = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; ``phase`` is ``"count"`` or ``"merge"``.

A callback may raise :class:`TrainingCancelled` to stop training cleanly."""

_LONG_PIECE = 64  # pre-tokens longer than this many bytes are encoded with a heap


_CACHE_LIMIT = 1 << 20  # pre-tokens cached per tokenizer (the cache is emptied when full)

_NO_RANK = 1 << 62
"""Rank of a pair no merge makes (above every real rank)."""


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge of the training trace.

    Attributes:
        rank: 0-based merge rank (order of learning).
        left_id, right_id: ids of the merged pair.
        new_id: id of the token the merge creates.
        left, right: bytes of the two parts.
        count: the pair's count when it was chosen: adjacent occurrences over all
            pre-tokens, weighted by pre-token frequency (overlapping occurrences,
            as the two ``aa`` pairs in ``aaa``, both count).
        replaced: occurrences actually replaced by the merge (non-overlapping,
            left to right); ``count - replaced`` is the overlap.
        tokens_after: number of tokens the training text has after this merge
            (special tokens count one each).
    """

    rank: int
    left_id: int
    right_id: int
    new_id: int
    left: bytes
    right: bytes
    count: int
    replaced: int
    tokens_after: int

    @property
    def merged(self) -> bytes:
        """Bytes of the new token (``left + right``)."""
        return self.left + self.right


@dataclass(slots=True)
class TrainingInfo:
    """Facts about a training run, for the app's messages and the benchmarks.

    Attributes:
        requested_vocab_size: the vocabulary size asked for.
        pretokens: pre-token occurrences counted (special tokens excluded).
        unique_pretokens: distinct pre-tokens.
        special_occurrences: special-token occurrences removed from the text.
        initial_tokens: tokens of the training text before any merge (its UTF-8
            byte count outside special tokens, plus one per special token).
        count_seconds: wall time spent counting pre-tokens (seconds).
        merge_seconds: wall time spent in the merge loop (seconds).
        stop_reason: ``None`` when the requested size was reached, else why not.
    """

    requested_vocab_size: int
    pretokens: int = 0
    unique_pretokens: int = 0
    special_occurrences: int = 0
    initial_tokens: int = 0
    count_seconds: float = 0.0
    merge_seconds: float = 0.0
    stop_reason: str | None = None


# ---------------------------------------------------------------------------
# training


_INV_TABLE = {i: chr(256 - i) for i in range(256)}
_KEY_END = chr(257)


def _desc_key(data: bytes) -> str:
    """A string whose ascending order is the descending lexicographic order of ``data``.

    Each byte b becomes chr(256 - b) and the string ends with chr(257), which is
    greater than every mapped byte, so a proper prefix sorts after its extensions.
    Concatenating two keys gives the descending order of the pair ``(a, b)``.
    """
    return data.decode("latin-1").translate(_INV_TABLE) + _KEY_END


def train_bpe(
    text: str | os.PathLike | Iterable[str],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    *,
    progress: ProgressCallback | None = None,
    name: str | None = None,
    num_workers: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_BYTES,
    executor: Executor | None = None,
) -> BPETokenizer:
    """Train a byte-level BPE tokenizer on a text, a stream of text, or files.

    Args:
        text: what to train on, told apart by type:

            * a ``str`` is the training text itself (never a file name);
            * an ``os.PathLike`` (``pathlib.Path("corpus.txt")``) names a UTF-8
              file, which is streamed in chunks and never read whole -- to train
              on a file whose name you hold as a ``str``, pass ``Path(name)``;
            * a ``list`` or ``tuple`` of ``os.PathLike`` names several files,
              directories or glob patterns, counted as one text
              (:func:`bpe_core.counting.count_files`);
            * any other iterable of ``str`` (an open text file, a generator) is
              the text ``"".join(text)``, consumed piece by piece.

            All three give identical merges for the same text (a file's leading
            byte-order mark is dropped).
        vocab_size: target vocabulary size, counting the 256 byte tokens, the
            special tokens and the merges.  Training stops earlier, with
            ``tokenizer.training.stop_reason`` set, when no adjacent pair is left.
        special_tokens: strings that are cut out of the training text, never
            merged, and get ids 256, 257, ... in the order given.
        pattern: pre-tokenization pattern name (``"gpt2"``, ``"cl100k"``,
            ``"o200k"``, ``"bert"``, ``"none"``) or a regex source.
        progress: optional ``progress(phase, done, total)`` callback: ``("count",
            chunks counted, chunks in all -- 0 when unknown)`` after each chunk,
            then ``("merge", merges done, merges asked for)`` about 200 times
            over the merge loop.  It may raise :class:`TrainingCancelled` to stop.
        name: display name of the tokenizer (default ``"BPE (<pattern>)"``).
        num_workers: processes that count pre-tokens (default: all cores).
            Inputs under 4 MiB are counted in this process whatever the value
            (see :mod:`bpe_core.counting`); the merge loop runs here.
        chunk_size: counting chunk length (bytes for a file, characters
            otherwise); chunks end at the first safe boundary after it.
        executor: a ``concurrent.futures.Executor`` to count on instead of local
            processes, e.g. a Dask cluster's ``client.get_executor()``; for files
            each task reads its own byte range (see :mod:`bpe_core.counting`).

    Returns:
        The trained :class:`BPETokenizer`; its ``trace`` records every merge.

    Raises:
        TypeError: ``text`` is ``bytes`` or not a str / path / iterable of str,
            ``vocab_size`` not an ``int``.
        ValueError: ``vocab_size < 256 + len(special_tokens)``; bad special
            tokens or pattern (see :mod:`bpe_core.pretokenize`); the text holds
            an unpaired surrogate; a file is not UTF-8.
        OSError: a file cannot be read.
        TrainingCancelled: raised by ``progress``.
    """
    if isinstance(text, bytes | bytearray | memoryview) or not isinstance(text, str | os.PathLike | Iterable):
        raise TypeError(
            f"text must be a str (the text), an os.PathLike (a file) or an iterable of str, got {type(text).__name__}"
        )
    specials = validate_special_tokens(special_tokens)
    _check_vocab_size(vocab_size, specials)
    source = resolve_pattern(pattern)
    how = {"num_workers": num_workers, "progress": progress, "executor": executor}
    if isinstance(text, str):
        counted = count_text(text, source, specials, chunk_chars=chunk_size, **how)
    elif isinstance(text, os.PathLike):
        counted = count_file(text, source, specials, chunk_bytes=chunk_size, **how)
    elif isinstance(text, list | tuple) and text and all(isinstance(t, os.PathLike) for t in text):
        counted = count_files(text, source, specials, chunk_bytes=chunk_size, **how)
    else:
        counted = count_iterable(text, source, specials, chunk_chars=chunk_size, **how)
    table = _WordTable.from_counts(counted.word_counts, counted.special_occurrences)
    counted.word_counts = {}  # the table holds what the merge loop needs: free the dict before it runs
    stored_pattern = pattern if pattern in PATTERNS else source
    tok = _train_table(table, vocab_size, specials, stored_pattern, progress, name or _default_name(pattern))
    tok.training.count_seconds = counted.seconds
    tok.training.pretokens = counted.pretokens
    return tok


def _default_name(pattern: str) -> str:
    return f"BPE ({pattern})" if pattern in PATTERNS else "BPE (custom pattern)"


def _check_vocab_size(vocab_size: int, specials: Sequence[str]) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    minimum = 256 + len(specials)
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size {vocab_size} is below the base alphabet: byte-level BPE needs at least "
            f"{minimum} (256 byte tokens + {len(specials)} special tokens)"
        )


def train_bpe_from_counts(
    word_counts: Mapping[bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    *,
    special_occurrences: int = 0,
    progress: ProgressCallback | None = None,
    name: str = "BPE",
) -> BPETokenizer:
    """Run the BPE merge loop on a table of pre-token counts.

    Args:
        word_counts: maps each distinct pre-token's UTF-8 bytes to its count.
        vocab_size: target vocabulary size (bytes + specials + merges).
        special_tokens: special-token strings (ids 256, 257, ...).
        pattern: the pattern name or source stored in the tokenizer for encoding.
        special_occurrences: special tokens removed from the text (only used for
            the ``tokens_after`` figures of the trace).
        progress: optional ``progress("merge", done, total)`` callback.
        name: display name.

    Returns:
        The trained :class:`BPETokenizer`.

    Raises:
        ValueError: ``vocab_size`` below ``256 + len(special_tokens)``.
        TrainingCancelled: raised by ``progress``.
    """
    specials = validate_special_tokens(special_tokens)
    _check_vocab_size(vocab_size, specials)
    table = _WordTable.from_counts(word_counts, special_occurrences)
    return _train_table(table, vocab_size, specials, pattern, progress, name)


@dataclass(slots=True)
class _WordTable:
    """The merge loop's input, and the totals the training record keeps.

    Each distinct pre-token of two bytes or more is a ``str`` with one character
    per token id (``chr(id)``; a byte's id is its value, so latin-1 decoding gives
    the initial form), next to its count.
    """

    words: list[str]
    counts: list[int]
    initial_tokens: int  # tokens of the text before merging (bytes + special tokens)
    pretokens: int  # pre-token occurrences
    unique_pretokens: int
    special_occurrences: int

    @classmethod
    def from_counts(cls, word_counts: Mapping[bytes, int], special_occurrences: int) -> _WordTable:
        multi = [wb for wb in word_counts if len(wb) > 1]  # one-byte pre-tokens hold no pair
        return cls(
            words=[wb.decode("latin-1") for wb in multi],
            counts=list(map(word_counts.__getitem__, multi)),
            initial_tokens=special_occurrences + sum(map(mul, map(len, word_counts), word_counts.values())),
            pretokens=sum(word_counts.values()),
            unique_pretokens=len(word_counts),
            special_occurrences=special_occurrences,
        )


def _train_table(
    table: _WordTable,
    vocab_size: int,
    specials: tuple[str, ...],
    pattern: str,
    progress: ProgressCallback | None,
    name: str,
) -> BPETokenizer:
    """:func:`train_bpe_from_counts` on a prepared table (whose words the merge loop rewrites)."""
    t0 = time.perf_counter()
    first_merge_id = 256 + len(specials)
    n_merges = vocab_size - first_merge_id
    token_bytes: list[bytes] = [bytes([i]) for i in range(256)] + [s.encode("utf-8") for s in specials]
    pairs_total = sum(map(len, table.words)) - len(table.words)
    if len(token_bytes) + min(n_merges, pairs_total) > sys.maxunicode + 1:
        raise ValueError(f"vocab_size {vocab_size} is too large: at most {sys.maxunicode + 1} ids are supported")

    # The loop allocates millions of small containers (index lists, heap entries) and frees
    # none in cycles, so the cyclic garbage collector only rescans them: off for the loop
    # (measured 9.6 s -> 8.5 s CPU for the 20 MB corpus at vocab 10,000).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        steps = _merge_loop(table.words, table.counts, n_merges, token_bytes, table.initial_tokens, progress)
    finally:
        if gc_was_enabled:
            gc.enable()
    info = TrainingInfo(
        requested_vocab_size=vocab_size,
        pretokens=table.pretokens,
        unique_pretokens=table.unique_pretokens,
        special_occurrences=table.special_occurrences,
        initial_tokens=table.initial_tokens,
        merge_seconds=time.perf_counter() - t0,
    )
    if len(steps) < n_merges:
        info.stop_reason = (
            f"training stopped at {first_merge_id + len(steps)} tokens instead of {vocab_size}: after "
            f"{len(steps)} merges every pre-token of the training text is a single token, so no pair "
            "is left to merge (a longer or more varied text gives more merges)"
        )
    vocab = dict(enumerate(token_bytes))
    tok = BPETokenizer._from_parts(
        vocab=vocab,
        merges=[(s.left_id, s.right_id, s.new_id) for s in steps],
        special_tokens={s: 256 + i for i, s in enumerate(specials)},
        pattern=pattern,
        name=name,
        trace=steps,
        training=info,
    )
    return tok


def _pair_table(
    words: list[str], counts: list[int], keys: list[str], min_count: int, extra: Mapping[str, int] | None = None
) -> tuple[dict[str, int], dict[str, array], list[tuple]]:
    """Count every adjacent pair of the pre-token table at once, vectorised with numpy.

    Args:
        words: distinct pre-tokens, each a ``str`` with one character per token id.
        counts: their occurrence counts, same order.
        keys: :func:`_desc_key` of each token id (the heap's tie-break).
        min_count: pairs counted fewer times are left out of the index and the heap.
        extra: pair counts held outside ``words`` (the long pre-tokens of
            :class:`_LongWords`), added in; their pairs are indexed there, not here.

    Returns:
        ``(pair_counts, where, heap)``: every pair (a 2-character ``str``) -> its
        count weighted by the pre-tokens' counts; pair -> ``array('I')`` of the
        indices of the pre-tokens holding it (each once, ascending); and the
        heapified entries ``(-count, key_left, key_right, pair)``.
    """
    extra = extra or {}
    joined = "".join(words)
    try:  # bytes only (the start of training): a pair fits in 16 bits, which numpy sorts by radix
        ids = np.frombuffer(joined.encode("latin-1"), dtype=np.uint8)
        shift, codes_type = 8, np.uint16
    except UnicodeEncodeError:  # merged tokens (ids >= 256) present: a rebuild mid-training
        ids = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        shift, codes_type = 21, np.int64  # token ids are code points: 21 bits
    del joined
    pair_counts: dict[str, int] = {}
    where: dict[str, array] = {}
    heap = []
    if ids.size >= 2:
        lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        codes = ids[:-1].astype(codes_type) << shift | ids[1:]  # pair at position j: (ids[j], ids[j+1])
        keep = np.ones(codes.size, dtype=bool)
        keep[np.cumsum(lens)[:-1] - 1] = False  # the last character of a word pairs with nothing
        wid = np.repeat(np.arange(len(words), dtype=np.uint32), lens)[:-1][keep]
        codes = codes[keep]
        del keep, ids
        order = np.argsort(codes, kind="stable")  # stable: word indices stay ascending per pair
        codes = codes[order]
        wid = wid[order]
        del order
        starts = np.flatnonzero(np.diff(codes, prepend=codes[:1] + 1))
        totals = np.add.reduceat(np.asarray(counts, dtype=np.int64)[wid], starts)
        uniq = codes[starts]
        pairs = list(map(add, map(chr, (uniq >> shift).tolist()), map(chr, (uniq & ((1 << shift) - 1)).tolist())))
        pair_counts = dict(zip(pairs, totals.tolist(), strict=True))
        if extra:
            pc_get = pair_counts.get
            for p, c in extra.items():
                pair_counts[p] = pc_get(p, 0) + c
        # the index lists each word once per pair: drop repeats (same pair, same word)
        first = np.ones(codes.size, dtype=bool)
        first[1:] = (codes[1:] != codes[:-1]) | (wid[1:] != wid[:-1])
        wid = wid[first]
        bounds = [*np.searchsorted(codes[first], uniq).tolist(), wid.size]
        del codes, first
        raw = memoryview(wid.tobytes())
        pc_at = pair_counts.__getitem__
        for k, p in enumerate(pairs):
            c = pc_at(p)
            if c >= min_count:
                where[p] = index = array("I")
                index.frombytes(raw[bounds[k] * 4 : bounds[k + 1] * 4])
                heap.append((-c, keys[ord(p[0])], keys[ord(p[1])], p))
    else:
        pair_counts = dict(extra)
    for p in extra:  # pairs found only in the long pre-tokens: an empty index here
        if p not in where:
            c = pair_counts[p]
            if c >= min_count:
                where[p] = array("I")
                heap.append((-c, keys[ord(p[0])], keys[ord(p[1])], p))
    heapq.heapify(heap)
    return pair_counts, where, heap


_LONG_WORD = 128
"""Pre-tokens longer than this many bytes are trained on as linked lists of positions (:class:`_LongWords`)."""


class _LongWords:
    """The long pre-tokens of a training run, as doubly linked lists with a pair -> positions index.

    A pre-token of 100 KB (minified code, base64, a language written without
    spaces under a custom pattern) holds each frequent pair thousands of times;
    rewriting it as a ``str`` per merge costs its whole length per merge
    (quadratic overall).  Here every byte of every long pre-token has a
    *position* (its offset in their concatenation); ``tok[p]`` is the token at
    ``p`` (``chr(id)``, ``""`` once merged into its left neighbour), ``nxt``/``prv``
    link the live positions of one pre-token, and ``where[pair]`` lists the
    positions where ``pair`` started when it was created.  A merge visits only
    those positions (the "bigram-location index" of the seed articles), so its
    cost is proportional to the occurrences it touches.  Entries go stale when a
    neighbour merges; a visit checks each against the linked list and skips the
    stale ones.  Positions ascend left to right within a pre-token, so sorting
    them gives BPE's left-to-right, non-overlapping replacement for pairs of two
    equal tokens.
    """

    __slots__ = ("nxt", "prv", "starts", "tok", "wgt", "where")

    def __init__(self, words: Sequence[str], counts: Sequence[int]) -> None:
        joined = "".join(words)
        n = len(joined)
        self.tok: list[str] = list(joined)
        self.nxt: list[int] = list(range(1, n + 1))
        self.prv: list[int] = list(range(-1, n - 1))
        self.wgt: list[int] = []
        self.starts: list[int] = []
        pos = 0
        for w, c in zip(words, counts, strict=True):
            self.starts.append(pos)
            self.wgt += [c] * len(w)
            pos += len(w)
            self.nxt[pos - 1] = -1
            self.prv[pos - len(w)] = -1
        # index every pair's positions, grouped with numpy (the words are bytes at the start)
        ids = np.frombuffer(joined.encode("latin-1"), dtype=np.uint8)
        codes = ids[:-1].astype(np.uint16) << 8 | ids[1:]
        pos_arr = np.flatnonzero(np.asarray(self.nxt[:-1]) >= 0)
        codes = codes[pos_arr]
        order = np.argsort(codes, kind="stable")
        codes, pos_arr = codes[order], pos_arr[order]
        bounds = [*np.flatnonzero(np.diff(codes, prepend=codes[:1] + 1)).tolist(), codes.size]
        pos_list = pos_arr.tolist()
        self.where: defaultdict[str, list[int]] = defaultdict(list)
        for c, lo, hi in zip(codes[bounds[:-1]].tolist(), bounds[:-1], bounds[1:], strict=True):
            self.where[chr(c >> 8) + chr(c & 255)] = pos_list[lo:hi]

    def pair_counts(self) -> dict[str, int]:
        """Every adjacent pair's count over the long pre-tokens (weighted), walking the lists."""
        out: dict[str, int] = {}
        get = out.get
        tok, nxt, wgt = self.tok, self.nxt, self.wgt
        for start in self.starts:
            c = wgt[start]
            p, q = start, nxt[start]
            while q >= 0:
                k = tok[p] + tok[q]
                out[k] = get(k, 0) + c
                p, q = q, nxt[q]
        return out

    def merge(self, best: str, new_ch: str, pair_counts: dict[str, int], fresh: dict[str, int]) -> int:
        """Replace every occurrence of ``best`` by ``new_ch``; returns the weighted replacements.

        Pairs that lose an occurrence lose its weight in ``pair_counts`` (or in
        ``fresh`` when they hold ``new_ch``); pairs made with ``new_ch`` gain it in
        ``fresh``, as the merge loop keeps them.
        """
        plist = self.where.pop(best, None)
        if not plist:
            return 0
        a, b = best
        if a == b:
            plist.sort()  # overlapping occurrences: left to right, as BPE replaces them
        tok, nxt, prv, wgt, where = self.tok, self.nxt, self.prv, self.wgt, self.where
        f_get = fresh.get
        replaced = 0
        for p in plist:
            if tok[p] != a:
                continue
            q = nxt[p]
            if q < 0 or tok[q] != b:
                continue
            c = wgt[p]
            replaced += c
            x = prv[p]
            if x >= 0:
                tx = tok[x]
                if tx == new_ch:
                    fresh[tx + a] -= c
                else:
                    pair_counts[tx + a] -= c
                made = tx + new_ch
                fresh[made] = f_get(made, 0) + c
                where[made].append(x)
            y = nxt[q]
            if y >= 0:
                ty = tok[y]
                if ty == new_ch:
                    fresh[b + ty] -= c
                else:
                    pair_counts[b + ty] -= c
                made = new_ch + ty
                fresh[made] = f_get(made, 0) + c
                where[made].append(p)
                prv[y] = p
            tok[p] = new_ch
            tok[q] = ""
            nxt[p] = y
        return replaced


def _merge_loop(
    words: list[str],
    counts: list[int],
    n_merges: int,
    token_bytes: list[bytes],
    initial_tokens: int,
    progress: ProgressCallback | None,
) -> list[MergeStep]:
    """The incremental merge loop; appends new tokens to ``token_bytes`` in place.

    Each distinct pre-token is a ``str`` holding one character per token
    (``chr(id)``), so a pair is a 2-character string and a merge inside a
    pre-token is ``str.replace(pair, chr(new_id))`` -- exactly BPE's
    non-overlapping, left-to-right replacement, done in C.  Per merge, only the
    pre-tokens that hold the pair are visited (the pair -> pre-tokens index),
    and only the pairs between the first and the last replaced occurrence (plus
    one neighbour on each side) change their counts.  The best pair comes from a
    max-heap keyed by ``(count, descending bytes of left, of right)`` with lazy
    invalidation: an entry whose count is stale is pushed back with the current
    count.

    A pair's count never grows after the merge that creates it (every pair that
    gains holds the new token), so the best count never grows either.  Pairs
    of count 1 (at the start, when created, or when a stale entry is popped)
    are therefore only counted, not indexed nor queued, while any pair of count
    2 or more is left; when none is, the index and the queue are rebuilt over
    the whole table (:func:`_pair_table`; this happens only on a text merged
    down to single occurrences).  On the 20 MB benchmark corpus that leaves a
    third of the new pairs out of the heap and the index, with the same merges.

    Args:
        words: distinct pre-tokens (mutated in place).
        counts: their occurrence counts, same order.
        n_merges: merges to learn at most.
        token_bytes: bytes of each id so far (256 bytes + specials); extended.
        initial_tokens: tokens of the training text before merging.
        progress: ``progress("merge", done, n_merges)`` about 200 times.

    Returns:
        The merge steps, in rank order.
    """
    keys: list[str] = [_desc_key(b) for b in token_bytes]
    min_count = 2  # pairs below it wait for a rebuild (see above)
    long_ids = [i for i, w in enumerate(words) if len(w) > _LONG_WORD]
    longs = _LongWords([words[i] for i in long_ids], [counts[i] for i in long_ids]) if long_ids else None
    for i in long_ids:
        words[i] = "\x00"  # one token: no pair left in the str path (the long words live in ``longs``)
    pair_counts, where, heap = _pair_table(words, counts, keys, min_count, longs and longs.pair_counts())
    pc_get = pair_counts.get
    counts_at = counts.__getitem__
    heappush, heappop = heapq.heappush, heapq.heappop

    steps: list[MergeStep] = []
    tokens = initial_tokens
    report_every = max(1, n_merges // 200)
    for rank in range(n_merges):
        # pop the best pair whose recorded count is current (lazy invalidation)
        best = None
        while True:
            if not heap:
                if min_count == 1:
                    break
                min_count = 1
                pair_counts, where, heap = _pair_table(words, counts, keys, min_count, longs and longs.pair_counts())
                pc_get = pair_counts.get
                continue
            negc, ka, kb, p = heappop(heap)
            cur = pc_get(p, 0)
            if cur == -negc:
                best = p
                break
            if cur >= min_count:
                heappush(heap, (-cur, ka, kb, p))
            elif cur == 0:  # the pair is gone for good: nothing can create it again
                where.pop(p, None)
            # else: below min_count, like the pairs left out of the heap; the rebuild brings it back
        if best is None:
            break
        count = -negc
        a, b = ord(best[0]), ord(best[1])
        new_id = len(token_bytes)
        new_ch = chr(new_id)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        keys.append(_desc_key(token_bytes[new_id]))
        affected = where.pop(best, ())

        # Old pairs only lose counts and stay in the heap with their old (higher)
        # count until popped and re-pushed.  Every pair that gains is new: it holds
        # ``new_id``; their counts and words are collected here and indexed at the end.
        #
        # A pre-token holding the pair once, with a != b (the common case), changes
        # only (x, a) -> (x, new) and (b, y) -> (new, y); the visit just files the word
        # under its neighbours x and y, and the counts move per neighbour afterwards
        # (sums over the filed words, in C).  Other pre-tokens (the pair more than once,
        # or a == b, where occurrences can overlap) are updated pair by pair.
        left: defaultdict[str, list[int]] = defaultdict(list)
        right: defaultdict[str, list[int]] = defaultdict(list)
        fresh: dict[str, int] = {}
        f_get = fresh.get
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        overlapping = a == b
        shortened = 0  # replaced occurrences, weighted, outside the common case
        for wi in affected:
            w = words[wi]
            i = w.find(best)
            if i < 0:
                continue  # stale index entry: the pair left this word earlier
            nw = w.replace(best, new_ch)
            words[wi] = nw
            n_old = len(w)
            r = n_old - len(nw)  # occurrences replaced
            if r == 1 and not overlapping:
                if i:
                    left[w[i - 1]].append(wi)
                if i + 2 < n_old:
                    right[w[i + 2]].append(wi)
                continue
            # the changed stretch runs from one token before the first occurrence to
            # one token after the last; everything outside it keeps its pairs
            c = counts[wi]
            shortened += r * c
            tail = n_old - w.rfind(best) - 2  # tokens after the last occurrence, unchanged
            lo = i - 1 if i else 0
            hi_old = n_old - tail + (1 if tail else 0)
            hi_new = len(nw) - tail + (1 if tail else 0)
            for k in range(lo, hi_old - 1):
                pair_counts[w[k : k + 2]] -= c
            for k in range(lo, hi_new - 1):
                q = nw[k : k + 2]
                if new_ch in q:
                    fresh[q] = f_get(q, 0) + c
                    fresh_where[q].append(wi)
                else:
                    pair_counts[q] += c  # an old pair inside the stretch that survives
        if longs is not None:  # before the neighbours below, which set pairs not in ``fresh`` directly
            shortened += longs.merge(best, new_ch, pair_counts, fresh)
        a_ch, b_ch = best
        new_key = keys[new_id]
        for on_right, filed in ((False, left), (True, right)):
            for x, wis in filed.items():
                weight = counts_at(wis[0]) if len(wis) == 1 else sum(map(counts_at, wis))
                if on_right:
                    pair_counts[b_ch + x] -= weight
                    q = new_ch + x
                else:
                    pair_counts[x + a_ch] -= weight
                    q = x + new_ch
                if q in fresh:  # also made inside a pre-token that held the pair more than once
                    fresh[q] += weight
                    fresh_where[q] += wis
                    continue
                pair_counts[q] = weight
                if weight >= min_count:
                    where[q] = array("I", wis)
                    x_key = keys[ord(x)]
                    heappush(heap, (-weight, new_key, x_key, q) if on_right else (-weight, x_key, new_key, q))
        del pair_counts[best]
        for q, nc in fresh.items():
            pair_counts[q] = nc
            if nc >= min_count:
                where[q] = array("I", fresh_where[q])
                heappush(heap, (-nc, keys[ord(q[0])], keys[ord(q[1])], q))
        if not overlapping:
            shortened = count  # a pair of two different tokens cannot overlap: every occurrence is replaced

        tokens -= shortened
        steps.append(MergeStep(rank, a, b, new_id, token_bytes[a], token_bytes[b], count, shortened, tokens))
        if progress is not None and (rank + 1) % report_every == 0:
            progress("merge", rank + 1, n_merges)
    if progress is not None:
        progress("merge", len(steps), n_merges)
    return steps


def _merge_short(ids: list[int], rank_get: Callable, shift: int, new_ids: Sequence[int], limit: int) -> tuple[int, ...]:
    """BPE inside one short pre-token (``ids`` of length >= 2, mutated): the lowest-rank merge until none applies.

    ``ranks[i]`` holds the merge rank of the pair ``(ids[i], ids[i + 1])``, or a
    rank past the view's last merge (``limit``).  Each round merges the lowest-rank
    pair, leftmost first (``min`` and ``index`` run in C), then re-ranks only the
    two pairs next to it.  Merging one occurrence at a time gives the same result
    as replacing every occurrence of the pair at once: a pair that contains the
    new token always ranks after it, so the next lowest rank is the same pair
    further right, if any.  Module-level, with its tables passed in, so that the
    encoder's hot loop binds them once per segment.
    """
    ranks = [rank_get(ids[i] << shift | ids[i + 1], _NO_RANK) for i in range(len(ids) - 1)]
    while ranks:
        best = min(ranks)
        if best >= limit:
            break
        i = ranks.index(best)
        new = new_ids[best]
        ids[i] = new
        del ids[i + 1]
        del ranks[i]
        if i < len(ranks):
            ranks[i] = rank_get(new << shift | ids[i + 1], _NO_RANK)
        if i > 0:
            ranks[i - 1] = rank_get(ids[i - 1] << shift | new, _NO_RANK)
    return tuple(ids)


# ---------------------------------------------------------------------------
# the tokenizer


class BPETokenizer:
    """A byte-level BPE tokenizer: any vocabulary, merge list, specials and split pattern.

    Build it from a vocabulary and an ordered merge list, as GPT-2 publishes
    them, or get one from :func:`train_bpe`.  Encoding gives exactly tiktoken's
    ids when given an encoding's ranks and pattern (see
    :func:`bpe_core.reference.ranks_to_vocab_merges`).

    Args:
        vocab: ``{id: token bytes}``; must contain all 256 single bytes and the
            special tokens' UTF-8 bytes.
        merges: ordered ``[(left_bytes, right_bytes), ...]``; merge k creates the
            token ``left + right``, which must be in ``vocab``.
        special_tokens: ``None``, a list of special-token strings (their ids are
            looked up in ``vocab`` by their UTF-8 bytes) or ``{string: id}``.
        pattern: pre-tokenization pattern name or regex source.
        name: display name.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: a single byte missing from ``vocab``; a merge whose parts or
            result are not in ``vocab``; a special token not in ``vocab``; bad
            pattern or special tokens.

    When ``vocab`` holds the same bytes under two ids (training can create the
    same bytes by two different merges), merge k's result is the lowest such id
    not yet created, and a merge operand refers to the earliest id with those
    bytes.  Tokenizers from :func:`train_bpe` and :meth:`load` keep their exact
    id triples and are not subject to this rule.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | Mapping[str, int] | None = None,
        pattern: str = "gpt2",
        name: str = "BPE",
    ) -> None:
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a dict[int, bytes], got {type(vocab).__name__}")
        vocab = dict(vocab)
        for k, v in vocab.items():
            if isinstance(k, bool) or not isinstance(k, int) or not isinstance(v, bytes | bytearray):
                raise TypeError(f"vocab must map int ids to bytes; found {k!r}: {type(v).__name__}")
            if k < 0:
                raise ValueError(f"vocab id {k} is negative")
        vocab = {k: bytes(v) for k, v in vocab.items()}
        specials = _resolve_specials(special_tokens, vocab)
        special_ids = set(specials.values())
        by_bytes: dict[bytes, list[int]] = {}
        for i in sorted(vocab):
            if i not in special_ids:
                by_bytes.setdefault(vocab[i], []).append(i)
        for byte in range(256):
            if bytes([byte]) not in by_bytes:
                raise ValueError(f"vocab has no token for the single byte 0x{byte:02X}; byte-level BPE needs all 256")
        taken: set[int] = {ids[0] for b, ids in by_bytes.items() if len(b) == 1}
        triples: list[tuple[int, int, int]] = []
        for k, m in enumerate(merges):
            if not (isinstance(m, tuple | list) and len(m) == 2 and all(isinstance(x, bytes) for x in m)):
                raise TypeError(f"merge #{k} must be a (bytes, bytes) pair, got {m!r}")
            left, right = m
            for part in (left, right):
                if part not in by_bytes:
                    raise ValueError(f"merge #{k} {left!r} + {right!r}: part {part!r} is not in vocab")
            merged = left + right
            candidates = [i for i in by_bytes.get(merged, []) if i not in taken]
            if not candidates:
                raise ValueError(f"merge #{k} {left!r} + {right!r}: the result {merged!r} is not in vocab")
            new_id = candidates[0]
            taken.add(new_id)
            triples.append((by_bytes[left][0], by_bytes[right][0], new_id))
        self._setup(vocab, triples, specials, pattern, name, None, None)

    # -- construction helpers ------------------------------------------------

    @classmethod
    def _from_parts(
        cls,
        *,
        vocab: dict[int, bytes],
        merges: list[tuple[int, int, int]],
        special_tokens: dict[str, int],
        pattern: str,
        name: str,
        trace: list[MergeStep] | None = None,
        training: TrainingInfo | None = None,
    ) -> BPETokenizer:
        """Build from id triples (left, right, new); ``vocab`` may lack the merged tokens."""
        self = cls.__new__(cls)
        full = dict(vocab)
        for left, right, new in merges:
            if new not in full:
                full[new] = full[left] + full[right]
        self._setup(full, list(merges), special_tokens, pattern, name, trace, training)
        return self

    def _setup(
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[int, int, int]],
        specials: dict[str, int],
        pattern: str,
        name: str,
        trace: list[MergeStep] | None,
        training: TrainingInfo | None,
    ) -> None:
        self.name = name
        self._pattern_name = pattern if pattern in PATTERNS else None
        self._pattern = resolve_pattern(pattern)
        self._rx = compile_pattern(self._pattern)
        self._specials = dict(specials)
        validate_special_tokens(list(self._specials))
        self._special_ids = frozenset(self._specials.values())
        self._vocab_full = vocab
        self._merges = merges
        self._byte_ids = [0] * 256
        for i in sorted(vocab, reverse=True):
            b = vocab[i]
            if len(b) == 1 and i not in self._special_ids:
                self._byte_ids[b[0]] = i
        self._identity_bytes = self._byte_ids == list(range(256))
        max_id = max(vocab) if vocab else 255
        self._shift = max(max_id, 2).bit_length()
        shift = self._shift
        # pair -> rank (first merge of that id pair wins) and rank -> new id
        ranks: dict[int, int] = {}
        for r, (left, right, _new) in enumerate(merges):
            ranks.setdefault(left << shift | right, r)
        self._ranks = ranks
        self._new_ids = [m[2] for m in merges]
        self._rank_of_id = {m[2]: r for r, m in enumerate(merges)}
        self._trace_full = trace
        self.training = training
        self._n_merges = len(merges)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._views: dict[int, BPETokenizer] = {}

    # -- views -------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Ids this tokenizer can emit: base bytes + special tokens + merges in this view."""
        return 256 + len(self._specials) + self._n_merges

    @property
    def max_vocab_size(self) -> int:
        """The vocabulary size of the full merge list (what :meth:`with_vocab_size` can reach)."""
        return 256 + len(self._specials) + len(self._merges)

    @property
    def min_vocab_size(self) -> int:
        """The smallest vocabulary size: 256 byte tokens plus the special tokens."""
        return 256 + len(self._specials)

    def with_vocab_size(self, n: int) -> BPETokenizer:
        """The tokenizer restricted to its first merges, as an O(1) view.

        Args:
            n: vocabulary size of the view, ``min_vocab_size <= n <= max_vocab_size``.

        Returns:
            A :class:`BPETokenizer` sharing this one's tables, using only the first
            ``n - 256 - len(special_tokens)`` merges; ids are the same as here.

        Raises:
            TypeError: ``n`` is not an ``int``.
            ValueError: ``n`` is out of range (the message gives the range).
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"vocab size must be an int, got {type(n).__name__}")
        lo, hi = self.min_vocab_size, self.max_vocab_size
        if not lo <= n <= hi:
            raise ValueError(f"vocab size {n} is out of range: this tokenizer can be viewed at {lo}..{hi}")
        if n == self.vocab_size:
            return self
        view = self._views.get(n)
        if view is None:
            view = copy.copy(self)
            view._n_merges = n - lo
            view._cache = {}
            view.__dict__.pop("_tiktoken_exact", None)  # remembered per view
            view.__dict__.pop("_tiktoken", None)
            if len(self._views) >= 16:  # views share this memo; keep the newest 16
                self._views.pop(next(iter(self._views)))
            self._views[n] = view
        return view

    @property
    def pattern(self) -> str:
        """The regex source of the split pattern."""
        return self._pattern

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name in :data:`bpe_core.pretokenize.PATTERNS`, or ``None`` for a custom regex."""
        return self._pattern_name

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token string: id}``."""
        return dict(self._specials)

    @property
    def vocab(self) -> dict[int, bytes]:
        """``{id: bytes}`` of every id this view can emit (specials as their UTF-8)."""
        v = self._vocab_full
        out = {self._byte_ids[b]: v[self._byte_ids[b]] for b in range(256)}
        for i in self._special_ids:
            out[i] = v[i]
        for _l, _r, new in self._merges[: self._n_merges]:
            out[new] = v[new]
        return out

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges of this view as ``(left_bytes, right_bytes)``, in rank order."""
        v = self._vocab_full
        return [(v[left], v[right]) for left, right, _n in self._merges[: self._n_merges]]

    @property
    def merge_ids(self) -> list[tuple[int, int, int]]:
        """The merges of this view as ``(left_id, right_id, new_id)``, in rank order."""
        return list(self._merges[: self._n_merges])

    @property
    def trace(self) -> list[MergeStep]:
        """The training trace of this view's merges (empty for a tokenizer not trained here)."""
        if self._trace_full is None:
            return []
        return self._trace_full[: self._n_merges]

    def token_bytes(self, token_id: int) -> bytes:
        """Bytes of one token id (a special token's UTF-8).

        Raises:
            ValueError: ``token_id`` is not in this view's vocabulary.
        """
        if not self._id_in_view(token_id):
            raise ValueError(f"token id {token_id} is not in this tokenizer's vocabulary (size {self.vocab_size})")
        return self._vocab_full[token_id]

    def rank_of(self, token_id: int) -> int | None:
        """Merge rank that created ``token_id`` (0-based), or ``None`` for bytes and specials."""
        r = self._rank_of_id.get(token_id)
        return r if r is not None and r < self._n_merges else None

    def _id_in_view(self, token_id: int) -> bool:
        if token_id in self._special_ids:
            return True
        v = self._vocab_full.get(token_id)
        if v is None:
            return False
        if len(v) == 1 and self._byte_ids[v[0]] == token_id:
            return True
        r = self._rank_of_id.get(token_id)
        return r is not None and r < self._n_merges

    # -- encoding ------------------------------------------------------------

    def _encode_piece(self, data: bytes) -> tuple[int, ...]:
        """BPE inside one pre-token: apply the lowest-rank merge until none applies."""
        ids = list(data) if self._identity_bytes else [self._byte_ids[x] for x in data]
        if len(ids) < 2 or self._n_merges == 0:
            return tuple(ids)
        if len(ids) > _LONG_PIECE:
            return tuple(self._encode_long(ids))
        return _merge_short(ids, self._ranks.get, self._shift, self._new_ids, self._n_merges)

    def _encode_long(self, ids: list[int]) -> list[int]:
        """Same result as the quadratic loop, in O(n log n): a heap of (rank, position)."""
        get = self._ranks.get
        limit = self._n_merges
        shift = self._shift
        new_ids = self._new_ids
        n = len(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = []
        for i in range(n - 1):
            r = get(ids[i] << shift | ids[i + 1])
            if r is not None and r < limit:
                heap.append((r, i, ids[i], ids[i + 1]))
        heapq.heapify(heap)
        while heap:
            r, i, a, b = heapq.heappop(heap)
            j = nxt[i]
            if not alive[i] or j >= n or ids[i] != a or ids[j] != b:
                continue
            new = new_ids[r]
            ids[i] = new
            alive[j] = False
            k = nxt[j]
            nxt[i] = k
            if k < n:
                prv[k] = i
                r2 = get(new << shift | ids[k])
                if r2 is not None and r2 < limit:
                    heapq.heappush(heap, (r2, i, new, ids[k]))
            p = prv[i]
            if p >= 0:
                r2 = get(ids[p] << shift | new)
                if r2 is not None and r2 < limit:
                    heapq.heappush(heap, (r2, p, ids[p], new))
        out = []
        i = 0
        while i < n:
            out.append(ids[i])
            i = nxt[i]
        return out

    def _encode_ordinary(self, segment: str, out: list[int]) -> None:
        cache = self._cache
        get = cache.get
        extend = out.extend
        # the cache-miss path of _encode_piece, inlined with its tables bound once per segment
        limit = self._n_merges
        rank_get = self._ranks.get
        shift = self._shift
        new_ids = self._new_ids
        byte_id = None if self._identity_bytes else self._byte_ids.__getitem__
        for piece in iter_pretoken_strings(segment, self._rx):
            ids = get(piece)
            if ids is None:
                try:
                    data = piece.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise ValueError(surrogate_message(piece, exc)) from None
                if len(data) > _LONG_PIECE or limit == 0:
                    ids = self._encode_piece(data)
                else:
                    seq = list(data) if byte_id is None else list(map(byte_id, data))
                    ids = _merge_short(seq, rank_get, shift, new_ids, limit) if len(seq) > 1 else tuple(seq)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[piece] = ids
            extend(ids)

    def encode(self, text: str) -> list[int]:
        """Encode text to token ids.

        Special tokens in ``text`` (longest match first) become their ids; the rest
        is pre-tokenized with the pattern and each pre-token is merged on its own.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]`` of token ids.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate (no UTF-8 form).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        out: list[int] = []
        specials = self._specials
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
            else:
                self._encode_ordinary(segment, out)
        return out

    def encode_iterable(self, chunks: Iterable[str]) -> Iterator[int]:
        """Encode a stream of text lazily, in memory bounded by the longest pre-token.

        Gives exactly ``encode("".join(chunks))``: the pre-tokens near the end of
        the buffered text, which more text could still change, are held back
        until the next chunk arrives.  (This relies on the split pattern looking
        at most a few characters ahead and never behind, true of all named patterns.)

        Args:
            chunks: an iterable of ``str``, such as an open text file (its lines).

        Yields:
            Token ids, ``int``.

        Raises:
            TypeError: a chunk is not a ``str``.
            ValueError: the text holds an unpaired surrogate.
        """
        specials = tuple(self._specials)
        hold = max([16, *(len(s) for s in specials)])
        buf = ""
        for chunk in chunks:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable needs str chunks, got {type(chunk).__name__}")
            buf += chunk
            if len(buf) <= 2 * hold:
                continue
            safe = self._safe_cut(buf, specials, hold)
            if safe > 0:
                yield from self.encode(buf[:safe])
                buf = buf[safe:]
        if buf:
            yield from self.encode(buf)

    def _safe_cut(self, buf: str, specials: tuple[str, ...], hold: int) -> int:
        """A pre-token boundary in ``buf`` that more text appended at the end cannot move."""
        limit = len(buf) - hold
        cut = 0
        for pt in pretokenize(buf, self._pattern, specials):
            if pt.end > limit:
                break
            cut = pt.end
        return cut

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the tokens.

        Raises:
            ValueError: an id is not in this tokenizer's vocabulary.
        """
        v = self._vocab_full
        try:
            return b"".join([v[i] for i in ids])
        except (KeyError, TypeError):
            bad = [i for i in ids if not isinstance(i, int) or i not in v]
            raise ValueError(f"unknown token id {bad[0]!r} (vocab size {self.vocab_size})") from None

    def decode(self, ids: Iterable[int]) -> str:
        """Decode ids to text; bytes that do not form valid UTF-8 become U+FFFD.

        Raises:
            ValueError: an id is not in this tokenizer's vocabulary.
        """
        return self.decode_bytes(list(ids)).decode("utf-8", errors="replace")

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets, specials and partial-UTF-8 flags.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]``; see :class:`bpe_core.spans.TokenSpan`.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        ids = self.encode(text)
        v = self._vocab_full
        return spans_from_token_bytes(
            text, ids, [v[i] for i in ids], special_ids=self._special_ids, rank_of=self.rank_of
        )

    def describe_token(self, token_id: int) -> str:
        """Readable form of one token's bytes (``<0xNN>`` for bytes that are not whole characters)."""
        return display_bytes(self.token_bytes(token_id))

    # -- the declared interface (bpe_core.interface) ---------------------------

    algorithm = "bpe"
    """The key of :data:`bpe_core.interface.ALGORITHMS` that trains this kind of tokenizer."""

    is_byte_level = True
    """Every id stands for bytes; the ids of a text hold exactly its UTF-8."""

    unknown_id = None
    """Byte-level BPE spells every text: there is no unknown token."""

    def encode_steps(self, text: str) -> list:
        """``list[PieceSteps]``: each pre-token's merges in rank order (:func:`bpe_core.trace.bpe_encode_steps`)."""
        from .trace import bpe_encode_steps

        return bpe_encode_steps(self, text)

    def learned_tokens(self) -> list[tuple[int, int]]:
        """``(merge rank, new id)`` of every merge of this view, in rank order."""
        return [(r, new) for r, (_a, _b, new) in enumerate(self._merges[: self._n_merges])]

    def training_text_tokens(self) -> int | None:
        """Tokens of the training text at this size, read off the trace (exact, free), or ``None``.

        ``None`` for a tokenizer loaded without its full trace or training facts.
        """
        trace, info = self._trace_full, self.training
        if trace is None or info is None or len(trace) != len(self._merges):
            return None
        k = self._n_merges
        return trace[k - 1].tokens_after if k > 0 else info.initial_tokens

    def replay(self, text: str):
        """A :class:`bpe_core.trace.TrainingReplay` of training on ``text`` (its own training text)."""
        from .trace import TrainingReplay

        return TrainingReplay.from_text(self, text)

    def tiktoken_exact(self) -> bool:
        """Whether :meth:`to_tiktoken` gives exactly :meth:`encode`'s ids on every text.

        Checks the conditions of :meth:`to_tiktoken`'s docstring: no two tokens
        share their bytes (1), every token is rebuilt by its own merge (2), a
        named split pattern (3; a custom regex is not proven to cut alike in
        tiktoken's engine) and no special token a prefix of another (4).
        Remembered per view.
        """
        cached = self.__dict__.get("_tiktoken_exact")
        if cached is not None:
            return cached
        from .io import mergeable_ranks
        from .reference import ranks_to_vocab_merges

        specials = list(self._specials)
        ok = self._pattern_name is not None and not any(a != b and b.startswith(a) for a in specials for b in specials)
        if ok:
            ranks = mergeable_ranks(self)
            ok = len(ranks) == self.vocab_size - len(specials)
        if ok:
            try:
                ok = ranks_to_vocab_merges(ranks)[1] == self.merges
            except ValueError:
                ok = False
        self.__dict__["_tiktoken_exact"] = ok
        return ok

    def fast_encoder(self):
        """``text -> ids`` through :meth:`to_tiktoken` when :meth:`tiktoken_exact`, else ``None``."""
        if not self.tiktoken_exact():
            return None
        enc = self.__dict__.get("_tiktoken")
        if enc is None:
            try:
                enc = self.to_tiktoken()
            except ValueError:
                return None
            self.__dict__["_tiktoken"] = enc
        return lambda text: enc.encode(text, allowed_special="all")

    def to_tiktoken(self, name: str | None = None):
        """A ``tiktoken.Encoding`` of this view, for fast encoding of long texts.

        The encoding's ``mergeable_ranks`` map each non-special token's bytes to
        its id here (single bytes and merged tokens); the special tokens are
        passed to tiktoken separately with their ids (:func:`bpe_core.io.mergeable_ranks`).
        The split pattern is :func:`bpe_core.io.covering_pattern` of this
        tokenizer's: for a pattern that leaves text unmatched (``bert`` leaves
        whitespace), one more alternative takes each such run as one piece,
        since tiktoken drops what its pattern does not match while
        :meth:`encode` encodes it.  Encode with ``enc.encode(text, allowed_special="all")``
        to treat special tokens as :meth:`encode` does.

        Two merges with the same bytes: training can, rarely, create the same
        byte string by two different merges (ids i < j).  tiktoken's ranks are
        keyed by bytes, so only the earlier id i is kept; j is left out of the
        encoding (its ids have a gap there), tiktoken never emits j, and where
        this tokenizer would produce j tiktoken produces i or a different split.
        Check ``len(set(tok.vocab.values())) == tok.vocab_size`` before relying
        on equal ids.

        When the ids are equal: tiktoken merges, inside each pre-token, the
        adjacent pair whose *concatenated bytes* have the lowest rank (and
        returns a pre-token that is itself a token directly), while
        :meth:`encode` applies the lowest-ranked *merge rule* (a pair of ids).
        The two give the same ids when

        1. no two tokens share their bytes (see above);
        2. every token is rebuilt by its own merge: tiktoken's procedure on the
           token's bytes, using only lower-ranked tokens, ends in exactly the two
           parts of the merge that created it -- then no other pair of tokens
           with the same concatenation can get merged first.  This is what
           :func:`bpe_core.reference.ranks_to_vocab_merges` relies on
           (``ranks_to_vocab_merges(enc._mergeable_ranks)[1] == tok.merges``
           checks it); GPT-2's, cl100k's and o200k's ranks and the tokenizers
           :func:`train_bpe` produces on the tests' real texts satisfy it;
        3. the split pattern cuts text the same way in tiktoken's Rust regex
           engine (``fancy-regex``) as in Python's ``regex`` and never matches
           the empty string (true of the named patterns); and
        4. no special token is a prefix of another: tiktoken matches special
           tokens with an alternation in hash-map order, this tokenizer takes
           the longest match.

        Args:
            name: the encoding's name (default: this tokenizer's ``name``).

        Returns:
            ``tiktoken.Encoding``.

        Raises:
            ValueError: tiktoken's regex engine rejects the split pattern.
        """
        import tiktoken

        from .io import covering_pattern, mergeable_ranks

        return tiktoken.Encoding(
            name or self.name,
            pat_str=covering_pattern(self._pattern),
            mergeable_ranks=mergeable_ranks(self),  # the earliest id of duplicated bytes only
            special_tokens=dict(self._specials),
        )

    # -- persistence -----------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-ready ``dict`` of this view: vocab (base64), merge id triples, specials, pattern, trace."""
        v = self._vocab_full
        merges = self._merges[: self._n_merges]
        ids = sorted(self.vocab)
        return {
            "format": "bpe-playground/bpe",
            "version": 1,
            "name": self.name,
            "pattern": self._pattern,
            "pattern_name": self._pattern_name,
            "special_tokens": self._specials,
            "vocab": {str(i): base64.b64encode(v[i]).decode("ascii") for i in ids},
            "merges": [list(m) for m in merges],
            "trace": [_step_to_json(s) for s in self.trace] if self._trace_full is not None else None,
            "training": asdict(self.training) if self.training is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> BPETokenizer:
        """Rebuild a tokenizer from :meth:`to_dict` output.

        Raises:
            ValueError: the data is not this format or is inconsistent; the message
                names the field at fault.
        """
        if not isinstance(data, Mapping) or data.get("format") != "bpe-playground/bpe":
            raise ValueError('not a BPE Playground tokenizer file (missing "format": "bpe-playground/bpe")')
        try:
            vocab = {int(k): base64.b64decode(s, validate=True) for k, s in data["vocab"].items()}
            merges = [tuple(int(x) for x in m) for m in data["merges"]]
            specials = {str(k): int(i) for k, i in data["special_tokens"].items()}
            pattern = data.get("pattern_name") or data["pattern"]
            name = str(data.get("name") or "BPE")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"tokenizer file is malformed: {type(exc).__name__}: {exc}") from None
        for k, m in enumerate(merges):
            if len(m) != 3 or not all(x in vocab for x in m):
                raise ValueError(f"tokenizer file is malformed: merge #{k} {list(m)} refers to ids not in vocab")
            if vocab[m[2]] != vocab[m[0]] + vocab[m[1]]:
                raise ValueError(f"tokenizer file is malformed: merge #{k} result bytes do not equal its parts")
        trace = None
        if data.get("trace") is not None:
            try:
                trace = [_step_from_json(s, vocab) for s in data["trace"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"tokenizer file is malformed: trace: {exc}") from None
        training = None
        if data.get("training") is not None:
            try:
                training = TrainingInfo(**data["training"])
            except TypeError as exc:
                raise ValueError(f"tokenizer file is malformed: training: {exc}") from None
        return cls._from_parts(
            vocab=vocab, merges=merges, special_tokens=specials, pattern=pattern, name=name,
            trace=trace, training=training,
        )  # fmt: skip

    def save(self, path: str | os.PathLike) -> None:
        """Write this view as JSON (see :meth:`to_dict`) to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> BPETokenizer:
        """Read a tokenizer written by :meth:`save`.

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is not valid JSON or not this format.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a JSON tokenizer file: {exc}") from None
        return cls.from_dict(data)

    def __repr__(self) -> str:
        pattern = self._pattern_name or "custom"
        return f"BPETokenizer(name={self.name!r}, vocab_size={self.vocab_size}, pattern={pattern!r})"


def _resolve_specials(
    special_tokens: Sequence[str] | Mapping[str, int] | None, vocab: Mapping[int, bytes]
) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if isinstance(special_tokens, Mapping):
        out = {}
        for s, i in special_tokens.items():
            if not isinstance(s, str) or isinstance(i, bool) or not isinstance(i, int):
                raise TypeError("special_tokens must map str to int ids")
            if vocab.get(i) != s.encode("utf-8"):
                raise ValueError(f"special token {s!r}: vocab id {i} does not hold its UTF-8 bytes")
            out[s] = i
        validate_special_tokens(list(out))
        return out
    tokens = validate_special_tokens(special_tokens)
    by_bytes = {}
    for i in sorted(vocab):
        by_bytes.setdefault(vocab[i], i)
    out = {}
    for s in tokens:
        i = by_bytes.get(s.encode("utf-8"))
        if i is None:
            raise ValueError(f"special token {s!r} is not in vocab")
        out[s] = i
    return out


def _step_to_json(s: MergeStep) -> list:
    return [s.rank, s.left_id, s.right_id, s.new_id, s.count, s.replaced, s.tokens_after]


def _step_from_json(row: Sequence, vocab: Mapping[int, bytes]) -> MergeStep:
    rank, left, right, new, count, replaced, tokens_after = (int(x) for x in row)
    return MergeStep(rank, left, right, new, vocab[left], vocab[right], count, replaced, tokens_after)


def _train_spec(text, spec, *, progress=None, num_workers=None) -> BPETokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"bpe"``: :func:`train_bpe` with a spec's fields."""
    return train_bpe(
        text, spec.vocab_size, spec.special_tokens, spec.pattern, progress=progress, num_workers=num_workers
    )


register_algorithm(
    Algorithm(
        name="bpe",
        label="Byte-level BPE",
        train=_train_spec,
        from_dict=BPETokenizer.from_dict,
        default_pattern="gpt2",
        default_special_tokens=("<|endoftext|>",),
    )
)
