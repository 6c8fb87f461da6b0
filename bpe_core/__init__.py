"""BPE Playground engine: byte-level BPE and WordPiece, written from scratch.

Pure Python (plus the ``regex`` module); nothing here imports Streamlit.
Public entry points:

* :func:`train_bpe` / :class:`BPETokenizer` -- byte-level BPE (``bpe.py``)
* :func:`train_wordpiece` / :class:`WordPieceTokenizer` -- WordPiece (``wordpiece.py``)
* :func:`pretokenize` and the named split patterns (``pretokenize.py``)
* :class:`TokenSpan` -- how a tokenizer cut a text (``spans.py``)
"""

from .bpe import BPETokenizer, MergeStep, TrainingCancelled, TrainingInfo, train_bpe, train_bpe_from_counts
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .spans import Tokenizer, TokenSpan, display_bytes
from .wordpiece import WordPieceMerge, WordPieceTokenizer, train_wordpiece

__all__ = [
    "PATTERNS",
    "PATTERN_LABELS",
    "BPETokenizer",
    "MergeStep",
    "PreToken",
    "TokenSpan",
    "Tokenizer",
    "TrainingCancelled",
    "TrainingInfo",
    "WordPieceMerge",
    "WordPieceTokenizer",
    "count_pretokens",
    "display_bytes",
    "pretokenize",
    "split_special",
    "train_bpe",
    "train_bpe_from_counts",
    "train_wordpiece",
]
