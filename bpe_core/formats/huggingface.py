"""Hugging Face ``tokenizer.json``: byte-level BPE and WordPiece, written and read.

Written files give the same ids in Hugging Face ``tokenizers`` as here
(:func:`bpe_to_hf_json`, :func:`wordpiece_to_hf_json`); reading takes a
``BPE`` model with GPT-2's byte alphabet or a BERT-style ``WordPiece`` model.
"""

from __future__ import annotations

from functools import cache

import regex

from ..bpe.model import BPETokenizer
from ..persistence import json_field, json_int
from ..pretokenize import PATTERNS, resolve_pattern
from ..wordpiece.model import WordPieceTokenizer
from .tiktoken import covering_pattern

__all__ = [
    "bpe_from_hf_json",
    "bpe_to_hf_json",
    "byte_to_unicode",
    "onig_pattern",
    "pattern_name_of",
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


def _added_tokens(obj: dict) -> list[dict]:
    """The ``added_tokens`` section, each entry checked: ``content`` a string, ``id`` a whole number."""
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
        json_field(t.get("special", False), bool, f'"added_tokens"[{k}].special', "true or false")
    return added


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
    model = json_field(obj.get("model"), dict, '"model"', "an object")
    if model.get("type") != "BPE":
        raise ValueError(f"a Hugging Face {model.get('type')} model is not a byte-level BPE")
    raw_vocab = json_field(model.get("vocab"), dict, '"model.vocab"', 'an object {"token": id}')
    raw_merges = json_field(model.get("merges"), list, '"model.merges"', 'a list of "left right" strings')
    added = _added_tokens(obj)
    specials: dict[str, int] = {}
    for t in added:
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
        json_int(i, f'"model.vocab"[{s!r}]')
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
    model = json_field(obj.get("model"), dict, '"model"', "an object")
    raw_vocab = json_field(model.get("vocab"), dict, '"model.vocab"', 'an object {"token": id}')
    by_id: dict[int, str] = {}
    for s, i in raw_vocab.items():
        json_int(i, f'"model.vocab"[{s!r}]')
        if i in by_id:
            raise ValueError(f'"model.vocab": id {i} is given to both {by_id[i]!r} and {s!r}')
        by_id[i] = s
    if sorted(by_id) != list(range(len(by_id))):
        raise ValueError(f"the WordPiece vocab ids are not 0..{len(by_id) - 1} without gaps")
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
    added = [t for t in sorted(_added_tokens(obj), key=lambda t: t["id"]) if t.get("special")]
    for t in added:
        if raw_vocab.get(t["content"]) != t["id"]:
            raise ValueError(
                f'special token {t["content"]!r} has id {t["id"]} in "added_tokens" but '
                f'{raw_vocab.get(t["content"])} in "model.vocab"; they must agree'
            )
    specials = [t["content"] for t in added]
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
