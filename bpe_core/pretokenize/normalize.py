"""Normalization, the step before pre-tokenization: BERT's clean-up, accent stripping and lower-casing.

A tokenizer's pipeline starts by *normalizing* the text: removing characters that
carry nothing, unifying whitespace, and (for "uncased" models) dropping accents and
case, so that ``Héllò`` and ``hello`` become the same word.  :func:`bert_normalize`
is BERT's normalizer as Hugging Face ``tokenizers`` implements it
(``normalizers.BertNormalizer``, ``src/normalizers/bert.rs``), in the same order:

1. clean the text: drop NUL, U+FFFD and every control, format or private-use character
   (categories ``Cc``, ``Cf``, ``Co``; unassigned code points stay) except tab, newline and
   carriage return; every whitespace character becomes a space;
2. put a space on each side of every CJK ideograph (so each becomes a word of its own);
3. strip accents: decompose (NFD) and drop the non-spacing marks (category ``Mn``);
4. lower-case, one character at a time (a capital sigma is always ``σ``, as in ``tokenizers``).

Characters are classified with Python's :mod:`unicodedata`; ``tokenizers`` uses its own
Unicode tables, so the two can differ on a few rare marks whose category differs between
Unicode versions (such as U+0AFD or U+1734, which ``tokenizers`` keeps); on the common
scripts they agree character for character (``tests/engine/test_normalize.py``).

>>> bert_normalize("Héllò hów are ü?")
'hello how are u?'
"""

from __future__ import annotations

import unicodedata

__all__ = ["CJK_RANGES", "bert_normalize"]

CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
"""The code-point blocks BERT treats as Chinese characters (CJK Unified Ideographs and their extensions and
compatibility forms), inclusive; from Google's BERT ``tokenization.py``, as ``tokenizers`` copies them."""

_KEPT_CONTROLS = "\t\n\r"
_DROPPED = frozenset(("Cc", "Cf", "Co", "Cs"))


def _is_cjk(c: str) -> bool:
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


def _clean(c: str) -> str:
    """Step 1 for one character: ``""`` (dropped), ``" "`` (whitespace) or the character."""
    if c in ("\x00", "\ufffd") or (c not in _KEPT_CONTROLS and unicodedata.category(c) in _DROPPED):
        return ""
    return " " if c in _KEPT_CONTROLS or c.isspace() else c


def bert_normalize(
    text: str,
    *,
    clean_text: bool = True,
    handle_chinese_chars: bool = True,
    strip_accents: bool | None = None,
    lowercase: bool = True,
) -> str:
    """BERT's normalization of ``text`` (the defaults are ``bert-base-uncased``'s).

    Args:
        text: any ``str``.
        clean_text: step 1 (see the module docstring).
        handle_chinese_chars: step 2.
        strip_accents: step 3; ``None`` follows ``lowercase``, as in ``tokenizers``.
        lowercase: step 4.

    Returns:
        The normalized text (characters; it may be longer than ``text``: a decomposed
        character keeps its base letter, a CJK ideograph gains two spaces).

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if clean_text:
        text = "".join(_clean(c) for c in text)
    if handle_chinese_chars:
        text = "".join(f" {c} " if _is_cjk(c) else c for c in text)
    if lowercase if strip_accents is None else strip_accents:
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    if lowercase:
        text = "".join(c.lower() for c in text)
    return text
