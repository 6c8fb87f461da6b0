"""BPE Playground: Streamlit entry point (navigation and the shared sidebar)."""

from __future__ import annotations

import streamlit as st

from ui import compare, imported, links, live_view, present, warmup
from ui import state_keys as sk
from ui.favicon import FAVICON_SVG
from ui.inputs import sidebar
from ui.lessons.base import INPUT_LABEL

warmup.start()  # once per server process: samples trained, production files loaded, in the background

st.set_page_config(
    page_title="BPE Playground",
    page_icon=FAVICON_SVG,  # drawn here: a Material icon name makes the browser ask fonts.gstatic.com
    layout="wide",
    initial_sidebar_state=present.initial_sidebar(),  # collapsed for a projector (present=1)
)

pages = [
    st.Page("app_pages/learn.py", title="Learn", icon=":material/school:", url_path="learn"),
    st.Page("app_pages/playground.py", title="Playground", icon=":material/palette:", default=True),
    st.Page("app_pages/merges.py", title="Merges", icon=":material/animation:", url_path="merges"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("app_pages/insights.py", title="Insights", icon=":material/insights:", url_path="insights"),
    st.Page("app_pages/encode.py", title="Encode step by step", icon=":material/stairs:", url_path="encode"),
]
nav = st.navigation(pages)
links.restore()
st.session_state[sk.SETTINGS] = sidebar()
with st.sidebar:
    # pasted, lesson and Compare's other text used as typed, no Ctrl+Enter
    live_view.follow_typing(("Your text", INPUT_LABEL, compare.OTHER_TEXT_LABEL))
links.apply_pending_size(st.session_state[sk.SETTINGS])
present.apply(bool(st.session_state.get(sk.PRESENT)))
imported.show_outcome()
links.publish(nav.url_path, final=False)  # stands if the page stops early (st.stop: nothing more is sent)
nav.run()
links.publish(nav.url_path)  # the run's final state: the slider a new tokenizer reset, the step a button moved
