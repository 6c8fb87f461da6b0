"""Byte-level BPE, the trainer: pre-token counts in, an ordered merge list out.

Trained the way Stanford CS336 assignment 1 specifies (and GPT-2's byte-level
BPE, Radford et al., 2019):

* training text is split on the special tokens (which are removed), then
  pre-tokenized with a regex, and each pre-token is UTF-8 encoded; merges never
  cross a pre-token boundary;
* each step merges the most frequent adjacent pair over all pre-tokens,
  weighted by their counts; ties go to the lexicographically greatest pair
  compared as ``(bytes_of_left, bytes_of_right)``.

Pre-tokens are counted once (:mod:`bpe_core.counting.stream`, streamed and parallel);
the merge loop then works on the table of distinct pre-tokens with incremental
pair counts, a pair -> pre-tokens index and a max-priority queue with lazy
invalidation: the corpus is never rescanned per merge.  The merges must equal
the textbook's, :func:`bpe_core.textbook.bpe.train_merges` (tests/engine/test_bpe_train.py).
"""

from __future__ import annotations

import gc
import heapq
import os
import sys
import time
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from operator import add, mul

import numpy as np

from ..counting.stream import (
    DEFAULT_CHUNK_BYTES,
    PackedCounts,
    count_file,
    count_files,
    count_iterable,
    count_pretokens_fast,
    count_text,
    kernels_mode,
    kernels_ready,
)
from ..interface import ProgressCallback, TrainingInfo, VocabSizeTooSmall
from ..linked_words import LinkedWords
from ..pretokenize import PATTERNS, count_pretokens, resolve_pattern, validate_special_tokens
from .model import BPETokenizer, MergeStep

__all__ = ["train_bpe", "train_bpe_from_counts", "train_from_spec"]


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
              (:func:`bpe_core.counting.stream.count_files`);
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
            (see :mod:`bpe_core.counting.stream`); the merge loop runs here.
        chunk_size: counting chunk length (bytes for a file, characters
            otherwise); chunks end at the first safe boundary after it.
        executor: a ``concurrent.futures.Executor`` to count on instead of local
            processes, e.g. a Dask cluster's ``client.get_executor()``; for files
            each task reads its own byte range (see :mod:`bpe_core.counting.stream`).

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

    ``o w`` and ``l o`` tie at 30; ``(b"o", b"w")`` is the greater pair, so it goes first:

    >>> tok = train_bpe("low lower lowest " * 10, 260)
    >>> tok.vocab_size, tok.merges[:2]
    (260, [(b'o', b'w'), (b'l', b'ow')])
    """
    if isinstance(text, bytes | bytearray | memoryview) or not isinstance(text, str | os.PathLike | Iterable):
        raise TypeError(
            f"text must be a str (the text), an os.PathLike (a file) or an iterable of str, got {type(text).__name__}"
        )
    specials = validate_special_tokens(special_tokens)
    _check_vocab_size(vocab_size, specials)
    source = resolve_pattern(pattern)
    how = {"num_workers": num_workers, "progress": progress, "executor": executor, "as_arrays": True}
    if isinstance(text, str):
        counted = count_text(text, source, specials, chunk_chars=chunk_size, **how)
    elif isinstance(text, os.PathLike):
        counted = count_file(text, source, specials, chunk_bytes=chunk_size, **how)
    elif isinstance(text, list | tuple) and text and all(isinstance(t, os.PathLike) for t in text):
        counted = count_files(text, source, specials, chunk_bytes=chunk_size, **how)
    else:
        counted = count_iterable(text, source, specials, chunk_chars=chunk_size, **how)
    if counted.packed is not None:  # the compiled counter's arrays: no dict of the table ever built
        table = _WordTable.from_packed(counted.packed, counted.special_occurrences)
        counted.packed = None
    else:
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
        raise VocabSizeTooSmall(
            f"vocab_size {vocab_size} is below the base alphabet: byte-level BPE needs at least "
            f"{minimum} (256 byte tokens + {len(specials)} special tokens)",
            minimum,
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

    For the Python loop (``engine == "python"``), each distinct pre-token of two
    bytes or more is a ``str`` in ``words`` with one character per token id
    (``chr(id)``; a byte's id is its value, so latin-1 decoding gives the initial
    form).  For the compiled loop, ``words`` stays empty and the pre-tokens are
    ``packed`` (their bytes concatenated) with their lengths in ``lens``: no
    Python object per pre-token outlives the count table.  ``counts`` is in the
    same order either way; built from the compiled counter's arrays
    (:meth:`from_packed`), the counts are the ``int64`` array ``counts_array``
    instead and ``counts`` stays empty.
    """

    words: list[str]
    counts: list[int]
    initial_tokens: int  # tokens of the text before merging (bytes + special tokens)
    pretokens: int  # pre-token occurrences
    unique_pretokens: int
    special_occurrences: int
    engine: str = "python"
    packed: bytes | np.ndarray = b""
    lens: np.ndarray | None = None
    counts_array: np.ndarray | None = None  # ``counts`` as int64, from packed counts (``counts`` then empty)

    @classmethod
    def from_counts(cls, word_counts: Mapping[bytes, int], special_occurrences: int) -> _WordTable:
        multi = [wb for wb in word_counts if len(wb) > 1]  # one-byte pre-tokens hold no pair
        lens = list(map(len, multi))
        engine = merge_engine(len(multi), sum(n for n in lens if n > _LONG_WORD))
        compiled = engine == "compiled"
        return cls(
            words=[] if compiled else [wb.decode("latin-1") for wb in multi],
            counts=list(map(word_counts.__getitem__, multi)),
            initial_tokens=special_occurrences + sum(map(mul, map(len, word_counts), word_counts.values())),
            pretokens=sum(word_counts.values()),
            unique_pretokens=len(word_counts),
            special_occurrences=special_occurrences,
            engine=engine,
            packed=b"".join(multi) if compiled else b"",
            lens=np.array(lens, dtype=np.int64) if compiled else None,
        )

    @classmethod
    def from_packed(cls, packed: PackedCounts, special_occurrences: int) -> _WordTable:
        """The table of a :class:`bpe_core.counting.stream.PackedCounts`, kept in arrays for the compiled loop.

        Falls back to :meth:`from_counts` (through a dict) when the Python loop
        is to run (few pre-tokens, long ones, or the kernels off).
        """
        lens, counts = packed.lens, packed.counts
        multi = lens > 1  # one-byte pre-tokens hold no pair
        mlens = lens[multi]
        engine = merge_engine(int(mlens.size), int(mlens[mlens > _LONG_WORD].sum()))
        if engine != "compiled":
            return cls.from_counts(packed.to_dict(), special_occurrences)
        data = packed.data if multi.all() else packed.data[np.repeat(multi, lens)]
        return cls(
            words=[],
            counts=[],
            initial_tokens=special_occurrences + int(lens @ counts),
            pretokens=int(counts.sum()),
            unique_pretokens=int(lens.size),
            special_occurrences=special_occurrences,
            engine=engine,
            packed=data,
            lens=np.ascontiguousarray(mlens, dtype=np.int64),
            counts_array=np.ascontiguousarray(counts[multi], dtype=np.int64),
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
    if table.engine == "compiled":
        pairs_total = len(table.packed) - len(table.lens)
    else:
        pairs_total = sum(map(len, table.words)) - len(table.words)
    if len(token_bytes) + min(n_merges, pairs_total) > sys.maxunicode + 1:
        raise ValueError(f"vocab_size {vocab_size} is too large: at most {sys.maxunicode + 1} ids are supported")

    # The loop allocates millions of small containers (index lists, heap entries) and frees
    # none in cycles, so the cyclic garbage collector only rescans them: off for the loop
    # (measured 9.6 s -> 8.5 s CPU for the 20 MB corpus at vocab 10,000).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if table.engine == "compiled":
            held = [table.packed, table.lens, table.counts if table.counts_array is None else table.counts_array]
            table.packed, table.lens, table.counts_array = b"", None, None
            steps = _compiled_merge_loop(held, n_merges, token_bytes, table.initial_tokens, progress)
        else:
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
    tok = BPETokenizer.from_parts(
        vocab=vocab,
        merges=[(s.left_id, s.right_id, s.new_id) for s in steps],
        special_tokens={s: 256 + i for i, s in enumerate(specials)},
        pattern=pattern,
        name=name,
        trace=steps,
        training=info,
    )
    return tok


COMPILED_MIN_PRETOKENS = 5_000
"""Tables with at least this many distinct pre-tokens (of two bytes or more) may use the compiled merge loop.

Below it (a page or two of text) the pure-Python loop runs, with nothing to
load, and is as fast: measured on prefixes of the 1 MB benchmark corpus, GPT-2
pattern, vocabulary 5,000, merge loop Python / compiled: 2,236 distinct
pre-tokens 0.039 / 0.023 s, 5,573: 0.065 / 0.030 s, 11,775: 0.109 / 0.035 s,
31,106: 0.278 / 0.058 s.  (It was 50,000 while the compiled loop cost 0.4 s of
numba start-up per process; loading the kernels' library takes 3 ms.)"""

COMPILED_MAX_LONG_BYTES = 1 << 16
"""The compiled loop rescans a word per merge that touches it, so tables whose words
longer than :data:`_LONG_WORD` bytes add up to more than this (64 KiB) stay on the
Python loop, which keeps such words in :class:`_LongWords`."""


def merge_engine(n_words: int, long_bytes: int = 0) -> str:
    """Which merge loop trains a table: ``"compiled"`` (the kernels) or ``"python"``.

    Both give identical merges and traces.  ``"compiled"`` needs long words
    (over 128 bytes) adding up to at most :data:`COMPILED_MAX_LONG_BYTES`, and,
    unless :data:`bpe_core.counting.stream.KERNELS_ENV` says ``compiled``, at least
    :data:`COMPILED_MIN_PRETOKENS` words and the kernels' library built
    (:func:`bpe_core.counting.native.is_ready`).  When it is not (the first large
    training on a machine), this training runs the Python loop and a background
    process builds it (:func:`warm_compiled_loop`, about 12-20 s, once per
    machine and source version): no training ever waits for a compile.

    Args:
        n_words: distinct pre-tokens of two bytes or more.
        long_bytes: total bytes of those longer than 128 bytes.

    Returns:
        ``"compiled"`` or ``"python"``.

    Raises:
        ValueError: :data:`bpe_core.counting.stream.KERNELS_ENV` holds another value.
    """
    mode = kernels_mode()
    if mode == "python" or (mode == "auto" and n_words < COMPILED_MIN_PRETOKENS):
        return "python"
    if long_bytes > COMPILED_MAX_LONG_BYTES:
        return "python"
    return "compiled" if kernels_ready(mode == "compiled") else "python"


def warm_compiled_loop() -> None:
    """Build the kernels' shared library, check it, and put it in place (what the background process runs).

    :func:`bpe_core.counting.native_build.build_library` compiles every kernel into a
    candidate file beside :func:`bpe_core.counting.native.library_path`; this process
    loads it, trains a small table through :func:`_compiled_merge_loop` and
    counts a small text with :func:`bpe_core.counting.stream.count_pretokens_fast`,
    checks both against the Python paths, and only then renames it into place
    (so :func:`bpe_core.counting.native.is_ready` never sees a library that was not checked).

    Raises:
        ImportError: numba is not installed.
        RuntimeError: the link failed.
        AssertionError: the library disagrees with the Python paths (it is then not used).
        OSError: the cache directory is not writable.
    """
    from ..counting import kernel as count_kernel
    from ..counting import native, native_build

    if not native.HAVE_NUMBA:
        raise ImportError("numba is not installed: the kernels cannot be compiled")
    final = native.library_path()
    candidate = f"{final}.{os.getpid()}.candidate"
    try:
        native_build.build_library(candidate)
        native.load_library(candidate)
        words = [w.encode() for w in ("low lower lowest newer newest wider widest " * 3 + "aaaa abab").split()]
        counts = list(range(1, len(words) + 1))
        lens = np.array(list(map(len, words)), dtype=np.int64)
        got = _compiled_merge_loop([b"".join(words), lens, counts], 30, [bytes([i]) for i in range(256)], 0, None)
        want = _merge_loop([w.decode("latin-1") for w in words], counts, 30, [bytes([i]) for i in range(256)], 0, None)
        assert got == want, "the compiled merge loop disagrees with the Python loop"
        count_kernel.warm()  # every counting kernel, the table growths included
        sample = "It's 2024: the café's 3 ovens\n\n  baked   42 loaves! " * 20
        fast = count_pretokens_fast(sample, ("<|endoftext|>",), force=True)
        regex_counts, _ = count_pretokens(sample, "gpt2", ("<|endoftext|>",))
        assert fast is not None and fast[0] == {k.encode(): v for k, v in regex_counts.items()}, "compiled counter"
        os.replace(candidate, final)
    finally:
        if os.path.exists(candidate):
            os.remove(candidate)


def _compiled_merge_loop(
    held: list,
    n_merges: int,
    token_bytes: list[bytes],
    initial_tokens: int,
    progress: ProgressCallback | None,
) -> list[MergeStep]:
    """:func:`_merge_loop` run by :class:`bpe_core.bpe.merge_kernel.MergeLoop` (same result).

    Args:
        held: ``[packed, lens, counts]``, emptied here so that they are freed once
            turned into token ids: the distinct pre-tokens of two bytes or more,
            their bytes concatenated (``bytes`` or a ``uint8`` array); their
            lengths in bytes (``int64``); their counts, same order (a list or an
            ``int64`` array).
        n_merges: merges to learn at most.
        token_bytes: bytes of each id so far (256 bytes + specials); extended.
        initial_tokens: tokens of the training text before merging.
        progress: ``progress("merge", done, n_merges)`` about 200 times.

    The words become one ``int32`` array, each word a header (its length and
    count) and its token ids (:mod:`bpe_core.bpe.merge_kernel`); the initial pair
    table (counts, and the words holding each pair) is built in two linear passes.
    """
    from .merge_kernel import MergeLoop

    packed, lens, counts = held
    held.clear()
    data = np.frombuffer(packed, dtype=np.uint8) if not isinstance(packed, np.ndarray) else packed
    loop = MergeLoop(data, np.asarray(lens, dtype=np.int64), np.asarray(counts, dtype=np.int64), token_bytes, n_merges)
    del packed, data, lens, counts

    report_every = max(1, n_merges // 200)
    done = 0
    while done < n_merges:
        want = min(report_every, n_merges - done)
        k = loop.run(want)
        done += k
        if k < want:
            break  # no pair left
        if progress is not None:
            progress("merge", done, n_merges)
    out = loop.out
    del loop
    left, right, count, replaced = (row.tolist() for row in out[:, :done])
    steps: list[MergeStep] = []
    tokens = initial_tokens
    for rank in range(done):
        a, b = left[rank], right[rank]
        new_id = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        tokens -= replaced[rank]
        steps.append(MergeStep(rank, a, b, new_id, token_bytes[a], token_bytes[b], count[rank], replaced[rank], tokens))
    if progress is not None:
        progress("merge", len(steps), n_merges)
    return steps


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

_ID_BITS = 21
"""Bits of a token id in the long words' pair keys: ids are code points (the ``chr(id)`` of the ``str`` words)."""


class _LongWords(LinkedWords):
    """The long pre-tokens of a training run, as :class:`~bpe_core.linked_words.LinkedWords`, in the loop's terms.

    A pre-token of 100 KB (minified code, base64, a language written without
    spaces under a custom pattern) holds each frequent pair thousands of times;
    rewriting it as a ``str`` per merge costs its whole length per merge
    (quadratic overall), where the linked lists cost only the occurrences a
    merge touches.  The merge loop names pairs by 2-character ``str`` (one
    character per token id); this class translates to and from the lists'
    integer pair keys.
    """

    __slots__ = ()

    def __init__(self, words: Sequence[str], counts: Sequence[int]) -> None:
        super().__init__([w.encode("latin-1") for w in words], counts, _ID_BITS, ordered=False)
        self.seed()

    def _pair(self, q: int) -> str:
        return chr(q >> _ID_BITS) + chr(q & self.mask)

    def pair_counts_by_str(self) -> dict[str, int]:
        """Every adjacent pair's count over the long pre-tokens (weighted), walking the lists."""
        pair = self._pair
        return {pair(q): c for q, c in self.pair_counts().items()}

    def merge_str(self, best: str, new_ch: str, pair_counts: dict[str, int], fresh: dict[str, int]) -> int:
        """Replace every occurrence of ``best`` by ``new_ch``; returns the weighted replacements.

        Pairs that lose an occurrence lose its weight in ``pair_counts`` (or in
        ``fresh`` when they hold ``new_ch``); pairs made with ``new_ch`` gain it in
        ``fresh``, as the merge loop keeps them.
        """
        delta: dict[int, int] = {}
        replaced = self.merge(ord(best[0]), ord(best[1]), ord(new_ch), delta)
        f_get = fresh.get
        mask = self.mask
        for q, d in delta.items():
            p = chr(q >> _ID_BITS) + chr(q & mask)
            if new_ch in p:
                fresh[p] = f_get(p, 0) + d
            else:
                pair_counts[p] += d
        return replaced


class _MergeLoop:
    """The incremental BPE merge loop over a table of distinct pre-tokens: the state and its named steps.

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

    One :meth:`step` is: :meth:`pop_best`, :meth:`new_token`,
    :meth:`rewrite_words` (and the long pre-tokens' merge),
    :meth:`move_neighbour_counts`, :meth:`add_fresh_pairs`.
    """

    def __init__(self, words: list[str], counts: list[int], token_bytes: list[bytes]) -> None:
        self.words, self.counts, self.token_bytes = words, counts, token_bytes
        self.keys: list[str] = [_desc_key(b) for b in token_bytes]
        self.min_count = 2  # pairs below it wait for a rebuild (see above)
        long_ids = [i for i, w in enumerate(words) if len(w) > _LONG_WORD]
        self.longs = _LongWords([words[i] for i in long_ids], [counts[i] for i in long_ids]) if long_ids else None
        for i in long_ids:
            words[i] = "\x00"  # one token: no pair left in the str path (the long words live in ``longs``)
        self.rebuild()

    def rebuild(self) -> None:
        """Count, index and queue every pair of count ``min_count`` or more (:func:`_pair_table`)."""
        longs = self.longs
        extra = longs.pair_counts_by_str() if longs is not None else None
        self.pair_counts, self.where, self.heap = _pair_table(self.words, self.counts, self.keys, self.min_count, extra)

    def pop_best(self) -> tuple[str, int] | None:
        """Pop the pair of highest count (ties: greatest bytes) whose heap entry is current; ``(pair, count)``.

        Rebuilds the tables with ``min_count`` 1 when the heap runs dry first.
        """
        heappush, heappop = heapq.heappush, heapq.heappop
        while True:
            heap, min_count = self.heap, self.min_count
            pc_get = self.pair_counts.get
            while heap:
                negc, ka, kb, p = heappop(heap)
                cur = pc_get(p, 0)
                if cur == -negc:
                    return p, cur
                if cur >= min_count:
                    heappush(heap, (-cur, ka, kb, p))
                elif cur == 0:  # the pair is gone for good: nothing can create it again
                    self.where.pop(p, None)
                # else: below min_count, like the pairs left out of the heap; the rebuild brings it back
            if min_count == 1:
                return None
            self.min_count = 1
            self.rebuild()

    def new_token(self, a: int, b: int) -> str:
        """Add the token ``a + b`` (its bytes and heap key); returns its character."""
        token_bytes = self.token_bytes
        token_bytes.append(token_bytes[a] + token_bytes[b])
        self.keys.append(_desc_key(token_bytes[-1]))
        return chr(len(token_bytes) - 1)

    def rewrite_words(self, best: str, new_ch: str) -> tuple[dict, dict, dict[str, int], dict, int]:
        """Replace ``best`` by ``new_ch`` in every pre-token indexed under it.

        A pre-token holding the pair once, with ``a != b`` (the common case),
        changes only ``(x, a) -> (x, new)`` and ``(b, y) -> (new, y)``: the visit
        just files the word under its neighbours ``x`` and ``y``
        (:meth:`move_neighbour_counts` then moves the counts per neighbour, as
        sums over the filed words, in C).  Other pre-tokens (the pair more than
        once, or ``a == b``, where occurrences can overlap) are updated pair by
        pair; everything outside the stretch from one token before the first
        occurrence to one token after the last keeps its pairs.

        Returns:
            ``(left, right, fresh, fresh_where, shortened)``: neighbour -> words
            filed under it, on each side; the counts of pairs made with
            ``new_ch`` in the other pre-tokens, and the words holding each; the
            weighted replacements in the other pre-tokens.
        """
        words, counts, pair_counts = self.words, self.counts, self.pair_counts
        left: defaultdict[str, list[int]] = defaultdict(list)
        right: defaultdict[str, list[int]] = defaultdict(list)
        fresh: dict[str, int] = {}
        f_get = fresh.get
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        overlapping = best[0] == best[1]
        shortened = 0
        for wi in self.where.pop(best, ()):
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
        return left, right, fresh, fresh_where, shortened

    def move_neighbour_counts(
        self, best: str, new_ch: str, left: dict, right: dict, fresh: dict, fresh_where: dict
    ) -> None:
        """For the words filed under each neighbour ``x``: ``(x, a)`` loses their weight and ``(x, new)`` gains it.

        Likewise ``(b, y)`` -> ``(new, y)`` on the right.  A pair made here that
        is not also in ``fresh`` is counted, indexed and queued at once.
        """
        pair_counts, where, heap, keys, min_count = self.pair_counts, self.where, self.heap, self.keys, self.min_count
        counts_at = self.counts.__getitem__
        heappush = heapq.heappush
        a_ch, b_ch = best
        new_key = keys[ord(new_ch)]
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

    def add_fresh_pairs(self, fresh: dict[str, int], fresh_where: dict) -> None:
        """Count the pairs made with the new token in ``fresh``; index and queue those of ``min_count`` or more."""
        pair_counts, where, heap, keys, min_count = self.pair_counts, self.where, self.heap, self.keys, self.min_count
        heappush = heapq.heappush
        for q, nc in fresh.items():
            pair_counts[q] = nc
            if nc >= min_count:
                where[q] = array("I", fresh_where[q])
                heappush(heap, (-nc, keys[ord(q[0])], keys[ord(q[1])], q))

    def step(self, rank: int, tokens: int) -> MergeStep | None:
        """Do merge ``rank`` on a text of ``tokens`` tokens; ``None`` when no pair is left."""
        found = self.pop_best()
        if found is None:
            return None
        best, count = found
        a, b = ord(best[0]), ord(best[1])
        new_ch = self.new_token(a, b)
        left, right, fresh, fresh_where, shortened = self.rewrite_words(best, new_ch)
        if self.longs is not None:  # before the neighbours, which set pairs not in ``fresh`` directly
            shortened += self.longs.merge_str(best, new_ch, self.pair_counts, fresh)
        self.move_neighbour_counts(best, new_ch, left, right, fresh, fresh_where)
        del self.pair_counts[best]
        self.add_fresh_pairs(fresh, fresh_where)
        if a != b:
            shortened = count  # a pair of two different tokens cannot overlap: every occurrence is replaced
        tb = self.token_bytes
        return MergeStep(rank, a, b, ord(new_ch), tb[a], tb[b], count, shortened, tokens - shortened)


def _merge_loop(
    words: list[str],
    counts: list[int],
    n_merges: int,
    token_bytes: list[bytes],
    initial_tokens: int,
    progress: ProgressCallback | None,
) -> list[MergeStep]:
    """The incremental merge loop (:class:`_MergeLoop`); appends new tokens to ``token_bytes`` in place.

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
    loop = _MergeLoop(words, counts, token_bytes)
    steps: list[MergeStep] = []
    tokens = initial_tokens
    report_every = max(1, n_merges // 200)
    for rank in range(n_merges):
        step = loop.step(rank, tokens)
        if step is None:
            break
        tokens = step.tokens_after
        steps.append(step)
        if progress is not None and (rank + 1) % report_every == 0:
            progress("merge", rank + 1, n_merges)
    if progress is not None:
        progress("merge", len(steps), n_merges)
    return steps


def train_from_spec(text, spec, *, progress=None, num_workers=None) -> BPETokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"bpe"``: :func:`train_bpe` with a spec's fields."""
    return train_bpe(
        text, spec.vocab_size, spec.special_tokens, spec.pattern, progress=progress, num_workers=num_workers
    )
