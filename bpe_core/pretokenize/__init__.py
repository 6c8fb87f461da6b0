r"""Pre-tokenization: split patterns, special tokens, pre-tokens, and cuts that keep tokens unchanged.

Pre-tokenization cuts text into pieces ("pre-tokens") before any merge is
learned or applied; merges never cross a pre-token boundary.  Everything here
works on ``str`` and reports positions in characters (Python code points).

The package, in reading order:

* :mod:`~bpe_core.pretokenize.normalize` -- normalization, the step before: BERT's clean-up,
  accents and case (:func:`bert_normalize`);
* :mod:`~bpe_core.pretokenize.patterns` -- the named patterns and how a pattern is checked;
* :mod:`~bpe_core.pretokenize.special` -- special tokens, cut out first;
* :mod:`~bpe_core.pretokenize.split` -- :func:`pretokenize` and :func:`count_pretokens`;
* :mod:`~bpe_core.pretokenize.boundaries` -- cutting long texts where no token changes;
* :mod:`~bpe_core.pretokenize.tiktoken_compat` -- the rewriting that makes a pattern split
  exactly as tiktoken's regex engine does, whatever the Unicode versions.

>>> [p.text for p in pretokenize("Hello's World123 !! ")]
['Hello', "'s", ' World', '123', ' !!', ' ']
"""

from .boundaries import Split, aligned_chunks, pretoken_prefix, shared_pretoken_prefix, tokenizer_split
from .normalize import bert_normalize
from .patterns import (
    BERT_PATTERN,
    CL100K_PATTERN,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    LINES_PATTERN,
    O200K_PATTERN,
    PATTERN_LABELS,
    PATTERNS,
    PROBE_SECONDS,
    SENTENCEPIECE_PATTERN,
    TIKTOKEN_SOURCES,
    compile_pattern,
    exact_for,
    pattern_budget,
    register_tiktoken_pattern,
    resolve_pattern,
    splits_at_spaces,
)
from .special import split_special, validate_special_tokens
from .split import (
    SURROGATE,
    PreToken,
    check_word_count,
    count_pretokens,
    iter_pretoken_strings,
    pretokenize,
    surrogate_error,
    surrogate_message,
)

__all__ = [
    "BERT_PATTERN",
    "CL100K_PATTERN",
    "GPT2_ORIGINAL_PATTERN",
    "GPT2_PATTERN",
    "LINES_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "PATTERN_LABELS",
    "PROBE_SECONDS",
    "SENTENCEPIECE_PATTERN",
    "SURROGATE",
    "TIKTOKEN_SOURCES",
    "PreToken",
    "Split",
    "aligned_chunks",
    "bert_normalize",
    "check_word_count",
    "compile_pattern",
    "count_pretokens",
    "exact_for",
    "iter_pretoken_strings",
    "pattern_budget",
    "pretoken_prefix",
    "pretokenize",
    "register_tiktoken_pattern",
    "resolve_pattern",
    "shared_pretoken_prefix",
    "split_special",
    "splits_at_spaces",
    "surrogate_error",
    "surrogate_message",
    "tokenizer_split",
    "validate_special_tokens",
]
