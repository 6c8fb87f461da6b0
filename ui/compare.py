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
:class:`~bpe_core.production.encodings.EncodingUnavailable`; the page then shows that
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
from bpe_core.analysis.metrics import TextMetrics, byte_lengths, words_split_differently
from bpe_core.analysis.metrics import measure as measure_metrics
from bpe_core.interface import Tokenizer, TrainedTokenizer, TrainingSpec, algorithm_label
from bpe_core.pretokenize import shared_pretoken_prefix, tokenizer_split
from bpe_core.production.encodings import EncodingUnavailable
from bpe_core.production.registry import DEFAULT_PRODUCTION, PRODUCTION, load_production, production_families
from bpe_core.spans import TokenSpan
from ui import live_view, render
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.charts import CompressionCurve, CompressionPoint
from ui.inputs import Settings
from ui.safe_text import md
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
        follows: for a trained tokenizer shown at the slider's size, a key
            that names its column whatever the size (``"bpe"``,
            ``"bpe:cl100k"``): its live view redraws in the browser as the
            slider moves (:func:`draw_views`); ``None`` for every other column.
        name: the label without the size (a following column's title before its live size).
    """

    tokenizer: Tokenizer
    label: str
    cache_key: str
    full: TrainedTokenizer | None = None
    kind: str = "trained"
    tag: str | None = None
    follows: str | None = None
    name: str = ""


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
    family: str = ""


@dataclass(frozen=True)
class Column:
    """An entry after building: the tokenizer, or why there is none.

    Attributes:
        entry: what was built.
        built: the tokenizer ready to compare, or ``None``.
        error: why there is none (one line), or ``None``.
        unavailable: the :class:`~bpe_core.production.encodings.EncodingUnavailable` of a
            production encoding that cannot be had offline (its ``details`` and
            ``how_to_add`` go in :func:`unavailable_notice`'s fold), else ``None``.
    """

    entry: Entry
    built: Built | None
    error: str | None = None
    unavailable: EncodingUnavailable | None = None


YOUR_OWN = "Your own"
"""The picker's family of the tokenizers trained on the sidebar's text (one per registered algorithm)."""

REGISTRY: dict[str, Entry] = {}
"""The tokenizers the picker offers, in display order: each algorithm's, then :data:`bpe_core.production.PRODUCTION`."""

DEFAULT_PICK = ("bpe", *DEFAULT_PRODUCTION)
"""Keys selected when the page opens: the trained BPE, GPT-2 and cl100k."""


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


def _built(settings: Settings, spec: TrainingSpec, view_size: int | None, follows: str | None = None) -> Built:
    """The column of a tokenizer trained with ``spec`` on the sidebar's text, at ``view_size`` (``None``: full).

    ``follows``: the column's key when ``view_size`` is the slider's (see :attr:`Built.follows`).
    """
    full, imported = trained(settings, spec)
    lo, hi = full.min_vocab_size, full.max_vocab_size
    n = hi if view_size is None else min(max(view_size, lo), hi)
    curve = full if view_of(full.algorithm).compare_curve else None
    key = view_key(settings.text, spec, imported, n)
    follows = follows if view_size is not None else None
    return Built(full.with_vocab_size(n), f"{full.name} · {n:,}", key, curve, "trained", None, follows, full.name)


def _trained_entry(algorithm: str) -> Entry:
    """The column of ``algorithm`` trained on the sidebar's text (at the slider's size when it is the sidebar's)."""

    def build(settings: Settings, size: int | None) -> Built:
        shown = size if is_sidebars(settings, algorithm) else None
        return _built(settings, compared_spec(settings, algorithm), shown, algorithm)

    return Entry(algorithm, f"{view_of(algorithm).short} trained on your text", "trained", build, YOUR_OWN)


def production_entry(key: str) -> Entry:
    """The column of the production tokenizer ``key`` of :data:`bpe_core.production.PRODUCTION` (loaded offline).

    Its ``build`` raises :class:`~bpe_core.production.encodings.EncodingUnavailable` when
    the encoding's files cannot be had (see :func:`build_columns`).
    """
    spec = PRODUCTION[key]

    def build(_settings: Settings, _size: int | None) -> Built:
        tok = load_production(key)
        return Built(tok, tok.name, f"prod|{key}", None, "reference", tag=key)

    return Entry(key, spec.label, "reference", build, spec.family)


for _algorithm in algorithm_names():
    register(_trained_entry(_algorithm))
for _key in PRODUCTION:
    register(production_entry(_key))


def picker_groups() -> dict[str, list[str]]:
    """``{family: [registry key, ...]}`` in the picker's order: :data:`YOUR_OWN` first, then each production family.

    Nothing is loaded or trained.  An entry registered without a family (a
    test's extra) joins :data:`YOUR_OWN` when trained, ``"Other"`` otherwise.
    """
    groups: dict[str, list[str]] = {YOUR_OWN: []}
    for family in production_families():
        groups[family] = []
    for key, entry in REGISTRY.items():
        family = entry.family or (YOUR_OWN if entry.kind == "trained" else "Other")
        groups.setdefault(family, []).append(key)
    return {f: keys for f, keys in groups.items() if keys}


def picked_keys() -> list[str]:
    """The Compare picker's choice (registry keys, registry order): the link's or the session's, else the default."""
    chosen = st.session_state.get(sk.COMPARE_TOKENIZERS)
    if chosen is None:
        chosen = DEFAULT_PICK
    return [k for k in REGISTRY if k in chosen]


def _sync_picks() -> None:
    """``on_change`` of the family pills: their union becomes the choice (before the link is written)."""
    out: list[str] = []
    for family in picker_groups():
        out += st.session_state.get(sk.compare_family_key(family)) or []
    st.session_state[sk.COMPARE_TOKENIZERS] = [k for k in REGISTRY if k in out]


def tokenizer_picker() -> list[str]:
    """The tokenizer picker, pills per family (:func:`picker_groups`), three families a row; returns the chosen keys.

    The choice lives in ``st.session_state[COMPARE_TOKENIZERS]`` (what the
    link's ``cmp`` parameter reads and writes, :mod:`ui.links`); each family's
    pills are drawn from it, and a click writes the union back in the pills'
    ``on_change``, before the next run writes the link.
    """
    chosen = picked_keys()
    st.session_state[sk.COMPARE_TOKENIZERS] = chosen
    groups = list(picker_groups().items())
    for row in range(0, len(groups), PICKER_FAMILIES_PER_ROW):
        shown = groups[row : row + PICKER_FAMILIES_PER_ROW]
        widths = [max(len(family), sum(len(_pill_label(k)) + 6 for k in keys)) for family, keys in shown]
        widths += [min(widths)] * (PICKER_FAMILIES_PER_ROW - len(shown))  # a short last row keeps the grid
        for col, (family, keys) in zip(st.columns(widths, gap="small"), shown):
            wkey = sk.compare_family_key(family)
            if wkey not in st.session_state or list(st.session_state[wkey] or []) != [k for k in chosen if k in keys]:
                st.session_state[wkey] = [k for k in chosen if k in keys]
            with col:
                st.pills(
                    family,
                    keys,
                    selection_mode="multi",
                    format_func=_pill_label,
                    key=wkey,
                    wrap=True,
                    on_change=_sync_picks,
                    help=_family_help(family, keys),
                )
    return picked_keys()


PICKER_FAMILIES_PER_ROW = 3
"""Families side by side in the picker: nine (yours and eight production families) make three rows of three, each
wide enough for its pills' labels at 1280 px (one row of nine squeezed "Meta" and "Google" to a letter a line)."""


def _pill_label(key: str) -> str:
    """A pill's text: the entry's label; a trained entry's without "trained on your text" (its family says so)."""
    entry = REGISTRY[key]
    return entry.label.removesuffix(" trained on your text") if entry.kind == "trained" else entry.label


def _family_help(family: str, keys: Sequence[str]) -> str:
    if family == YOUR_OWN:
        return "Tokenizers trained on the sidebar's text (the sidebar's own at the slider's size)."
    lines = [f"{PRODUCTION[k].label}: {PRODUCTION[k].origin}" for k in keys if k in PRODUCTION and PRODUCTION[k].origin]
    return "Loaded offline from verified files. " + " · ".join(lines)


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
        return _built(settings, spec, shown, f"{VARIANTS}:{pattern}" if size is None else None)

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
            out.append(Column(entry, None, str(exc), exc))
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


def unavailable_notice(problems: Sequence[EncodingUnavailable]) -> None:
    """Say once, in one line, which production encodings cannot be had offline; how to add them in one fold.

    Args:
        problems: the :class:`~bpe_core.production.encodings.EncodingUnavailable` of each
            (duplicates by message are said once).  Nothing is drawn when empty.
    """
    unique = list({str(exc): exc for exc in problems}.values())
    if not unique:
        return
    st.warning(" · ".join(md(exc) for exc in unique), icon=":material/cloud_off:")
    with st.expander("How to add it"):
        for exc in unique:
            st.markdown(f"**{md(exc)}.** {exc.how_to_add or 'Its files are not installed.'}")
            if exc.details:
                st.text(exc.details)


def column_problems(columns: Sequence[Column]) -> None:
    """The page's notes on the columns that could not be built: unavailable encodings in one line, others one each."""
    for c in columns:
        if c.error and c.unavailable is None:
            st.warning(f"**{md(c.entry.label)}** is not shown: {md(c.error)}", icon=":material/warning:")
    unavailable_notice([c.unavailable for c in columns if c.unavailable is not None])


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
    """:func:`~bpe_core.analysis.metrics.byte_lengths` of a byte-level tokenizer's vocabulary (cached by key).

    Reads ``vocab`` (``{id: bytes}``), which the byte-level tokenizers here
    (trained BPE, the references) have but :class:`~bpe_core.interface.Tokenizer`
    does not declare.
    """
    return byte_lengths(_tok.vocab)


@st.cache_data(max_entries=64, show_spinner=False)
def measure(cache_key: str, text: str, _built: Built) -> TextMetrics:
    """:func:`bpe_core.analysis.metrics.measure` of ``text`` under a built tokenizer (cached by key and text).

    The engine picks the path by :attr:`~bpe_core.interface.Tokenizer.is_byte_level`:
    a byte-level tokenizer (trained BPE, the tiktoken-form encodings) is
    measured from its ids (through its fast encoder), any other (WordPiece,
    Mistral v1's SentencePiece) from its spans.  The byte-length table of a
    byte-level vocabulary is kept per tokenizer (:func:`_byte_lengths`).
    """
    tok = _built.tokenizer
    lengths = _byte_lengths(cache_key, tok) if tok.is_byte_level else None
    return measure_metrics(tok, text, MEASURE_CHUNK_CHARS, tokenizer_split(tok), lengths=lengths)


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
    """One row per tokenizer: the figures of :class:`~bpe_core.analysis.metrics.TextMetrics`, for for ``st.dataframe``.

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


@dataclass(frozen=True)
class FigureColumn:
    """One column of :func:`figures_table_html`.

    Attributes:
        key: the frame's column name.
        header: the header shown (wraps at its spaces on narrow screens).
        fmt: ``"text"``, ``"int"`` (thousands separators), ``"2f"`` (two decimals),
            ``"3f"``, ``"pct1"`` / ``"pct2"`` (a percentage given in percent, one or two
            decimals) or ``"share"`` (a fraction shown as a percentage, one decimal).
        help: the header's hover text.
    """

    key: str
    header: str
    fmt: str
    help: str = ""


METRIC_COLUMNS: tuple[FigureColumn, ...] = (
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
)
"""The columns of Compare's figures table (:func:`metrics_frame`), in order."""

TABLE_CSS = """
<style>
.fig-table-wrap { overflow-x: auto; max-width: 100%; }
.fig-table { border-collapse: collapse; width: 100%; font-size: 14px; font-variant-numeric: tabular-nums; }
.fig-table th { font-weight: 600; font-size: 12.5px; line-height: 1.25; text-align: right; vertical-align: bottom;
  padding: 4px 6px; border-bottom: 1px solid rgba(128,128,128,.45); overflow-wrap: normal; }
.fig-table td { text-align: right; padding: 4px 6px; border-bottom: 1px solid rgba(128,128,128,.18);
  white-space: nowrap; }
.fig-table th:first-child, .fig-table td:first-child { text-align: left; white-space: normal; min-width: 7.5em;
  position: sticky; left: 0; background: var(--background-color, #fff); }
.fig-table th[title] { cursor: help; text-decoration: underline dotted rgba(128,128,128,.6); }
@media (max-width: 640px) { .fig-table { font-size: 12.5px; } .fig-table th { font-size: 11.5px; }
  .fig-table th, .fig-table td { padding: 3px 4px; } }
</style>
"""
"""Style of :func:`figures_table_html`: headers wrap, numbers do not; a table wider than the screen scrolls
with the first column pinned (phones)."""


def _cell(value: object, fmt: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
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


def figures_table_html(frame: pd.DataFrame, columns: Sequence[FigureColumn] = METRIC_COLUMNS) -> str:
    """An HTML table of ``frame`` that fits its container: headers wrap, every column stays visible.

    Every cell is HTML-escaped (tokenizer names come from user files too) and
    carries its exact value in ``data-value`` (what the tests read).

    Args:
        frame: one row per tokenizer (:func:`metrics_frame`).
        columns: which columns, in order, and how to show them.

    Returns:
        The style sheet and the table, for ``st.html``.
    """
    head = "".join(
        f'<th title="{html.escape(c.help, quote=True)}">{html.escape(c.header)}</th>'
        if c.help
        else f"<th>{html.escape(c.header)}</th>"
        for c in columns
    )
    rows = []
    for rec in frame.to_dict("records"):
        esc = html.escape
        cells = "".join(
            f'<td data-col="{esc(c.key, quote=True)}" data-value="{esc(str(rec.get(c.key)), quote=True)}">'
            f"{esc(_cell(rec.get(c.key), c.fmt))}</td>"
            for c in columns
        )
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'{TABLE_CSS}<div class="fig-table-wrap"><table class="fig-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


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


VIEW_CSS = """
<style>
.bpe-view .tk { white-space: pre; }
@media (max-width: 640px) { .bpe-view { font-size: 14px; padding: 10px 10px; max-height: 60vh; } }
</style>
"""
"""Compare's additions to :data:`ui.render.CSS`: a token never breaks across lines (only between tokens and at
its own newlines), so a narrow column never shows ``Not|ation``; a longer view on a phone."""


LIVE_GROUP = "compare"
"""The group name shared by Compare's browser slider and its live columns (:mod:`ui.live_view`)."""


def live_slider(tok: TrainedTokenizer) -> int:
    """Compare's vocabulary slider, drawn in the browser: it redraws the live columns while dragged.

    Returns the size the server knows (the shared ``vocab_size``, written when a drag ends).
    """
    return live_view.group_slider(tok, group=LIVE_GROUP, key=sk.COMPARE_LIVE_SLIDER, size_key=sk.VOCAB_SIZE)


def draws_live(tok: Tokenizer, text: str = "") -> bool:
    """Whether Compare draws the sidebar's ``tok`` on ``text`` live in the browser.

    True without "Draw on the server" for an algorithm and text length the live view draws
    (:func:`ui.live_view.supports`).
    """
    return not st.session_state.get(sk.SERVER_VIEW) and live_view.supports(tok, text)


def algorithm_badge(tok: Tokenizer) -> str:
    """The markdown of a column's algorithm badge (``Byte-level BPE``, ``BPE``, ``WordPiece``, ``Unigram ...``).

    The label comes from the tokenizer through the interface
    (:func:`bpe_core.interface.algorithm_label`), never from its class; ``""`` when it says none.
    """
    label = algorithm_label(tok)
    return f":gray-badge[{md(label)}]" if label else ""


def draw_views(
    builts: Sequence[Built],
    text: str,
    metrics: dict[str, TextMetrics],
    *,
    show_whitespace: bool,
    highlight: bool,
    live: bool = False,
    on_training_text: bool = False,
) -> tuple[int, int]:
    """Draw the text under each tokenizer, side by side; returns ``(words split differently, words shown)``.

    With ``highlight``, the tokens of words that the tokenizers do not all cut
    the same way are underlined and the rest dimmed.  Only a prefix of the
    text is drawn (:data:`DRAW_CHARS`); the counts in the headers cover it all.

    With ``live`` (and without ``highlight``, whose marks depend on every
    column), each column that follows the slider (:attr:`Built.follows`) and
    that the live view can draw is a :func:`ui.live_view.group_column` of the
    :data:`LIVE_GROUP` slider: its title, count line and text are redrawn in
    the browser at every slider position.  ``on_training_text``: the text is
    the one those tokenizers were trained on here (their counts then come off
    the training trace).  Every other column is drawn here, as before.
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
                st.markdown(algorithm_badge(b.tokenizer))
                if live and not highlight and b.follows is not None and live_view.supports(b.tokenizer, text):
                    live_view.group_column(
                        b.tokenizer,
                        text,
                        prefix,
                        group=LIVE_GROUP,
                        key=sk.compare_live_key(b.follows),
                        label=b.name,
                        trained_on_text=on_training_text,
                        show_whitespace=show_whitespace,
                        colour_mode=render.session_colour_mode(),
                        max_tokens=DRAW_TOKENS,
                    )
                    continue
                st.markdown(f"**{md(b.label)}**")
                st.caption(f"{m.tokens:,} tokens · {m.bytes_per_token:.2f} bytes/token")
                st.html(
                    render.CSS
                    + VIEW_CSS
                    + render.tokens_html(
                        shown, show_whitespace=show_whitespace, total_tokens=m.tokens, text=prefix, mark=mark
                    )
                )
    return len(differing), n_words
