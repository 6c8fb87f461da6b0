"""The Merges page's building blocks: the step control, the merge card, the charts, the tables.

The page works on a *merge history*: an object that knows, for a trained
tokenizer and its training text, what step ``k`` looks like.
:class:`BPEMergeHistory` is the one for byte-level BPE,
:class:`WordPieceMergeHistory` the one for WordPiece; both provide the members
of :class:`MergeHistory`, and :func:`history_for` picks one.

Step ``k`` (``0 <= k <= n_steps``) means *the first k merges applied*; merge
``#k`` (1-based, rank ``k - 1``) is the one just made.  Step 0 is the raw bytes
(BPE) or the characters (WordPiece).
"""

from __future__ import annotations

import dataclasses
import functools
import html
from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bpe_core import BPETokenizer, WordPieceTokenizer
from bpe_core.pretokenize import pretoken_prefix, tokenizer_split
from bpe_core.spans import TokenSpan
from bpe_core.trace import CandidateRanking, TrainingReplay
from bpe_core.wordpiece_trace import ScoreRanking, TrainerView, WordPieceReplay
from ui import charts, render
from ui import state_keys as sk
from ui.inputs import Settings
from ui.render import readable
from ui.training import train

MAX_STEP_CHARS = 4_000
"""The text drawn at each step is at most this many characters (a prefix on a pre-token boundary)."""

MAX_STEP_TOKENS = 4_000
"""... and at most this many tokens."""

LARGE_TABLE = 50_000
"""Above this many distinct pre-tokens, "why this pair" is computed on request, not at every step."""

SPEEDS: dict[str, tuple[float, int]] = {
    "0.5 / s": (2.0, 1),
    "1 / s": (1.0, 1),
    "2 / s": (0.5, 1),
    "5 / s": (1.0, 5),
    "10 / s": (1.0, 10),
    "50 / s": (1.0, 50),
}
"""Play speeds: label -> (seconds between ticks, merges advanced per tick).

Ticks are never closer than half a second: each one redraws the text, the card,
three charts and two tables, and a slower browser would fall behind.
"""

DEFAULT_SPEED = "1 / s"


# ---------------------------------------------------------------------------
# the merge history: what step k looks like


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
        algorithm: ``"bpe"`` or ``"wordpiece"``.
        unit: what a step-0 token is, for captions (``"byte"``, ``"character"``).
        n_steps: merges in the trace.
        min_vocab_size: vocabulary size at step 0.
        unique_pretokens: distinct pre-tokens (words) of the training text.
    """

    tokenizer: BPETokenizer | WordPieceTokenizer
    algorithm: str
    unit: str
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


def _why_start(history, k: int):
    """Start of ``why(k)``: ``(merge_no, ranking, step)``, or a :class:`WhyThisPair` when nothing was merged."""
    history._check(k)
    if history.n_steps == 0:
        return WhyThisPair("No merges", pd.DataFrame(), ["No adjacent pair was left to merge."])
    merge_no = max(k, 1)
    return merge_no, history.replay.candidates(merge_no - 1, top=10), history.trace[merge_no - 1]


def _disagreement(merge_no: int, replayed: object, traced: object) -> str:
    """The message shown when the replay's winner is not the trace's merge (a bug, never expected)."""
    return (
        f"Replaying the training text disagrees with the trace at merge #{merge_no}: "
        f"replay {replayed}, trace {traced}. Please report this."
    )


def _tie_lines_html(explained: list[str]) -> str:
    """The tie-break explanations as list items: the first three shown, the rest folded."""
    e = html.escape
    lines = "".join(f"<li>{e(line)}</li>" for line in explained[:3])
    if len(explained) > 3:
        rest = "".join(f"<li>{e(line)}</li>" for line in explained[3:])
        lines += f"<details><summary>{len(explained) - 3} more</summary>{rest}</details>"
    return f"<ul>{lines}</ul>"


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
    unit = "byte"

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
        self._check(k)
        trace = self.trace
        sizes = list(range(self.min_vocab_size, self.min_vocab_size + self.n_steps + 1))
        tokens = [self.tokens_at(0)] + [s.tokens_after for s in trace]
        return [
            charts.merge_pair_count_figure([s.count for s in trace], k, labels=self._labels),
            charts.merge_tokens_figure(sizes, tokens, self.min_vocab_size + k, text_bytes=self.text_bytes),
            charts.merge_length_figure([len(s.merged) for s in trace[:k]], len(trace[k - 1].merged) if k else None),
        ]

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
            self._replay = TrainingReplay.from_text(self.tokenizer, self.text)
        return self._replay

    def why(self, k: int) -> WhyThisPair:
        """The top 10 pairs merge ``k`` was chosen from (at step 0, those merge 1 will be chosen from)."""
        start = _why_start(self, k)
        if isinstance(start, WhyThisPair):
            return start
        merge_no, ranking, s = start
        w = ranking.winner
        problem = None
        if w is None or (w.left_id, w.right_id, w.count, w.replaceable) != (s.left_id, s.right_id, s.count, s.replaced):
            problem = _disagreement(merge_no, w, s)
        verb = "will join" if k == 0 else "joined"
        title = f"Why merge #{merge_no} {verb} {readable(s.left)} + {readable(s.right)}"  # plain text
        table = pd.DataFrame(
            {
                "chosen": ["✔" if i == 0 else "" for i in range(len(ranking.candidates))],
                "left": [readable(c.left) for c in ranking.candidates],
                "right": [readable(c.right) for c in ranking.candidates],
                "new token": [readable(c.merged) for c in ranking.candidates],
                "count": [c.count for c in ranking.candidates],
                "would replace": [c.replaceable for c in ranking.candidates],
            }
        )
        e = html.escape
        pair = f"<code>{e(readable(s.left))}</code> + <code>{e(readable(s.right))}</code>"
        notes = [
            f"After {merge_no - 1:,} merge{'' if merge_no == 2 else 's'} the training text holds "
            f"<b>{ranking.distinct_pairs:,}</b> different adjacent pairs (inside pre-tokens). "
            f"The most frequent, {pair} ({s.count:,}), is merged."
        ]
        if ranking.tied > 1:
            shown = sum(1 for c in ranking.candidates if c.count == s.count)
            more = ranking.tied - shown
            lines = _tie_lines_html(ranking.tie_break_lines())
            notes.append(
                f"<b>Tie:</b> {ranking.tied:,} pairs have count {s.count:,}. The rule: ties go to the "
                "lexicographically greatest pair, comparing the left parts' bytes first, then the right parts'."
                + (f" ({more:,} more tied pairs are not in the table.)" if more > 0 else "")
                + lines
            )
        else:
            notes.append("No tie: this pair's count is the only maximum, so the tie-break rule is not needed.")
        if w is not None and w.count != w.replaceable:
            example = f" in <code>{e(readable(w.overlap_example))}</code>" if w.overlap_example else ""
            notes.append(
                f"<b>Counted {w.count:,}, replaced {w.replaceable:,}:</b> occurrences overlap{example}, where "
                "neighbouring pairs share a token; merging goes left to right and uses each token once, "
                "so training counts more pairs than it can replace."
            )
        elif w is not None:
            notes.append(f"All {w.count:,} counted occurrences are replaced: none overlap.")
        return WhyThisPair(title, table, notes, ranking, problem)


class WordPieceMergeHistory:
    """The merge history of a WordPiece tokenizer trained here, in the trainer's own view.

    Step ``k`` shows every word as training held it after the first ``k``
    merges (:class:`bpe_core.wordpiece_trace.WordPieceReplay`), which is not
    what greedy longest-match encoding gives; the card shows the merge's score
    ``freq(pair) / (freq(first) * freq(second))`` and the frequencies behind it.

    Args:
        tokenizer: the trained :class:`WordPieceTokenizer` (any view; the full one is used).
        text: its training text.

    Raises:
        ValueError: the tokenizer has no training trace (e.g. built from a vocab.txt).
    """

    algorithm = "wordpiece"
    unit = "character"

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
            self._replay = WordPieceReplay.from_text(self.tokenizer, self.text)
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
        self._check(k)
        trace = self.trace
        scores = charts.merge_pair_count_figure([s.score for s in trace], k, labels=self._labels, y_title="score")
        scores.update_layout(title={"text": "Score at each merge"})
        scores.data[0].hovertemplate = "merge #%{x}<br>%{text}<br>score %{y:.4g}<extra></extra>"
        scores.data[1].hovertemplate = "this step: merge #%{x}<br>score %{y:.4g}<extra></extra>"
        tokens = [self.tokens_at(0)] + [s.tokens_after for s in trace]
        vs = self._sizes
        curve = charts.merge_tokens_figure(vs, tokens, vs[k], text_bytes=self.text_bytes)
        # a merge that adds no id repeats a size: put the marker on step k's own point
        curve.data[1].y = [tokens[k]]
        curve.data[1].customdata = [self.text_bytes / tokens[k] if tokens[k] else 0.0]
        learned = [self._chars(s.merged) for s in trace[:k] if s.added]
        lengths = charts.merge_length_figure(learned, self._chars(trace[k - 1].merged) if k else None)
        lengths.update_xaxes(title="token length (characters, ## not counted)")
        lengths.data[0].hovertemplate = "%{y:,} tokens of %{x} characters<extra></extra>"
        return [scores, curve, lengths]

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
        start = _why_start(self, k)
        if isinstance(start, WhyThisPair):
            return start
        merge_no, ranking, s = start
        w = ranking.winner
        problem = None
        if w is None or (w.left_id, w.right_id, w.pair_freq, w.left_freq, w.right_freq) != (
            s.left_id, s.right_id, s.pair_freq, s.left_freq, s.right_freq,
        ):  # fmt: skip
            problem = _disagreement(merge_no, w, s)
        verb = "will join" if k == 0 else "joined"
        title = f"Why merge #{merge_no} {verb} {s.left} + {s.right}"  # plain text
        cands = ranking.candidates
        table = pd.DataFrame(
            {
                "chosen": ["✔" if i == 0 else "" for i in range(len(cands))],
                "left": [c.left for c in cands],
                "right": [c.right for c in cands],
                "new token": [c.merged for c in cands],
                "score": [float(c.score) for c in cands],
                "pair freq": [c.pair_freq for c in cands],
                "left freq": [c.left_freq for c in cands],
                "right freq": [c.right_freq for c in cands],
                "first seen in": [f"#{c.first_word + 1} {c.word}" for c in cands],
            }
        )
        e = html.escape
        pair = f"<code>{e(s.left)}</code> + <code>{e(s.right)}</code>"
        notes = [
            f"After {merge_no - 1:,} merge{'' if merge_no == 2 else 's'} the training words hold "
            f"<b>{ranking.distinct_pairs:,}</b> different adjacent pairs. Each is scored "
            "freq(pair) / (freq(left) × freq(right)); the highest, "
            f"{pair} with {s.pair_freq:,} / ({s.left_freq:,} × {s.right_freq:,}) = {s.score:.4g}, is merged."
        ]
        m = ranking.most_frequent
        if m is not None and w is not None and (m.left_id, m.right_id) != (w.left_id, w.right_id):
            notes.append(
                f"The most frequent pair, <code>{e(m.left)}</code> + <code>{e(m.right)}</code> "
                f"({m.pair_freq:,} times), scores only {float(m.score):.4g}: its parts are common on their own "
                f"({m.left_freq:,} and {m.right_freq:,}). BPE would merge it; WordPiece prefers pairs whose parts "
                "rarely occur apart."
            )
        if ranking.tied > 1:
            shown = sum(1 for c in cands if c.score == w.score)
            more = ranking.tied - shown
            lines = _tie_lines_html(ranking.tie_break_lines())
            notes.append(
                f"<b>Tie:</b> {ranking.tied:,} pairs have exactly the score {e(str(w.score))}. The rule: ties go to "
                "the pair whose first occurrence comes earliest when scanning the words in order of first "
                "appearance, left to right."
                + (f" ({more:,} more tied pairs are not in the table.)" if more > 0 else "")
                + lines
            )
        else:
            notes.append("No tie: this pair's score is the only maximum, so the tie-break rule is not needed.")
        if s.replaced != s.pair_freq:
            notes.append(
                f"<b>Counted {s.pair_freq:,}, replaced {s.replaced:,}:</b> occurrences overlap where neighbouring "
                "pairs share a token; merging goes left to right and uses each token once."
            )
        return WhyThisPair(title, table, notes, ranking, problem)


def history_for(tokenizer: object, text: str) -> MergeHistory:
    """The merge history of a trained tokenizer: the one place a new algorithm plugs in.

    Raises:
        NotImplementedError: the tokenizer's algorithm has no merge history yet.
        ValueError: a BPE tokenizer without a training trace.
    """
    if isinstance(tokenizer, BPETokenizer):
        return BPEMergeHistory(tokenizer, text)
    if isinstance(tokenizer, WordPieceTokenizer):
        return WordPieceMergeHistory(tokenizer, text)
    raise NotImplementedError(
        f"The Merges page does not show {getattr(tokenizer, 'name', type(tokenizer).__name__)} yet; "
        "choose Byte-level BPE in the sidebar."
    )


@st.cache_resource(max_entries=4, show_spinner=False)
def cached_history(
    text: str,
    algorithm: str,
    pattern: str,
    max_vocab: int,
    special_tokens: tuple[str, ...],
    lowercase: bool = False,
    imported: str | None = None,
) -> MergeHistory:
    """The (cached) merge history for the sidebar's settings; trains only if :func:`ui.training.train` has not."""
    tok = train(text, algorithm, pattern, max_vocab, special_tokens, lowercase=lowercase, imported=imported)
    return history_for(tok, text)


def history_or_stop(settings: Settings) -> MergeHistory:
    """The merge history for the sidebar's settings, or a message in the page and ``st.stop()``."""
    try:
        history = cached_history(
            settings.text,
            settings.algorithm,
            settings.pattern,
            settings.max_vocab,
            settings.special_tokens,
            lowercase=settings.lowercase,
            imported=settings.imported,
        )
    except NotImplementedError as exc:
        st.info(str(exc), icon=":material/info:")
        st.stop()
    except (ValueError, TypeError) as exc:
        st.error(f"Cannot replay the merges: {exc}", icon=":material/error:")
        st.stop()
    if history.n_steps == 0:
        st.info("No merge was learned from this text, so there is nothing to step through.", icon=":material/info:")
        st.stop()
    return history


def filter_merges(table: pd.DataFrame, query: str) -> pd.DataFrame:
    """Rows of the merge table matching a search.

    Args:
        table: :meth:`MergeHistory.table` output.
        query: text to look for, case-insensitively, in the ``left``, ``right``
            and ``new token`` columns (a space may be typed as a space or as
            ``·``); a whole number also matches ``merge #`` and ``id`` exactly.
            A blank query matches nothing special: the table comes back whole.

    Returns:
        The matching rows (original index kept).
    """
    if not query.strip():
        return table
    q = query.translate(render.WS_MARKS).casefold()
    mask = pd.Series(False, index=table.index)
    for col in ("left", "right", "new token"):
        mask |= table[col].str.casefold().str.contains(q, regex=False)
    digits = query.strip()
    if digits.isdigit():
        mask |= (table["merge #"] == int(digits)) | (table["id"] == int(digits))
    return table[mask]


# ---------------------------------------------------------------------------
# drawing


CARD_CSS = """
<style>
.merge-card { display: flex; align-items: center; flex-wrap: wrap; gap: 10px; padding: 14px 16px;
  border: 1px solid rgba(128,128,128,.3); border-radius: 10px; background: rgba(128,128,128,.04); }
.merge-card .no { font-size: 13px; opacity: .7; width: 100%; margin-bottom: -4px; }
.merge-card .chip { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 22px;
  padding: 4px 10px; border-radius: 6px; background: #a0c4ff; color: #1b1b1f; white-space: pre; }
.merge-card .chip.new { background: #ffd166; outline: 2px solid #d1495b; font-weight: 600; }
.merge-card .chip small { display: block; font-size: 11px; opacity: .65; text-align: center; }
.merge-card .op { font-size: 22px; opacity: .6; }
.merge-card .facts { display: flex; flex-wrap: wrap; gap: 8px; width: 100%; margin-top: 6px; }
.merge-card .fact { flex: 1 1 auto; border: 1px solid rgba(128,128,128,.25); border-radius: 8px; padding: 6px 10px; }
.merge-card .fact .l { font-size: 12px; opacity: .7; white-space: nowrap; }
.merge-card .fact .v { font-size: 19px; font-weight: 600; white-space: nowrap; }
.merge-card .fact .d { font-size: 12px; opacity: .65; white-space: nowrap; }
.merge-card .seam { display: inline-block; width: 0; height: 1em; vertical-align: -.12em; margin: 0 2px;
  border-left: 2px solid #d1495b; }
</style>
"""


NOTES_CSS = """
<style>
.why-title { font-weight: 600; font-size: 16px; }
.why-notes p { margin: 0 0 10px 0; line-height: 1.55; }
.why-notes ul { margin: 6px 0 0 0; padding-left: 20px; }
.why-notes summary { cursor: pointer; opacity: .75; font-size: 14px; }
.why-notes code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 14px;
  background: #a0c4ff; color: #1b1b1f; padding: 1px 5px; border-radius: 4px; white-space: pre; }
</style>
"""


def card_html(card: StepCard | None, tokens_at_zero: int | None = None, unit: str = "byte") -> str:
    """HTML of the merge card: ``[left] + [right] → [new]`` with ids; every token text is escaped.

    ``unit`` names what a token is at step 0 (``"byte"`` for BPE, ``"character"`` for WordPiece).
    """
    if card is None:
        n = f" The training text is {tokens_at_zero:,} tokens, one per {unit}." if tokens_at_zero else ""
        return (
            CARD_CSS + '<div class="merge-card"><div class="no">Step 0</div>'
            f"<div>No merge yet: every {unit} is its own token.{n} Press <b>Next</b> or <b>Play</b>.</div></div>"
        )
    left, right, new = (html.escape(p, quote=True) for p in card.parts)
    lid, rid, nid = card.ids

    def chip(content: str, tid: int, extra: str = "") -> str:
        return f'<span class="chip{extra}">{content}<small>id {tid}</small></span>'

    return (
        CARD_CSS + '<div class="merge-card">'
        f'<div class="no">Merge #{card.step:,}</div>'
        + chip(left, lid) + '<span class="op">+</span>' + chip(right, rid)
        + '<span class="op">→</span>' + chip(f'{left}<span class="seam"></span>{right}' if left + right == new else new,
                                             nid, " new")
        + '<div class="facts">' + "".join(
            f'<div class="fact" title="{html.escape(h or "", quote=True)}"><div class="l">{html.escape(label)}</div>'
            f'<div class="v">{html.escape(value)}</div><div class="d">{html.escape(detail)}</div></div>'
            for label, value, detail, h in card.facts)
        + "</div></div>"
    )  # fmt: skip


def drawn_text(history: MergeHistory, text: str) -> str:
    """The part of ``text`` the page draws: about :data:`MAX_STEP_CHARS` characters, cut at a pre-token boundary.

    The cut is a boundary of the tokenizer's pre-tokenization (WordPiece: a
    word boundary), so the drawn tokens are exactly the whole text's first
    tokens at every step; a word running far past the cap is cut at
    ``4 * MAX_STEP_CHARS`` characters (see :func:`bpe_core.pretokenize.pretoken_prefix`).
    """
    pattern, specials = tokenizer_split(history.tokenizer)
    return pretoken_prefix(text, MAX_STEP_CHARS, pattern, specials, slack=3 * MAX_STEP_CHARS)


def step_spans(history: MergeHistory, k: int, text: str) -> list[TokenSpan]:
    """The tokens at step ``k`` of the drawn part of ``text`` (:func:`drawn_text`)."""
    return history.view(k).token_spans(drawn_text(history, text))


def step_text_html(
    history: MergeHistory, k: int, text: str, show_whitespace: bool = True, spans: list[TokenSpan] | None = None
) -> tuple[str, int]:
    """The text segmented at step ``k`` with merge ``k``'s tokens highlighted.

    Args:
        history: the merge history.
        k: the step.
        text: the training text (a prefix of it is drawn).
        show_whitespace: draw spaces and newlines visibly.
        spans: :func:`step_spans` output, when the caller already has it.

    Returns:
        ``(html, occurrences)``: the HTML (style sheet included) and how many
        tokens of the drawn text merge ``k`` produced.
    """
    prefix = drawn_text(history, text)
    spans = step_spans(history, k, text) if spans is None else spans
    highlight = history.highlight(k)
    occurrences = sum(1 for s in spans if s.id in highlight)
    shown = spans[:MAX_STEP_TOKENS]
    # WordPiece drops whitespace: draw the text between words uncoloured
    gaps = prefix if getattr(history, "algorithm", "bpe") == "wordpiece" else None
    body = render.tokens_html(
        shown, show_whitespace=show_whitespace, highlight=highlight, text=gaps, max_rank=max(history.n_steps - 1, 0)
    )
    if len(prefix) < len(text) or len(shown) < len(spans):
        chars = shown[-1].end if shown else 0
        body += (
            f'<div class="bpe-legend">Showing the first {chars:,} of {len(text):,} characters of the training '
            "text; every count covers all of it.</div>"
        )
    return render.CSS + body, occurrences


EXAMPLES_CSS = """
<style>
.merge-examples { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.merge-examples .bpe-view { display: inline-block; padding: 2px 8px; max-height: none; line-height: 1.7; }
.merge-examples .lead { font-size: 13px; opacity: .7; }
</style>
"""


def examples_html(
    spans: list[TokenSpan],
    highlight: dict[int, int | None],
    limit: int = 6,
    context: int = 2,
    text: str | None = None,
) -> str:
    """Up to ``limit`` distinct places where the highlighted tokens occur, each with ``context`` tokens around.

    Args:
        spans: the drawn tokens (:func:`step_spans`).
        highlight: as :meth:`MergeHistory.highlight`.
        limit: most examples to show.
        context: tokens shown on each side.
        text: the text the spans index into, when tokens do not cover it all
            (WordPiece): the whitespace between a window's words is drawn.

    Returns:
        HTML (escaped, style sheets included), or ``""`` when nothing is highlighted.
    """
    if not highlight:
        return ""
    seen: set[tuple[str, ...]] = set()
    parts = []
    for i, s in enumerate(spans):
        if s.id not in highlight:
            continue
        window = spans[max(0, i - context) : i + context + 1]
        key = tuple(w.display for w in window)
        if key in seen:
            continue
        seen.add(key)
        if text is None:
            parts.append(render.tokens_html(window, highlight=highlight))
        else:  # offsets relative to the window, so that only the gaps inside it are drawn
            base = window[0].start
            moved = [dataclasses.replace(w, start=w.start - base, end=w.end - base) for w in window]
            parts.append(render.tokens_html(moved, highlight=highlight, text=text[base : window[-1].end]))
        if len(parts) >= limit:
            break
    if not parts:
        return ""
    return (
        render.CSS + EXAMPLES_CSS + '<div class="merge-examples"><span class="lead">In the text:</span>'
        + "".join(parts) + "</div>"
    )  # fmt: skip


# ---------------------------------------------------------------------------
# the step control (a fragment, so that a step change or a play tick reruns only this part)

STEP_KEY = sk.MERGE_STEP
PLAYING_KEY = sk.MERGE_PLAYING
SPEED_KEY = sk.MERGE_SPEED
TABLE_KEY = sk.MERGE_TABLE
_TOUCHED = sk.MERGE_TOUCHED
_SHOWN = sk.MERGE_SHOWN_STEP
_FULL_RERUN = sk.MERGE_FULL_RERUN


def _clamp(k: int, n: int) -> int:
    return min(max(int(k), 0), n)


def _touch() -> None:
    st.session_state[_TOUCHED] = True


def _go(n: int, delta: int | None = None, to: int | None = None) -> None:
    ss = st.session_state
    ss[STEP_KEY] = _clamp(to if to is not None else ss.get(STEP_KEY, 0) + (delta or 0), n)
    _touch()


def _toggle_play(n: int) -> None:
    ss = st.session_state
    playing = not ss.get(PLAYING_KEY, False)
    if playing and ss.get(STEP_KEY, 0) >= n:
        ss[STEP_KEY] = 0  # play from the start again
    ss[PLAYING_KEY] = playing
    ss[_FULL_RERUN] = True  # the fragment's timer is set when the page runs: rerun it
    _touch()


def _speed_changed() -> None:
    if st.session_state.get(PLAYING_KEY):
        st.session_state[_FULL_RERUN] = True  # the timer's interval may change
    _touch()


def _table_clicked(key: str, numbers: list[int], shown_step: int) -> None:
    """A row of the merge table was selected: jump to its step (and stop playing).

    The browser also reports the table's default selection (the row of the step
    it was drawn for), possibly after the step has moved on; that is not a click
    and is ignored, as is a click that only clears the selection.
    """
    ss = st.session_state
    rows = ss.get(key, {}).get("selection", {}).get("rows", [])
    if not rows or rows[0] >= len(numbers) or numbers[rows[0]] == shown_step:
        return
    ss[STEP_KEY] = int(numbers[rows[0]])
    if ss.get(PLAYING_KEY):
        ss[PLAYING_KEY] = False
        ss[_FULL_RERUN] = True
    _touch()


def reset_for(history: MergeHistory) -> None:
    """Reset the step to 1 (or a shared link's step) and stop playing when a different history is shown."""
    ss = st.session_state
    owner = sk.owner_key(STEP_KEY)
    if ss.get(owner) != id(history):
        ss[owner] = id(history)
        linked = ss.pop(sk.PENDING_STEP, None)  # a step from a shared link, once
        ss[STEP_KEY] = min(1, history.n_steps) if linked is None else linked
        ss[PLAYING_KEY] = False
    ss[STEP_KEY] = _clamp(ss.get(STEP_KEY, 1), history.n_steps)
    ss.setdefault(SPEED_KEY, DEFAULT_SPEED)


def advance_if_playing(n: int) -> None:
    """On a play tick (a run not caused by a control), move the step on; stop at the end.

    A run is a tick unless a control flagged it (``_TOUCHED``) or the step differs
    from the one last drawn (the slider was moved).  Widget callbacks cannot tell:
    the browser echoes a slider value set from code back as a change.
    """
    ss = st.session_state
    if ss.pop(_FULL_RERUN, False):
        st.rerun()  # keeps _TOUCHED, so the full run that follows does not advance
    touched = ss.pop(_TOUCHED, False) or ss.get(STEP_KEY) != ss.get(_SHOWN, ss.get(STEP_KEY))
    if ss.get(PLAYING_KEY) and not touched:
        stride = SPEEDS.get(ss.get(SPEED_KEY), SPEEDS[DEFAULT_SPEED])[1]
        ss[STEP_KEY] = _clamp(ss.get(STEP_KEY, 0) + stride, n)
        if ss[STEP_KEY] >= n:
            ss[PLAYING_KEY] = False
            ss[_FULL_RERUN] = True  # drop the timer on the next run
            ss[_TOUCHED] = True


def controls(n: int) -> int:
    """Draw first/previous/play/next/last, the speed and the step slider; return the step."""
    ss = st.session_state
    playing = ss.get(PLAYING_KEY, False)
    k = ss.get(STEP_KEY, 0)
    cols = st.columns([1, 1, 1.25, 1, 1, 2.6], vertical_alignment="bottom")
    cols[0].button(
        "First", key=sk.MERGE_FIRST, icon=":material/first_page:", on_click=_go, args=(n,), kwargs={"to": 0},
        disabled=k == 0, width="stretch", help="Step 0: no merge yet",
    )  # fmt: skip
    cols[1].button(
        "Prev", key=sk.MERGE_PREV, icon=":material/chevron_left:", on_click=_go, args=(n, -1),
        disabled=k == 0, width="stretch", help="One merge back",
    )  # fmt: skip
    cols[2].button(
        "Pause" if playing else "Play", key=sk.MERGE_PLAY,
        icon=":material/pause:" if playing else ":material/play_arrow:",
        type="primary", on_click=_toggle_play, args=(n,), width="stretch",
        help="Advance through the merges by themselves at the chosen speed",
    )  # fmt: skip
    cols[3].button(
        "Next", key=sk.MERGE_NEXT, icon=":material/chevron_right:", on_click=_go, args=(n, 1),
        disabled=k >= n, width="stretch", help="One merge forward",
    )  # fmt: skip
    cols[4].button(
        "Last", key=sk.MERGE_LAST, icon=":material/last_page:", on_click=_go, args=(n,), kwargs={"to": n},
        disabled=k >= n, width="stretch", help=f"Step {n:,}: every merge applied",
    )  # fmt: skip
    cols[5].select_slider(
        "Play speed (merges per second)", options=list(SPEEDS), key=SPEED_KEY, on_change=_speed_changed,
        persist_state="session",
    )  # fmt: skip
    return st.slider(
        "Merge step",
        min_value=0,
        max_value=n,
        key=STEP_KEY,
        persist_state="session",
        help="Step k shows the text after the first k merges, with merge #k highlighted.",
    )


def merge_table(history: MergeHistory, k: int) -> None:
    """The searchable merge table, with merge ``k``'s row selected; clicking a row jumps to it."""
    table = history.table()
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    query = c1.text_input(
        "Find a merge",
        key=sk.MERGE_QUERY,
        placeholder="a token such as ·the, or a merge number / id",
        help="Searches the left, right and new-token columns (case-insensitive); a number also matches merge # and id.",
    )
    everything = c2.toggle(
        "All merges", key=sk.MERGE_TABLE_ALL, persist_state="session", help="List every merge instead of a window"
    )
    if query.strip():
        rows = filter_merges(table, query)
        st.caption(f"{len(rows):,} of {len(table):,} merges match. Click a row to jump to that step.")
    elif everything:
        rows = table
        st.caption(f"All {len(table):,} merges; merge #{k:,} is selected. Click a row to jump to that step.")
    else:
        lo = max(0, k - 6)
        rows = table.iloc[lo : lo + 13]
        st.caption(f"Merges around step {k:,} (type above to search all {len(table):,}). Click a row to jump to it.")
    numbers = [int(x) for x in rows["merge #"]]
    # A selection set from code reaches the browser only when the table first appears, so the table
    # gets a new key for each step and row set, with the current row as its default selection.
    key = f"{TABLE_KEY}_{k}_{hash(tuple(numbers))}"
    st.dataframe(
        rows,
        key=key,
        hide_index=True,
        on_select=functools.partial(_table_clicked, key, numbers, k),
        selection_mode="single-row",
        selection_default={"selection": {"rows": [numbers.index(k)] if k in numbers else []}},
        width="stretch",
        height=min(38 + 35 * max(len(rows), 1), 492),
        column_config={
            "merge #": st.column_config.NumberColumn(format="%d", width="small"),
            "left": st.column_config.TextColumn(width="small"),
            "right": st.column_config.TextColumn(width="small"),
            "new token": st.column_config.TextColumn(width="small"),
            "id": st.column_config.NumberColumn(format="%d", width="small"),
            "count": st.column_config.NumberColumn(format="localized"),
            "replaced": st.column_config.NumberColumn(format="localized"),
            "score": st.column_config.NumberColumn(format="%.4g"),
            "pair freq": st.column_config.NumberColumn(format="localized"),
            "left freq": st.column_config.NumberColumn(format="localized"),
            "right freq": st.column_config.NumberColumn(format="localized"),
            "tokens after": st.column_config.NumberColumn(format="localized"),
        },
    )


def why_panel(history: MergeHistory, k: int, playing: bool) -> None:
    """The "why this pair" panel: top candidates, tie-break in words, counted vs replaced."""
    if history.unique_pretokens > LARGE_TABLE:
        if playing:
            st.caption("Paused on large texts: the candidates are computed when you stop.")
            return
        if not st.toggle(
            f"Compute the candidates ({history.unique_pretokens:,} distinct pre-tokens, may take seconds)",
            key=sk.MERGE_WHY_LARGE,
        ):
            return
    with st.spinner("Replaying the merges…"):
        why = history.why(k)
    st.html(f'{NOTES_CSS}<div class="why-title">{html.escape(why.title)}</div>')
    if why.problem:
        st.error(why.problem, icon=":material/bug_report:")
    st.dataframe(
        why.table,
        hide_index=True,
        width="stretch",
        column_config={
            "chosen": st.column_config.TextColumn(" ", width="small"),
            "count": st.column_config.NumberColumn(format="localized"),
            "would replace": st.column_config.NumberColumn(
                format="localized", help="Occurrences a merge would replace: left to right, no token used twice"
            ),
            "score": st.column_config.NumberColumn(
                format="%.4g", help="freq(pair) / (freq(left) × freq(right)), the number WordPiece ranks pairs by"
            ),
            "pair freq": st.column_config.NumberColumn(format="localized"),
            "left freq": st.column_config.NumberColumn(format="localized"),
            "right freq": st.column_config.NumberColumn(format="localized"),
            "first seen in": st.column_config.TextColumn(
                help="The first word (in order of first appearance) holding the pair: the tie-break looks here"
            ),
        },
    )
    st.html(NOTES_CSS + '<div class="why-notes">' + "".join(f"<p>{n}</p>" for n in why.notes) + "</div>")


def step_view(history: MergeHistory, text: str) -> None:
    """Everything that depends on the step: controls, card, text, charts, candidates, table.

    Runs inside a fragment (see :func:`stepper`).
    """
    n = history.n_steps
    advance_if_playing(n)
    k = controls(n)
    st.session_state[_SHOWN] = k
    playing = st.session_state.get(PLAYING_KEY, False)

    spans = step_spans(history, k, text)
    left, right = st.columns([2, 3], gap="large")
    with left:
        card = history.card(k)
        st.html(card_html(card, history.tokens_at(0), history.unit))
        wordpiece = history.algorithm == "wordpiece"
        examples = examples_html(spans, history.highlight(k), text=drawn_text(history, text) if wordpiece else None)
        if examples:
            st.html(examples)
        figs = history.figures(k)
        st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
    with right:
        body, occurrences = step_text_html(history, k, text, spans=spans)
        view = ", as training segments it (not as greedy encoding would)" if wordpiece else ""
        if k:
            st.caption(
                f"The text after {k:,} merge{'s' * (k != 1)}{view}. Highlighted: the {occurrences:,} "
                f"token{'s' * (occurrences != 1)} made by merge #{k} (a red seam marks where the two halves met); "
                "everything else is dimmed."
                + (" Pieces of one word touch; the later ones are ## continuations." if wordpiece else "")
            )
        elif wordpiece:
            st.caption(
                "The text before any merge: one token per character; the characters of a word after the first "
                "are ## continuations (drawn touching). Whitespace belongs to no token."
            )
        else:
            st.caption("The text before any merge: one token per byte.")
        st.html(body)
    w1, w2 = st.columns(2, gap="large")
    with w1:
        st.subheader("Why this pair?", divider="gray")
        why_panel(history, k, playing)
    with w2:
        st.plotly_chart(figs[1], key=sk.MERGE_FIG_TOKENS, config={"displayModeBar": False})
        st.plotly_chart(figs[2], key=sk.MERGE_FIG_LENGTHS, config={"displayModeBar": False})
    st.subheader("All merges", divider="gray")
    merge_table(history, k)


def stepper(history: MergeHistory, text: str) -> None:
    """The step control and everything it drives, as a fragment that ticks while playing."""
    reset_for(history)
    ss = st.session_state
    run_every = SPEEDS.get(ss.get(SPEED_KEY), SPEEDS[DEFAULT_SPEED])[0] if ss.get(PLAYING_KEY) else None

    @st.fragment(run_every=run_every)
    def _fragment() -> None:
        step_view(history, text)

    _fragment()
