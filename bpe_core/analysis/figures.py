"""The Compare figures table, defined once: its columns, its rows, how each cell is written.

The Compare page (:func:`ui.compare.metrics_frame`, drawn by :func:`ui.figures_table.figures_table_html`)
and the command line (``python -m bpe_core compare``) both build their table from :data:`COMPARE_COLUMNS`
and :func:`figure_rows`, so they show the same columns with the same numbers.

>>> from bpe_core import train_bpe
>>> from bpe_core.analysis.metrics import compute_metrics
>>> tok = train_bpe("low lower lowest " * 20, 270)
>>> m = compute_metrics("lower lowest", tok.token_spans("lower lowest"), tok.vocab_size)
>>> row = figure_rows([("mine", m)])[0]
>>> (row["Tokenizer"], row["Tokens"], format_cell(row["Bytes/token"], "2f"))
('mine', 4, '3.00')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .metrics import TextMetrics

__all__ = ["COMPARE_COLUMNS", "FigureColumn", "figure_rows", "format_cell"]


@dataclass(frozen=True)
class FigureColumn:
    """One column of a figures table.

    Attributes:
        key: the row's key (a ``pandas.DataFrame`` column name; CSV/JSON field name).
        header: the header shown (wraps at its spaces on narrow screens).
        fmt: ``"text"``, ``"int"`` (thousands separators), ``"2f"`` (two decimals),
            ``"3f"``, ``"pct1"`` / ``"pct2"`` (a percentage given in percent, one or two
            decimals), ``"share"`` (a fraction shown as a percentage, one decimal) or
            ``"token"`` (a token's printable form; the app draws it left-aligned in its own direction).
        help: the header's hover text.
    """

    key: str
    header: str
    fmt: str
    help: str = ""


COMPARE_COLUMNS: tuple[FigureColumn, ...] = (
    FigureColumn("Tokenizer", "Tokenizer", "text"),
    FigureColumn("Vocab size", "Vocab size", "int", "Token ids it can emit"),
    FigureColumn("Tokens", "Tokens", "int", "Tokens for the whole text"),
    FigureColumn("Tokens vs first", "× first", "2f", "Tokens divided by the first row's tokens"),
    FigureColumn("Bytes/token", "Bytes / token", "2f", "UTF-8 bytes per token: higher = more compression"),
    FigureColumn("Chars/token", "Chars / token", "2f", "Characters per token"),
    FigureColumn("Tokens/word", "Tokens / word", "2f", "Fertility: tokens per whitespace-separated word"),
    FigureColumn("Words split", "Words split", "int", "Whitespace-separated words cut into two or more tokens"),
    FigureColumn("Words split %", "Split %", "pct1", "Share of words split"),
    FigureColumn("Distinct tokens", "Distinct tokens", "int", "Different token ids used in this text"),
    FigureColumn("Vocab used %", "Vocab used", "pct2", "Distinct tokens as a share of the vocabulary"),
    FigureColumn("Special tokens", "Special tokens", "int", "Special tokens (such as <|endoftext|>) in the text"),
    FigureColumn(
        "Unknown",
        "Unknown",
        "int",
        "Words replaced by an unknown token ([UNK]): WordPiece cannot spell them. "
        "Byte-level BPE and byte fallback never need one.",
    ),
    FigureColumn(
        "Byte fallback",
        "Byte fallback",
        "int",
        "Byte tokens (<0xE3>) spelling characters the vocabulary lacks (SentencePiece-style byte fallback); "
        "always 0 for byte-level BPE.",
    ),
)
"""The columns of Compare's figures table (:func:`figure_rows`' keys), in order."""


def figure_rows(measured: Sequence[tuple[str, TextMetrics]]) -> list[dict[str, object]]:
    """One row per tokenizer, keyed by :data:`COMPARE_COLUMNS`' keys, from its figures.

    Args:
        measured: ``(label, TextMetrics of the whole text)`` per tokenizer, in table order.

    Returns:
        ``[{column key: value}]``: ints for counts, floats for ratios; percentages in percent
        (``"Words split %"``, ``"Vocab used %"``); ``"Tokens vs first"`` is each row's tokens over the
        first row's (0.0 when the first has none).
    """
    rows: list[dict[str, object]] = []
    first = measured[0][1].tokens if measured else 0
    for label, m in measured:
        rows.append(
            {
                "Tokenizer": label,
                "Vocab size": m.vocab_size,
                "Tokens": m.tokens,
                "Tokens vs first": m.tokens / first if first else 0.0,
                "Bytes/token": m.bytes_per_token,
                "Chars/token": m.chars_per_token,
                "Tokens/word": m.fertility,
                "Words split": m.words_split,
                "Words split %": 100 * m.words_split_share,
                "Distinct tokens": m.distinct_tokens,
                "Vocab used %": 100 * m.vocab_used,
                "Special tokens": m.special_tokens,
                "Unknown": m.unknown_tokens,
                "Byte fallback": m.byte_fallback_tokens,
            }
        )
    return rows


def format_cell(value: object, fmt: str) -> str:
    """A cell as the table shows it (``fmt`` of :class:`FigureColumn`); ``""`` for ``None`` or NaN.

    >>> format_cell(1234567, "int"), format_cell(12.345, "pct1"), format_cell(0.1234, "share")
    ('1,234,567', '12.3%', '12.3%')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if fmt == "int":
        return f"{int(value):,}"
    if fmt in ("2f", "3f"):
        return f"{float(value):.{fmt[0]}f}"
    if fmt == "pct1":
        return f"{float(value):.1f}%"
    if fmt == "pct2":
        return f"{float(value):.2f}%"
    if fmt == "share":
        return f"{100 * float(value):.1f}%"
    return str(value)
