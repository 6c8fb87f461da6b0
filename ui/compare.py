"""The Compare page's parts: the picker, the coloured views side by side, the figures, the compression chart.

The tokenizers come from the catalogue (:mod:`ui.catalogue`: what can be compared, building,
measuring); this module draws them.

Special tokens are treated the same way by every column: each tokenizer
encodes the special-token strings of its own vocabulary as one special token
wherever they occur (tiktoken's ``allowed_special="all"``; the trained BPE's
special tokens are the sidebar's), and any other text as ordinary text.
"""

from __future__ import annotations

import hashlib
import html
import re
from bisect import bisect_right
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bpe_core.analysis.figures import COMPARE_COLUMNS, FigureColumn, figure_rows
from bpe_core.analysis.metrics import TextMetrics, words_split_differently
from bpe_core.interface import Tokenizer, TrainedTokenizer, algorithm_label
from bpe_core.pretokenize import shared_pretoken_prefix, tokenizer_split
from bpe_core.production.registry import PRODUCTION, production_families
from bpe_core.spans import TokenSpan
from ui import catalogue, charts, live_view, render
from ui import state_keys as sk
from ui.catalogue import YOUR_OWN, Built, Column, encode_fast, is_sidebars, variants_algorithm
from ui.charts import CompressionCurve, CompressionPoint
from ui.figures_table import figures_table_html
from ui.inputs import Settings
from ui.limits import COMPARE_DRAW_CHARS, COMPARE_DRAW_TOKENS
from ui.safe_text import md
from ui.training import text_digest
from ui.view import per_row, progress_panel

CURVE_POINTS = 24
"""Vocabulary sizes measured for a compression curve on a text other than the training text."""


CURVE_MAX_CHARS = 1_000_000
"""A compression curve on another text is measured on at most this many of its characters."""


CURVE_MAX_POINTS = 1_500
"""A curve read from the training trace is thinned to about this many points for drawing."""

OTHER_TEXT_LABEL = "Other text to compare on"
"""The label of Compare's "Other text" box (unique on the page: :func:`ui.live_view.follow_typing` finds it by it)."""


def picker_groups() -> dict[str, list[str]]:
    """``{family: [registry key, ...]}`` in the picker's order: :data:`YOUR_OWN` first, then each production family.

    Nothing is loaded or trained.  An entry registered without a family (a
    test's extra) joins :data:`YOUR_OWN` when trained, ``"Other"`` otherwise.
    """
    groups: dict[str, list[str]] = {YOUR_OWN: []}
    for family in production_families():
        groups[family] = []
    for key, entry in catalogue.entries().items():
        family = entry.family or (YOUR_OWN if entry.kind == "trained" else "Other")
        groups.setdefault(family, []).append(key)
    return {f: keys for f, keys in groups.items() if keys}


def picked_keys(algorithm: str | None = None) -> list[str]:
    """The Compare picker's choice (registry keys, in the order picked): the link's or the session's, else the default.

    The choice follows the sidebar's ``algorithm``: Compare opens on the algorithm the sidebar trains
    (:func:`ui.catalogue.default_pick`), and when the sidebar switches algorithm after Compare was drawn,
    the column of the one it trained before (if chosen) becomes the new one's.  A link's choice is kept as
    it is (the session then starts from it).
    """
    chosen = st.session_state.get(sk.COMPARE_TOKENIZERS)
    if chosen is None:
        chosen = catalogue.default_pick(algorithm)
    drawn_for = st.session_state.get(sk.COMPARE_FOR_ALGORITHM)
    if algorithm is not None:
        if drawn_for is not None and drawn_for != algorithm and drawn_for in chosen:
            chosen = [algorithm if k == drawn_for else k for k in chosen]
        st.session_state[sk.COMPARE_FOR_ALGORITHM] = algorithm
    known = catalogue.entries()
    return [k for k in dict.fromkeys(chosen) if k in known]


def _sync_picks() -> None:
    """``on_change`` of the family pills: their union becomes the choice (before the link is written).

    The tokenizers chosen before keep their places and a new pick comes last, so its column is added after
    the others and none of them moves (the browser keeps the columns it drew: a pick put in registry order
    before three others redrew all of them, Chromium "on" click 0.85 s against 0.34 s at the end).
    """
    out: set[str] = set()
    for family in picker_groups():
        out.update(st.session_state.get(sk.compare_family_key(family)) or [])
    kept = [k for k in st.session_state.get(sk.COMPARE_TOKENIZERS) or [] if k in out]
    st.session_state[sk.COMPARE_TOKENIZERS] = kept + [k for k in catalogue.entries() if k in out and k not in kept]


def tokenizer_picker(algorithm: str | None = None) -> list[str]:
    """The tokenizer picker, pills per family (:func:`picker_groups`), three families a row; returns the chosen keys.

    The choice lives in ``st.session_state[COMPARE_TOKENIZERS]`` (what the
    link's ``cmp`` parameter reads and writes, :mod:`ui.links`); each family's
    pills are drawn from it, and a click writes the union back in the pills'
    ``on_change``, before the next run writes the link.  ``algorithm``: the sidebar's, which the
    choice follows (:func:`picked_keys`).
    """
    chosen = picked_keys(algorithm)
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


def picker_in_place(algorithm: str | None = None) -> list[str]:
    """:func:`tokenizer_picker`, in presentation mode folded into a button that names the choice (returns the keys).

    On a projector the picker's nine families would fill the first screen at 1280x720; folded, the columns
    start under the text's source and the slider, and the teacher still changes the choice in one click.
    """
    if not st.session_state.get(sk.PRESENT):
        return tokenizer_picker(algorithm)
    chosen = picked_keys(algorithm)  # once: it follows the sidebar's algorithm and notes that it did
    st.session_state[sk.COMPARE_TOKENIZERS] = chosen
    names = ", ".join(_pill_label(k) for k in chosen)
    with st.popover(f"Tokenizers: {names}" if names else "Tokenizers", icon=":material/tune:"):
        return tokenizer_picker()


PICKER_FAMILIES_PER_ROW = 3
"""Families side by side in the picker: nine (yours and eight production families) make three rows of three, each
wide enough for its pills' labels at 1280 px (one row of nine squeezed "Meta" and "Google" to a letter a line)."""


def _pill_label(key: str) -> str:
    """A pill's text: the entry's label; a trained entry's without "trained on your text" (its family says so)."""
    entry = catalogue.entries()[key]
    return entry.label.removesuffix(" trained on your text") if entry.kind == "trained" else entry.label


def _family_help(family: str, keys: Sequence[str]) -> str:
    if family == YOUR_OWN:
        return "Tokenizers trained on the sidebar's text (the sidebar's own at the slider's size)."
    lines = [f"{PRODUCTION[k].label}: {PRODUCTION[k].origin}" for k in keys if k in PRODUCTION and PRODUCTION[k].origin]
    return "Loaded offline from verified files. " + " · ".join(lines)


def uses_slider(settings: Settings, picked: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether a picked tokenizer is shown at the slider's size (the sidebar's algorithm, or BPE variants of it)."""
    return settings.spec.algorithm in picked or (is_sidebars(settings, variants_algorithm()) and bool(patterns))


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
    full_key: str, digest: bytes, on_training_text: bool, shown: tuple[int, ...], _full: TrainedTokenizer, _text: str
) -> tuple[list[int], list[int], bool]:
    """``(vocab sizes, token counts, exact at every size)`` of a trained tokenizer on ``_text``.

    Kept per tokenizer and text digest (:func:`ui.training.text_digest` of ``_text``): Streamlit never
    hashes a long text on each run.
    """
    text = _text
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


@st.cache_resource(max_entries=64, show_spinner=False)
def count_bars(labels: tuple[str, ...], counts: tuple[int, ...], kinds: tuple[str, ...]) -> go.Figure:
    """:func:`ui.charts.token_count_bars`, built once per labels and counts (shared: never change it)."""
    return charts.token_count_bars(labels, counts, kinds)


def _curve_digest(curve: CompressionCurve) -> bytes:
    """A short digest of one curve (its thousands of sizes and counts hashed as two arrays, not item by item)."""
    h = hashlib.blake2b(repr((curve.label, curve.text_bytes, tuple(curve.shown), curve.exact)).encode(), digest_size=16)
    h.update(np.asarray(curve.vocab_sizes, dtype=np.int64).tobytes())
    h.update(np.asarray(curve.tokens, dtype=np.int64).tobytes())
    return h.digest()


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs={CompressionCurve: _curve_digest})
def compression_figure(curves: tuple[CompressionCurve, ...], points: tuple[CompressionPoint, ...]) -> go.Figure:
    """:func:`ui.charts.compression_curve`, built once per curves and points (shared: never change it).

    Streamlit hashes the arguments on every run: a curve by :func:`_curve_digest` (its own
    hashing of a dataclass of long tuples took a fifth of a Compare button's script run, py-spy).
    """
    return charts.compression_curve(curves, points)


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
        metrics: ``{cache_key: metrics of the whole text}`` (the points are the whole text's, whatever
            part of a long other text the curves measure: :data:`CURVE_MAX_CHARS`).
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
        else:  # the whole text's figures, already measured: no tokenizer encodes the text again
            m = metrics[b.cache_key]
            points.append(CompressionPoint(b.label, b.tokenizer.vocab_size, m.tokens, m.bytes, b.tag or b.label))
    curves: list[CompressionCurve] = []
    for full_key, builts in groups.items():
        full = builts[0].full
        shown = tuple(sorted({b.tokenizer.vocab_size for b in builts}))
        sizes, tokens, exact = _curve_data(full_key, text_digest(measured), on_training_text, shown, full, measured)
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
            how += f" on the first {len(measured):,} of the text's {len(text):,} characters (diamonds: the whole text)"
    return f"Trained BPE lines: {how}. A dot marks the size shown above; diamonds are single tokenizers."


def metrics_frame(columns: Sequence[Column], metrics: dict[str, TextMetrics]) -> pd.DataFrame:
    """One row per built column: :func:`bpe_core.analysis.figures.figure_rows` of its figures (the CLI's rows too).

    ``Tokens vs first`` is each row's token count divided by the first row's.
    """
    measured = [(c.built.label, metrics[c.built.cache_key]) for c in columns if c.built is not None]
    return pd.DataFrame(figure_rows(measured))


METRIC_COLUMNS: tuple[FigureColumn, ...] = COMPARE_COLUMNS
"""The columns of Compare's figures table (:func:`metrics_frame`), in order: the command line's
(:data:`bpe_core.analysis.figures.COMPARE_COLUMNS`)."""


def metrics_table_html(frame: pd.DataFrame) -> str:
    """:func:`ui.figures_table.figures_table_html` of :func:`metrics_frame`'s table, with :data:`METRIC_COLUMNS`."""
    return figures_table_html(frame, METRIC_COLUMNS)


# ---------------------------------------------------------------------------
# measuring, with progress and Cancel

MEASURE_PHASES: dict[str, tuple[float, float, str]] = {
    "count": (0.0, 0.35, "Counting the text's distinct units: chunk {done:,} of {total:,}"),
    "split": (0.35, 0.25, "Cutting them into each tokenizer's pieces: split {done:,} of {total:,}"),
    "encode": (0.6, 0.4, "Encoding each distinct piece once: tokenizer {done:,} of {total:,}"),
}
"""``phase: (start of the bar, its share, label)`` of :func:`bpe_core.analysis.corpus.measure_corpus`'s progress
phases (a rough split of their usual times)."""

View = tuple[list[Column], dict[str, TextMetrics], str]
"""What Compare draws: the built columns, ``{cache key: TextMetrics}`` and the text measured."""


def measure_request(builts: Sequence[Built], text: str) -> tuple:
    """What a measuring run is, for its Cancel: ``(text digest, text length, cache keys not measured yet)``."""
    return (text_digest(text), len(text), tuple(b.cache_key for b in catalogue.unmeasured(builts, text)))


def cancel_measuring(request: tuple) -> None:
    """The Cancel button's callback: mark ``request`` (:func:`measure_request`) cancelled in this session."""
    st.session_state[sk.COMPARE_MEASURE_CANCELLED] = request


def _measure_again() -> None:
    st.session_state.pop(sk.COMPARE_MEASURE_CANCELLED, None)


def _previous(note: str) -> View | None:
    """Say ``note`` with a "Measure now" button; the session's previous view, or ``None`` (then the note says so)."""
    previous = st.session_state.get(sk.COMPARE_LAST_VIEW)
    with st.container(border=True):
        st.warning(
            note
            + (
                " Still showing the previous figures and columns below."
                if previous is not None
                else " Nothing measured yet in this session: pick fewer tokenizers, or measure now."
            ),
            icon=":material/cancel:",
        )
        st.button("Measure now", key=sk.COMPARE_MEASURE_AGAIN, icon=":material/play_arrow:", on_click=_measure_again)
    return previous


def _measure_with_progress(builts: Sequence[Built], text: str, request: tuple) -> dict[str, TextMetrics]:
    n = len(request[2])
    box, bar = progress_panel(
        f"Measuring {n:,} tokenizer{'s' if n != 1 else ''} on {len(text):,} characters…",
        "Counting the text's distinct units…",
        cancel_label="Cancel",
        cancel_key=sk.COMPARE_CANCEL_MEASURE,
        on_cancel=cancel_measuring,
        args=(request,),
        help="Stop measuring now and keep the figures shown before.",
    )
    shown = [None]

    def progress(phase: str, done: int, total: int) -> None:
        start, share, label = MEASURE_PHASES.get(phase, (0.0, 1.0, phase + " {done:,} of {total:,}"))
        frac = min(max(start + share * (done / total if total else 0.0), 0.0), 1.0)
        step = (phase, int(frac * 100), done)
        if step != shown[0]:  # each update lets Streamlit deliver a Cancel click
            shown[0] = step
            bar.progress(frac, text=label.format(done=done, total=total))

    try:
        return catalogue.measure_all(builts, text, progress)
    finally:  # measured, failed or cancelled: the panel goes
        box.empty()


def measure_or_previous(columns: Sequence[Column], text: str) -> View | None:
    """The figures of ``text`` under the built columns, or after a Cancel or a failure the previous view.

    Figures already measured (any session, :func:`ui.catalogue.measure_all`) come at once.  Otherwise a
    long text (:data:`ui.catalogue.CORPUS_MIN_CHARS`) is measured by counted distinct pieces under a
    progress panel with a Cancel button (:func:`ui.view.progress_panel`), a short one under a spinner.
    A Cancel reruns the page; that run, and every run for the same request until "Measure now", draws a
    note and returns the session's previous view, so the page goes on showing what it showed (the
    picker and the text stay as the user left them).  An engine error (text that cannot be encoded) is
    shown the same way, with its message.

    Args:
        columns: the page's columns (:func:`ui.catalogue.build_columns`).
        text: the compared text.

    Returns:
        ``(columns, metrics, text)`` to draw -- the new ones, or the previous view's -- or ``None`` when
        there is nothing to draw (the note is shown).
    """
    builts = [c.built for c in columns if c.built is not None]
    request = measure_request(builts, text)
    try:
        if not request[2]:
            metrics = catalogue.measure_all(builts, text)
        elif st.session_state.get(sk.COMPARE_MEASURE_CANCELLED) == request:
            n = len(request[2])
            return _previous(
                f"Measuring {n:,} tokenizer{'s' if n != 1 else ''} on {len(text):,} characters was cancelled."
            )
        elif len(text) < catalogue.CORPUS_MIN_CHARS:
            with st.spinner("Encoding…"):
                metrics = catalogue.measure_all(builts, text)
        else:
            metrics = _measure_with_progress(builts, text, request)
    except (ValueError, TypeError) as exc:
        st.error(f"Cannot measure this text: {md(exc)}", icon=":material/error:")
        return _previous("The figures below are not for this text.")
    view = (list(columns), metrics, text)
    st.session_state[sk.COMPARE_LAST_VIEW] = view
    return view


# ---------------------------------------------------------------------------
# special tokens


def _special_strings(tok: Tokenizer) -> list[str]:
    return [str(s) for s in tok.special_tokens]


@st.cache_resource(max_entries=32, show_spinner=False)
def _special_counts(digest: bytes, length: int, strings: tuple[str, ...], _text: str) -> dict[str, int]:
    """``{s: _text.count(s)}`` for the ``strings`` that occur, kept per text digest and strings (shared)."""
    out = {}
    for s in strings:
        n = _text.count(s)
        if n:
            out[s] = n
    return out


def special_tokens_note(text: str, columns: Sequence[Column], metrics: dict[str, TextMetrics] | None = None) -> str:
    """HTML (escaped) saying how the columns treat special-token text, and which special strings the text holds.

    With ``metrics`` (the whole text's figures), the strings of a tokenizer with no special token in the text
    are not looked for: it encodes each of its special strings as a special token wherever it occurs, so none
    occurs (on a 20 MB text, counting the ~9,600 special strings of every production tokenizer took minutes).
    The counts are ``text.count(s)`` (non-overlapping), kept per text digest.
    """
    builts = [c.built for c in columns if c.built is not None]
    lines = [
        "<b>Special tokens:</b> every tokenizer encodes the special-token strings of its own vocabulary "
        "(such as <code>&lt;|endoftext|&gt;</code>) as one special token wherever they occur in the text, "
        'as tiktoken does with <code>allowed_special="all"</code>; the trained BPE\'s special tokens are the '
        "ones set in the sidebar. A string that is not special to a tokenizer is ordinary text to it."
    ]
    specials = {b.cache_key: set(_special_strings(b.tokenizer)) for b in builts}
    looked: dict[str, None] = {}
    for b in builts:
        if metrics is None or b.cache_key not in metrics or metrics[b.cache_key].special_tokens:
            looked.update((s, None) for s in _special_strings(b.tokenizer) if s)
    found = _special_counts(text_digest(text), len(text), tuple(looked), text)
    for s, n in found.items():
        special_in = [b.label for b in builts if s in specials[b.cache_key]]
        plain_in = [b.label for b in builts if s not in specials[b.cache_key]]
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


VIEW_CSS = """
<style>
.bpe-view .tk { white-space: pre; }
@media (max-width: 640px) { .bpe-view { font-size: 14px; padding: 10px 10px; max-height: 60vh; } }
</style>
"""
"""Compare's additions to :data:`ui.render.CSS`: a token never breaks across lines (only between tokens and at
its own newlines), so a narrow column never shows ``Not|ation``; a longer view on a phone.  Drawn once per page,
by :func:`draw_views`."""


LIVE_GROUP = "compare"
"""The group name shared by Compare's browser slider and its live columns (:mod:`ui.live_view`)."""


def live_slider(tok: TrainedTokenizer) -> int:
    """Compare's vocabulary slider, drawn in the browser: it redraws the live columns while dragged.

    Returns the size the server knows (the shared ``vocab_size``, written when a drag ends).
    """
    return live_view.group_slider(
        tok,
        group=LIVE_GROUP,
        key=sk.COMPARE_LIVE_SLIDER,
        size_key=sk.VOCAB_SIZE,
        present=bool(st.session_state.get(sk.PRESENT)),
    )


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


@st.cache_data(max_entries=64, show_spinner=False)
def _drawn_prefix(cache_keys: tuple[str, ...], digest: bytes, length: int, _builts, _text: str) -> str:
    """The prefix of the text that every column draws (:func:`~bpe_core.pretokenize.shared_pretoken_prefix`).

    Kept per choice of tokenizers and text: on a long text under many tokenizers whose pre-tokenizations
    rarely agree, finding a shared boundary takes a second of regex scans.
    """
    splits = [tokenizer_split(b.tokenizer) for b in _builts]
    return shared_pretoken_prefix(_text, COMPARE_DRAW_CHARS, splits, slack=3 * COMPARE_DRAW_CHARS)


@st.cache_resource(max_entries=256, show_spinner=False)  # the warm-up's 4 samples x 21 production ones, and more
def _spans(cache_key: str, prefix_digest: bytes, _tok: Tokenizer, _prefix: str) -> list[TokenSpan]:
    """``_tok.token_spans(_prefix)``, kept per tokenizer view and drawn text (shared: never change it)."""
    return _tok.token_spans(_prefix)


@st.cache_resource(max_entries=256, show_spinner=False)
def _column_html(
    cache_key: str,
    prefix_digest: bytes,
    show_whitespace: bool,
    total_tokens: int,
    mode: str,
    mark: tuple[bool, ...] | None,
    _spans: Sequence[TokenSpan],
    _prefix: str,
) -> str:
    """A server-drawn column's HTML (:func:`ui.render.tokens_html`), kept per view, text, and drawing options."""
    return render.tokens_html(
        _spans, show_whitespace=show_whitespace, total_tokens=total_tokens, text=_prefix, mark=mark, mode=mode
    )


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
    text is drawn (:data:`ui.limits.COMPARE_DRAW_CHARS`); the counts in the headers cover it all.

    With ``live`` (and without ``highlight``, whose marks depend on every
    column), each column that follows the slider (:attr:`Built.follows`) and
    that the live view can draw is a :func:`ui.live_view.group_column` of the
    :data:`LIVE_GROUP` slider: its title, count line and text are redrawn in
    the browser at every slider position.  ``on_training_text``: the text is
    the one those tokenizers were trained on here (their counts then come off
    the training trace).  Every other column is drawn here, as before.
    """
    prefix = _drawn_prefix(tuple(b.cache_key for b in builts), text_digest(text), len(text), builts, text)
    digest = hashlib.blake2b(prefix.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    spans = [_spans(b.cache_key, digest, b.tokenizer, prefix) for b in builts]
    differing = words_split_differently(prefix, spans) if highlight else []
    n_words = len(prefix.split())
    k = per_row(len(builts))
    st.html(VIEW_CSS)
    for row in range(0, len(builts), k):
        cols = st.columns(k, gap="small")
        for col, b, sp in zip(cols, builts[row : row + k], spans[row : row + k]):
            m = metrics[b.cache_key]
            shown = sp[:COMPARE_DRAW_TOKENS]
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
                        max_tokens=COMPARE_DRAW_TOKENS,
                        present=bool(st.session_state.get(sk.PRESENT)),
                    )
                    continue
                st.markdown(f"**{md(b.label)}**")
                st.caption(f"{m.tokens:,} tokens · {m.bytes_per_token:.2f} bytes/token")
                mode = render.session_colour_mode()
                flags = tuple(mark) if mark is not None else None
                st.html(_column_html(b.cache_key, digest, show_whitespace, m.tokens, mode, flags, shown, prefix))
    return len(differing), n_words


def warm_production_columns(text: str, keys: Sequence[str]) -> int:
    """Build what Compare draws of ``text`` for each production tokenizer of ``keys``, before a visitor asks.

    For a text short enough to be drawn whole (at most :data:`~ui.limits.COMPARE_DRAW_CHARS` characters: the
    drawn prefix is then the text whatever columns are shown together), each tokenizer's figures
    (:func:`ui.catalogue.measure`), spans and column HTML (:func:`draw_views`'s, with the page's default
    options: whitespace shown, the session's default colours, no highlight) go into the caches every session
    reads, so that a Compare button on a built-in sample finds them (:mod:`ui.warmup` calls this per sample).

    Args:
        text: the text (a built-in sample).
        keys: keys of :data:`~bpe_core.production.registry.PRODUCTION` (unavailable ones are skipped).

    Returns:
        How many columns were built (``0`` for a longer text).
    """
    if len(text) > COMPARE_DRAW_CHARS:
        return 0
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    built = 0
    for key in keys:
        try:
            b = catalogue.production_entry(key).build(None, None)
        except (ValueError, TypeError, catalogue.EncodingUnavailable):  # the page says why, as before
            continue
        m = catalogue.measure(b.cache_key, text, b)
        spans = _spans(b.cache_key, digest, b.tokenizer, text)
        shown = spans[:COMPARE_DRAW_TOKENS]
        _column_html(b.cache_key, digest, True, m.tokens, render.session_colour_mode(), None, shown, text)
        built += 1
    return built
