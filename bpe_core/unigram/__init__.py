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

from ..interface import Algorithm, register_algorithm
from .encoder import METASPACE, SENTENCEPIECE, SENTENCEPIECE_PATTERN
from .model import BYTE_PIECES, DEFAULT_UNK_TOKEN, UnigramTokenizer, UnigramTrainingInfo
from .trace import LatticeArc, PruneRound, Segmentation, UnigramReplay, WordLattice
from .trainer import DEFAULT_SEED_SIZE, count_unigram_words, train_unigram

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
]


def _train_spec(text, spec, *, progress=None, num_workers=None) -> UnigramTokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"unigram"`` (``num_workers`` is not used)."""
    del num_workers  # words are counted in this process
    return train_unigram(
        text, spec.vocab_size, spec.special_tokens, spec.pattern, progress=progress, byte_fallback=spec.byte_fallback
    )


register_algorithm(
    Algorithm(
        name="unigram",
        label="Unigram (SentencePiece)",
        train=_train_spec,
        from_dict=UnigramTokenizer.from_dict,
        default_pattern=SENTENCEPIECE,
        default_special_tokens=(DEFAULT_UNK_TOKEN,),
        reads_files=True,
    )
)
