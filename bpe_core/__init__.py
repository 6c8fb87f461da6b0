"""BPE Playground engine: byte-level BPE, WordPiece and Unigram tokenizers, written from scratch.

Pure Python (plus ``regex`` and ``numpy``, and compiled kernels for large
trainings); nothing here imports Streamlit.  Read it top-down:

* :mod:`bpe_core.textbook` -- **start here**: the three algorithms as short
  readable modules (BPE, WordPiece, Unigram), real tokenizers behind the same
  interface, and the tests' oracle: every fast path below names the textbook
  function it must equal, and a test checks that it does
* :mod:`bpe_core.interface` -- the declared :class:`Tokenizer` and
  :class:`TrainedTokenizer` protocols, :class:`TrainingSpec`, the algorithm
  registry (:data:`ALGORITHMS`: one :class:`Algorithm` carries all the engine
  does differently per algorithm), :class:`TrainingCancelled`, :class:`TrainingInfo`
* :mod:`bpe_core.bpe` -- byte-level BPE, fast: model, trainer, encoder, trace
  (:func:`train_bpe`, :class:`BPETokenizer`); equals :mod:`bpe_core.textbook.bpe`
* :mod:`bpe_core.wordpiece` -- WordPiece, fast: model, words, trainer, encoder, trace
  (:func:`train_wordpiece`, :class:`WordPieceTokenizer`); equals :mod:`bpe_core.textbook.wordpiece`
* :mod:`bpe_core.unigram` -- Unigram, fast: model, trainer (EM and pruning), Viterbi
  encoder, pruning trace and lattices (:func:`train_unigram`, :class:`UnigramTokenizer`);
  its Viterbi, EM step, loss and pruning costs equal :mod:`bpe_core.textbook.unigram`'s
* :mod:`bpe_core.pretokenize` -- split patterns, special tokens, pre-tokens
* :mod:`bpe_core.counting` -- streamed/parallel pre-token counting, count tables, the compiled kernels
* :mod:`bpe_core.production` -- production tokenizers: GPT-2, cl100k, o200k (:func:`load_encoding`)
  and the registry of the others
* :mod:`bpe_core.formats` -- tiktoken, Hugging Face ``tokenizer.json``, BERT
  ``vocab.txt``, uploads
* :mod:`bpe_core.spans`, :mod:`bpe_core.steps`, :mod:`bpe_core.analysis` -- what the pages
  draw: token spans, step-by-step records, compression figures, genealogy, live-view tables

Importing this package registers every built-in algorithm, in the sidebar's order.  Each one's
entry points are exported alike: ``train_<name>``, ``train_<name>_from_counts`` (from counted
pre-tokens or words) and its tokenizer class.

>>> import bpe_core
>>> bpe_core.algorithm_names()
['bpe', 'wordpiece', 'unigram']
>>> text = "hug pug pun bun hugs " * 20
>>> trained = [bpe_core.train_bpe(text, 259), bpe_core.train_wordpiece(text, 12, ["[UNK]"]),
...            bpe_core.train_unigram(text, 12)]
>>> for tok in trained:
...     print(f"{tok.name:10}", [tok.describe_token(i) for i in tok.encode("hugs bun")])
BPE (gpt2) ['hug', 's', ' ', 'b', 'un']
WordPiece  ['hugs', 'b', '##u', '##n']
Unigram    ['▁hug', 's', '▁', 'b', 'u', 'n']

Training from counted pre-tokens gives the same tokenizer as training on the text:

>>> counts, _specials = count_pretokens(text)
>>> bpe_core.train_bpe_from_counts({w.encode(): n for w, n in counts.items()}, 259).merges == trained[0].merges
True
"""

from . import textbook

# the algorithms first, in the sidebar's order (each registers itself when imported)
from .bpe import (
    BPETokenizer,
    CandidateRanking,
    MergeStep,
    TrainingReplay,
    train_bpe,
    train_bpe_from_counts,
)
from .wordpiece import (
    DEFAULT_SPECIAL_TOKENS,
    GreedyStep,
    ScoreRanking,
    TrainerView,
    WordPieceMerge,
    WordPieceReplay,
    WordPieceTokenizer,
    train_wordpiece,
    train_wordpiece_from_counts,
)

# isort: split
from .unigram import UnigramTokenizer, train_unigram, train_unigram_from_counts

# isort: split
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
    VocabSizeTooSmall,
    algorithm_names,
    get_algorithm,
    register_algorithm,
)
from .pretokenize import PATTERN_LABELS, PATTERNS, PreToken, count_pretokens, pretokenize, split_special
from .production.encodings import EncodingUnavailable, TiktokenTokenizer, load_encoding
from .spans import TokenSpan, display_bytes
from .steps import EncodeStep, PieceSteps, encode_steps

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
    "UnigramTokenizer",
    "VocabSizeTooSmall",
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
    "train_unigram",
    "train_unigram_from_counts",
    "train_wordpiece",
    "train_wordpiece_from_counts",
    "unigram_from_hf_json",
    "unigram_to_hf_json",
    "wordpiece_to_hf_json",
    "wordpiece_to_vocab_txt",
]
