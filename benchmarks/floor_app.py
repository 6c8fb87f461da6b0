"""The floor under ``bench_app.py``'s page times: Streamlit alone, the app's six pages with none of its work.

Same navigation (titles, icons, URL paths), the same wide layout and a sidebar with one widget; each page draws
its title and a paragraph.  ``bench_app.py`` times it beside the app in the same run, so a page time can be read
as *the app's work* on top of *Streamlit booting and drawing a page* on this machine.
"""

from __future__ import annotations

import streamlit as st

TITLES = {
    "learn": "Learn",
    "": "BPE Playground",
    "merges": "Merges",
    "compare": "Compare tokenizers",
    "insights": "Insights",
    "encode": "Encode step by step",
}
"""URL path -> the h1 the benchmark waits for (the app's page titles)."""


def _page(title: str):
    def draw() -> None:
        st.title(title)
        st.write("A page with no work: what Streamlit alone costs to open and draw it on this machine.")

    draw.__name__ = f"page_{title.lower().replace(' ', '_')}"
    return draw


st.set_page_config(page_title="Streamlit floor", layout="wide")
icons = [":material/school:", ":material/palette:", ":material/animation:", ":material/compare_arrows:",
         ":material/insights:", ":material/stairs:"]  # fmt: skip
nav_titles = ["Learn", "Playground", "Merges", "Compare", "Insights", "Encode step by step"]
pages = [
    st.Page(_page(title), title=nav, icon=icon, url_path=path or None, default=not path)
    for (path, title), nav, icon in zip(TITLES.items(), nav_titles, icons)
]
nav = st.navigation(pages)
st.sidebar.radio("Sample text", ["English", "Python"])
nav.run()
