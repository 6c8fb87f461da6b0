r"""Split patterns: the named pre-tokenization regexes, and how any pattern is checked and compiled.

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
* ``sentencepiece`` -- a space (or ``▁``) and what follows up to the next one.

A user's own regex is accepted too: :func:`compile_pattern` refuses one that
is invalid, matches the empty string or backtracks catastrophically, and
:func:`pattern_budget` bounds the time any custom pattern may take.
"""

from __future__ import annotations

import time
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
split with :func:`bpe_core.pretokenize.tiktoken_compat.exact_pattern` instead (see that
module), so the same ranks always give tiktoken's ids.  Production encodings
with their own pattern add it with :func:`register_tiktoken_pattern`."""


def register_tiktoken_pattern(source: str) -> None:
    """Declare a pattern source that tiktoken runs (see :data:`TIKTOKEN_SOURCES`)."""
    TIKTOKEN_SOURCES.add(source)
    tiktoken_twin.cache_clear()


@lru_cache(maxsize=64)
def tiktoken_twin(source: str) -> tuple[np.ndarray, regex.Pattern] | None:
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
    twin = tiktoken_twin(rx.pattern)
    if twin is None or text.isascii():
        return rx
    last = _LAST_CHECKED.get(id(twin))
    if last is not None and last[0] is text:
        return last[1]
    out = twin[1] if _holds_any(text, twin[0]) else rx
    _LAST_CHECKED[id(twin)] = (text, out)  # boundary scans ask again and again about one long text
    return out


_LAST_CHECKED: dict[int, tuple[str, regex.Pattern]] = {}
"""Per twin (:func:`tiktoken_twin`, by identity): ``(text, answer)`` of the last :func:`exact_for` call on a
non-ASCII text (the text held by identity).  One entry per twin: Compare's boundary scans ask about one long
text under several tiktoken patterns in turn, and a single shared entry made each ask scan the text again."""


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
    if source not in NAMED_SOURCES:
        _probe_backtracking(compiled)
    return compiled


_PROBES = (*(c * 32 for c in "aA1 .\n"), "ab" * 16, "a1 " * 11, "Aa. " * 8, "\u00e9\u4e2d" * 16)
"""Short texts a custom pattern must split quickly (:func:`_probe_backtracking`)."""

PROBE_SECONDS = 0.1
"""CPU time a custom pattern may take on each probe text before it is refused (seconds)."""

PROBE_TRIES = 20
"""Tries of a probe that ran out of time without using the CPU (its thread was kept waiting), before the pattern
is refused anyway: :data:`PROBE_SECONDS` of waiting each, 2 s in all."""


def _probe_backtracking(rx: regex.Pattern) -> None:
    """Refuse a pattern that backtracks catastrophically on a short probe text (``ValueError``)."""
    for probe in _PROBES:
        if not _splits_in_time(rx, probe):
            raise ValueError(
                f"invalid pattern: it takes more than {PROBE_SECONDS:g} s to split the {len(probe)}-character text "
                f"{probe[:12]!r}…: it backtracks catastrophically (nested or overlapping repeats such as (a|a)+); "
                "simplify it"
            )


def _splits_in_time(rx: regex.Pattern, probe: str) -> bool:
    """Whether ``rx`` splits ``probe`` within :data:`PROBE_SECONDS` of this thread's CPU time.

    The ``regex`` module's timeout counts wall time, and by default ``regex`` gives up the GIL between matches:
    on a busy server another thread can hold the GIL for longer than the timeout (a long C call: a sort, a
    decode), and a production pattern (Qwen 3.5's, loaded by the warm-up beside a training) was refused
    without having matched at all.  So the probe keeps the GIL while it matches, and a timeout counts only when
    the thread used at least half of it on the CPU (a thread the system kept waiting tries again,
    :data:`PROBE_TRIES` times).
    """
    used = 0.0
    for _ in range(PROBE_TRIES):
        start = time.thread_time()
        try:
            rx.findall(probe, concurrent=False, timeout=PROBE_SECONDS)  # holding the GIL: no wait inside
            return True
        except TimeoutError:
            used += time.thread_time() - start
            if used >= PROBE_SECONDS / 2:
                return False
    return False


def pattern_budget(n_chars: int) -> float:
    """Seconds a custom pattern may take to split ``n_chars`` characters: 1 s plus 5 microseconds a character.

    The named patterns split text at well under a microsecond a character;
    a user's pattern that needs more than this budget backtracks
    catastrophically and is stopped (:func:`iter_pretoken_strings`,
    :func:`pretokenize`), so that no text or link can pin a server thread.
    """
    return 1.0 + n_chars * 5e-6


def pattern_timeout(rx: regex.Pattern, n_chars: int) -> ValueError:
    """The ``ValueError`` to raise when ``rx`` ran out of :func:`pattern_budget` on ``n_chars`` characters."""
    return ValueError(
        f"the split pattern took more than {pattern_budget(n_chars):.1f} s on {n_chars:,} characters and was "
        "stopped: it backtracks catastrophically (nested or overlapping repeats such as (a|a)+); simplify it"
    )


NAMED_SOURCES = frozenset(PATTERNS.values()) | {GPT2_ORIGINAL_PATTERN}
"""The sources of the named patterns: trusted, never probed or timed (see :func:`compile_pattern`)."""


def splits_at_spaces(source: str) -> bool:
    """Whether no pre-token of a pattern runs across a space that follows a non-space character.

    True of every named pattern but ``none`` (whose pre-tokens are whole
    lines) and of the tiktoken-style patterns of :data:`TIKTOKEN_SOURCES`: a
    space only ever *starts* a pre-token there, and nothing looks behind.  Such
    a space is where corpus figures cut a text into units
    (:mod:`bpe_core.analysis.corpus`); a custom regex is not assumed to.
    """
    return (source in NAMED_SOURCES and source != LINES_PATTERN) or source in TIKTOKEN_SOURCES
