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

import copy
import json
import os
from pathlib import Path
from typing import Any, Self

__all__ = ["JsonFile", "ViewCache"]

MAX_VIEWS = 16
"""Views remembered per tokenizer (the oldest is dropped first)."""


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
        """Write this view as JSON (see ``to_dict``) to ``path`` (UTF-8).

        Raises:
            OSError: the file cannot be written.
        """
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Self:
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
            ``n == vocab_size``).

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
            view = copy.copy(self)  # shares the tables and this memo
            view._narrow_to(n)
            if len(self._views) >= MAX_VIEWS:  # keep the newest views
                self._views.pop(next(iter(self._views)))
            self._views[n] = view
        return view
