r"""Hugging Face ``tokenizer.json`` for Unigram: export a view, import a ``Unigram`` model.

The export writes what ``tokenizers.Tokenizer.from_str`` reads, encoding
exactly as this package does:

* ``model``: ``{"type": "Unigram", "unk_id", "vocab": [[piece, score], ...],
  "byte_fallback": false}`` with the view's ids and scores (special tokens
  included, with their scores, so that Hugging Face's ``min_score`` -- and so
  the unknown penalty -- is the same);
* ``added_tokens``: every special token (``<unk>`` included), ``special: true``,
  so they are split out of the text first, as here;
* no normaliser; the ``"sentencepiece"`` pattern as ``Metaspace`` (``▁``,
  ``prepend_scheme: "always"``, ``split: true``) for pre-tokenizer and decoder;
  any other pattern as a ``Split`` on its regex (``behavior: "Isolated"``) with
  a ``Fuse`` decoder.

Scores are written as JSON numbers in Python's shortest round-trip form, which
Rust parses back to the same ``f64``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .encoder import METASPACE, SENTENCEPIECE
from .model import UnigramTokenizer

__all__ = ["unigram_from_hf_json", "unigram_to_hf_json"]

_WHOLE = r"[\s\S]+"
"""The pattern of an imported file without a pre-tokenizer: each stretch between special tokens is one word."""


def _metaspace() -> dict:
    return {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True}


def unigram_to_hf_json(tok: UnigramTokenizer) -> str:
    """A Hugging Face ``tokenizer.json`` (as text) holding this view of ``tok``.

    Args:
        tok: a :class:`UnigramTokenizer` (the view at its ``vocab_size``).

    Returns:
        The JSON text; ``tokenizers.Tokenizer.from_str`` of it encodes every text
        to the same ids as ``tok.encode``.

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
        pre: dict[str, Any] = _metaspace()
        dec: dict[str, Any] = _metaspace()
    else:
        pre = {"type": "Split", "pattern": {"Regex": tok.pattern}, "behavior": "Isolated", "invert": False}
        dec = {"type": "Fuse"}
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
            "byte_fallback": False,
        },
    }
    return json.dumps(data, ensure_ascii=False)


def unigram_from_hf_json(obj: Mapping | str, *, name: str = "Unigram (imported)") -> UnigramTokenizer:
    """A :class:`UnigramTokenizer` from a Hugging Face ``tokenizer.json`` with a ``Unigram`` model.

    Accepted: no normaliser; a ``Metaspace`` pre-tokenizer with ``▁`` that
    prepends always and splits (SentencePiece-style words), a ``Split`` on a
    regex with ``Isolated`` behaviour, or none (each stretch between added
    tokens is one word).  Ids and scores are kept; every added token is a
    special token (split out first).  The result has one state (its whole
    vocabulary): ``min_vocab_size == max_vocab_size == vocab_size``.

    Args:
        obj: the parsed JSON (``dict``) or its text.
        name: display name.

    Raises:
        ValueError: not a Unigram ``tokenizer.json``, or something this
            package cannot reproduce exactly (a normaliser, byte fallback, no
            ``unk_id``, another pre-tokenizer, a repeated piece); the message
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
            raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(obj, Mapping) or not isinstance(obj.get("model"), Mapping):
        raise ValueError('not a Hugging Face tokenizer.json (no "model" object)')
    model = obj["model"]
    if model.get("type") != "Unigram":
        raise ValueError(f"the model is {model.get('type')!r}, not 'Unigram'")
    if model.get("byte_fallback"):
        raise ValueError("byte fallback is not supported for Unigram here (the file sets byte_fallback: true)")
    if obj.get("normalizer") is not None:
        kind = obj["normalizer"].get("type") if isinstance(obj["normalizer"], Mapping) else obj["normalizer"]
        raise ValueError(f"the file has a {kind!r} normalizer, which this package does not apply")
    try:
        vocab = [(str(p), float(s)) for p, s in model["vocab"]]
        unk_id = model.get("unk_id")
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"the Unigram model is malformed: {type(exc).__name__}: {exc}") from None
    if not isinstance(unk_id, int) or not 0 <= unk_id < len(vocab):
        raise ValueError(f"the Unigram model needs an unk_id inside the vocabulary, got {unk_id!r}")
    pattern = _pattern_of(obj.get("pre_tokenizer"))
    specials = []
    for t in obj.get("added_tokens") or []:
        tid, content = t.get("id"), t.get("content")
        if not isinstance(tid, int) or not 0 <= tid < len(vocab) or vocab[tid][0] != content:
            raise ValueError(f"added token {content!r} (id {tid!r}) is not the model's piece of that id")
        specials.append(content)
    unk = vocab[unk_id][0]
    if unk not in specials:
        specials.append(unk)
    pieces = [p for p, _ in vocab]
    scores = [s for _, s in vocab]
    return UnigramTokenizer.from_states(
        pieces, specials, unk, base=len(pieces), sizes=[len(pieces)], scores=[scores], name=name,
        pattern_name=pattern,
    )  # fmt: skip


def _pattern_of(pre: Any) -> str:
    if pre is None:
        return _WHOLE
    if not isinstance(pre, Mapping):
        raise ValueError("the pre_tokenizer is malformed")
    kind = pre.get("type")
    if kind == "Sequence" and len(pre.get("pretokenizers") or []) == 1:
        return _pattern_of(pre["pretokenizers"][0])
    if kind == "Metaspace":
        prepend = pre.get("prepend_scheme", "always" if pre.get("add_prefix_space", True) else "never")
        if pre.get("replacement") == METASPACE and prepend == "always" and pre.get("split", True):
            return SENTENCEPIECE
        raise ValueError("only Metaspace('▁', prepend_scheme='always', split=True) is supported")
    if kind == "Split" and pre.get("behavior") == "Isolated" and not pre.get("invert"):
        pat = pre.get("pattern") or {}
        if "Regex" in pat:
            return str(pat["Regex"])
    raise ValueError(f"the {kind!r} pre-tokenizer is not supported for Unigram here (Metaspace or a regex Split)")
