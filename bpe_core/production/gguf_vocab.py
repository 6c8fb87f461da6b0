"""GGUF vocabularies: the tokenizer that llama.cpp's ``.gguf`` files carry in their key-value header.

A GGUF file (format: ``ggml/docs/gguf.md`` of llama.cpp; the ``gguf`` package
on PyPI is its Python reader and writer) starts with ``GGUF``, a version, the
tensor and key-value counts, then the key-value pairs.  The tokenizer is under
``tokenizer.ggml.*``: ``model`` (``gpt2`` byte-level BPE, ``llama`` SentencePiece
BPE, ``bert`` WordPiece, ``t5`` Unigram, ``gemma4`` SentencePiece-style BPE with
merges), ``pre`` (the pre-tokenizer's name), ``tokens``, ``token_type``,
``scores``, ``merges``, ``precompiled_charsmap`` and the special ids.

:func:`read_gguf_metadata` parses the key-value section itself: ``gguf``'s
``GGUFReader`` builds numpy views of every string and takes 45 s on Gemma 4's
262,144 tokens and 514,906 merges, where this takes about a second.  The
tests check that both read the same values (and that :data:`VALUE_TYPES` are
``gguf.GGUFValueType``'s codes).

>>> from bpe_core.production.gguf_vocab import load_gguf_vocab
>>> v = load_gguf_vocab("ggml-vocab-bert-bge.gguf")  # doctest: +SKIP
>>> v.model, len(v.tokens), v.tokens[101]  # doctest: +SKIP
('bert', 30522, '[CLS]')
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import install
from .encodings import EncodingUnavailable

__all__ = [
    "BYTE",
    "CONTROL",
    "NORMAL",
    "UNKNOWN",
    "UNUSED",
    "USER_DEFINED",
    "GGUFVocab",
    "gguf_unavailable",
    "load_gguf_vocab",
    "read_gguf_metadata",
    "read_test_cases",
]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
"""``tokenizer.ggml.token_type`` values (llama.cpp's ``llama_token_type``, ``gguf.TokenType``)."""

VALUE_TYPES: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    8: "string",
    9: "array",
    10: "<Q",
    11: "<q",
    12: "<d",
}
"""GGUF value type code -> ``struct`` format (``gguf.GGUFValueType``: UINT8 .. FLOAT64; 8 STRING, 9 ARRAY)."""

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def _string(data: bytes | memoryview, pos: int) -> tuple[str, int]:
    (n,) = _U64.unpack_from(data, pos)
    pos += 8
    return bytes(data[pos : pos + n]).decode("utf-8"), pos + n


def _array(data: bytes | memoryview, pos: int) -> tuple[list | bytes, int]:
    (kind,) = _U32.unpack_from(data, pos)
    (count,) = _U64.unpack_from(data, pos + 4)
    pos += 12
    fmt = VALUE_TYPES.get(kind)
    if fmt == "string":
        out: list = [""] * count
        unpack = _U64.unpack_from
        for k in range(count):
            (n,) = unpack(data, pos)
            pos += 8
            out[k] = bytes(data[pos : pos + n]).decode("utf-8")
            pos += n
        return out, pos
    if fmt is None or fmt == "array":
        raise ValueError(f"unsupported GGUF array element type {kind}")
    size = struct.calcsize(fmt)
    if kind == 0:  # uint8: the charsmap's bytes
        return bytes(data[pos : pos + count]), pos + count
    values = list(struct.unpack_from(f"<{count}{fmt[1]}", data, pos))
    return values, pos + count * size


def read_gguf_metadata(data: bytes | memoryview) -> dict[str, Any]:
    """The key-value pairs of a GGUF file (version 2 or 3, little-endian), without its tensors.

    Args:
        data: the file's bytes (only the header is read).

    Returns:
        ``{key: value}`` in file order: numbers as ``int``/``float``/``bool``,
        strings as ``str``, arrays as ``list`` (``bytes`` for a ``uint8`` array).

    Raises:
        ValueError: not a GGUF file, an unsupported version, or a truncated or
            unknown value (the message says which).
    """
    if bytes(data[:4]) != b"GGUF":
        raise ValueError("not a GGUF file (it does not start with 'GGUF')")
    (version,) = _U32.unpack_from(data, 4)
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported (2 or 3, little-endian)")
    (n_kv,) = _U64.unpack_from(data, 16)
    pos = 24
    out: dict[str, Any] = {}
    try:
        for _ in range(n_kv):
            key, pos = _string(data, pos)
            (kind,) = _U32.unpack_from(data, pos)
            pos += 4
            fmt = VALUE_TYPES.get(kind)
            if fmt is None:
                raise ValueError(f"key {key!r} has an unknown value type {kind}")
            if fmt == "string":
                value, pos = _string(data, pos)
            elif fmt == "array":
                value, pos = _array(data, pos)
            else:
                (value,) = struct.unpack_from(fmt, data, pos)
                pos += struct.calcsize(fmt)
            out[key] = value
    except struct.error as exc:
        raise ValueError(f"truncated GGUF header ({exc})") from None
    return out


@dataclass(frozen=True)
class GGUFVocab:
    """The tokenizer of a GGUF file, as its ``tokenizer.ggml.*`` keys give it.

    Attributes:
        name: the file name (``"ggml-vocab-gemma-4.gguf"``).
        model: ``tokenizer.ggml.model`` (``"gpt2"``, ``"llama"``, ``"bert"``, ``"t5"``, ``"gemma4"``).
        pre: ``tokenizer.ggml.pre``, the pre-tokenizer's name, or ``""``.
        tokens: every token's text, by id (byte-level BPE: in GPT-2's byte-to-unicode form).
        token_types: :data:`NORMAL`, :data:`CONTROL`, ... by id.
        scores: every token's score by id, or ``[]``.
        merges: ``"left right"`` strings in rank order, or ``[]``.
        precompiled_charsmap: SentencePiece's normalization table, or ``b""``.
        flags: the other ``tokenizer.ggml.*`` keys (``bos_token_id``, ``add_space_prefix``, ...).
        source: where the file was read from.
    """

    name: str
    model: str
    pre: str
    tokens: list[str]
    token_types: list[int]
    scores: list[float] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)
    precompiled_charsmap: bytes = b""
    flags: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def ids_of_type(self, *types: int) -> list[int]:
        """Ids whose token type is one of ``types``, ascending."""
        wanted = set(types)
        return [i for i, t in enumerate(self.token_types) if t in wanted]


def gguf_unavailable(label: str, name: str, reason: str) -> EncodingUnavailable:
    """The one-line error for a GGUF vocabulary that is not in the cache (or fails its check)."""
    return EncodingUnavailable(
        f"{label} is not available offline",
        details=f"Tried: {install.cache_dir() / name} ({reason}).",
        how_to_add=(
            f"To make it available, run `{install.SET_UP_COMMAND}` once (it extracts llama.cpp's vocabularies "
            f"from the {install.DISTRIBUTION} {install.VERSION} source release on PyPI, sha256-verified)."
        ),
    )


@lru_cache(maxsize=8)
def load_gguf_vocab(name: str, label: str = "") -> GGUFVocab:
    """Read the vocabulary of one of :data:`~bpe_core.production.install.FILES` from the cache, sha256-checked.

    Args:
        name: the file name (``"ggml-vocab-gpt-2.gguf"``).
        label: the tokenizer's display name, for the error message.

    Raises:
        ValueError: ``name`` is not a known file, or the file is not a GGUF vocabulary.
        EncodingUnavailable: the file is missing or its sha256 differs (one line; ``how_to_add``
            names the set-up command).
    """
    if name not in install.FILES or not name.endswith(".gguf"):
        raise ValueError(f"{name!r} is not a GGUF vocabulary of {install.ARCHIVE}")
    path = install.cache_dir() / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise gguf_unavailable(label or name, name, f"{type(exc).__name__}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != install.FILES[name]:
        raise gguf_unavailable(label or name, name, f"sha256 {digest[:12]}… is not {install.FILES[name][:12]}…")
    return vocab_from_metadata(name, read_gguf_metadata(data), f"{path} (sha256 verified)")


def vocab_from_metadata(name: str, meta: dict[str, Any], source: str) -> GGUFVocab:
    """A :class:`GGUFVocab` from :func:`read_gguf_metadata`'s result.

    Raises:
        ValueError: no ``tokenizer.ggml.model`` or ``tokens``, or arrays of different lengths.
    """
    prefix = "tokenizer.ggml."
    try:
        model, tokens = meta[prefix + "model"], meta[prefix + "tokens"]
    except KeyError as exc:
        raise ValueError(f"{name}: no {exc.args[0]} key: not a GGUF vocabulary") from None
    types = meta.get(prefix + "token_type") or [NORMAL] * len(tokens)
    scores = meta.get(prefix + "scores") or []
    if len(types) != len(tokens) or (scores and len(scores) != len(tokens)):
        raise ValueError(f"{name}: tokens, token types and scores differ in length")
    known = {"model", "pre", "tokens", "token_type", "scores", "merges", "precompiled_charsmap"}
    flags = {k[len(prefix) :]: v for k, v in meta.items() if k.startswith(prefix) and k[len(prefix) :] not in known}
    return GGUFVocab(
        name, model, meta.get(prefix + "pre", ""), tokens, types, scores, meta.get(prefix + "merges") or [],
        bytes(meta.get(prefix + "precompiled_charsmap") or b""), flags, source,
    )  # fmt: skip


def read_test_cases(name: str) -> list[tuple[str, list[int]]]:
    r"""llama.cpp's test cases of a vocabulary: ``[(text, expected ids), ...]`` from ``name.inp`` / ``name.out``.

    The ``.inp`` file holds the texts separated by ``"\n__ggml_vocab_test__\n"``; the
    ``.out`` file one line of space-separated ids per text (as
    ``tests/test-tokenizer-0.cpp`` reads them).  Both come from the cache, sha256-checked.

    Raises:
        ValueError: no test files for ``name``, or the two files disagree in length.
        EncodingUnavailable: a file is missing or damaged.
    """
    paths: list[Path] = []
    for suffix in (".inp", ".out"):
        if name + suffix not in install.FILES:
            raise ValueError(f"llama.cpp ships no test cases for {name}")
        path = install.verified(name + suffix)
        if path is None:
            raise gguf_unavailable(name + suffix, name + suffix, "missing or not the released file")
        paths.append(path)
    raw = paths[0].read_bytes().decode("utf-8")
    sep = "\n__ggml_vocab_test__\n"
    texts, pos = [], 0
    while pos < len(raw):
        nxt = raw.find(sep, pos)
        if nxt < 0:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:nxt])
        pos = nxt + len(sep)
    lines = paths[1].read_bytes().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(texts):
        raise ValueError(f"{name}: {len(texts)} test texts but {len(lines)} lines of expected ids")
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]
