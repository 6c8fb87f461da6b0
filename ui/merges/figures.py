"""The Merges page's charts for one step: :mod:`ui.charts` builders fed with a merge history's trace."""

from __future__ import annotations

import plotly.graph_objects as go

from ui import charts
from ui.merges.model import MergeHistory


def bpe_figures(history: MergeHistory, k: int) -> list[go.Figure]:
    """Pair count per merge, tokens vs vocabulary size, lengths of the learned tokens; each marks step ``k``."""
    history._check(k)
    trace = history.trace
    sizes = list(range(history.min_vocab_size, history.min_vocab_size + history.n_steps + 1))
    tokens = [history.tokens_at(0)] + [s.tokens_after for s in trace]
    return [
        charts.merge_pair_count_figure([s.count for s in trace], k, labels=history._labels),
        charts.merge_tokens_figure(sizes, tokens, history.min_vocab_size + k, text_bytes=history.text_bytes),
        charts.merge_length_figure([len(s.merged) for s in trace[:k]], len(trace[k - 1].merged) if k else None),
    ]


def wordpiece_figures(history: MergeHistory, k: int) -> list[go.Figure]:
    """Score per merge, training-text tokens vs vocabulary size, lengths of the learned tokens; each marks ``k``."""
    history._check(k)
    trace = history.trace
    scores = charts.merge_pair_count_figure([s.score for s in trace], k, labels=history._labels, y_title="score")
    scores.update_layout(title={"text": "Score at each merge"})
    scores.data[0].hovertemplate = "merge #%{x}<br>%{text}<br>score %{y:.4g}<extra></extra>"
    scores.data[1].hovertemplate = "this step: merge #%{x}<br>score %{y:.4g}<extra></extra>"
    tokens = [history.tokens_at(0)] + [s.tokens_after for s in trace]
    vs = history._sizes
    curve = charts.merge_tokens_figure(vs, tokens, vs[k], text_bytes=history.text_bytes)
    # a merge that adds no id repeats a size: put the marker on step k's own point
    curve.data[1].y = [tokens[k]]
    curve.data[1].customdata = [history.text_bytes / tokens[k] if tokens[k] else 0.0]
    learned = [history._chars(s.merged) for s in trace[:k] if s.added]
    lengths = charts.merge_length_figure(learned, history._chars(trace[k - 1].merged) if k else None)
    lengths.update_xaxes(title="token length (characters, ## not counted)")
    lengths.data[0].hovertemplate = "%{y:,} tokens of %{x} characters<extra></extra>"
    return [scores, curve, lengths]
