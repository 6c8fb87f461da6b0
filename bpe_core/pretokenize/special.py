"""Special tokens: checked once, then cut out of the text before any pattern runs, longest match first."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import regex


def validate_special_tokens(special_tokens: Iterable[str] | None) -> tuple[str, ...]:
    """Check a list of special tokens and return it as a tuple (order kept).

    Overlapping special tokens (one a substring of another, such as ``<|a|>`` and
    ``<|a|><|b|>``) are allowed: splitting takes the longest match first.

    Args:
        special_tokens: the special-token strings, or ``None`` for none.

    Returns:
        A tuple of the tokens in the given order.

    Raises:
        TypeError: ``special_tokens`` is a single ``str`` (a common slip: pass a
            list) or holds something that is not a ``str``.
        ValueError: a token is empty, or a token is given twice.
    """
    if special_tokens is None:
        return ()
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of strings, not one string")
    tokens = tuple(special_tokens)
    seen: set[str] = set()
    for i, tok in enumerate(tokens):
        if not isinstance(tok, str):
            raise TypeError(f"special token #{i + 1} must be a str, got {type(tok).__name__}")
        if tok == "":
            raise ValueError(f"special token #{i + 1} is empty; a special token needs at least one character")
        if tok in seen:
            raise ValueError(f"special token {tok!r} is given twice; each special token must be unique")
        seen.add(tok)
    return tokens


@lru_cache(maxsize=64)
def special_regex(special_tokens: tuple[str, ...]) -> regex.Pattern | None:
    """One regex matching any of the special tokens, longest first (``None`` for none); cached."""
    if not special_tokens:
        return None
    ordered = sorted(special_tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def split_special(text: str, special_tokens: Sequence[str]) -> list[tuple[str, bool]]:
    """Split ``text`` around occurrences of special tokens, longest match first.

    Args:
        text: the input text.
        special_tokens: special-token strings (already validated; order irrelevant).

    Returns:
        A list of ``(segment, is_special)`` in text order; concatenating the
        segments gives back ``text``.  Empty ordinary segments are left out.
    """
    rx = special_regex(tuple(special_tokens))
    if rx is None:
        return [(text, False)] if text else []
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in rx.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], False))
        out.append((m.group(), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out
