"""WordPiece's words: lower-casing, BERT-style pre-tokenization and word counts.

Text is split on special tokens first, optionally lower-cased one character at
a time (so offsets map back), then cut BERT-style: whitespace separates words
and every punctuation character is a word of its own
(:data:`bpe_core.pretokenize.BERT_PATTERN`, as Hugging Face ``BertPreTokenizer``).
The trainer, the encoder and the trace all read words through this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import regex

from ..pretokenize import (
    BERT_PATTERN,
    SURROGATE,
    compile_pattern,
    split_special,
    surrogate_error,
    validate_special_tokens,
)

__all__ = [
    "BERT_RX",
    "SURROGATE",
    "bert_words",
    "count_words",
    "lowercase_text",
    "normalize_with_origin",
    "surrogate_error",
]

BERT_RX = compile_pattern(BERT_PATTERN)
"""The compiled BERT-style split (``findall`` gives a segment's words)."""


def lowercase_text(text: str) -> str:
    """Lower-case ``text`` one character at a time.

    Equal to ``"".join(c.lower() for c in text)``: unlike ``str.lower`` it maps
    a capital sigma to ``σ`` wherever it stands (no word-final ``ς``), as
    Hugging Face's ``Lowercase`` normalizer does, so that every output character
    comes from exactly one input character.  Only ``İ`` (U+0130) lower-cases to
    two characters (``i`` + U+0307).

    Args:
        text: any ``str``.

    Returns:
        The lower-cased ``str``.
    """
    return text.replace("\u03a3", "\u03c3").lower()


def normalize_with_origin(segment: str, lowercase: bool) -> tuple[str, list[int] | None]:
    """Lower-case ``segment`` if asked, keeping where each character came from.

    Returns ``(normalized, origin)``; ``origin[j]`` is the index in ``segment`` of normalized char ``j``.

    ``origin`` is ``None`` when the mapping is the identity (no lower-casing, or
    no character changed length).
    """
    if not lowercase:
        return segment, None
    norm = lowercase_text(segment)
    if len(norm) == len(segment):
        return norm, None
    origin: list[int] = []
    for i, ch in enumerate(segment):
        origin.extend([i] * len(lowercase_text(ch)))
    return norm, origin


COUNT_CHUNK = 1 << 20
"""Characters counted per step (cut at whitespace, which no word crosses), between progress reports."""


def count_words(
    text: str,
    special_tokens: Sequence[str] = (),
    lowercase: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[dict[str, int], int]:
    """Count the BERT-style words of a text, in order of first appearance.

    Args:
        text: the training text.
        special_tokens: special-token strings; their occurrences are cut out
            (longest match first) before anything else and never counted.
        lowercase: lower-case each segment with :func:`lowercase_text` first.
        progress: optional ``progress("count", chunks done, chunks)``, called
            after each chunk of about :data:`COUNT_CHUNK` characters (cut at a
            whitespace character, so the counts are those of the whole text;
            ``chunks`` is the text's length over :data:`COUNT_CHUNK`, rounded
            up, and ``done`` never passes it); it may raise to stop.

    Returns:
        ``(counts, n_special)``: ``{word: occurrences}`` whose iteration order is
        the order of first appearance, and the number of special-token
        occurrences removed.

    Raises:
        TypeError, ValueError: bad special tokens (see
            :func:`bpe_core.pretokenize.validate_special_tokens`).
    """
    specials = validate_special_tokens(special_tokens)
    counts: Counter = Counter()
    n_special = 0
    done = 0
    total = max(1, -(-len(text) // COUNT_CHUNK))
    for segment, is_special in split_special(text, specials):
        if is_special:
            n_special += 1
            done += len(segment)
        else:
            for chunk in _chunks(segment):
                counts.update(bert_words(lowercase_text(chunk) if lowercase else chunk))
                done += len(chunk)
                if progress is not None:
                    progress("count", min(-(-done // COUNT_CHUNK), total), total)
    return dict(counts), n_special


_SPACE = regex.compile(r"\s")
_SPLIT_ONLY_SPACE = regex.compile("[\x1c-\x1f]")
"""The characters ``str.split`` takes for whitespace and ``\\s`` (Unicode's White_Space) does not."""

_PUNCT = regex.compile(BERT_PATTERN.rsplit("|", 1)[1])
"""One punctuation character: the second alternative of :data:`~bpe_core.pretokenize.BERT_PATTERN`."""


def bert_words(text: str) -> list[str]:
    """The BERT-style words of ``text``, in order: equal to ``BERT_RX.findall(text)``, about twice as fast.

    Each punctuation character gets a space on each side, then ``str.split``
    cuts at whitespace (in C).  A text holding U+001C..U+001F, which
    ``str.split`` takes for whitespace and BERT's pattern does not, is split
    with the regex alone.
    """
    if _SPLIT_ONLY_SPACE.search(text) is not None:
        return BERT_RX.findall(text)
    return _PUNCT.sub(r" \g<0> ", text).split()


def _chunks(segment: str) -> Iterator[str]:
    """``segment`` in pieces of about :data:`COUNT_CHUNK` characters, each cut just before a whitespace character."""
    start, n = 0, len(segment)
    while n - start > COUNT_CHUNK:
        cut = -1
        for m in _SPACE.finditer(segment, start + COUNT_CHUNK, min(n, start + 2 * COUNT_CHUNK)):
            cut = m.start()
            break
        if cut < 0:
            m = _SPACE.search(segment, start + 2 * COUNT_CHUNK)
            if m is None:
                break
            cut = m.start()
        yield segment[start:cut]
        start = cut
    yield segment[start:]
