"""Tables of figures that fit their container: headers wrap, numbers do not, every cell escaped.

Compare's figures table and Insights' held-out table are drawn here (:func:`figures_table_html`),
each from a ``pandas.DataFrame`` and its :class:`FigureColumn` list (defined with the cell formats in
:mod:`bpe_core.analysis.figures`, which the command line shares).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from bpe_core.analysis.figures import FigureColumn, format_cell
from ui.render import table_token_html

__all__ = ["FigureColumn", "figures_table_html"]


TABLE_CSS = """
<style>
.fig-table-wrap { overflow-x: auto; max-width: 100%; }
.fig-table { border-collapse: collapse; width: 100%; font-size: 14px; font-variant-numeric: tabular-nums; }
.fig-table th { font-weight: 600; font-size: 12.5px; line-height: 1.25; text-align: right; vertical-align: bottom;
  padding: 4px 6px; border-bottom: 1px solid rgba(128,128,128,.45); overflow-wrap: normal; }
.fig-table td { text-align: right; padding: 4px 6px; border-bottom: 1px solid rgba(128,128,128,.18);
  white-space: nowrap; }
.fig-table th:first-child, .fig-table td:first-child { text-align: left; white-space: normal; min-width: 7.5em;
  position: sticky; left: 0; background: var(--background-color, #fff); }
.fig-table th[title] { cursor: help; text-decoration: underline dotted rgba(128,128,128,.6); }
@media (max-width: 640px) { .fig-table { font-size: 12.5px; } .fig-table th { font-size: 11.5px; }
  .fig-table th, .fig-table td { padding: 3px 4px; } }
.fig-table td.tok { text-align: left; white-space: pre; unicode-bidi: isolate; direction: ltr;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.fig-table td.tok .cp { font-size: 11px; opacity: .7; border: 1px dashed rgba(128,128,128,.6); border-radius: 3px;
  padding: 0 2px; }
.fig-table.numbered th:first-child, .fig-table.numbered td:first-child { text-align: right; min-width: 0;
  position: static; }
.fig-table-wrap.scroll { overflow-y: auto; border: 1px solid rgba(128,128,128,.25); border-radius: 6px; }
.fig-table-wrap.scroll th { position: sticky; top: 0; background: var(--background-color, #fff); z-index: 1; }
</style>
"""
"""Style of :func:`figures_table_html`: headers wrap, numbers do not; a table wider than the screen scrolls
with the first column pinned (phones)."""


TOKEN_CLASS = ' class="tok"'
"""The attribute of a token cell (see :data:`TABLE_CSS`)."""


def figures_table_html(frame: pd.DataFrame, columns: Sequence[FigureColumn], *, max_height: int | None = None) -> str:
    """An HTML table of ``frame`` that fits its container: headers wrap, every column stays visible.

    Every cell is HTML-escaped (tokenizer names and tokens come from user files and text) and
    carries its exact value in ``data-value`` (what the tests read).

    Args:
        frame: one row per tokenizer (:func:`ui.compare.metrics_frame`, :func:`ui.insights_view.heldout_frame`)
            or per token (the Insights tables of tokens).
        columns: which columns, in order, and how to show them.
        max_height: a height in pixels above which the table scrolls under its pinned header (long
            lists of tokens); ``None``: the table's own height.  A table whose first column is a number
            (not a label) is drawn without the pinned label column.

    Returns:
        The style sheet and the table, for ``st.html``.
    """
    head = "".join(
        f'<th title="{html.escape(c.help, quote=True)}">{html.escape(c.header)}</th>'
        if c.help
        else f"<th>{html.escape(c.header)}</th>"
        for c in columns
    )
    rows = []
    esc = html.escape
    for rec in frame.to_dict("records"):
        cells = "".join(
            f'<td{TOKEN_CLASS if c.fmt == "token" else ""} data-col="{esc(c.key, quote=True)}" '
            f'data-value="{esc(str(rec.get(c.key)), quote=True)}">'
            + (table_token_html(str(rec.get(c.key))) if c.fmt == "token" else esc(format_cell(rec.get(c.key), c.fmt)))
            + "</td>"
            for c in columns
        )
        rows.append(f"<tr>{cells}</tr>")
    numbered = " numbered" if columns and columns[0].fmt not in ("text", "token") else ""
    scroll = f' scroll" style="max-height:{int(max_height)}px' if max_height else ""
    return (
        f'{TABLE_CSS}<div class="fig-table-wrap{scroll}"><table class="fig-table{numbered}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
