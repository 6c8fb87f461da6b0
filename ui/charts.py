"""Plotly figure builders.  Pure functions: data in, ``go.Figure`` out (tests read the figure's data).

The ``merge_*`` builders draw the Merges page's charts, each with a marker at
the current merge step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import plotly.graph_objects as go

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
