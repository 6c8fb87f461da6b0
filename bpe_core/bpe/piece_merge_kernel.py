"""BPE over packed pieces, compiled: the tokens of many distinct pieces in one call (characters or bytes).

SentencePiece's BPE (``bpe_model.cc``: Mistral v1, Llama 2 style models, merges ordered by the score of the
piece they make) and llama.cpp's SentencePiece-style BPE (Gemma 4, merges ordered by rank) encode a piece the
same way once the order is a number: start from one symbol per character, repeatedly merge the adjacent pair
of lowest *rank* (ties: the leftmost pair), and spell each final symbol that is not a token in its UTF-8 byte
pieces ``<0x00>``..``<0xFF>`` (byte fallback).  For SentencePiece the rank of a pair is the dense rank of its
piece's score, highest first, so that equal scores tie and the leftmost pair wins, as ``bpe_model.cc``'s
agenda orders them.

The functions this kernel must equal are the textbook per-piece encoders it replaces:
:meth:`bpe_core.production.sentencepiece_model.SentencePieceTokenizer._encode_units_textbook` (each piece
through the ``sentencepiece`` package and ``token_spans``) and
:meth:`bpe_core.production.char_bpe.CharBPE._encode_pieces_textbook` (each piece's ``token_spans``: the merge
loop :func:`bpe_core.bpe.encoder.merge_short`); ``tests/engine/test_char_bpe_pieces.py`` checks both on real and
adversarial text, and ``tests/engine/test_corpus.py`` the corpus figures against the whole text's.

Data layout (built once per tokenizer by :class:`CharMergeTables`, read by :func:`encode_pieces`):

* ``char_ids``: ``int32[0x110000]``, each code point's symbol id, or ``-1`` for a character that is no
  token and in no merge (it never merges and falls back to bytes).  A character that is no token but
  part of a merge has an id past the vocabulary (``is_token`` 0);
* the merges: pair keys ``left << 32 | right`` in an open-addressing table probed as the BPE merge kernel's
  :func:`bpe_core.bpe.merge_kernel._slot` probes, each key's value ``rank << 32 | new symbol id`` beside it
  (one cache line per probe: the probes are most of the time);
* a piece of at most :data:`SHORT_PIECE` symbols merges by scanning its pairs' ranks for the least
  (:func:`_merge_short`, as :func:`bpe_core.bpe.encoder.merge_short`); a longer one with a heap of
  ``(rank << 32 | left position)`` with the pair's key and result beside it, checked when popped (an entry
  whose symbols have changed since is stale), as :func:`bpe_core.bpe.encoder.merge_long`.  Each symbol
  starts at its first character's position, and covers the characters up to the next live symbol's.

The kernel allocates nothing: :func:`encode_pieces` sizes the output for one token per UTF-8 byte (a token
holds at least one byte) and the scratch for the longest piece.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import regex

from ..counting.native import kernel, njit
from ..pieces import code_points, pack_utf8
from . import merge_kernel as mk  # the pair table's hashing (mk._MUL, mk._SHIFT) and sizing (mk._hash_size)

__all__ = [
    "PARALLEL_MIN_PIECES",
    "SEPARATOR",
    "CharMergeTables",
    "byte_merge_tables",
    "cut_units",
    "encode_byte_pieces",
    "encode_pieces",
    "pack_pieces",
]

_EMPTY = mk._EMPTY
NO_RANK = 1 << 62
"""The rank of a pair no merge makes."""
SHORT_PIECE = 24
"""Pieces of at most this many symbols merge by scanning (:func:`_merge_short`), longer ones with a heap."""


@njit(inline="always")
def _push(heap_k, heap_v, heap_n, n, key, val, new):
    """Push ``(key, val, new)`` on the binary min-heap of keys ``heap_k[:n]``; returns the new size."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if heap_k[p] <= key:
            break
        heap_k[i], heap_v[i], heap_n[i] = heap_k[p], heap_v[p], heap_n[p]
        i = p
    heap_k[i], heap_v[i], heap_n[i] = key, val, new
    return n + 1


@njit(inline="always")
def _pop(heap_k, heap_v, heap_n, n):
    """Remove the least key of the heap of size ``n`` (its entry is read by the caller first); returns ``n - 1``."""
    n -= 1
    key, val, new = heap_k[n], heap_v[n], heap_n[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and heap_k[c + 1] < heap_k[c]:
            c += 1
        if heap_k[c] >= key:
            break
        heap_k[i], heap_v[i], heap_n[i] = heap_k[c], heap_v[c], heap_n[c]
        i = c
    heap_k[i], heap_v[i], heap_n[i] = key, val, new
    return n


@njit(inline="always")
def _probe(htab, key):
    """The value of ``key`` in the interleaved table ``htab`` (``key, value`` per slot), or ``-1``.

    The probe of :func:`bpe_core.bpe.merge_kernel._slot` (Fibonacci hashing, linear probing) over slots that
    hold their value beside their key: one cache line per probe.
    """
    mask = (htab.size >> 1) - 1
    i = np.int64((np.uint64(key) * mk._MUL) >> mk._SHIFT) & mask
    while True:
        k = htab[2 * i]
        if k == key:
            return htab[2 * i + 1]
        if k == _EMPTY:
            return -1
        i = (i + 1) & mask


@kernel("i8[]", "i8[]", "i8[]", returns=None)
def _fill(keys, values, htab):
    """Put ``keys[m] -> values[m]`` in the interleaved table ``htab`` (all keys ``-1``, a power of two slots)."""
    mask = (htab.size >> 1) - 1
    for m in range(keys.size):
        key = keys[m]
        i = np.int64((np.uint64(key) * mk._MUL) >> mk._SHIFT) & mask
        while htab[2 * i] != _EMPTY and htab[2 * i] != key:
            i = (i + 1) & mask
        htab[2 * i] = key
        htab[2 * i + 1] = values[m]


@njit(inline="always")
def _queue_pair(sym, i, j, htab, heap_k, heap_v, heap_n, n):
    """Queue the pair of symbols ``i``, ``j`` when a merge makes it: key ``rank << 32 | i``, the pair, its result."""
    a, b = sym[i], sym[j]
    if a < 0 or b < 0:
        return n
    pair = (np.int64(a) << 32) | b
    v = _probe(htab, pair)
    if v < 0:
        return n
    return _push(heap_k, heap_v, heap_n, n, ((v >> 32) << 32) | i, pair, v & 0xFFFFFFFF)


@njit(inline="always")
def _utf8(c, k):
    """Byte ``k`` of code point ``c``'s UTF-8 form, and its length."""
    if c < 0x80:
        return c, 1
    if c < 0x800:
        return (0xC0 | (c >> 6)) if k == 0 else (0x80 | (c & 0x3F)), 2
    if c < 0x10000:
        if k == 0:
            return 0xE0 | (c >> 12), 3
        return 0x80 | ((c >> (6 * (2 - k))) & 0x3F), 3
    if k == 0:
        return 0xF0 | (c >> 18), 4
    return 0x80 | ((c >> (6 * (3 - k))) & 0x3F), 4


@njit
def _merge(sym, nxt, prv, n, htab, heap_k, heap_v, heap_n):
    """BPE on the symbols ``sym[:n]``: the pair of lowest rank, leftmost first, until none is a merge.

    A merged-away symbol becomes ``-2``; ``nxt``/``prv`` link the live ones.
    """
    h = 0
    for i in range(n - 1):
        h = _queue_pair(sym, i, i + 1, htab, heap_k, heap_v, heap_n, h)
    while h > 0:
        key, pair, new = heap_k[0], heap_v[0], heap_n[0]
        h = _pop(heap_k, heap_v, heap_n, h)
        i = key & 0xFFFFFFFF
        j = nxt[i]
        if j >= n or sym[i] != (pair >> 32) or sym[j] != (pair & 0xFFFFFFFF):
            continue  # stale: a symbol of the pair has changed since it was queued
        sym[i] = new
        sym[j] = -2
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            h = _queue_pair(sym, i, k, htab, heap_k, heap_v, heap_n, h)
        if prv[i] >= 0:
            h = _queue_pair(sym, prv[i], i, htab, heap_k, heap_v, heap_n, h)


@njit(inline="always")
def _pair(a, b, htab):
    """``(rank, new id)`` of the merge of symbols ``a``, ``b``, or ``(NO_RANK, -1)``."""
    if a < 0 or b < 0:
        return NO_RANK, -1
    v = _probe(htab, (np.int64(a) << 32) | b)
    if v < 0:
        return NO_RANK, -1
    return v >> 32, v & 0xFFFFFFFF


@njit
def _merge_short(sym, nxt, n, htab, pos, cs, rk, nw):
    """:func:`_merge` for a short piece: a scan for the least rank (leftmost first) over compact arrays.

    ``cs``/``pos``: the live symbols and where each starts; ``rk``/``nw``: each adjacent pair's rank and
    result.  Leaves ``sym`` and ``nxt`` as :func:`_merge` does at the live symbols.
    """
    for k in range(n):
        cs[k], pos[k] = sym[k], k
    for k in range(n - 1):
        rk[k], nw[k] = _pair(cs[k], cs[k + 1], htab)
    m = n
    while m > 1:
        b, best = -1, NO_RANK
        for k in range(m - 1):
            if rk[k] < best:
                b, best = k, rk[k]
        if b < 0:
            break
        cs[b] = nw[b]
        for k in range(b + 1, m - 1):
            cs[k], pos[k], rk[k], nw[k] = cs[k + 1], pos[k + 1], rk[k + 1], nw[k + 1]
        m -= 1
        if b < m - 1:
            rk[b], nw[b] = _pair(cs[b], cs[b + 1], htab)
        if b > 0:
            rk[b - 1], nw[b - 1] = _pair(cs[b - 1], cs[b], htab)
    for k in range(m):
        sym[pos[k]] = cs[k]
        nxt[pos[k]] = pos[k + 1] if k + 1 < m else n


@kernel(
    "u4[]", "i8[]", "i8[]", "i8[]", "i4[]", "i8[]", "u1[]", "i4[]", "i8",
    "i8[]", "i8[]", "i8[]", "u1[]", "i8[]", "i4[]", "i4[]", "i4[]", "i8[]", "i8[]", "i8[]",
    returns="i8",
)  # fmt: skip
def _encode_pieces(
    cps, offsets, lead, whole, char_ids, htab, is_token, byte_ids, fallback_kind,
    out_ids, out_start, out_end, out_kind, tok_off, sym, nxt, prv, heap_k, heap_v, heap_n,
):  # fmt: skip
    """Encode each piece ``cps[offsets[p]:offsets[p + 1]]``; write its tokens from ``tok_off[p]``.

    ``lead[p] >= 0``: that code point goes in front (SentencePiece's dummy ``▁``); it covers no
    character of the piece, and a token's characters are counted as
    :meth:`~bpe_core.production.sentencepiece_model.SentencePieceTokenizer.token_spans` counts them
    (``max(i - 1, 0) : end - 1`` in the piece with the lead).  ``whole[p] >= 0``: the piece is that one
    token.  A byte-fallback token covers its character and has kind ``fallback_kind``.  Returns the tokens
    written, or ``-1`` when the output is full (never, sized as :func:`encode_pieces` sizes it).
    """
    t = 0
    cap = out_ids.size
    for p in range(offsets.size - 1):
        tok_off[p] = t
        base, size = offsets[p], offsets[p + 1] - offsets[p]
        if whole[p] >= 0:
            if t >= cap:
                return -1
            out_ids[t], out_start[t], out_end[t], out_kind[t] = whole[p], 0, size, 0
            t += 1
            continue
        shift = 1 if lead[p] >= 0 else 0
        n = size + shift
        if shift:
            sym[0] = char_ids[lead[p]]
        for i in range(n):
            if i >= shift:
                sym[i] = char_ids[cps[base + i - shift]]
            nxt[i] = i + 1
            prv[i] = i - 1
        if n <= SHORT_PIECE:
            _merge_short(sym, nxt, n, htab, prv, heap_v, heap_k, heap_n)
        else:
            _merge(sym, nxt, prv, n, htab, heap_k, heap_v, heap_n)
        i = 0
        while i < n:
            a = sym[i]
            start, end = max(i - shift, 0), nxt[i] - shift
            if a >= 0 and is_token[a]:
                if t >= cap:
                    return -1
                out_ids[t], out_start[t], out_end[t], out_kind[t] = a, start, end, 0
                t += 1
            else:  # one character that is no token: its UTF-8 bytes as byte pieces
                c = np.int64(lead[p] if i < shift else cps[base + i - shift])
                _, m = _utf8(c, 0)
                if t + m > cap:
                    return -1
                for k in range(m):
                    b, _ = _utf8(c, k)
                    out_ids[t], out_start[t], out_end[t], out_kind[t] = byte_ids[b], start, end, fallback_kind
                    t += 1
            i = nxt[i]
    tok_off[offsets.size - 1] = t
    return t


@dataclass(frozen=True)
class CharMergeTables:
    """What :func:`encode_pieces` reads of one tokenizer: its characters, merges and byte pieces.

    Attributes:
        char_ids: ``int32[0x110000]``: each code point's symbol id, ``-1`` for none.
        is_token: ``uint8[symbols]``: 1 where a symbol id is a token emitted as itself (0: byte fallback).
        htab: ``int64[2 * slots]``: the merges, slot ``s`` holding the key ``left << 32 | right`` (``-1``:
            empty) at ``2 * s`` and ``rank << 32 | new`` at ``2 * s + 1`` (lower ranks merge first; equal
            ranks: the leftmost pair).
        byte_ids: ``int32[256]``: the byte pieces' ids.
    """

    char_ids: np.ndarray
    is_token: np.ndarray
    htab: np.ndarray
    byte_ids: np.ndarray

    @classmethod
    def build(
        cls,
        chars: dict[str, int],
        merges: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        n_symbols: int,
        tokens: np.ndarray,
        byte_ids: Sequence[int],
    ) -> CharMergeTables:
        """The tables from the characters' symbol ids and the merges.

        Args:
            chars: ``{character: symbol id}`` of every character that is a symbol.
            merges: ``(left, right, rank, new)``: four ``int64`` arrays, one entry per merge (no pair twice;
                ids and ranks below ``2**31``): its two symbol ids, its rank, the symbol id it makes.
            n_symbols: symbol ids are ``0 .. n_symbols - 1``.
            tokens: the symbol ids that are tokens emitted as themselves.
            byte_ids: the 256 byte pieces' ids, by byte.

        Raises:
            ValueError: not 256 byte ids, or merge arrays of different lengths.
        """
        if len(byte_ids) != 256:
            raise ValueError(f"byte fallback needs 256 byte pieces, got {len(byte_ids)}")
        left, right, rank, new = (np.asarray(a, dtype=np.int64) for a in merges)
        if not left.size == right.size == rank.size == new.size:
            raise ValueError("the merges' left, right, rank and new arrays differ in length")
        char_ids = np.full(0x110000, -1, dtype=np.int32)
        if chars:
            char_ids[[ord(c) for c in chars]] = list(chars.values())
        is_token = np.zeros(max(n_symbols, 1), dtype=np.uint8)
        is_token[np.asarray(tokens, dtype=np.int64)] = 1
        htab = np.full(2 * mk._hash_size(left.size), _EMPTY, dtype=np.int64)
        _fill(np.ascontiguousarray((left << 32) | right), np.ascontiguousarray((rank << 32) | new), htab)
        return cls(char_ids, is_token, htab, np.asarray(byte_ids, dtype=np.int32))


def pack_pieces(pieces: Sequence[str], escape_spaces: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(cps, offsets)``: the pieces' code points end to end (``uint32``) and where each starts (``int64[n + 1]``).

    ``escape_spaces``: every space as ``▁`` (U+2581), as SentencePiece's normalizer writes it.
    """
    cps, offsets = code_points(pieces, np.uint32)
    if escape_spaces:
        cps = np.where(cps == 0x20, np.uint32(0x2581), cps)
    return cps, offsets


PARALLEL_MIN_PIECES = 20_000
"""Fewer pieces than this are encoded in one call; more in one call per core, in threads."""


def encode_pieces(
    tables: CharMergeTables,
    cps: np.ndarray,
    offsets: np.ndarray,
    lead: np.ndarray,
    whole: np.ndarray,
    fallback_kind: int,
    workers: int | None = None,
) -> tuple[np.ndarray, ...]:
    """The tokens of each piece, all pieces in compiled calls, in threads (see the module docstring).

    Args:
        tables: the tokenizer's :class:`CharMergeTables`.
        cps: the pieces' code points as the merges see them, end to end (:func:`pack_pieces`).
        offsets: ``int64[n + 1]``: where each piece starts in ``cps``.
        lead: ``int64[n]``: a code point put in front of the piece (SentencePiece's dummy ``▁``), or ``-1``.
        whole: ``int64[n]``: a token id standing for the whole piece, or ``-1``: merge it.
        fallback_kind: the kind bits of a byte-fallback token.
        workers: threads (default: the cores; the kernels release the GIL).

    Returns:
        ``(offsets, ids, starts, ends, kinds)`` as :class:`bpe_core.pieces.PieceTokens` holds them
        (``int64``, ``kinds`` ``uint8``): characters counted in each piece, the lead not counted.

    A toy vocabulary: ``a`` (0), ``b`` (1), ``ab`` (2), the byte pieces (3..258); ``é`` is no token:

    >>> ab = tuple(np.array([v]) for v in (0, 1, 0, 2))  # a + b -> ab, rank 0
    >>> tables = CharMergeTables.build({"a": 0, "b": 1}, ab, 3, np.arange(3), range(3, 259))
    >>> cps, offsets = pack_pieces(["abé", "ba"], escape_spaces=False)
    >>> out = encode_pieces(tables, cps, offsets, np.array([-1, -1]), np.array([-1, -1]), 4)
    >>> [a.tolist() for a in out]  # é falls back to its two bytes C3 A9 (ids 198, 172)
    [[0, 3, 5], [2, 198, 172, 1, 0], [0, 2, 2, 0, 1], [2, 3, 3, 1, 2], [0, 4, 4, 0, 0]]
    """
    n = offsets.size - 1
    workers = max(1, min(workers or os.cpu_count() or 1, n // PARALLEL_MIN_PIECES))
    cuts = [n * k // workers for k in range(workers + 1)]
    parts = [(a, b) for a, b in itertools.pairwise(cuts)]
    lead = np.ascontiguousarray(lead, dtype=np.int64)
    whole = np.ascontiguousarray(whole, dtype=np.int64)
    nbytes = np.zeros(cps.size + 1, dtype=np.int64)
    np.cumsum(1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000), out=nbytes[1:])

    def run(a: int, b: int) -> tuple[np.ndarray, ...]:
        room = int(nbytes[offsets[b]] - nbytes[offsets[a]]) + 4 * int(np.count_nonzero(lead[a:b] >= 0)) + 1
        longest = int(np.diff(offsets[a : b + 1]).max(initial=0)) + 2
        ids, starts, ends = (np.empty(room, dtype=np.int64) for _ in range(3))
        kinds = np.empty(room, dtype=np.uint8)
        tok_off = np.zeros(b - a + 1, dtype=np.int64)
        sym, nxt, prv = (np.empty(longest, dtype=np.int32) for _ in range(3))
        heap_k, heap_v, heap_n = (np.empty(3 * longest, dtype=np.int64) for _ in range(3))
        t = tables
        total = _encode_pieces(
            cps, offsets[a : b + 1], lead[a:b], whole[a:b], t.char_ids, t.htab, t.is_token, t.byte_ids,
            int(fallback_kind), ids, starts, ends, kinds, tok_off, sym, nxt, prv, heap_k, heap_v, heap_n,
        )  # fmt: skip
        if total < 0:
            raise RuntimeError("encode_pieces: the output was sized too small")
        return tok_off, ids[:total], starts[:total], ends[:total], kinds[:total]

    if len(parts) == 1:
        return run(0, n)
    with ThreadPoolExecutor(len(parts)) as pool:
        done = list(pool.map(lambda ab: run(*ab), parts))
    shift = np.cumsum([0] + [int(d[0][-1]) for d in done[:-1]])
    tok_off = np.concatenate([done[0][0][:1]] + [d[0][1:] + s for d, s in zip(done, shift)])
    return (tok_off, *(np.concatenate([d[k] for d in done]) for k in range(1, 5)))


SEPARATOR = "\uffff"
"""What :func:`cut_units` puts between the units (a noncharacter: it may occur in text, then the units are cut
one by one)."""


def cut_units(
    units: Sequence[str],
    plain: regex.Pattern,
    triggers: str = "",
    special: Callable[[str], list[str] | None] | None = None,
) -> tuple[list[str], np.ndarray] | None:
    r"""Every unit's pieces by one ``findall`` over all the units, joined by :data:`SEPARATOR`.

    Equal to ``[p for u in units for p in special(u) or plain.findall(u)]`` (the pieces, flat) and each
    unit's number of pieces, when ``plain`` matches every character but the separator and no match
    crosses it (as :data:`bpe_core.production.sentencepiece_model.UNIT_PATTERN` with the separator
    left out of its classes).

    Args:
        units: the units.
        plain: the pattern cutting a unit.
        triggers: characters (a regex character class's content) without which ``special`` gives ``None``.
        special: ``unit -> pieces`` for a unit holding a trigger character that ``plain`` cuts otherwise,
            else ``None``.

    Returns:
        ``(pieces, int64 sizes)``, or ``None`` when a unit holds the separator or the pieces do not end
        where the units end (the caller then cuts unit by unit).

    >>> pieces, sizes = cut_units(["ab cd", " e"], regex.compile(r"[^ \uffff]+| "))
    >>> pieces, sizes.tolist()
    (['ab', ' ', 'cd', ' ', 'e'], [3, 2])
    """
    joined = SEPARATOR.join(units)
    if joined.count(SEPARATOR) != max(len(units) - 1, 0):
        return None
    flat = plain.findall(joined)
    starts = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, units), dtype=np.int64, count=len(units)), out=starts[1:])
    ends = np.cumsum(np.fromiter(map(len, flat), dtype=np.int64, count=len(flat)))
    bounds = np.zeros(len(units) + 1, dtype=np.int64)
    bounds[1:] = np.searchsorted(ends, starts[1:], side="right")  # pieces ending at or before each unit's end
    if ends.size != bounds[-1] or not (bounds[1:] > 0).all() or not np.array_equal(ends[bounds[1:] - 1], starts[1:]):
        return None
    sizes = np.diff(bounds)
    if not triggers or special is None:
        return flat, sizes
    marked = np.array([m.start() for m in regex.finditer(f"[{triggers}]", joined)], dtype=np.int64)
    unit_of = np.unique(np.searchsorted(starts + np.arange(len(units) + 1), marked, side="right") - 1)
    out: list[str] = []
    done = 0
    for k in unit_of.tolist():
        pieces = special(units[k])
        if pieces is not None:
            out += flat[done : bounds[k]]
            out += pieces
            sizes[k] = len(pieces)
            done = bounds[k + 1]
    out += flat[done:]
    return out, sizes


def byte_merge_tables(
    byte_ids: Sequence[int], pair_ranks: dict[int, int], shift: int, new_ids: Sequence[int], limit: int
) -> CharMergeTables:
    """The :class:`CharMergeTables` of a byte-level BPE: its symbols are the bytes, written as U+0000..U+00FF.

    A piece goes to :func:`encode_pieces` as its UTF-8 bytes (:func:`bpe_core.pieces.pack_utf8`), each byte a
    "character" whose symbol is its byte token; the merges are the tokenizer's, so the kernel merges as
    :func:`bpe_core.bpe.encoder.merge_short` / :func:`~bpe_core.bpe.encoder.merge_long` do.

    Args:
        byte_ids: ``int[256]``: each byte's token id, ``-1`` for a byte without one (a piece holding it must
            not be encoded here: the kernel would spell it as a byte-fallback character).
        pair_ranks: ``{left << shift | right: rank}`` (the first merge of each pair of ids).
        shift: the bits of ``right`` in a key.
        new_ids: rank -> the id the merge makes.
        limit: merges of rank ``>= limit`` are left out (a trained tokenizer's smaller views).

    Raises:
        ValueError: not 256 byte ids.
    """
    if len(byte_ids) != 256:
        raise ValueError(f"a byte-level BPE needs 256 byte ids, got {len(byte_ids)}")
    keys = np.fromiter(pair_ranks.keys(), dtype=np.int64, count=len(pair_ranks))
    rank = np.fromiter(pair_ranks.values(), dtype=np.int64, count=len(pair_ranks))
    keep = rank < limit
    keys, rank = keys[keep], rank[keep]
    new = np.asarray(new_ids, dtype=np.int64)[rank] if rank.size else np.zeros(0, dtype=np.int64)
    left, right = keys >> shift, keys & ((1 << shift) - 1)
    chars = {chr(b): int(i) for b, i in enumerate(byte_ids) if i >= 0}
    top = max(int(max(byte_ids)), int(new.max(initial=0)), int(left.max(initial=0)), int(right.max(initial=0)))
    return CharMergeTables.build(chars, (left, right, rank, new), top + 1, np.arange(top + 1), byte_ids)


def encode_byte_pieces(
    tables: CharMergeTables, data: np.ndarray, byte_offsets: np.ndarray, whole: np.ndarray, workers: int | None = None
) -> tuple[np.ndarray, ...]:
    """The tokens of each piece of a byte-level BPE, laid out in bytes (:func:`encode_pieces` over bytes).

    Args:
        tables: :func:`byte_merge_tables`.
        data: ``uint8[B]``: the pieces' UTF-8 end to end (:func:`bpe_core.pieces.pack_utf8`).
        byte_offsets: ``int64[n + 1]``: where each piece starts in ``data``.
        whole: ``int64[n]``: a token id standing for the whole piece (an added token, ``ignore_merges``), or ``-1``.
        workers: threads (default: the cores).

    Returns:
        ``(offsets, ids, byte_starts, byte_ends)``: ``int64``, each token's bytes counted from its piece's start
        (:func:`bpe_core.pieces.piece_tokens_from_byte_ranges` makes them characters).

    >>> from bpe_core.pieces import pack_utf8
    >>> tables = byte_merge_tables(range(256), {97 << 9 | 98: 0}, 9, [256], 1)  # a + b -> 256, rank 0
    >>> data, offsets = pack_utf8(["abé", "ba"])
    >>> [a.tolist() for a in encode_byte_pieces(tables, data, offsets, np.array([-1, -1]))]
    [[0, 3, 5], [256, 195, 169, 98, 97], [0, 2, 3, 0, 1], [2, 3, 4, 1, 2]]
    """
    syms = data.astype(np.uint32)
    lead = np.full(byte_offsets.size - 1, -1, dtype=np.int64)
    tok_off, ids, starts, ends, _ = encode_pieces(tables, syms, byte_offsets, lead, whole, 0, workers)
    return tok_off, ids, starts, ends


def tokens_not_merged(tables: CharMergeTables, tokens: Mapping[bytes, int]) -> dict[str, int]:
    r"""The text tokens whose own UTF-8 the merges do not make into that one token: ``{text: id}``.

    An encoder that looks a piece up whole before merging it (tiktoken's
    ``encode_single_piece``; a ``tokenizer.json`` with ``ignore_merges``)
    gives the merges' tokens for every piece but these, so only these need
    looking up (Llama 3: 588 of its 126,648 text tokens; cl100k_base and
    o200k_base: none).  All the text tokens are merged in one :func:`encode_byte_pieces` call.

    Args:
        tables: :func:`byte_merge_tables` of the merges.
        tokens: ``{token bytes: id}``; a token whose bytes are not whole UTF-8 text is no piece, and left out.

    >>> tables = byte_merge_tables(range(256), {97 << 9 | 98: 0}, 9, [256], 1)  # a + b -> 256
    >>> tokens_not_merged(tables, {b"ab": 256, b"a": 97, b"ba": 300, b"\xc3": 301})
    {'ba': 300}
    """
    text: dict[str, int] = {}
    for token, i in tokens.items():
        try:
            text[token.decode("utf-8")] = i
        except UnicodeDecodeError:
            continue  # part of a character: no piece (a str) is this token
    texts = list(text)
    ids = np.fromiter(text.values(), dtype=np.int64, count=len(texts))
    data, offsets = pack_utf8(texts)
    tok_off, got, _, _ = encode_byte_pieces(tables, data, offsets, np.full(len(texts), -1, dtype=np.int64))
    single = np.diff(tok_off) == 1
    made = np.zeros(len(texts), dtype=bool)
    made[single] = got[tok_off[:-1][single]] == ids[single]
    return {texts[k]: int(ids[k]) for k in np.flatnonzero(~made).tolist()}
