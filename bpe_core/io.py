"""Files in and out: uploaded text, and trained tokenizers in other tools' formats.

* :func:`decode_text_upload` -- uploaded bytes to text, or a precise error.
* BPE exports: a tiktoken ranks file (``.tiktoken``) plus a small JSON with the
  pattern and special tokens (:func:`bpe_to_tiktoken_files`), and a Hugging Face
  ``tokenizer.json`` (:func:`bpe_to_hf_json`).
* WordPiece exports: a BERT ``vocab.txt`` (:func:`wordpiece_to_vocab_txt`) and a
  Hugging Face ``tokenizer.json`` (:func:`wordpiece_to_hf_json`).
* :func:`load_tokenizer_bytes` -- read any supported file back (upload or disk).

The project's own JSON formats are written by ``BPETokenizer.to_dict`` and
``WordPieceTokenizer.to_dict`` (and their ``save``).
"""

from __future__ import annotations

import base64
import json
from functools import cache

import regex

from .bpe import BPETokenizer
from .pretokenize import PATTERNS, resolve_pattern
from .reference import parse_tiktoken_file, ranks_to_vocab_merges
from .wordpiece import WordPieceTokenizer

Tokenizer = BPETokenizer | WordPieceTokenizer

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


# ---------------------------------------------------------------------------
# export / import of trained tokenizers


def mergeable_ranks(tok: BPETokenizer) -> dict[bytes, int]:
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


def bpe_to_tiktoken_files(tok: BPETokenizer, name: str = "bpe_playground") -> tuple[bytes, bytes]:
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


@cache
def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable characters.

    Bytes that are printable Latin-1 (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) map
    to themselves; the other 68 map, in increasing order, to U+0100, U+0101, ...
    (so a space, 0x20, is ``Ġ`` = U+0120).  This is the alphabet of Hugging
    Face's ``ByteLevel`` pre-tokenizer and of GPT-2's ``encoder.json``.

    Returns:
        ``{byte value: one-character str}``.
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    out = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in out:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def _hf_token(data: bytes) -> str:
    m = byte_to_unicode()
    return "".join(m[b] for b in data)


def bpe_to_hf_json(tok: BPETokenizer) -> str:
    """Export a BPE tokenizer as a Hugging Face ``tokenizer.json``.

    The file uses a ``Split`` pre-tokenizer with the tokenizer's own pattern
    (in Oniguruma's dialect, see :func:`onig_pattern`) followed by ``ByteLevel``
    (no regex of its own), a byte-level BPE model with the vocab and merges
    written in GPT-2's byte-to-character alphabet
    (:func:`byte_to_unicode`), the special tokens as added special tokens, and a
    ``ByteLevel`` decoder.  ``tokenizers.Tokenizer.from_file`` loads it and gives
    the same ids as this tokenizer.

    Args:
        tok: the tokenizer (its current view).

    Returns:
        The JSON text.

    Raises:
        ValueError: the vocabulary holds the same bytes under two ids (a
            ``tokenizer.json`` vocab is keyed by token string and cannot).
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    specials = tok.special_tokens
    special_ids = set(specials.values())
    vocab: dict[str, int] = {}
    for i, b in sorted(tok.vocab.items()):
        if i in special_ids:
            continue
        s = _hf_token(b)
        if s in vocab:
            raise ValueError(
                f"token bytes {b!r} appear under ids {vocab[s]} and {i}; a tokenizer.json vocab cannot hold both"
            )
        vocab[s] = i
    for s, i in specials.items():
        # the model vocab carries the special tokens too, so that the added tokens keep our ids
        if s in vocab:
            raise ValueError(f"special token {s!r} has the same spelling as learned token {vocab[s]}")
        vocab[s] = i
    merges = [(_hf_token(a), _hf_token(b)) for a, b in tok.merges]
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(onig_pattern(tok.pattern)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    return hf.to_str(pretty=True)


def load_tokenizer_bytes(data: bytes, filename: str = "tokenizer", meta: bytes | None = None) -> Tokenizer:
    """Read a tokenizer from a file's bytes, recognising the format by its content.

    Supported: this project's JSON (``"format": "bpe-playground/bpe"`` or
    ``"bpe-playground/wordpiece"``); a Hugging Face ``tokenizer.json`` with a
    byte-level BPE model or a WordPiece model; a tiktoken ``.tiktoken`` ranks
    file (lines ``<base64> <rank>``; with ``meta``, the JSON written next to it
    by :func:`bpe_to_tiktoken_files`, else GPT-2's pattern and no special tokens
    are assumed); a BERT ``vocab.txt`` (one token per line, see
    :func:`wordpiece_from_vocab_txt`).

    Args:
        data: the file's bytes.
        filename: used in messages.
        meta: optional tiktoken metadata JSON bytes.

    Returns:
        A :class:`BPETokenizer` or a :class:`WordPieceTokenizer`.

    Raises:
        ValueError: empty, truncated or malformed file, or an unsupported format;
            the message names the file and what is wrong.
    """
    if not data.strip():
        raise ValueError(f"{filename} is empty")
    head = data.lstrip()[:1]
    if head == b"{":
        try:
            obj = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{filename} is not valid JSON (truncated or damaged?): {exc}") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{filename}: expected a JSON object")
        fmt = obj.get("format")
        if fmt in ("bpe-playground/bpe", "bpe-playground/wordpiece"):
            cls = BPETokenizer if fmt == "bpe-playground/bpe" else WordPieceTokenizer
            try:
                return cls.from_dict(obj)
            except ValueError as exc:
                raise ValueError(f"{filename}: {exc}") from None
        if isinstance(obj.get("model"), dict):
            if obj["model"].get("type") == "WordPiece":
                return _wordpiece_from_hf(obj, filename)
            return _from_hf(obj, filename)
        if {"pat_str", "special_tokens"} <= set(obj):
            raise ValueError(f"{filename} is tiktoken metadata only; upload the .tiktoken ranks file with it")
        raise ValueError(f"{filename}: unknown JSON tokenizer format (not BPE Playground, not Hugging Face)")
    first = data.lstrip().split(b"\n", 1)[0].strip()
    if not _TIKTOKEN_LINE.fullmatch(first):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                f"not a tokenizer file: {filename} is binary or not UTF-8 (expected JSON, .tiktoken or vocab.txt)"
            ) from None
        return wordpiece_from_vocab_txt(data, filename)
    try:
        ranks = parse_tiktoken_file(data, filename)
    except ValueError as exc:
        raise ValueError(f"not a tokenizer file: {exc}") from None
    pattern, specials, name = "gpt2", {}, filename
    if meta is not None:
        try:
            m = json.loads(meta.decode("utf-8"))
            pattern, specials, name = m["pat_str"], dict(m["special_tokens"]), str(m.get("name", filename))
            expected = m.get("explicit_n_vocab")
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"tiktoken metadata for {filename} is malformed: {exc!r}") from None
        if expected is not None and len(ranks) + len(specials) != expected:
            raise ValueError(
                f"{filename} holds {len(ranks)} tokens + {len(specials)} special tokens, but its metadata says "
                f"{expected}: the ranks file is truncated or belongs to another encoding"
            )
    try:
        vocab, merges = ranks_to_vocab_merges(ranks)
        for s, i in specials.items():
            vocab[int(i)] = s.encode("utf-8")
        return BPETokenizer(vocab, merges, {s: int(i) for s, i in specials.items()}, _pattern_arg(pattern), name)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None


_TIKTOKEN_LINE = regex.compile(rb"[A-Za-z0-9+/=]+ [0-9]+")


def _pattern_arg(source: str) -> str:
    """A pattern name when ``source`` is one of the named patterns (or its Oniguruma form), else ``source``."""
    for name, src in PATTERNS.items():
        if source in (src, onig_pattern(src), covering_pattern(src)):
            return name
    return resolve_pattern(source)


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


def onig_pattern(source: str) -> str:
    """The split pattern rewritten for Oniguruma, the regex engine of Hugging Face ``tokenizers``.

    Python's ``regex`` reads ``{1,3}+`` as a possessive interval; Oniguruma reads
    it as the interval repeated (``(?:x{1,3})+``), which would keep ``2159``
    whole where cl100k splits it ``215`` + ``9``.  The ``+`` after an interval
    is dropped: in the named patterns nothing follows such an interval inside
    its alternative, so greedy and possessive match the same text.  (For a
    custom pattern where it matters, the exported file may split differently.)

    Args:
        source: a regex source for the ``regex`` module.

    Returns:
        The source with every ``{m,n}+`` turned into ``{m,n}``.
    """
    return regex.sub(r"(?<!\\)(\{\d+(?:,\d*)?\})\+", r"\1", source)


def _from_hf(obj: dict, filename: str) -> BPETokenizer:
    model = obj["model"]
    if model.get("type") != "BPE":
        raise ValueError(f"{filename}: a Hugging Face {model.get('type')} model is not a byte-level BPE")
    inverse = {c: b for b, c in byte_to_unicode().items()}
    try:
        vocab = {int(i): bytes(inverse[c] for c in s) for s, i in model["vocab"].items()}
        merges = [
            tuple(bytes(inverse[c] for c in part) for part in (m if isinstance(m, list) else m.split(" ")))
            for m in model["merges"]
        ]
    except KeyError as exc:
        raise ValueError(
            f"{filename}: not a byte-level vocabulary (character {exc} is outside GPT-2's byte alphabet)"
        ) from None
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"{filename}: malformed model section: {exc}") from None
    specials = {t["content"]: int(t["id"]) for t in obj.get("added_tokens") or [] if t.get("special")}
    for s, i in specials.items():
        vocab[i] = s.encode("utf-8")  # replaces the model-vocab spelling of the special token
    pattern = _hf_pattern(obj.get("pre_tokenizer"))
    try:
        return BPETokenizer(vocab, merges, specials, pattern, name=filename)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None


def _hf_pattern(pre: dict | None) -> str:
    """The split pattern of a Hugging Face pre-tokenizer section (GPT-2's for a plain ByteLevel)."""
    if not pre:
        return "gpt2"
    steps = pre.get("pretokenizers", [pre]) if pre.get("type") == "Sequence" else [pre]
    for step in steps:
        if step.get("type") == "Split" and "Regex" in (step.get("pattern") or {}):
            return _pattern_arg(step["pattern"]["Regex"])
    return "gpt2"


# ---------------------------------------------------------------------------
# WordPiece


def wordpiece_to_vocab_txt(tok: WordPieceTokenizer) -> bytes:
    """Export a WordPiece vocabulary as BERT's ``vocab.txt``: one token per line, line number = id.

    The file holds no settings: readers must know the unknown token, the
    continuing-subword prefix and whether to lower-case (BERT's defaults are
    ``[UNK]``, ``##``; :func:`wordpiece_from_vocab_txt` infers lower-casing).

    Args:
        tok: the tokenizer (its current view).

    Returns:
        UTF-8 bytes, one line per token, each ending in a newline.

    Raises:
        ValueError: a token contains a line break (it could not be one line).
    """
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    for i, t in enumerate(tokens):
        if "\n" in t or "\r" in t:
            raise ValueError(f"token {i} {t!r} contains a line break and cannot be written to vocab.txt")
    return ("\n".join(tokens) + "\n").encode("utf-8")


_BRACKETED = regex.compile(r"\[[^\[\]\s]+\]")


def wordpiece_from_vocab_txt(data: bytes, filename: str = "vocab.txt") -> WordPieceTokenizer:
    """Read a BERT ``vocab.txt`` into a :class:`WordPieceTokenizer`.

    Bracketed tokens such as ``[PAD]``, ``[UNK]``, ``[unused7]`` are taken as the
    special tokens (BERT's convention); ``[UNK]`` must be among them.  The
    prefix is ``##``; the text is lower-cased when no token has an upper-case
    letter (as in BERT's uncased vocabularies).

    Args:
        data: the file's bytes.
        filename: used in messages.

    Returns:
        The tokenizer.

    Raises:
        ValueError: not UTF-8, empty lines, no ``[UNK]``, or a repeated token.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{filename} is not UTF-8 text: {exc}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.rstrip("\r") for line in lines]
    for i, line in enumerate(lines):
        if not line.strip():
            raise ValueError(f"{filename}: line {i + 1} is empty; vocab.txt holds one token per line")
    specials = [t for t in lines if _BRACKETED.fullmatch(t)]
    if "[UNK]" not in specials:
        raise ValueError(f"{filename} has no [UNK] token: not a BERT-style vocab.txt")
    lowercase = not any(ch.isupper() for t in lines if t not in specials for ch in t)
    try:
        return WordPieceTokenizer(lines, specials, lowercase=lowercase, name=filename)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None


def wordpiece_to_hf_json(tok: WordPieceTokenizer) -> str:
    """Export a WordPiece tokenizer as a Hugging Face ``tokenizer.json``.

    A ``WordPiece`` model (same vocab, unknown token, prefix and maximum word
    length), a ``Lowercase`` normalizer when the tokenizer lower-cases, the
    ``BertPreTokenizer``, the special tokens as added special tokens, and a
    ``WordPiece`` decoder without cleanup.  ``tokenizers`` gives the same ids.

    Args:
        tok: the tokenizer (its current view).

    Returns:
        The JSON text.

    Raises:
        ValueError: a piece has the same string as a special token (the file's
            vocab is keyed by string and cannot hold both).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab: dict[str, int] = {}
    for i in range(tok.vocab_size):
        t = tok.id_to_token(i)
        if t in vocab:
            raise ValueError(
                f"token string {t!r} appears under ids {vocab[t]} and {i}; tokenizer.json cannot hold both"
            )
        vocab[t] = i
    model = models.WordPiece(
        vocab=vocab,
        unk_token=tok.unk_token,
        continuing_subword_prefix=tok.continuing_subword_prefix,
        max_input_chars_per_word=tok.max_input_chars_per_word,
    )
    hf = Tokenizer(model)
    if tok.lowercase:
        hf.normalizer = normalizers.Lowercase()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece(prefix=tok.continuing_subword_prefix, cleanup=False)
    hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in tok.special_tokens])
    return hf.to_str(pretty=True)


def _wordpiece_from_hf(obj: dict, filename: str) -> WordPieceTokenizer:
    model = obj["model"]
    try:
        by_id = {int(i): str(s) for s, i in model["vocab"].items()}
        unk = str(model.get("unk_token", "[UNK]"))
        prefix = str(model.get("continuing_subword_prefix", "##"))
        max_chars = int(model.get("max_input_chars_per_word", 100))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{filename}: malformed WordPiece model section: {exc!r}") from None
    if sorted(by_id) != list(range(len(by_id))):
        raise ValueError(f"{filename}: the WordPiece vocab ids are not 0..{len(by_id) - 1} without gaps")
    lowercase = False
    norm = obj.get("normalizer")
    if norm:
        kinds = [n.get("type") for n in (norm.get("normalizers", [norm]) if norm.get("type") == "Sequence" else [norm])]
        if kinds != ["Lowercase"]:
            raise ValueError(
                f"{filename}: normalizer {kinds} is not supported (only none or Lowercase); "
                "BERT's full normalizer also strips accents and spaces out Chinese characters"
            )
        lowercase = True
    pre = (obj.get("pre_tokenizer") or {}).get("type")
    if pre not in ("BertPreTokenizer", None):
        raise ValueError(f"{filename}: pre-tokenizer {pre} is not supported (WordPiece here is BERT-style)")
    specials = [t["content"] for t in sorted(obj.get("added_tokens") or [], key=lambda t: t["id"]) if t.get("special")]
    if unk not in specials and unk in by_id.values():
        specials.append(unk)
    try:
        return WordPieceTokenizer(
            [by_id[i] for i in range(len(by_id))],
            specials,
            unk_token=unk,
            continuing_subword_prefix=prefix,
            lowercase=lowercase,
            max_input_chars_per_word=max_chars,
            name=filename,
        )
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{filename}: {exc}") from None
