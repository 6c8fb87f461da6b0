"""The floor under ``bench_app.py``'s page times: Streamlit alone, the app's six pages with none of its work.

The pages are ``bench_app.PAGES`` (the sidebar links and the titles the benchmark waits for), with the app's
icons, the same wide layout and a sidebar with one widget; each page draws its title and a paragraph.
``bench_app.py`` times it beside the app in the same run, so a page time can be read as *the app's work* on top
of *Streamlit booting and drawing a page* on this machine.
"""

from __future__ import annotations

import streamlit as st
from bench_app import PAGES  # streamlit run puts this folder on sys.path

ICONS = {
    "Learn": ":material/school:",
    "Playground": ":material/palette:",
    "Merges": ":material/animation:",
    "Compare": ":material/compare_arrows:",
    "Insights": ":material/insights:",
    "Encode step by step": ":material/stairs:",
}
"""The app's navigation icons (``app.py``): the page loads the same icon font."""


def _page(title: str):
    def draw() -> None:
        st.title(title)
        st.write("A page with no work: what Streamlit alone costs to open and draw it on this machine.")

    draw.__name__ = f"page_{title.lower().replace(' ', '_')}"
    return draw


st.set_page_config(page_title="Streamlit floor", layout="wide")
pages = [
    st.Page(_page(title or nav), title=nav, icon=ICONS[nav], url_path=path or None, default=not path)
    for nav, (path, title) in PAGES.items()
]
nav = st.navigation(pages)
st.sidebar.radio("Sample text", ["English", "Python"])
nav.run()
