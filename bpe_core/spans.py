"""Token spans: the pure-data view of how a tokenizer cut a text.

Every tokenizer in this package answers ``token_spans(text) -> list[TokenSpan]``
(the :class:`bpe_core.interface.Tokenizer` protocol); the colouring,
the metrics and the comparison page consume only that.  Nothing here knows
about HTML: ``ui/`` turns spans into markup.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenSpan:
    """One token of an encoded text.

    Attributes:
        id: the token id.
        token_bytes: the token's bytes (for WordPiece, the UTF-8 of the token's
            vocabulary string, ``##`` prefix included).
        display: printable form: the decoded text, or for a token that holds
            only part of a UTF-8 character, its bytes written ``<0xE2>`` (the
            byte-fallback notation) so that no mojibake is ever shown.
        start: offset of the first character the token touches (characters).
        end: offset one past the last character the token touches (characters).
            Tokens that split one character between them share its range.
        is_special: the token is a special token such as ``<|endoftext|>``.
        is_partial: the token starts or ends inside a multi-byte UTF-8 character
            (WordPiece: inside what lower-casing made of one character, ``İ`` -> ``i̇``).
        rank: merge rank that created the token (0 = first merge), or ``None``
            for single bytes, alphabet characters and special tokens.
        is_continuation: WordPiece only: the token continues a word (``##``).
        is_byte_fallback: the token is a byte piece (``<0xE3>``) standing for one UTF-8 byte of a
            character the vocabulary has no piece for (SentencePiece-style *byte fallback*);
            never set for byte-level BPE, whose tokens are all bytes.
    """

    id: int
    token_bytes: bytes
    display: str
    start: int
    end: int
    is_special: bool = False
    is_partial: bool = False
    rank: int | None = None
    is_continuation: bool = False
    is_byte_fallback: bool = False


def _byte_fallback_handler(err: UnicodeDecodeError) -> tuple[str, int]:
    bad = err.object[err.start : err.end]
    return "".join(f"<0x{b:02X}>" for b in bad), err.end


codecs.register_error("bpe_playground_hex", _byte_fallback_handler)


def display_bytes(data: bytes) -> str:
    """Printable form of a byte string: UTF-8 text, with invalid bytes as ``<0xNN>``.

    Args:
        data: any bytes.

    Returns:
        ``str``; valid UTF-8 sequences are decoded, every byte that is not part
        of a complete character is written ``<0xNN>`` (upper-case hex).
    """
    return data.decode("utf-8", errors="bpe_playground_hex")


def utf8_len(ch: str) -> int:
    """Number of UTF-8 bytes of one character (1-4); surrogates count 3, as if encoded with surrogatepass."""
    c = ord(ch)
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


def spans_from_token_bytes(
    text: str,
    ids: Sequence[int],
    token_bytes: Sequence[bytes],
    *,
    special_ids: frozenset[int] | set[int] = frozenset(),
    rank_of: Callable[[int], int | None] = lambda _id: None,
) -> list[TokenSpan]:
    """Lay a byte-level token sequence over the text it encodes.

    Args:
        text: the encoded text; the UTF-8 of ``text`` must equal the
            concatenation of ``token_bytes`` (or start with it, when only a
            prefix of the tokens is given).
        ids: token ids, in order.
        token_bytes: the bytes of each token, same length as ``ids``.
        special_ids: ids to flag as special tokens.
        rank_of: maps an id to its merge rank, or ``None``.

    Returns:
        One :class:`TokenSpan` per token, with character offsets.

    Raises:
        ValueError: the tokens hold more bytes than ``text`` has.
    """
    out: list[TokenSpan] = []
    n_chars = len(text)
    ci = 0  # index of the character that contains byte `pos`
    c_start = 0  # byte offset where character `ci` starts
    pos = 0
    for tid, tb in zip(ids, token_bytes):
        n = len(tb)
        if n == 0:
            out.append(TokenSpan(tid, tb, "", ci, ci, tid in special_ids, False, rank_of(tid)))
            continue
        # advance to the character holding the token's first byte
        while ci < n_chars and c_start + utf8_len(text[ci]) <= pos:
            c_start += utf8_len(text[ci])
            ci += 1
        if ci >= n_chars:
            raise ValueError("the tokens hold more bytes than the text")
        start_aligned = c_start == pos
        start = ci
        # find the character holding the token's last byte, without moving the main cursor
        last = pos + n - 1
        cj, cj_start = ci, c_start
        while cj < n_chars and cj_start + utf8_len(text[cj]) <= last:
            cj_start += utf8_len(text[cj])
            cj += 1
        if cj >= n_chars:
            raise ValueError("the tokens hold more bytes than the text")
        end_aligned = cj_start + utf8_len(text[cj]) == pos + n
        partial = not (start_aligned and end_aligned)
        display = display_bytes(tb) if partial else text[start : cj + 1]
        out.append(TokenSpan(tid, tb, display, start, cj + 1, tid in special_ids, partial, rank_of(tid)))
        pos += n
    return out
