"""The "why this pair" panel: the candidates a merge was chosen from, the tie-break in words."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from ui import state_keys as sk
from ui.merges.model import MergeHistory, WhyThisPair
from ui.render import readable

LARGE_TABLE = 50_000
"""Above this many distinct pre-tokens, "why this pair" is computed on request, not at every step."""


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


def bpe_why(history: MergeHistory, k: int) -> WhyThisPair:
    """The top 10 pairs merge ``k`` was chosen from (at step 0, those merge 1 will be chosen from)."""
    start = _why_start(history, k)
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


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n:,} times"


def _rare_pair_note(s, m) -> str:
    """Why WordPiece merges a pair rarer than the most frequent one, with the step's own numbers (HTML).

    ``s``: the merge (its pair and the three frequencies); ``m``: the most frequent candidate.  A pair's score
    ``f / (fl × fr)`` is at most ``1 / f`` (its parts occur at least as often as the pair), reached when the parts
    never occur apart: a pair seen once can score 1, more than any frequent pair can.
    """
    e = html.escape
    pair = f"<code>{e(s.left)}</code> + <code>{e(s.right)}</code>"
    apart = s.left_freq == s.pair_freq and s.right_freq == s.pair_freq
    return (
        f"<b>Why a rarer pair wins:</b> {pair} occurs {_times(s.pair_freq)}, and its parts "
        f"{_times(s.left_freq)} and {_times(s.right_freq)}"
        + (": they never occur apart. " if apart else ". ")
        + f"Its score is {s.pair_freq:,} / ({s.left_freq:,} × {s.right_freq:,}) = {s.score:.4g}. A pair's score is "
        f"at most 1 / its own frequency, reached when its parts never occur apart: a pair seen once can score "
        f"1 / (1 × 1) = 1, while the most frequent pair, <code>{e(m.left)}</code> + <code>{e(m.right)}</code> "
        f"({m.pair_freq:,} times), can score at most 1 / {m.pair_freq:,} = {1 / m.pair_freq:.4g}. So WordPiece "
        "spends its early merges on strings whose pieces only occur together (the digits of one number, a rare "
        "name) and joins common pairs later; BPE, which counts pairs, does the opposite."
    )


def wordpiece_why(history: MergeHistory, k: int) -> WhyThisPair:
    """The top 10 pairs by score that merge ``k`` was chosen from (at step 0, merge 1's)."""
    start = _why_start(history, k)
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
    if m is not None and s.pair_freq < m.pair_freq:
        notes.append(_rare_pair_note(s, m))
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
