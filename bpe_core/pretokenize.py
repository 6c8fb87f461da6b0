r"""Pre-tokenization: split patterns, special-token splitting and pre-token counting.

Pre-tokenization cuts text into pieces ("pre-tokens") before any merge is
learned or applied; merges never cross a pre-token boundary.  Everything here
works on ``str`` and reports positions in characters (Python code points).

Sources of the named patterns:

* ``gpt2``  -- the pattern of OpenAI's GPT-2 release, in the equivalent faster
  form that tiktoken uses for ``r50k_base``/``gpt2`` (possessive quantifiers and
  a ``\\s++$`` alternative; it splits every text exactly like the original
  ``'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``).
* ``cl100k`` -- tiktoken's ``cl100k_base`` pattern (GPT-3.5/GPT-4).
* ``o200k`` -- tiktoken's ``o200k_base`` pattern (GPT-4o).
* ``bert``  -- BERT-style: runs of non-space, non-punctuation characters, and
  each punctuation character on its own (as Hugging Face ``BertPreTokenizer``;
  punctuation is Unicode category P* plus the ASCII symbols ``!-/ :-@ [-` {-~``).
* ``none``  -- no word splitting: each line's text is one pre-token and each run
  of newlines another, so merges may cross spaces and punctuation but never a
  line break (a "basic" BPE as in Karpathy's minbpe).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import regex

from .tiktoken_compat import disputed_chars, exact_pattern

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
"""GPT-2 split pattern, exactly as tiktoken's ``r50k_base`` writes it."""

GPT2_ORIGINAL_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
"""GPT-2 split pattern as printed in the GPT-2 code and the seeds (same splits, slower)."""

CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""cl100k_base split pattern, as in tiktoken's ``tiktoken_ext/openai_public.py``."""

O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""o200k_base split pattern, as in tiktoken's ``tiktoken_ext/openai_public.py``."""

_BERT_PUNCT = r"\p{P}!-/:-@\[-`{-~"
BERT_PATTERN = rf"[^\s{_BERT_PUNCT}]+|[{_BERT_PUNCT}]"
"""BERT-style split: whitespace separates words and each punctuation character stands alone."""

LINES_PATTERN = r"[^\n]+|\n+"
"""The ``none`` pattern: a line's text is one pre-token, a run of newlines another."""

SENTENCEPIECE_PATTERN = "[ \u2581][^ \u2581]*|[^ \u2581]+"
"""The ``sentencepiece`` pattern: a space (or ``▁``) and what follows up to the next one.

Unigram (:mod:`bpe_core.unigram`) writes each such word ``"▁" + rest``, as
Hugging Face's ``Metaspace`` pre-tokenizer does (SentencePiece-style: ``▁``
marks spaces); other algorithms use the words as they are.  Newlines and
punctuation stay inside words."""

PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "bert": BERT_PATTERN,
    "none": LINES_PATTERN,
    "sentencepiece": SENTENCEPIECE_PATTERN,
}
"""Named split patterns.  Keys are what ``pattern=`` accepts besides a raw regex."""

PATTERN_LABELS: dict[str, str] = {
    "gpt2": "GPT-2 (r50k_base)",
    "cl100k": "GPT-4 (cl100k_base)",
    "o200k": "GPT-4o (o200k_base)",
    "bert": "BERT-style (whitespace + punctuation)",
    "none": "None (one pre-token per line)",
    "sentencepiece": "SentencePiece (▁ marks spaces)",
}
"""Human-readable name of each pattern in :data:`PATTERNS`, for menus and tables."""

TIKTOKEN_SOURCES: set[str] = {GPT2_PATTERN, GPT2_ORIGINAL_PATTERN, CL100K_PATTERN, O200K_PATTERN}
"""Pattern sources that tiktoken also runs: they are pre-tokenized exactly as tiktoken's regex engine does.

Python's ``regex`` module knows newer Unicode versions than tiktoken's engine;
for these sources a text holding a character the two classify differently is
split with :func:`bpe_core.tiktoken_compat.exact_pattern` instead (see that
module), so the same ranks always give tiktoken's ids.  Production encodings
with their own pattern add it with :func:`register_tiktoken_pattern`."""


def register_tiktoken_pattern(source: str) -> None:
    """Declare a pattern source that tiktoken runs (see :data:`TIKTOKEN_SOURCES`)."""
    TIKTOKEN_SOURCES.add(source)
    _tiktoken_twin.cache_clear()


@lru_cache(maxsize=64)
def _tiktoken_twin(source: str) -> tuple[np.ndarray, regex.Pattern] | None:
    """``(disputed-code-point table, exact pattern)`` for a tiktoken source with disputed characters, else ``None``.

    The table is a ``bool`` array indexed by code point (1.1 MB).
    """
    if source not in TIKTOKEN_SOURCES:
        return None
    disputed = disputed_chars(source)
    if not disputed:
        return None
    table = np.zeros(0x110000, dtype=bool)
    table[[ord(c) for c in disputed]] = True
    return table, regex.compile(exact_pattern(source))


def _holds_any(text: str, table: np.ndarray) -> bool:
    """Whether ``text`` holds a code point marked in ``table`` (numpy, about 10 ns a character, 4 MiB at a time)."""
    step = 1 << 20
    for i in range(0, len(text), step):
        part = text[i : i + step]
        if not part.isascii():
            codes = np.frombuffer(part.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            if table[codes].any():
                return True
    return False


def exact_for(rx: regex.Pattern, text: str) -> regex.Pattern:
    """``rx``, or its tiktoken-exact twin when ``text`` holds a character the two engines classify differently.

    Args:
        rx: a split pattern compiled by :func:`compile_pattern`.
        text: the text about to be split with it.

    Returns:
        The pattern to split ``text`` with: ``rx`` itself for every pattern not
        in :data:`TIKTOKEN_SOURCES` and for text without such characters (an
        ASCII text costs nothing; others about 10 ns a character).
    """
    twin = _tiktoken_twin(rx.pattern)
    if twin is None or text.isascii():
        return rx
    last = _LAST_CHECKED
    if last[0] is text and last[1] is twin:
        return last[2]
    out = twin[1] if _holds_any(text, twin[0]) else rx
    _LAST_CHECKED[:] = [text, twin, out]  # boundary scans ask again and again about one long text
    return out


_LAST_CHECKED: list = [None, None, None]
"""``[text, twin, answer]`` of the last :func:`exact_for` call on a non-ASCII text (held by identity)."""


def resolve_pattern(pattern: str) -> str:
    """Return the regex source for a pattern name, or ``pattern`` itself if it is a regex.

    Args:
        pattern: a key of :data:`PATTERNS` (``"gpt2"``, ``"cl100k"``, ``"o200k"``,
            ``"bert"``, ``"none"``, ``"sentencepiece"``) or the source of a ``regex``-module pattern.

    Returns:
        The regex source string.

    Raises:
        TypeError: ``pattern`` is not a ``str``.
        ValueError: ``pattern`` is empty, does not compile (the message carries the
            regex module's own error text), or can match the empty string.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a name or a regex), got {type(pattern).__name__}")
    source = PATTERNS.get(pattern, pattern)
    compile_pattern(source)
    return source


@lru_cache(maxsize=64)
def compile_pattern(source: str) -> regex.Pattern:
    """Compile a split pattern with the ``regex`` module (cached).

    Args:
        source: regex source (not a pattern name).

    Returns:
        The compiled pattern.

    Raises:
        ValueError: the source is empty, invalid (message includes the regex
            error and its position) or matches the empty string, which would make
            pre-tokenization loop without progress.
    """
    if source == "":
        raise ValueError("pattern is empty: give a regex such as \\S+ or a pattern name")
    try:
        compiled = regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"invalid pattern: {exc}") from None
    if compiled.flags & regex.REVERSE:
        raise ValueError(
            "invalid pattern: the (?r) flag searches from the end of the text, so the pre-tokens would come out "
            "in reverse order; remove it"
        )
    if compiled.fullmatch("") is not None:
        raise ValueError("invalid pattern: it matches the empty string, so it cannot split text")
    if source not in _NAMED_SOURCES:
        _probe_backtracking(compiled)
    return compiled


_PROBES = (*(c * 32 for c in "aA1 .\n"), "ab" * 16, "a1 " * 11, "Aa. " * 8, "\u00e9\u4e2d" * 16)
"""Short texts a custom pattern must split quickly (:func:`_probe_backtracking`)."""

PROBE_SECONDS = 0.1
"""Time a custom pattern may take on each probe text before it is refused (seconds)."""


def _probe_backtracking(rx: regex.Pattern) -> None:
    """Refuse a pattern that backtracks catastrophically on a short probe text (``ValueError``)."""
    for probe in _PROBES:
        try:
            rx.findall(probe, timeout=PROBE_SECONDS)
        except TimeoutError:
            raise ValueError(
                f"invalid pattern: it takes more than {PROBE_SECONDS:g} s to split the {len(probe)}-character text "
                f"{probe[:12]!r}…: it backtracks catastrophically (nested or overlapping repeats such as (a|a)+); "
                "simplify it"
            ) from None


def pattern_budget(n_chars: int) -> float:
    """Seconds a custom pattern may take to split ``n_chars`` characters: 1 s plus 5 microseconds a character.

    The named patterns split text at well under a microsecond a character;
    a user's pattern that needs more than this budget backtracks
    catastrophically and is stopped (:func:`iter_pretoken_strings`,
    :func:`pretokenize`), so that no text or link can pin a server thread.
    """
    return 1.0 + n_chars * 5e-6


def _timed_out(rx: regex.Pattern, n_chars: int) -> ValueError:
    return ValueError(
        f"the split pattern took more than {pattern_budget(n_chars):.1f} s on {n_chars:,} characters and was "
        "stopped: it backtracks catastrophically (nested or overlapping repeats such as (a|a)+); simplify it"
    )


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
def _special_regex(special_tokens: tuple[str, ...]) -> regex.Pattern | None:
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
    rx = _special_regex(tuple(special_tokens))
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
    return _cover_range(rx, segment, 0, len(segment))


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
        raise _timed_out(rx, len(text)) from None
    if sum(map(len, pieces)) == len(text) and all(pieces):
        return pieces
    return [text[s:e] for s, e in _cover(rx, text)]


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


_NAMED_SOURCES = frozenset(PATTERNS.values()) | {GPT2_ORIGINAL_PATTERN}

_LINE_SOURCES = _NAMED_SOURCES - {SENTENCEPIECE_PATTERN}
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


def _compile_split(split: Split) -> tuple[regex.Pattern, regex.Pattern | None]:
    pattern, specials = split
    return compile_pattern(resolve_pattern(pattern)), _special_regex(validate_special_tokens(specials))


def _inner_boundary(
    text: str, a: int, b: int, target: int, limit: int, rx: regex.Pattern, for_chunks: bool
) -> int | None:
    """A verified boundary ``c`` of the ordinary segment ``text[a:b]`` with ``target <= c <= limit``.

    The first such boundary; or, ``for_chunks``, a boundary that splits no
    whitespace-separated word, found quickly: for a named pattern a safe
    newline near the target (:data:`_SAFE_NEWLINE`; not for ``sentencepiece``, whose
    words hold newlines), else the first.
    ``None`` when there is none up to ``min(b, limit)``.
    """
    scan_from = a
    if rx.pattern in _LINE_SOURCES:
        if for_chunks:
            m = _SAFE_NEWLINE.search(text, max(target - 1, a), min(b, limit, target + _NEWLINE_WINDOW))
            if m is not None:
                return m.end()
        m = _LINE_START.search(text, a, target)
        if m is not None:
            scan_from = m.end()
    recent: list[tuple[int, int]] = []  # the last few pre-token spans from scan_from
    for s, e in _cover_range(rx, text, scan_from, b):
        recent = [*recent[-3:], (s, e)]
        if e > limit:
            return None
        if e < target or (for_chunks and not _between_words(text, e)):
            continue
        if e == b:
            return e  # the end of the segment (a special token or the end of the text follows)
        # the last pre-tokens must match the same way on the cut text (a look-ahead or ``$`` can see the cut
        # as the end of the string); for chunks, with a custom pattern (a look-behind or an anchor could
        # see the cut as the start of a string), so must the next ones on the text after the cut
        if list(_cover_range(rx, text, recent[0][0], e)) == recent and (
            not for_chunks or rx.pattern in _NAMED_SOURCES or _same_after(rx, text, e, b)
        ):
            return e
    return None


def _same_after(rx: regex.Pattern, text: str, c: int, b: int) -> bool:
    """Matching ``text[c:b]`` as a string of its own gives the whole text's next pre-tokens after ``c``.

    Checked on the first three (all, near ``b``): the fresh match runs on a
    slice ending at the fourth pre-token, where the slice's end can change it.
    """
    after = list(itertools.islice(_cover_range(rx, text, c, b), 4))
    end = after[-1][1] if len(after) == 4 else b
    k = 3 if len(after) == 4 else len(after)
    fresh = [(s + c, e + c) for s, e in _cover_range(rx, text[c:end], 0, end - c)]
    return fresh[:k] == after[:k]


def _boundary(
    text: str,
    start: int,
    target: int,
    limit: int,
    split: tuple[regex.Pattern, regex.Pattern | None],
    for_chunks: bool,
) -> int:
    """The first cut ``c >= target`` that is a pre-token boundary of ``split`` (``limit`` if none up to it).

    ``start`` must be a boundary of the whole text's pre-tokenization (0 or an
    earlier result): the pre-tokens are re-matched from there, which gives
    exactly the whole text's pre-tokens because matching restarts at every
    boundary.  A special token's start and end are boundaries; a cut never
    falls inside one.  ``for_chunks``: ``c`` must also not fall inside a
    whitespace-separated word, and need not be the first (see :func:`_inner_boundary`).
    """
    n = len(text)
    limit = min(limit, n)
    rx, special_rx = split
    specials = special_rx.finditer(text, start) if special_rx is not None else iter(())
    pos = start
    while True:
        m = next(specials, None)
        seg_end = n if m is None else m.start()
        if seg_end >= target:  # the ordinary segment [pos, seg_end) reaches the target
            if pos > limit:
                return limit
            if pos >= target and (not for_chunks or _between_words(text, pos)):
                return pos
            c = _inner_boundary(text, pos, seg_end, max(target, pos + 1), limit, rx, for_chunks)
            if c is not None:
                return c
            if seg_end >= limit:
                return limit
        if m is None:
            return n
        pos = m.end()  # past the special token


def _shared_boundary(
    text: str,
    start: int,
    target: int,
    limit: int,
    splits: Sequence[tuple[regex.Pattern, regex.Pattern | None]],
    for_chunks: bool = False,
) -> int:
    """A cut ``c >= target`` that is a boundary of every split (the first, unless ``for_chunks``), or ``limit``."""
    c = target
    while True:
        hi = max(_boundary(text, start, c, limit, split, for_chunks) for split in splits)
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


def _cover_range(rx: regex.Pattern, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of the pattern's matches in ``text[start:end]``, plus the gaps between them.

    Offsets are into ``text``; the slice is never copied (``regex``'s ``pos``/``endpos``).  A pattern of
    :data:`TIKTOKEN_SOURCES` is matched as tiktoken's engine matches it (:func:`exact_for`); a custom one
    within :func:`pattern_budget`.

    Raises:
        ValueError: a custom pattern ran out of its time budget.
    """
    pos = start
    if _tiktoken_twin(rx.pattern) is not None and exact_for(rx, text) is not rx:  # text holds disputed characters
        rx = exact_for(rx, text[start:end])
    budget = None if rx.pattern in _NAMED_SOURCES else pattern_budget(end - start)
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
        raise _timed_out(rx, end - start) from None
    if pos < end:
        yield pos, end
