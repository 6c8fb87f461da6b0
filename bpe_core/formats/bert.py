"""BERT's ``vocab.txt``: one WordPiece token per line, the line number is the id."""

from __future__ import annotations

import regex

from ..wordpiece.model import WordPieceTokenizer

__all__ = ["RUST_WHITESPACE", "wordpiece_from_vocab_txt", "wordpiece_to_vocab_txt"]

_BRACKETED = regex.compile(r"\[[^\[\]\s]+\]")


def wordpiece_to_vocab_txt(tok: WordPieceTokenizer) -> bytes:
    r"""Export a WordPiece vocabulary as BERT's ``vocab.txt``: one token per line, line number = id.

    The file holds no settings: readers must know the unknown token, the
    continuing-subword prefix and whether to lower-case (BERT's defaults are
    ``[UNK]``, ``##``; :func:`wordpiece_from_vocab_txt` infers lower-casing).

    Args:
        tok: the tokenizer (its current view).

    Returns:
        UTF-8 bytes, one line per token, each ending in a newline.

    Raises:
        ValueError: the tokenizer holds something a ``vocab.txt`` cannot carry,
            so the file would not import back the same (here, or in Hugging
            Face ``tokenizers``, whose reader trims whitespace at line ends); the
            message names the token and the format to use instead:

            * a token holding ``"\n"`` or ``"\r"`` (it could not be one line);
            * a token ending in whitespace (U+0020, U+0085, U+00A0, U+2028, ...);
            * a special token that is not bracketed (``[CLS]``), or an ordinary
              token that is (readers take bracketed tokens for special tokens);
            * an unknown token other than ``[UNK]`` or a prefix other than ``##``;
            * no lower-casing although no token has an upper-case letter, or
              lower-casing and such a token (readers infer lower-casing from it).
    """
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    specials = set(tok.special_tokens)
    other = "; export it as tokenizer.json or the project's JSON instead"
    for i, t in enumerate(tokens):
        if "\n" in t or "\r" in t:
            raise ValueError(f"token {i} {t!r} contains a line break and cannot be written to vocab.txt{other}")
        if t[-1] in RUST_WHITESPACE:
            raise ValueError(
                f"token {i} {t!r} ends in whitespace (U+{ord(t[-1]):04X}), which vocab.txt readers strip{other}"
            )
        bracketed = bool(_BRACKETED.fullmatch(t))
        if t in specials and tok.token_to_id(t) == i and not bracketed:
            raise ValueError(
                f"special token {t!r} is not bracketed like [CLS]: vocab.txt marks special tokens only so{other}"
            )
        if bracketed and t not in specials:
            raise ValueError(
                f"token {i} {t!r} is bracketed, so vocab.txt readers would take it for a special token{other}"
            )
    if tok.unk_token != "[UNK]" or tok.continuing_subword_prefix != "##":
        raise ValueError(
            f"vocab.txt cannot say the unknown token {tok.unk_token!r} or the prefix {tok.continuing_subword_prefix!r} "
            f"(readers assume [UNK] and ##){other}"
        )
    has_upper = any(ch.isupper() for t in tokens if t not in specials for ch in t)
    if tok.lowercase == has_upper:
        does, has, would = ("lower-cases", "an", "keep case") if tok.lowercase else ("keeps case", "no", "lower-case")
        raise ValueError(
            f"this tokenizer {does} but has {has} upper-case token, and vocab.txt has no place for that setting: "
            f"readers would {would}{other}"
        )
    return ("\n".join(tokens) + "\n").encode("utf-8")


RUST_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""Rust's ``char::is_whitespace`` (Unicode White_Space): Hugging Face trims these off vocab.txt line ends."""


def wordpiece_from_vocab_txt(data: bytes, filename: str = "vocab.txt") -> WordPieceTokenizer:
    r"""Read a BERT ``vocab.txt`` into a :class:`WordPieceTokenizer`.

    Bracketed tokens such as ``[PAD]``, ``[UNK]``, ``[unused7]`` are taken as the
    special tokens (BERT's convention); ``[UNK]`` must be among them.  The
    prefix is ``##``; the text is lower-cased when no token has an upper-case
    letter (as in BERT's uncased vocabularies).

    Args:
        data: the file's bytes.
        filename: used in messages.

    Returns:
        The tokenizer.

    Lines end at ``"\n"`` only (a ``"\r"`` before it is dropped): a token may hold
    any other character, U+001C..U+001F, U+0085 and U+2028 included, which
    :meth:`str.splitlines` would wrongly take for line ends.

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: not UTF-8, an empty line, a token ending in whitespace (which readers strip), a
            repeated token (the message names the line), or no ``[UNK]``.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be the file's bytes, got {type(data).__name__} (encode a str first)")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{filename} is not UTF-8 text: {exc}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.rstrip("\r") for line in lines]
    first_line: dict[str, int] = {}
    for i, line in enumerate(lines):
        if line in first_line:
            raise ValueError(f"{filename}: line {i + 1}: token {line[:30]!r} appears twice (first on line "
                             f"{first_line[line]}); each line holds a token of its own")  # fmt: skip
        first_line[line] = i + 1
        if line == "":
            raise ValueError(f"{filename}: line {i + 1} is empty; vocab.txt holds one token per line")
        if line[-1] in RUST_WHITESPACE:  # Hugging Face's reader (WordPiece.read_file) strips it: another token
            raise ValueError(
                f"{filename}: line {i + 1} ({line[:30]!r}) ends in whitespace (U+{ord(line[-1]):04X}), which vocab.txt "
                "readers strip; "
                "a token cannot end in whitespace in a vocab.txt"
            )
    specials = [t for t in lines if _BRACKETED.fullmatch(t)]
    if "[UNK]" not in specials:
        raise ValueError(f"{filename} has no [UNK] token: not a BERT-style vocab.txt")
    lowercase = not any(ch.isupper() for t in lines if t not in specials for ch in t)
    try:
        return WordPieceTokenizer(lines, specials, lowercase=lowercase, name=filename)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None
