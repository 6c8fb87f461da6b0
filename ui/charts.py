"""Plotly figure builders.  Each function takes plain data and returns a ``go.Figure``.

The functions are independent of each other and of Streamlit, so the tests
check a figure's data directly (``st.plotly_chart`` is opaque in AppTest).
The Compare page uses :func:`token_count_bars` and :func:`compression_curve`;
the ``merge_*`` builders draw the Merges page's charts, each with a marker at
the current merge step.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

TRAINED_COLOUR = "#2a9d8f"
"""Bars and lines of tokenizers trained in the app."""

REFERENCE_COLOUR = "#6c5ce7"
"""Bars and markers of the production (reference) encodings."""

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
        kinds: per bar ``"trained"`` or ``"reference"`` (colours); default all trained.

    Returns:
        A figure with one ``go.Bar`` trace: ``y`` = labels, ``x`` = counts.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(labels) != len(counts) or (kinds is not None and len(kinds) != len(labels)):
        raise ValueError("labels, counts and kinds must have the same length")
    kinds = list(kinds) if kinds is not None else ["trained"] * len(labels)
    colours = [REFERENCE_COLOUR if k == "reference" else TRAINED_COLOUR for k in kinds]
    fig = go.Figure(
        go.Bar(
            x=list(counts),
            y=list(labels),
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
    """One tokenizer at one vocabulary size (a reference encoding, or WordPiece).

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
    """Bytes per token against vocabulary size: a line per trained tokenizer, a marker per reference.

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
                name=c.label,
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
                    name=f"{c.label} (shown)",
                    marker={"color": colour, "size": 13, "symbol": "circle", "line": {"color": "white", "width": 2}},
                    customdata=[c.tokens[k] for k in ks],
                    hovertemplate="shown: %{x:,} tokens in vocab<br>%{y:.3f} bytes/token<br>%{customdata:,} tokens"
                    f"<extra>{_escape(c.label)}</extra>",
                    showlegend=False,
                )
            )
    for i, p in enumerate(points):
        fig.add_trace(
            go.Scatter(
                x=[p.vocab_size],
                y=[_bpt(p.text_bytes, p.tokens)],
                mode="markers+text",
                name=p.label,
                text=[p.tag or p.label],
                textposition="top center" if i % 2 == 0 else "bottom center",
                marker={"color": REFERENCE_COLOUR, "size": 12, "symbol": "diamond"},
                customdata=[p.tokens],
                hovertemplate="%{x:,} tokens in vocab<br>%{y:.3f} bytes/token<br>%{customdata:,} tokens"
                f"<extra>{_escape(p.label)}</extra>",
                showlegend=False,
            )
        )
    xs = [x for c in curves for x in c.vocab_sizes] + [p.vocab_size for p in points]
    ys = [_bpt(c.text_bytes, t) for c in curves for t in c.tokens] + [_bpt(p.text_bytes, p.tokens) for p in points]
    xaxis = {"type": "log", "title": "vocabulary size (log scale)", "dtick": 1, "tickformat": "~s"}
    if xs and min(xs) > 0:
        # room on both sides for the markers' text labels (the range of a log axis is in powers of ten)
        xaxis["range"] = [math.log10(min(xs)) - 0.15, math.log10(max(xs)) + 0.35]
    fig.update_xaxes(**xaxis)
    fig.update_yaxes(title="bytes per token", range=[0, max([*ys, 1.0]) * 1.18])
    fig.update_layout(legend={"orientation": "h", "y": -0.22, "x": 0})
    return _layout(fig, "Compression: bytes per token (higher = fewer tokens)", 420)


def _escape(label: str) -> str:
    """Plotly hover text is HTML-like: keep a label's ``<``, ``>`` and ``&`` literal."""
    return html.escape(label, quote=False)


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
            text=list(labels) if labels is not None else None,
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
