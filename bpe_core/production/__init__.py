"""Production tokenizers: the ones shipped with real models, loaded offline from sha256-verified files.

* :mod:`~bpe_core.production.registry` -- every production tokenizer by
  family, one registration each (:func:`load_production`,
  :func:`production_families`);
* :mod:`~bpe_core.production.encodings` -- tokenizers in tiktoken form
  (GPT-2, cl100k, o200k, Llama 3 and 4, Mistral Tekken): where each file
  comes from, how it is verified, and :class:`TiktokenTokenizer`, the one
  interface over them;
* :mod:`~bpe_core.production.sentencepiece_model` -- SentencePiece BPE models
  with byte fallback (Mistral v1).

The pre-tokenizer that cuts text exactly as tiktoken does lives with the
other split patterns, in :mod:`bpe_core.pretokenize.tiktoken_compat`.

>>> from bpe_core.production import load_production
>>> load_production("gpt2").encode("Hello world")
[15496, 995]
"""

from .encodings import EncodingChecksumError, EncodingUnavailable, TiktokenTokenizer, load_encoding
from .registry import (
    DEFAULT_PRODUCTION,
    FAMILIES,
    PRODUCTION,
    ProductionSpec,
    byte_level_production_keys,
    load_production,
    production_families,
    production_keys_of,
    production_mergeable_ranks,
    production_spec,
    production_token_ids,
    register_production,
    register_tiktoken_encoding,
)

__all__ = [
    "DEFAULT_PRODUCTION",
    "FAMILIES",
    "PRODUCTION",
    "EncodingChecksumError",
    "EncodingUnavailable",
    "ProductionSpec",
    "TiktokenTokenizer",
    "byte_level_production_keys",
    "load_encoding",
    "load_production",
    "production_families",
    "production_keys_of",
    "production_mergeable_ranks",
    "production_spec",
    "production_token_ids",
    "register_production",
    "register_tiktoken_encoding",
]
