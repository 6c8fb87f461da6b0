"""From tiktoken's ranks back to merges, the textbook way: replay tiktoken's byte-pair procedure on each token.

tiktoken keeps a byte-level BPE as ``mergeable_ranks``, ``{token bytes: rank}``,
not as a merge list.  The merges are in there: tiktoken encodes a token's
bytes by merging, again and again, the adjacent pair whose joined bytes rank
lowest (:func:`tiktoken_parts`), so stopping one step before the end leaves
the two parts the token was made of.  Every multi-byte token, in rank order,
gives one merge (:func:`ranks_to_merges`).

The fast :func:`bpe_core.bpe.ranks.ranks_to_vocab_merges` must give exactly
:func:`ranks_to_merges`'s merges.
"""

from __future__ import annotations

from itertools import pairwise

__all__ = ["ranks_to_merges", "tiktoken_parts"]


def tiktoken_parts(ranks: dict[bytes, int], token: bytes) -> list[bytes]:
    """Tiktoken's ``_byte_pair_merge`` on ``token``'s bytes, stopped when two parts remain.

    Every step recomputes the rank of every adjacent pair and merges the lowest
    (the leftmost of equal ranks); it stops early when no pair is ranked.

    >>> tiktoken_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb")
    [b'ab', b'b']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        ranked = [(ranks[a + b], i) for i, (a, b) in enumerate(pairwise(parts)) if a + b in ranks]
        if not ranked:
            break
        _rank, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def ranks_to_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list, in rank order, that tiktoken's procedure implies: each multi-byte token's last two parts.

    Raises:
        ValueError: a token does not end in two parts.

    >>> ranks_to_merges({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3})
    [(b'a', b'b'), (b'ab', b'b')]
    """
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) > 1:
            parts = tiktoken_parts(ranks, token)
            if len(parts) != 2:
                raise ValueError(f"token {token!r} (rank {rank}) cannot be built from two other tokens")
            merges.append((parts[0], parts[1]))
    return merges
