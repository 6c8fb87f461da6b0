"""Merge histories: step ``k`` of a trained tokenizer's training, one class per algorithm.

:class:`BPEMergeHistory` is the one for byte-level BPE,
:class:`WordPieceMergeHistory` the one for WordPiece; both provide the members
of :class:`~ui.merges.model.MergeHistory`.  An algorithm names its class in its
registration (:attr:`ui.algorithms.AlgorithmView.history`): the one place a new
algorithm plugs into the Merges page, read by :func:`history_for`.
Unigram's is :class:`~ui.merges.pruning.UnigramPruningHistory`, whose
``story`` is ``"pruning"``: the page tells its rounds instead of merges (in
the browser's player with :func:`ui.merges.page.pruning_panels` under it, or
drawn on the server by :func:`ui.merges.page.pruning_step_view`).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from bpe_core import BPETokenizer, TrainerView, TrainingReplay, WordPieceReplay, WordPieceTokenizer
from bpe_core.interface import TrainedTokenizer
from ui.algorithms import view_of
from ui.merges.figures import bpe_figures, wordpiece_figures
from ui.merges.model import MergeHistory, StepCard, WhyThisPair
from ui.merges.why import bpe_why, wordpiece_why
from ui.render import readable


class BPEMergeHistory:
    """The merge history of a byte-level BPE tokenizer trained here (it has a full trace).

    Args:
        tokenizer: the trained :class:`BPETokenizer` at its full size.
        text: its training text.

    Raises:
        ValueError: the tokenizer has no training trace covering its merges
            (e.g. one built from GPT-2's ranks).
    """

    algorithm = "bpe"
    story = "merges"
    step_noun = "merge"
    unit = "byte"
    covers_text = True
    trainer_view_note = ""
    pieces_note = ""
    step_zero_note = "The text before any merge: one token per byte."

    def __init__(self, tokenizer: BPETokenizer, text: str) -> None:
        trace = tokenizer.trace
        n = tokenizer.max_vocab_size - tokenizer.min_vocab_size
        if tokenizer.training is None or len(trace) != n:
            raise ValueError("this tokenizer has no training trace, so its merges cannot be replayed")
        self.tokenizer = tokenizer.with_vocab_size(tokenizer.max_vocab_size)
        self.text = text
        self.trace = trace
        self.n_steps = n
        self.min_vocab_size = tokenizer.min_vocab_size
        self.unique_pretokens = tokenizer.training.unique_pretokens
        self.text_bytes = len(text.encode("utf-8", errors="surrogatepass"))
        self._replay: TrainingReplay | None = None
        self._table: pd.DataFrame | None = None
        self._labels = [f"{readable(s.left)} + {readable(s.right)} → {readable(s.merged)}" for s in trace]

    def _check(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.n_steps:
            raise ValueError(f"step {k!r} is out of range 0..{self.n_steps}")

    def view(self, k: int) -> BPETokenizer:
        """The tokenizer with its first ``k`` merges (an O(1) view)."""
        self._check(k)
        return self.tokenizer.with_vocab_size(self.min_vocab_size + k)

    def highlight(self, k: int) -> dict[int, int | None]:
        """``{new id of merge k: byte length of its left part}``; empty at step 0."""
        self._check(k)
        if k == 0:
            return {}
        s = self.trace[k - 1]
        return {s.new_id: len(s.left)}

    def tokens_at(self, k: int) -> int:
        """Training-text tokens after ``k`` merges, read off the trace (exact)."""
        self._check(k)
        return self.trace[k - 1].tokens_after if k else self.tokenizer.training.initial_tokens

    def card(self, k: int) -> StepCard | None:
        """The card of merge ``k`` (``None`` at step 0)."""
        self._check(k)
        if k == 0:
            return None
        s = self.trace[k - 1]
        before = self.tokens_at(k - 1)
        overlap = s.count - s.replaced
        return StepCard(
            step=k,
            parts=(readable(s.left), readable(s.right), readable(s.merged)),
            ids=(s.left_id, s.right_id, s.new_id),
            seam=len(s.left),
            facts=[
                (
                    "Pair count",
                    f"{s.count:,}",
                    "when chosen",
                    "Adjacent occurrences of the pair in the training text when it was chosen "
                    "(overlapping ones, as the two pairs in 'aaa', both count).",
                ),
                (
                    "Replaced",
                    f"{s.replaced:,}",
                    f"{overlap:,} overlapped" if overlap else "no overlap",
                    "Occurrences the merge actually replaced, left to right; a token is never used twice.",
                ),
                (
                    "Tokens of the text",
                    f"{before:,} → {s.tokens_after:,}",
                    f"−{before - s.tokens_after:,} ({(before - s.tokens_after) / before:.1%})" if before else "",
                    "Tokens of the whole training text before and after this merge.",
                ),
            ],
            tokens_before=before,
            tokens_after=s.tokens_after,
        )

    def figures(self, k: int) -> list[go.Figure]:
        """Pair count per merge, tokens vs vocabulary size, lengths of the learned tokens; each marks step ``k``."""
        return bpe_figures(self, k)

    def table(self) -> pd.DataFrame:
        """One row per merge: number, parts, new token and id, count, replaced, tokens after."""
        if self._table is None:
            self._table = pd.DataFrame(
                {
                    "merge #": [s.rank + 1 for s in self.trace],
                    "left": [readable(s.left) for s in self.trace],
                    "right": [readable(s.right) for s in self.trace],
                    "new token": [readable(s.merged) for s in self.trace],
                    "id": [s.new_id for s in self.trace],
                    "count": [s.count for s in self.trace],
                    "replaced": [s.replaced for s in self.trace],
                    "tokens after": [s.tokens_after for s in self.trace],
                }
            )
        return self._table

    @property
    def replay(self) -> TrainingReplay:
        """The training text's pre-token table, built on first use."""
        if self._replay is None:
            self._replay = self.tokenizer.replay(self.text)
        return self._replay

    def why(self, k: int) -> WhyThisPair:
        """The top 10 pairs merge ``k`` was chosen from (at step 0, those merge 1 will be chosen from)."""
        return bpe_why(self, k)


class WordPieceMergeHistory:
    """The merge history of a WordPiece tokenizer trained here, in the trainer's own view.

    Step ``k`` shows every word as training held it after the first ``k``
    merges (:class:`bpe_core.wordpiece.trace.WordPieceReplay`), which is not
    what greedy longest-match encoding gives; the card shows the merge's score
    ``freq(pair) / (freq(first) * freq(second))`` and the frequencies behind it.

    Args:
        tokenizer: the trained :class:`WordPieceTokenizer` (any view; the full one is used).
        text: its training text.

    Raises:
        ValueError: the tokenizer has no training trace (e.g. built from a vocab.txt).
    """

    algorithm = "wordpiece"
    story = "merges"
    step_noun = "merge"
    unit = "character"
    covers_text = False
    trainer_view_note = ", as training segments it (not as greedy encoding would)"
    pieces_note = " Pieces of one word touch; the later ones are ## continuations."
    step_zero_note = (
        "The text before any merge: one token per character; the characters of a word after the first "
        "are ## continuations (drawn touching). Whitespace belongs to no token."
    )

    def __init__(self, tokenizer: WordPieceTokenizer, text: str) -> None:
        full = tokenizer.with_vocab_size(tokenizer.max_vocab_size)
        trace = full.trace
        if full.training is None or len(trace) < full.max_vocab_size - full.min_vocab_size:
            raise ValueError("this tokenizer has no training trace, so its merges cannot be replayed")
        self.tokenizer = full
        self.text = text
        self.trace = trace
        self.n_steps = len(trace)
        self.min_vocab_size = full.min_vocab_size
        self.unique_pretokens = full.training.unique_pretokens
        self.text_bytes = len(text.encode("utf-8", errors="surrogatepass"))
        self.prefix = full.continuing_subword_prefix
        self._replay: WordPieceReplay | None = None
        self._table: pd.DataFrame | None = None
        self._labels = [f"{s.left} + {s.right} → {s.merged}" for s in trace]
        sizes = [self.min_vocab_size]
        for s in trace:
            sizes.append(sizes[-1] + (1 if s.added else 0))
        self._sizes = sizes  # vocabulary size after k merges (a merge that re-makes a token adds none)

    def _check(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.n_steps:
            raise ValueError(f"step {k!r} is out of range 0..{self.n_steps}")

    @property
    def replay(self) -> WordPieceReplay:
        """The training words, replayed through the trace (built on first use)."""
        if self._replay is None:
            self._replay = self.tokenizer.replay(self.text)
        return self._replay

    def view(self, k: int) -> TrainerView:
        """The trainer's segmentation after ``k`` merges (``token_spans(text)``)."""
        self._check(k)
        return self.replay.view(k)

    def _chars(self, token: str) -> int:
        return len(token) - len(self.prefix) if token.startswith(self.prefix) else len(token)

    def highlight(self, k: int) -> dict[int, int | None]:
        """``{id of the token merge k made: UTF-8 length of its left part}``; empty at step 0.

        For a ``##`` token the offset counts the prefix's bytes too (the
        drawing skips them, see :func:`ui.render.tokens_html`).  When merge ``k``
        re-made a token an earlier merge had made (``added`` false), the
        earlier occurrences of that token are highlighted too: they are the
        same id.
        """
        self._check(k)
        if k == 0:
            return {}
        s = self.trace[k - 1]
        return {s.new_id: len(s.left.encode("utf-8"))}

    def tokens_at(self, k: int) -> int:
        """Tokens of the training text in the trainer's segmentation after ``k`` merges (from the trace, exact)."""
        self._check(k)
        return self.trace[k - 1].tokens_after if k else self.tokenizer.training.initial_tokens

    def vocab_size_at(self, k: int) -> int:
        """Vocabulary size after ``k`` merges."""
        self._check(k)
        return self._sizes[k]

    def card(self, k: int) -> StepCard | None:
        """The card of merge ``k`` (``None`` at step 0): score, pair and part frequencies, tokens before/after."""
        self._check(k)
        if k == 0:
            return None
        s = self.trace[k - 1]
        before = self.tokens_at(k - 1)
        facts = [
            (
                "Score",
                f"{s.score:.4g}",
                f"= {s.pair_freq:,} / ({s.left_freq:,} × {s.right_freq:,})",
                "freq(pair) / (freq(left) × freq(right)): how much more often the two parts occur together "
                "than their own frequencies predict. The highest score is merged.",
            ),
            (
                "Pair frequency",
                f"{s.pair_freq:,}",
                "when chosen",
                "Adjacent occurrences of the pair in the training words (each word weighted by its count).",
            ),
            (
                "Part frequencies",
                f"{s.left_freq:,} · {s.right_freq:,}",
                f"{s.left} · {s.right}",
                "Occurrences of the left and right parts in the training text's segmentation at that moment.",
            ),
            (
                "Tokens of the text",
                f"{before:,} → {s.tokens_after:,}",
                f"−{before - s.tokens_after:,} ({(before - s.tokens_after) / before:.1%})" if before else "",
                "Tokens of the whole training text, as training segments it, before and after this merge.",
            ),
        ]
        if not s.added:
            facts.append(("New id", "none", f"{s.merged} already existed", "Another pair made this token earlier."))
        return StepCard(
            step=k,
            parts=(s.left, s.right, s.merged),
            ids=(s.left_id, s.right_id, s.new_id),
            seam=len(s.left),
            facts=facts,
            tokens_before=before,
            tokens_after=s.tokens_after,
        )

    def figures(self, k: int) -> list[go.Figure]:
        """Score per merge, training-text tokens vs vocabulary size, lengths of the learned tokens; each marks ``k``."""
        return wordpiece_figures(self, k)

    def table(self) -> pd.DataFrame:
        """One row per merge: number, parts, new token and id, score, frequencies, tokens after."""
        if self._table is None:
            t = self.trace
            self._table = pd.DataFrame(
                {
                    "merge #": [s.rank + 1 for s in t],
                    "left": [s.left for s in t],
                    "right": [s.right for s in t],
                    "new token": [s.merged for s in t],
                    "id": [s.new_id for s in t],
                    "score": [s.score for s in t],
                    "pair freq": [s.pair_freq for s in t],
                    "left freq": [s.left_freq for s in t],
                    "right freq": [s.right_freq for s in t],
                    "tokens after": [s.tokens_after for s in t],
                }
            )
        return self._table

    def why(self, k: int) -> WhyThisPair:
        """The top 10 pairs by score that merge ``k`` was chosen from (at step 0, merge 1's)."""
        return wordpiece_why(self, k)


def history_for(tokenizer: TrainedTokenizer, text: str) -> MergeHistory:
    """The merge history of a trained tokenizer: its algorithm's :attr:`ui.algorithms.AlgorithmView.history`.

    Args:
        tokenizer: a tokenizer trained here (any view; the full one is replayed).
        text: its training text.

    Raises:
        NotImplementedError: the tokenizer's algorithm has no merge history yet.
        ValueError: a tokenizer without a training trace.
    """
    try:
        history = view_of(tokenizer.algorithm).history
    except ValueError:  # an algorithm the engine does not know has no view, so no history either
        history = None
    if history is None:
        raise NotImplementedError(
            f"The Merges page does not show {tokenizer.name} yet; choose Byte-level BPE in the sidebar."
        )
    return history(tokenizer, text)
