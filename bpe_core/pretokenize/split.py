"""Pre-tokenization itself: a text cut into pre-tokens with offsets, and pre-tokens counted.

Pre-tokenization cuts text into pieces ("pre-tokens") before any merge is
learned or applied; merges never cross a pre-token boundary.  Everything here
works on ``str`` and reports positions in characters (Python code points).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

from .patterns import (
    CL100K_PATTERN,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    NAMED_SOURCES,
    O200K_PATTERN,
    compile_pattern,
    exact_for,
    pattern_budget,
    pattern_timeout,
    resolve_pattern,
    tiktoken_twin,
)
from .special import split_special, validate_special_tokens


def check_word_count(word: object, count: object) -> None:
    """Check the types of one entry of a word-count table (``{word: count}``, as ``*_from_counts`` trainers take).

    Args:
        word: should be a ``str``.
        count: should be an ``int`` (not a ``bool``).

    Raises:
        TypeError: ``word`` is not a ``str`` or ``count`` not an ``int``; the message quotes the word.
    """
    if not isinstance(word, str):
        raise TypeError(f"word_counts keys must be str words, got {type(word).__name__} {word!r:.40}")
    if not isinstance(count, int) or isinstance(count, bool):
        raise TypeError(f"the count of word {word!r:.40} must be an int, got {type(count).__name__}")


@dataclass(frozen=True)
class PreToken:
    """One pre-token of a text.

    Attributes:
        text: the pre-token's characters (for a special token, the token itself).
        start: offset of its first character in the source text (characters).
        end: offset one past its last character (characters).
        is_special: ``True`` when this is a special token, which is never merged.
    """

    text: str
    start: int
    end: int
    is_special: bool = False


def pretokenize(text: str, pattern: str = "gpt2", special_tokens: Sequence[str] = ()) -> list[PreToken]:
    """Cut ``text`` into pre-tokens with character offsets.

    Special tokens are split out first (longest match first); the rest is cut
    with ``pattern``.  Characters that the pattern does not match (possible with
    a user's custom pattern) become pre-tokens of their own run, so that the
    pre-tokens always cover the whole text and ``"".join`` of them is ``text``.

    Args:
        text: input text.
        pattern: pattern name or regex source (see :func:`resolve_pattern`).
        special_tokens: special-token strings.

    Returns:
        The list of :class:`PreToken`, in order, covering ``text`` exactly.

    Raises:
        TypeError, ValueError: as :func:`resolve_pattern` and
            :func:`validate_special_tokens`.
    """
    rx = compile_pattern(resolve_pattern(pattern))
    specials = validate_special_tokens(special_tokens)
    out: list[PreToken] = []
    offset = 0
    for segment, is_special in split_special(text, specials):
        if is_special:
            out.append(PreToken(segment, offset, offset + len(segment), True))
        else:
            for start, end in _cover(rx, segment):
                out.append(PreToken(segment[start:end], offset + start, offset + end))
        offset += len(segment)
    return out


def _cover(rx: regex.Pattern, segment: str) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of the pattern's matches, plus the gaps between them."""
    return cover_range(rx, segment, 0, len(segment))


_COVERING = frozenset({GPT2_PATTERN, GPT2_ORIGINAL_PATTERN, CL100K_PATTERN, O200K_PATTERN})
"""Named patterns whose alternatives together match every character, with no capture group
(each ends in a bare ``\\s`` or ``\\s+`` alternative after alternatives for letters, numbers and
everything else), so their ``findall`` already covers the text."""

_BLOCK = 256  # characters: text is checked for non-ASCII characters in blocks this long
_ASCII = "".join(map(chr, range(128)))


_CUT = re.compile(r"(?<=[!-~])[ \n]")
"""A cut position (see :func:`_cut_at_or_before`): a space or newline right after a visible ASCII character."""


def _cut_at_or_before(text: str, i: int) -> int:
    r"""The last cut position ``p <= i`` (0 if none), for GPT-2's pattern.

    A cut is a position ``p`` where a visible ASCII character (``text[p - 1]``) is
    followed by a space or a newline (``text[p]``).  Cutting GPT-2 text there does not
    change its pre-tokens: no alternative of the pattern matches whitespace after a
    non-whitespace character (a space may only *start* a match), so a pre-token ends
    at ``p`` in the whole text; the left part ends with that same character, so its
    matches are the same (the only look-ahead, ``\s+(?!\S)``, looks at a character
    before ``p``); and the pattern never looks behind, so matching resumes at ``p``
    exactly as it would in the whole text.
    """
    while i > 0:
        j = max(text.rfind(" ", 0, i + 1), text.rfind("\n", 0, i + 1))
        if j < 1:
            return 0
        if "!" <= text[j - 1] <= "~":
            return j
        i = j - 1
    return 0


def _cut_at_or_after(text: str, i: int) -> int:
    """The first cut position ``p >= i`` (``len(text)`` if none); see :func:`_cut_at_or_before`."""
    m = _CUT.search(text, max(i, 1))
    return m.start() if m else len(text)


def _ascii_class(prop: str) -> str:
    """The ASCII characters the ``regex`` module puts in ``prop``, as a character-class body."""
    rx = regex.compile(prop)
    return "".join(f"\\x{c:02x}" for c in range(128) if rx.fullmatch(chr(c)))


@lru_cache(maxsize=1)
def _gpt2_ascii_twin() -> re.Pattern:
    r"""GPT-2's split pattern for pure-ASCII text, compiled with the standard ``re`` module.

    ``regex``'s Unicode classes are the slow part of pre-tokenization; on ASCII text
    ``\p{L}``, ``\p{N}`` and ``\s`` are the small sets computed here from ``regex``
    itself, and ``re`` (Python >= 3.11 has possessive quantifiers; ``$`` means the same)
    finds the same matches about twice as fast.
    """
    letters, digits, space = _ascii_class(r"\p{L}"), _ascii_class(r"\p{N}"), _ascii_class(r"\s")
    return re.compile(
        rf"""'(?:[sdmt]|ll|ve|re)| ?[{letters}]++| ?[{digits}]++| ?[^{space}{letters}{digits}]++"""
        rf"""|[{space}]++$|[{space}]+(?![^{space}])|[{space}]"""
    )


def _gpt2_findall(text: str, rx: regex.Pattern) -> list[str]:
    """``rx.findall(text)`` for the GPT-2 pattern: ASCII stretches go to :func:`_gpt2_ascii_twin`.

    Each block of :data:`_BLOCK` characters holding a non-ASCII character is widened to
    the nearest cuts (see :func:`_cut_at_or_before`) on both sides and matched with
    ``rx``; the ASCII text between those regions is matched with the ``re`` twin.
    """
    fast = _gpt2_ascii_twin()
    if text.isascii():
        return fast.findall(text)
    out: list[str] = []
    pos = 0  # text[pos:start] is ASCII and still to match
    start = end = 0  # the pending non-ASCII region, between two cuts
    n = len(text)
    for s in range(0, n, _BLOCK):
        e = s + _BLOCK
        if e <= end:
            continue  # inside the pending region
        s = max(s, end)  # noqa: PLW2901 -- only the part past the pending region is new
        block = text[s:e]
        if block.isascii():
            continue
        # the first and the last non-ASCII character of the block, widened to cuts
        lo = _cut_at_or_before(text, s + len(block) - len(block.lstrip(_ASCII)))
        hi = _cut_at_or_after(text, s + len(block.rstrip(_ASCII)))
        if lo <= end and end > start:
            end = hi  # overlaps the pending region: widen it
            continue
        if end > start:
            out += fast.findall(text[pos:start])
            region = text[start:end]
            out += exact_for(rx, region).findall(region)
            pos = end
        start, end = lo, hi
    if end > start:
        out += fast.findall(text[pos:start])
        region = text[start:end]
        out += exact_for(rx, region).findall(region)
        pos = end
    out += fast.findall(text[pos:])
    return out


def iter_pretoken_strings(text: str, rx: regex.Pattern) -> list[str]:
    """All pre-token strings of an ordinary (special-free) segment, gaps included.

    A fast path used by training and encoding: for the named patterns, which
    match every character, this is ``rx.findall(text)`` (for GPT-2's pattern,
    with pure-ASCII stretches matched by an equivalent standard-library ``re``
    pattern, see :func:`_gpt2_ascii_twin`).

    Args:
        text: a segment that contains no special token.
        rx: a compiled split pattern.

    Returns:
        The pre-token strings, in order; they concatenate to ``text``.
    """
    source = rx.pattern
    if source in _COVERING and rx.flags == compile_pattern(source).flags:  # compiled as compile_pattern does
        return _gpt2_findall(text, rx) if source == GPT2_PATTERN else exact_for(rx, text).findall(text)
    rx = exact_for(rx, text)
    try:
        if rx.groups == 0:
            pieces = rx.findall(text, timeout=pattern_budget(len(text)))
        else:
            pieces = [m.group() for m in rx.finditer(text, timeout=pattern_budget(len(text)))]
    except TimeoutError:
        raise pattern_timeout(rx, len(text)) from None
    if sum(map(len, pieces)) == len(text) and all(pieces):
        return pieces
    return [text[s:e] for s, e in _cover(rx, text)]


SURROGATE = regex.compile(r"[\ud800-\udfff]")
"""An unpaired surrogate: not a character, no UTF-8 form."""


def surrogate_error(text: str) -> ValueError | None:
    """The ``ValueError`` to raise for the first unpaired surrogate in ``text``, or ``None`` when it has none."""
    m = SURROGATE.search(text)
    if m is None:
        return None
    return ValueError(
        f"text contains an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}, which is not a "
        "character and has no UTF-8 form; remove it or replace it with U+FFFD"
    )


def surrogate_message(piece: str, exc: UnicodeEncodeError) -> str:
    """The error text for a pre-token holding an unpaired surrogate (``exc`` from ``piece.encode("utf-8")``)."""
    bad = piece[exc.start]
    return (
        f"text contains an unpaired surrogate U+{ord(bad):04X}, which is not a character and has no UTF-8 "
        "form; remove it or replace it with U+FFFD"
    )


def count_pretokens(text: str, pattern: str = "gpt2", special_tokens: Sequence[str] = ()) -> tuple[Counter, int]:
    """Count the pre-tokens of a text, with special tokens removed.

    This is the first phase of BPE training: the merge loop then works on the
    table of distinct pre-tokens weighted by these counts.

    Args:
        text: the training text.
        pattern: pattern name or regex source.
        special_tokens: special-token strings; their occurrences are cut out of
            the text and never counted as pre-tokens.

    Returns:
        ``(counts, n_special)``: a ``Counter`` mapping pre-token ``str`` to its
        number of occurrences, and how many special-token occurrences were removed.

    Raises:
        TypeError, ValueError: as :func:`resolve_pattern` and
            :func:`validate_special_tokens`.
    """
    rx = compile_pattern(resolve_pattern(pattern))
    specials = validate_special_tokens(special_tokens)
    counts: Counter = Counter()
    n_special = 0
    for segment, is_special in split_special(text, specials):
        if is_special:
            n_special += 1
        else:
            counts.update(iter_pretoken_strings(segment, rx))
    return counts, n_special


def cover_range(rx: regex.Pattern, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of the pattern's matches in ``text[start:end]``, plus the gaps between them.

    Offsets are into ``text``; the slice is never copied (``regex``'s ``pos``/``endpos``).  A pattern of
    :data:`TIKTOKEN_SOURCES` is matched as tiktoken's engine matches it (:func:`exact_for`); a custom one
    within :func:`pattern_budget`.

    Raises:
        ValueError: a custom pattern ran out of its time budget.
    """
    pos = start
    if tiktoken_twin(rx.pattern) is not None and exact_for(rx, text) is not rx:  # text holds disputed characters
        rx = exact_for(rx, text[start:end])
    budget = None if rx.pattern in NAMED_SOURCES else pattern_budget(end - start)
    try:
        for m in rx.finditer(text, start, end, timeout=budget):
            s, e = m.span()
            if s == e:
                continue
            if s > pos:
                yield pos, s
            yield s, e
            pos = e
    except TimeoutError:
        raise pattern_timeout(rx, end - start) from None
    if pos < end:
        yield pos, end
