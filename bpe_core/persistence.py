"""What every trained tokenizer shares: its JSON file and its vocabulary-size views.

* :class:`JsonFile` -- :meth:`~JsonFile.save` / :meth:`~JsonFile.load` of the
  project's JSON form, written once for every algorithm; a class supplies
  ``to_dict`` and ``from_dict`` (the format itself stays the class's own).
* :class:`ViewCache` -- :meth:`~ViewCache.with_vocab_size`: argument checks and
  a memo of the newest 16 views; a class supplies ``min_vocab_size``,
  ``max_vocab_size``, ``vocab_size`` and ``_narrow_to(n)``, which turns a
  shallow copy of the tokenizer into its view at size ``n``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from .interface import TrainingInfo

__all__ = [
    "JsonFile",
    "ViewCache",
    "check_trace_counts",
    "json_bool",
    "json_field",
    "json_float",
    "json_int",
    "json_kind",
    "json_optional_str",
    "json_version",
    "load_json",
    "training_from_json",
    "write_atomic",
    "write_atomic_many",
]

MAX_VIEWS = 16
"""Views remembered per tokenizer (the oldest is dropped first)."""


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that the file is either the old one or the whole new one.

    The bytes go to a temporary file in the same directory, which is flushed,
    ``fsync``-ed and renamed over ``path`` with :func:`os.replace` (atomic on
    POSIX and Windows within one file system).  A failure at any point removes
    the temporary file and leaves ``path`` as it was.  A new file gets the
    usual permissions (``0o666`` less the umask); a replaced file keeps its mode.

    Args:
        path: the file to write (its directory must exist).
        data: the complete contents.

    Raises:
        TypeError: ``data`` is not bytes.
        OSError: the directory is not writable, the disk is full, ``path`` is a
            directory, ...
    """
    write_atomic_many([(path, data)])


def write_atomic_many(files: Sequence[tuple[str | os.PathLike, bytes]]) -> None:
    """Write several files as :func:`write_atomic` does, all staged before any is replaced.

    Every file is first written and ``fsync``-ed to a temporary file beside its
    target; only when all are on disk are they renamed into place, so a failure
    while writing (disk full, no permission) leaves every target as it was.

    Args:
        files: ``[(path, bytes), ...]``.

    Raises:
        TypeError: some data is not bytes.
        OSError: a file cannot be written (the targets are unchanged).
    """
    for _path, data in files:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
    umask = os.umask(0)
    os.umask(umask)
    staged: list[tuple[str, str]] = []
    try:
        for target, data in files:
            path = os.fspath(target)
            try:
                mode = os.stat(path).st_mode & 0o7777
            except OSError:
                mode = 0o666 & ~umask
            directory = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
        while staged:
            tmp, path = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
    finally:
        for tmp, _path in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects :func:`load_json` accepts (tokenizer files need 5)."""


def load_json(text: str | bytes, source: str = "<data>") -> Any:
    """Parse JSON text, refusing nesting deeper than :data:`MAX_JSON_DEPTH` before parsing.

    Python's ``json`` module recurses once per level and raises ``RecursionError``
    on deeply nested input; this checks the depth first with one linear scan
    (brackets inside strings do not count), so hostile input gets a message.

    Args:
        text: the JSON text (bytes are decoded as UTF-8).
        source: a file name for messages.

    Returns:
        The parsed value.

    Raises:
        ValueError: not UTF-8, not valid JSON, or nested too deeply; the message
            names ``source``.

    >>> load_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source} is not UTF-8 text: {exc}") from None
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{source}: JSON nested {depth} levels deep (at most {MAX_JSON_DEPTH}); not a tokenizer file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{source} is not valid JSON, so not a JSON tokenizer file (truncated or damaged?): {exc}"
        ) from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"{source}: JSON nested too deeply; not a tokenizer file") from None


_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')


def _json_depth(text: str) -> int:
    """The deepest bracket nesting of ``text``, skipping string literals (linear time)."""
    depth = best = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group()[0]
        if c in "[{":
            depth += 1
            best = max(best, depth)
        elif c in "]}":
            depth -= 1
    return best


_KIND_NAMES = (
    (bool, "true/false"),
    (int, "a whole number"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "an object"),
    (type(None), "null"),
)


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in words (``"a list"``, ``"null"``), for messages."""
    for kind, name in _KIND_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def json_field(value: Any, kind: type | tuple[type, ...], field: str, what: str) -> Any:
    """``value`` when it is a ``kind`` (a bool is never an int here), else a ``ValueError`` naming ``field``.

    Args:
        value: a parsed JSON value.
        kind: the accepted Python type(s).
        field: the field's path in the file, for the message (``'"vocab"'``, ``'"merges"[3]'``).
        what: the expected shape in words (``'an object {"id": "base64 bytes"}'``).

    Raises:
        ValueError: ``field must be <what>, got <kind>``.

    >>> json_field([1], dict, '"vocab"', "an object")
    Traceback (most recent call last):
    ValueError: "vocab" must be an object, got a list
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool)):
        return value
    raise ValueError(f"{field} must be {what}, got {json_kind(value)}")


def json_int(value: Any, field: str, lo: int = 0, hi: int | None = None) -> int:
    """``value`` when it is a whole number in ``lo..hi`` (``hi`` ``None``: no upper bound), else a ``ValueError``.

    A string of digits, a float or a bool is refused (the project's files write ints).
    """
    json_field(value, int, field, "a whole number")
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
        raise ValueError(f"{field} must be {bound}, got {value}")
    return value


def json_float(value: Any, field: str) -> float:
    """``value`` as a ``float`` when it is a finite JSON number, else a ``ValueError`` naming ``field``.

    Python's ``json`` module reads ``NaN``, ``Infinity`` and ``-Infinity``, which no
    score may be; a string or a bool is refused too.

    >>> json_float(-2.5, '"model.vocab"[3][1]')
    -2.5
    >>> json_float(float("nan"), '"model.vocab"[3][1]')
    Traceback (most recent call last):
    ValueError: "model.vocab"[3][1] must be a finite number, got nan
    """
    json_field(value, (int, float), field, "a number")
    if not math.isfinite(value):
        raise ValueError(f"{field} must be a finite number, got {value}")
    return float(value)


def json_bool(value: Any, field: str) -> bool:
    """``value`` when it is ``true`` or ``false``, else a ``ValueError`` naming ``field`` (``1`` or ``"true"`` too).

    >>> json_bool(1, '"lowercase"')
    Traceback (most recent call last):
    ValueError: "lowercase" must be true or false, got a whole number
    """
    return json_field(value, bool, field, "true or false")


def json_optional_str(value: Any, field: str, default: str) -> str:
    """``value`` when it is a string, ``default`` when it is null or absent (``None``), else a ``ValueError``."""
    return default if value is None else json_field(value, str, field, "a string or null")


FILE_VERSION = 1
"""The ``"version"`` the project's own JSON files carry (every algorithm's ``to_dict``)."""


def json_version(data: Any) -> None:
    """Check the ``"version"`` field of the project's own JSON (absent, as in files from before it, or 1).

    Raises:
        ValueError: any other value, naming the field.
    """
    version = data.get("version", FILE_VERSION)
    if isinstance(version, bool) or version != FILE_VERSION or not isinstance(version, int):
        raise ValueError(
            f'"version" must be {FILE_VERSION} (the only version this package writes), got {json_kind(version)} '
            f"{version!r}"
        )


def check_trace_counts(rows: Sequence[tuple[int, int, int, int]], initial_tokens: int | None, field: str) -> None:
    """Check the counts of a merge trace read from a file: ranks in order, and each step's token count.

    Every merge trace (BPE's, WordPiece's) records per step the pair's count, the occurrences it
    replaced (at most the count: overlapping occurrences such as ``aaa`` replace fewer) and the training
    text's tokens after it, which is the tokens before it less those replaced.

    Args:
        rows: ``(rank, pair count, replaced, tokens after)`` per step, in file order.
        initial_tokens: the training text's tokens before the first merge (the file's
            ``"training"``), or ``None`` when the file does not say (the chain is then checked from step 2).
        field: the trace's name in the file, for messages (``'"trace"'``).

    Raises:
        ValueError: a rank out of order, more replaced than counted, or a token count that does not follow;
            the message names the row.
    """
    before = initial_tokens
    for k, (rank, count, replaced, after) in enumerate(rows):
        where = f"{field}[{k}]"
        if rank != k:
            raise ValueError(f"{where} has rank {rank}; the trace lists the merges in order, so it must be {k}")
        if replaced > count:
            raise ValueError(f"{where} replaced {replaced:,} occurrences of a pair counted {count:,} times")
        if before is not None and after != before - replaced:
            raise ValueError(
                f"{where} says {after:,} tokens after the merge, but {before:,} before it less {replaced:,} replaced "
                f"is {before - replaced:,}"
            )
        before = after


def training_from_json(data: Any, field: str = '"training"', cls: type[TrainingInfo] = TrainingInfo) -> TrainingInfo:
    """A :class:`~bpe_core.interface.TrainingInfo` (or a subclass, ``cls``) from its JSON object, fields type-checked.

    Args:
        data: the parsed JSON object.
        field: the field's path in the file, for messages.
        cls: the class to build: :class:`~bpe_core.interface.TrainingInfo` or a
            dataclass extending it with more ``int``/``float``/``str`` fields
            (:class:`bpe_core.unigram.UnigramTrainingInfo`).

    Raises:
        ValueError: not an object, an unknown field, or a field of the wrong type.
    """
    json_field(data, dict, field, "an object")
    kinds = {f.name: f.type for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        kind = kinds.get(key)
        if kind is None:
            raise ValueError(f"{field} has an unknown field {key!r} (expected {', '.join(kinds)})")
        name = f'"{field.strip(chr(34))}.{key}"'
        if kind == "int":
            values[key] = json_int(value, name)
        elif kind == "float":
            values[key] = json_float(value, name)
        else:
            values[key] = json_field(value, (str, type(None)), name, "a string or null")
    if "requested_vocab_size" not in values:
        raise ValueError(f"{field} lacks its field 'requested_vocab_size'")
    return cls(**values)


class JsonFile:
    """Mixin: ``save(path)`` and ``load(path)`` of the project's JSON form (``to_dict`` / ``from_dict``)."""

    def to_dict(self) -> dict:  # pragma: no cover - every user overrides it
        """The JSON-ready form; a class that mixes this in defines it."""
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Any) -> Self:  # pragma: no cover - every user overrides it
        """Rebuild from :meth:`to_dict`; a class that mixes this in defines it."""
        raise NotImplementedError

    def save(self, path: str | os.PathLike) -> None:
        """Write this view as JSON (see ``to_dict``) to ``path`` (UTF-8), atomically (:func:`write_atomic`).

        Raises:
            OSError: the file cannot be written (an existing file is left as it was).
        """
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False).encode("utf-8"))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Self:
        """Read a tokenizer written by :meth:`save`.

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is not valid JSON or not this format.
        """
        data = load_json(Path(path).read_bytes(), str(path))
        try:
            return cls.from_dict(data)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None


class ViewCache:
    """Mixin: ``with_vocab_size(n)``, an O(1) view of the first ``n`` ids, remembered per size."""

    _views: dict[int, Any]
    vocab_size: int
    min_vocab_size: int
    max_vocab_size: int

    def _narrow_to(self, n: int) -> None:  # pragma: no cover - every user overrides it
        """Turn this fresh shallow copy into the view at size ``n`` (reset per-view caches)."""
        raise NotImplementedError

    def with_vocab_size(self, n: int) -> Self:
        """The tokenizer restricted to its first ``n`` ids, as an O(1) view.

        Because training only appends to the vocabulary, the view equals the
        tokenizer trained on the same text to size ``n``; ids are the same as here.

        Args:
            n: vocabulary size of the view, ``min_vocab_size <= n <= max_vocab_size``.

        Returns:
            A tokenizer of the same class sharing this one's tables (``self`` when
            ``n == vocab_size``; from any view, the full size is the full tokenizer itself,
            however many sizes were viewed, so memos keyed on it hold).

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
        views = self._views
        if self.vocab_size == hi:  # the full tokenizer stands for its full size, for every view of it
            views.setdefault(hi, self)
        view = views.get(n)
        if view is None:
            view = copy.copy(self)  # shares the tables and this memo
            view._narrow_to(n)
            if len(views) >= MAX_VIEWS:  # keep the newest views and the full one (memos are keyed on it)
                views.pop(next(k for k in views if k != hi))
            views[n] = view
        return view
