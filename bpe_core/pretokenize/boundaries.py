"""Cutting a long text where its tokens do not change: drawn prefixes and chunks shared by several tokenizers.

No merge crosses a pre-token boundary, so a text cut at a boundary of every
tokenizer's pre-tokenization encodes, piece by piece, to exactly the tokens of
the whole text.  :func:`pretoken_prefix` and :func:`shared_pretoken_prefix`
bound what the pages draw; :func:`aligned_chunks` lets the figures of a long
text be summed over pieces.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import regex

from .patterns import NAMED_SOURCES, SENTENCEPIECE_PATTERN, compile_pattern, resolve_pattern
from .special import special_regex, validate_special_tokens
from .split import cover_range

Split = tuple[str, Sequence[str]]
"""A tokenizer's pre-tokenization: ``(pattern name or regex source, special-token strings)``."""


def tokenizer_split(tokenizer) -> Split:
    """The :data:`Split` of a tokenizer of this package (trained BPE, WordPiece or a reference encoding).

    Args:
        tokenizer: an object with ``pattern`` (regex source) and ``special_tokens``
            (their strings, as a list or as the keys of a ``{string: id}`` dict).

    Returns:
        ``(pattern, special-token strings)``.
    """
    return tokenizer.pattern, tuple(tokenizer.special_tokens)


_LINE_SOURCES = NAMED_SOURCES - {SENTENCEPIECE_PATTERN}
"""The named patterns that cut after a newline between two non-space characters (``sentencepiece`` does not)."""

_SAFE_NEWLINE = regex.compile(r"(?<=\S)\n(?=\S)")
r"""A newline between two non-whitespace characters (``regex``'s ``\s``, as the patterns use it).

Every named pattern but ``sentencepiece`` (whose words run from space to
space) has a pre-token boundary just after such a newline, and
cutting there changes no pre-token on either side: no alternative matches a
newline together with a following non-whitespace character (newlines appear
only in whitespace alternatives, in cl100k/o200k's punctuation-then-newlines
tail and in ``none``'s run of newlines), and because the character before the
newline is not whitespace, no whitespace run ends at the cut, so neither
GPT-2's look-ahead ``\s+(?!\S)`` nor the end-of-string ``\s++$`` can match
differently at the end of the cut text.
"""

_LINE_START = regex.compile(r"(?r)\n(?=[^\s/])")
"""Searched backwards: the last newline followed by a non-whitespace character other than ``/``.

Every named pattern but ``sentencepiece`` has a pre-token boundary after such a newline (no
alternative matches a newline and then a non-whitespace character, except
o200k's punctuation tail ``[\r\n/]*``, hence the ``/``), though not always an
exact cut (GPT-2 splits ``"\r\n"`` before ``"a"`` in two, but takes it whole at the
end of a text).  Matching from such a boundary gives the whole text's
pre-tokens, so a scan for an exact cut can start at the last one before the
target instead of at the start of the text.
"""

_NEWLINE_WINDOW = 10_000
"""Characters past the target in which a safe newline is looked for before scanning pre-tokens."""

_NON_SPACE = regex.compile(r"\S")


def _between_words(text: str, c: int) -> bool:
    """No whitespace-separated word runs over the cut ``c`` (the text's ends always qualify)."""
    return c <= 0 or c >= len(text) or not (_NON_SPACE.match(text, c - 1) and _NON_SPACE.match(text, c))


_Compiled = tuple[regex.Pattern, regex.Pattern | None, int]
"""A :data:`Split` compiled: ``(pattern, special-token alternation or None, longest special token in characters)``."""


def _compile_split(split: Split) -> _Compiled:
    pattern, specials = split
    specials = validate_special_tokens(specials)
    longest = max(map(len, specials), default=0)
    return compile_pattern(resolve_pattern(pattern)), special_regex(specials), longest


def _inner_boundary(
    text: str, a: int, b: int, target: int, limit: int, rx: regex.Pattern, for_chunks: bool
) -> tuple[int, int] | None:
    """A verified boundary ``c`` of the ordinary segment ``text[a:b]`` with ``target <= c <= limit``.

    The first such boundary; or, ``for_chunks``, a boundary that splits no
    whitespace-separated word, found quickly: for a named pattern a safe
    newline near the target (:data:`_SAFE_NEWLINE`; not for ``sentencepiece``, whose
    words hold newlines), else the first.  Returned as ``(c, w)``: ``w`` is where
    the pre-tokens re-matched to verify it begin (a boundary of the whole text).
    ``None`` when there is none up to ``min(b, limit)``.
    """
    scan_from = a
    if rx.pattern in _LINE_SOURCES:
        if for_chunks:
            m = _SAFE_NEWLINE.search(text, max(target - 1, a), min(b, limit, target + _NEWLINE_WINDOW))
            if m is not None:
                return m.end(), m.end()
        m = _LINE_START.search(text, a, target)
        if m is not None:
            scan_from = m.end()
    recent: list[tuple[int, int]] = []  # the last few pre-token spans from scan_from
    for s, e in cover_range(rx, text, scan_from, b):
        recent = [*recent[-3:], (s, e)]
        if e > limit:
            return None
        if e < target or (for_chunks and not _between_words(text, e)):
            continue
        if e == b:
            return e, e  # the end of the segment (a special token or the end of the text follows)
        # the last pre-tokens must match the same way on the cut text (a look-ahead or ``$`` can see the cut
        # as the end of the string); for chunks, with a custom pattern (a look-behind or an anchor could
        # see the cut as the start of a string), so must the next ones on the text after the cut
        if list(cover_range(rx, text, recent[0][0], e)) == recent and (
            not for_chunks or rx.pattern in NAMED_SOURCES or _same_after(rx, text, e, b)
        ):
            return e, recent[0][0]
    return None


def _same_after(rx: regex.Pattern, text: str, c: int, b: int) -> bool:
    """Matching ``text[c:b]`` as a string of its own gives the whole text's next pre-tokens after ``c``.

    Checked on the first three (all, near ``b``): the fresh match runs on a
    slice ending at the fourth pre-token, where the slice's end can change it.
    """
    after = list(itertools.islice(cover_range(rx, text, c, b), 4))
    end = after[-1][1] if len(after) == 4 else b
    k = 3 if len(after) == 4 else len(after)
    fresh = [(s + c, e + c) for s, e in cover_range(rx, text[c:end], 0, end - c)]
    return fresh[:k] == after[:k]


def _boundary(
    text: str,
    start: int,
    target: int,
    limit: int,
    split: _Compiled,
    for_chunks: bool,
) -> tuple[int, int]:
    """The first cut ``c >= target`` that is a pre-token boundary of ``split`` (``limit`` if none up to it).

    ``start`` must be a boundary of the whole text's pre-tokenization (0 or an
    earlier restart point): the pre-tokens are re-matched from there, which gives
    exactly the whole text's pre-tokens because matching restarts at every
    boundary.  A special token's start and end are boundaries; a cut never
    falls inside one.  ``for_chunks``: ``c`` must also not fall inside a
    whitespace-separated word, and need not be the first (see :func:`_inner_boundary`).

    Returns ``(c, restart)``: ``restart <= c`` is a boundary of the whole text from which
    a search for a later cut may start (the first pre-token :func:`_inner_boundary` re-matched).
    """
    n = len(text)
    limit = min(limit, n)
    rx, special_rx, longest = split
    # special tokens are looked for only up to where one that starts by ``limit`` ends: past it nothing is cut,
    # and a search to the end of a long text under a tokenizer with a thousand special tokens is slow
    reach = min(n, limit + longest)
    specials = special_rx.finditer(text, start, reach) if special_rx is not None else iter(())
    pos = start
    while True:
        m = next(specials, None)
        seg_end = n if m is None else m.start()
        if seg_end >= target:  # the ordinary segment [pos, seg_end) reaches the target
            if pos > limit:
                return limit, pos
            if pos >= target and (not for_chunks or _between_words(text, pos)):
                return pos, pos
            c = _inner_boundary(text, pos, seg_end, max(target, pos + 1), limit, rx, for_chunks)
            if c is not None:
                return c
            if seg_end >= limit:
                return limit, pos
        if m is None:
            return n, pos
        pos = m.end()  # past the special token


def _shared_boundary(
    text: str,
    start: int,
    target: int,
    limit: int,
    splits: Sequence[_Compiled],
    for_chunks: bool = False,
) -> int:
    r"""A cut ``c >= target`` that is a boundary of every split (the first, unless ``for_chunks``), or ``limit``.

    For a drawn prefix each split's search starts again near its own last boundary, not from ``start``:
    splits that rarely agree (a punctuation-only split beside a word split) take many rounds, each then
    only a short scan.  It starts where the pre-tokens re-matched to verify that boundary begin, not at
    the boundary: a later cut can change the pre-tokens just before it (in `` \na``, GPT-2 cuts after the
    space, but a text cut after ``\n`` ends in one pre-token `` \n``; cl100k's only boundary there).  Not for
    chunks: a chunk's cut may be a safe newline that is no boundary of the pre-tokens matched from ``start``,
    and matching again from it could differ.
    """
    c = target
    starts = [start] * len(splits)
    while True:
        found = [_boundary(text, s, c, limit, split, for_chunks) for s, split in zip(starts, splits)]
        if not for_chunks:
            starts = [restart for _cut, restart in found]
        hi = max(cut for cut, _restart in found)
        if hi == c or hi >= limit:
            return min(hi, limit, len(text))
        c = hi  # each split's next boundary is at or after hi: look again from there


def pretoken_prefix(
    text: str, max_chars: int, pattern: str = "gpt2", special_tokens: Sequence[str] = (), *, slack: int = 1_000_000
) -> str:
    r"""The shortest prefix of ``text`` of at least ``max_chars`` characters that ends on a pre-token boundary.

    Encoding the prefix gives exactly the first tokens of encoding the whole
    text, because no merge crosses a pre-token boundary.  A boundary qualifies
    only when cutting there leaves the last pre-tokens unchanged: patterns with
    a look-ahead (GPT-2's ``\s+(?!\S)``) can split a whitespace run
    differently at the end of a string, so each candidate cut is checked by
    re-matching the last few pre-tokens on the cut text.

    Used to draw a bounded part of a long text: the drawn tokens are the true
    tokens, and a single huge pre-token (a 100 KB "word") is drawn whole.

    Args:
        text: the whole text.
        max_chars: the prefix's minimum length, in characters (the text itself
            when it is no longer).
        pattern: the tokenizer's pattern name or regex source (WordPiece: ``"bert"``).
        special_tokens: the tokenizer's special tokens (a cut never falls inside one).
        slack: give up looking for a boundary this many characters past
            ``max_chars`` and cut there (the drawing's last tokens may then differ).

    Returns:
        ``text`` itself or a prefix of it.

    Raises:
        TypeError, ValueError: as :func:`resolve_pattern` and :func:`validate_special_tokens`.
    """
    return shared_pretoken_prefix(text, max_chars, [(pattern, special_tokens)], slack=slack)


def shared_pretoken_prefix(text: str, max_chars: int, splits: Sequence[Split], *, slack: int = 1_000_000) -> str:
    """:func:`pretoken_prefix` for several tokenizers at once: a cut that is a boundary for every one.

    The Compare page draws one prefix under every tokenizer; ending it on a
    boundary of all their pre-tokenizations makes each drawing exactly the
    first tokens of that tokenizer's encoding of the whole text.

    Args:
        text: the whole text.
        max_chars: the prefix's minimum length, in characters.
        splits: ``(pattern, special_tokens)`` of each tokenizer (see :data:`Split`).
        slack: as for :func:`pretoken_prefix`.

    Returns:
        ``text`` itself or a prefix of it.

    Raises:
        TypeError, ValueError: a bad pattern or special-token list, as :func:`resolve_pattern`
            and :func:`validate_special_tokens`.
    """
    compiled = [_compile_split(s) for s in splits]
    if len(text) <= max_chars:
        return text
    if not compiled:  # no tokenizer whose boundaries to keep
        return text[:max_chars]
    return text[: _shared_boundary(text, 0, max_chars, max_chars + slack, compiled)]


def aligned_chunks(
    text: str, max_chars: int, splits: Sequence[Split], *, slack: int = 1_000_000
) -> list[tuple[int, int]]:
    """Cut ``text`` into consecutive ``(start, end)`` character ranges to be tokenized one at a time.

    Each cut is a pre-token boundary of every split (as for
    :func:`shared_pretoken_prefix`) and falls between two whitespace-separated
    words, so the tokens, and the words, of the pieces are exactly those of the
    whole text: counts summed over the chunks equal the whole text's.  Only a
    stretch of ``max_chars + slack`` characters with no such cut is cut at its
    end (the counts next to that cut may then differ).

    Args:
        text: the text.
        max_chars: each range's minimum length in characters (the last may be
            shorter); ``>= 1``.
        splits: ``(pattern, special_tokens)`` of each tokenizer the chunks are for.
        slack: how far past ``max_chars`` to look for a cut.

    Returns:
        Ranges covering ``text`` in order (empty for an empty text).

    Raises:
        ValueError: ``max_chars < 1``; a bad pattern or special-token list.
        TypeError: as :func:`resolve_pattern` and :func:`validate_special_tokens`.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    compiled = [_compile_split(s) for s in splits]
    out: list[tuple[int, int]] = []
    n = len(text)
    start = 0
    while n - start > max_chars:
        target = start + max_chars
        cut = _shared_boundary(text, start, target, target + slack, compiled, for_chunks=True)
        if cut >= n:
            break
        out.append((start, cut))
        start = cut
    if start < n:
        out.append((start, n))
    return out
