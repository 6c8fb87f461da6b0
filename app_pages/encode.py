"""Encode step by step: how one word becomes tokens, merge by merge, under several tokenizers."""

from __future__ import annotations

import streamlit as st

from ui import state_keys as sk
from ui import steps_view
from ui.algorithms import view_of

settings = st.session_state[sk.SETTINGS]

st.title("Encode step by step")
st.caption(
    "Type a word or a phrase. Each BPE tokenizer cuts it into pre-tokens, then inside each pre-token applies the "
    "lowest-ranked merge it knows, again and again, until none applies. One line per merge; the tokens a line "
    "made are highlighted."
)
if view_of(settings.spec.algorithm).encode_caption:  # the sidebar's algorithm encodes otherwise than BPE
    st.caption(view_of(settings.spec.algorithm).encode_caption)

st.session_state.setdefault(sk.ENCODE_WORD, "tokenization")  # not value=: links set it (ui.links)
word = st.text_input(
    "Word or phrase",
    max_chars=steps_view.MAX_WORD_CHARS,
    key=sk.ENCODE_WORD,
    persist_state="session",
    help="Try a rare word, a number such as 2024, an accented word (naïve) or an emoji.",
)
options = ["trained", *steps_view.REFERENCES]
chosen = st.multiselect(
    "Tokenizers",
    options,
    default=["trained", "gpt2", "cl100k_base"],
    format_func=lambda k: "Trained on your text" if k == "trained" else steps_view.reference_label(k),
    key=sk.ENCODE_TOKENIZERS,
    persist_state="session",
)

trained, trained_problem = steps_view.trained_or_problem(settings) if "trained" in chosen else (None, None)

if not word:
    st.info("Type a word or phrase above.", icon=":material/edit_note:")
    st.stop()
if not chosen:
    st.info("Choose at least one tokenizer.", icon=":material/info:")
    st.stop()

for col, key in zip(st.columns(len(chosen), gap="medium"), chosen):
    with col:
        if key == "trained":
            if trained is None:
                st.markdown("**Trained on your text**")
                st.info(trained_problem or "No trained tokenizer.", icon=":material/info:")
                continue
            title = f"Trained on your text · {trained.vocab_size:,} tokens"
            steps_view.encoder_column(title, trained, word)
        else:
            tok = steps_view.reference_or_message(key)
            if tok is not None:
                steps_view.encoder_column(f"{steps_view.reference_label(key)} · {tok.vocab_size:,} tokens", tok, word)
