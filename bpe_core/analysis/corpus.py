r"""Corpus figures by distinct pieces: every Compare figure of a large text under many tokenizers at once.

Every figure of :class:`~bpe_core.analysis.metrics.TextMetrics` is a sum over
the text (distinct tokens: a union), so a tokenizer need not encode the whole
text: it can encode each *distinct* piece once and weight it by its count.
This module does that for any number of tokenizers, and gives exactly what
:func:`~bpe_core.analysis.metrics.compute_metrics` gives on the whole text's
``token_spans`` (``tests/engine/test_corpus.py`` compares both on real and
adversarial texts for every registered tokenizer).

The unit the figures sum over
-----------------------------
"Words split" and "tokens per word" count *words* (maximal runs of non-space
characters, ``regex``'s ``\S``), and a word can span several of a
tokenizer's pre-tokens (``don`` + ``'t``), so the figures cannot be summed over
pre-tokens alone.  They are summed over **units**: the text cut before every
space (U+0020) whose previous character is not whitespace -- and, for the
few tokenizers that need it, may be cut after (:meth:`CorpusPieces.cut_after
<bpe_core.interface.CorpusPieces.cut_after>`)::

    "Hello, world  of\ntext"  ->  "Hello,"  " world"  "  of\ntext"

A cut never falls inside a word, so each word lies in one unit, and the
words' figures of the text are the sums of the units' figures.  Every unit but
a document's first starts with the space of its cut (whose previous character
is not whitespace), and every unit but a document's last ends with a
non-space character followed by a space; so for every tokenizer here a unit
encodes exactly as it does inside the text, except a document's first unit
(SentencePiece's dummy ``▁``), which is counted apart.  No named pattern
matches across such a space (a space only ever *starts* a pre-token), BERT
splits there, and SentencePiece-style tokenizers start a word there.

Each tokenizer then cuts each distinct unit into **pieces** that no token of
it crosses -- its pre-tokens, cut out of the unit with the unit as context --
and encodes each distinct piece once (:class:`~bpe_core.interface.CorpusPieces`,
declared by the tokenizer; tokenizers with the same split share its count).
A word can span pieces of one unit; the figures of the unit's words are put
together from its pieces in order (:func:`bpe_core.analysis.corpus_kernel.walk_units`),
so they are exact even where a piece holds no token of a word (BERT drops
characters).  Normalizing tokenizers (BERT's lower-casing and accents, Qwen's
NFC, XLM-R's charsmap) cut units into pieces of the *original* text at places
their normalization does not cross, and report each token's characters in the
original piece.

Documents: a ``str`` is one document; a directory's files are each their own
document, measured as each would be alone and summed (no token joins two files).

Counting runs once for all tokenizers: the units are counted by the compiled
counter (:mod:`bpe_core.counting.unit_kernel`), in threads of this process or
on any ``concurrent.futures`` executor (a Dask cluster's); pieces are counted
from the distinct units only, once per split that cuts them differently
(:func:`count_splits`: tokenizers sharing a pattern share a count unless the
text holds a special token of one of them), the splits in threads; the
tokenizers then encode their pieces two at a time.

>>> from bpe_core import train_bpe
>>> tok = train_bpe("low lower lowest " * 20, 270)
>>> text = "lower lowest, low"
>>> from bpe_core.analysis.metrics import compute_metrics
>>> m = measure_corpus(text, [tok])[0]
>>> w = compute_metrics(text, tok.token_spans(text), tok.vocab_size)
>>> (m.tokens, m.words, m.words_split, m.distinct_tokens) == (w.tokens, w.words, w.words_split, w.distinct_tokens)
True
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Hashable, Iterable, MutableMapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import regex

from ..counting.kernel import char_classes, read_only
from ..interface import CorpusPieces, ProgressCallback, Tokenizer, TrainingCancelled, corpus_pieces
from ..pieces import PackedPieces
from .corpus_kernel import piece_stats, special_matches, special_trie, unit_totals, walk_units
from .metrics import Counts, TextMetrics, metrics_from_counts, span_counts
from .scripts import SCRIPT_GROUPS, ScriptRow, char_group_table, script_breakdown

if TYPE_CHECKING:
    from ..counting.pretoken_kernel import Workspace

__all__ = [
    "CorpusComparison",
    "PieceCounts",
    "UnitCounts",
    "compare_corpus",
    "count_pieces",
    "count_splits",
    "count_units",
    "measure_corpus",
    "text_units",
    "unit_cut_table",
]

SPACE = 0x20
CHUNK_BYTES = 1 << 20
"""Units are counted in chunks of at least this many bytes, cut at a unit cut (threads count them)."""

_CHUNK_CUT = regex.compile(rb"(?<=[A-Za-z0-9]) (?=[A-Za-z])")
"""Where a long input is cut into chunks: a space after an ASCII letter or digit, before a letter (a unit cut for
every tokenizer: a :meth:`~bpe_core.interface.CorpusPieces.cut_after` table must allow ASCII letters and digits)."""

_OTHER = SCRIPT_GROUPS.index("Other")


# ---------------------------------------------------------------------------
# units


@lru_cache(maxsize=1)
def space_table() -> np.ndarray:
    r"""``uint8[0x110000]``: 1 for the whitespace characters (``regex``'s ``\s``, as :func:`~.metrics.word_ranges`)."""
    from ..counting.kernel import SPACE as SPACE_CLASS

    return (char_classes() == SPACE_CLASS).astype(np.uint8)


def unit_cut_table(pieces: Iterable[CorpusPieces | None]) -> np.ndarray:
    """``uint8[0x110000]``: the characters a unit may end after for every one of the tokenizers' pieces.

    The non-space characters, less those any :meth:`~bpe_core.interface.CorpusPieces.cut_after`
    leaves out.

    Raises:
        ValueError: a table forbids cutting after an ASCII letter or digit (chunks are cut there).
    """
    table = 1 - space_table()
    for p in pieces:
        allowed = p.cut_after() if p is not None else None
        if allowed is not None:
            table = table & np.asarray(allowed, dtype=np.uint8)
    alnum = [ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"]
    if not table[alnum].all():
        raise ValueError("a tokenizer's pieces forbid cutting after an ASCII letter or digit")
    return np.ascontiguousarray(table, dtype=np.uint8)


def text_units(text: str, cut_after: np.ndarray | None = None) -> list[str]:
    r"""The units of ``text``: cut before every space whose previous character is a non-space one may cut after.

    The textbook version of the compiled counter (:mod:`bpe_core.counting.unit_kernel`).

    Args:
        text: the text (one document).
        cut_after: :func:`unit_cut_table` (default: every non-space character).

    Returns:
        The units in order; they concatenate to ``text`` (empty for an empty text).

    >>> text_units("Hello, world  of\ntext")
    ['Hello,', ' world', '  of\ntext']
    """
    table = unit_cut_table(()) if cut_after is None else cut_after
    out: list[str] = []
    start = 0
    for i in range(1, len(text)):
        if text[i] == " " and table[ord(text[i - 1])] and i > start:
            out.append(text[start:i])
            start = i
    if text:
        out.append(text[start:])
    return out


@dataclass(slots=True)
class UnitCounts:
    """The distinct units of a corpus with their counts.

    Attributes:
        texts: each distinct unit (a unit that starts a document is apart from the same text elsewhere).
        counts: ``int64``, its occurrences.
        first: ``bool``, the unit starts a document.
        documents: documents counted.
        seconds: wall time of the counting (seconds).
    """

    texts: list[str]
    counts: np.ndarray
    first: np.ndarray
    documents: int = 0
    seconds: float = 0.0
    _packed: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.texts)

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(data, offsets)``: the units' UTF-8 concatenated (``uint8``) and their byte offsets (``int64[n + 1]``)."""
        if self._packed is None:
            self._packed = _pack(self.texts)
        return self._packed


def _pack(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return read_only(np.frombuffer(b"".join(encoded), dtype=np.uint8)), offsets


class _Units:
    """Adds the counted units of chunks into one table (compiled accumulator) and the documents' first units."""

    def __init__(self, progress: ProgressCallback | None, total: int) -> None:
        from ..counting.kernel import CountAccumulator

        self.acc = CountAccumulator()
        self.first: dict[bytes, int] = {}
        self.lock = threading.Lock()
        self.done = 0
        self.total = total
        self.progress = progress

    def add(self, part: tuple) -> None:
        buf, starts, lens, counts, first, last = part
        with self.lock:
            if lens.size:
                self.acc.add(buf, starts, lens, counts)
            if last is not None:
                self.acc.add(buf, [last[0]], [last[1] - last[0]], [1])
            if first is not None:
                key = bytes(buf[first[0] : first[1]])
                self.first[key] = self.first.get(key, 0) + 1
            self.done += 1
            if self.progress is not None:
                self.progress("count", self.done, self.total)

    def result(self, documents: int, seconds: float) -> UnitCounts:
        data, lens, counts = self.acc.result()
        raw = data.tobytes()
        ends = np.cumsum(lens)
        texts = [raw[e - n : e].decode("utf-8") for e, n in zip(ends.tolist(), lens.tolist())]
        texts += [k.decode("utf-8") for k in self.first]
        all_counts = np.concatenate([counts, np.fromiter(self.first.values(), dtype=np.int64, count=len(self.first))])
        first = np.zeros(len(texts), dtype=bool)
        first[len(lens) :] = True
        return UnitCounts(texts, all_counts.astype(np.int64), first, documents, seconds)


def _units_of_bytes(data: bytes, table: np.ndarray, keep_first: bool, source: str) -> tuple:
    """The compiled unit counter on one chunk: ``(buf, starts, lens, counts, first, last)``."""
    from ..counting.unit_kernel import count_units as count_chunk

    done = count_chunk(data, table, keep_first=keep_first)
    if done is None:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{source} is not valid UTF-8: byte 0x{data[exc.start]:02X} at offset {exc.start} of its chunk "
                "cannot start or continue a character"
            ) from None
        raise AssertionError("unreachable: the unit counter refused valid UTF-8")
    buf, starts, lens, counts, _n, first, last = done
    return buf, starts, lens, counts, first, last


def _byte_chunks(data: bytes, chunk_bytes: int) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` covering ``data``, cut at :data:`_CHUNK_CUT` after at least ``chunk_bytes``."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(data)
    while n - start > chunk_bytes:
        m = _CHUNK_CUT.search(data, start + chunk_bytes)
        if m is None:
            break
        out.append((start, m.start()))
        start = m.start()
    if start < n:
        out.append((start, n))
    return out


def _file_chunks(path: str, chunk_bytes: int) -> list[tuple[int, int]]:
    """As :func:`_byte_chunks` for a file, reading only a window around each cut."""
    size = os.path.getsize(path)
    out: list[tuple[int, int]] = []
    start = 0
    window = 1 << 16
    with open(path, "rb") as f:
        while size - start > chunk_bytes:
            pos = start + chunk_bytes
            cut = size
            while pos < size:
                f.seek(pos - 1)
                block = f.read(window + 2)
                m = _CHUNK_CUT.search(block, 1)
                if m is not None and m.start() <= window:
                    cut = pos - 1 + m.start()
                    break
                pos += window
            if cut >= size:
                break
            out.append((start, cut))
            start = cut
    if start < size:
        out.append((start, size))
    return out


def _count_range(path: str, start: int, end: int, table: np.ndarray) -> tuple:
    """Count the units of bytes ``[start, end)`` of a file (a byte-order mark at its very start dropped)."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    if start == 0 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return _units_of_bytes(data, table, start == 0, path)


def count_units(
    source: str | Sequence[str | os.PathLike],
    cut_after: np.ndarray,
    *,
    files: bool = False,
    num_workers: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
) -> UnitCounts:
    """Count the distinct units of a text, or of files (each its own document), with the compiled counter.

    Args:
        source: the text (``files=False``), or file paths (``files=True``;
            directories and patterns expanded by :func:`bpe_core.counting.stream.expand_inputs`).
        cut_after: :func:`unit_cut_table` of the tokenizers measured.
        files: ``source`` names files.
        num_workers: threads counting chunks (default: all cores); ignored with ``executor``.
        chunk_bytes: the shortest chunk, in bytes (chunks end at :data:`_CHUNK_CUT`).
        progress: ``progress("count", chunks done, chunks)``; may raise to stop.
        executor: a ``concurrent.futures.Executor`` counting file chunks instead
            of local threads (each task reads its own byte range: a Dask
            cluster's ``client.get_executor()`` whose workers see the files).

    Returns:
        A :class:`UnitCounts`.

    Raises:
        ValueError: not UTF-8 (the message names the file), a bad ``chunk_bytes``.
        OSError: a file cannot be read.
        TypeError: ``source`` is not a ``str`` when ``files`` is false.
    """
    from ..counting.stream import expand_inputs

    t0 = time.perf_counter()
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be at least 1, got {chunk_bytes}")
    table = read_only(cut_after)
    if files:
        paths = expand_inputs(source)
        tasks = [(p, s, e, table) for p in paths for s, e in _file_chunks(p, chunk_bytes)]
        fn: Callable = _count_range
        documents = len(paths)
    else:
        if not isinstance(source, str):
            raise TypeError(f"text must be a str, got {type(source).__name__}")
        data = source.encode("utf-8")  # an unpaired surrogate raises here, as encoding would
        view = memoryview(data)
        tasks = [(view[s:e], table, s == 0, "the text") for s, e in _byte_chunks(data, chunk_bytes)]
        fn = _units_of_bytes
        documents = 1
        executor = None  # a str's chunks are counted here
    units = _Units(progress, len(tasks))
    if progress is not None:
        progress("count", 0, len(tasks))
    workers = max(1, min(os.cpu_count() or 1 if num_workers is None else num_workers, len(tasks)))
    if executor is not None:
        for fut in [executor.submit(fn, *t) for t in tasks]:
            units.add(fut.result())
    elif workers == 1:
        for t in tasks:
            units.add(fn(*t))
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bpe-units") as pool:
            for part in pool.map(lambda t: fn(*t), tasks):
                units.add(part)
    return units.result(documents, time.perf_counter() - t0)


# ---------------------------------------------------------------------------
# pieces


@dataclass(slots=True)
class PieceCounts:
    """The distinct pieces of a corpus's units under one split, with their counts and where they occur.

    Attributes:
        pieces: each distinct piece (a document's first piece apart from the same text elsewhere), as a
            :class:`~bpe_core.pieces.PackedPieces` of ``data`` and ``offsets``.
        first: ``bool``, the piece starts a document.
        counts: ``int64``, its occurrences in the corpus.
        refs: ``int64``, for each unit in order, its pieces' indices in order.
        unit_offsets: ``int64[units + 1]``: unit ``u``'s pieces are ``refs[unit_offsets[u]:unit_offsets[u + 1]]``.
        unit_counts: ``int64``, each unit's occurrences (:attr:`UnitCounts.counts`).
        data, offsets: the pieces' UTF-8 concatenated and their byte offsets.
    """

    pieces: list[str]
    first: np.ndarray
    counts: np.ndarray
    refs: np.ndarray
    unit_offsets: np.ndarray
    unit_counts: np.ndarray
    data: np.ndarray
    offsets: np.ndarray

    def __post_init__(self) -> None:
        # the encoders take the pieces packed already (pack_utf8 reads them off the list)
        self.pieces = PackedPieces(self.pieces, self.data, self.offsets)


def count_pieces(units: UnitCounts, split: CorpusPieces, *, compiled: bool = True) -> PieceCounts:
    """Cut every distinct unit with one tokenizer's split and count the distinct pieces.

    A split by a pattern the compiled pre-tokenizer runs
    (:func:`bpe_core.counting.pretoken_kernel.machine_for`) is cut and counted
    there (:func:`_compiled_pieces`; ``compiled=False``: the textbook way
    for it too); any other by its ``split_units``.

    Raises:
        ValueError: the split's pieces do not put the unit back together.
    """
    done = _compiled_pieces(units, split) if compiled else None
    if done is not None:
        return done
    if compiled and getattr(split, "whole_units", False):
        return _unit_pieces(units)
    flat, sizes = split.split_units(units.texts, units.first)
    sizes = np.asarray(sizes, dtype=np.int64)
    unit_offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum(sizes, out=unit_offsets[1:])
    if unit_offsets[-1] != len(flat):
        raise ValueError("a split gave a different number of pieces than it reported")
    keys: list = flat  # a piece that starts a document is keyed apart, as a 1-tuple (never equal to a str)
    starts_doc = unit_offsets[:-1][units.first & (sizes > 0)].tolist()
    if starts_doc:
        keys = list(flat)
        for k in starts_doc:
            keys[k] = (flat[k],)
    index: dict = {}
    new_id = index.setdefault  # each new key gets the next number, in order of first sight
    refs = np.fromiter((new_id(key, len(index)) for key in keys), dtype=np.int64, count=len(keys))
    pieces = [key if key.__class__ is str else key[0] for key in index]
    first = [key.__class__ is not str for key in index]
    weights = np.repeat(units.counts, sizes)
    counts = np.bincount(refs, weights=weights.astype(np.float64), minlength=len(pieces)).astype(np.int64)
    data, offsets = _pack(pieces)
    _check_cover(units, data, offsets, refs, unit_offsets)
    return PieceCounts(pieces, np.array(first, dtype=bool), counts, refs, unit_offsets, units.counts, data, offsets)


def _unit_pieces(units: UnitCounts) -> PieceCounts:
    """The pieces of a split that keeps every unit whole: the distinct units themselves, in order."""
    n = len(units)
    data, offsets = units.packed()
    refs = np.arange(n, dtype=np.int64)
    return PieceCounts(list(units.texts), units.first.copy(), units.counts, refs, np.arange(n + 1, dtype=np.int64),
                       units.counts, data, offsets)  # fmt: skip


def _machine_of(split: CorpusPieces) -> tuple | None:
    """``(runner, special tokens, normal form, crossing)`` of a split the compiled pre-tokenizer runs, else ``None``.

    The runner is a :class:`~bpe_core.counting.pretoken_kernel.Machine` or a
    :class:`~bpe_core.counting.pretoken_kernel.Program`.  Only these keys say
    that every unit is cut as its patterns cut it:

    * ``("pre-tokens", pattern source, special tokens)`` (:func:`bpe_core.pieces.regex_pieces`;
      a split sequence's patterns in place of the source,
      :meth:`bpe_core.production.byte_bpe.ByteLevelBPE.corpus_pieces`) and
      ``("split-sequence", patterns, special tokens)``;
    * ``("split-sequence", patterns, special tokens, crossing)``
      (:meth:`bpe_core.production.char_bpe.CharBPE.corpus_pieces`): the same,
      less the cuts inside a crossing token (:func:`_join_crossing`);
    * ``("normal pre-tokens", form, pattern source, special tokens)``
      (:meth:`bpe_core.production.encodings.ProductionEncoding.corpus_pieces`):
      the same for a unit already in normal form ``form``, any other unit one piece.
    """
    key = split.key
    from ..counting.native import HAVE_NUMBA

    if not HAVE_NUMBA or not isinstance(key, tuple):
        return None
    form, joins = None, ()
    if len(key) == 3 and key[0] in ("pre-tokens", "split-sequence"):
        source, specials = key[1], key[2]
    elif len(key) == 4 and key[0] == "split-sequence":
        source, specials, joins = key[1], key[2], key[3]
    elif len(key) == 4 and key[0] == "normal pre-tokens":
        form, source, specials = key[1], key[2], key[3]
    else:
        return None
    from ..counting.pretoken_kernel import machine_for, program_for

    runner = machine_for(source) or program_for(source)
    return None if runner is None else (runner, specials, form, joins)


def _written(part: str) -> bytes:
    """A bytes pattern of ``part`` as the text may write it: each ``▁`` a space or a ``▁``."""
    return b"".join(b"(?: |\xe2\x96\x81)" if c == "\u2581" else regex.escape(c.encode()) for c in part)


def _join_crossing(data, offsets, cut_off, cuts, rows, crossing):
    """``(cut_off, cuts)`` less every cut inside a crossing token (:meth:`bpe_core.production.char_bpe.CharBPE._units`).

    A crossing ``(token, j)`` (``token[j]`` a ``▁`` after another character)
    keeps the cut ``j`` characters into an occurrence of ``token`` whole: written
    with a space or ``▁`` for each ``▁``, inside one unit, one line and one stretch
    between special tokens (``rows``).  A token holding a space or a newline
    never occurs in a line with its spaces made ``▁``: it keeps no cut.
    """
    drop: list[int] = []
    for token, j in crossing:
        if " " in token or "\n" in token:
            continue
        rx = regex.compile(b"(" + _written(token[:j]) + b")" + _written(token[j:]))
        for m in rx.finditer(data.tobytes(), overlapped=True):
            a, p, b = m.start(), m.end(1), m.end()
            unit = int(np.searchsorted(offsets, a, side="right")) - 1
            k = int(np.searchsorted(rows[:, 1], a, side="right"))  # the first special token ending after a
            if b <= offsets[unit + 1] and (k == rows.shape[0] or rows[k, 0] >= b):
                drop.append(p)
    if not drop:
        return cut_off, cuts
    keep = ~np.isin(cuts, np.array(drop, dtype=np.int64))
    unit_of = np.repeat(np.arange(cut_off.size - 1), np.diff(cut_off))
    new_off = np.zeros_like(cut_off)
    np.cumsum(np.bincount(unit_of[keep], minlength=cut_off.size - 1), out=new_off[1:])
    return new_off, cuts[keep]


def _whole_units(cut_off: np.ndarray, cuts: np.ndarray, offsets: np.ndarray, whole: np.ndarray):
    """``(cut_off, cuts)`` with every unit marked in ``whole`` (``bool[n]``) made one piece (an empty unit none)."""
    if not whole.any():
        return cut_off, cuts
    sizes = np.diff(cut_off)
    keep = np.repeat(~whole, sizes)
    new_sizes = np.where(whole, (np.diff(offsets) > 0).astype(np.int64), sizes)
    new_off = np.zeros_like(cut_off)
    np.cumsum(new_sizes, out=new_off[1:])
    out = np.empty(int(new_off[-1]), dtype=np.int64)
    kept = ~whole
    out[np.repeat(kept, new_sizes)] = cuts[keep]
    lone = whole & (new_sizes > 0)
    out[new_off[:-1][lone]] = offsets[1:][lone]
    return new_off, out


def _special_rows(data: np.ndarray, offsets: np.ndarray, specials: Sequence[str]) -> np.ndarray:
    """``int64[m, 2]``: the byte ranges of the special tokens in the units' UTF-8, as ``split_special`` finds them.

    Leftmost, then longest first, as :func:`bpe_core.pretokenize.special.special_regex`
    matches in each unit alone (a match never runs into the next unit): one
    compiled walk of the tokens' byte trie (:func:`~.corpus_kernel.special_matches`;
    a thousand-token alternation is a slow regex, and runs of whitespace tokens
    (MPT's) a slow one even short).
    """
    if not specials:
        return np.zeros((0, 2), dtype=np.int64)
    return special_matches(data, offsets, _trie(tuple(sorted(specials))))


@lru_cache(maxsize=64)
def _trie(specials: tuple[str, ...]) -> tuple:
    """:func:`~.corpus_kernel.special_trie` of the tokens' UTF-8, kept per token list."""
    return special_trie([t.encode("utf-8") for t in specials])


@dataclass(frozen=True, eq=False)
class _CompiledSplit:
    """What the compiled pre-tokenizer needs to cut one split's units (:func:`_compiled_plan`).

    Attributes:
        runner: the pattern's :class:`~bpe_core.counting.pretoken_kernel.Machine` or
            :class:`~bpe_core.counting.pretoken_kernel.Program`.
        rows: ``int64[m, 2]``: the special tokens' byte ranges in the units (:func:`_special_rows`).
        form: the normal form a unit must be in to be cut (``None``: every unit is cut).
        joins: the crossing tokens whose cuts are left out (:func:`_join_crossing`).
        whole: ``bool[units]``, the units kept whole (not in normal form ``form``; ``None`` when no form).
    """

    runner: object
    rows: np.ndarray
    form: str | None
    joins: tuple
    whole: np.ndarray | None = None

    def identity(self) -> tuple:
        """A hashable value, equal for two plans that cut every unit alike.

        The same machine (or program's patterns), the same special-token ranges
        found in these units, normal form and crossing tokens: splits that differ
        only in special tokens the text never holds (o200k and gpt-oss) share one count.
        """
        runner = getattr(self.runner, "patterns", self.runner)  # a Program by its patterns, a Machine by value
        return (type(self.runner).__name__, runner, self.rows.tobytes(), self.form, self.joins)


def _compiled_plan(
    units: UnitCounts, split: CorpusPieces, rows_of: Callable | None = None, whole_of: Callable | None = None
) -> _CompiledSplit | None:
    """The :class:`_CompiledSplit` of a split the compiled pre-tokenizer runs, else ``None``.

    ``rows_of``: ``specials -> rows`` (default: :func:`_special_rows` on the units), and
    ``whole_of``: ``form -> bool[units]`` (default: :func:`_not_normal`), so that splits
    sharing a special-token list or a normal form search the units once.
    """
    found = _machine_of(split)
    if found is None:
        return None
    runner, specials, form, joins = found
    rows = rows_of(specials) if rows_of is not None else _special_rows(*units.packed(), specials)
    whole = None if form is None else whole_of(form) if whole_of is not None else _not_normal(units, form)
    return _CompiledSplit(runner, rows, form, joins, whole)


def _not_normal(units: UnitCounts, form: str) -> np.ndarray:
    """``bool[units]``: the units not in normal form ``form`` (an ASCII unit is in every form)."""
    normal = (t.isascii() or unicodedata.is_normalized(form, t) for t in units.texts)
    return ~np.fromiter(normal, dtype=bool, count=len(units))


def _compiled_pieces(units: UnitCounts, split: CorpusPieces) -> PieceCounts | None:
    """:func:`count_pieces` on the compiled pre-tokenizer and piece counter, or ``None`` when it cannot run the split.

    Equal to the textbook path (the split's ``split_units``, counted in Python):
    ``tests/engine/test_pretoken_kernel.py`` checks the cuts against ``regex``
    for every registered pattern, ``tests/engine/test_corpus.py`` the figures.
    """
    plan = _compiled_plan(units, split)
    return None if plan is None else _run_compiled(units, plan)


def _run_compiled(units: UnitCounts, plan: _CompiledSplit, work: Workspace | None = None) -> PieceCounts:
    """Cut and count the units' pieces as ``plan`` says (the kernels run without holding the GIL).

    ``work``: a :class:`~bpe_core.counting.pretoken_kernel.Workspace` that this thread alone uses, or ``None``.
    """
    from ..counting import pretoken_kernel as pk

    data, offsets = units.packed()
    cut_off, cuts = pk.split_units(data, offsets, plan.runner, plan.rows, work)
    if plan.joins:
        cut_off, cuts = _join_crossing(data, offsets, cut_off, cuts, plan.rows, plan.joins)
    if plan.whole is not None:  # a unit not in normal form is one piece
        cut_off, cuts = _whole_units(cut_off, cuts, offsets, plan.whole)
    got = pk.distinct_pieces(data, cut_off, cuts, units.first, units.counts, work)
    pieces = _decoded(got.packed, got.offsets, got.joined)
    return PieceCounts(pieces, got.first, got.counts, got.refs, cut_off, units.counts, got.packed, got.offsets)


def _decoded(packed: np.ndarray, offsets: np.ndarray, joined: np.ndarray) -> list[str]:
    """The pieces ``packed[offsets[j]:offsets[j + 1]]`` (``uint8``, UTF-8) as ``str``, in order.

    Equal to decoding each piece on its own (the textbook way, taken when a
    piece holds a NUL); done as one decode of ``joined`` (each piece followed by
    a NUL) split at the NULs, about twice as fast (a GIL-holding step that
    the splitting threads would otherwise take turns at).
    """
    n = offsets.size - 1
    if n and np.count_nonzero(joined == 0) == n:
        return joined[:-1].tobytes().decode("utf-8").split("\x00")
    raw = packed.tobytes()
    return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


def count_splits(
    units: UnitCounts,
    splits: Sequence[CorpusPieces],
    *,
    num_workers: int | None = None,
    progress: ProgressCallback | None = None,
) -> dict:
    """:func:`count_pieces` for many splits at once: ``{split key: PieceCounts}``.

    Splits that cut every unit alike (:meth:`_CompiledSplit.identity`: the same
    compiled pattern, and the same special tokens *found in these units*) are
    counted once; the distinct ones run in ``num_workers`` threads (default: the
    cores), their kernels in parallel.  ``progress("split", done, total)`` is
    called on the calling thread and may raise to stop (the running counts finish first).

    Raises:
        ValueError: a split's pieces do not put a unit back together.
    """
    workers = os.cpu_count() or 1 if num_workers is None else num_workers
    rows_of, whole_of = _shared_searches(units, splits, workers)
    local = threading.local()  # a workspace per worker thread, for this call only

    def run(plan: _CompiledSplit) -> PieceCounts:
        from ..counting.pretoken_kernel import Workspace

        if not hasattr(local, "work"):
            local.work = Workspace()
        return _run_compiled(units, plan, local.work)

    work: dict[Hashable, Callable[[], PieceCounts]] = {}
    key_of: dict = {}
    for split in splits:
        if split.key in key_of:
            continue
        plan = _compiled_plan(units, split, rows_of, whole_of)
        ident = ("split", split.key) if plan is None else plan.identity()
        key_of[split.key] = ident
        if ident not in work:
            work[ident] = (lambda s=split: count_pieces(units, s)) if plan is None else (lambda p=plan: run(p))
    if progress is not None:
        progress("split", 0, len(work))
    done = _in_threads(work, min(len(work), workers), "split", progress)
    return {key: done[ident] for key, ident in key_of.items()}


def _shared_searches(units: UnitCounts, splits: Sequence[CorpusPieces], workers: int) -> tuple[Callable, Callable]:
    """``(rows_of, whole_of)`` for :func:`_compiled_plan`: each special-token list and normal form searched once.

    The special tokens' searches (compiled, without the GIL) run in ``workers`` threads.
    """
    found = [f for f in map(_machine_of, splits) if f is not None]
    data, offsets = units.packed()
    lists = {specials: (lambda sp=specials: _special_rows(data, offsets, sp)) for _r, specials, _f, _j in found}
    rows = _in_threads(lists, min(len(lists), workers), "specials", None) if lists else {}
    whole_of = cache(lambda form: _not_normal(units, form))
    return rows.__getitem__, whole_of


def _check_cover(units: UnitCounts, data, offsets, refs, unit_offsets) -> None:
    """The pieces of each unit, in order, must spell the unit (checked on their byte lengths, then sampled)."""
    _data, unit_off = units.packed()
    lens = np.diff(offsets)
    per_unit = np.add.reduceat(lens[refs], unit_offsets[:-1]) if refs.size else np.zeros(0, dtype=np.int64)
    per_unit[np.diff(unit_offsets) == 0] = 0
    if not np.array_equal(per_unit, np.diff(unit_off)):
        bad = int(np.flatnonzero(per_unit != np.diff(unit_off))[0])
        raise ValueError(f"a split's pieces do not spell the unit {units.texts[bad]!r}")


# ---------------------------------------------------------------------------
# figures


@dataclass(slots=True)
class _Totals:
    """The tokenizer-independent figures of the units."""

    characters: int
    bytes: int
    words: int
    group_chars: np.ndarray


def _unit_totals(units: UnitCounts) -> _Totals:
    data, offsets = units.packed()
    totals, group_chars = unit_totals(data, offsets, units.counts, space_table(), char_group_table(), _OTHER)
    return _Totals(int(totals[0]), int(totals[1]), int(totals[2]), group_chars)


def piece_figures(tokenizer: Tokenizer, pieces: PieceCounts, tokens, totals: _Totals) -> TextMetrics:
    """:class:`TextMetrics` of the corpus under one tokenizer from its tokens of the distinct pieces.

    Args:
        tokenizer: the tokenizer (its ``vocab_size``).
        pieces: the split's :class:`PieceCounts`.
        tokens: the tokenizer's :class:`~bpe_core.pieces.PieceTokens` of ``pieces.pieces``.
        totals: the units' tokenizer-independent figures.
    """
    if len(tokens) != len(pieces.pieces):
        raise ValueError(f"{tokenizer.name}: tokens for {len(tokens)} pieces, not {len(pieces.pieces)}")
    stats, lead, shares = piece_stats(
        pieces.data, pieces.offsets, pieces.counts, space_table(), char_group_table(), tokens
    )
    split = walk_units(pieces.unit_offsets, pieces.refs, pieces.unit_counts, stats, lead, _OTHER, shares)
    c = pieces.counts
    counts = Counts(
        tokens=int(c @ stats[:, 0]),
        characters=totals.characters,
        bytes=totals.bytes,
        words=totals.words,
        words_split=split,
        special_tokens=int(c @ stats[:, 1]),
        unknown_tokens=int(c @ stats[:, 2]),
        byte_fallback_tokens=int(c @ stats[:, 3]),
    )
    distinct = int(np.count_nonzero(np.bincount(tokens.ids)))  # no tokens: an empty count, 0
    return metrics_from_counts(counts, distinct, tokenizer.vocab_size, _script_rows(totals.group_chars, shares))


def _script_rows(group_chars: np.ndarray, shares: np.ndarray) -> tuple[ScriptRow, ...]:
    rows = []
    for g, name in enumerate(SCRIPT_GROUPS):
        n = int(group_chars[g])
        if n:
            t = float(shares[g])
            rows.append(ScriptRow(name, n, t, t / n))
    return tuple(rows)


# ---------------------------------------------------------------------------
# the entry point


def _has_inner_cut(special: str) -> bool:
    """Whether a special token holds a unit cut (a space after a non-space character): counting would cut it."""
    return any(special[i] == " " and not special[i - 1].isspace() for i in range(1, len(special)))


def _declared(tokenizers: Sequence[Tokenizer]) -> list[CorpusPieces | None]:
    """Each tokenizer's :class:`~bpe_core.interface.CorpusPieces`, or ``None`` when it is measured on the whole text."""
    out: list[CorpusPieces | None] = []
    for tok in tokenizers:
        pieces = corpus_pieces(tok)
        if pieces is not None and any(_has_inner_cut(s) for s in tok.special_tokens):
            pieces = None
        out.append(pieces)
    return out


@dataclass(slots=True)
class CorpusComparison:
    """What :func:`compare_corpus` measured, with where the time went.

    Attributes:
        metrics: one :class:`TextMetrics` per tokenizer, in order.
        units: distinct units counted.
        pieces: ``{split key: distinct pieces}`` of each distinct split.
        counts: distinct counts of pieces made (splits that cut the units alike share one; :func:`count_splits`).
        count_seconds: wall time of counting the units (seconds).
        split_seconds: wall time of cutting and counting the pieces, all splits (seconds).
        tokenizer_seconds: per tokenizer, wall time of encoding its distinct pieces and
            adding up its figures (seconds; a tokenizer measured on the whole text: all of it;
            two run at a time, so these overlap).
        encode_seconds: wall time of measuring all the tokenizers (seconds).
    """

    metrics: list[TextMetrics]
    units: int = 0
    pieces: dict = field(default_factory=dict)
    counts: int = 0
    count_seconds: float = 0.0
    split_seconds: float = 0.0
    tokenizer_seconds: list[float] = field(default_factory=list)
    encode_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        """Total wall time (seconds)."""
        return self.count_seconds + self.split_seconds + self.encode_seconds


def compare_corpus(
    source: str | Sequence[str | os.PathLike],
    tokenizers: Sequence[Tokenizer],
    *,
    files: bool = False,
    progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] | None = None,
    num_workers: int | None = None,
    executor: Executor | None = None,
    units_cache: MutableMapping[bytes, UnitCounts] | None = None,
) -> CorpusComparison:
    r"""The engine's entry point for Compare at corpus scale: every figure of a corpus under each tokenizer.

    The units are counted once (:func:`count_units`, on the compiled counter,
    in threads or on ``executor``), the pieces once per distinct split
    (:func:`count_pieces`; compiled for every pattern the compiled
    pre-tokenizer runs), and each tokenizer encodes each distinct piece once
    (see the module docstring).  A tokenizer that declares no pieces
    (:func:`bpe_core.interface.corpus_pieces`), or whose special tokens hold a
    unit cut, is measured by encoding each document's text.

    Args:
        source: the text, or (``files=True``) file names, directories or glob patterns
            (each file a document of its own, read in byte ranges).
        tokenizers: any :class:`~bpe_core.interface.Tokenizer`\ s.
        files: ``source`` names files.
        progress: ``progress(phase, done, total)``: phase ``"count"`` (chunks
            counted of all), ``"split"`` (distinct splits done), ``"encode"``
            (tokenizers done); may raise to stop.
        cancelled: ``cancelled() -> bool``, asked before every progress report;
            true stops the work with :class:`~bpe_core.interface.TrainingCancelled`.
        num_workers: threads counting units (default: all cores).
        executor: a ``concurrent.futures.Executor`` counting file chunks instead of
            local threads: a Dask cluster's ``distributed.Client(address).get_executor()``
            (its workers must see the files), as the training counts take one.
        units_cache: a dict the caller keeps for this very ``source``: the counted units are
            looked up there by the tokenizers' unit cut table, and stored, so a later call
            with other tokenizers (most share one table) skips the count.

    Returns:
        A :class:`CorpusComparison`; its ``metrics[i]`` equals
        ``compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id, scripts=True)``
        for ``tokenizers[i]`` (summed over the documents; the scripts' token shares up to float rounding).

    Raises:
        ValueError: text that is not UTF-8 (the message names the file) or holds an unpaired surrogate.
        OSError: a file cannot be read.
        TrainingCancelled: ``cancelled()`` turned true.
        Whatever ``progress`` raises.

    >>> from bpe_core import train_bpe
    >>> tok = train_bpe("low lower lowest " * 20, 270)
    >>> seen = []
    >>> result = compare_corpus("lower lowest, low", [tok], progress=lambda *a: seen.append(a[0]))
    >>> result.metrics[0].words, sorted(set(seen))
    (3, ['count', 'encode', 'split'])
    """
    report = _reporter(progress, cancelled)
    declared = _declared(tokenizers)
    table = unit_cut_table(declared)
    key = hashlib.blake2b(table.tobytes(), digest_size=16).digest()
    units = units_cache.get(key) if units_cache is not None else None
    if units is None:
        units = count_units(source, table, files=files, num_workers=num_workers, progress=report, executor=executor)
        if units_cache is not None:
            units_cache[key] = units
    out = CorpusComparison([], len(units), count_seconds=units.seconds)
    t0 = time.perf_counter()
    totals = _unit_totals(units)
    counted = count_splits(units, [p for p in declared if p is not None], num_workers=num_workers, progress=report)
    out.pieces = {key: len(pieces.pieces) for key, pieces in counted.items()}
    out.counts = len({id(pieces) for pieces in counted.values()})
    out.split_seconds = time.perf_counter() - t0
    if report is not None:
        report("encode", 0, len(tokenizers))
    t0 = time.perf_counter()
    out.metrics, out.tokenizer_seconds = _measure_all(tokenizers, declared, counted, totals, (source, files), report)
    out.encode_seconds = time.perf_counter() - t0
    return out


def _measure_all(tokenizers, declared, counted, totals, whole, report) -> tuple[list[TextMetrics], list[float]]:
    """Every tokenizer's figures, two at a time (one's compiled encoding runs while the other's Python does).

    ``whole``: ``(source, files)`` for a tokenizer measured on the whole text.  Returns the
    metrics and each tokenizer's wall time (seconds), in order; ``report("encode", done, total)``
    is called on this thread as tokenizers finish.
    """

    def measure(k: int) -> tuple[TextMetrics, float]:
        t1 = time.perf_counter()
        tok, split = tokenizers[k], declared[k]
        if split is None:
            return _whole_text(tok, *whole), time.perf_counter() - t1
        pieces = counted[split.key]
        return piece_figures(tok, pieces, split.encode(pieces.pieces, pieces.first), totals), time.perf_counter() - t1

    n = len(tokenizers)
    order = _longest_first(declared, counted)
    done = _in_threads({k: (lambda k=k: measure(k)) for k in order}, min(2, n), "encode", report)
    return [done[k][0] for k in range(n)], [done[k][1] for k in range(n)]


def _longest_first(declared: Sequence[CorpusPieces | None], counted: dict) -> list[int]:
    """The order to measure the tokenizers in: the most bytes to encode first (longest-processing-time first).

    A tokenizer measured on the whole text (no pieces declared) comes first, then the others by the bytes of
    their distinct pieces (ties in the given order).  Started last, XLM-R (which keeps the 20 MB corpus's units
    whole: 9.5 MB of distinct pieces, the slowest encoder) ran alone at the end while the other thread idled.
    """
    inf = float("inf")
    cost = [inf if split is None else int(counted[split.key].data.size) for split in declared]
    return sorted(range(len(declared)), key=lambda k: -cost[k])


def _in_threads(work: dict, workers: int, phase: str, report: ProgressCallback | None) -> dict:
    """``{key: fn()}`` for ``work = {key: fn}``, run in ``workers`` threads.

    ``report(phase, done, total)`` is called on this thread as each task ends.  When ``report``
    or a task raises, the tasks not started are dropped and the running ones finish first.
    """
    done: dict = {}
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"bpe-{phase}")
    try:
        futures = {pool.submit(fn): key for key, fn in work.items()}
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            if report is not None:
                report(phase, len(done), len(work))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done


def _reporter(progress: ProgressCallback | None, cancelled: Callable[[], bool] | None) -> ProgressCallback | None:
    """``progress`` with the ``cancelled`` check in front (``None`` when neither is given)."""
    if cancelled is None:
        return progress

    def report(phase: str, done: int, total: int) -> None:
        if cancelled():
            raise TrainingCancelled(f"cancelled while {phase!r} ({done} of {total})")
        if progress is not None:
            progress(phase, done, total)

    return report


def measure_corpus(
    source: str | Sequence[str | os.PathLike],
    tokenizers: Sequence[Tokenizer],
    *,
    files: bool = False,
    num_workers: int | None = None,
    executor: Executor | None = None,
    progress: ProgressCallback | None = None,
    units_cache: MutableMapping[bytes, UnitCounts] | None = None,
) -> list[TextMetrics]:
    r"""Every :class:`~bpe_core.analysis.metrics.TextMetrics` figure of a corpus under each tokenizer, scripts included.

    :func:`compare_corpus`'s ``metrics`` (see there for the arguments, the
    progress phases and the errors raised).

    Returns:
        One :class:`TextMetrics` per tokenizer, in order, equal to
        ``compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id, scripts=True)``
        (summed over the documents; the scripts' token shares up to float rounding).
    """
    return compare_corpus(
        source,
        tokenizers,
        files=files,
        num_workers=num_workers,
        executor=executor,
        progress=progress,
        units_cache=units_cache,
    ).metrics


def _documents(source: str | Sequence[str | os.PathLike], files: bool) -> Iterable[str]:
    if not files:
        yield source  # type: ignore[misc]
        return
    from ..counting.stream import expand_inputs
    from ..formats.upload import decode_text_upload

    for path in expand_inputs(source):
        with open(path, "rb") as f:
            yield decode_text_upload(f.read(), path, max_bytes=1 << 62)


def _whole_text(tok: Tokenizer, source: str | Sequence[str | os.PathLike], files: bool) -> TextMetrics:
    """The textbook figures, document by document, chunk by chunk (cut where no token changes)."""
    from ..pretokenize import aligned_chunks, tokenizer_split

    total = Counts()
    ids: set[int] = set()
    shares: dict[str, list] = {}
    split = tokenizer_split(tok)
    for text in _documents(source, files):
        for start, end in aligned_chunks(text, 500_000, [split]):
            piece = text[start:end]
            spans = tok.token_spans(piece)
            total.add(span_counts(piece, spans, tok.unknown_id))
            ids.update(s.id for s in spans)
            for row in script_breakdown(piece, spans):
                acc = shares.setdefault(row.group, [0, 0.0])
                acc[0] += row.characters
                acc[1] += row.tokens
    rows = tuple(ScriptRow(g, n, t, t / n) for g in SCRIPT_GROUPS if g in shares for n, t in [shares[g]])
    return metrics_from_counts(total, len(ids), tok.vocab_size, rows)
