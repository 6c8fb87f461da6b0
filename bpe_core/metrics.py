"""Compression and coverage figures of a tokenizer on a text.

Every figure is a plain count or ratio, defined here once so that the pages,
the command line and the tests agree on what each number means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from .spans import TokenSpan

_WORD = regex.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class TextMetrics:
    """Figures for one tokenizer on one text.

    Attributes:
        tokens: number of tokens.
        characters: number of characters (Python code points).
        bytes: number of UTF-8 bytes.
        bytes_per_token: ``bytes / tokens`` (0.0 for no tokens); higher = more compression.
        chars_per_token: ``characters / tokens`` (0.0 for no tokens).
        words: whitespace-separated words (runs of non-space characters).
        words_split: words touched by two or more tokens.
        fertility: ``tokens / words``, tokens per word (0.0 for no words).
        distinct_tokens: number of different token ids used.
        vocab_size: the tokenizer's vocabulary size.
        vocab_used: ``distinct_tokens / vocab_size``, share of the vocabulary used.
    """

    tokens: int
    characters: int
    bytes: int
    bytes_per_token: float
    chars_per_token: float
    words: int
    words_split: int
    fertility: float
    distinct_tokens: int
    vocab_size: int
    vocab_used: float


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def compute_metrics(text: str, spans: Sequence[TokenSpan], vocab_size: int) -> TextMetrics:
    """Compute :class:`TextMetrics` from a text and its token spans.

    Args:
        text: the encoded text.
        spans: ``tokenizer.token_spans(text)``.
        vocab_size: ``tokenizer.vocab_size``.

    Returns:
        The metrics.  A word counts as split when more than one token overlaps
        its character range (a token such as ``" the"`` overlaps only ``the``).
    """
    n_tokens = len(spans)
    n_chars = len(text)
    n_bytes = len(text.encode("utf-8", errors="surrogatepass"))
    words = [m.span() for m in _WORD.finditer(text)]
    split = 0
    si = 0
    for ws, we in words:
        # skip tokens that end before the word starts
        while si < n_tokens and spans[si].end <= ws:
            si += 1
        k = si
        touching = 0
        while k < n_tokens and spans[k].start < we:
            if spans[k].end > ws and spans[k].end > spans[k].start:
                touching += 1
                if touching > 1:
                    break
            k += 1
        if touching > 1:
            split += 1
    distinct = len({s.id for s in spans})
    return TextMetrics(
        tokens=n_tokens,
        characters=n_chars,
        bytes=n_bytes,
        bytes_per_token=_ratio(n_bytes, n_tokens),
        chars_per_token=_ratio(n_chars, n_tokens),
        words=len(words),
        words_split=split,
        fertility=_ratio(n_tokens, len(words)),
        distinct_tokens=distinct,
        vocab_size=vocab_size,
        vocab_used=_ratio(distinct, vocab_size),
    )


def basic_counts(text: str, n_tokens: int) -> dict[str, float]:
    """Tokens, characters, bytes and the two ratios, without needing the spans.

    Args:
        text: the text.
        n_tokens: its number of tokens under some tokenizer.

    Returns:
        ``{"tokens", "characters", "bytes", "bytes_per_token", "chars_per_token"}``.
    """
    n_bytes = len(text.encode("utf-8", errors="surrogatepass"))
    return {
        "tokens": n_tokens,
        "characters": len(text),
        "bytes": n_bytes,
        "bytes_per_token": _ratio(n_bytes, n_tokens),
        "chars_per_token": _ratio(len(text), n_tokens),
    }
