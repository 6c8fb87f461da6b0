"""Byte-level BPE, as GPT-2 and tiktoken define it, in four parts.

The fast version of :mod:`bpe_core.textbook.bpe` (read that first), whose merges and ids it must equal.

* :mod:`~bpe_core.bpe.model` -- :class:`BPETokenizer`: vocabulary, merges,
  vocabulary-size views, the training trace (:class:`MergeStep`), JSON form.
* :mod:`~bpe_core.bpe.trainer` -- :func:`train_bpe`, :func:`train_bpe_from_counts`:
  the incremental merge loop.
* :mod:`~bpe_core.bpe.encoder` -- encoding and decoding, and the choice of
  tiktoken's fast path (``fast_encoder``).
* :mod:`~bpe_core.bpe.trace` -- training replayed to any step, and encoding
  step by step (the Merges and Encode pages).

Behind them, compiled: :mod:`~bpe_core.bpe.merge_kernel` (the training merge loop) and
:mod:`~bpe_core.bpe.piece_merge_kernel` (many distinct pieces encoded in one call, over bytes or characters:
Compare's corpus figures, and the SentencePiece-style production BPEs).

Importing this package registers the ``"bpe"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from collections.abc import Mapping

from ..counting.stream import count_text
from ..interface import Algorithm, ProgressCallback, TrainingInfo, WordCounts, register_algorithm
from ..pretokenize import PATTERNS
from .model import BPETokenizer, MergeStep
from .trace import CandidateRanking, PairCandidate, TrainingReplay, bpe_encode_steps, explain_tie_break
from .trainer import train_bpe, train_bpe_from_counts, train_from_spec

__all__ = [
    "BPETokenizer",
    "CandidateRanking",
    "MergeStep",
    "PairCandidate",
    "TrainingInfo",
    "TrainingReplay",
    "bpe_encode_steps",
    "explain_tie_break",
    "train_bpe",
    "train_bpe_from_counts",
]


def _count_words(
    text: str, pattern: str, special_tokens: tuple[str, ...], lowercase: bool, progress: ProgressCallback | None
) -> WordCounts:
    """The ``"bpe"`` registration's count for a count table: the pattern's pre-tokens as UTF-8, in this process."""
    del lowercase  # not a BPE option (the count table refuses it first)
    counted = count_text(text, pattern, special_tokens, num_workers=1, progress=progress)
    return WordCounts(counted.word_counts, counted.special_occurrences, pattern)


def _train_from_counts(
    word_counts: Mapping[bytes, int],
    vocab_size: int,
    special_tokens: tuple[str, ...],
    pattern: str,
    *,
    lowercase: bool,
    special_occurrences: int,
    sentence_ends: tuple[tuple[str, int], ...] = (),
    progress: ProgressCallback | None,
) -> BPETokenizer:
    """The ``"bpe"`` registration's training on a count table: :func:`train_bpe_from_counts`, named by its pattern."""
    del lowercase, sentence_ends  # not BPE options
    return train_bpe_from_counts(
        word_counts,
        vocab_size,
        special_tokens,
        pattern,
        special_occurrences=special_occurrences,
        progress=progress,
        name=f"BPE ({pattern})" if pattern in PATTERNS else "BPE (custom pattern)",
    )


register_algorithm(
    Algorithm(
        name="bpe",
        label="Byte-level BPE",
        train=train_from_spec,
        from_dict=BPETokenizer.from_dict,
        default_pattern="gpt2",
        default_special_tokens=("<|endoftext|>",),
        reads_files=True,
        count_words=_count_words,
        train_from_counts=_train_from_counts,
        streams_counts=True,
        hf_model="BPE",
    )
)
