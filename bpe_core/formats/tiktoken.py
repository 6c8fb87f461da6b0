"""tiktoken's formats: ``.tiktoken`` ranks files, their metadata, and ranks <-> merges.

* :func:`parse_tiktoken_file` -- the ``.tiktoken`` format (``base64(token) rank`` lines).
* :func:`check_ranks` -- the checks a ranks table must pass to be a byte-level BPE.
* :func:`bpe_to_tiktoken_files` -- a BPE tokenizer as the ranks file plus its metadata JSON.

Ranks <-> merges (:func:`~bpe_core.bpe.ranks.ranks_to_vocab_merges`) and the
covering pattern live with the BPE model, in :mod:`bpe_core.bpe.ranks`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import regex

from ..bpe.ranks import covering_pattern, mergeable_ranks

__all__ = [
    "MAX_SPECIAL_GAP",
    "TIKTOKEN_LINE",
    "bpe_to_tiktoken_files",
    "check_ranks",
    "parse_tiktoken_file",
]

TIKTOKEN_LINE = regex.compile(rb"[A-Za-z0-9+/=]+ [0-9]+")
"""One line of a ``.tiktoken`` file (how an upload is recognised as one)."""

_DIGITS = regex.compile(rb"[0-9]+")


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
        if not _DIGITS.fullmatch(parts[1]):  # int() would also read "+3", "3_0", "-1" and non-ASCII digits
            raise ValueError(f"{source}: line {lineno}: the rank {parts[1][:20]!r} is not a number in digits 0-9")
        try:
            token = base64.b64decode(parts[0], validate=True)
        except ValueError as exc:
            raise ValueError(f"{source}: line {lineno}: {exc}") from None
        rank = int(parts[1])
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
    taken = _special_ids(special_tokens or {})
    _check_types(ranks)
    top = max(ranks.values(), default=-1)
    n = len(ranks) + sum(1 for i in taken if i < top)
    if not with_metadata:
        n += MAX_SPECIAL_GAP
    seen = _ranks_in_range(ranks, taken, n)
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


def _special_ids(special_tokens: Mapping[str, int]) -> dict[int, str]:
    """``{id: special token}``; ``TypeError`` for a non-``str`` token or non-``int`` id; ``ValueError`` if shared."""
    taken: dict[int, str] = {}
    for s, i in special_tokens.items():
        if isinstance(i, bool) or not isinstance(i, int) or not isinstance(s, str):
            raise TypeError(f"special tokens must map str to int ids, got {s!r}: {i!r}")
        if i in taken:
            raise ValueError(f"special tokens {taken[i]!r} and {s!r} share id {i}")
        taken[i] = s
    return taken


def _check_types(ranks: Mapping[bytes, int]) -> None:
    for token, r in ranks.items():
        if not isinstance(token, bytes) or isinstance(r, bool) or not isinstance(r, int):
            raise TypeError(f"mergeable ranks must map bytes to int, got {token!r}: {r!r}")


def _ranks_in_range(ranks: Mapping[bytes, int], taken: Mapping[int, str], n: int) -> set[int]:
    """The set of ranks, each checked to be in ``0..n-1``, distinct and not a special token's id (``ValueError``)."""
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
    return seen


MAX_SPECIAL_GAP = 1 << 16
"""How far past the last rank a special token's id may be (o200k_harmony's reach about 1,100)."""


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
