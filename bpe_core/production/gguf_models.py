"""Tokenizers built from llama.cpp's GGUF vocabularies, one builder per ``tokenizer.ggml.model``.

* ``gpt2`` (byte-level BPE): :func:`byte_bpe_from_gguf`, with the pre-tokenizer
  llama.cpp runs for the file's ``tokenizer.ggml.pre`` (:data:`PRE_SPLITS`,
  from ``llm_tokenizer_bpe``'s constructor in ``src/llama-vocab.cpp``);
* ``bert`` (WordPiece): :func:`bpe_core.production.bert.bert_from_gguf`;
* ``t5`` (Unigram, SentencePiece's charsmap): :func:`bpe_core.production.unigram_model.unigram_from_gguf`;
* ``gemma4`` (SentencePiece-style BPE over characters, byte fallback):
  :func:`bpe_core.production.char_bpe.char_bpe_from_gguf`.

Added tokens: ``CONTROL`` and ``USER_DEFINED`` tokens are matched in the raw
text, longest first, as Hugging Face ``tokenizers`` matches added tokens (the
library the ``.out`` files' ids come from).
"""

from __future__ import annotations

from ..pretokenize import GPT2_PATTERN
from .byte_bpe import ByteLevelBPE, SplitSequence, hf_token_bytes, parse_merge
from .encodings import LLAMA3_PATTERN, QWEN2_PATTERN, QWEN35_PATTERN
from .gguf_vocab import CONTROL, NORMAL, USER_DEFINED, GGUFVocab

__all__ = ["PRE_SPLITS", "byte_bpe_from_gguf"]

_GPT2_LLAMA = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
"""GPT-2's pattern as llama.cpp lists it (without the last ``|\\s+``: in a split sequence the stretch it would
match is a piece anyway)."""

_CJK_HANGUL = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
"""DeepSeek LLM / Coder's CJK-and-Hangul run (llama.cpp's list; written with escapes, as in its source)."""

_DEEPSEEK_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"

_DEEPSEEK_LETTERS = (
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
    "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
    "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102"
    "\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
    "\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
    "\U0001e900-\U0001e943]+"
)
"""DeepSeek LLM's letter run (llama.cpp's list: the cased letters of Unicode, written with escapes)."""

PRE_SPLITS: dict[str, tuple[tuple[str, ...], bool]] = {
    "gpt-2": ((GPT2_PATTERN,), False),
    "mpt": ((GPT2_PATTERN,), False),
    "llama-bpe": ((LLAMA3_PATTERN,), True),
    "qwen2": ((QWEN2_PATTERN,), False),
    "qwen35": ((QWEN35_PATTERN,), False),
    "starcoder": ((r"\p{N}", GPT2_PATTERN), False),
    "refact": ((r"\p{N}", GPT2_PATTERN), False),
    "command-r": ((r"\p{N}", GPT2_PATTERN), False),
    "falcon": ((r"[\p{P}\$\+<=>\^~\|`]+", _GPT2_LLAMA, "[0-9][0-9][0-9]"), False),
    "deepseek-coder": ((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_HANGUL, r"\p{N}"), False),
    "deepseek-llm": ((r"[\r\n]", _DEEPSEEK_LETTERS, _DEEPSEEK_PUNCT, r"\s+$", _CJK_HANGUL, r"\p{N}+"), False),
}
"""``tokenizer.ggml.pre`` -> (split patterns in order, ``ignore_merges``), as ``src/llama-vocab.cpp`` of
llama.cpp (in llama-cpp-python 0.3.36) sets them; the Hugging Face originals where llama.cpp notes them."""


def byte_bpe_from_gguf(vocab: GGUFVocab, name: str) -> ByteLevelBPE:
    """A :class:`~bpe_core.production.byte_bpe.ByteLevelBPE` from a ``gpt2``-type GGUF vocabulary.

    Ordinary tokens (``NORMAL``, and ``USER_DEFINED`` ones written in the byte
    alphabet) are read back to bytes; ``CONTROL`` and ``USER_DEFINED`` tokens
    are added tokens (matched in the text); merges keep their order.

    Raises:
        ValueError: not a ``gpt2`` model, or a pre-tokenizer not in :data:`PRE_SPLITS`.
    """
    if vocab.model != "gpt2":
        raise ValueError(f"{vocab.name}: tokenizer model {vocab.model!r} is not byte-level BPE ('gpt2')")
    if vocab.pre not in PRE_SPLITS:
        raise ValueError(f"{vocab.name}: pre-tokenizer {vocab.pre!r} is not one of {', '.join(PRE_SPLITS)}")
    patterns, ignore_merges = PRE_SPLITS[vocab.pre]
    by_bytes: dict[bytes, int] = {}
    added: dict[str, int] = {}
    for i, (text, kind) in enumerate(zip(vocab.tokens, vocab.token_types)):
        if kind in (NORMAL, USER_DEFINED):
            b = hf_token_bytes(text)
            if b is not None:
                by_bytes.setdefault(b, i)
        if kind in (CONTROL, USER_DEFINED):
            added.setdefault(text, i)
    merges = []
    for m in vocab.merges:
        left, right = parse_merge(m)
        merges.append((hf_token_bytes(left) or b"", hf_token_bytes(right) or b""))
    specials = [i for i, k in enumerate(vocab.token_types) if k == CONTROL]
    return ByteLevelBPE(
        name, by_bytes, merges, SplitSequence(patterns), added, special_ids=specials, ignore_merges=ignore_merges,
        source=vocab.source,
    )  # fmt: skip
