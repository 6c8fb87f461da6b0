"""The app's favicon, drawn here: three token blocks of the Playground's palette, as an inline SVG.

``st.set_page_config(page_icon=":material/...:")`` makes the browser fetch the icon from
``fonts.gstatic.com`` on every page (Streamlit 1.67 turns a Material icon name into that URL; the
Material Symbols font of the buttons and navigation is served by the app itself).  An SVG string
becomes a ``data:`` URL instead, so the app asks no other host for anything (issue 32.7).
"""

from __future__ import annotations

from ui.render import PALETTE

FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    f'<rect x="2" y="14" width="22" height="36" rx="6" fill="{PALETTE[0]}" stroke="#5b5bd6" stroke-width="3"/>'
    f'<rect x="27" y="14" width="14" height="36" rx="6" fill="{PALETTE[2]}" stroke="#5b5bd6" stroke-width="3"/>'
    f'<rect x="44" y="14" width="18" height="36" rx="6" fill="{PALETTE[3]}" stroke="#5b5bd6" stroke-width="3"/>'
    "</svg>"
)
"""The favicon (``st.set_page_config``'s ``page_icon``): an SVG string, which Streamlit sends as a ``data:`` URL."""
