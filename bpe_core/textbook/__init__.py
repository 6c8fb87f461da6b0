"""The textbook: the three algorithms written to be read, and the oracle every fast path must equal.

Read these first.  Each module is one idea, short, with every count
recomputed from scratch at every step, so that it can be checked by eye:

* :mod:`~bpe_core.textbook.base` -- what a tokenizer is: special tokens cut
  out, text cut into words, each word encoded; decoding back
  (:class:`TextbookTokenizer`)
* :mod:`~bpe_core.textbook.bpe` -- byte-level BPE: count pairs, merge the most
  frequent, repeat; encode by lowest merge rank (:class:`BPE`, :func:`train_merges`)
* :mod:`~bpe_core.textbook.wordpiece` -- WordPiece as the Hugging Face course
  trains it: score ``freq(pair) / (freq(first) * freq(second))``; greedy
  longest-match encoding with ``##`` (:class:`WordPiece`)
* :mod:`~bpe_core.textbook.unigram` -- Unigram: pieces with probabilities, the
  most likely segmentation by Viterbi (:class:`Unigram`)
* :mod:`~bpe_core.textbook.unigram_training` -- Unigram training: initial
  vocabulary, EM, loss, pruning what costs least
* :mod:`~bpe_core.textbook.ranks` -- tiktoken's ranks back to merges

Each is a real tokenizer behind :class:`bpe_core.interface.Tokenizer` (the
conformance suite runs over them).  The fast packages
(:mod:`bpe_core.bpe`, :mod:`bpe_core.wordpiece`, :mod:`bpe_core.unigram`)
compute the same things with incremental counts, priority queues, compiled
kernels and numpy; each of their fast paths names the textbook function it
must equal, and a test checks that it does on real text.

>>> from bpe_core.textbook import BPE, WordPiece
>>> BPE.train("low lower lowest", 258).merges
[(b'o', b'w'), (b'l', b'ow')]
>>> WordPiece.train("hug hugs", 8, special_tokens=["[UNK]"]).vocab
['[UNK]', '##g', '##s', '##u', 'h', 'hu', 'hug', 'hugs']
"""

from . import unigram_training
from .base import TextbookTokenizer
from .bpe import BPE, Merge, TrainingStep, train_merges
from .ranks import ranks_to_merges, tiktoken_parts
from .unigram import Unigram, segmentations, viterbi
from .wordpiece import ScoredMerge, WordPiece, hf_bert_pretokenizer

__all__ = [
    "BPE",
    "Merge",
    "ScoredMerge",
    "TextbookTokenizer",
    "TrainingStep",
    "Unigram",
    "WordPiece",
    "hf_bert_pretokenizer",
    "ranks_to_merges",
    "segmentations",
    "tiktoken_parts",
    "train_merges",
    "unigram_training",
    "viterbi",
]
