"""Plotly figure builders.  Each function takes plain data and returns a ``go.Figure``.

The functions are independent of each other and of Streamlit, so the tests
check a figure's data directly (``st.plotly_chart`` is opaque in AppTest).
The Compare page uses :func:`token_count_bars` and :func:`compression_curve`;
the ``merge_*`` builders draw the Merges page's charts, each with a marker at
the current merge step.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from ui.safe_text import plotly as plotly_text

TRAINED_COLOUR = "#2a9d8f"
"""Bars and lines of tokenizers trained in the app."""

PRODUCTION_COLOUR = "#6c5ce7"
"""Bars and markers of the production tokenizers."""

CURVE_COLOURS = ("#2a9d8f", "#e76f51", "#264653", "#e9c46a", "#8ab17d", "#b56576")
"""Line colours of the compression curves, one per trained tokenizer."""

_FONT = {"family": "Inter, system-ui, sans-serif", "size": 13}


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        height=height,
        margin={"l": 10, "r": 10, "t": 48, "b": 10},
        font=_FONT,
        plot_bgcolor="rgba(0,0,0,0)",
        paper_bgcolor="rgba(0,0,0,0)",
        hoverlabel={"font": _FONT},
    )
    return fig


def token_count_bars(labels: Sequence[str], counts: Sequence[int], kinds: Sequence[str] | None = None) -> go.Figure:
    """Horizontal bar chart of how many tokens each tokenizer needs for the same text.

    Args:
        labels: tokenizer names, top to bottom.
        counts: token counts (tokens), same length as ``labels``.
        kinds: per bar ``"trained"`` or ``"production"`` (colours); default all trained.

    Returns:
        A figure with one ``go.Bar`` trace: ``y`` = labels, ``x`` = counts.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(labels) != len(counts) or (kinds is not None and len(kinds) != len(labels)):
        raise ValueError("labels, counts and kinds must have the same length")
    kinds = list(kinds) if kinds is not None else ["trained"] * len(labels)
    colours = [PRODUCTION_COLOUR if k == "production" else TRAINED_COLOUR for k in kinds]
    fig = go.Figure(
        go.Bar(
            x=list(counts),
            y=[_escape(label) for label in labels],  # user-named tokenizers (imported files): text, not markup
            orientation="h",
            marker={"color": colours},
            text=[f"{c:,}" for c in counts],
            textposition="auto",
            hovertemplate="%{y}<br>%{x:,} tokens<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", title=None)
    fig.update_xaxes(title="tokens for the whole text", rangemode="tozero", tickformat=",")
    return _layout(fig, "Token count", max(300, 110 + 46 * len(labels)))


@dataclass(frozen=True)
class CompressionCurve:
    """A trained tokenizer's compression at many vocabulary sizes.

    Attributes:
        label: tokenizer name.
        vocab_sizes: vocabulary sizes (tokens), ascending.
        tokens: the text's token count at each size.
        text_bytes: the text's UTF-8 byte count.
        shown: vocabulary sizes the page shows, marked with a dot on the line
            (each must be one of ``vocab_sizes``).
        exact: ``True`` when read exactly at every size (from a training
            trace), ``False`` when measured at a sample of sizes.
    """

    label: str
    vocab_sizes: Sequence[int]
    tokens: Sequence[int]
    text_bytes: int
    shown: Sequence[int] = ()
    exact: bool = True


@dataclass(frozen=True)
class CompressionPoint:
    """One tokenizer at one vocabulary size (a production tokenizer, or one trained without a curve).

    Attributes:
        label: tokenizer name.
        vocab_size: its vocabulary size (tokens).
        tokens: the text's token count.
        text_bytes: the text's UTF-8 byte count.
        tag: the short text drawn next to the marker (default: ``label``).
    """

    label: str
    vocab_size: int
    tokens: int
    text_bytes: int
    tag: str | None = None


def _bpt(text_bytes: int, tokens: int) -> float:
    return text_bytes / tokens if tokens else 0.0


def compression_curve(curves: Sequence[CompressionCurve], points: Sequence[CompressionPoint] = ()) -> go.Figure:
    """Bytes per token against vocabulary size: a line per trained tokenizer, a marker per production one.

    The x axis is logarithmic, so a few hundred trained tokens and the
    100,000-token production vocabularies fit one chart.

    Args:
        curves: trained tokenizers; each becomes a line named by its label
            (with markers at the measured sizes when not ``exact``), plus, when
            ``shown`` is not empty, a marker trace named ``"<label> (shown)"``
            at those sizes.
        points: single tokenizers; each becomes a marker trace named by its
            label, with its ``tag`` written next to it (alternately above and below).

    Returns:
        The figure.  Every trace's ``x`` is vocabulary sizes and ``y`` is
        ``text_bytes / tokens`` (0 where there are no tokens); ``customdata``
        holds the token counts.
    """
    fig = go.Figure()
    for i, c in enumerate(curves):
        colour = CURVE_COLOURS[i % len(CURVE_COLOURS)]
        y = [_bpt(c.text_bytes, t) for t in c.tokens]
        fig.add_trace(
            go.Scatter(
                x=list(c.vocab_sizes),
                y=y,
                mode="lines" if c.exact else "lines+markers",
                name=_escape(c.label),
                line={"color": colour, "width": 2.5},
                marker={"size": 5},
                customdata=list(c.tokens),
                hovertemplate="%{x:,} tokens in vocab<br>%{y:.3f} bytes/token<br>%{customdata:,} tokens"
                f"<extra>{_escape(c.label)}</extra>",
            )
        )
        at = {s: k for k, s in enumerate(c.vocab_sizes)}
        ks = [at[s] for s in c.shown if s in at]
        if ks:
            fig.add_trace(
                go.Scatter(
                    x=[c.vocab_sizes[k] for k in ks],
                    y=[y[k] for k in ks],
                    mode="markers",
                    name=_escape(f"{c.label} (shown)"),
                    marker={"color": colour, "size": 13, "symbol": "circle", "line": {"color": "white", "width": 2}},
                    customdata=[c.tokens[k] for k in ks],
                    hovertemplate="shown: %{x:,} tokens in vocab<br>%{y:.3f} bytes/token<br>%{customdata:,} tokens"
                    f"<extra>{_escape(c.label)}</extra>",
                    showlegend=False,
                )
            )
    for p in points:
        fig.add_trace(
            go.Scatter(
                x=[p.vocab_size],
                y=[_bpt(p.text_bytes, p.tokens)],
                mode="markers",
                name=_escape(p.label),
                marker={
                    "color": PRODUCTION_COLOUR,
                    "size": 12,
                    "symbol": "diamond",
                    "opacity": 0.85,
                    "line": {"color": "white", "width": 1},
                },
                customdata=[p.tokens],
                hovertemplate="%{x:,} tokens in vocab<br>%{y:.3f} bytes/token<br>%{customdata:,} tokens"
                f"<extra>{_escape(p.label)}</extra>",
                showlegend=False,
            )
        )
    xs = [x for c in curves for x in c.vocab_sizes] + [p.vocab_size for p in points]
    ys = [_bpt(c.text_bytes, t) for c in curves for t in c.tokens] + [_bpt(p.text_bytes, p.tokens) for p in points]
    xaxis = {"type": "log", "title": "vocabulary size (log scale)", "dtick": 1, "tickformat": "~s"}
    x_range = None
    if xs and min(xs) > 0:
        # room on both sides for the markers' text labels (the range of a log axis is in powers of ten)
        x_range = [math.log10(min(xs)) - 0.3, math.log10(max(xs)) + 0.3]
        xaxis["range"] = x_range
    y_range = [0.0, max([*ys, 1.0]) * 1.25]
    fig.update_xaxes(**xaxis)
    fig.update_yaxes(title="bytes per token", range=y_range)
    if points and x_range is not None:
        markers = [(math.log10(p.vocab_size), _bpt(p.text_bytes, p.tokens)) for p in points]
        dots = [
            (math.log10(s), _bpt(c.text_bytes, t))
            for c in curves
            for s, t in zip(c.vocab_sizes, c.tokens)
            if s in set(c.shown) and s > 0
        ]
        texts = [p.tag or p.label for p in points]
        offsets = place_labels(markers, texts, dots, (x_range[0], x_range[1]), (y_range[0], y_range[1]))
        for (x, y), text, (dx, dy) in zip(markers, texts, offsets):
            fig.add_annotation(
                x=x,
                y=y,
                text=_escape(text),
                ax=dx,
                ay=dy,
                axref="pixel",
                ayref="pixel",
                xanchor="center",
                yanchor="middle",
                showarrow=True,
                arrowhead=0,
                arrowwidth=1,
                arrowcolor="rgba(108,92,231,.55)",
                standoff=7,
                font={"size": LABEL_FONT_PX, "color": "#3b2f9e"},
            )
    fig.update_layout(legend={"orientation": "h", "y": -0.22, "x": 0})
    return _layout(fig, "Compression: bytes per token (higher = fewer tokens)", 440)


LABEL_FONT_PX = 12
"""Font size of the compression chart's marker labels (pixels)."""

LABEL_CHAR_PX = 7.2
"""Width reserved per character of a label (pixels): above the average advance of a 12 px sans-serif font."""

LABEL_HEIGHT_PX = 17
"""Height reserved per label (pixels)."""

MARKER_RADIUS_PX = 8
"""A marker's radius as the label placement keeps clear of it (pixels; the diamonds are 12 px, the dots 13 px)."""

PLOT_SIZES_PX: tuple[tuple[int, int], ...] = ((300, 270), (740, 290), (900, 290), (1380, 290))
"""Plot-area sizes (width, height in pixels) the labels are laid out for at once: a phone (390 px), and the
page's width at 1280, 1440 and 1920 px with the sidebar open.  A placement clear at all of them is chosen."""

_RINGS = (20, 30, 44, 60, 80, 104, 130, 160)
_DIRECTIONS = (
    (0, -1),
    (0, 1),
    (1, 0),
    (-1, 0),
    (1, -1),
    (-1, -1),
    (1, 1),
    (-1, 1),
    (0.5, -1),
    (-0.5, -1),
    (0.5, 1),
    (-0.5, 1),
)


def label_box(
    anchor_px: tuple[float, float], text: str, offset: tuple[float, float]
) -> tuple[float, float, float, float]:
    """The box ``(left, top, right, bottom)`` in pixels of a label centred ``offset`` pixels away from ``anchor_px``.

    The width is :data:`LABEL_CHAR_PX` per character plus 6 px of padding, the height :data:`LABEL_HEIGHT_PX`.
    """
    w = len(text) * LABEL_CHAR_PX + 6
    cx, cy = anchor_px[0] + offset[0], anchor_px[1] + offset[1]
    return (cx - w / 2, cy - LABEL_HEIGHT_PX / 2, cx + w / 2, cy + LABEL_HEIGHT_PX / 2)


def to_pixels(
    point: tuple[float, float], x_range: tuple[float, float], y_range: tuple[float, float], size: tuple[int, int]
) -> tuple[float, float]:
    """A point in axis units (``x`` as log10 of the vocabulary size) -> pixels in a plot area of ``size`` (y down)."""
    (x, y), (w, h) = point, size
    px = (x - x_range[0]) / (x_range[1] - x_range[0]) * w
    py = (1 - (y - y_range[0]) / (y_range[1] - y_range[0])) * h
    return px, py


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float], pad: float = 2) -> float:
    dx = min(a[2], b[2]) - max(a[0], b[0]) + pad
    dy = min(a[3], b[3]) - max(a[1], b[1]) + pad
    return dx * dy if dx > 0 and dy > 0 else 0.0


def _covers_marker(box: tuple[float, float, float, float], m: tuple[float, float]) -> bool:
    r = MARKER_RADIUS_PX
    return box[0] - r < m[0] < box[2] + r and box[1] - r < m[1] < box[3] + r


def place_labels(
    anchors: Sequence[tuple[float, float]],
    texts: Sequence[str],
    obstacles: Sequence[tuple[float, float]] = (),
    x_range: tuple[float, float] = (0.0, 1.0),
    y_range: tuple[float, float] = (0.0, 1.0),
    sizes: Sequence[tuple[int, int]] = PLOT_SIZES_PX,
) -> list[tuple[float, float]]:
    """Pixel offsets ``(dx, dy)`` (y down) of the markers' labels: no two labels overlap, none covers a marker.

    Greedy: labels are placed left to right; each takes the first candidate
    offset (rings of growing radius around its marker: above, below, right,
    left, then the diagonals) whose box (:func:`label_box`) stays inside the
    plot area and clear of every label already placed and of every marker
    (``anchors`` and ``obstacles``), in every plot size of ``sizes`` at once,
    so the placement holds however wide the chart is drawn.  When no candidate
    is clear, the one with the least overlap is taken.

    Args:
        anchors: the labelled markers, in axis units (``x`` = log10 of the vocabulary size, ``y`` = bytes per token).
        texts: one label per anchor.
        obstacles: other markers to keep clear of (the curves' dots), in axis units.
        x_range: the x axis's range (log10 units).
        y_range: the y axis's range.
        sizes: plot-area sizes ``(width, height)`` in pixels.

    Returns:
        One ``(dx, dy)`` per anchor, in pixels (Plotly's annotation ``ax``/``ay``).

    Raises:
        ValueError: ``anchors`` and ``texts`` differ in length.
    """
    if len(anchors) != len(texts):
        raise ValueError("one label per anchor")
    marks = [*anchors, *obstacles]
    pix = {size: [to_pixels(m, x_range, y_range, size) for m in marks] for size in sizes}
    placed: dict[int, tuple[float, float]] = {}
    for i in sorted(range(len(anchors)), key=lambda k: (anchors[k][0], -anchors[k][1])):
        best, best_cost = (0.0, -float(_RINGS[0])), float("inf")
        for r in _RINGS:
            for ux, uy in _DIRECTIONS:
                half_w = (len(texts[i]) * LABEL_CHAR_PX + 6) / 2
                dx = ux * (r + half_w - 8) if ux else 0.0
                dy = uy * (r if abs(ux) < 1 else r * 0.75)
                cost = 0.0
                for size, points in pix.items():
                    box = label_box(points[i], texts[i], (dx, dy))
                    w, h = size
                    if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
                        cost += 1e6
                    cost += sum(1e4 for k, m in enumerate(points) if _covers_marker(box, m))
                    cost += sum(_overlap(box, label_box(points[j], texts[j], o)) for j, o in placed.items())
                if cost < best_cost:
                    best, best_cost = (dx, dy), cost
                if cost == 0:
                    break
            if best_cost == 0:
                break
        placed[i] = best
    return [placed[i] for i in range(len(anchors))]


def _escape(label: str) -> str:
    """Plotly text is HTML-like (``<b>``, ``<i>``, ``<a href>``, ``<br>``): keep ``<``, ``>``, ``&`` literal."""
    return plotly_text(label)


# ---------------------------------------------------------------------------
# Merges page


MERGE_LINE = "#4062bb"
"""Colour of the series on the Merges page's charts."""

MERGE_MARK = "#d1495b"
"""Colour of the marker at the current step (matches the highlight in the coloured text)."""


def _merge_layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        height=300,
        margin={"l": 10, "r": 10, "t": 44, "b": 10},
        showlegend=False,
        hovermode="closest",
        xaxis_title=x_title,
        yaxis_title=y_title,
    )
    return fig


def merge_pair_count_figure(
    counts: Sequence[int], step: int, *, labels: Sequence[str] | None = None, y_title: str = "Pair count"
) -> go.Figure:
    """Pair count of every merge (log scale), with a marker at merge ``step``.

    Args:
        counts: the count of merge 1, 2, ... (``trace[i].count``); positive ints.
        step: the current step, ``0 <= step <= len(counts)``; step ``k >= 1`` marks
            merge ``k`` (the point ``(k, counts[k - 1])``), step 0 marks nothing
            but a line at x = 0.
        labels: optional hover text per merge (e.g. ``"'t' + 'he'"``), same length.
        y_title: the y axis title.

    Returns:
        A figure whose ``data[0]`` is the series (x = merge numbers 1..n, y =
        ``counts``) and ``data[1]`` the marker (empty at step 0); y is log scale.

    Raises:
        ValueError: ``step`` out of range or ``labels`` of the wrong length.
    """
    n = len(counts)
    if not 0 <= step <= n:
        raise ValueError(f"step {step} is out of range 0..{n}")
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} items for {n} counts")
    x = list(range(1, n + 1))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=list(counts),
            mode="lines",
            line={"color": MERGE_LINE, "width": 1.5},
            text=[_escape(label) for label in labels] if labels is not None else None,
            hovertemplate="merge #%{x}<br>%{text}<br>count %{y:,}<extra></extra>"
            if labels is not None
            else "merge #%{x}<br>count %{y:,}<extra></extra>",
        )
    )
    mx, my = ([step], [counts[step - 1]]) if step >= 1 else ([], [])
    fig.add_trace(
        go.Scatter(
            x=mx,
            y=my,
            mode="markers",
            marker={"color": MERGE_MARK, "size": 11, "line": {"color": "white", "width": 1.5}},
            hovertemplate="this step: merge #%{x}<br>count %{y:,}<extra></extra>",
        )
    )
    fig.add_vline(x=step, line={"color": MERGE_MARK, "width": 1, "dash": "dot"})
    fig.update_yaxes(type="log", dtick=1, minor={"showgrid": True})
    return _merge_layout(fig, "Pair count at each merge", "merge #", y_title)


def merge_tokens_figure(
    vocab_sizes: Sequence[int], tokens: Sequence[int], step_vocab_size: int, *, text_bytes: int | None = None
) -> go.Figure:
    """Tokens of the training text against vocabulary size, with a marker at the current size.

    Args:
        vocab_sizes: vocabulary sizes, increasing (tokens: ``256 + specials + k``).
        tokens: the training text's token count at each size, same length.
        step_vocab_size: the current vocabulary size; must be one of ``vocab_sizes``.
        text_bytes: the text's UTF-8 size in bytes; when given, the hover shows
            bytes per token.

    Returns:
        A figure whose ``data[0]`` is the curve and ``data[1]`` the single-point
        marker at ``(step_vocab_size, its token count)``.

    Raises:
        ValueError: lengths differ, or ``step_vocab_size`` is not in ``vocab_sizes``.
    """
    if len(vocab_sizes) != len(tokens):
        raise ValueError(f"{len(vocab_sizes)} vocab sizes but {len(tokens)} token counts")
    try:
        i = list(vocab_sizes).index(step_vocab_size)
    except ValueError:
        raise ValueError(f"vocab size {step_vocab_size} is not on the curve") from None
    hover = "vocab %{x:,}<br>%{y:,} tokens"
    custom = None
    if text_bytes:
        custom = [text_bytes / t if t else 0.0 for t in tokens]
        hover += "<br>%{customdata:.2f} bytes/token"
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=list(vocab_sizes),
            y=list(tokens),
            mode="lines",
            line={"color": MERGE_LINE, "width": 2},
            customdata=custom,
            hovertemplate=hover + "<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[step_vocab_size],
            y=[tokens[i]],
            mode="markers",
            marker={"color": MERGE_MARK, "size": 11, "line": {"color": "white", "width": 1.5}},
            customdata=[custom[i]] if custom else None,
            hovertemplate="this step<br>" + hover + "<extra></extra>",
        )
    )
    return _merge_layout(fig, "Training-text tokens vs vocabulary size", "vocabulary size", "tokens")


def merge_length_figure(lengths: Sequence[int], current_length: int | None) -> go.Figure:
    """How many learned tokens have each length (bytes), with the current merge's length marked.

    Args:
        lengths: byte length of each token learned so far (merges 1..k).
        current_length: byte length of the token merge ``k`` made (its bar is
            coloured), or ``None`` at step 0.

    Returns:
        A bar figure whose ``data[0]`` has x = every length from 2 to the
        longest (missing lengths count 0) and y = how many tokens have it; bar
        colours mark ``current_length``.  With no tokens yet the figure is empty.
    """
    hist = Counter(lengths)
    xs = list(range(2, max(hist) + 1)) if hist else []
    ys = [hist.get(x, 0) for x in xs]
    colours = [MERGE_MARK if x == current_length else MERGE_LINE for x in xs]
    fig = go.Figure(
        go.Bar(
            x=xs,
            y=ys,
            marker={"color": colours},
            hovertemplate="%{y:,} tokens of %{x} bytes<extra></extra>",
        )
    )
    fig.update_xaxes(dtick=1 if len(xs) <= 16 else None)
    return _merge_layout(fig, f"Lengths of the {len(lengths):,} learned tokens", "token length (bytes)", "tokens")
