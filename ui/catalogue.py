"""The tokenizer catalogue: every tokenizer a page can compare, how to build it, how to measure it.

Compare, Insights, Encode step by step and the links all take their tokenizers from here.  An
:class:`Entry` has a key, a label, a kind (``"trained"`` or ``"production"``), a family (the
picker's row) and a ``build(settings, vocab_size)`` function that returns a :class:`Built`: the
tokenizer (a :class:`bpe_core.interface.Tokenizer`), its column label and a cache key
(:func:`ui.training.view_key`).  :func:`entries` lists them: one per registered algorithm
(trained on the sidebar's text), one per production tokenizer of
:data:`bpe_core.production.registry.PRODUCTION`, and any :func:`register` added.

The trained tokenizer of the sidebar's algorithm is shown at the Playground
slider's size; another algorithm is trained with its own defaults
(:meth:`ui.algorithms.AlgorithmView.compare_spec`) and shown at its full size.

``build`` may raise ``ValueError``/``TypeError`` (bad input) or
:class:`~bpe_core.production.encodings.EncodingUnavailable`; :func:`build_columns` keeps the
message in place of the tokenizer, and the page shows everything else as usual.

After the user cancels the sidebar's training a page goes on with the
session's previous tokenizer and its settings, as every page does
(:func:`ui.view.previous_if_cancelled`, called once at the top of the page);
without a previous tokenizer the sidebar's column says that training was
cancelled, the production columns are shown as usual, and no other tokenizer
is trained on the cancelled text (see :func:`_train_extra`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st

from bpe_core import algorithm_names
from bpe_core.analysis.corpus import measure_corpus
from bpe_core.analysis.metrics import TextMetrics, byte_lengths
from bpe_core.analysis.metrics import measure as measure_metrics
from bpe_core.interface import ProgressCallback, Tokenizer, TrainedTokenizer, TrainingSpec
from bpe_core.pretokenize import tokenizer_split
from bpe_core.production.encodings import EncodingUnavailable
from bpe_core.production.registry import DEFAULT_PRODUCTION, PRODUCTION, load_production
from ui.algorithms import view_of
from ui.inputs import Settings
from ui.safe_text import md
from ui.training import (
    CancelledInThisSession,
    cached,
    cancel_applies,
    for_settings,
    text_digest,
    train,
    training_key,
    view_key,
)

FAST_ENCODE_CHARS = 100_000
"""Texts longer than this (characters) are encoded by the tokenizer's ``fast_encoder()`` when it has one."""


MEASURE_CHUNK_CHARS = 500_000
"""A long text is measured this many characters at a time (cut at pre-token boundaries, so the counts are exact)."""

CORPUS_MIN_CHARS = 100_000
"""Texts at least this long (characters) are measured by counted distinct pieces
(:func:`bpe_core.analysis.corpus.measure_corpus`: all the tokenizers at once, each encoding each distinct piece once,
with progress and Cancel); shorter ones tokenizer by tokenizer on the whole text (:func:`measure`).  Both give the same
figures (``tests/engine/test_corpus.py``, ``tests/app/test_compare_corpus.py``)."""

METRICS_KEPT = 4_096
"""Figures (one :class:`~bpe_core.analysis.metrics.TextMetrics` per text and tokenizer, a few hundred bytes each)
the process keeps for :func:`measure_all`; the least recently used go first."""


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
        kind: ``"trained"`` or ``"production"``.
        tag: the compression chart's marker text for a single tokenizer (a
            production encoding's name); ``None``: the label.
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
        kind: ``"trained"`` or ``"production"``.
        family: the picker's row it is offered in (``""``: :data:`YOUR_OWN` when trained, else ``"Other"``).
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

_EXTRA: dict[str, Entry] = {}
"""Entries added with :func:`register` (a test's extra tokenizer), after the built-in ones."""


def entries() -> dict[str, Entry]:
    """Every tokenizer the pages offer, ``{key: Entry}`` in display order.

    One per registered algorithm (:func:`bpe_core.algorithm_names`: trained on the sidebar's
    text, keyed by the algorithm's name), one per production tokenizer of
    :data:`bpe_core.production.registry.PRODUCTION` (keyed as there), then the :func:`register`-ed ones.
    Nothing is built, loaded or trained.
    """
    out = {name: _trained_entry(name) for name in algorithm_names()}
    out.update((key, production_entry(key)) for key in PRODUCTION)
    out.update(_EXTRA)
    return out


def register(entry: Entry) -> Entry:
    """Add (or replace) a tokenizer of :func:`entries` (after the built-in ones); returns it."""
    _EXTRA[entry.key] = entry
    return entry


def unregister(key: str) -> None:
    """Remove a tokenizer :func:`register` added."""
    _EXTRA.pop(key, None)


def variants_algorithm() -> str:
    """The algorithm Compare offers with other patterns and sizes (:attr:`ui.algorithms.AlgorithmView.variants`).

    The first registered algorithm whose view says so (byte-level BPE), else the first registered one.
    """
    names = algorithm_names()
    return next((name for name in names if view_of(name).variants), names[0])


def default_pick(algorithm: str | None = None) -> tuple[str, ...]:
    """Keys selected when Compare opens: the sidebar's ``algorithm`` trained on the text, GPT-2 and cl100k.

    Without ``algorithm``: the variants algorithm (BPE).
    """
    return (algorithm or variants_algorithm(), *DEFAULT_PRODUCTION)


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


def trained_variant(settings: Settings, pattern: str | None = None, train_size: int | None = None) -> TrainedTokenizer:
    """The variants algorithm's tokenizer (BPE) trained on the sidebar's text (cached; the Playground's by default).

    Args:
        settings: the sidebar settings.
        pattern: pattern name (default: :func:`compared_spec`'s).
        train_size: vocabulary size to train to (default: :func:`compared_spec`'s).

    Raises:
        ValueError, TypeError: from the engine (bad vocabulary size, special tokens, text).
    """
    spec = compared_spec(settings, variants_algorithm())
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
        return Built(tok, tok.name, f"prod|{key}", None, "production", tag=key)

    return Entry(key, spec.label, "production", build, spec.family)


def warm_production(key: str) -> None:
    """Build what Compare measures the production tokenizer ``key`` with, before a visitor asks (:mod:`ui.warmup`).

    Loads it (:func:`~bpe_core.production.registry.load_production`) and, for a byte-level one, its
    byte-length table (:func:`vocab_byte_lengths`).

    Raises:
        EncodingUnavailable, ValueError: as :func:`~bpe_core.production.registry.load_production`.
    """
    built = production_entry(key).build(None, None)
    if built.tokenizer.is_byte_level:
        vocab_byte_lengths(built)


def variant_entry(pattern: str, size: int | None) -> Entry:
    """An extra tokenizer of the variants algorithm (BPE) trained on the sidebar's text with another pattern or size.

    Args:
        pattern: a pattern name of :data:`bpe_core.pretokenize.PATTERNS`.
        size: the vocabulary size to show; ``None`` = the slider's size (the
            full trained size while the sidebar trains WordPiece).  A size above
            the training size trains further (cached).

    Returns:
        An :class:`Entry` (not registered).
    """
    algorithm = variants_algorithm()

    def build(settings: Settings, slider_size: int | None) -> Built:
        spec = compared_spec(settings, algorithm)
        spec = spec.replace(pattern=pattern, vocab_size=max(spec.vocab_size, size or 0))
        shown = size if size is not None else (slider_size if is_sidebars(settings, algorithm) else None)
        return _built(settings, spec, shown, f"{algorithm}:{pattern}" if size is None else None)

    shown = f"{size:,}" if size is not None else "slider size"
    return Entry(f"{algorithm}:{pattern}:{size}", f"{view_of(algorithm).short} ({pattern}) · {shown}", "trained", build)


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
            out.append(Column(entry, None, f"{type(exc).__name__}: {exc}" if entry.kind == "production" else str(exc)))
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
    """:func:`~bpe_core.analysis.metrics.byte_lengths` of a trained byte-level tokenizer's vocabulary (by key).

    Reads ``vocab`` (``{id: bytes}``), which the byte-level tokenizers here
    (trained BPE, the production encodings) have but :class:`~bpe_core.interface.Tokenizer`
    does not declare.
    """
    return byte_lengths(_tok.vocab)


@st.cache_resource(show_spinner=False)  # one per registered production tokenizer: none dropped
def _production_byte_lengths(key: str) -> np.ndarray:
    """:func:`~bpe_core.analysis.metrics.byte_lengths` of production tokenizer ``key``'s vocabulary, once a process."""
    return byte_lengths(load_production(key).vocab)


def vocab_byte_lengths(built: Built) -> np.ndarray:
    """The byte length of each id of a byte-level ``built`` tokenizer (``numpy`` int array indexed by id).

    A production tokenizer's table is built once per process and kept (:mod:`ui.warmup` builds all of
    them at start-up), so that the sessions' trained tokenizers, kept in a bounded cache, never push
    one out and make a click rebuild it.
    """
    if built.kind == "production" and built.tag in PRODUCTION:
        return _production_byte_lengths(built.tag)
    return _byte_lengths(built.cache_key, built.tokenizer)


@st.cache_data(max_entries=256, show_spinner=False)  # the warm-up's samples x production ones fit, and more
def measure(cache_key: str, text: str, _built: Built) -> TextMetrics:
    """:func:`bpe_core.analysis.metrics.measure` of ``text`` under a built tokenizer (cached by key and text).

    The engine picks the path by :attr:`~bpe_core.interface.Tokenizer.is_byte_level`:
    a byte-level tokenizer (trained BPE, the tiktoken-form encodings) is
    measured from its ids (through its fast encoder), any other (WordPiece,
    Mistral v1's SentencePiece) from its spans.  The byte-length table of a
    byte-level vocabulary is kept per tokenizer (:func:`vocab_byte_lengths`).
    """
    tok = _built.tokenizer
    lengths = vocab_byte_lengths(_built) if tok.is_byte_level else None
    return measure_metrics(tok, text, MEASURE_CHUNK_CHARS, tokenizer_split(tok), lengths=lengths)


@st.cache_resource(show_spinner=False)
def _metrics_store() -> dict:
    """The process-wide figures: an LRU of ``(text digest, text length, cache key) -> TextMetrics`` and its lock."""
    return {"lock": threading.Lock(), "lru": OrderedDict()}


def _figures_key(text: str, cache_key: str) -> tuple:
    return (text_digest(text), len(text), cache_key)


def cached_metrics(builts: Sequence[Built], text: str) -> dict[str, TextMetrics]:
    """The figures of ``text`` already measured (by any session) for ``builts``: ``{cache key: TextMetrics}``."""
    store = _metrics_store()
    out: dict[str, TextMetrics] = {}
    with store["lock"]:
        for b in builts:
            key = _figures_key(text, b.cache_key)
            m = store["lru"].get(key)
            if m is not None:
                store["lru"].move_to_end(key)
                out[b.cache_key] = m
    return out


def unmeasured(builts: Sequence[Built], text: str) -> list[Built]:
    """The ``builts`` whose figures of ``text`` are not cached yet (one per cache key, in order)."""
    have = cached_metrics(builts, text)
    return list({b.cache_key: b for b in builts if b.cache_key not in have}.values())


def _keep(text: str, measured: dict[str, TextMetrics]) -> None:
    store = _metrics_store()
    with store["lock"]:
        lru = store["lru"]
        for cache_key, m in measured.items():
            lru[_figures_key(text, cache_key)] = m
            lru.move_to_end(_figures_key(text, cache_key))
        while len(lru) > METRICS_KEPT:
            lru.popitem(last=False)


@st.cache_resource(max_entries=2, show_spinner=False)
def _units_cache(digest: bytes, length: int) -> dict:
    """The counted units of a long text, by unit cut table (``units_cache`` of :func:`measure_corpus`).

    A tokenizer picked later on the same text skips counting it again.  Two texts, any session.
    """
    return {}


def measure_all(builts: Sequence[Built], text: str, progress: ProgressCallback | None = None) -> dict[str, TextMetrics]:
    """The figures of ``text`` under every built tokenizer, cached per (text digest, tokenizer) for the process.

    What is not cached is measured at once: a text of :data:`CORPUS_MIN_CHARS` characters or more by counted
    distinct pieces for all the missing tokenizers together
    (:func:`bpe_core.analysis.corpus.measure_corpus`), a shorter one by :func:`measure` (whole text). Both equal
    :func:`bpe_core.analysis.metrics.compute_metrics` on the whole text.  A second visit with the same text and
    tokenizers (any session) measures nothing.

    Args:
        builts: the built columns (:attr:`Built.cache_key` names each tokenizer's exact state).
        text: the compared text.
        progress: ``progress(phase, done, total)`` of the corpus path (phases ``"count"``, ``"split"``,
            ``"encode"``); what it raises stops measuring, and nothing of that run is cached.

    Returns:
        ``{cache key: TextMetrics}`` for every built.

    Raises:
        ValueError, TypeError: from the engine (text not encodable); whatever ``progress`` raises.
    """
    out = cached_metrics(builts, text)
    missing = list({b.cache_key: b for b in builts if b.cache_key not in out}.values())
    if missing:
        if len(text) >= CORPUS_MIN_CHARS:
            units = _units_cache(text_digest(text), len(text))
            figures = measure_corpus(text, [b.tokenizer for b in missing], progress=progress, units_cache=units)
        else:
            figures = [measure(b.cache_key, text, b) for b in missing]
        fresh = {b.cache_key: m for b, m in zip(missing, figures)}
        _keep(text, fresh)
        out.update(fresh)
    return out
