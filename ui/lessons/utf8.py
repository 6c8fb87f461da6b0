"""Lesson ``bytes``: text as code points and UTF-8 bytes, where every byte-level tokenizer starts."""

from __future__ import annotations

from functools import cache

import pandas as pd
import streamlit as st

from bpe_core import BPETokenizer
from ui import state_keys as sk
from ui.lessons import base

SLUG = "bytes"

EXAMPLES = ("hello", "ê", "Hello 😁")
"""The texts whose numbers the lesson shows first (the seeds print them)."""

MAX_ROWS = 40
"""The table lists at most this many characters of the typed text."""


@cache
def bytes_only() -> BPETokenizer:
    """A byte-level tokenizer with no merges: one token per UTF-8 byte (ids 0-255 are the bytes)."""
    return BPETokenizer({i: bytes([i]) for i in range(256)}, [], pattern="none", name="UTF-8 bytes")


def utf8(text: str) -> str:
    """The UTF-8 bytes of ``text`` as decimal numbers separated by spaces."""
    return " ".join(str(b) for b in text.encode("utf-8"))


def characters_table(text: str) -> pd.DataFrame:
    """One row per character of ``text`` (at most :data:`MAX_ROWS`): code point, UTF-8 bytes in decimal and hex."""
    rows = [
        {
            "Character": ch if ch.isprintable() and not ch.isspace() else repr(ch),
            "Code point": f"U+{ord(ch):04X} = {ord(ch)}",
            "Bytes": len(ch.encode("utf-8")),
            "UTF-8 (decimal)": utf8(ch),
            "UTF-8 (hex)": ch.encode("utf-8").hex(" ").upper(),
        }
        for ch in text[:MAX_ROWS]
    ]
    return pd.DataFrame(rows).set_index("Character") if rows else pd.DataFrame()


def example(_settings) -> None:
    """The seeds' three texts, then the typed text's characters, bytes and byte tokens."""
    hello, e_hat, smile = EXAMPLES
    base.facts(
        [
            (f"“{hello}” in UTF-8", utf8(hello), f"{len(hello)} characters, {len(hello.encode())} bytes"),
            (f"“{e_hat}”", f"code point {ord(e_hat)}", f"UTF-8 bytes {utf8(e_hat)}"),
            (
                f"“{smile}”",
                f"{len(smile.encode())} bytes",
                f"{len(smile)} characters; 😁 alone is {len('😁'.encode())} bytes: {utf8('😁')}",
            ),
        ]
    )
    text = base.input_box(SLUG, "Hello 😁 café", help="Any text: its characters and bytes below follow your typing.")
    if not text:
        base.note("Type something above to see its bytes.")
        return
    data = text.encode("utf-8", "surrogatepass")
    base.facts(
        [
            ("Characters (code points)", f"{len(text):,}", ""),
            ("UTF-8 bytes", f"{len(data):,}", "= tokens of a byte-level tokenizer before any merge"),
            ("Multi-byte characters", f"{sum(len(c.encode('utf-8', 'surrogatepass')) > 1 for c in text):,}", ""),
        ]
    )
    base.tokens(bytes_only(), text)
    base.note(
        "Each box is one byte. A character that takes several bytes is drawn once, with its bytes in hex under it."
    )
    st.table(characters_table(text))
    if len(text) > MAX_ROWS:
        st.caption(f"The table lists the first {MAX_ROWS} of {len(text):,} characters.")


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="Text is bytes",
        text=(
            "A tokenizer never sees letters. Unicode numbers every character (its *code point*), and UTF-8 writes "
            "each code point as one to four bytes: one for plain ASCII, two for most accented letters, four for an "
            "emoji. Byte-level BPE starts from the 256 possible byte values, so it can write any text at all; "
            "everything it learns later is a shortcut for a run of bytes."
        ),
        example=example,
        try_it=base.TryIt(
            page="playground",
            what="Opens the Playground on your text with a byte-level BPE, its slider at the smallest size: "
            "every byte its own token.",
            settings=lambda state: {
                sk.ALGORITHM: "bpe",
                sk.PATTERN: "gpt2",
                sk.PENDING_SIZE: 1,  # clamped to the smallest size: no merge, one token per byte
            },
        ),
    )
)
