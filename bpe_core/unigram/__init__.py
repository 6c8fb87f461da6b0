"""Unigram: SentencePiece's subword model, trained here by EM and pruning, encoded by Viterbi.

* :func:`train_unigram` -- the trainer (:mod:`bpe_core.unigram.trainer`)
* :class:`UnigramTokenizer` -- the tokenizer and its training states (:mod:`bpe_core.unigram.model`)
* :mod:`bpe_core.unigram.encoder` -- SentencePiece-style words and the Viterbi encoder (Hugging Face's ties)
* :mod:`bpe_core.unigram.trace` -- pruning rounds, word lattices with k-best paths, the replay
* :func:`unigram_to_hf_json` / :func:`unigram_from_hf_json` -- Hugging Face ``tokenizer.json``

Importing this package registers the ``"unigram"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from .encoder import METASPACE, SENTENCEPIECE, SENTENCEPIECE_PATTERN
from .model import DEFAULT_UNK_TOKEN, UnigramTokenizer, UnigramTrainingInfo
from .trace import LatticeArc, PruneRound, Segmentation, UnigramReplay, WordLattice

__all__ = [
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
]
