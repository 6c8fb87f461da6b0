"""Hugging Face ``tokenizer.json``: byte-level BPE, WordPiece and Unigram, written and read.

Written files give the same ids in Hugging Face ``tokenizers`` as here
(:func:`bpe_to_hf_json`, :func:`wordpiece_to_hf_json`,
:func:`unigram_to_hf_json`); reading takes a ``BPE`` model with GPT-2's byte
alphabet, a BERT-style ``WordPiece`` model or a ``Unigram`` model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import regex

from ..bpe.model import MAX_ID_GAPS, BPETokenizer
from ..bpe.ranks import covering_pattern
from ..interface import TrainedTokenizer, get_algorithm
from ..persistence import json_bool, json_field, json_float, json_int, json_kind
from ..pretokenize import PATTERNS, resolve_pattern
from ..unigram.encoder import METASPACE, PREPEND_ALWAYS, PREPEND_FIRST, SENTENCEPIECE
from ..unigram.model import UnigramTokenizer
from ..wordpiece.model import WordPieceTokenizer

__all__ = [
    "HF_WRITERS",
    "bpe_from_hf_json",
    "bpe_to_hf_json",
    "byte_to_unicode",
    "check_hf_fields",
    "onig_pattern",
    "pattern_name_of",
    "to_hf_json",
    "unigram_from_hf_json",
    "unigram_to_hf_json",
    "wordpiece_from_hf_json",
    "wordpiece_to_hf_json",
]


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


def pattern_name_of(source: str) -> str:
    """A pattern name when ``source`` is one of the named patterns (or its Oniguruma form), else ``source``."""
    for name, src in PATTERNS.items():
        if source in (src, onig_pattern(src), covering_pattern(src)):
            return name
    return resolve_pattern(source)


_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")
"""The true/false fields of an ``added_tokens`` entry."""


def _added_tokens(obj: Mapping) -> list[dict]:
    """The ``added_tokens`` section, each entry checked: ``content`` a string, ``id`` a whole number, flags booleans."""
    added = obj.get("added_tokens")
    if added is None:
        return []
    json_field(added, list, '"added_tokens"', "a list of objects")
    for k, t in enumerate(added):
        json_field(t, dict, f'"added_tokens"[{k}]', 'an object {"id": ..., "content": ...}')
        if "id" not in t or "content" not in t:
            raise ValueError(f'"added_tokens"[{k}] needs both "id" and "content"')
        json_int(t["id"], f'"added_tokens"[{k}].id')
        json_field(t["content"], str, f'"added_tokens"[{k}].content', "a string")
        for flag in _FLAGS:
            json_bool(t.get(flag, False), f'"added_tokens"[{k}].{flag}')
    return added


_SECTIONS = ("normalizer", "pre_tokenizer", "post_processor", "decoder", "truncation", "padding")
"""The top-level sections of a ``tokenizer.json`` besides the model and the added tokens (each an object or null)."""

_STRING_FIELDS = ("type", "behavior", "prefix", "replacement", "prepend_scheme", "Regex", "String", "content",
                  "unk_token", "continuing_subword_prefix", "end_of_word_suffix")  # fmt: skip
_BOOL_FIELDS = ("add_prefix_space", "trim_offsets", "use_regex", "invert", "cleanup", "split", "lowercase",
                "clean_text", "handle_chinese_chars", "fuse_unk", "byte_fallback", "ignore_merges")  # fmt: skip
_FIELD_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    **dict.fromkeys(_STRING_FIELDS, ((str,), "a string")),
    **dict.fromkeys(_BOOL_FIELDS, ((bool,), "true or false")),
    "strip_accents": ((bool, type(None)), "true, false or null"),
    "type_id": ((int,), "a whole number"),
    "dropout": ((int, float, type(None)), "a number or null"),
}
"""The kind of each field Hugging Face's sections share (``tokenizers``' own serialisation), wherever it appears."""

_NULLABLE = {"unk_token", "continuing_subword_prefix", "end_of_word_suffix"}
"""Model fields a BPE model writes as null when unused."""


def _check_section(value: object, field: str) -> None:
    """Every field of ``_FIELD_KINDS`` inside a section (and the steps of a ``Sequence``) has its kind."""
    if isinstance(value, dict):
        for key, inner in value.items():
            kinds = _FIELD_KINDS.get(key)
            name = f'"{field.strip(chr(34))}.{key}"'
            if kinds is not None and not (key in _NULLABLE and inner is None):
                json_field(inner, kinds[0], name, kinds[1])
            if key == "dropout" and inner is not None and not 0 <= inner <= 1:
                raise ValueError(f"{name} must be between 0 and 1, got {inner}")
            if key != "vocab":
                _check_section(inner, name)
    elif isinstance(value, list):
        for k, inner in enumerate(value):
            _check_section(inner, f"{field}[{k}]")


def check_hf_fields(obj: Mapping) -> None:
    """Check the fields every ``tokenizer.json`` shares, whatever its model: the kind of each one, to the last.

    ``"version"`` a string; ``"added_tokens"`` a list of ``{"id": whole number, "content": string}``
    objects with true/false flags; each of ``normalizer``, ``pre_tokenizer``, ``post_processor``,
    ``decoder``, ``truncation``, ``padding`` an object or null, and inside them and the model every field
    ``tokenizers`` writes as a string, a boolean or a number (``"type"``, ``"add_prefix_space"``,
    ``"dropout"``...) of that kind.  The model's own tables are checked by each model's reader.

    Raises:
        ValueError: the first field of the wrong kind, named (``"pre_tokenizer.pretokenizers"[1].use_regex``).
    """
    version = obj.get("version")
    if version is not None:
        json_field(version, str, '"version"', "a string")
    _added_tokens(obj)
    for section in _SECTIONS:
        value = obj.get(section)
        if value is not None:
            _check_section(json_field(value, dict, f'"{section}"', "an object or null"), f'"{section}"')
    model = json_field(obj.get("model"), dict, '"model"', "an object")
    _check_section(model, '"model"')


def _sequence(section: object, field: str, key: str) -> list[dict]:
    """The steps of a pre-tokenizer or normalizer section (one step, or a ``Sequence`` of them), checked."""
    json_field(section, dict, field, "an object or null")
    if section.get("type") != "Sequence":
        return [section]
    name = f'"{field.strip(chr(34))}.{key}"'
    steps = json_field(section.get(key), list, name, "a list of objects")
    for k, step in enumerate(steps):
        json_field(step, dict, f"{name}[{k}]", "an object")
    return steps


def bpe_from_hf_json(obj: dict, filename: str) -> BPETokenizer:
    """A :class:`BPETokenizer` from a parsed Hugging Face ``tokenizer.json`` with a byte-level ``BPE`` model.

    The model vocab must be written in GPT-2's byte alphabet (:func:`byte_to_unicode`),
    except at the ids of added special tokens, whose spelling is the token's
    own text (as :func:`bpe_to_hf_json` and Hugging Face write them: a special
    token may hold a space, a tab or any character).

    Args:
        obj: the parsed JSON object.
        filename: used in messages.

    Raises:
        ValueError: not a byte-level BPE model, or a malformed section; the
            message names the file and the field.
    """
    try:
        return _bpe_from_hf_json(obj, filename)
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None


def _bpe_from_hf_json(obj: dict, filename: str) -> BPETokenizer:
    check_hf_fields(obj)
    model = obj["model"]
    if model.get("type") != "BPE":
        raise ValueError(f'"model.type" is {model.get("type")!r}: a Hugging Face {model.get("type")} model is not a '
                         "byte-level BPE")  # fmt: skip
    raw_vocab = json_field(model.get("vocab"), dict, '"model.vocab"', 'an object {"token": id}')
    raw_merges = json_field(model.get("merges"), list, '"model.merges"', 'a list of "left right" strings')
    added = _added_tokens(obj)
    top = len(raw_vocab) + len(added) + MAX_ID_GAPS - 1  # the ids a vocabulary may reach (check_tables)
    specials: dict[str, int] = {}
    for k, t in enumerate(added):
        json_int(t["id"], f'"added_tokens"[{k}].id', 0, top)
        if t.get("special"):
            if t["content"] in specials:
                raise ValueError(f'"added_tokens": special token {t["content"]!r} is listed twice')
            specials[t["content"]] = t["id"]
    special_ids = {i: s for s, i in specials.items()}
    inverse = {c: b for b, c in byte_to_unicode().items()}

    def to_bytes(s: str, field: str) -> bytes:
        try:
            return bytes(inverse[c] for c in s)
        except KeyError as exc:
            raise ValueError(
                f"{field} {s!r} is not a byte-level token (character {exc} is outside GPT-2's byte alphabet)"
            ) from None

    vocab: dict[int, bytes] = {}
    for s, i in raw_vocab.items():
        json_int(i, f'"model.vocab"[{s!r}]', 0, top)
        if i in vocab:
            raise ValueError(f'"model.vocab": id {i} is given to two tokens')
        if special_ids.get(i) == s:
            vocab[i] = s.encode("utf-8")  # a special token spelt as itself
            continue
        vocab[i] = to_bytes(s, '"model.vocab" token')
    merges = []
    for k, m in enumerate(raw_merges):
        parts = (
            m.split(" ") if isinstance(m, str) else json_field(m, list, f'"model.merges"[{k}]', "a string or a list")
        )
        if len(parts) != 2 or not all(isinstance(x, str) for x in parts):
            raise ValueError(f'"model.merges"[{k}] must be two tokens ("left right" or ["left", "right"]), got {m!r}')
        merges.append(tuple(to_bytes(x, f'"model.merges"[{k}]') for x in parts))
    for s, i in specials.items():
        vocab[i] = s.encode("utf-8")  # replaces the model-vocab spelling of the special token
    pattern = _hf_pattern(obj.get("pre_tokenizer"))
    try:
        return BPETokenizer(vocab, merges, specials, pattern, name=filename)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def _hf_pattern(pre: object) -> str:
    """The split pattern of a Hugging Face pre-tokenizer section (GPT-2's for a plain ByteLevel)."""
    if not pre:
        return "gpt2"
    for k, step in enumerate(_sequence(pre, '"pre_tokenizer"', "pretokenizers")):
        if step.get("type") == "Split":
            pattern = json_field(step.get("pattern"), dict, f'"pre_tokenizer" step {k} "pattern"', "an object")
            if "Regex" in pattern:
                return pattern_name_of(json_field(pattern["Regex"], str, '"pattern.Regex"', "a regex string"))
    return "gpt2"


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


def wordpiece_from_hf_json(obj: dict, filename: str) -> WordPieceTokenizer:
    """A :class:`WordPieceTokenizer` from a parsed Hugging Face ``tokenizer.json`` with a ``WordPiece`` model.

    Args:
        obj: the parsed JSON object.
        filename: used in messages.

    Raises:
        ValueError: an unsupported normalizer or pre-tokenizer, or a malformed
            model section (the message names the file).
    """
    try:
        return _wordpiece_from_hf_json(obj, filename)
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None


def _wordpiece_from_hf_json(obj: dict, filename: str) -> WordPieceTokenizer:
    check_hf_fields(obj)
    model = obj["model"]
    raw_vocab = json_field(model.get("vocab"), dict, '"model.vocab"', 'an object {"token": id}')
    by_id: dict[int, str] = {}
    for s, i in raw_vocab.items():
        json_int(i, f'"model.vocab"[{s!r}]', 0, len(raw_vocab) - 1)  # the ids number the tokens from 0
        if i in by_id:
            raise ValueError(f'"model.vocab": id {i} is given to both {by_id[i]!r} and {s!r}')
        by_id[i] = s
    unk = json_field(model.get("unk_token", "[UNK]"), str, '"model.unk_token"', "a string")
    prefix = json_field(
        model.get("continuing_subword_prefix", "##"), str, '"model.continuing_subword_prefix"', "a string"
    )
    max_chars = json_int(model.get("max_input_chars_per_word", 100), '"model.max_input_chars_per_word"', 1)
    lowercase = False
    norm = obj.get("normalizer")
    if norm:
        kinds = [n.get("type") for n in _sequence(norm, '"normalizer"', "normalizers")]
        if kinds != ["Lowercase"]:
            raise ValueError(
                f"normalizer {kinds} is not supported (only none or Lowercase); "
                "BERT's full normalizer also strips accents and spaces out Chinese characters"
            )
        lowercase = True
    pre = obj.get("pre_tokenizer")
    kind = json_field(pre, dict, '"pre_tokenizer"', "an object or null").get("type") if pre else None
    if kind not in ("BertPreTokenizer", None):
        raise ValueError(f"pre-tokenizer {kind} is not supported (WordPiece here is BERT-style)")
    for k, t in enumerate(_added_tokens(obj)):
        if t.get("special") and raw_vocab.get(t["content"]) != t["id"]:
            raise ValueError(
                f'"added_tokens"[{k}].id is {t["id"]} for {t["content"]!r}, which has the id '
                f'{raw_vocab.get(t["content"])} in "model.vocab"; they must agree'
            )
    specials = [t["content"] for t in sorted(_added_tokens(obj), key=lambda t: t["id"]) if t.get("special")]
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
    except TypeError as exc:
        raise ValueError(str(exc)) from None


# ---------------------------------------------------------------------------
# Unigram

_UNIGRAM_WHOLE = r"[\s\S]+"
"""The pattern of an imported file without a pre-tokenizer: each stretch between special tokens is one word."""


def _unigram_metaspace(prepend: str) -> dict:
    return {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": prepend, "split": True}


def unigram_to_hf_json(tok: UnigramTokenizer) -> str:
    """A Hugging Face ``tokenizer.json`` (as text) holding this view of ``tok``.

    The export writes what ``tokenizers.Tokenizer.from_str`` reads, encoding
    exactly as this package does:

    * ``model``: ``{"type": "Unigram", "unk_id", "vocab": [[piece, score], ...],
      "byte_fallback"}`` with the view's ids and scores (special tokens
      included, with their scores, so that Hugging Face's ``min_score`` -- and so
      the unknown penalty -- is the same);
    * ``added_tokens``: every special token (``<unk>`` included), ``special: true``,
      so they are split out of the text first, as here;
    * no normaliser; the ``"sentencepiece"`` pattern as ``Metaspace`` (``▁``,
      ``prepend_scheme: "first"`` -- or ``"always"`` for a tokenizer imported
      with it --, ``split: true``) for pre-tokenizer and decoder;
      any other pattern as a ``Split`` on its regex (``behavior: "Isolated"``) with
      a ``Fuse`` decoder.

    Scores are written as JSON numbers in Python's shortest round-trip form, which
    Rust parses back to the same ``f64``.

    Hugging Face's ``prepend_scheme: "first"`` puts no ``▁`` in front of a
    text that starts with a space, where this package (as SentencePiece) puts
    one: such a text encodes to one ``▁`` token more here.  Decoding in Hugging
    Face writes the unknown token as ``<unk>`` (here ``⁇``, see
    :meth:`UnigramTokenizer.decode`).

    Args:
        tok: a :class:`UnigramTokenizer` (the view at its ``vocab_size``).

    Returns:
        The JSON text; ``tokenizers.Tokenizer.from_str`` of it encodes every text
        to the same ids as ``tok.encode``, except texts that start with a space (above).

    >>> tok = UnigramTokenizer.from_pieces([("▁a", -1.0), ("a", -2.0), ("▁", -2.0)])
    >>> data = json.loads(unigram_to_hf_json(tok))
    >>> data["model"]["type"], data["model"]["vocab"][:2], data["pre_tokenizer"]["type"]
    ('Unigram', [['<unk>', 0.0], ['▁a', -1.0]], 'Metaspace')
    """
    if not isinstance(tok, UnigramTokenizer):
        raise TypeError(f"expected a UnigramTokenizer, got {type(tok).__name__}")
    n = tok.vocab_size
    pieces = tok.pieces[:n]
    scores = tok.scores
    if tok.pattern_name == SENTENCEPIECE:
        pre: dict[str, Any] = _unigram_metaspace(tok.prepend)
        dec: dict[str, Any] = _unigram_metaspace(tok.prepend)
    else:
        pre = {"type": "Split", "pattern": {"Regex": tok.pattern}, "behavior": "Isolated", "invert": False}
        dec = {"type": "Fuse"}
    if tok.byte_fallback:  # byte pieces back to bytes, then as before
        dec = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, dec]}
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for s, i in tok.special_tokens.items()
        ],
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": dec,
        "model": {
            "type": "Unigram",
            "unk_id": tok.unknown_id,
            "vocab": [[p, s] for p, s in zip(pieces, scores)],
            "byte_fallback": tok.byte_fallback,
        },
    }
    return json.dumps(data, ensure_ascii=False)


def unigram_from_hf_json(obj: Mapping | str, filename: str = "Unigram (imported)") -> UnigramTokenizer:
    """A :class:`UnigramTokenizer` from a Hugging Face ``tokenizer.json`` with a ``Unigram`` model.

    Accepted: no normaliser; a ``Metaspace`` pre-tokenizer with ``▁`` that
    splits and prepends ``"first"`` or ``"always"`` (SentencePiece-style words;
    the scheme is kept), a ``Split`` on a
    regex with ``Isolated`` behaviour, or none (each stretch between added
    tokens is one word).  Ids and scores are kept; every added token is a
    special token (split out first).  The result has one state (its whole
    vocabulary): ``min_vocab_size == max_vocab_size == vocab_size``.

    Args:
        obj: the parsed JSON (``dict``) or its text.
        filename: the display name, and used in messages.

    Raises:
        ValueError: not a Unigram ``tokenizer.json``, or something this
            package cannot reproduce exactly (a normaliser, byte fallback without
            the 256 byte pieces, no ``unk_id``, another pre-tokenizer, a repeated piece); the message
            names it.

    >>> tok = UnigramTokenizer.from_pieces([("▁a", -1.0), ("a", -2.0), ("▁", -2.0)])
    >>> back = unigram_from_hf_json(unigram_to_hf_json(tok))
    >>> back.encode("a aa") == tok.encode("a aa"), back.unknown_id
    (True, 0)
    """
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{filename} is not valid JSON: {exc}") from None
    if not isinstance(obj, Mapping) or not isinstance(obj.get("model"), Mapping):
        raise ValueError(f'{filename}: not a Hugging Face tokenizer.json (no "model" object)')
    try:
        check_hf_fields(obj)
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None
    model = obj["model"]
    if model.get("type") != "Unigram":
        raise ValueError(f"{filename}: \"model.type\" is {model.get('type')!r}, not 'Unigram'")
    if obj.get("normalizer") is not None:
        kind = obj["normalizer"].get("type") if isinstance(obj["normalizer"], Mapping) else obj["normalizer"]
        raise ValueError(f"{filename}: the file has a {kind!r} normalizer, which this package does not apply")
    try:
        vocab = _unigram_vocab(model.get("vocab"))
        if model.get("unk_id") is None:
            raise ValueError('"model.unk_id" is missing: the Unigram model needs an unknown piece')
        unk_id = json_int(model["unk_id"], '"model.unk_id"', 0, len(vocab) - 1)
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None
    try:
        pattern, prepend = _unigram_pattern(obj.get("pre_tokenizer"))
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None
    specials = []
    for k, t in enumerate(obj.get("added_tokens") or []):  # checked by check_hf_fields: ids whole, contents strings
        tid, content = t["id"], t["content"]
        if not tid < len(vocab) or vocab[tid][0] != content:
            raise ValueError(
                f'{filename}: "added_tokens"[{k}].id is {tid} for {content!r}, which is not the model\'s piece of '
                "that id"
            )
        specials.append(content)
    unk = vocab[unk_id][0]
    if unk not in specials:
        specials.append(unk)
    pieces = [p for p, _ in vocab]
    scores = [s for _, s in vocab]
    try:
        return UnigramTokenizer.from_states(
            pieces, specials, unk, base=len(pieces), sizes=[len(pieces)], scores=[scores], name=filename,
            pattern_name=pattern, byte_fallback=model.get("byte_fallback", False), prepend=prepend,
        )  # fmt: skip
    except ValueError as exc:
        raise ValueError(f"{filename}: {exc}") from None


def _unigram_vocab(vocab: Any) -> list[tuple[str, float]]:
    """``model.vocab`` of a Unigram ``tokenizer.json``: ``[[piece, score], ...]``, every field checked.

    Raises:
        ValueError: not a non-empty list of ``[string, finite number]`` pairs; the message names the entry.
    """
    json_field(vocab, list, '"model.vocab"', "a list of [piece, score] pairs")
    if not vocab:
        raise ValueError('"model.vocab" is empty')
    out = []
    for k, entry in enumerate(vocab):
        where = f'"model.vocab"[{k}]'
        if not isinstance(entry, list) or len(entry) != 2:
            got = f"a list of {len(entry)}" if isinstance(entry, list) else json_kind(entry)
            raise ValueError(f"{where} must be a [piece, score] pair, got {got}")
        piece = json_field(entry[0], str, f"{where}[0]", "a string (the piece)")
        out.append((piece, json_float(entry[1], f"{where}[1]")))
    return out


def _unigram_pattern(pre: Any) -> tuple[str, str]:
    """``(pattern name or regex, Metaspace prepend scheme)`` of an imported pre-tokenizer."""
    if pre is None:
        return _UNIGRAM_WHOLE, PREPEND_FIRST
    if not isinstance(pre, Mapping):
        raise ValueError("the pre_tokenizer is malformed")
    kind = pre.get("type")
    if kind == "Sequence" and len(pre.get("pretokenizers") or []) == 1:
        return _unigram_pattern(pre["pretokenizers"][0])
    if kind == "Metaspace":
        prepend = pre.get("prepend_scheme", "always" if pre.get("add_prefix_space", True) else "never")
        splits = pre.get("split", True)
        if pre.get("replacement") == METASPACE and prepend in (PREPEND_FIRST, PREPEND_ALWAYS) and splits:
            return SENTENCEPIECE, prepend
        raise ValueError("only Metaspace('▁', prepend_scheme='first' or 'always', split=True) is supported")
    if kind == "Split" and pre.get("behavior") == "Isolated" and not pre.get("invert"):
        pat = pre.get("pattern") or {}
        if "Regex" in pat:
            return str(pat["Regex"]), PREPEND_FIRST
    raise ValueError(f"the {kind!r} pre-tokenizer is not supported for Unigram here (Metaspace or a regex Split)")


HF_WRITERS = {"BPE": bpe_to_hf_json, "WordPiece": wordpiece_to_hf_json, "Unigram": unigram_to_hf_json}
"""A ``tokenizer.json``'s model type -> the writer of a tokenizer of that type (the format's own names)."""


def to_hf_json(tok: TrainedTokenizer) -> str:
    """A trained tokenizer as a Hugging Face ``tokenizer.json``, by its algorithm's model type there.

    The type is the algorithm's registration's :attr:`~bpe_core.interface.Algorithm.hf_model`.

    Raises:
        ValueError: its algorithm has no ``tokenizer.json`` form.

    >>> from bpe_core.wordpiece import train_wordpiece
    >>> json.loads(to_hf_json(train_wordpiece("hug hugs", 8, ["[UNK]"])))["model"]["type"]
    'WordPiece'
    """
    writer = HF_WRITERS.get(get_algorithm(tok.algorithm).hf_model)
    if writer is None:
        raise ValueError(f"{tok.name} has no Hugging Face tokenizer.json form")
    return writer(tok)
