"""WordPiece, as the Hugging Face NLP course (chapter 6) trains it and BERT encodes, in five parts.

The fast version of :mod:`bpe_core.textbook.wordpiece` (read that first), whose vocabulary and ids it must equal.

* :mod:`~bpe_core.wordpiece.model` -- :class:`WordPieceTokenizer`: the ordered
  vocabulary, views, the training trace (:class:`WordPieceMerge`), JSON form.
* :mod:`~bpe_core.wordpiece.words` -- lower-casing and BERT-style words (:func:`count_words`).
* :mod:`~bpe_core.wordpiece.trainer` -- :func:`train_wordpiece` (and :func:`train_wordpiece_from_counts`,
  from counted words): the incremental merge loop.
* :mod:`~bpe_core.wordpiece.encoder` -- greedy longest-match-first, decoding, spans.
* :mod:`~bpe_core.wordpiece.trace` -- training replayed to any step, and
  encoding step by step (the Merges and Encode pages).

Importing this package registers the ``"wordpiece"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from ..interface import Algorithm, register_algorithm
from .model import DEFAULT_MAX_INPUT_CHARS_PER_WORD, DEFAULT_SPECIAL_TOKENS, WordPieceMerge, WordPieceTokenizer
from .trace import (
    GreedyStep,
    ScoredPair,
    ScoreRanking,
    TrainerView,
    WordPieceReplay,
    explain_score_tie,
    wordpiece_encode_steps,
)
from .trainer import train_from_spec, train_wordpiece, train_wordpiece_from_counts
from .words import count_words, lowercase_text

__all__ = [
    "DEFAULT_MAX_INPUT_CHARS_PER_WORD",
    "DEFAULT_SPECIAL_TOKENS",
    "GreedyStep",
    "ScoreRanking",
    "ScoredPair",
    "TrainerView",
    "WordPieceMerge",
    "WordPieceReplay",
    "WordPieceTokenizer",
    "count_words",
    "explain_score_tie",
    "lowercase_text",
    "train_wordpiece",
    "train_wordpiece_from_counts",
    "wordpiece_encode_steps",
]

register_algorithm(
    Algorithm(
        name="wordpiece",
        label="WordPiece",
        train=train_from_spec,
        from_dict=WordPieceTokenizer.from_dict,
        default_pattern="bert",
        fixed_pattern=True,
        default_special_tokens=DEFAULT_SPECIAL_TOKENS,
        uses_lowercase=True,
    )
)
