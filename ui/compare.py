"""The Compare page's helpers: which tokenizers can be compared, building them, measuring, drawing.

The tokenizers the page offers form a small registry, :data:`REGISTRY`.  An
:class:`Entry` has a key, a label, a kind (``"trained"`` or ``"reference"``)
and a ``build(settings, vocab_size)`` function that returns a :class:`Built`:
the tokenizer (a :class:`bpe_core.interface.Tokenizer`), its column label and
a cache key (:func:`ui.training.view_key`).  Adding a tokenizer is one
:func:`register` call; every algorithm of :data:`bpe_core.interface.ALGORITHMS`
gets one (:func:`_trained_entry`), each reference encoding another.

The trained tokenizer of the sidebar's algorithm is shown at the Playground
slider's size; another algorithm is trained with its own defaults
(:meth:`ui.algorithms.AlgorithmView.compare_spec`) and shown at its full size.

``build`` may raise ``ValueError``/``TypeError`` (bad input) or
:class:`~bpe_core.reference.EncodingUnavailable`; the page then shows that
message in place of the tokenizer and everything else as usual.

After the user cancels the sidebar's training the page goes on with the
session's previous tokenizer and its settings, as every page does
(:func:`ui.view.previous_if_cancelled`, called once at the top of the page);
without a previous tokenizer the sidebar's column says that training was
cancelled, the reference columns are shown as usual, and no other tokenizer
is trained on the cancelled text (see :func:`_train_extra`).

Special tokens are treated the same way by every column: each tokenizer
encodes the special-token strings of its own vocabulary as one special token
wherever they occur (tiktoken's ``allowed_special="all"``; the trained BPE's
special tokens are the sidebar's), and any other text as ordinary text.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
import streamlit as st

from bpe_core import algorithm_names
from bpe_core.interface import Tokenizer, TrainedTokenizer, TrainingSpec
from bpe_core.metrics import (
    TextMetrics,
    byte_lengths,
    byte_level_metrics_chunked,
    compute_metrics_chunked,
    words_split_differently,
)
from bpe_core.pretokenize import shared_pretoken_prefix, tokenizer_split
from bpe_core.reference import ENCODINGS, EncodingUnavailable, load_reference
from bpe_core.spans import TokenSpan
from ui import render
from ui.algorithms import view_of
from ui.charts import CompressionCurve, CompressionPoint
from ui.inputs import Settings
from ui.training import CancelledInThisSession, cached, cancel_applies, for_settings, train, training_key, view_key

DRAW_CHARS = 4_000
"""Each coloured view draws at most this many characters of the text (the figures cover all of it)."""

DRAW_TOKENS = 5_000
"""... and at most this many tokens."""

FAST_ENCODE_CHARS = 100_000
"""Texts longer than this (characters) are encoded by the tokenizer's ``fast_encoder()`` when it has one."""

CURVE_POINTS = 24
"""Vocabulary sizes measured for a compression curve on a text other than the training text."""

MEASURE_CHUNK_CHARS = 500_000
"""A long text is measured this many characters at a time (cut at pre-token boundaries, so the counts are exact)."""

CURVE_MAX_CHARS = 1_000_000
"""A compression curve on another text is measured on at most this many of its characters."""

CURVE_MAX_POINTS = 1_500
"""A curve read from the training trace is thinned to about this many points for drawing."""


@dataclass(frozen=True)
class Built:
    """A tokenizer ready to compare.

    Attributes:
        tokenizer: any object with the common interface (``encode``, ``decode``,
            ``token_spans``, ``vocab_size``, ``name``).
        label: the column's title, such as ``"BPE (gpt2) · 1,000"``.
        cache_key: identifies the tokenizer's exact state (text trained on,
            parameters, size), for the figures' caches.
        full: for a trained tokenizer whose trace gives the compression curve
            (:attr:`ui.algorithms.AlgorithmView.compare_curve`), the tokenizer
            at its full trained size; ``None`` otherwise.
        kind: ``"trained"`` or ``"reference"``.
        tag: the compression chart's marker text for a single tokenizer (a
            reference encoding's name); ``None``: the label.
    """

    tokenizer: Tokenizer
    label: str
    cache_key: str
    full: TrainedTokenizer | None = None
    kind: str = "trained"
    tag: str | None = None


@dataclass(frozen=True)
class Entry:
    """One tokenizer the page can offer.

    Attributes:
        key: stable identifier (widget values use it).
        label: the name in the picker.
        kind: ``"trained"`` or ``"reference"``.
        build: ``build(settings, vocab_size) -> Built``; ``vocab_size`` is the
            Playground slider's value (``None`` when there is no trained BPE).
            May raise ``ValueError``, ``TypeError`` or ``EncodingUnavailable``.
    """

    key: str
    label: str
    kind: str
    build: Callable[[Settings, int | None], Built]


@dataclass(frozen=True)
class Column:
    """An entry after building: the tokenizer, or why there is none."""

    entry: Entry
    built: Built | None
    error: str | None = None


REGISTRY: dict[str, Entry] = {}
"""The tokenizers the picker offers, in display order."""

DEFAULT_PICK = ("bpe", "gpt2", "cl100k_base")
"""Keys selected when the page opens."""


def register(entry: Entry) -> Entry:
    """Add (or replace) a tokenizer in :data:`REGISTRY`; returns it."""
    REGISTRY[entry.key] = entry
    return entry


VARIANTS = "bpe"
"""The algorithm of the page's variants ("BPE with other patterns", "BPE at other vocabulary sizes")."""


def is_sidebars(settings: Settings, algorithm: str) -> bool:
    """Whether the sidebar trains (or imported) a tokenizer of ``algorithm``: the page then shows the sidebar's own.

    The one comparison of algorithm names on the page: which column is the
    sidebar's tokenizer (shown at the slider's size) and which is trained
    with its algorithm's defaults for comparison (:meth:`ui.algorithms.AlgorithmView.compare_spec`).
    """
    return settings.spec.algorithm == algorithm  # kind switch: the sidebar's column vs one trained for comparison


def sidebar_tokenizer(settings: Settings) -> TrainedTokenizer:
    """The sidebar's tokenizer -- the Playground's, the same cached object, so the slider is shared.

    Raises:
        ValueError, TypeError: from the engine (bad vocabulary size, special tokens, text).
    """
    return for_settings(settings)


def compared_spec(settings: Settings, algorithm: str) -> TrainingSpec:
    """The spec of the page's ``algorithm`` column: the sidebar's, or that algorithm's defaults for comparison."""
    if is_sidebars(settings, algorithm):
        return settings.spec
    return view_of(algorithm).compare_spec(settings.spec)


def trained(settings: Settings, spec: TrainingSpec) -> tuple[TrainedTokenizer, str | None]:
    """A tokenizer trained on the sidebar's text with ``spec`` (cached), and the imported key it stands for.

    The sidebar's own tokenizer (trained, or imported from a file) when
    ``spec`` is the sidebar's; any other spec is trained with
    :func:`_train_extra`.

    Returns:
        ``(tokenizer at its full size, settings.imported or None)``.

    Raises:
        CancelledInThisSession, ValueError, TypeError: as :func:`_train_extra`.
    """
    if spec == settings.spec:
        return sidebar_tokenizer(settings), settings.imported
    return _train_extra(settings, spec), None


def trained_bpe(settings: Settings, pattern: str | None = None, train_size: int | None = None) -> TrainedTokenizer:
    """The BPE trained on the sidebar's text (cached; the Playground's tokenizer for the default arguments).

    Args:
        settings: the sidebar settings.
        pattern: pattern name (default: :func:`compared_spec`'s).
        train_size: vocabulary size to train to (default: :func:`compared_spec`'s).

    Raises:
        ValueError, TypeError: from the engine (bad vocabulary size, special tokens, text).
    """
    spec = compared_spec(settings, VARIANTS)
    spec = spec.replace(pattern=pattern or spec.pattern, vocab_size=train_size or spec.vocab_size)
    return trained(settings, spec)[0]


def _train_extra(settings: Settings, spec: TrainingSpec) -> TrainedTokenizer:
    """A tokenizer other than the sidebar's trained on the sidebar's text: a BPE variant, or another algorithm.

    After the user cancels the sidebar's training, the page first calls
    :func:`ui.view.previous_if_cancelled`: with a previous tokenizer in the
    session, ``settings`` become the previous tokenizer's, so these extras are
    trained on the previous text -- the page shows what it showed before the
    user changed the settings, and every column, count and curve describes the
    same text.  Without one, ``settings`` stay the cancelled ones, and their
    text is the one whose training the user just stopped, most likely because
    it took too long: Compare (which has no Cancel button) does not start
    another long training on it, so an extra not already trained is skipped
    and its column says so in one line.

    Args:
        settings: the sidebar settings (their text is trained on).
        spec: how to train it.

    Returns:
        The tokenizer at its full trained size (cached).

    Raises:
        ui.training.CancelledInThisSession: skipped after a Cancel, as above.
        ValueError, TypeError: from the engine (bad vocabulary size, special tokens, text).
    """
    if cancel_applies(settings) and cached(training_key(settings.text, spec)) is None:
        raise CancelledInThisSession("not trained, since training on this text was cancelled")
    return train(settings.text, spec)


def _built(settings: Settings, spec: TrainingSpec, view_size: int | None) -> Built:
    """The column of a tokenizer trained with ``spec`` on the sidebar's text, at ``view_size`` (``None``: full)."""
    full, imported = trained(settings, spec)
    lo, hi = full.min_vocab_size, full.max_vocab_size
    n = hi if view_size is None else min(max(view_size, lo), hi)
    curve = full if view_of(full.algorithm).compare_curve else None
    key = view_key(settings.text, spec, imported, n)
    return Built(full.with_vocab_size(n), f"{full.name} · {n:,}", key, curve, "trained")


def _trained_entry(algorithm: str) -> Entry:
    """The column of ``algorithm`` trained on the sidebar's text (at the slider's size when it is the sidebar's)."""

    def build(settings: Settings, size: int | None) -> Built:
        shown = size if is_sidebars(settings, algorithm) else None
        return _built(settings, compared_spec(settings, algorithm), shown)

    return Entry(algorithm, f"{view_of(algorithm).short} trained on your text", "trained", build)


def _reference_entry(name: str) -> Entry:
    label = ENCODINGS[name].label

    def build(_settings: Settings, _size: int | None) -> Built:
        ref = load_reference(name)
        return Built(ref, ref.name, f"ref|{name}|{ref.source}", None, "reference", tag=name)

    return Entry(name, label, "reference", build)


for _algorithm in algorithm_names():
    register(_trained_entry(_algorithm))
for _name in ENCODINGS:
    register(_reference_entry(_name))


def uses_slider(settings: Settings, picked: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether a picked tokenizer is shown at the slider's size (the sidebar's algorithm, or BPE variants of it)."""
    return settings.spec.algorithm in picked or (is_sidebars(settings, VARIANTS) and bool(patterns))


def bpe_variant(pattern: str, size: int | None) -> Entry:
    """An extra BPE trained on the sidebar's text with another pattern and/or vocabulary size.

    Args:
        pattern: a pattern name of :data:`bpe_core.pretokenize.PATTERNS`.
        size: the vocabulary size to show; ``None`` = the slider's size (the
            full trained size while the sidebar trains WordPiece).  A size above
            the training size trains further (cached).

    Returns:
        An :class:`Entry` (not registered).
    """

    def build(settings: Settings, slider_size: int | None) -> Built:
        spec = compared_spec(settings, VARIANTS)
        spec = spec.replace(pattern=pattern, vocab_size=max(spec.vocab_size, size or 0))
        shown = size if size is not None else (slider_size if is_sidebars(settings, VARIANTS) else None)
        return _built(settings, spec, shown)

    shown = f"{size:,}" if size is not None else "slider size"
    return Entry(f"bpe:{pattern}:{size}", f"BPE ({pattern}) · {shown}", "trained", build)


def parse_sizes(values: Sequence[str | int], lo: int = 256, hi: int = 100_000) -> tuple[list[int], list[str]]:
    """Vocabulary sizes typed by the user: ``(valid sizes, problems)``.

    Accepts ``1000``, ``"1,000"``, ``"1_000"``, ``"2k"``, ``"1.5k"``; each size must be a whole
    number in ``lo..hi``.  Anything else (``inf``, ``1e400``, ``nan``, ``-1``, ``abc``, a
    2,000-digit number) is a problem (plain text: escape it before Markdown), never an exception.
    """
    sizes: list[int] = []
    problems: list[str] = []
    for v in values:
        shown = str(v) if len(str(v)) <= 40 else str(v)[:40] + "…"
        raw = str(v).strip().lower().replace(",", "").replace("_", "").replace(" ", "")
        m = re.fullmatch(r"([+-]?)(\d+)(?:\.(\d*))?(k?)", raw)
        if m is None:
            problems.append(f"“{shown}” is not a whole number of tokens (e.g. 3000 or 3k)")
            continue
        sign, whole, frac, k = m.groups()
        if len(whole.lstrip("0")) > 12 or len(frac or "") > 12:
            problems.append(f"“{shown}” is far outside {lo:,}..{hi:,}")
            continue
        value = Fraction(f"{sign}{whole}.{frac or 0}") * (1000 if k else 1)
        if value.denominator != 1:
            problems.append(f"“{shown}” is not a whole number of tokens")
            continue
        n = int(value)
        if not lo <= n <= hi:
            problems.append(f"{n:,} is outside {lo:,}..{hi:,}")
            continue
        if n not in sizes:
            sizes.append(n)
    return sizes, problems


def build_columns(entries: Sequence[Entry], settings: Settings, size: int | None) -> list[Column]:
    """Build each entry; an entry that fails keeps its message.  Duplicates (same label) are dropped."""
    out: list[Column] = []
    seen: set[str] = set()
    for entry in entries:
        try:
            built = entry.build(settings, size)
        except EncodingUnavailable as exc:
            out.append(Column(entry, None, str(exc)))
            continue
        except (ValueError, TypeError) as exc:
            out.append(Column(entry, None, f"{type(exc).__name__}: {exc}" if entry.kind == "reference" else str(exc)))
            continue
        # the same label means the same tokenizer (BPE training is deterministic and sizes are prefixes)
        if built.label in seen:
            continue
        seen.add(built.label)
        out.append(Column(entry, built))
    return out


# ---------------------------------------------------------------------------
# measuring


@st.cache_resource(max_entries=48, show_spinner=False)
def _fast_encoder(cache_key: str, _tok: Tokenizer) -> Callable[[str], list[int]] | None:
    """``tok.fast_encoder()``, kept per tokenizer view (building one can take a while)."""
    return _tok.fast_encoder()


def encode_fast(built: Built, text: str) -> list[int]:
    """Token ids of ``text``; a long text goes through the tokenizer's fast encoder when it has one (same ids)."""
    tok = built.tokenizer
    if len(text) > FAST_ENCODE_CHARS:
        fast = _fast_encoder(built.cache_key, tok)
        if fast is not None:
            return fast(text)
    return tok.encode(text)


@st.cache_resource(max_entries=16, show_spinner=False)
def _byte_lengths(cache_key: str, _tok: Tokenizer) -> np.ndarray:
    """:func:`~bpe_core.metrics.byte_lengths` of a byte-level tokenizer's vocabulary (cached by key).

    Reads ``vocab`` (``{id: bytes}``), which the byte-level tokenizers here
    (trained BPE, the references) have but :class:`~bpe_core.interface.Tokenizer`
    does not declare.
    """
    return byte_lengths(_tok.vocab)


@st.cache_data(max_entries=64, show_spinner=False)
def measure(cache_key: str, text: str, _built: Built) -> TextMetrics:
    """The :class:`~bpe_core.metrics.TextMetrics` of ``text`` under a built tokenizer (cached by key and text).

    A byte-level tokenizer (:attr:`~bpe_core.interface.Tokenizer.is_byte_level`:
    trained BPE, the references) is measured from its ids
    (:func:`~bpe_core.metrics.byte_level_metrics_chunked`, through its fast
    encoder on long texts); any other (WordPiece) from its spans.
    """
    tok = _built.tokenizer
    if tok.is_byte_level:
        return byte_level_metrics_chunked(
            text,
            lambda t: encode_fast(_built, t),
            _byte_lengths(cache_key, tok),
            tok.vocab_size,
            frozenset(tok.special_tokens.values()),
            MEASURE_CHUNK_CHARS,
            split=tokenizer_split(tok),
        )
    return compute_metrics_chunked(
        text,
        tok.token_spans,
        tok.vocab_size,
        MEASURE_CHUNK_CHARS,
        tok.unknown_id,
        split=tokenizer_split(tok),
    )


def _sample_sizes(lo: int, hi: int, shown: Sequence[int], n: int = CURVE_POINTS) -> list[int]:
    if hi <= lo:
        return [lo]
    sizes = {round(lo * (hi / lo) ** (i / (n - 1))) for i in range(n)}
    sizes.update(c for c in shown if lo <= c <= hi)
    return sorted(sizes | {lo, hi})


def _thin(sizes: list[int], tokens: list[int], keep: Sequence[int]) -> tuple[list[int], list[int]]:
    """Keep about :data:`CURVE_MAX_POINTS` points, spaced evenly on a log axis, plus ``keep`` and both ends."""
    if len(sizes) <= CURVE_MAX_POINTS:
        return sizes, tokens
    lo, hi = sizes[0], sizes[-1]
    want = {round(lo * (hi / lo) ** (i / (CURVE_MAX_POINTS - 1))) for i in range(CURVE_MAX_POINTS)}
    want.update(keep)
    idx = [i for i, s in enumerate(sizes) if s in want or i in (0, len(sizes) - 1)]
    return [sizes[i] for i in idx], [tokens[i] for i in idx]


@st.cache_data(max_entries=32, show_spinner=False)
def _curve_data(
    full_key: str, text: str, on_training_text: bool, shown: tuple[int, ...], _full: TrainedTokenizer
) -> tuple[list[int], list[int], bool]:
    """``(vocab sizes, token counts, exact at every size)`` of a trained tokenizer on ``text``."""
    lo, hi = _full.min_vocab_size, _full.max_vocab_size
    trace = _full.trace
    info = _full.training
    if on_training_text and info is not None and len(trace) == hi - lo:
        sizes = list(range(lo, hi + 1))
        tokens = [info.initial_tokens] + [s.tokens_after for s in trace]
        sizes, tokens = _thin(sizes, tokens, shown)
        return sizes, tokens, True
    sizes = _sample_sizes(lo, hi, shown)
    counts = []
    for n in sizes:
        view = _full.with_vocab_size(n)
        counts.append(len(encode_fast(Built(view, "", f"{full_key}|{n}", _full), text)))
    return sizes, counts, False


def curve_text(text: str, on_training_text: bool) -> str:
    """The text the compression chart measures: all of it, or a bounded prefix of another long text."""
    if on_training_text:
        return text
    return text[:CURVE_MAX_CHARS]


def compression_data(
    columns: Sequence[Column], text: str, on_training_text: bool, metrics: dict[str, TextMetrics]
) -> tuple[list[CompressionCurve], list[CompressionPoint]]:
    """Curves (one per trained BPE) and points (every other tokenizer) for :func:`ui.charts.compression_curve`.

    Args:
        columns: the built columns.
        text: the compared text.
        on_training_text: ``text`` is the text the BPEs were trained on (curves
            then come exactly from the training traces).
        metrics: ``{cache_key: metrics of the whole text}``.
    """
    measured = curve_text(text, on_training_text)
    n_bytes = len(measured.encode("utf-8", errors="surrogatepass"))
    groups: dict[str, list[Built]] = {}
    points: list[CompressionPoint] = []
    for c in columns:
        b = c.built
        if b is None:
            continue
        if b.full is not None:
            groups.setdefault(b.cache_key.rsplit("|", 1)[0], []).append(b)
        else:
            tokens = metrics[b.cache_key].tokens if measured is text else len(b.tokenizer.encode(measured))
            tag = b.tag or b.label
            points.append(CompressionPoint(b.label, b.tokenizer.vocab_size, tokens, n_bytes, tag))
    curves: list[CompressionCurve] = []
    for full_key, builts in groups.items():
        full = builts[0].full
        shown = tuple(sorted({b.tokenizer.vocab_size for b in builts}))
        sizes, tokens, exact = _curve_data(full_key, measured, on_training_text, shown, full)
        curves.append(CompressionCurve(f"{full.name} on this text", sizes, tokens, n_bytes, shown, exact))
    return curves, points


def curve_caption(curves: Sequence[CompressionCurve], text: str, on_training_text: bool) -> str:
    """One sentence saying how the compression curves were obtained (empty without curves)."""
    if not curves:
        return ""
    if all(c.exact for c in curves):
        how = "read from the training trace at every size (exact, no re-encoding)"
    else:
        how = f"measured at {CURVE_POINTS} sizes"
        measured = curve_text(text, on_training_text)
        if len(measured) < len(text):
            how += f" on the first {len(measured):,} of the text's {len(text):,} characters (so are the diamonds)"
    return f"Trained BPE lines: {how}. A dot marks the size shown above; diamonds are single tokenizers."


def metrics_frame(columns: Sequence[Column], metrics: dict[str, TextMetrics]) -> pd.DataFrame:
    """One row per tokenizer: the figures of :class:`~bpe_core.metrics.TextMetrics`, ready for ``st.dataframe``.

    ``Tokens vs first`` is each row's token count divided by the first row's.
    """
    rows = []
    first: int | None = None
    for c in columns:
        if c.built is None:
            continue
        m = metrics[c.built.cache_key]
        if first is None:
            first = m.tokens
        rows.append(
            {
                "Tokenizer": c.built.label,
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
            }
        )
    return pd.DataFrame(rows)


METRIC_COLUMNS = {
    "Tokenizer": st.column_config.TextColumn("Tokenizer", pinned=True),
    "Vocab size": st.column_config.NumberColumn("Vocab size", format="localized", help="Token ids it can emit"),
    "Tokens": st.column_config.NumberColumn("Tokens", format="localized", help="Tokens for the whole text"),
    "Tokens vs first": st.column_config.NumberColumn(
        "× first", format="%.2f", help="Tokens divided by the first row's tokens"
    ),
    "Bytes/token": st.column_config.NumberColumn(
        "Bytes/token", format="%.2f", help="UTF-8 bytes per token: higher = more compression"
    ),
    "Chars/token": st.column_config.NumberColumn("Chars/token", format="%.2f", help="Characters per token"),
    "Tokens/word": st.column_config.NumberColumn(
        "Tokens/word", format="%.2f", help="Fertility: tokens per whitespace-separated word"
    ),
    "Words split": st.column_config.NumberColumn(
        "Words split", format="localized", help="Whitespace-separated words cut into two or more tokens"
    ),
    "Words split %": st.column_config.NumberColumn("Split %", format="%.1f%%", help="Share of words split"),
    "Distinct tokens": st.column_config.NumberColumn(
        "Distinct", format="localized", help="Different token ids used in this text"
    ),
    "Vocab used %": st.column_config.NumberColumn(
        "Vocab used", format="%.2f%%", help="Distinct tokens as a share of the vocabulary"
    ),
    "Special tokens": st.column_config.NumberColumn(
        "Specials", format="localized", help="Special tokens (such as <|endoftext|>) in the encoded text"
    ),
    "Unknown": st.column_config.NumberColumn(
        "Unknown",
        format="localized",
        help="Words replaced by an unknown token ([UNK]): WordPiece cannot spell them. Byte-level BPE never needs one.",
    ),
}
"""``st.dataframe`` column settings for :func:`metrics_frame`."""


# ---------------------------------------------------------------------------
# special tokens


def _special_strings(tok: Tokenizer) -> list[str]:
    return [str(s) for s in tok.special_tokens]


def special_tokens_note(text: str, columns: Sequence[Column]) -> str:
    """HTML (escaped) saying how the columns treat special-token text, and which special strings the text holds."""
    builts = [c.built for c in columns if c.built is not None]
    lines = [
        "<b>Special tokens:</b> every tokenizer encodes the special-token strings of its own vocabulary "
        "(such as <code>&lt;|endoftext|&gt;</code>) as one special token wherever they occur in the text, "
        'as tiktoken does with <code>allowed_special="all"</code>; the trained BPE\'s special tokens are the '
        "ones set in the sidebar. A string that is not special to a tokenizer is ordinary text to it."
    ]
    found: dict[str, int] = {}
    for b in builts:
        for s in _special_strings(b.tokenizer):
            if s and s not in found:
                n = text.count(s)
                if n:
                    found[s] = n
    for s, n in found.items():
        special_in = [b.label for b in builts if s in _special_strings(b.tokenizer)]
        plain_in = [b.label for b in builts if s not in _special_strings(b.tokenizer)]
        line = (
            f"<code>{html.escape(s)}</code> occurs {n:,}×: one special token for {html.escape(', '.join(special_in))}"
        )
        if plain_in:
            line += f"; ordinary text for {html.escape(', '.join(plain_in))}"
        lines.append(line + ".")
    return '<div class="bpe-legend">' + "<br>".join(lines) + "</div>"


# ---------------------------------------------------------------------------
# the coloured views


def marked_tokens(spans: Sequence[TokenSpan], ranges: Sequence[tuple[int, int]]) -> list[bool]:
    """For each span, whether it overlaps one of the character ``ranges`` (sorted, disjoint)."""
    starts = [r[0] for r in ranges]
    out = []
    for s in spans:
        k = bisect_right(starts, max(s.end - 1, s.start)) - 1
        out.append(k >= 0 and ranges[k][1] > s.start and s.end > s.start)
    return out


def per_row(n: int) -> int:
    """Views per row: all of them up to 3, two rows of 2 for 4, else 3 (Streamlit stacks them on narrow screens)."""
    if n <= 3:
        return max(n, 1)
    return 2 if n == 4 else 3


def draw_views(
    builts: Sequence[Built],
    text: str,
    metrics: dict[str, TextMetrics],
    *,
    show_whitespace: bool,
    highlight: bool,
) -> tuple[int, int]:
    """Draw the text under each tokenizer, side by side; returns ``(words split differently, words shown)``.

    With ``highlight``, the tokens of words that the tokenizers do not all cut
    the same way are underlined and the rest dimmed.  Only a prefix of the
    text is drawn (:data:`DRAW_CHARS`); the counts in the headers cover it all.
    """
    splits = [tokenizer_split(b.tokenizer) for b in builts]
    prefix = shared_pretoken_prefix(text, DRAW_CHARS, splits, slack=3 * DRAW_CHARS)
    spans = [b.tokenizer.token_spans(prefix) for b in builts]
    differing = words_split_differently(prefix, spans) if highlight else []
    n_words = len(prefix.split())
    k = per_row(len(builts))
    for row in range(0, len(builts), k):
        cols = st.columns(k, gap="small")
        for col, b, sp in zip(cols, builts[row : row + k], spans[row : row + k]):
            m = metrics[b.cache_key]
            shown = sp[:DRAW_TOKENS]
            mark = marked_tokens(shown, differing) if highlight else None
            with col:
                st.markdown(f"**{b.label}**")
                st.caption(f"{m.tokens:,} tokens · {m.bytes_per_token:.2f} bytes/token")
                st.html(
                    render.CSS
                    + render.tokens_html(
                        shown, show_whitespace=show_whitespace, total_tokens=m.tokens, text=prefix, mark=mark
                    )
                )
    return len(differing), n_words
