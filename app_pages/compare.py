"""Compare: the same text under several tokenizers, side by side, with figures."""

from __future__ import annotations

import streamlit as st

from bpe_core.pretokenize import PATTERN_LABELS
from ui import catalogue, compare, links, view
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.safe_text import md

settings = st.session_state[sk.SETTINGS]

st.title("Compare tokenizers")
st.caption(
    "The same text under your trained tokenizers and production ones of every algorithm -- GPT-2 to gpt-oss, Llama, "
    "Mistral, Gemma, Qwen, DeepSeek, BERT's WordPiece and XLM-R's Unigram (all offline): how each cuts it, how many "
    "tokens it costs, and how compression grows with vocabulary size."
)

if settings.problem:
    st.info(md(settings.problem), icon=":material/edit_note:")
    st.stop()
view.previous_if_stopped(settings)  # after a Cancel or a failure: the previous tokenizer and its settings

picked = compare.picker_in_place(settings.spec.algorithm)  # opens on the algorithm the sidebar trains
with st.expander("More BPE variants: other patterns or vocabulary sizes"):
    left, right = st.columns(2)
    patterns = left.multiselect(
        "BPE with other patterns (at the slider's size)",
        list(PATTERN_LABELS),
        format_func=PATTERN_LABELS.get,
        key=sk.COMPARE_PATTERNS,
        persist_state="session",
    )
    offered = ["500", "2000", "5000", "10000"]
    typed = right.multiselect(
        "BPE at other vocabulary sizes (the sidebar's pattern)",
        offered + [s for s in st.session_state.get(sk.COMPARE_SIZES) or [] if s not in offered],  # typed, or a link's
        key=sk.COMPARE_SIZES,
        accept_new_options=True,
        persist_state="session",
        help="Pick or type sizes (e.g. 3000 or 3k). Sizes above the sidebar's training size train further.",
    )
    sizes, problems = compare.parse_sizes(typed)
    for p in problems:
        st.warning(f"Ignored vocabulary size: {md(p)}. The other sizes stay as they were.", icon=":material/warning:")

source = st.radio(
    "Text to compare on",
    ["Training text", "Other text"],
    horizontal=True,
    key=sk.COMPARE_SOURCE,
    persist_state="session",
    help="The sidebar's text, on which the BPE was trained, or any other text (held-out text is the fairer test).",
)
if source == "Other text":
    text = st.text_area(
        compare.OTHER_TEXT_LABEL,  # followed as it is typed (app.py's follow_typing), no Ctrl+Enter
        key=sk.COMPARE_TEXT,
        height=150,
        placeholder="Paste or type a text to encode with every tokenizer.",
        persist_state="session",
    )
    if not text:
        st.info("Paste a text above to compare the tokenizers on it.", icon=":material/edit_note:")
        st.stop()
else:
    text = settings.text

known = catalogue.entries()
entries = [known[key] for key in picked or []]  # in the order picked: a new pick's column comes last
entries += [catalogue.variant_entry(p, None) for p in patterns]
entries += [catalogue.variant_entry(settings.spec.pattern, n) for n in sizes]
if not entries:
    st.info("Pick at least one tokenizer above.", icon=":material/touch_app:")
    st.stop()

size = None
live = False
if compare.uses_slider(settings, picked or [], patterns):
    try:
        with st.spinner("Training…"):
            try:
                trained = catalogue.sidebar_tokenizer(settings)
            except (ValueError, TypeError):  # failed just now: its message, and the previous tokenizer if any
                trained = view.previous_if_failed(settings)
                if trained is None:
                    raise
        live = compare.draws_live(trained, settings.text)
        size = compare.live_slider(trained) if live else view.vocab_slider(trained)
        st.caption(
            f"The vocabulary size of the {view_of(settings.spec.algorithm).short} the sidebar trains, "
            "shared with the Playground: ids stay the same at every size."
            + (" Its columns follow the slider as you drag; the figures below follow when you let go." if live else "")
        )
    except (ValueError, TypeError):
        pass  # its column below says why

columns = catalogue.build_columns(entries, settings, size)
catalogue.column_problems(columns)
if not any(c.built is not None for c in columns):
    st.stop()
shown = compare.measure_or_previous(columns, text)  # progress and Cancel on a long text; the previous view after one
if shown is None:
    st.stop()
columns, metrics, text = shown
ok = [c for c in columns if c.built is not None]
builts = [c.built for c in ok]

st.html(compare.special_tokens_note(text, ok, metrics))

st.subheader("The text under each tokenizer", divider="gray")
t1, t2 = st.columns(2)
highlight = t1.toggle(
    "Highlight words split differently",
    key=sk.COMPARE_HIGHLIGHT,
    persist_state="session",
    disabled=len(builts) < 2,
    help="Underline the words that the selected tokenizers do not all cut the same way; dim the rest.",
)
links.keep(sk.SHOW_WS, True)  # not value=: links set it
show_ws = t2.toggle("Show whitespace", key=sk.SHOW_WS, persist_state="session")
n_diff, n_words = compare.draw_views(
    builts,
    text,
    metrics,
    show_whitespace=show_ws,
    highlight=highlight,
    live=live,
    on_training_text=source == "Training text" and settings.imported is None,
)
if highlight:
    st.caption(f"{n_diff:,} of the {n_words:,} words shown are split differently by the selected tokenizers.")

st.subheader("Figures for the whole text", divider="gray")
m0 = metrics[builts[0].cache_key]
st.caption(f"{m0.characters:,} characters · {m0.bytes:,} UTF-8 bytes · {m0.words:,} whitespace-separated words")
if source == "Training text" and any(b.full is not None for b in builts):
    st.caption("The trained BPE has seen this text, which flatters it; choose *Other text* above for a held-out test.")
st.html(compare.metrics_table_html(compare.metrics_frame(ok, metrics)))

st.plotly_chart(
    compare.count_bars(tuple(b.label for b in builts), tuple(metrics[b.cache_key].tokens for b in builts),
                       tuple(b.kind for b in builts)),
    config={"displayModeBar": False},
)  # fmt: skip
curves, points = compare.compression_data(ok, text, source == "Training text", metrics)
st.plotly_chart(compare.compression_figure(tuple(curves), tuple(points)), config={"displayModeBar": False})
st.caption(compare.curve_caption(curves, text, source == "Training text"))
