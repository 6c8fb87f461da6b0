"""Unigram's training story for the Merges page: pruning rounds instead of merges.

Step ``k`` (``0 <= k <= n_steps``) is the vocabulary after ``k`` pruning
rounds of the tokenizer's own trace, step 0 being the trained vocabulary
(:attr:`~bpe_core.interface.TrainedTokenizer.max_vocab_size`): the slider
walks down the sizes, each a real training state
(:meth:`bpe_core.unigram.UnigramTokenizer.replay`).  For round ``k`` the page
shows the loss before and after, the pieces removed with the loss increase
each would have caused (the trainer's estimate, in nats), the pieces kept with
their scores, and the text segmented before the round (the removed pieces
highlighted) and after it.

:class:`UnigramPruningHistory` holds the data (no Streamlit);
:func:`pruning_card_html` and :func:`pruning_figures` draw it.  Normally the
browser plays the rounds (:func:`ui.live_view.merges_player`, the card and the
text redrawn by ``live.js`` from :func:`bpe_core.analysis.live.unigram_step_versions`)
and :func:`ui.merges.page.pruning_panels` draws the charts and tables at the
step it stops at; with "Draw on the server" the page's glue is
:func:`ui.merges.page.pruning_step_view`.
"""

from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go

from bpe_core.interface import TrainedTokenizer
from bpe_core.spans import TokenSpan
from ui.limits import PRUNED_LISTED
from ui.merges.card import CARD_CSS
from ui.render import visible_text


class UnigramPruningHistory:
    """The pruning history of a Unigram tokenizer trained here (its rounds from the trained size down).

    Args:
        tokenizer: the trained :class:`~bpe_core.unigram.UnigramTokenizer` (any view; the full one is used).
        text: its training text.

    Raises:
        ValueError: the tokenizer has no training facts (loaded from a file
            without them, or built from pieces).
    """

    algorithm = "unigram"
    story = "pruning"
    step_noun = "pruning round"
    unit = "character"
    covers_text = False
    trainer_view_note = ""
    pieces_note = ""
    step_zero_note = "The trained vocabulary, before the rounds that prune it further."

    def __init__(self, tokenizer: TrainedTokenizer, text: str) -> None:
        full = tokenizer.with_vocab_size(tokenizer.max_vocab_size)
        if full.training is None:
            raise ValueError("this tokenizer has no training facts, so its pruning cannot be replayed")
        self.tokenizer = full
        self.text = text
        self.trace = full.trace
        self.sizes = full.state_sizes  # sizes[k]: the vocabulary after k rounds (decreasing)
        self.n_steps = len(self.trace)
        self.min_vocab_size = full.min_vocab_size
        self.unique_pretokens = full.training.unique_pretokens
        self.text_bytes = len(text.encode("utf-8", errors="surrogatepass"))
        self.replay = full.replay(text)
        self._table: pd.DataFrame | None = None

    def _check(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.n_steps:
            raise ValueError(f"step {k!r} is out of range 0..{self.n_steps}")

    def vocab_size_at(self, k: int) -> int:
        """Vocabulary size after ``k`` rounds."""
        self._check(k)
        return self.sizes[k]

    def view(self, k: int) -> TrainedTokenizer:
        """The tokenizer after ``k`` rounds (a view: ``token_spans(text)`` is the text re-segmented)."""
        self._check(k)
        return self.tokenizer.with_vocab_size(self.sizes[k])

    def spans(self, k: int) -> list[TokenSpan]:
        """The training text's tokens after ``k`` rounds (:meth:`bpe_core.unigram.UnigramReplay.spans`)."""
        self._check(k)
        return self.replay.spans(k)

    def highlight(self, k: int) -> dict[int, int | None]:
        """``{id: None}`` of the pieces round ``k`` removes (to mark in the text *before* it); empty at step 0."""
        self._check(k)
        return {} if k == 0 else {i: None for i in self.trace[k - 1].removed}

    def tokens_at(self, k: int) -> int | None:
        """Tokens of the training text after ``k`` rounds (exact: the trainer's count), ``None`` if unknown."""
        self._check(k)
        return self.trace[k - 1].tokens_after if k else self.tokenizer.training_text_tokens()

    def loss_at(self, k: int) -> float | None:
        """The training words' Viterbi loss (nats) after ``k`` rounds, ``None`` if unknown."""
        self._check(k)
        return self.replay.states[k].loss

    def removed(self, k: int) -> list[tuple[int, str, float]]:
        """``(id, piece, loss increase)`` of the pieces round ``k`` removed, lowest increase first."""
        self._check(k)
        return self.replay.removed(k)

    def removed_table(self, k: int) -> pd.DataFrame:
        """The pieces round ``k`` removed: piece, id, the loss increase its removal was estimated to cause."""
        rows = self.removed(k)
        return pd.DataFrame(
            {
                "piece": [p for _i, p, _x in rows],
                "id": [i for i, _p, _x in rows],
                "loss increase (nats)": [x for _i, _p, x in rows],
            }
        )

    def kept_table(self, k: int) -> pd.DataFrame:
        """The pieces kept after ``k`` rounds, highest score first: piece, id, score (log-probability)."""
        self._check(k)
        rows = sorted(self.replay.kept(k), key=lambda r: (-r[2], r[0]))
        return pd.DataFrame(
            {"piece": [p for _i, p, _s in rows], "id": [i for i, _p, _s in rows], "score": [s for _i, _p, s in rows]}
        )

    def table(self) -> pd.DataFrame:
        """One row per round: step, training round number, sizes, pieces removed, loss before/after, tokens after."""
        if self._table is None:
            t = self.trace
            self._table = pd.DataFrame(
                {
                    "step": list(range(1, len(t) + 1)),
                    "round": [r.round for r in t],
                    "size before": [r.size_before for r in t],
                    "size after": [r.size_after for r in t],
                    "removed": [r.n_removed for r in t],
                    "loss before": [r.loss_before for r in t],
                    "loss after": [r.loss_after for r in t],
                    "tokens after": [r.tokens_after for r in t],
                }
            )
        return self._table


def _loss(x: float | None) -> str:
    return "unknown" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.1f}"


def pruning_card_html(history: UnigramPruningHistory, k: int) -> str:
    """The card of step ``k``: the round's sizes, loss, tokens and the pieces it removed (escaped HTML)."""
    history._check(k)
    size = history.sizes[k]
    if k == 0:
        loss = history.loss_at(0)
        tokens = history.tokens_at(0)
        facts = [
            ("Vocabulary", f"{size:,}", "the trained size", "Special tokens, the characters and the learned pieces."),
            ("Loss", _loss(loss), "nats", "Negative log-likelihood of the training words' best segmentations."),
            ("Tokens of the text", f"{tokens:,}" if tokens is not None else "unknown", "", ""),
        ]
        head = "Step 0: the trained vocabulary"
        removed_html = ""
    else:
        r = history.trace[k - 1]
        before, after = history.tokens_at(k - 1), history.tokens_at(k)
        rise = None if r.loss_before is None else r.loss_after - r.loss_before
        facts = [
            ("Vocabulary", f"{r.size_before:,} → {r.size_after:,}", f"−{r.n_removed:,} pieces", ""),
            (
                "Loss",
                f"{_loss(r.loss_before)} → {_loss(r.loss_after)}",
                "" if rise is None else f"{rise:+,.1f} nats",  # signed: EM can lower the loss ("-48.0 nats")
                "Negative log-likelihood of the training words' best segmentations before the round and after it "
                "(pruned, then re-estimated by EM).",
            ),
            (
                "Tokens of the text",
                f"{before:,} → {after:,}" if before is not None and after is not None else "unknown",
                f"{after - before:+,}" if before is not None and after is not None else "",
                "Tokens of the whole training text before and after the round.",
            ),
        ]
        head = f"Pruning round {r.round} (step {k:,} of {history.n_steps:,})"
        chips = "".join(
            f'<span class="chip" title="loss increase {x:.4g} nats">{visible_text(p)}<small>+{x:.3g}</small></span>'
            for _i, p, x in history.removed(k)[:PRUNED_LISTED]
        )
        more = r.n_removed - PRUNED_LISTED
        removed_html = (
            '<div class="removed"><span class="no">Removed, cheapest first (estimated loss increase):</span>'
            + chips
            + (f'<span class="no"> … {more:,} more</span>' if more > 0 else "")
            + "</div>"
        )
    facts_html = "".join(
        f'<div class="fact" title="{html.escape(h, quote=True)}"><div class="l">{html.escape(label)}</div>'
        f'<div class="v">{html.escape(value)}</div><div class="d">{html.escape(detail)}</div></div>'
        for label, value, detail, h in facts
    )
    style = (
        "<style>.merge-card .removed { display: flex; flex-wrap: wrap; gap: 4px; width: 100%; }"
        ".merge-card .removed .chip { font-size: 14px; padding: 2px 6px; background: #f4a3a3; }</style>"
    )
    return (
        CARD_CSS + style + f'<div class="merge-card"><div class="no">{html.escape(head)}</div>'
        f'<div class="facts">{facts_html}</div>{removed_html}</div>'
    )


def pruning_figures(history: UnigramPruningHistory, k: int) -> list[go.Figure]:
    """Loss per round, tokens against vocabulary size, and round ``k``'s loss increases; each marks step ``k``."""
    history._check(k)
    steps = list(range(history.n_steps + 1))
    losses = [history.loss_at(i) for i in steps]
    loss = go.Figure()
    loss.add_scatter(
        x=steps, y=losses, mode="lines+markers", name="loss",
        customdata=history.sizes, hovertemplate="step %{x}<br>vocab %{customdata:,}<br>loss %{y:,.1f}<extra></extra>",
    )  # fmt: skip
    loss.add_scatter(x=[k], y=[losses[k]], mode="markers", marker={"size": 12, "color": "#d1495b"}, name="this step")
    loss.update_layout(
        title={"text": "Loss after each pruning round"}, xaxis_title="pruning step", yaxis_title="loss (nats)",
        showlegend=False, height=300, margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )  # fmt: skip
    tokens = [history.tokens_at(i) for i in steps]
    curve = go.Figure()
    curve.add_scatter(
        x=history.sizes, y=tokens, mode="lines+markers", name="tokens",
        hovertemplate="vocab %{x:,}<br>%{y:,} tokens<extra></extra>",
    )  # fmt: skip
    curve.add_scatter(
        x=[history.sizes[k]], y=[tokens[k]], mode="markers", marker={"size": 12, "color": "#d1495b"}, name="this step"
    )
    curve.update_layout(
        title={"text": "Tokens of the training text against vocabulary size"}, xaxis_title="vocabulary size",
        yaxis_title="tokens", showlegend=False, height=300, margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )  # fmt: skip
    rows = history.removed(k) if k else []
    bars = go.Figure()
    bars.add_bar(
        x=list(range(1, len(rows) + 1)), y=[x for _i, _p, x in rows], text=[p for _i, p, _x in rows],
        hovertemplate="%{text}<br>loss increase %{y:.4g} nats<extra></extra>",
    )  # fmt: skip
    bars.update_layout(
        title={"text": f"Loss increase of each piece round {history.trace[k - 1].round} removed" if k else
               "Loss increase of the removed pieces (step 1 onwards)"},
        xaxis_title="removed piece (cheapest first)", yaxis_title="nats", height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )  # fmt: skip
    return [loss, curve, bars]
