"""Ranks and merges: tiktoken's ``mergeable_ranks`` <-> an ordered merge list, and its covering pattern.

A byte-level BPE is given either as an ordered merge list (what training
learns) or, as tiktoken keeps it, as ``mergeable_ranks``: ``{token bytes:
rank}``, where a token's rank is the merge that made it.  The two are the same
information:

* :func:`ranks_to_vocab_merges` -- the vocabulary and the ordered merges of a
  ranks table (each token split as tiktoken's own byte-pair procedure splits it
  just before its last merge; :func:`bpe_core.textbook.ranks.tiktoken_parts` is
  the plain version the tests compare with).
* :func:`mergeable_ranks` -- a tokenizer's ranks table.
* :func:`covering_pattern` -- the split pattern to give tiktoken so that it
  cuts text exactly as this project does (it drops what a pattern skips).

Everything here reads tokenizers through their public members only, so the
encoder (:mod:`bpe_core.bpe.encoder`) and the file formats
(:mod:`bpe_core.formats.tiktoken`) both build on it.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any

from ..pretokenize import PATTERNS

__all__ = ["SHORT_TOKEN", "covering_pattern", "mergeable_ranks", "ranks_to_vocab_merges"]


def ranks_to_vocab_merges(mergeable_ranks: Mapping[bytes, int]) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Recover the vocab and the ordered merge list from tiktoken ranks.

    Each multi-byte token of rank r is split into the two parts that tiktoken's
    own byte-pair procedure reaches on its bytes just before its last merge
    (every merge but the one making the token itself); that pair is merge r.
    For OpenAI's encodings both parts always rank below r (the recovery Hugging
    Face's converters do); Llama 3's added tokens are not always so built
    (``.:.:``, rank 100,421, joins ``.:`` + ``.:`` of a higher rank), which
    tiktoken's procedure, lowest-ranked pair first, handles the same way.

    Args:
        mergeable_ranks: ``{token bytes: rank}``; ranks must be unique.

    Returns:
        ``(vocab, merges)``: ``vocab = {rank: bytes}`` and ``merges`` as
        ``(left bytes, right bytes)`` in rank order.

    Raises:
        TypeError: a token is not bytes or a rank not an int.
        ValueError: tiktoken's procedure cannot build a token from two other
            tokens, or a single byte is missing.
    """
    for token, r in mergeable_ranks.items():
        if not isinstance(token, bytes) or isinstance(r, bool) or not isinstance(r, int):
            raise TypeError(f"mergeable ranks must map bytes to int ranks, got {token!r}: {r!r}")
    vocab = {r: b for b, r in mergeable_ranks.items()}
    merges: list[tuple[bytes, bytes]] = []
    for rank in sorted(vocab):
        token = vocab[rank]
        if len(token) == 1:
            continue
        parts = _bpe_parts(mergeable_ranks, token)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) cannot be built from two other tokens")
        merges.append((parts[0], parts[1]))
    return vocab, merges


SHORT_TOKEN = 24
"""Tokens up to this many bytes are split by the plain scan; longer ones by the heap (both exact)."""


def _bpe_parts(ranks: Mapping[bytes, int], token: bytes) -> list[bytes]:
    """Tiktoken's byte-pair merging of ``token``'s bytes, lowest rank first, stopping before ``token`` itself.

    tiktoken's ``_byte_pair_merge``: while more than two parts remain, merge the
    adjacent pair whose concatenation has the lowest rank (the leftmost of
    equal ones); stop when no adjacent pair is ranked.  Short tokens rescan every
    pair each step (O(L^2) lookups, fastest for small L); long ones keep the
    ranked pairs in a heap keyed by ``(rank, start)`` over a linked list of
    parts (O(L log L) steps plus the slices), which pops exactly the pair the
    scan picks: the lowest rank, and among equal ranks -- equal bytes -- the
    leftmost start.  :func:`bpe_core.textbook.ranks.tiktoken_parts` is the plain
    version the tests compare with.
    """
    if len(token) <= SHORT_TOKEN:
        return _scan_parts(ranks, token)
    return _heap_parts(ranks, token)


def _scan_parts(ranks: Mapping[bytes, int], token: bytes) -> list[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    while len(parts) > 2:
        best_i, best_r = -1, None
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            if r is not None and (best_r is None or r < best_r):
                best_i, best_r = i, r
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def _heap_parts(ranks: Mapping[bytes, int], token: bytes) -> list[bytes]:
    n = len(token)
    get = ranks.get
    nxt = list(range(1, n + 1))  # a part starting at i ends where the next starts: token[i:nxt[i]]
    prv = list(range(-1, n - 1))
    pair = [get(token[i : i + 2]) for i in range(n - 1)]  # rank of (part at i) + (next part), or None
    pair.append(None)
    shift = n.bit_length()  # heap entries are rank << shift | start: one int compares as (rank, start)
    heap = [r << shift | i for i, r in enumerate(pair) if r is not None]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    mask = (1 << shift) - 1
    count = n
    while count > 2 and heap:
        e = pop(heap)
        i = e & mask
        if pair[i] != e >> shift:
            continue  # stale: the part at i, or its right neighbour, changed since
        j = nxt[i]
        k = nxt[j]
        pair[j] = None  # j is no longer a part start
        nxt[i] = k
        count -= 1
        if k < n:
            prv[k] = i
            q = pair[i] = get(token[i : nxt[k]])
            if q is not None:
                push(heap, q << shift | i)
        else:
            pair[i] = None
        p = prv[i]
        if p >= 0:
            q = pair[p] = get(token[p:k])
            if q is not None:
                push(heap, q << shift | p)
    out = []
    i = 0
    while i < n:
        out.append(token[i : nxt[i]])
        i = nxt[i]
    return out


def mergeable_ranks(tok: Any) -> dict[bytes, int]:
    """The tokenizer's ``mergeable_ranks`` as tiktoken expects them: ``{token bytes: id}``.

    Special tokens are left out (tiktoken takes them separately).  When training
    created the same bytes twice (two merges with equal results), only the
    first id is kept: a bytes-keyed map cannot hold the second.

    Args:
        tok: a byte-level BPE tokenizer (its current view).

    Returns:
        ``{bytes: id}`` for the byte tokens and the merge tokens.
    """
    specials = set(tok.special_tokens.values())
    ranks: dict[bytes, int] = {}
    for i, b in sorted(tok.vocab.items()):
        if i not in specials:
            ranks.setdefault(b, i)
    return ranks


_COVERING = {PATTERNS[name] for name in ("gpt2", "cl100k", "o200k", "none")}


def covering_pattern(source: str) -> str:
    r"""A pattern that also matches the text between the matches of ``source``.

    This project treats each run of characters that a pattern does not match as
    a pre-token of its own (nothing is ever dropped); tiktoken silently drops
    such text.  Appending ``|(?:(?!P)[\s\S])+`` (a run of characters at which
    ``P`` cannot start a match) makes tiktoken see the same pre-tokens.  The
    GPT-2, cl100k, o200k and line patterns already match every character and
    are returned unchanged.

    Args:
        source: regex source.

    Returns:
        The pattern to give tiktoken.
    """
    if source in _COVERING:
        return source
    return f"{source}|(?:(?!(?:{source}))[\\s\\S])+"
