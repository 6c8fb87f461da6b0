"""Tiktoken's byte-pair merge as the compiled pieces kernel's pair table.

Tiktoken (``_byte_pair_merge`` in its ``src/lib.rs``) encodes a pre-token
that is not itself a token by starting from its single bytes and repeatedly
merging the two adjacent parts whose *concatenated bytes* have the lowest
rank in ``mergeable_ranks``, the leftmost of equal ranks.  Its parts are always
tokens, so the same merge is a table of pairs of token ids: for every token
``t`` of two or more bytes and every split of ``t`` into two tokens
``t[:k] + t[k:]``, the pair ``(id(t[:k]), id(t[k:]))`` makes ``t`` at rank
``rank(t)`` (a tiktoken id is its rank).  Several pairs may make one token
(o200k_base: 446,189 pairs for 199,998 tokens), which the kernel of
:mod:`bpe_core.bpe.piece_merge_kernel` takes as it is: it merges the pair of
least rank, the leftmost of equal ranks (its scan compares ranks strictly,
its heap orders ``rank << 32 | position``), as tiktoken does.

:func:`tiktoken_pair_ranks` builds the table as that sentence reads, one
split at a time (about 1 s for o200k_base); :func:`tiktoken_pair_arrays`
builds the same table with array operations over all splits at once (hashes
of the bytes, each match checked byte for byte) and must equal it
(``tests/engine/test_tiktoken_pieces.py`` checks every registered encoding).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..bpe.piece_merge_kernel import CharMergeTables

__all__ = ["tiktoken_merge_tables", "tiktoken_pair_arrays", "tiktoken_pair_ranks"]

_BASE = 0x9E3779B97F4A7C15
"""The polynomial hash's base (odd: invertible modulo ``2**64``)."""
_LENGTH = 0xD6E8FEB86659FD93
"""What each byte of length adds to a hash (strings of different lengths rarely collide)."""
_MIX = ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53))
"""MurmurHash3's 64-bit finalizer (``fmix64``): each step a bijection of ``uint64``."""


def tiktoken_pair_ranks(mergeable_ranks: Mapping[bytes, int], shift: int) -> dict[int, int]:
    """The textbook pair table: ``{left id << shift | right id: rank of their concatenation}``.

    Every token ``t`` of two or more bytes and every split ``t[:k] + t[k:]`` into
    two tokens gives the pair ``(id(t[:k]), id(t[k:])) -> rank(t)`` (see the
    module docstring); no pair makes two tokens (its bytes are one string).

    Args:
        mergeable_ranks: ``{token bytes: rank}`` (tiktoken's; a token's id is its rank).
        shift: bits of the right id in a key (at least every rank's ``bit_length``).

    Returns:
        ``{key: rank}`` (``int`` keys and ranks).

    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3, b"bb": 4}
    >>> {(k >> 3, k & 7): r for k, r in tiktoken_pair_ranks(ranks, 3).items()}
    {(0, 1): 2, (0, 4): 3, (2, 1): 3, (1, 1): 4}
    """
    pairs: dict[int, int] = {}
    get = mergeable_ranks.get
    for token, rank in mergeable_ranks.items():
        for k in range(1, len(token)):
            left = get(token[:k])
            if left is not None:
                right = get(token[k:])
                if right is not None:
                    pairs[left << shift | right] = rank
    return pairs


def tiktoken_pair_arrays(mergeable_ranks: Mapping[bytes, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`tiktoken_pair_ranks` with array operations: every split of every token at once.

    Each byte string is hashed (a polynomial over its bytes modulo ``2**64``,
    plus its length); a split's halves are looked up among the tokens' hashes
    and every match is checked byte for byte, so the result is exact.

    Args:
        mergeable_ranks: ``{token bytes: rank}``.

    Returns:
        ``(left, right, rank)``: ``int64`` arrays, one entry per pair (the pairs of
        :func:`tiktoken_pair_ranks`, in no particular order), or ``None`` when two
        tokens share a hash (then use :func:`tiktoken_pair_ranks`).

    >>> [a.tolist() for a in tiktoken_pair_arrays({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3, b"bb": 4})]
    [[0, 0, 2, 1], [1, 4, 1, 1], [2, 3, 3, 4]]
    """
    tokens = list(mergeable_ranks)
    n = len(tokens)
    ranks = np.fromiter(mergeable_ranks.values(), dtype=np.int64, count=n)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=n), out=starts[1:])
    data = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    hash_of = _substring_hashes(data)
    token_hash = hash_of(starts[:-1], starts[1:])
    order = np.argsort(token_hash)
    sorted_hash = token_hash[order]
    if sorted_hash.size and np.any(sorted_hash[1:] == sorted_hash[:-1]):
        return None
    position = _hash_positions(sorted_hash)

    def find(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The token whose bytes are ``data[a:b]``, or ``-1``, for each range (matches checked byte for byte)."""
        at = position(hash_of(a, b))
        found = np.where(at >= 0, order[at], -1)
        hit = np.flatnonzero(found >= 0)
        as_long = starts[found[hit] + 1] - starts[found[hit]] == b[hit] - a[hit]  # else a collision
        found[hit[~as_long]] = -1
        hit = hit[as_long]
        found[hit[~_same_bytes(data, a[hit], b[hit], starts[found[hit]])]] = -1
        return found

    sizes = np.diff(starts)
    cuts = np.maximum(sizes - 1, 0)  # a token of L bytes splits L - 1 ways
    token = np.repeat(np.arange(n), cuts)
    cut = starts[token] + 1 + np.arange(token.size) - np.repeat(np.cumsum(cuts) - cuts, cuts)
    left = find(starts[token], cut)
    keep = np.flatnonzero(left >= 0)
    token, cut, left = token[keep], cut[keep], left[keep]
    right = find(cut, starts[token + 1])
    keep = np.flatnonzero(right >= 0)
    return ranks[left[keep]], ranks[right[keep]], ranks[token[keep]]


def _substring_hashes(data: np.ndarray):
    """``hash_of(a, b)``: the hashes of the byte ranges ``data[a:b]`` (``uint64``; equal bytes, equal hashes)."""
    size = data.size
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64
        powers = np.cumprod(np.r_[np.uint64(1), np.full(size, _BASE, dtype=np.uint64)], dtype=np.uint64)
        inverse = np.uint64(pow(_BASE, -1, 1 << 64))
        inverses = np.cumprod(np.r_[np.uint64(1), np.full(size, inverse, dtype=np.uint64)], dtype=np.uint64)
        prefix = np.zeros(size + 1, dtype=np.uint64)
        np.cumsum((data.astype(np.uint64) + np.uint64(1)) * powers[:size], out=prefix[1:], dtype=np.uint64)

    def hash_of(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = (prefix[b] - prefix[a]) * inverses[a] + (b - a).astype(np.uint64) * np.uint64(_LENGTH)
            for shift, multiplier in _MIX:  # a bijection that spreads short strings over the top bits
                h ^= h >> np.uint64(shift)
                h *= np.uint64(multiplier)
            return h ^ (h >> np.uint64(33))

    return hash_of


def _hash_positions(sorted_hash: np.ndarray):
    """``position(h)``: where each hash ``h`` is in ``sorted_hash`` (distinct, ascending), or ``-1``.

    The hashes' top bits pick a bucket (four or more buckets per hash), and a
    bucket's few hashes are compared one round at a time: no binary search.
    """
    bits = max(1, (4 * sorted_hash.size).bit_length())
    shift = np.uint64(64 - bits)
    bucket_start = np.searchsorted(sorted_hash >> shift, np.arange((1 << bits) + 1, dtype=np.uint64))

    def position(h: np.ndarray) -> np.ndarray:
        bucket = (h >> shift).astype(np.int64)
        at, end = bucket_start[bucket], bucket_start[bucket + 1]
        out = np.full(h.size, -1, dtype=np.int64)
        live = np.flatnonzero(at < end)
        while live.size:
            k = at[live]
            match = sorted_hash[k] == h[live]
            out[live[match]] = k[match]
            at[live] = k + 1
            live = live[~match & (k + 1 < end[live])]
        return out

    return position


def _same_bytes(data: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``bool[m]``: ``data[a:b] == data[c:c + (b - a)]`` for each range (each ``c + b - a`` at most ``data.size``)."""
    size = b - a
    step = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    equal = data[np.repeat(a, size) + step] == data[np.repeat(c, size) + step]
    bad = np.zeros(a.size, dtype=bool)
    bad[np.repeat(np.arange(a.size), size)[~equal]] = True
    return ~bad


def tiktoken_merge_tables(mergeable_ranks: Mapping[bytes, int]) -> CharMergeTables:
    """The :class:`~bpe_core.bpe.piece_merge_kernel.CharMergeTables` of an encoding's byte-pair merge, over bytes.

    For :func:`~bpe_core.bpe.piece_merge_kernel.encode_byte_pieces`: each byte's symbol is its token, each
    pair of :func:`tiktoken_pair_arrays` (or :func:`tiktoken_pair_ranks`) makes the token of its rank.

    Args:
        mergeable_ranks: ``{token bytes: rank}``, every single byte among them.

    Raises:
        ValueError: a byte is not a token (tiktoken could not encode a text holding it).

    >>> from bpe_core.pieces import pack_utf8
    >>> from bpe_core.bpe.piece_merge_kernel import encode_byte_pieces
    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    >>> data, offsets = pack_utf8(["abcab", "bcbc"])
    >>> encode_byte_pieces(tiktoken_merge_tables(ranks), data, offsets, np.array([-1, -1]))[1].tolist()
    [258, 256, 257, 257]
    """
    missing = [b for b in range(256) if bytes([b]) not in mergeable_ranks]
    if missing:
        raise ValueError(f"{len(missing)} bytes are no token (the first: 0x{missing[0]:02X}); tiktoken needs all 256")
    byte_ids = [mergeable_ranks[bytes([b])] for b in range(256)]
    top = max(mergeable_ranks.values())
    arrays = tiktoken_pair_arrays(mergeable_ranks)
    if arrays is None:
        shift = top.bit_length()
        pairs = tiktoken_pair_ranks(mergeable_ranks, shift)
        keys = np.fromiter(pairs, dtype=np.int64, count=len(pairs))
        rank = np.fromiter(pairs.values(), dtype=np.int64, count=len(pairs))
        arrays = (keys >> shift, keys & ((1 << shift) - 1), rank)
    left, right, rank = arrays
    chars = {chr(b): i for b, i in enumerate(byte_ids)}
    return CharMergeTables.build(chars, (left, right, rank, rank), top + 1, np.arange(top + 1), byte_ids)
