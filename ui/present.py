"""Presentation mode: large token text and only the essentials, for a projector.

One sidebar toggle (:data:`ui.state_keys.PRESENT`, in links as ``present=1``).
When it is on, :func:`apply` adds a style sheet that enlarges the coloured
text and hides the secondary parts -- captions, legends, every metric card
but the token count (and its delta), the whitespace toggle, the Merges page's
charts and tables -- and tightens the
page's top padding, so at 1280x720 the Playground shows ten or more lines of
tokens and the Merges page its card beside the text.  Insights' tabs keep their
cards (side by side, not one stretched over the width), tables and charts: they
are the page's content.  Encode step by step draws its chips at :data:`ENCODE_FONT`
(its column titles and id lines stay one line each, so the columns line up).
The sidebar opens collapsed (:func:`initial_sidebar`).  On the server-drawn
Merges page a small script keeps the tokens the current merge made in view
inside the text's scroll box (the page itself does not move; the browser
player does this itself).  Everything here is CSS on the app's own class names
and Streamlit's ``data-testid`` attributes; the live views (:mod:`ui.live_view`)
are told with their ``present`` argument and compact their own slider and
counts (the slider and the token count on one row, token text at
:data:`PRESENTATION_SCALE` times 15 px, as the server views: every token column at one size).
"""

from __future__ import annotations

import streamlit as st

from ui import render
from ui import state_keys as sk

PRESENTATION_SCALE = 1.5
"""Token text size factor in presentation mode: every coloured view, drawn on the server or live, goes from
15 px to 22.5 px (one size for every token column)."""

TOKEN_FONT = f"{15 * PRESENTATION_SCALE:g}px"
"""The server-drawn coloured text's font size in presentation mode (the live views scale by
:data:`PRESENTATION_SCALE`: the same 22.5 px)."""

PARTIAL_FONT = f"{11 * PRESENTATION_SCALE:g}px"
"""A byte piece of a character (``<0xF0>``, 11 px normally) in presentation mode: scaled as the live views do."""

ENCODE_FONT = "20px"
"""Encode step by step's token chips in presentation mode (14 px otherwise): "tokenization" byte by byte still fits
one line of a third of 1,280 px."""

_OUTSIDE_TABS = ":not([data-testid=stTabs] *)"
"""Insights' tabs keep their cards, tables and charts: they are what the page shows (elsewhere they are extras)."""

_NOT_COUNTS = ":not([data-testid=stColumn]:has(.bpe-view) *)"
"""The line under a token column's title (Compare: "1,492 tokens · 2.48 bytes/token") stays, as the live columns'
own count line does: every column says its count, and their boxes start at one height."""

CSS = f"""<style>
[data-testid=stHeader] {{ background: transparent !important; }}
[data-testid=stMainBlockContainer] {{ padding-top: 1.2rem !important; padding-bottom: 1rem !important; }}
[data-testid=stMain] h1 {{ font-size: 1.6rem !important; padding: 0 0 .2rem 0 !important; }}
[data-testid=stMain] [data-testid=stCaptionContainer]{_NOT_COUNTS},
[data-testid=stMain] .bpe-legend,
[data-testid=stMain] .js-plotly-plot{_OUTSIDE_TABS},
[data-testid=stMain] [data-testid=stPlotlyChart]{_OUTSIDE_TABS},
[data-testid=stMain] [data-testid=stDataFrame]{_OUTSIDE_TABS},
[data-testid=stMain] [data-testid=stExpander]{_OUTSIDE_TABS},
[data-testid=stMain] .merge-examples,
[data-testid=stMain] [data-testid=stMetricDelta],
[data-testid=stMain] [data-testid=stCheckbox],
[data-testid=stMain] [data-testid=stElementContainer]:has([data-testid=stCaptionContainer]){_NOT_COUNTS} {{
    display: none !important; }}
[data-testid=stMain] [data-testid=stHorizontalBlock]:has([data-testid=stMetric]){_OUTSIDE_TABS}
    > [data-testid=stColumn]:not(:first-child) {{ display: none !important; }}
[data-testid=stMain] [data-testid=stHorizontalBlock]:has([data-testid=stMetric]){_OUTSIDE_TABS}
    > [data-testid=stColumn]:first-child {{ flex: 0 1 22rem !important; }}
[data-testid=stMain] [data-testid=stColumn]:has(.bpe-view)
    [data-testid=stElementContainer]:has([data-testid=stCaptionContainer]) {{ margin-top: -1.35rem; }}
[data-testid=stMain] [data-testid=stMetric] {{ padding: .15rem .6rem !important; }}
[data-testid=stMain] [data-testid=stMetricValue] {{ font-size: 1.3rem !important; }}
[data-testid=stMain] .bpe-view:not(.live-text) {{ font-size: {TOKEN_FONT} !important; line-height: 1.7 !important;
    max-height: calc(100vh - 260px) !important; padding: .4rem .7rem !important; }}
[data-testid=stMain] .bpe-view:not(.live-text) .partial {{ font-size: {PARTIAL_FONT} !important; }}
[data-testid=stMain] .enc-steps {{ font-size: 16px !important; }}
[data-testid=stMain] .enc-tok {{ font-size: {ENCODE_FONT} !important; }}
[data-testid=stMain] .enc-piece .head, [data-testid=stMain] .enc-line .what {{ font-size: 14px !important; }}
</style>"""

SCROLL_JS = """<script>
(() => {
  if (window.__bpePresentScroll) return;
  window.__bpePresentScroll = true;
  const follow = () => {
    const hl = [...document.querySelectorAll('[data-testid=stMain] .bpe-view .tk.hl')].find(e => e.offsetParent);
    if (!hl) return;
    const box = hl.closest('.bpe-view');
    const top = hl.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - hl.offsetHeight)
      box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  };
  new MutationObserver(follow).observe(document.body, {childList: true, subtree: true});
  follow();
})();
</script>"""


PHONE_CSS = """<style>
@media (max-width: 640px) {  /* a phone: the page's content, not its header, on the first screen */
  [data-testid=stMainBlockContainer] { padding-top: 3.6rem !important; }
  [data-testid=stMain] h1 { font-size: 1.6rem !important; padding: .2rem 0 !important; }
  [data-testid=stMain] [data-testid=stHeading] + div [data-testid=stCaptionContainer],
  [data-testid=stMain] h1 ~ [data-testid=stCaptionContainer] { font-size: 13px; line-height: 1.4; }
  [data-testid=stMain] h2, [data-testid=stMain] h3 { font-size: 1.15rem !important; padding: .5rem 0 .2rem !important; }
}
</style>"""
"""The app's layout on a phone (every page, every visit): a smaller title, tighter top padding and captions."""


def toggle() -> bool:
    """The sidebar's "Presentation mode" toggle; returns whether it is on."""
    return st.toggle(
        "Presentation mode",
        key=sk.PRESENT,
        persist_state="session",
        help="Large token text and only the essentials, for a projector. In links as present=1.",
    )


def initial_sidebar() -> str:
    """The sidebar's state for ``st.set_page_config``: ``"collapsed"`` in presentation mode, else ``"auto"``.

    Presentation mode is the session's toggle, or (before the link is read, on a session's first run)
    the link's ``present=1``: a projector link opens with the whole width for the page.
    """
    on = st.session_state.get(sk.PRESENT)
    if on is None:
        on = st.query_params.get("present") == "1"
    return "collapsed" if on else "auto"


def apply(on: bool) -> None:
    """Add the token views' and phone layout's style sheets and, in presentation mode, its own and a scroll script.

    :data:`ui.render.CSS` (every token view's, once per page) and :data:`PHONE_CSS` always; :data:`CSS` and
    the follow-the-new-tokens script when ``on``.  Drawn in the sidebar: no space taken.
    """
    with st.sidebar:
        st.html(render.CSS + PHONE_CSS + (CSS + SCROLL_JS if on else ""), unsafe_allow_javascript=on)
