"""The searchable merge table: one row per merge; clicking a row jumps to its step."""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from ui import render
from ui import state_keys as sk
from ui.merges.model import MergeHistory
from ui.merges.playback import Playback


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


def _table_clicked(playback: Playback, key: str, numbers: list[int], shown_step: int) -> None:
    """A row of the merge table was selected: jump to its step (and stop playing).

    The browser also reports the table's default selection (the row of the step
    it was drawn for), possibly after the step has moved on; that is not a click
    and is ignored, as is a click that only clears the selection.
    """
    rows = playback.state.get(key, {}).get("selection", {}).get("rows", [])
    if not rows or rows[0] >= len(numbers) or numbers[rows[0]] == shown_step:
        return
    playback.jump(numbers[rows[0]])


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
    key = f"{sk.MERGE_TABLE}_{k}_{hash(tuple(numbers))}"
    st.dataframe(
        rows,
        key=key,
        hide_index=True,
        on_select=functools.partial(_table_clicked, Playback(st.session_state, history.n_steps), key, numbers, k),
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
