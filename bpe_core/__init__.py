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
from .io import MAX_UPLOAD_BYTES as MAX_UPLOAD_BYTES
from .io import bpe_to_hf_json as bpe_to_hf_json
from .io import bpe_to_tiktoken_files as bpe_to_tiktoken_files
from .io import decode_text_upload as decode_text_upload
from .io import load_tokenizer_bytes as load_tokenizer_bytes
from .io import wordpiece_to_hf_json as wordpiece_to_hf_json
from .io import wordpiece_to_vocab_txt as wordpiece_to_vocab_txt
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .reference import EncodingUnavailable, ReferenceTokenizer, load_reference
from .spans import TokenSpan, display_bytes
from .trace import CandidateRanking as CandidateRanking
from .trace import PieceSteps as PieceSteps
from .trace import TrainingReplay as TrainingReplay
from .trace import encode_steps as encode_steps
from .wordpiece import DEFAULT_SPECIAL_TOKENS as DEFAULT_SPECIAL_TOKENS
from .wordpiece import WordPieceMerge, WordPieceTokenizer, train_wordpiece
from .wordpiece_trace import GreedyStep as GreedyStep
from .wordpiece_trace import ScoreRanking as ScoreRanking
from .wordpiece_trace import TrainerView as TrainerView
from .wordpiece_trace import WordPieceReplay as WordPieceReplay

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
