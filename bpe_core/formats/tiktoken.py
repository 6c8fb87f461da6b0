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
import json
from collections.abc import Mapping
from typing import Any

import regex

from ..pretokenize import PATTERNS

__all__ = [
    "TIKTOKEN_LINE",
    "bpe_to_tiktoken_files",
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
        ValueError: a line is not ``<base64> <int>``, a token or rank repeats;
            the message names ``source`` and the line number.
    """
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
        ValueError: tiktoken's procedure cannot build a token from two other
            tokens, or a single byte is missing.
    """
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


def _bpe_parts(ranks: Mapping[bytes, int], token: bytes) -> list[bytes]:
    """Tiktoken's byte-pair merging of ``token``'s bytes, lowest rank first, stopping before ``token`` itself."""
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
    """
    ranks = mergeable_ranks(tok)
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
