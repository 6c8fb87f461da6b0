"""tiktoken's formats: ``.tiktoken`` ranks files, their metadata, and ranks <-> merges.

* :func:`parse_tiktoken_file` -- the ``.tiktoken`` format (``base64(token) rank`` lines).
* :func:`ranks_to_vocab_merges` -- a vocabulary and ordered merge list from ranks.
* :func:`mergeable_ranks` / :func:`bpe_to_tiktoken_files` -- a BPE tokenizer as
  tiktoken's ``mergeable_ranks``, and the ranks file plus its metadata JSON.
* :func:`covering_pattern` -- a split pattern tiktoken cuts the way this project does.

Everything here reads tokenizers through their public members only, so the BPE
encoder (:mod:`bpe_core.bpe.encoder`) can build on it.
"""

from __future__ import annotations

import base64
import heapq
import json
from collections.abc import Mapping
from typing import Any

import regex

from ..pretokenize import PATTERNS

__all__ = [
    "MAX_SPECIAL_GAP",
    "TIKTOKEN_LINE",
    "bpe_to_tiktoken_files",
    "check_ranks",
    "covering_pattern",
    "mergeable_ranks",
    "parse_tiktoken_file",
    "ranks_to_vocab_merges",
]

TIKTOKEN_LINE = regex.compile(rb"[A-Za-z0-9+/=]+ [0-9]+")
"""One line of a ``.tiktoken`` file (how an upload is recognised as one)."""


def parse_tiktoken_file(data: bytes, source: str = "<data>") -> dict[bytes, int]:
    """Parse the ``.tiktoken`` format: one ``base64(token) rank`` per line.

    Args:
        data: the file's bytes.
        source: a name for error messages (a file path).

    Returns:
        ``{token bytes: rank}``.

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: a line is not ``<base64> <int>``, a token or rank repeats;
            the message names ``source`` and the line number.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be the file's bytes, got {type(data).__name__}")
    data = bytes(data)
    ranks: dict[bytes, int] = {}
    seen_ranks: set[int] = set()
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{source}: line {lineno} is not '<base64 token> <rank>'")
        try:
            token = base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except ValueError as exc:
            raise ValueError(f"{source}: line {lineno}: {exc}") from None
        if token in ranks:
            raise ValueError(f"{source}: line {lineno}: token {token!r} appears twice")
        if rank in seen_ranks:
            raise ValueError(f"{source}: line {lineno}: rank {rank} appears twice")
        ranks[token] = rank
        seen_ranks.add(rank)
    return ranks


def check_ranks(
    ranks: Mapping[bytes, int], special_tokens: Mapping[str, int] | None = None, *, with_metadata: bool = True
) -> None:
    """Check that ranks and special-token ids number the tokens ``0..n-1`` as tiktoken's files do.

    With metadata (``with_metadata``), the ranks must be exactly ``0..n-1``
    (``n`` ranks), except that ids held by special tokens may sit among them (a
    trained tokenizer's specials follow the 256 bytes): what tiktoken demands
    of an encoding with ``explicit_n_vocab``.  A ranks file read alone may
    leave gaps -- its special tokens' ids -- of at most :data:`MAX_SPECIAL_GAP`
    ids in all.  Special ids must be distinct, not a rank, and at most
    :data:`MAX_SPECIAL_GAP` past the last rank (cl100k's are 100,257..100,276).
    All 256 single bytes must be ranked.

    Args:
        ranks: ``{token bytes: rank}``.
        special_tokens: ``{special token: id}`` from the metadata.
        with_metadata: whether the special tokens are known (gaps are then refused).

    Raises:
        TypeError: a token is not bytes or a rank not an int.
        ValueError: a gap, a duplicate or an out-of-range id, or a byte missing;
            the message names the rank or the token and the fix.
    """
    specials = dict(special_tokens or {})
    taken: dict[int, str] = {}
    for s, i in specials.items():
        if isinstance(i, bool) or not isinstance(i, int) or not isinstance(s, str):
            raise TypeError(f"special tokens must map str to int ids, got {s!r}: {i!r}")
        if i in taken:
            raise ValueError(f"special tokens {taken[i]!r} and {s!r} share id {i}")
        taken[i] = s
    for token, r in ranks.items():
        if not isinstance(token, bytes) or isinstance(r, bool) or not isinstance(r, int):
            raise TypeError(f"mergeable ranks must map bytes to int, got {token!r}: {r!r}")
    top = max(ranks.values(), default=-1)
    n = len(ranks) + sum(1 for i in taken if i < top)
    if not with_metadata:
        n += MAX_SPECIAL_GAP
    seen = set()
    for token, r in ranks.items():
        if r in taken:
            raise ValueError(f"token {token!r} has rank {r}, the id of special token {taken[r]!r}")
        if not 0 <= r < n:
            raise ValueError(
                f"token {token!r} has rank {r}, outside 0..{n - 1}: the ranks must number the {len(ranks):,} tokens "
                "from 0 without gaps (special tokens aside)"
            )
        seen.add(r)
    if len(seen) != len(ranks):
        raise ValueError("two tokens share a rank")
    missing = next((i for i in range(top) if i not in seen and i not in taken), None)
    if missing is not None and with_metadata:
        raise ValueError(
            f"no token has rank {missing}: the ranks must number the tokens from 0 without gaps (an id between "
            "them is allowed only for a special token, given in the metadata file beside the ranks)"
        )
    last = max(seen, default=-1)
    for i, s in taken.items():
        if not 0 <= i <= last + MAX_SPECIAL_GAP:
            raise ValueError(f"special token {s!r} has id {i}, beyond {last + MAX_SPECIAL_GAP:,} (last rank {last:,})")
    singles = {t[0] for t in ranks if len(t) == 1}
    if len(singles) < 256:
        byte = next(b for b in range(256) if b not in singles)
        raise ValueError(f"no token for the single byte 0x{byte:02X}; byte-level BPE needs all 256 bytes ranked")


MAX_SPECIAL_GAP = 1 << 16
"""How far past the last rank a special token's id may be (o200k_harmony's reach about 1,100)."""


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
    leftmost start.  :func:`bpe_core.educational.tiktoken_parts` is the plain
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


def bpe_to_tiktoken_files(tok: Any, name: str = "bpe_playground") -> tuple[bytes, bytes]:
    """Export a BPE tokenizer for tiktoken.

    Args:
        tok: the tokenizer (its current view).
        name: the encoding name written into the metadata.

    Returns:
        ``(ranks_file, meta_json)``: the ``.tiktoken`` file (one ``base64(token) id``
        per line, what ``tiktoken.load.load_tiktoken_bpe`` reads) and a UTF-8
        JSON object ``{"name", "pat_str", "special_tokens", "explicit_n_vocab"}``
        whose fields go straight into ``tiktoken.Encoding(...)``; ``pat_str`` is
        :func:`covering_pattern` of the tokenizer's pattern.

    Raises:
        ValueError: the vocabulary holds the same bytes under two ids (training
            can make them by two merges): ``mergeable_ranks`` is keyed by bytes,
            and the file would leave a gap tiktoken refuses.
    """
    ranks = mergeable_ranks(tok)
    specials = set(tok.special_tokens.values())
    for i, b in tok.vocab.items():
        if i not in specials and ranks[b] != i:
            raise ValueError(
                f"token bytes {b!r} appear under ids {ranks[b]} and {i}; a .tiktoken ranks file cannot hold both "
                "(export as the project's JSON instead)"
            )
    lines = [base64.b64encode(b) + b" " + str(i).encode() for b, i in sorted(ranks.items(), key=lambda kv: kv[1])]
    meta = {
        "name": name,
        "pat_str": covering_pattern(tok.pattern),
        "special_tokens": tok.special_tokens,
        "explicit_n_vocab": len(ranks) + len(tok.special_tokens),
    }
    return b"\n".join(lines) + b"\n", json.dumps(meta, ensure_ascii=False, indent=2).encode("utf-8")


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
