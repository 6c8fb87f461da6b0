"""Characters by script: the groups of the per-script figures, and tokens per character in each group.

:func:`char_group` puts one character in a group of :data:`SCRIPT_GROUPS` (the
Unicode Script property, with digits, emoji, whitespace, and punctuation and
symbols apart; combining marks join the group of the character before them);
:func:`script_breakdown` shares each token among the characters it covers.
:func:`char_group_table` is :func:`char_group` for every code point at once, the
table the compiled corpus figures read (:mod:`bpe_core.analysis.corpus`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import regex

from ..spans import TokenSpan, utf8_len

__all__ = [
    "INHERITED",
    "SCRIPT_GROUPS",
    "ScriptRow",
    "char_group",
    "char_group_table",
    "char_groups",
    "script_breakdown",
]

SCRIPT_GROUPS: tuple[str, ...] = (
    "Latin",
    "Cyrillic",
    "Greek",
    "Han",
    "Kana",
    "Hangul",
    "Arabic",
    "Hebrew",
    "Devanagari",
    "Thai",
    "Other scripts",
    "Emoji",
    "Digits",
    "Punctuation & symbols",
    "Whitespace",
    "Other",
)
"""The groups :func:`char_group` returns, in display order."""

_SCRIPT_RX = [
    (name, regex.compile(rf"\p{{Script={script}}}"))
    for name, script in [
        ("Latin", "Latin"),
        ("Cyrillic", "Cyrillic"),
        ("Greek", "Greek"),
        ("Han", "Han"),
        ("Kana", "Hiragana"),
        ("Kana", "Katakana"),
        ("Hangul", "Hangul"),
        ("Arabic", "Arabic"),
        ("Hebrew", "Hebrew"),
        ("Devanagari", "Devanagari"),
        ("Thai", "Thai"),
    ]
]
_EMOJI_RX = regex.compile(r"[\p{Emoji_Presentation}\p{Emoji_Modifier}\p{Regional_Indicator}\u200d\ufe0f\u20e3]")
_PICTO_RX = regex.compile(r"\p{Extended_Pictographic}")
_TAG_RANGE = range(0xE0020, 0xE0080)
_DIGIT_RX = regex.compile(r"\p{Nd}")
_PUNCT_RX = regex.compile(r"[\p{P}\p{S}]")
_INHERITED_RX = regex.compile(r"\p{Script=Inherited}")
_ANY_SCRIPT_RX = regex.compile(r"[^\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]")


def char_group(ch: str, previous: str | None = None) -> str:
    """The display group of one character (see :data:`SCRIPT_GROUPS`).

    Whitespace, decimal digits and emoji (emoji-presentation and pictographic
    characters from U+2300 on, skin-tone modifiers, flags' regional indicators,
    the zero-width joiner, variation selector 16, keycap and tag characters)
    come first; then the Unicode Script property (Hiragana and Katakana form
    "Kana"); combining marks (Script=Inherited) join ``previous``'s group;
    remaining punctuation and symbols; anything else is "Other".

    Args:
        ch: one character.
        previous: the group of the character before it, if any.

    Returns:
        A member of :data:`SCRIPT_GROUPS`.
    """
    if ch.isspace():
        return "Whitespace"
    if _DIGIT_RX.match(ch):
        return "Digits"
    cp = ord(ch)
    if _EMOJI_RX.match(ch) or (cp >= 0x2300 and _PICTO_RX.match(ch)) or cp in _TAG_RANGE:
        return "Emoji"
    for name, rx in _SCRIPT_RX:
        if rx.match(ch):
            return name
    if _INHERITED_RX.match(ch):
        return previous or "Other"
    if _ANY_SCRIPT_RX.match(ch):
        return "Other scripts"
    if _PUNCT_RX.match(ch):
        return "Punctuation & symbols"
    return "Other"


def char_groups(text: str) -> list[str]:
    """:func:`char_group` of every character of ``text`` (combining marks follow their base)."""
    out: list[str] = []
    prev = None
    for ch in text:
        g = char_group(ch, prev)
        out.append(g)
        prev = g
    return out


@dataclass(frozen=True)
class ScriptRow:
    """One group of a per-script breakdown.

    Attributes:
        group: the group name.
        characters: characters of the text in this group.
        tokens: tokens attributed to the group (fractional, see :func:`script_breakdown`).
        tokens_per_char: ``tokens / characters``.
    """

    group: str
    characters: int
    tokens: float
    tokens_per_char: float


def script_breakdown(text: str, spans: Sequence[TokenSpan]) -> list[ScriptRow]:
    """Tokens per character for each character group of a text, under one tokenizer.

    Each token counts one, shared among the characters it touches in
    proportion to their UTF-8 lengths, so the groups' token counts add up to
    the text's token count exactly (up to float rounding).

    Args:
        text: the text.
        spans: ``tokenizer.token_spans(text)``.

    Returns:
        One :class:`ScriptRow` per group present in the text, in
        :data:`SCRIPT_GROUPS` order.
    """
    groups = char_groups(text)
    chars = Counter(groups)
    tokens: dict[str, float] = dict.fromkeys(chars, 0.0)
    for s in spans:
        if s.end <= s.start:
            continue
        weights = [utf8_len(text[i]) for i in range(s.start, s.end)]
        total = sum(weights)
        for i, w in zip(range(s.start, s.end), weights):
            tokens[groups[i]] += w / total
    return [ScriptRow(g, chars[g], tokens[g], tokens[g] / chars[g]) for g in SCRIPT_GROUPS if g in chars]


INHERITED = 255
"""The code :func:`char_group_table` gives a combining mark (Script=Inherited), whose group is the previous one's."""


def _compute_group_table() -> np.ndarray:
    """:func:`char_group_table` computed with the ``regex`` module (about a second)."""
    cps = np.arange(0x110000, dtype=np.uint32)
    cps[0xD800:0xE000] = 0x3F  # surrogates: never in text; classed as "?" (then set to Other below)
    every = cps.tobytes().decode("utf-32-le")
    code = {g: i for i, g in enumerate(SCRIPT_GROUPS)}
    table = np.full(0x110000, code["Other"], dtype=np.uint8)

    def mark(rx: regex.Pattern, value: int) -> None:
        for m in regex.finditer(f"(?:{rx.pattern})+", every):
            table[m.start() : m.end()] = value

    # lowest priority first: each step overwrites what char_group would have found later
    mark(_PUNCT_RX, code["Punctuation & symbols"])
    mark(_ANY_SCRIPT_RX, code["Other scripts"])
    mark(_INHERITED_RX, INHERITED)
    for name, rx in reversed(_SCRIPT_RX):
        mark(rx, code[name])
    picto = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer(f"(?:{_PICTO_RX.pattern})+", every):
        picto[m.start() : m.end()] = True
    picto[:0x2300] = False
    table[picto] = code["Emoji"]
    table[_TAG_RANGE.start : _TAG_RANGE.stop] = code["Emoji"]
    mark(_EMOJI_RX, code["Emoji"])
    mark(_DIGIT_RX, code["Digits"])
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    table[spaces] = code["Whitespace"]
    table[0xD800:0xE000] = code["Other"]
    return table


_TABLE_LOCK = threading.Lock()


def char_group_table() -> np.ndarray:
    """``uint8[0x110000]``: each code point's index in :data:`SCRIPT_GROUPS`, or :data:`INHERITED`.

    Equal to :func:`char_group` on every character, with :data:`INHERITED` where
    :func:`char_group` would take the previous character's group (tested on
    every code point).  Kept in the kernels' cache directory (1.1 MB; computing
    it takes about a second).
    """
    with _TABLE_LOCK:
        return _group_table()


@lru_cache(maxsize=1)
def _group_table() -> np.ndarray:
    from ..counting.cache_files import cached_table, source_key

    key = source_key("analysis/scripts.py")
    return cached_table(
        "script_groups", key, _compute_group_table, lambda t: t.shape == (0x110000,) and t.dtype == np.uint8
    )
