"""Clicking a token in a coloured view: a tiny JavaScript-only Streamlit component.

Coloured views are plain ``st.html`` markup, in which every token is a
``<span class="tk" data-id="...">`` (see :func:`ui.render.tokens_html`).  The
component listens for clicks on such spans anywhere in the page and sends the
token id to Python as a *trigger value*: :func:`clicked_token` returns it on
the one rerun the click causes, and ``None`` otherwise.  Uses Streamlit's
``st.components.v2`` (JavaScript runs in the app page, no iframe).
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  // the newest mount's setter wins: the listener below is installed once per page
  window.__bpeTokenClick = (id) => setTriggerValue("clicked", id);
  if (!window.__bpeTokenClickInstalled) {
    window.__bpeTokenClickInstalled = true;
    document.addEventListener("click", (event) => {
      const el = event.target instanceof Element ? event.target.closest(".bpe-view .tk[data-id]") : null;
      if (el && window.__bpeTokenClick) {
        window.__bpeTokenClick(Number(el.dataset.id));
      }
    });
  }
}
"""

_component = st.components.v2.component("bpe_playground.token_click", js=_JS)


def clicked_token(key: str) -> int | None:
    """Mount the click listener; the id of the token clicked since the last run, else ``None``.

    Args:
        key: a widget key unique on the page.

    Returns:
        The clicked token's id (``int``), only on the rerun the click triggers.
    """
    result = _component(key=key, on_clicked_change=lambda: None)
    value = getattr(result, "clicked", None)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
