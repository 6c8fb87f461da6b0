"""Lesson ``glitch-tokens``: `` SolidGoldMagikarp`` is one GPT-2 token; the learner's tokens its encoding never uses."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bpe_core.analysis.insights import learned_tokens, unused_tokens
from ui import render
from ui import state_keys as sk
from ui.insights_tabs import VIEWS
from ui.lessons import base
from ui.safe_text import md

SLUG = "glitch-tokens"

MAGIKARP = " SolidGoldMagikarp"
"""The best-known under-trained token of GPT-2 (with its leading space)."""

SHOWN_UNUSED = 12


def ids_text(ids: list[int]) -> str:
    """Token ids separated by spaces."""
    return " ".join(str(i) for i in ids)


def example(settings) -> None:
    """GPT-2's glitch token, a box to try strings, and the learner's unused learned tokens."""
    gpt2, problem = base.production("gpt2")
    if gpt2 is None:
        base.note(problem)
        return
    ids = gpt2.encode(MAGIKARP)
    items = [(f"GPT-2: “{MAGIKARP}”", ids_text(ids), f"{len(ids)} token")]
    if len(ids) == 1:
        rank = gpt2.rank_of(ids[0])
        n_merges = gpt2.vocab_size - 256 - len(gpt2.special_tokens)
        items.append(("Its rank", f"merge #{rank + 1:,}", f"of {n_merges:,}: learned late, from a rare string"))
    cl100k, _ = base.production("cl100k_base")
    if cl100k is not None:
        items.append(("GPT-4 (cl100k)", ids_text(cl100k.encode(MAGIKARP)), f"{len(cl100k.encode(MAGIKARP))} tokens"))
    base.facts(items)
    text = base.input_box(SLUG, MAGIKARP, help="Any string: is it one GPT-2 token?")
    if text:
        base.tokens(gpt2, text)
    mine, why = base.sidebar_tokenizer(settings)
    if mine is None:
        base.note(why)
        return
    unused = unused_tokens(mine, settings.text)
    n_learned = len(learned_tokens(mine))
    st.markdown(
        f"**Your tokenizer** ({md(mine.name)}, {mine.vocab_size:,} tokens on {md(settings.text_label)}): "
        f"**{len(unused):,}** of its {n_learned:,} learned tokens never appear when its own training text is encoded."
    )
    if unused:
        rows = [{"Merge": f"#{r + 1:,}", "Token": render.readable(b), "Id": i} for r, i, b in unused[:SHOWN_UNUSED]]
        st.table(pd.DataFrame(rows).set_index("Merge"))


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Glitch tokens",
        text=(
            "GPT-2's tokenizer was trained on different text from the model, where a few rare strings were common "
            "enough to earn a token, such as a Reddit user name. The model then almost never saw those tokens, so "
            "their embeddings stayed near their random start: *under-trained* tokens, which made early models "
            "behave oddly. Your own tokenizer has tokens its encoding never uses either: steps on the way to "
            "longer tokens."
        ),
        example=example,
        try_it=base.TryIt(
            page="insights",
            what="Opens the Under-used tokens view of Insights for a BPE trained on your text.",
            settings=lambda state: {sk.ALGORITHM: "bpe", sk.INS_TAB: VIEWS["unused"]},
        ),
    )
)
