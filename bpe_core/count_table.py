"""Count tables: pre-token counts saved to a file, added up across shards, trained on later.

Training byte-level BPE needs only the table ``{pre-token bytes: count}`` (the
first phase, :mod:`bpe_core.counting`).  A *count table* is that table on disk
with what it depends on: the pre-tokenization pattern and the special tokens
used when counting.  Shards counted separately (on different machines, say) add
up to the table of the whole text -- counting is a sum over chunks -- so
``count(A) + count(B) == count(A + B)`` exactly, and the merge loop can run on the
sum without reading the text again (``python -m bpe_core train --from-counts``).

File format (version 1): a NumPy ``.npz`` archive (a zip file, members
deflate-compressed) with four arrays and nothing pickled:

* ``meta`` -- ``uint8``: UTF-8 JSON ``{"format": "bpe_core.count_table",
  "version": 1, "pattern": <regex source>, "pattern_name": <name or null>,
  "special_tokens": [...], "pretokens": <occurrences>, "special_occurrences":
  <n>, "distinct": <n>, "sources": [...], "sha256": <hex>}``;
* ``lengths`` -- ``<u4``: each pre-token's length in bytes;
* ``counts`` -- ``<i8``: each pre-token's count;
* ``data`` -- ``uint8``: the pre-tokens' UTF-8 bytes, concatenated.

Pre-tokens are stored in ascending byte order, so equal tables give equal
arrays.  ``sha256`` covers ``lengths``, ``counts`` and ``data`` (their
little-endian bytes, in that order); the zip's own CRC-32 checks each member as
well.  The 20 MB benchmark corpus (242,000 distinct pre-tokens) gives a table of 1.2 MB.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .pretokenize import PATTERNS, resolve_pattern, validate_special_tokens

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "CountTable",
    "CountTableError",
    "load_count_table",
    "load_count_tables",
    "merge_count_tables",
    "save_count_table",
]

FORMAT = "bpe_core.count_table"
FORMAT_VERSION = 1
_MEMBERS = ("meta", "lengths", "counts", "data")


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
    """

    word_counts: dict[bytes, int]
    pattern: str
    special_tokens: tuple[str, ...] = ()
    pretokens: int = 0
    special_occurrences: int = 0
    sources: tuple[str, ...] = field(default_factory=tuple)

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name in :data:`bpe_core.pretokenize.PATTERNS` (``"gpt2"``, ...); ``None`` if custom."""
        return next((name for name, src in PATTERNS.items() if src == self.pattern), None)

    @classmethod
    def from_counts(
        cls,
        word_counts: Mapping[bytes, int],
        pattern: str = "gpt2",
        special_tokens: Sequence[str] = (),
        *,
        special_occurrences: int = 0,
        sources: Iterable[str] = (),
    ) -> CountTable:
        """A table from counts (a :class:`bpe_core.counting.CountResult`'s ``word_counts``, say).

        Args:
            word_counts: ``{pre-token bytes: count}`` (counts >= 1).
            pattern: pattern name or regex source used to count.
            special_tokens: special tokens used to count.
            special_occurrences: special-token occurrences cut out.
            sources: file names, for the record.

        Raises:
            ValueError: bad pattern or special tokens.
        """
        return cls(
            word_counts=dict(word_counts),
            pattern=resolve_pattern(pattern),
            special_tokens=validate_special_tokens(special_tokens),
            pretokens=sum(word_counts.values()),
            special_occurrences=special_occurrences,
            sources=tuple(sources),
        )


def _arrays(word_counts: Mapping[bytes, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = sorted(word_counts)
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
    lengths, counts, data = _arrays(table.word_counts)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
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
) -> CountTable:
    """Read and validate a count table.

    Args:
        path: the file written by :func:`save_count_table`.
        pattern: when given (name or regex source), the table must have been
            counted with it.
        special_tokens: when given, the table must have been counted with the
            same set of special tokens (order is free: it only sets the ids).

    Returns:
        The :class:`CountTable`.

    Raises:
        CountTableError (a ``ValueError``): one line naming the file and the
            problem -- not a count table, corrupt (checksum, CRC, sizes), a
            format version this code does not read, counted with another
            pattern or other special tokens.
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
    if meta.get("version") != FORMAT_VERSION:
        raise CountTableError(
            f"{name} is a count table of format version {meta.get('version')!r}; "
            f"this bpe_core reads version {FORMAT_VERSION} only"
        )
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
    )
    _check_same(table, name, pattern, special_tokens)
    blob = data.tobytes()
    ends = np.cumsum(lengths, dtype=np.int64).tolist()
    starts = [0, *ends[:-1]]
    table.word_counts = dict(zip(map(blob.__getitem__, map(slice, starts, ends)), counts.tolist(), strict=True))
    return table


def _check_same(table: CountTable, name: str, pattern: str | None, special_tokens: Sequence[str] | None) -> None:
    """Raise :class:`CountTableError` when ``table`` was counted with another pattern or special tokens."""
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
        _check_same(t, f"count table {i}", first.pattern, first.special_tokens)
        for k, v in t.word_counts.items():
            total[k] = get(k, 0) + v
    return CountTable(
        word_counts=total,
        pattern=first.pattern,
        special_tokens=first.special_tokens,
        pretokens=sum(t.pretokens for t in tables),
        special_occurrences=sum(t.special_occurrences for t in tables),
        sources=tuple(s for t in tables for s in t.sources),
    )


def load_count_tables(
    paths: Sequence[str | os.PathLike],
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] | None = None,
) -> CountTable:
    """Load several count tables and add them up (:func:`load_count_table`, :func:`merge_count_tables`).

    Args:
        paths: the table files.
        pattern: when given, every table must have been counted with it.
        special_tokens: when given, every table must have been counted with them.

    Every table must also match the first.

    Raises:
        CountTableError: as :func:`load_count_table`; tables counted differently.
        OSError: a file cannot be read.
    """
    tables: list[CountTable] = []
    for p in paths:
        t = load_count_table(p, pattern=pattern, special_tokens=special_tokens)
        if tables:
            _check_same(t, os.fspath(p), tables[0].pattern, tables[0].special_tokens)
        tables.append(t)
    return merge_count_tables(tables)
