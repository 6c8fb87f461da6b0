"""The merge history's model: what step ``k`` of training looks like, whatever the algorithm.

Step ``k`` (``0 <= k <= n_steps``) means *the first k merges applied*; merge
``#k`` (1-based, rank ``k - 1``) is the one just made.  Step 0 is the raw bytes
(BPE) or the characters (WordPiece).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd
import plotly.graph_objects as go

from bpe_core import CandidateRanking, ScoreRanking
from bpe_core.interface import TrainedTokenizer


@dataclass(frozen=True)
class StepCard:
    """The card for one merge.

    Attributes:
        step: the merge number ``k`` (1-based).
        parts: readable forms of the left part, the right part and the new token.
        ids: token ids of the left part, the right part and the new token.
        seam: byte length of the left part (where the new token's halves meet).
        facts: ``(label, value, detail, help)`` shown in the card (all ``str``):
            ``detail`` is a short line under the value.
        tokens_before: training-text tokens before this merge.
        tokens_after: training-text tokens after it.
    """

    step: int
    parts: tuple[str, str, str]
    ids: tuple[int, int, int]
    seam: int
    facts: list[tuple[str, str, str, str]]
    tokens_before: int
    tokens_after: int


@dataclass
class WhyThisPair:
    """The "why this pair" panel of one step.

    Attributes:
        title: heading (plain text), e.g. ``"Why merge #5 joined l + l"``.
        table: the top candidates, best first (a ``pandas.DataFrame``; column
            ``"chosen"`` marks the winner).
        notes: HTML fragments (every token text escaped): the winner, the
            tie-break (when counts tie), the overlap between counted and
            replaced occurrences.
        ranking: the engine's data behind it (:class:`CandidateRanking` for
            BPE, :class:`ScoreRanking` for WordPiece).
        problem: set when the replay disagrees with the trace (a bug: it is shown).
    """

    title: str
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    ranking: CandidateRanking | ScoreRanking | None = None
    problem: str | None = None


class MergeHistory(Protocol):
    """What the Merges page needs from a trained tokenizer and its training text.

    Implementations: :class:`BPEMergeHistory` and :class:`WordPieceMergeHistory`
    (score and pair/part frequencies as ``facts``, a score chart through
    :meth:`figures`, the best-scoring pairs in :meth:`why`).

    Attributes:
        tokenizer: the trained tokenizer at its full size.
        algorithm: the key of the algorithm it replays (``"bpe"``, ``"wordpiece"``; ``"unigram"``: see
            :mod:`ui.merges.pruning`).
        story: how the page tells training: ``"merges"`` (a card per merge, why this pair, the merge
            table) or ``"pruning"`` (Unigram's rounds: :class:`~ui.merges.pruning.UnigramPruningHistory`).
        step_noun: what one step is, in running text (``"merge"``, ``"pruning round"``).
        unit: what a step-0 token is, for captions (``"byte"``, ``"character"``).
        covers_text: the tokens cover the whole text (byte-level BPE); ``False``
            when whitespace between words belongs to no token (WordPiece), so
            the drawing shows the text between tokens uncoloured.
        trainer_view_note: how the drawn segmentation comes about, appended to the step's caption
            (``""``, or WordPiece's "as training segments it").
        pieces_note: a sentence on how pieces are drawn, appended to the step's caption.
        step_zero_note: the caption of step 0.
        n_steps: merges in the trace.
        min_vocab_size: vocabulary size at step 0.
        unique_pretokens: distinct pre-tokens (words) of the training text.
    """

    tokenizer: TrainedTokenizer
    algorithm: str
    story: str
    step_noun: str
    unit: str
    covers_text: bool
    trainer_view_note: str
    pieces_note: str
    step_zero_note: str
    n_steps: int
    min_vocab_size: int
    unique_pretokens: int

    def view(self, k: int):  # pragma: no cover - protocol
        """The text's segmentation after ``k`` merges: an object with ``token_spans(text)``."""
        ...

    def highlight(self, k: int) -> dict[int, int | None]:  # pragma: no cover - protocol
        """Token ids made by merge ``k`` -> seam offset (see :func:`ui.render.tokens_html`)."""
        ...

    def tokens_at(self, k: int) -> int:  # pragma: no cover - protocol
        """Training-text tokens after ``k`` merges."""
        ...

    def card(self, k: int) -> StepCard | None:  # pragma: no cover - protocol
        """The card of merge ``k``; ``None`` at step 0."""
        ...

    def figures(self, k: int) -> list[go.Figure]:  # pragma: no cover - protocol
        """The charts, each marking step ``k``."""
        ...

    def table(self) -> pd.DataFrame:  # pragma: no cover - protocol
        """One row per merge; the first column is ``"merge #"`` (1-based)."""
        ...

    def why(self, k: int) -> WhyThisPair:  # pragma: no cover - protocol
        """The candidates merge ``k`` was chosen from (at step 0: merge 1's)."""
        ...
