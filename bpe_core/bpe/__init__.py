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

Importing this package registers the ``"bpe"`` algorithm in
:data:`bpe_core.interface.ALGORITHMS`.
"""

from ..interface import Algorithm, TrainingInfo, register_algorithm
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

register_algorithm(
    Algorithm(
        name="bpe",
        label="Byte-level BPE",
        train=train_from_spec,
        from_dict=BPETokenizer.from_dict,
        default_pattern="gpt2",
        default_special_tokens=("<|endoftext|>",),
        reads_files=True,
    )
)
