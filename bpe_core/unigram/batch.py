r"""Unigram tokens of many pieces at once, as flat arrays: the corpus figures' encoder of a trained Unigram.

Corpus figures (:mod:`bpe_core.analysis.corpus`) ask a tokenizer for the tokens of
every distinct piece of a corpus (:class:`bpe_core.pieces.PieceTokens`).  The
textbook way is :meth:`bpe_core.unigram.UnigramTokenizer.token_spans` on each
piece, one :class:`~bpe_core.spans.TokenSpan` per token
(:func:`textbook_piece_tokens`).  :func:`unigram_piece_tokens` gives the same
arrays without a Python object per token or per piece:

1. the pieces that hold a special token are found with one search over all of
   them (:func:`special_kinds`); a piece that *is* a special token is that
   token, one that holds one elsewhere goes the textbook way (the splits of
   :mod:`bpe_core.pieces` never make one);
2. the other pieces become lattice words in numpy, over their code points:
   SentencePiece-style, every space is ``"▁"``, a ``"▁"`` is put in front of a
   piece where :func:`~bpe_core.unigram.encoder.lattice_words` puts one, and a
   word starts at every ``"▁"`` and at every piece's start; with another
   pattern, each piece's pre-tokens (:func:`~bpe_core.pretokenize.iter_pretoken_strings`);
3. every word's Viterbi segmentation at once (:func:`~bpe_core.unigram.encoder.viterbi_packed`,
   compiled);
4. each token's range moved back to the piece's characters (the ``"▁"`` put in
   front stands for none), and with byte fallback an unknown run written as
   the byte pieces of its characters' UTF-8 (:func:`byte_fallback_tokens`).

``tests/engine/test_unigram_batch.py`` holds :func:`unigram_piece_tokens` to
:func:`textbook_piece_tokens` on real and adversarial pieces, both with the
compiled Viterbi and with the Python one.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from ..pieces import (
    KIND_BYTE_FALLBACK,
    KIND_SPECIAL,
    KIND_UNKNOWN,
    PieceTokens,
    code_points,
    combine_piece_tokens,
    piece_tokens_from_spans,
)
from ..pretokenize import iter_pretoken_strings
from ..pretokenize.special import special_regex
from .encoder import METASPACE, PREPEND_FIRST, viterbi_packed

__all__ = [
    "BATCH_CHARS",
    "byte_fallback_tokens",
    "in_batches",
    "metaspace_lattice",
    "prefixed_code_points",
    "special_kinds",
    "special_piece_tokens",
    "textbook_piece_tokens",
    "unigram_piece_tokens",
    "unknown_kinds",
]

SPACE, MARK = 0x20, ord(METASPACE)

BATCH_CHARS = 1 << 22
"""Pieces are encoded in batches of about this many characters (bounds the arrays: some 30 bytes a character)."""

PLAIN, SPECIAL, HOLDS_SPECIAL = 0, 1, 2
""":func:`special_kinds`: a piece without special token, a piece that is one, a piece that holds one elsewhere."""


def prefixed_code_points(pieces: Sequence[str], where: np.ndarray, char: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bpe_core.pieces.code_points` of the pieces with ``char`` put in front of those ``where`` is set.

    Args:
        pieces: the strings.
        where: ``bool[n]``, the pieces that get ``char`` in front.
        char: one character.

    Raises:
        UnicodeEncodeError: a piece holds an unpaired surrogate.

    >>> codes, starts = prefixed_code_points(["b", "", "é"], np.array([True, True, False]), "a")
    >>> codes.tolist(), starts.tolist()
    ([97, 98, 97, 233], [0, 2, 3, 4])
    """
    # one string per piece and one join: numpy's insertion into the joined code points was slower here (its
    # arrays of ten million entries, first touched, cost more than the strings: 0.38 s against 0.12 s on 20 MB)
    return code_points([char + p if w else p for p, w in zip(pieces, np.asarray(where, dtype=bool).tolist())])


def in_batches(lengths: np.ndarray, encode, limit: int | None = None) -> PieceTokens:
    """``encode(indices)`` on consecutive batches of strings of about ``limit`` characters, joined in order.

    Args:
        lengths: ``int64[n]``, each string's characters.
        encode: ``int64 indices -> PieceTokens`` of those strings (consecutive indices, in order).
        limit: characters per batch (a longer string is a batch of its own); default :data:`BATCH_CHARS`.

    >>> names = ["ab", "c", "de"]
    >>> pt = in_batches(np.array([2, 1, 2]), lambda b: special_piece_tokens([names[i] for i in b], {"ab": 1, "c": 2,
    ...                 "de": 3}), limit=3)
    >>> pt.offsets.tolist(), pt.ids.tolist(), pt.ends.tolist()
    ([0, 1, 2, 3], [1, 2, 3], [2, 1, 2])
    """
    limit = BATCH_CHARS if limit is None else limit
    ends = np.cumsum(lengths)
    bounds = [0]
    while bounds[-1] < lengths.size:
        a = bounds[-1]
        taken = int(ends[a - 1]) if a else 0
        bounds.append(max(a + 1, int(np.searchsorted(ends, taken + limit, side="right"))))
    parts = [encode(np.arange(a, b)) for a, b in itertools.pairwise(bounds)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return encode(np.arange(0))
    counts = np.concatenate([np.diff(p.offsets) for p in parts])
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    fields = (np.concatenate([getattr(p, f) for p in parts]) for f in ("ids", "starts", "ends", "kinds"))
    return PieceTokens(offsets, *fields)


def special_kinds(pieces: Sequence[str], special_tokens: Sequence[str]) -> np.ndarray:
    """``int8[len(pieces)]``: each piece :data:`PLAIN`, :data:`SPECIAL` (it is one) or :data:`HOLDS_SPECIAL`.

    One search of :func:`~bpe_core.pretokenize.special.special_regex` over the
    pieces joined by a character no special token holds (so no match crosses two
    pieces, and each piece's matches are those of ``split_special`` on it alone).

    >>> special_kinds(["<s>", "a<s>", "a", "<s"], ["<s>"]).tolist()
    [1, 2, 0, 0]
    """
    out = np.zeros(len(pieces), dtype=np.int8)
    rx = special_regex(tuple(special_tokens))
    if rx is None or not pieces:
        return out
    used = set("".join(special_tokens))
    sep = next(chr(c) for c in range(0x110000) if chr(c) not in used)
    lens = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    starts = np.zeros(len(pieces), dtype=np.int64)
    np.cumsum(lens[:-1] + 1, out=starts[1:])
    hits = np.array([m.span() for m in rx.finditer(sep.join(pieces))], dtype=np.int64).reshape(-1, 2)
    owner = np.searchsorted(starts, hits[:, 0], side="right") - 1
    out[owner] = HOLDS_SPECIAL
    whole = (hits[:, 0] == starts[owner]) & (hits[:, 1] == starts[owner] + lens[owner])
    out[owner[whole]] = SPECIAL
    return out


def special_piece_tokens(pieces: Sequence[str], special_tokens: Mapping[str, int]) -> PieceTokens:
    """The tokens of pieces that are each one special token: that token over the whole piece, kind special."""
    n = len(pieces)
    return PieceTokens(
        np.arange(n + 1, dtype=np.int64),
        np.fromiter((special_tokens[p] for p in pieces), dtype=np.int64, count=n),
        np.zeros(n, dtype=np.int64),
        np.fromiter(map(len, pieces), dtype=np.int64, count=n),
        np.full(n, KIND_SPECIAL, dtype=np.uint8),
    )


def _utf8_lengths(codes: np.ndarray) -> np.ndarray:
    """Bytes of each code point's UTF-8 (``int64``)."""
    return 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000).astype(np.int64)


def byte_fallback_tokens(
    runs: np.ndarray, lattice: np.ndarray, run_start: np.ndarray, run_end: np.ndarray, byte_ids: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unknown runs written as byte pieces: each character's UTF-8 bytes, one token each, in order.

    Args:
        runs: ``int64[r]``, the runs' indices (returned with each byte token, to place it).
        lattice: ``int32``, the lattice code points.
        run_start: ``int64[r]``, each run's start in ``lattice``.
        run_end: ``int64[r]``, its end.
        byte_ids: the id of ``<0x00>`` .. ``<0xFF>``.

    Returns:
        ``(run, char, id)`` per byte token: its run, its character's position in ``lattice``, its id.
    """
    sizes = run_end - run_start
    run = np.repeat(runs, sizes)
    char = np.repeat(run_start - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()), dtype=np.int64)
    c = lattice[char].astype(np.int64)
    nb = _utf8_lengths(c)
    which = np.repeat(np.arange(c.size), nb)
    j = np.arange(int(nb.sum()), dtype=np.int64) - np.repeat(np.cumsum(nb) - nb, nb)  # byte index in its character
    cc, n = c[which], nb[which]
    shift = 6 * (n - 1 - j)
    lead_bits = np.array([0, 0, 0xC0, 0xE0, 0xF0], dtype=np.int64)[n]
    byte = np.where(j == 0, lead_bits | (cc >> shift), 0x80 | ((cc >> shift) & 0x3F))
    return run[which], char[which], np.asarray(byte_ids, dtype=np.int64)[byte]


def textbook_piece_tokens(tok, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
    """The textbook encoder of a trained Unigram's pieces: each piece's spans as in the text, one by one.

    What :func:`unigram_piece_tokens` must equal.
    """
    return piece_tokens_from_spans([tok._spans(p, bool(f)) for p, f in zip(pieces, first)], tok.unknown_id)


def unigram_piece_tokens(tok, pieces: Sequence[str], first: Sequence[bool], *, compiled: bool) -> PieceTokens:
    """The tokens of each piece of a trained Unigram as in the text, as arrays (see the module docstring).

    Equal to :func:`textbook_piece_tokens` (tested).

    Args:
        tok: a :class:`~bpe_core.unigram.UnigramTokenizer` view.
        pieces: the distinct pieces (see :class:`bpe_core.pieces.SplitPieces`).
        first: each piece starts a document (a SentencePiece-style ``"▁"`` goes in front of it).
        compiled: run the compiled Viterbi (see :func:`~bpe_core.unigram.encoder.viterbi_packed`).

    Returns:
        A :class:`~bpe_core.pieces.PieceTokens` of ``len(pieces)`` pieces.

    Raises:
        ValueError: a piece holds an unpaired surrogate (from the textbook path, as ``token_spans``).
    """
    first = np.asarray(first, dtype=bool)
    specials = tok.special_tokens
    kinds = special_kinds(pieces, tuple(specials))
    plain, exact, holds = (np.flatnonzero(kinds == k) for k in (PLAIN, SPECIAL, HOLDS_SPECIAL))
    try:
        lengths = np.fromiter((len(pieces[i]) for i in plain.tolist()), dtype=np.int64, count=plain.size)
        plain_tokens = in_batches(
            lengths, lambda b: _plain_tokens(tok, [pieces[i] for i in plain[b].tolist()], first[plain[b]], compiled)
        )
    except UnicodeEncodeError:  # an unpaired surrogate: the textbook path raises token_spans' error
        return textbook_piece_tokens(tok, pieces, first)
    parts = [
        (plain, plain_tokens),
        (exact, special_piece_tokens([pieces[i] for i in exact], specials)),
        (holds, textbook_piece_tokens(tok, [pieces[i] for i in holds], first[holds])),
    ]
    return combine_piece_tokens(len(pieces), parts)


def _lattice(tok, pieces: list[str], first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pieces' lattice words: ``(lattice, lstart, lead, wstart)``.

    The words' code points joined, each piece's start in them, 1 where a ``"▁"``
    was put in front of it, and the words' starts (``int64[n_words + 1]``).
    """
    codes, pstart = code_points(pieces)
    n = len(pieces)
    nonempty = np.diff(pstart) > 0
    if not tok._metaspace:  # each piece's pre-tokens, as _segments cuts them
        lens = [len(w) for p in pieces for w in iter_pretoken_strings(p, tok._rx) if w] if n else []
        wstart = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lens, dtype=np.int64), out=wstart[1:])
        return codes, pstart, np.zeros(n, dtype=np.int64), wstart
    head = np.zeros(n, dtype=np.int32)
    head[nonempty] = codes[pstart[:-1][nonempty]]
    if tok.prepend == PREPEND_FIRST:
        lead = (first & nonempty).astype(np.int64)
    else:
        lead = (nonempty & (head != SPACE) & (head != MARK)).astype(np.int64)
    lattice, lstart, wstart = metaspace_lattice(codes, pstart, lead)
    return lattice, lstart, lead, wstart


def metaspace_lattice(
    codes: np.ndarray, starts: np.ndarray, lead: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SentencePiece-style lattice words of many strings at once, as :func:`~bpe_core.unigram.encoder.word_offsets`.

    Args:
        codes: ``int32``, the strings' code points joined (no special token in them).
        starts: ``int64[n + 1]``, each string's start in ``codes``.
        lead: ``int64[n]``, 1 where a ``"▁"`` is put in front of the (non-empty) string.

    Returns:
        ``(lattice, lstart, wstart)``: the code points with ``"▁"`` put in front where ``lead`` says and
        every space written ``"▁"``; each string's start in them (``int64[n + 1]``); the words' starts
        (``int64[n_words + 1]``): at every ``"▁"`` and every non-empty string's start.

    >>> lat, ls, ws = metaspace_lattice(np.array([104, 32, 105], np.int32), np.array([0, 3]), np.array([1]))
    >>> lat.tolist(), ls.tolist(), ws.tolist()
    ([9601, 104, 9601, 105], [0, 4], [0, 2, 4])
    """
    lstart = starts + np.concatenate([[0], np.cumsum(lead)])
    lattice = np.empty(int(lstart[-1]), dtype=np.int32)
    put = lstart[:-1][lead > 0]
    at = np.ones(lattice.size, dtype=bool)
    at[put] = False
    lattice[at] = np.where(codes == SPACE, MARK, codes)
    lattice[put] = MARK
    is_start = lattice == MARK
    nonempty = np.diff(lstart) > 0
    is_start[lstart[:-1][nonempty]] = True
    return lattice, lstart, np.append(np.flatnonzero(is_start), lattice.size).astype(np.int64)


def _plain_tokens(tok, pieces: list[str], first: np.ndarray, compiled: bool) -> PieceTokens:
    """:func:`unigram_piece_tokens` of pieces without special tokens."""
    n = len(pieces)
    lattice, lstart, lead, wstart = _lattice(tok, pieces, first)
    word, s, e, ids = viterbi_packed(lattice, wstart, tok.piece_table(), compiled=compiled)
    piece_of_word = np.searchsorted(lstart, wstart[:-1], side="right") - 1
    piece = piece_of_word[word]
    ls, le = wstart[word] + s, wstart[word] + e  # in the lattice
    unk = ids == tok.unknown_id
    kinds = np.zeros(ids.size, dtype=np.uint8)
    byte_ids = tok._st.byte_ids
    if byte_ids is not None and unk.any():
        runs = np.flatnonzero(unk)
        run, char, bid = byte_fallback_tokens(runs, lattice, ls[runs], le[runs], byte_ids)
        keep = np.flatnonzero(~unk)
        order = np.argsort(np.concatenate([keep, run]), kind="stable")  # byte tokens in their run's place
        piece = np.concatenate([piece[keep], piece[run]])[order]
        ids = np.concatenate([ids[keep], bid])[order]
        ls = np.concatenate([ls[keep], char])[order]
        le = np.concatenate([le[keep], char + 1])[order]
        kinds = np.concatenate([kinds[keep], np.full(bid.size, KIND_BYTE_FALLBACK, dtype=np.uint8)])[order]
    elif unk.any():
        kinds[unk] = unknown_kinds(lattice, ls[unk], le[unk], tok.unk_token)
    base = lstart[piece] + lead[piece]  # the lattice position of the piece's first character
    starts = np.maximum(ls - base, 0)
    ends = le - base
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(piece, minlength=n), out=offsets[1:])
    return PieceTokens(offsets, ids, starts, ends, kinds)


def unknown_kinds(lattice: np.ndarray, starts: np.ndarray, ends: np.ndarray, unk_token: str) -> np.ndarray:
    """:attr:`~bpe_core.pieces.PieceTokens.kinds` of unknown tokens over ``lattice[starts:ends]``.

    :data:`~bpe_core.pieces.KIND_UNKNOWN`, or :data:`~bpe_core.pieces.KIND_SPECIAL` where the characters
    spell the unknown token's own text (:func:`bpe_core.pieces.span_kind`'s rule).
    """
    out = np.full(starts.size, KIND_UNKNOWN, dtype=np.uint8)
    want = np.frombuffer(unk_token.encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    for k in np.flatnonzero(ends - starts == want.size).tolist():
        if np.array_equal(lattice[starts[k] : ends[k]], want):
            out[k] = KIND_SPECIAL
    return out
