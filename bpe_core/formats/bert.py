"""BERT's ``vocab.txt``: one WordPiece token per line, the line number is the id."""

from __future__ import annotations

import regex

from ..wordpiece.model import WordPieceTokenizer

__all__ = ["wordpiece_from_vocab_txt", "wordpiece_to_vocab_txt"]


def wordpiece_to_vocab_txt(tok: WordPieceTokenizer) -> bytes:
    """Export a WordPiece vocabulary as BERT's ``vocab.txt``: one token per line, line number = id.

    The file holds no settings: readers must know the unknown token, the
    continuing-subword prefix and whether to lower-case (BERT's defaults are
    ``[UNK]``, ``##``; :func:`wordpiece_from_vocab_txt` infers lower-casing).

    Args:
        tok: the tokenizer (its current view).

    Returns:
        UTF-8 bytes, one line per token, each ending in a newline.

    Raises:
        ValueError: a token contains a line break (it could not be one line).
    """
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    for i, t in enumerate(tokens):
        if "\n" in t or "\r" in t:
            raise ValueError(f"token {i} {t!r} contains a line break and cannot be written to vocab.txt")
    return ("\n".join(tokens) + "\n").encode("utf-8")


_BRACKETED = regex.compile(r"\[[^\[\]\s]+\]")


def wordpiece_from_vocab_txt(data: bytes, filename: str = "vocab.txt") -> WordPieceTokenizer:
    """Read a BERT ``vocab.txt`` into a :class:`WordPieceTokenizer`.

    Bracketed tokens such as ``[PAD]``, ``[UNK]``, ``[unused7]`` are taken as the
    special tokens (BERT's convention); ``[UNK]`` must be among them.  The
    prefix is ``##``; the text is lower-cased when no token has an upper-case
    letter (as in BERT's uncased vocabularies).

    Args:
        data: the file's bytes.
        filename: used in messages.

    Returns:
        The tokenizer.

    Raises:
        ValueError: not UTF-8, empty lines, no ``[UNK]``, or a repeated token.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{filename} is not UTF-8 text: {exc}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.rstrip("\r") for line in lines]
    for i, line in enumerate(lines):
        if not line.strip():
            raise ValueError(f"{filename}: line {i + 1} is empty; vocab.txt holds one token per line")
    specials = [t for t in lines if _BRACKETED.fullmatch(t)]
    if "[UNK]" not in specials:
        raise ValueError(f"{filename} has no [UNK] token: not a BERT-style vocab.txt")
    lowercase = not any(ch.isupper() for t in lines if t not in specials for ch in t)
    try:
        return WordPieceTokenizer(lines, specials, lowercase=lowercase, name=filename)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None
