"""WordPiece, as the Hugging Face NLP course (chapter 6) trains it and BERT encodes, in six parts.

The fast version of :mod:`bpe_core.textbook.wordpiece` (read that first), whose vocabulary and ids it must equal.

* :mod:`~bpe_core.wordpiece.model` -- :class:`WordPieceTokenizer`: the ordered
  vocabulary, views, the training trace (:class:`WordPieceMerge`), JSON form.
* :mod:`~bpe_core.wordpiece.words` -- lower-casing and BERT-style words (:func:`count_words`).
* :mod:`~bpe_core.wordpiece.trainer` -- :func:`train_wordpiece` (and :func:`train_wordpiece_from_counts`,
  from counted words): the incremental merge loop, in named steps.
* :mod:`~bpe_core.wordpiece.wp_kernel` -- the same loop compiled, for large tables (same merges).
* :mod:`~bpe_core.wordpiece.encoder` -- greedy longest-match-first, decoding, spans.
* :mod:`~bpe_core.wordpiece.trace` -- training replayed to any step, and
  encoding step by step (the Merges and Encode pages).

Importing this package registers the ``"wordpiece"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from collections.abc import Mapping

from ..interface import Algorithm, ProgressCallback, register_algorithm
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
from .words import count_words, lowercase_text, surrogate_error

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


def _count_words(
    text: str, pattern: str, special_tokens: tuple[str, ...], lowercase: bool, progress: ProgressCallback | None
) -> tuple[Mapping[str, int], int, str]:
    """The ``"wordpiece"`` registration's count for a count table: BERT-style words (:func:`count_words`).

    Raises:
        ValueError: an unpaired surrogate in ``text``.
    """
    err = surrogate_error(text)
    if err is not None:
        raise err
    counts, n_special = count_words(text, special_tokens, lowercase, progress=progress)
    return counts, n_special, pattern


def _train_from_counts(
    word_counts: Mapping[bytes, int],
    vocab_size: int,
    special_tokens: tuple[str, ...],
    pattern: str,
    *,
    lowercase: bool,
    special_occurrences: int,
    progress: ProgressCallback | None,
) -> WordPieceTokenizer:
    """The ``"wordpiece"`` registration's training on a count table: :func:`train_wordpiece_from_counts`."""
    del pattern  # always BERT-style
    return train_wordpiece_from_counts(
        {k.decode("utf-8"): v for k, v in word_counts.items()},
        vocab_size,
        special_tokens,
        lowercase=lowercase,
        special_occurrences=special_occurrences,
        progress=progress,
    )


register_algorithm(
    Algorithm(
        name="wordpiece",
        label="WordPiece",
        train=train_from_spec,
        from_dict=WordPieceTokenizer.from_dict,
        default_pattern="bert",
        fixed_pattern=True,
        pattern_phrase="BERT-style",
        default_special_tokens=DEFAULT_SPECIAL_TOKENS,
        uses_lowercase=True,
        count_words=_count_words,
        train_from_counts=_train_from_counts,
        counts_in_text_order=True,
        hf_model="WordPiece",
    )
)
