"""Files coming in: uploaded text, and a tokenizer file of any supported format.

* :func:`decode_text_upload` -- uploaded bytes to text, or a precise error.
* :func:`load_tokenizer_bytes` -- read any supported tokenizer file (upload or
  disk), recognising the format by its content: the project's JSON
  (``to_dict`` of a registered algorithm), Hugging Face ``tokenizer.json``
  (:mod:`bpe_core.formats.huggingface`), a tiktoken ``.tiktoken`` file
  (:mod:`bpe_core.formats.tiktoken`) or a BERT ``vocab.txt``
  (:mod:`bpe_core.formats.bert`).

The exports live beside the format they write: :func:`~bpe_core.formats.tiktoken.bpe_to_tiktoken_files`,
:func:`~bpe_core.formats.huggingface.bpe_to_hf_json`,
:func:`~bpe_core.formats.huggingface.wordpiece_to_hf_json`,
:func:`~bpe_core.formats.bert.wordpiece_to_vocab_txt`.
"""

from __future__ import annotations

from ..bpe.model import BPETokenizer
from ..bpe.ranks import ranks_to_vocab_merges
from ..interface import ALGORITHMS
from ..interface import Tokenizer as AnyTokenizer
from ..persistence import json_field, json_int, load_json
from ..unigram.model import UnigramTokenizer
from ..wordpiece.model import WordPieceTokenizer
from .bert import wordpiece_from_vocab_txt
from .huggingface import bpe_from_hf_json, pattern_name_of, unigram_from_hf_json, wordpiece_from_hf_json
from .tiktoken import MAX_SPECIAL_GAP, TIKTOKEN_LINE, check_ranks, parse_tiktoken_file

__all__ = ["MAX_UPLOAD_BYTES", "decode_text_upload", "load_tokenizer_bytes"]

Tokenizer = BPETokenizer | WordPieceTokenizer | UnigramTokenizer | AnyTokenizer

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
"""Largest upload the app accepts: 64 MiB (bytes)."""


def decode_text_upload(data: bytes, filename: str = "upload", max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """Decode an uploaded file's bytes as UTF-8 text, or explain why not.

    Args:
        data: the file's bytes (never a path).
        filename: shown in messages.
        max_bytes: size cap in bytes.

    Returns:
        The text (a leading UTF-8 byte-order mark is dropped).

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: the file is empty, larger than ``max_bytes``, looks binary
            (NUL bytes in the first 8 KiB together with invalid UTF-8), or is not
            valid UTF-8 -- the message gives the byte offset and, for text that
            decodes as Latin-1/Windows-1252, says so.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"upload must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) == 0:
        raise ValueError(f"{filename} is empty (0 bytes): there is no text to tokenize")
    if len(data) > max_bytes:
        raise ValueError(
            f"{filename} is {len(data) / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB upload limit; "
            "use a smaller file, or train on the whole file with `python -m bpe_core train`"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = data[:8192]
        if b"\x00" in head:
            raise ValueError(
                f"{filename} looks like a binary file (it contains NUL bytes and is not UTF-8 text); "
                "upload a plain .txt file"
            ) from None
        hint = ""
        try:
            data.decode("cp1252")
            hint = " It decodes as Latin-1/Windows-1252: re-save it as UTF-8 and upload it again."
        except UnicodeDecodeError:
            pass
        raise ValueError(
            f"{filename} is not valid UTF-8: byte 0x{data[exc.start]:02X} at offset {exc.start} "
            f"cannot start or continue a character.{hint}"
        ) from None
    return text.removeprefix("\ufeff")


def load_tokenizer_bytes(data: bytes, filename: str = "tokenizer", meta: bytes | None = None) -> Tokenizer:
    """Read a tokenizer from a file's bytes, recognising the format by its content.

    Supported: this project's JSON (``"format": "bpe-playground/<algorithm>"``
    for every registered algorithm: ``bpe``, ``wordpiece``, ``unigram``, read by
    its :attr:`~bpe_core.interface.Algorithm.from_dict`); a Hugging Face
    ``tokenizer.json`` with a byte-level BPE, a WordPiece or a Unigram model; a tiktoken ``.tiktoken`` ranks
    file (lines ``<base64> <rank>``; with ``meta``, the JSON written next to it
    by :func:`bpe_to_tiktoken_files`, else GPT-2's pattern and no special tokens
    are assumed); a BERT ``vocab.txt`` (one token per line, see
    :func:`wordpiece_from_vocab_txt`).

    Args:
        data: the file's bytes.
        filename: used in messages.
        meta: optional tiktoken metadata JSON bytes.

    Returns:
        A :class:`BPETokenizer`, a :class:`WordPieceTokenizer` or a
        :class:`UnigramTokenizer` (another registered algorithm's class for its JSON).

    Raises:
        TypeError: ``data`` or ``meta`` is not bytes (a ``str`` must be encoded first).
        ValueError: empty, truncated or malformed file, or an unsupported format;
            the message names the file, the field and what is wrong.
    """
    _need_bytes(data, "data")
    if meta is not None:
        _need_bytes(meta, "meta")
    data = bytes(data)
    if not data.strip():
        raise ValueError(f"{filename} is empty")
    if data.lstrip()[:1] == b"{":
        obj = load_json(data, filename)
        if not isinstance(obj, dict):
            raise ValueError(f"{filename}: expected a JSON object")
        return _from_json_object(obj, filename)
    first = data.lstrip().split(b"\n", 1)[0].strip()
    if not TIKTOKEN_LINE.fullmatch(first):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                f"not a tokenizer file: {filename} is binary or not UTF-8 (expected JSON, .tiktoken or vocab.txt)"
            ) from None
        return wordpiece_from_vocab_txt(data, filename)
    return _from_tiktoken_file(data, filename, meta)


def _from_json_object(obj: dict, filename: str) -> Tokenizer:
    """A JSON tokenizer file: this project's own format (any registered algorithm) or Hugging Face's."""
    fmt = obj.get("format")
    if isinstance(fmt, str) and fmt.startswith("bpe-playground/"):
        algorithm = ALGORITHMS.get(fmt.removeprefix("bpe-playground/"))
        if algorithm is None:
            known = ", ".join(f"bpe-playground/{n}" for n in ALGORITHMS)
            raise ValueError(f"{filename}: unknown BPE Playground format {fmt!r} (known: {known})")
        try:
            return algorithm.from_dict(obj)
        except ValueError as exc:
            raise ValueError(f"{filename}: {exc}") from None
    if "model" in obj:  # Hugging Face's
        model = json_field(obj["model"], dict, f'{filename}: "model"', "an object")
        kind = json_field(model.get("type"), str, f'{filename}: "model.type"', "a string (the model's kind)")
        if kind == "WordPiece":
            return wordpiece_from_hf_json(obj, filename)
        if kind == "Unigram":
            return unigram_from_hf_json(obj, filename)
        return bpe_from_hf_json(obj, filename)
    if {"pat_str", "special_tokens"} <= set(obj):
        raise ValueError(f"{filename} is tiktoken metadata only; upload the .tiktoken ranks file with it")
    raise ValueError(
        f'{filename}: unknown JSON tokenizer format: no "format" naming a BPE Playground algorithm, no Hugging Face '
        '"model" object'
    )


def _from_tiktoken_file(data: bytes, filename: str, meta: bytes | None) -> BPETokenizer:
    """A ``.tiktoken`` ranks file, with the metadata JSON written beside it (else GPT-2's pattern, no specials)."""
    try:
        ranks = parse_tiktoken_file(data, filename)
    except ValueError as exc:
        raise ValueError(f"not a tokenizer file: {exc}") from None
    pattern, specials, name = "gpt2", {}, filename
    if meta is not None:
        pattern, specials, name = _tiktoken_metadata(meta, filename, len(ranks))
    try:
        check_ranks(ranks, specials, with_metadata=meta is not None)
        vocab, merges = ranks_to_vocab_merges(ranks)
        for s, i in specials.items():
            vocab[i] = s.encode("utf-8")
        return BPETokenizer(vocab, merges, specials, pattern_name_of(pattern), name)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None


def _tiktoken_metadata(meta: bytes, filename: str, n_ranks: int) -> tuple[str, dict[str, int], str]:
    """``(pattern, special tokens, name)`` from the metadata JSON of a ranks file of ``n_ranks`` tokens.

    Raises:
        ValueError: a field is missing or of the wrong type (named in the message), or
            ``explicit_n_vocab`` disagrees with the ranks file's size.
    """
    try:
        m = json_field(load_json(meta, "metadata"), dict, "the metadata", "a JSON object")
        for key in ("pat_str", "special_tokens"):
            if key not in m:
                raise ValueError(f'the field "{key}" is missing')
        pattern = json_field(m["pat_str"], str, '"pat_str"', "a regex string")
        raw = json_field(m["special_tokens"], dict, '"special_tokens"', 'an object {"token": id}')
        specials = {s: json_int(i, f'"special_tokens"[{s!r}]') for s, i in raw.items()}
        top = n_ranks + len(raw) + MAX_SPECIAL_GAP  # as far as check_ranks lets a special token's id be
        for s, i in specials.items():
            if i > top:
                raise ValueError(f'"special_tokens"[{s!r}] has id {i}, beyond {top:,} ({n_ranks:,} ranks, and '
                                 f"{MAX_SPECIAL_GAP:,} more ids at most)")  # fmt: skip
        name = json_field(m.get("name", filename), str, '"name"', "a string")
        expected = m.get("explicit_n_vocab")
        if expected is not None:
            json_int(expected, '"explicit_n_vocab"')
    except ValueError as exc:
        raise ValueError(
            f"tiktoken metadata for {filename} is malformed: {exc}; use the .json written beside the ranks file"
        ) from None
    if expected is not None and n_ranks + len(specials) != expected:
        raise ValueError(
            f"{filename} holds {n_ranks} tokens + {len(specials)} special tokens, but its metadata's "
            f'"explicit_n_vocab" says {expected}: the ranks file is truncated or belongs to another encoding'
        )
    return pattern, specials, name


def _need_bytes(data: object, what: str) -> None:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(
            f"{what} must be the file's bytes, got {type(data).__name__} (encode text with .encode('utf-8'))"
        )
