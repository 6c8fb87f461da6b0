"""BPE Playground engine: byte-level BPE and WordPiece, written from scratch.

Pure Python (plus the ``regex`` module); nothing here imports Streamlit.
Public entry points:

* :func:`train_bpe` / :class:`BPETokenizer` -- byte-level BPE (``bpe.py``)
* :func:`train_wordpiece` / :class:`WordPieceTokenizer` -- WordPiece (``wordpiece.py``)
* :func:`pretokenize` and the named split patterns (``pretokenize.py``)
* :class:`Tokenizer`, :class:`TrainedTokenizer`, :class:`TrainingSpec` and the
  algorithm registry -- the declared interface (``interface.py``)
* :class:`TokenSpan` -- how a tokenizer cut a text (``spans.py``)
* :func:`load_reference` / :class:`ReferenceTokenizer` -- GPT-2, cl100k, o200k (``reference.py``)
"""

from .bpe import BPETokenizer, MergeStep, TrainingInfo, train_bpe, train_bpe_from_counts
from .interface import (
    ALGORITHMS,
    Algorithm,
    Tokenizer,
    TrainedTokenizer,
    TrainingCancelled,
    TrainingSpec,
    algorithm_names,
    get_algorithm,
    register_algorithm,
)
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .reference import EncodingUnavailable, ReferenceTokenizer, load_reference
from .spans import TokenSpan, display_bytes
from .wordpiece import WordPieceMerge, WordPieceTokenizer, train_wordpiece

# isort: split
from . import unigram  # noqa: F401  (registers "unigram" after bpe and wordpiece, in the sidebar's order)

__all__ = [
    "ALGORITHMS",
    "PATTERNS",
    "PATTERN_LABELS",
    "Algorithm",
    "BPETokenizer",
    "EncodingUnavailable",
    "MergeStep",
    "PreToken",
    "ReferenceTokenizer",
    "TokenSpan",
    "Tokenizer",
    "TrainedTokenizer",
    "TrainingCancelled",
    "TrainingInfo",
    "TrainingSpec",
    "WordPieceMerge",
    "WordPieceTokenizer",
    "algorithm_names",
    "count_pretokens",
    "display_bytes",
    "get_algorithm",
    "load_reference",
    "pretokenize",
    "register_algorithm",
    "split_special",
    "train_bpe",
    "train_bpe_from_counts",
    "train_wordpiece",
]
