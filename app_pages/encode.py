"""Encode step by step: how one word becomes tokens, merge by merge, under several tokenizers."""

from __future__ import annotations

import streamlit as st

from bpe_core.production.encodings import EncodingUnavailable
from ui import catalogue, links, steps_view, view
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.safe_text import md

settings = st.session_state[sk.SETTINGS]

st.title("Encode step by step")
st.caption(
    "Type a word or a phrase. Each BPE tokenizer cuts it into pre-tokens, then inside each pre-token applies the "
    "lowest-ranked merge it knows, again and again, until none applies. One line per merge; the tokens a line "
    "made are highlighted. Mistral v1 (SentencePiece) merges the pair whose piece scores highest, then spells "
    "any character it has no piece for as UTF-8 byte pieces (byte fallback)."
)
if view_of(settings.spec.algorithm).encode_caption:  # the sidebar's algorithm encodes otherwise than BPE
    st.caption(view_of(settings.spec.algorithm).encode_caption)

links.keep(sk.ENCODE_WORD, "tokenization")  # not value=: links set it
word = st.text_input(
    "Word or phrase",
    max_chars=steps_view.MAX_WORD_CHARS,
    key=sk.ENCODE_WORD,
    persist_state="session",
    help="Try a rare word, a number such as 2024, an accented word (naïve) or an emoji.",
)
options = ["trained", *steps_view.PRODUCTION_KEYS]
links.keep(sk.ENCODE_TOKENIZERS, list(steps_view.DEFAULT_CHOICE))  # not default=: links set it
chosen = st.multiselect(
    "Tokenizers",
    options,
    format_func=steps_view.choice_label,
    key=sk.ENCODE_TOKENIZERS,
    persist_state="session",
    help="Your trained tokenizer and the production encodings (OpenAI, Meta, Mistral), all loaded offline.",
)

trained, trained_problem = steps_view.trained_or_problem(settings) if "trained" in chosen else (None, None)

if not word:
    st.info("Type a word or phrase above.", icon=":material/edit_note:")
    st.stop()
if not chosen:
    st.info("Choose at least one tokenizer.", icon=":material/info:")
    st.stop()

notice = st.container()  # the unavailable encodings, said once above the columns
unavailable = []
k = view.per_row(len(chosen))
for row in range(0, len(chosen), k):
    for col, key in zip(st.columns(k, gap="medium"), chosen[row : row + k]):
        with col:
            if key == "trained":
                if trained is None:
                    st.markdown("**Trained on your text**")
                    st.info(md(trained_problem or "No trained tokenizer."), icon=":material/info:")
                    continue
                steps_view.trained_column(f"Trained on your text · {trained.vocab_size:,} tokens", trained, word)
                continue
            tok, problem = steps_view.production_or_problem(key)
            if tok is not None:
                steps_view.production_column(key, tok, word)
            elif isinstance(problem, EncodingUnavailable):
                unavailable.append(problem)
            else:
                st.markdown(f"**{steps_view.production_label(key)}**")
                st.warning(md(problem), icon=":material/warning:")
with notice:
    catalogue.unavailable_notice(unavailable)
