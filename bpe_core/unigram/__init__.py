"""Unigram: SentencePiece's subword model, trained here by EM and pruning, encoded by Viterbi.

The fast version of :mod:`bpe_core.textbook.unigram` and :mod:`bpe_core.textbook.unigram_training` (read those
first): from the same pieces and counts, its Viterbi, EM step, loss and pruning costs must equal theirs.

* :func:`train_unigram` -- the trainer (:mod:`bpe_core.unigram.trainer`)
* :class:`UnigramTokenizer` -- the tokenizer and its training states (:mod:`bpe_core.unigram.model`)
* :mod:`bpe_core.unigram.encoder` -- SentencePiece-style words and the Viterbi encoder (Hugging Face's ties)
* :mod:`bpe_core.unigram.trace` -- pruning rounds, word lattices with k-best paths, the replay
* Hugging Face ``tokenizer.json``: :func:`bpe_core.formats.huggingface.unigram_to_hf_json` and
  :func:`~bpe_core.formats.huggingface.unigram_from_hf_json`, beside the other formats

Importing this package registers the ``"unigram"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from collections.abc import Mapping

from ..interface import Algorithm, ProgressCallback, register_algorithm
from ..pretokenize import PATTERNS, resolve_pattern, surrogate_error
from .encoder import METASPACE, SENTENCEPIECE, SENTENCEPIECE_PATTERN
from .model import BYTE_PIECES, DEFAULT_UNK_TOKEN, UnigramTokenizer, UnigramTrainingInfo
from .trace import LatticeArc, PruneRound, Segmentation, UnigramReplay, WordLattice
from .trainer import DEFAULT_SEED_SIZE, count_unigram_words, train_unigram, train_unigram_from_counts

__all__ = [
    "BYTE_PIECES",
    "DEFAULT_SEED_SIZE",
    "DEFAULT_UNK_TOKEN",
    "METASPACE",
    "SENTENCEPIECE",
    "SENTENCEPIECE_PATTERN",
    "LatticeArc",
    "PruneRound",
    "Segmentation",
    "UnigramReplay",
    "UnigramTokenizer",
    "UnigramTrainingInfo",
    "WordLattice",
    "count_unigram_words",
    "train_unigram",
    "train_unigram_from_counts",
]


def _train_spec(text, spec, *, progress=None, num_workers=None) -> UnigramTokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"unigram"`` (``num_workers`` is not used)."""
    del num_workers  # words are counted in this process
    return train_unigram(
        text, spec.vocab_size, spec.special_tokens, spec.pattern, progress=progress, byte_fallback=spec.byte_fallback
    )


def _count_words(
    text: str, pattern: str, special_tokens: tuple[str, ...], lowercase: bool, progress: ProgressCallback | None
) -> tuple[Mapping[str, int], int, str]:
    """The ``"unigram"`` registration's count for a count table: the trainer's words (:func:`count_unigram_words`).

    SentencePiece's pattern is recorded by the name the trainer knows (``▁``-marked words).

    Raises:
        ValueError: an unpaired surrogate in ``text``.
    """
    del lowercase, progress  # no lower-casing; words are counted in one pass
    err = surrogate_error(text)
    if err is not None:
        raise err
    if resolve_pattern(pattern) == PATTERNS[SENTENCEPIECE]:
        pattern = SENTENCEPIECE  # the Unigram trainer's name for ▁-marked words
    counts, n_special = count_unigram_words(text, pattern, special_tokens)
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
) -> UnigramTokenizer:
    """The ``"unigram"`` registration's training on a count table: :func:`train_unigram_from_counts`."""
    del lowercase
    return train_unigram_from_counts(
        {k.decode("utf-8"): v for k, v in word_counts.items()},
        vocab_size,
        special_tokens,
        pattern,
        special_occurrences=special_occurrences,
        progress=progress,
    )


register_algorithm(
    Algorithm(
        name="unigram",
        label="Unigram (SentencePiece)",
        train=_train_spec,
        from_dict=UnigramTokenizer.from_dict,
        default_pattern=SENTENCEPIECE,
        default_special_tokens=(DEFAULT_UNK_TOKEN,),
        required_special_tokens=(DEFAULT_UNK_TOKEN,),
        reads_files=True,
        count_words=_count_words,
        train_from_counts=_train_from_counts,
        counts_in_text_order=True,
        hf_model="Unigram",
    )
)
