"""The merge card: ``[left] + [right] -> [new]`` with ids and the step's facts, as escaped HTML."""

from __future__ import annotations

import html

from ui.merges.model import StepCard

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
