"""BPE Playground engine: byte-level BPE, WordPiece and Unigram, written from scratch.

Pure Python (plus ``regex`` and ``numpy``, and compiled kernels for large
trainings); nothing here imports Streamlit.  Read it top-down:

* :mod:`bpe_core.textbook` -- **start here**: the three algorithms as short
  readable modules (BPE, WordPiece, Unigram), real tokenizers behind the same
  interface, and the tests' oracle: every fast path below names the textbook
  function it must equal, and a test checks that it does
* :mod:`bpe_core.interface` -- the declared :class:`Tokenizer` and
  :class:`TrainedTokenizer` protocols, :class:`TrainingSpec`, the algorithm
  registry (:data:`ALGORITHMS`), :class:`TrainingCancelled`, :class:`TrainingInfo`
* :mod:`bpe_core.bpe` -- byte-level BPE, fast: model, trainer, encoder, trace
  (:func:`train_bpe`, :class:`BPETokenizer`); equals :mod:`bpe_core.textbook.bpe`
* :mod:`bpe_core.wordpiece` -- WordPiece, fast: model, words, trainer, encoder, trace
  (:func:`train_wordpiece`, :class:`WordPieceTokenizer`); equals :mod:`bpe_core.textbook.wordpiece`
* :mod:`bpe_core.unigram` -- Unigram, fast: model, trainer (EM and pruning), Viterbi
  encoder, pruning trace and lattices (:func:`~bpe_core.unigram.train_unigram`);
  its Viterbi, EM step, loss and pruning costs equal :mod:`bpe_core.textbook.unigram`'s
* :mod:`bpe_core.pretokenize`, :mod:`bpe_core.counting.stream` -- split patterns,
  special tokens, streamed/parallel pre-token counting
* :mod:`bpe_core.production.encodings` -- GPT-2, cl100k, o200k (:func:`load_encoding`)
* :mod:`bpe_core.formats` -- tiktoken, Hugging Face ``tokenizer.json``, BERT
  ``vocab.txt``, uploads
* :mod:`bpe_core.spans`, :mod:`bpe_core.steps`, :mod:`bpe_core.analysis.metrics`,
  :mod:`bpe_core.analysis.insights` -- what the pages draw: token spans, step-by-step
  records, compression figures, genealogy and coverage

Importing this package registers every built-in algorithm.

>>> import bpe_core
>>> bpe_core.algorithm_names()
['bpe', 'wordpiece', 'unigram']
"""

from . import textbook
from .bpe import (
    BPETokenizer,
    CandidateRanking,
    MergeStep,
    TrainingReplay,
    train_bpe,
    train_bpe_from_counts,
)
from .formats.bert import wordpiece_to_vocab_txt
from .formats.huggingface import bpe_to_hf_json, unigram_from_hf_json, unigram_to_hf_json, wordpiece_to_hf_json
from .formats.tiktoken import bpe_to_tiktoken_files
from .formats.upload import MAX_UPLOAD_BYTES, decode_text_upload, load_tokenizer_bytes
from .interface import (
    ALGORITHMS,
    Algorithm,
    ProgressCallback,
    Tokenizer,
    TrainedTokenizer,
    TrainingCancelled,
    TrainingInfo,
    TrainingSpec,
    algorithm_names,
    get_algorithm,
    register_algorithm,
)
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .production.encodings import EncodingUnavailable, TiktokenTokenizer, load_encoding
from .spans import TokenSpan, display_bytes
from .steps import EncodeStep, PieceSteps, encode_steps
from .wordpiece import (
    DEFAULT_SPECIAL_TOKENS,
    GreedyStep,
    ScoreRanking,
    TrainerView,
    WordPieceMerge,
    WordPieceReplay,
    WordPieceTokenizer,
    train_wordpiece,
)

# isort: split
from . import unigram  # noqa: F401  (registers "unigram" after bpe and wordpiece, in the sidebar's order)

__all__ = [
    "ALGORITHMS",
    "DEFAULT_SPECIAL_TOKENS",
    "MAX_UPLOAD_BYTES",
    "PATTERNS",
    "PATTERN_LABELS",
    "Algorithm",
    "BPETokenizer",
    "CandidateRanking",
    "EncodeStep",
    "EncodingUnavailable",
    "GreedyStep",
    "MergeStep",
    "PieceSteps",
    "PreToken",
    "ProgressCallback",
    "ScoreRanking",
    "TiktokenTokenizer",
    "TokenSpan",
    "Tokenizer",
    "TrainedTokenizer",
    "TrainerView",
    "TrainingCancelled",
    "TrainingInfo",
    "TrainingReplay",
    "TrainingSpec",
    "WordPieceMerge",
    "WordPieceReplay",
    "WordPieceTokenizer",
    "algorithm_names",
    "bpe_to_hf_json",
    "bpe_to_tiktoken_files",
    "count_pretokens",
    "decode_text_upload",
    "display_bytes",
    "encode_steps",
    "get_algorithm",
    "load_encoding",
    "load_tokenizer_bytes",
    "pretokenize",
    "register_algorithm",
    "split_special",
    "textbook",
    "train_bpe",
    "train_bpe_from_counts",
    "train_wordpiece",
    "unigram_from_hf_json",
    "unigram_to_hf_json",
    "wordpiece_to_hf_json",
    "wordpiece_to_vocab_txt",
]
