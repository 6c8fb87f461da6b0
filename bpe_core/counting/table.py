"""Count tables: pre-token counts saved to a file, added up across shards, trained on later.

Training needs only the table ``{pre-token: count}`` of a text (the first
phase, :mod:`bpe_core.counting.stream` for byte-level BPE).  A *count table* is that
table on disk with what it depends on: the algorithm whose pre-tokenization
made it, the pattern and the special tokens used when counting (and, for
WordPiece, lower-casing).  Shards counted separately (on different machines,
say) add up to the table of the whole text -- counting is a sum over chunks --
so ``count(A) + count(B) == count(A + B)`` exactly when no pre-token spans the
cut, and training can run on the sum without reading the text again
(``python -m bpe_core train --from-counts``, :func:`train_from_table`).

Each algorithm pre-tokenizes in its own way, so a table is counted *for* one; how
is part of the algorithm's registration (:class:`bpe_core.interface.Algorithm`'s
``count_words``, ``train_from_counts`` and ``counts_in_text_order``), so this
module knows no algorithm by name.  The built-in ones:

* ``"bpe"`` -- the matches of ``pattern`` (any of :data:`bpe_core.pretokenize.PATTERNS`
  or a regex) as UTF-8 bytes (:func:`bpe_core.counting.stream.count_text`); stored in
  ascending byte order (BPE's ties do not depend on any order);
* ``"wordpiece"`` -- BERT-style words after optional lower-casing
  (:func:`bpe_core.wordpiece.count_words`; the pattern is always ``bert``);
  stored in order of first appearance, which WordPiece's ties depend on;
* ``"unigram"`` -- the words of ``pattern`` as the Unigram trainer counts them
  (:func:`bpe_core.unigram.count_unigram_words`: ``sentencepiece`` gives
  ``▁``-marked words), with the unknown token among the special tokens;
  stored in order of first appearance (the trainer's order).

Training refuses a table counted for another algorithm, pattern, special
tokens or lower-casing (:class:`CountTableError` naming both); tables add up
only when all of these agree.  Adding tables keeps the first table's order and
appends the words the next ones add, which is the order of first appearance in
the shards' concatenation.

File format (version 2; version 1, BPE only, is still read): a NumPy ``.npz``
archive (a zip file, members deflate-compressed) with four arrays and nothing
pickled:

* ``meta`` -- ``uint8``: UTF-8 JSON ``{"format": "bpe_core.counting.table",
  "version": 2, "algorithm": "bpe"|"wordpiece"|"unigram", "lowercase": <bool>,
  "order": "bytes"|"first appearance", "pattern": <regex source>,
  "pattern_name": <name or null>, "special_tokens": [...], "pretokens":
  <occurrences>, "special_occurrences": <n>, "distinct": <n>, "sources": [...],
  "sha256": <hex>}``;
* ``lengths`` -- ``<u4``: each pre-token's length in bytes;
* ``counts`` -- ``<i8``: each pre-token's count;
* ``data`` -- ``uint8``: the pre-tokens' UTF-8 bytes, concatenated.

Equal tables give equal arrays.  ``sha256`` covers ``lengths``, ``counts`` and
``data`` (their little-endian bytes, in that order); the zip's own CRC-32
checks each member as well.  The 20 MB benchmark corpus (242,000 distinct
pre-tokens) gives a BPE table of 1.2 MB.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..interface import ALGORITHMS as REGISTERED
from ..interface import Algorithm, ProgressCallback, TrainedTokenizer, get_algorithm
from ..pretokenize import PATTERNS, resolve_pattern, validate_special_tokens

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "CountTable",
    "CountTableError",
    "count_text_table",
    "load_count_table",
    "load_count_tables",
    "merge_count_tables",
    "save_count_table",
    "table_algorithms",
    "train_from_table",
]

FORMAT = "bpe_core.counting.table"
FORMAT_VERSION = 2
_READS = (1, 2)  # version 1: BPE tables, before the algorithm was recorded
_MEMBERS = ("meta", "lengths", "counts", "data")


def table_algorithms() -> tuple[str, ...]:
    """The registered algorithms a count table can be counted for (those whose registration counts words).

    >>> table_algorithms()
    ('bpe', 'wordpiece', 'unigram')
    """
    return tuple(name for name, alg in REGISTERED.items() if alg.count_words and alg.train_from_counts)


class CountTableError(ValueError):
    """A count table that cannot be used: unreadable, corrupt, of another version, or counted differently."""


@dataclass(slots=True)
class CountTable:
    """Pre-token counts and how they were counted.

    Attributes:
        word_counts: ``{pre-token UTF-8 bytes: occurrences}``.
        pattern: the pre-tokenization regex source used.
        special_tokens: the special-token strings cut out before counting, in order.
        pretokens: pre-token occurrences (the sum of the counts).
        special_occurrences: special-token occurrences cut out of the text.
        sources: names of the files counted (informational).
        algorithm: whose pre-tokenization counted it: one of :func:`table_algorithms`.
        lowercase: the text was lower-cased before counting (algorithms that offer it: WordPiece).

    For an algorithm whose registration says ``counts_in_text_order`` (WordPiece, Unigram)
    the order of ``word_counts`` is the order of first appearance, and is part of the table.
    """

    word_counts: dict[bytes, int]
    pattern: str
    special_tokens: tuple[str, ...] = ()
    pretokens: int = 0
    special_occurrences: int = 0
    sources: tuple[str, ...] = field(default_factory=tuple)
    algorithm: str = "bpe"
    lowercase: bool = False

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name in :data:`bpe_core.pretokenize.PATTERNS` (``"gpt2"``, ...); ``None`` if custom."""
        return next((name for name, src in PATTERNS.items() if src == self.pattern), None)

    def describe(self) -> str:
        """How the table was counted, in words (for messages): ``"for bpe with the gpt2 pattern"``, ..."""
        pat = self.pattern_name or f"custom regex {self.pattern!r}"
        alg = REGISTERED.get(self.algorithm)
        if alg is not None and alg.fixed_pattern:
            return f"for {self.algorithm} ({alg.pattern_phrase} words" + (", lower-cased)" if self.lowercase else ")")
        return f"for {self.algorithm} with the {pat} pattern"

    @classmethod
    def from_counts(
        cls,
        word_counts: Mapping[bytes, int] | Mapping[str, int],
        pattern: str = "gpt2",
        special_tokens: Sequence[str] = (),
        *,
        special_occurrences: int = 0,
        sources: Iterable[str] = (),
        algorithm: str = "bpe",
        lowercase: bool = False,
    ) -> CountTable:
        """A table from counts (a :class:`bpe_core.counting.stream.CountResult`'s ``word_counts``, say).

        Args:
            word_counts: ``{pre-token: count}`` (counts >= 1), keys UTF-8
                ``bytes`` or ``str``; for ``"wordpiece"`` and ``"unigram"`` in
                order of first appearance.
            pattern: pattern name or regex source used to count (WordPiece: ``"bert"``).
            special_tokens: special tokens used to count.
            special_occurrences: special-token occurrences cut out.
            sources: file names, for the record.
            algorithm: one of :func:`table_algorithms`.
            lowercase: the text was lower-cased first (algorithms that offer it).

        Raises:
            ValueError: bad pattern or special tokens; an unknown algorithm; another
                pattern than the algorithm's own when it is fixed (WordPiece: ``bert``);
                ``lowercase`` for an algorithm that does not offer it.
        """
        _check_algorithm(algorithm, pattern, lowercase)
        counts = {k.encode("utf-8") if isinstance(k, str) else k: v for k, v in word_counts.items()}
        return cls(
            word_counts=counts,
            pattern=resolve_pattern(pattern),
            special_tokens=validate_special_tokens(special_tokens),
            pretokens=sum(counts.values()),
            special_occurrences=special_occurrences,
            sources=tuple(sources),
            algorithm=algorithm,
            lowercase=bool(lowercase),
        )

    def words(self) -> dict[str, int]:
        """``word_counts`` with ``str`` keys (UTF-8 decoded), in the table's order."""
        return {k.decode("utf-8"): v for k, v in self.word_counts.items()}


def _check_algorithm(algorithm: str, pattern: str, lowercase: bool) -> Algorithm:
    """The registration of ``algorithm``; ``ValueError`` for an unknown one or settings it cannot count with."""
    if algorithm not in table_algorithms():
        raise ValueError(f"algorithm must be one of {', '.join(table_algorithms())}, got {algorithm!r}")
    alg = get_algorithm(algorithm)
    if alg.fixed_pattern and resolve_pattern(pattern) != resolve_pattern(alg.default_pattern):
        raise ValueError(
            f"{alg.label} pre-tokenizes {alg.pattern_phrase}; its pattern is {alg.default_pattern}, not {pattern!r}"
        )
    if lowercase and not alg.uses_lowercase:
        offered = " or ".join(a.label for a in REGISTERED.values() if a.uses_lowercase)
        raise ValueError(f"lower-casing is a {offered} option; {algorithm} counts the text as it is")
    return alg


def _with_required(alg: Algorithm, specials: tuple[str, ...]) -> tuple[str, ...]:
    """``specials`` and the algorithm's required special tokens missing from them, at the end (as its trainer adds)."""
    return (*specials, *(t for t in alg.required_special_tokens if t not in specials))


def count_text_table(
    text: str,
    algorithm: str = "bpe",
    pattern: str | None = None,
    special_tokens: Sequence[str] = (),
    *,
    lowercase: bool = False,
    sources: Iterable[str] = (),
    progress: ProgressCallback | None = None,
) -> CountTable:
    """Count one text for an algorithm: the table that algorithm's trainer would build from it.

    Args:
        text: the text (``str``).
        algorithm: one of :func:`table_algorithms`.
        pattern: the pre-tokenization pattern (default: the algorithm's own: ``gpt2`` for BPE,
            ``bert`` for WordPiece -- its only one -- and ``sentencepiece`` for Unigram).
        special_tokens: special tokens cut out before counting; the algorithm's required
            ones (Unigram's unknown token ``<unk>``) are added at the end when missing, as
            its trainer adds them.
        lowercase: WordPiece: lower-case the text first.
        sources: the file name(s), for the record.
        progress: optional ``progress("count", done, total)`` (BPE and WordPiece).

    Returns:
        The :class:`CountTable`; :func:`train_from_table` on it trains exactly
        as the algorithm's trainer on ``text``.

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: as :meth:`CountTable.from_counts`; an unpaired surrogate in ``text``.

    >>> t = count_text_table("Hug hugs, hug.", "wordpiece", special_tokens=["[UNK]"], lowercase=True)
    >>> t.words(), t.algorithm
    ({'hug': 2, 'hugs': 1, ',': 1, '.': 1}, 'wordpiece')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    known = REGISTERED.get(algorithm)
    pattern = (known.default_pattern if known is not None else "gpt2") if pattern is None else pattern
    alg = _check_algorithm(algorithm, pattern, lowercase)
    specials = _with_required(alg, validate_special_tokens(special_tokens))
    counts, n_special, pattern = alg.count_words(text, pattern, specials, lowercase, progress)
    return CountTable.from_counts(
        counts,
        pattern,
        specials,
        special_occurrences=n_special,
        sources=sources,
        algorithm=algorithm,
        lowercase=lowercase,
    )


def _arrays(word_counts: Mapping[bytes, int], ordered: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = list(word_counts) if ordered else sorted(word_counts)
    lengths = np.fromiter(map(len, keys), dtype="<u4", count=len(keys))
    counts = np.fromiter(map(word_counts.__getitem__, keys), dtype="<i8", count=len(keys))
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    return lengths, counts, data


def _digest(lengths: np.ndarray, counts: np.ndarray, data: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in (lengths, counts, data):
        h.update(memoryview(np.ascontiguousarray(a)).cast("B"))
    return h.hexdigest()


def save_count_table(table: CountTable, path: str | os.PathLike) -> None:
    """Write a count table (format in the module doc), whatever the file name's extension.

    Args:
        table: the :class:`CountTable`.
        path: the output file (``.npz`` is the natural extension).

    Raises:
        OSError: the file cannot be written.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "counts.npz"
    >>> save_count_table(CountTable.from_counts({b"low": 2, b" lower": 1}), p)
    >>> load_count_table(p, pattern="gpt2").word_counts == {b"low": 2, b" lower": 1}
    True
    """
    ordered = get_algorithm(table.algorithm).counts_in_text_order
    lengths, counts, data = _arrays(table.word_counts, ordered)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "algorithm": table.algorithm,
        "lowercase": bool(table.lowercase),
        "order": "first appearance" if ordered else "bytes",
        "pattern": table.pattern,
        "pattern_name": table.pattern_name,
        "special_tokens": list(table.special_tokens),
        "pretokens": int(table.pretokens),
        "special_occurrences": int(table.special_occurrences),
        "distinct": len(lengths),
        "sources": list(table.sources),
        "sha256": _digest(lengths, counts, data),
    }
    meta_arr = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=meta_arr, lengths=lengths, counts=counts, data=data)
    with open(path, "wb") as f:
        f.write(buf.getbuffer())


def load_count_table(
    path: str | os.PathLike,
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] | None = None,
    algorithm: str | None = None,
    lowercase: bool | None = None,
) -> CountTable:
    """Read and validate a count table.

    Args:
        path: the file written by :func:`save_count_table`.
        pattern: when given (name or regex source), the table must have been
            counted with it.
        special_tokens: when given, the table must have been counted with the
            same set of special tokens (order is free: it only sets the ids).
        algorithm: when given, the table must have been counted for it.
        lowercase: when given, the table must (or must not) have been lower-cased.

    Returns:
        The :class:`CountTable`.

    Raises:
        CountTableError (a ``ValueError``): one line naming the file and the
            problem -- not a count table, corrupt (checksum, CRC, sizes), a
            format version this code does not read, counted for another
            algorithm, with another pattern, other special tokens or other
            lower-casing.
        OSError: the file cannot be read.
    """
    name = os.fspath(path)
    with open(name, "rb") as f:
        raw = f.read()
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            missing = [m for m in _MEMBERS if m not in z.files]
            if missing:
                raise CountTableError(f"{name} is not a count table: it has no {', '.join(missing)} array")
            arrays = {m: z[m] for m in _MEMBERS}
    except CountTableError:
        raise
    except Exception as exc:  # zipfile, zlib and numpy each have their own errors for damaged data
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise CountTableError(f"{name} is not a readable count table (corrupt or not a .npz file: {detail})") from None
    try:
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CountTableError(f"{name} is corrupt: its metadata is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CountTableError(f"{name} is not a count table (no format {FORMAT!r} in its metadata)")
    if meta.get("version") not in _READS:
        raise CountTableError(
            f"{name} is a count table of format version {meta.get('version')!r}; "
            f"this bpe_core reads versions {', '.join(map(str, _READS))} only"
        )
    table_algorithm = meta.get("algorithm", "bpe")
    if table_algorithm not in table_algorithms():
        raise CountTableError(f"{name} was counted for an unknown algorithm {table_algorithm!r}")
    lengths = arrays["lengths"].astype("<u4", copy=False)
    counts = arrays["counts"].astype("<i8", copy=False)
    data = arrays["data"].astype(np.uint8, copy=False)
    if _digest(lengths, counts, data) != meta.get("sha256"):
        raise CountTableError(f"{name} is corrupt: its checksum does not match its contents")
    sizes_agree = lengths.shape == counts.shape and int(lengths.sum(dtype=np.int64)) == data.size
    if not sizes_agree or meta.get("distinct") != lengths.size:
        raise CountTableError(f"{name} is corrupt: its arrays' sizes disagree")
    table = CountTable(
        word_counts={},
        pattern=meta["pattern"],
        special_tokens=tuple(meta.get("special_tokens", ())),
        pretokens=int(meta.get("pretokens", 0)),
        special_occurrences=int(meta.get("special_occurrences", 0)),
        sources=tuple(meta.get("sources", ())),
        algorithm=table_algorithm,
        lowercase=bool(meta.get("lowercase", False)),
    )
    _check_same(table, name, pattern, special_tokens, algorithm, lowercase)
    blob = data.tobytes()
    ends = np.cumsum(lengths, dtype=np.int64).tolist()
    starts = [0, *ends[:-1]]
    table.word_counts = dict(zip(map(blob.__getitem__, map(slice, starts, ends)), counts.tolist(), strict=True))
    return table


def _check_same(
    table: CountTable,
    name: str,
    pattern: str | None,
    special_tokens: Sequence[str] | None,
    algorithm: str | None = None,
    lowercase: bool | None = None,
) -> None:
    """Raise :class:`CountTableError` when ``table`` was counted for another algorithm or with other settings."""
    if algorithm is not None and algorithm != table.algorithm:
        raise CountTableError(
            f"{name} was counted {table.describe()}, not for {algorithm}, which pre-tokenizes differently; "
            f"count the text again with count --algorithm {algorithm}"
        )
    if lowercase is not None and bool(lowercase) != table.lowercase:
        raise CountTableError(
            f"{name} was counted {'with' if table.lowercase else 'without'} lower-casing, not "
            f"{'with' if lowercase else 'without'}; count the text again "
            f"{'with' if lowercase else 'without'} --lowercase"
        )
    if pattern is not None and resolve_pattern(pattern) != table.pattern:
        got = table.pattern_name or f"the custom regex {table.pattern!r}"
        want = pattern if pattern in PATTERNS else f"the regex {pattern!r}"
        raise CountTableError(f"{name} was counted with the {got} pattern, not {want}; count the text again with it")
    if special_tokens is not None and set(validate_special_tokens(special_tokens)) != set(table.special_tokens):
        raise CountTableError(
            f"{name} was counted with special tokens {list(table.special_tokens)}, "
            f"not {list(special_tokens)}; count the text again with them"
        )


def merge_count_tables(tables: Sequence[CountTable]) -> CountTable:
    """Add count tables up: the table of the concatenated texts (shards counted separately).

    Args:
        tables: one or more :class:`CountTable`, all counted with the same pattern
            and the same set of special tokens.

    Returns:
        A new :class:`CountTable` (the first table's special-token order).

    Raises:
        CountTableError: no table, or tables counted differently.

    >>> a = CountTable.from_counts({b"low": 2})
    >>> b = CountTable.from_counts({b"low": 1, b"er": 1})
    >>> merge_count_tables([a, b]).word_counts
    {b'low': 3, b'er': 1}
    """
    if not tables:
        raise CountTableError("no count table to merge")
    first = tables[0]
    total: dict[bytes, int] = dict(first.word_counts)
    get = total.get
    for i, t in enumerate(tables[1:], 2):
        _check_same(t, f"count table {i}", first.pattern, first.special_tokens, first.algorithm, first.lowercase)
        for k, v in t.word_counts.items():
            total[k] = get(k, 0) + v
    return CountTable(
        word_counts=total,
        pattern=first.pattern,
        special_tokens=first.special_tokens,
        pretokens=sum(t.pretokens for t in tables),
        special_occurrences=sum(t.special_occurrences for t in tables),
        sources=tuple(s for t in tables for s in t.sources),
        algorithm=first.algorithm,
        lowercase=first.lowercase,
    )


def load_count_tables(
    paths: Sequence[str | os.PathLike],
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] | None = None,
    algorithm: str | None = None,
    lowercase: bool | None = None,
) -> CountTable:
    """Load several count tables and add them up (:func:`load_count_table`, :func:`merge_count_tables`).

    Args:
        paths: the table files.
        pattern: when given, every table must have been counted with it.
        special_tokens: when given, every table must have been counted with them.
        algorithm: when given, every table must have been counted for it.
        lowercase: when given, every table must (or must not) have been lower-cased.

    Every table must also match the first.

    Raises:
        CountTableError: as :func:`load_count_table`; tables counted differently.
        OSError: a file cannot be read.
    """
    tables: list[CountTable] = []
    for p in paths:
        t = load_count_table(
            p, pattern=pattern, special_tokens=special_tokens, algorithm=algorithm, lowercase=lowercase
        )
        if tables:
            first = tables[0]
            _check_same(t, os.fspath(p), first.pattern, first.special_tokens, first.algorithm, first.lowercase)
        tables.append(t)
    return merge_count_tables(tables)


def train_from_table(
    table: CountTable,
    vocab_size: int,
    *,
    algorithm: str | None = None,
    special_tokens: Sequence[str] | None = None,
    lowercase: bool | None = None,
    progress: ProgressCallback | None = None,
) -> TrainedTokenizer:
    """Train the table's algorithm on its counts, without the text.

    The result is identical to training on the text the table was counted
    from (:func:`count_text_table`; for shards, their concatenation when no
    pre-token spans a cut): the registration's ``train_from_counts``
    (:func:`bpe_core.train_bpe_from_counts`,
    :func:`bpe_core.wordpiece.train_wordpiece_from_counts`,
    :func:`bpe_core.unigram.train_unigram_from_counts`).

    Args:
        table: the :class:`CountTable`.
        vocab_size: the vocabulary size to train to (tokens).
        algorithm: when given, must be the table's (it is the default).
        special_tokens: when given, the same set as the table's (their order sets the ids).
        lowercase: when given, must be the table's (WordPiece).
        progress: optional ``progress(phase, done, total)``; may raise
            :class:`~bpe_core.interface.TrainingCancelled`.

    Returns:
        The trained tokenizer; its ``training.count_seconds`` is 0 and
        ``training.pretokens`` the table's.

    Raises:
        CountTableError: ``algorithm``, ``special_tokens`` or ``lowercase``
            differ from the table's (the message names both).
        ValueError: the trainer's errors (``vocab_size`` too small, ...).

    >>> text = "hug hugs hug, pug"
    >>> t = count_text_table(text, "wordpiece", special_tokens=["[UNK]"])
    >>> from bpe_core.wordpiece import train_wordpiece
    >>> train_from_table(t, 12).vocab == train_wordpiece(text, 12, ["[UNK]"]).vocab
    True
    """
    alg = get_algorithm(table.algorithm)
    if special_tokens is not None:
        special_tokens = _with_required(alg, validate_special_tokens(special_tokens))  # as counting adds them
    _check_same(table, "the count table", None, special_tokens, algorithm, lowercase)
    specials = table.special_tokens if special_tokens is None else special_tokens
    tok = alg.train_from_counts(
        table.word_counts,
        vocab_size,
        specials,
        table.pattern_name or table.pattern,
        lowercase=table.lowercase,
        special_occurrences=table.special_occurrences,
        progress=progress,
    )
    if tok.training is not None:
        tok.training.count_seconds = 0.0
        tok.training.pretokens = table.pretokens
    return tok
