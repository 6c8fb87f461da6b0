r"""Pieces: what a tokenizer declares so that its figures over a corpus come from counted distinct pieces.

Corpus figures (:mod:`bpe_core.analysis.corpus`) cut a text into *units* at
spaces that follow a non-space character, count the distinct units once for
every tokenizer, and then ask each tokenizer's :class:`~bpe_core.interface.CorpusPieces`
two things:

* ``split_units(units, first)``: cut each distinct unit into *pieces*, places
  no token of that tokenizer crosses; tokenizers whose splits are equal share
  one ``key`` and one count of pieces;
* ``encode(pieces, first)``: the tokens of each distinct piece as they are in
  the text -- ids, each token's character range inside its piece, and whether
  it is a special, unknown or byte-fallback token (a :class:`PieceTokens`).

The contract that makes the figures exact: for every text, the tokenizer's
``token_spans(text)`` equals the concatenation, over the text's units and each
unit's pieces, of ``encode``'s tokens, each range moved by the piece's offset.
``first`` marks the pieces that start a document (where a SentencePiece-style
tokenizer puts its dummy ``▁``).  Every non-first unit starts with the space of
its cut, preceded by a non-space character; every unit but a document's last
ends with a non-space character followed by that space.

The implementations here serve the tokenizers of the package:
:class:`SplitPieces` takes a splitter and, by default, encodes each piece on
its own with ``token_spans`` (the textbook way; a tokenizer passes a faster
encoder of the same tokens); :func:`regex_splitter` cuts at special tokens and
at the pre-tokens of a pattern (tiktoken-style tokenizers, trained BPE);
:func:`piece_tokens_from_spans` and :func:`piece_tokens_from_ids` build the
:class:`PieceTokens`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .pretokenize import compile_pattern, iter_pretoken_strings, resolve_pattern, split_special, validate_special_tokens
from .spans import TokenSpan

__all__ = [
    "KIND_BYTE_FALLBACK",
    "KIND_SPECIAL",
    "KIND_UNKNOWN",
    "PackedPieces",
    "PieceTokens",
    "SplitPieces",
    "code_points",
    "combine_piece_tokens",
    "cut_table_without",
    "drop_ranges",
    "lookup_pieces",
    "pack_utf8",
    "piece_tokens_from_byte_ranges",
    "piece_tokens_from_ids",
    "piece_tokens_from_spans",
    "regex_pieces",
    "regex_splitter",
    "span_kind",
    "token_lengths",
    "utf8_non_ascii",
    "without_pieces",
]

KIND_SPECIAL, KIND_UNKNOWN, KIND_BYTE_FALLBACK = 1, 2, 4
"""Bits of :attr:`PieceTokens.kinds`: a special token, an unknown-word token, a byte-fallback piece."""


@dataclass(frozen=True, slots=True)
class PieceTokens:
    """The tokens of ``n`` distinct pieces, as flat arrays.

    Token ``t`` of piece ``i`` (``offsets[i] <= t < offsets[i + 1]``, in order)
    has id ``ids[t]`` and covers the piece's characters ``starts[t]:ends[t]``
    (empty for a token that stands for no character, such as a dummy ``▁``).

    Attributes:
        offsets: ``int64[n + 1]``.
        ids: ``int64[T]``.
        starts: ``int64[T]``, characters from the piece's start.
        ends: ``int64[T]``.
        kinds: ``uint8[T]``: :data:`KIND_SPECIAL`, :data:`KIND_UNKNOWN`, :data:`KIND_BYTE_FALLBACK` bits.
    """

    offsets: np.ndarray
    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    kinds: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.size) - 1


def span_kind(span: TokenSpan, unknown_id: int | None) -> int:
    """The :attr:`PieceTokens.kinds` bits of one span, by :func:`bpe_core.analysis.metrics.compute_metrics`' rules.

    An unknown-word token is the unknown id standing for text other than its own
    string; any other special span is a special token; ``is_byte_fallback`` adds its bit.
    """
    kind = KIND_BYTE_FALLBACK if span.is_byte_fallback else 0
    if (
        unknown_id is not None
        and span.id == unknown_id
        and span.display.encode("utf-8", "surrogatepass") != (span.token_bytes)
    ):
        return kind | KIND_UNKNOWN
    return kind | (KIND_SPECIAL if span.is_special else 0)


def piece_tokens_from_spans(spans: Sequence[Sequence[TokenSpan]], unknown_id: int | None) -> PieceTokens:
    """A :class:`PieceTokens` from each piece's spans (offsets counted from the piece's start).

    >>> from bpe_core.spans import TokenSpan
    >>> pt = piece_tokens_from_spans([[TokenSpan(5, b"ab", "ab", 0, 2)], []], None)
    >>> pt.offsets.tolist(), pt.ids.tolist(), pt.ends.tolist()
    ([0, 1, 1], [5], [2])
    """
    offsets = np.zeros(len(spans) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in spans], out=offsets[1:])
    flat = [s for group in spans for s in group]
    return PieceTokens(
        offsets,
        np.fromiter((s.id for s in flat), dtype=np.int64, count=len(flat)),
        np.fromiter((s.start for s in flat), dtype=np.int64, count=len(flat)),
        np.fromiter((s.end for s in flat), dtype=np.int64, count=len(flat)),
        np.fromiter((span_kind(s, unknown_id) for s in flat), dtype=np.uint8, count=len(flat)),
    )


class PackedPieces(list):
    """A list of pieces (``str``) that carries their UTF-8 end to end, as :func:`pack_utf8` would make it.

    Corpus figures hold each split's distinct pieces packed already
    (:class:`bpe_core.analysis.corpus.PieceCounts`); handed to an encoder as
    this list, :func:`pack_utf8` returns the arrays it carries instead of
    encoding the strings again (0.04 s for cl100k's 265,444 pieces of the
    20 MB corpus, once per tokenizer).  A slice or copy is a plain ``list``.

    Args:
        pieces: the strings.
        data: ``uint8[B]``, their UTF-8 end to end.
        offsets: ``int64[n + 1]``, where each starts in ``data`` (bytes).

    Raises:
        ValueError: ``offsets`` does not hold one range per piece ending at ``data``'s end.

    >>> packed = PackedPieces(["a", "é"], np.array([97, 195, 169], dtype=np.uint8), np.array([0, 1, 3]))
    >>> pack_utf8(packed)[1].tolist(), packed[1:]
    ([0, 1, 3], ['é'])
    """

    __slots__ = ("data", "offsets")

    def __init__(self, pieces: Sequence[str], data: np.ndarray, offsets: np.ndarray) -> None:
        super().__init__(pieces)
        if offsets.size != len(self) + 1 or (offsets.size and int(offsets[-1]) != data.size):
            raise ValueError(f"offsets of {offsets.size} entries for {len(self)} pieces of {data.size} bytes")
        self.data = data
        self.offsets = offsets


def code_points(strings: Sequence[str], dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, starts)``: the strings' code points end to end and where each string starts (``int64[n + 1]``).

    Args:
        strings: the strings.
        dtype: the codes' type: ``np.int32`` (a new array) or ``np.uint32``
            (a read-only view of the text encoded as UTF-32, nothing copied).

    Raises:
        UnicodeEncodeError: a string holds an unpaired surrogate.

    >>> codes, starts = code_points(["ab", "", "é"])
    >>> codes.tolist(), starts.tolist()
    ([97, 98, 233], [0, 2, 2, 3])
    """
    starts = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)), out=starts[1:])
    codes = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32)
    return codes.astype(dtype, copy=False), starts


def pack_utf8(pieces: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(data, offsets)``: the pieces' UTF-8 end to end (``uint8``) and where each starts (``int64[n + 1]``, bytes).

    A :class:`PackedPieces` gives the arrays it carries.

    Raises:
        ValueError: a piece holds an unpaired surrogate (no UTF-8 form).

    >>> data, offsets = pack_utf8(["a", "é", ""])
    >>> data.tolist(), offsets.tolist()
    ([97, 195, 169], [0, 1, 3, 3])
    """
    if isinstance(pieces, PackedPieces):
        return pieces.data, pieces.offsets
    joined = "".join(pieces)
    try:
        data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    except UnicodeEncodeError as exc:
        raise ValueError(f"a piece holds an unpaired surrogate at {exc.start}: no UTF-8 form") from None
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    sizes = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)  # each character's UTF-8 bytes
    char_end = np.zeros(cps.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=char_end[1:])
    chars = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=chars[1:])
    return data, char_end[chars]


def without_pieces(pieces: Sequence[str], drop: np.ndarray) -> PackedPieces:
    """The pieces but those at ``drop``, in order, as a :class:`PackedPieces` (their UTF-8 copied, not encoded again).

    Args:
        pieces: the strings (a :class:`PackedPieces` lends its bytes; any other list is packed first).
        drop: ``int64``, sorted positions in ``pieces`` to leave out.

    Raises:
        ValueError: as :func:`pack_utf8`.

    >>> kept = without_pieces(["a", "é", "bc"], np.array([1]))
    >>> list(kept), kept.data.tolist(), kept.offsets.tolist()
    (['a', 'bc'], [97, 98, 99], [0, 1, 3])
    """
    drop = np.asarray(drop, dtype=np.int64)
    keep = np.ones(len(pieces), dtype=bool)
    keep[drop] = False
    return PackedPieces(list(itertools.compress(pieces, keep.tolist())), *drop_ranges(*pack_utf8(pieces), drop))


def drop_ranges(values: np.ndarray, offsets: np.ndarray, drop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)`` of ranges laid end to end, less the ranges at ``drop``.

    Copies the runs of ranges between two dropped ones (one copy of ``values`` whatever their count: a gather
    through an index per item cost ten times more on the 9-million-character units of the 20 MB corpus).

    Args:
        values: the ranges' items end to end (any dtype).
        offsets: ``int64[n + 1]``, where each range starts in ``values``.
        drop: ``int64``, sorted positions of the ranges to leave out.

    >>> v, o = drop_ranges(np.array([1, 2, 3, 4, 5]), np.array([0, 2, 2, 5]), np.array([0]))
    >>> v.tolist(), o.tolist()
    ([3, 4, 5], [0, 0, 3])
    """
    drop = np.asarray(drop, dtype=np.int64)
    if not drop.size:
        return values, offsets
    bounds = np.concatenate([[0], drop + 1]), np.concatenate([drop, [offsets.size - 1]])
    runs = [values[offsets[a] : offsets[z]] for a, z in zip(*(b.tolist() for b in bounds)) if z > a]
    kept = np.delete(np.diff(offsets), drop)
    out = np.zeros(kept.size + 1, dtype=np.int64)
    np.cumsum(kept, out=out[1:])
    return (np.concatenate(runs) if runs else values[:0]), out


def utf8_non_ascii(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``bool[n]``: the pieces (``data``/``offsets`` as :func:`pack_utf8` gives them) holding a non-ASCII byte.

    >>> utf8_non_ascii(*pack_utf8(["ab", "é", ""])).tolist()
    [False, True, False]
    """
    wide = np.zeros(data.size + 1, dtype=np.int64)
    np.cumsum(data >= 0x80, out=wide[1:])
    return wide[offsets[1:]] > wide[offsets[:-1]]


def lookup_pieces(pieces: Sequence[str], byte_sizes: np.ndarray, table: Mapping[str, int]) -> np.ndarray:
    """``int64[n]``: each piece's id in ``table`` (added or special tokens), ``-1`` for a piece not in it.

    Only pieces as long (in UTF-8 bytes, ``byte_sizes``: ``np.diff`` of :func:`pack_utf8`'s offsets) as some
    key of ``table`` are looked up.

    >>> lookup_pieces(["<s>", "ab", "<s"], np.array([3, 2, 2]), {"<s>": 1}).tolist()
    [1, -1, -1]
    """
    out = np.full(len(pieces), -1, dtype=np.int64)
    if not table:
        return out
    sizes = np.unique(np.fromiter((len(t.encode("utf-8")) for t in table), dtype=np.int64, count=len(table)))
    looked = np.flatnonzero(np.isin(byte_sizes, sizes))
    candidates = map(pieces.__getitem__, looked.tolist())
    out[looked] = np.fromiter(map(table.get, candidates, itertools.repeat(-1)), dtype=np.int64, count=looked.size)
    return out


def piece_tokens_from_byte_ranges(
    data: np.ndarray,
    byte_offsets: np.ndarray,
    tok_off: np.ndarray,
    ids: np.ndarray,
    byte_starts: np.ndarray,
    byte_ends: np.ndarray,
    special_ids: frozenset[int] = frozenset(),
) -> PieceTokens:
    """A :class:`PieceTokens` from tokens laid out in bytes: each token's character range, without a loop.

    A token covers every character one of its bytes belongs to (a token holding
    part of a character shares that character's range), as
    :func:`bpe_core.spans.spans_from_token_bytes` lays it out.

    Args:
        data: ``uint8[B]``: the pieces' UTF-8 end to end (:func:`pack_utf8`).
        byte_offsets: ``int64[n + 1]``: where each piece starts in ``data``.
        tok_off: ``int64[n + 1]``: where each piece's tokens start (:attr:`PieceTokens.offsets`).
        ids: ``int64[T]``: the token ids.
        byte_starts: ``int64[T]``: each token's first byte, counted from its piece's start.
        byte_ends: ``int64[T]``: the byte after each token's last (a token holds at least one byte).
        special_ids: the special tokens' ids (kind :data:`KIND_SPECIAL`).

    >>> data, offsets = pack_utf8(["é!", "a"])  # tokens: C3, A9 (both cover é), "!", "a"
    >>> pt = piece_tokens_from_byte_ranges(data, offsets, np.array([0, 3, 4]), np.array([1, 2, 3, 4]),
    ...                                    np.array([0, 1, 2, 0]), np.array([1, 2, 3, 1]))
    >>> pt.starts.tolist(), pt.ends.tolist()
    ([0, 0, 1, 0], [1, 1, 2, 1])
    """
    ids = np.asarray(ids, dtype=np.int64)
    char_of = np.cumsum((data & 0xC0) != 0x80, dtype=np.int64) - 1  # each byte's character, over all pieces
    if not ids.size:
        empty = np.zeros(0, dtype=np.int64)
        return PieceTokens(np.asarray(tok_off, dtype=np.int64), ids, empty, empty.copy(), np.zeros(0, dtype=np.uint8))
    base = np.repeat(byte_offsets[:-1], np.diff(tok_off))  # each token's piece's first byte
    first = char_of[base]
    starts = char_of[base + byte_starts] - first
    ends = char_of[base + byte_ends - 1] + 1 - first
    kinds = np.zeros(ids.size, dtype=np.uint8)
    if special_ids:
        kinds[np.isin(ids, np.fromiter(special_ids, dtype=np.int64, count=len(special_ids)))] = KIND_SPECIAL
    return PieceTokens(np.asarray(tok_off, dtype=np.int64), ids, starts, ends, kinds)


def piece_tokens_from_ids(
    pieces: Sequence[str], ids: Sequence[Sequence[int]], lengths: np.ndarray, special_ids: frozenset[int] = frozenset()
) -> PieceTokens:
    """A :class:`PieceTokens` of a byte-level tokenizer from each piece's ids and the tokens' byte lengths.

    For a tokenizer whose tokens' bytes concatenate to the piece's UTF-8
    (byte-level BPE, the tiktoken encodings), each token's character range
    follows from the byte lengths (:func:`piece_tokens_from_byte_ranges`).

    Args:
        pieces: the pieces.
        ids: each piece's token ids.
        lengths: token id -> bytes (:func:`bpe_core.analysis.metrics.byte_lengths`).
        special_ids: the special tokens' ids (kind :data:`KIND_SPECIAL`).

    Raises:
        ValueError: a piece's tokens do not hold exactly its UTF-8 bytes.
    """
    counts = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(offsets[-1]))
    data, byte_offsets = pack_utf8(pieces)
    piece_bytes = np.diff(byte_offsets)
    tok_len = lengths[flat] if flat.size else np.zeros(0, dtype=np.int64)
    per_piece = np.add.reduceat(tok_len, offsets[:-1]) if flat.size else np.zeros(len(pieces), dtype=np.int64)
    per_piece[counts == 0] = 0
    if not np.array_equal(per_piece, piece_bytes):
        bad = int(np.flatnonzero(per_piece != piece_bytes)[0])
        raise ValueError(f"the tokens of piece {pieces[bad]!r} hold {per_piece[bad]} bytes, not {piece_bytes[bad]}")
    tok_end = np.cumsum(tok_len)  # byte offsets over all pieces (the pieces are laid end to end)
    base = np.repeat(byte_offsets[:-1], counts)
    return piece_tokens_from_byte_ranges(data, byte_offsets, offsets, flat, tok_end - tok_len - base, tok_end - base,
                                         special_ids)  # fmt: skip


def combine_piece_tokens(n: int, parts: Sequence[tuple[Sequence[int], PieceTokens]]) -> PieceTokens:
    """One :class:`PieceTokens` of ``n`` pieces from parts that each cover some of them.

    Args:
        n: the number of pieces.
        parts: ``(indices, tokens)``: ``tokens`` holds the pieces ``indices`` (in that order);
            together the parts hold every piece once.

    >>> a = piece_tokens_from_spans([[TokenSpan(1, b"a", "a", 0, 1)]], None)
    >>> b = piece_tokens_from_spans([[], [TokenSpan(2, b"b", "b", 0, 1)]], None)
    >>> combine_piece_tokens(3, [([1], a), ([0, 2], b)]).ids.tolist()
    [1, 2]
    """
    parts = [(np.asarray(idx, dtype=np.int64), pt) for idx, pt in parts if len(idx)]
    if len(parts) == 1 and np.array_equal(parts[0][0], np.arange(n)):
        return parts[0][1]
    counts = np.zeros(n, dtype=np.int64)
    for idx, pt in parts:
        counts[idx] = np.diff(pt.offsets)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    ids, starts, ends = (np.zeros(total, dtype=np.int64) for _ in range(3))
    kinds = np.zeros(total, dtype=np.uint8)
    for idx, pt in parts:
        sizes = np.diff(pt.offsets)
        # where each token of the part goes: its piece's new offset plus its rank inside the piece
        dest = np.repeat(offsets[idx], sizes) + (np.arange(int(pt.offsets[-1])) - np.repeat(pt.offsets[:-1], sizes))
        ids[dest], starts[dest], ends[dest], kinds[dest] = pt.ids, pt.starts, pt.ends, pt.kinds
    return PieceTokens(offsets, ids, starts, ends, kinds)


def cut_table_without(characters: str | Sequence[str]) -> np.ndarray:
    """``uint8[0x110000]``: 1 for every character but ``characters`` (a :meth:`SplitPieces.cut_after` table).

    >>> t = cut_table_without(">\u2581")
    >>> int(t[ord(">")]), int(t[ord("a")])
    (0, 1)
    """
    table = np.ones(0x110000, dtype=np.uint8)
    for c in characters:
        table[ord(c)] = 0
    return table


def token_lengths(vocab: dict[int, bytes]) -> np.ndarray:
    """Token id -> length in bytes (``int64``; ids not in ``vocab`` hold 0), for :func:`piece_tokens_from_ids`."""
    table = np.zeros(max(vocab, default=-1) + 1, dtype=np.int64)
    for i, b in vocab.items():
        table[i] = len(b)
    return table


def regex_splitter(pattern: str, special_tokens: Sequence[str] = ()) -> Callable[[str], list[str]]:
    """``unit -> pieces``: a unit cut at its special tokens and, between them, at the pattern's pre-tokens.

    The pieces are what :func:`bpe_core.pretokenize.pretokenize` gives on the
    unit (gaps a custom pattern leaves included), so for a tokenizer that
    encodes each pre-token on its own, and whose pattern cuts a unit as it cuts
    the unit inside the text (true of the named patterns at every unit cut:
    no alternative matches across a space that follows a non-space), each piece
    is one of its pre-tokens.

    Args:
        pattern: pattern name or regex source.
        special_tokens: the special-token strings, cut out first (longest match first).

    Raises:
        TypeError, ValueError: a bad pattern or special-token list.
    """
    rx = compile_pattern(pattern)
    specials = validate_special_tokens(special_tokens)

    def split(unit: str) -> list[str]:
        if not specials:
            return iter_pretoken_strings(unit, rx)
        out: list[str] = []
        for segment, is_special in split_special(unit, specials):
            if is_special:
                out.append(segment)
            else:
                out += iter_pretoken_strings(segment, rx)
        return out

    return split


class SplitPieces:
    """A :class:`~bpe_core.interface.CorpusPieces` from a splitter and an encoder of single pieces.

    Args:
        tokenizer: the tokenizer measured (its ``token_spans`` and ``unknown_id`` serve the default encoder).
        key: tokenizers with equal keys cut units alike (a hashable value naming the split).
        split: ``unit -> pieces`` (strings that concatenate to the unit); ``None``: the unit is one piece.
        encode: ``(pieces, first) -> PieceTokens``; default: each piece's ``token_spans`` on its own
            (right when a piece encodes alone as it does in the text).
        cut_after: ``uint8[0x110000]``: the non-space characters a unit may end after (1), or ``None``: any.
    """

    def __init__(
        self,
        tokenizer,
        key: Hashable,
        split: Callable[[str], list[str]] | None = None,
        encode: Callable[[Sequence[str], Sequence[bool]], PieceTokens] | None = None,
        cut_after: np.ndarray | None = None,
    ) -> None:
        self._tokenizer = tokenizer
        self.key = key
        self._split = split
        self._encode = encode
        self._cut_after = cut_after

    def cut_after(self) -> np.ndarray | None:
        """The characters a unit may end after (``uint8[0x110000]``), or ``None`` for every non-space one."""
        return self._cut_after

    @property
    def whole_units(self) -> bool:
        """Each unit is one piece (no splitter): the distinct pieces are the distinct units themselves."""
        return self._split is None

    def split_units(self, units: Sequence[str], first: Sequence[bool]) -> tuple[list[str], np.ndarray]:
        """Every unit's pieces, flat, and how many each unit has (``int64[len(units)]``).

        ``first`` is passed for the tokenizers that cut a document's first unit
        otherwise (none here: the splitter sees the unit alone either way).
        """
        split = self._split
        if split is None:
            return list(units), np.ones(len(units), dtype=np.int64)
        flat: list[str] = []
        sizes = np.empty(len(units), dtype=np.int64)
        extend = flat.extend
        for k, unit in enumerate(units):
            pieces = split(unit)
            extend(pieces)
            sizes[k] = len(pieces)
        return flat, sizes

    def encode(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The tokens of each piece (see :class:`PieceTokens`); ``first``: the piece starts a document."""
        if self._encode is not None:
            return self._encode(pieces, first)
        tok = self._tokenizer
        return piece_tokens_from_spans([tok.token_spans(p) for p in pieces], tok.unknown_id)


def regex_pieces(
    tokenizer,
    pattern: str,
    special_tokens: Sequence[str] = (),
    encode: Callable[[Sequence[str], Sequence[bool]], PieceTokens] | None = None,
    cut_after: np.ndarray | None = None,
) -> SplitPieces:
    """The :class:`SplitPieces` of a tokenizer whose pieces are its special tokens and a pattern's pre-tokens.

    Its key is ``("pre-tokens", pattern source, sorted special tokens)``: every
    tokenizer split this way shares one count of pieces.

    Args:
        tokenizer: the tokenizer (its ``token_spans`` is the default encoder).
        pattern: pattern name or regex source (see :func:`regex_splitter`).
        special_tokens: the special-token strings its text reads.
        encode: a faster encoder of the same tokens (see :class:`SplitPieces`).
        cut_after: the characters a unit may end after (see :class:`SplitPieces`; default: any).

    Raises:
        TypeError, ValueError: a bad pattern or special-token list.
    """
    source = resolve_pattern(pattern)
    specials = validate_special_tokens(special_tokens)
    key = ("pre-tokens", source, tuple(sorted(specials)))
    return SplitPieces(tokenizer, key, regex_splitter(source, specials), encode, cut_after)
