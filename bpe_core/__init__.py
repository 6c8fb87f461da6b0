"""BPE Playground engine: byte-level BPE and WordPiece, written from scratch.

Pure Python (plus the ``regex`` module); nothing here imports Streamlit.
Public entry points:

* :func:`train_bpe` / :class:`BPETokenizer` -- byte-level BPE (``bpe.py``)
* :func:`train_wordpiece` / :class:`WordPieceTokenizer` -- WordPiece (``wordpiece.py``)
* :func:`pretokenize` and the named split patterns (``pretokenize.py``)
* :class:`TokenSpan` -- how a tokenizer cut a text (``spans.py``)
* :func:`load_reference` / :class:`ReferenceTokenizer` -- GPT-2, cl100k, o200k (``reference.py``)
"""

from .bpe import BPETokenizer, MergeStep, TrainingCancelled, TrainingInfo, train_bpe, train_bpe_from_counts
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .reference import EncodingUnavailable, ReferenceTokenizer, load_reference
from .spans import Tokenizer, TokenSpan, display_bytes
from .wordpiece import WordPieceMerge, WordPieceTokenizer, train_wordpiece

__all__ = [
    "PATTERNS",
    "PATTERN_LABELS",
    "BPETokenizer",
    "EncodingUnavailable",
    "MergeStep",
    "PreToken",
    "ReferenceTokenizer",
    "TokenSpan",
    "Tokenizer",
    "TrainingCancelled",
    "TrainingInfo",
    "WordPieceMerge",
    "WordPieceTokenizer",
    "count_pretokens",
    "display_bytes",
    "load_reference",
    "pretokenize",
    "split_special",
    "train_bpe",
    "train_bpe_from_counts",
    "train_wordpiece",
]
