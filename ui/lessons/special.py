"""Lesson ``special-tokens``: ``<|endoftext|>`` as one special id, as plain text, and as a training boundary."""

from __future__ import annotations

import streamlit as st

from bpe_core import pretokenize, train_bpe
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.lessons import base

SLUG = "special-tokens"

EOT = "<|endoftext|>"

DOCUMENTS = "The cat sat.<|endoftext|>The dog ran.<|endoftext|>The cat ran.<|endoftext|>A dog sat."
"""Four tiny documents joined by the special token (the input box starts with them)."""

MERGES = 12
"""Merges learned on the typed text, with and without the special token."""


def ids_text(ids: list[int]) -> str:
    """Token ids separated by spaces."""
    return " ".join(str(i) for i in ids)


def learned(text: str, specials: tuple[str, ...]) -> tuple[list[str], int]:
    """The first :data:`MERGES` tokens BPE learns on ``text`` with these special tokens, and the specials removed."""
    tok = train_bpe(text, 256 + len(specials) + MERGES, list(specials))
    return [tok.describe_token(new) for _a, _b, new in tok.merge_ids], tok.training.special_occurrences


def example(_settings) -> None:
    """The special token's ids, then the typed documents trained with and without it."""
    gpt2, problem = base.production("gpt2")
    cl100k, problem2 = base.production("cl100k_base")
    items = []
    if gpt2 is not None:
        items.append((f"GPT-2: {EOT} as the special token", ids_text(gpt2.encode(EOT)), "one id, never split"))
        items.append(
            (
                f"GPT-2: {EOT} read as text",
                ids_text(gpt2.encode_ordinary(EOT)),
                f"{len(gpt2.encode_ordinary(EOT))} ordinary tokens",
            )
        )
    if cl100k is not None:
        items.append((f"GPT-4 (cl100k): {EOT}", ids_text(cl100k.encode(EOT)), "another vocabulary, another id"))
    base.facts(items)
    for p in (problem, problem2):
        if p:
            base.note(p)
    text = base.input_box(
        SLUG, DOCUMENTS, help=f"Documents separated by {EOT}: both trainings below follow your typing."
    )
    if not text.strip():
        return
    left, right = st.columns(2, gap="medium")
    try:
        with_special, removed = learned(text, (EOT,))
        without, _ = learned(text, ())
    except ValueError as exc:
        base.note(str(exc))
        return
    with left:
        st.markdown(f"**With {EOT} as a special token**")
        words = pretokenize(text, "gpt2", [EOT])[:40]
        base.chips([(p.text, None) for p in words], "Pre-tokens", marks=["special" * p.is_special for p in words])
        base.chips([(t, None) for t in with_special], f"First {MERGES} merges")
        base.note(f"{removed} occurrences cut out before counting: no merge can cross a document boundary.")
    with right:
        st.markdown("**Without it**")
        base.chips([(p.text, None) for p in pretokenize(text, "gpt2")][:40], "Pre-tokens")
        base.chips([(t, None) for t in without], f"First {MERGES} merges")
        base.note("Its text is split like any other and merges are spent on its pieces.")


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Special tokens",
        text=(
            f"A special token such as `{EOT}` marks where one document ends. It has one id of its own, outside "
            "the merges: the tokenizer looks for it before anything else and never cuts it. Training cuts the text "
            "at it and drops it, so nothing is learned across a boundary. The same characters typed as ordinary "
            "text are just text, cut into ordinary tokens."
        ),
        example=example,
        try_it=base.TryIt(
            page="playground",
            what=f"Opens the Playground on your text with a byte-level BPE that has {EOT} as its special token.",
            settings=lambda state: {
                sk.ALGORITHM: "bpe",
                view_of("bpe").special_tokens_key: [EOT],
            },
        ),
    )
)
