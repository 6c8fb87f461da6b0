"""Tokenizer file formats, one module per format family.

* :mod:`bpe_core.formats.tiktoken` -- ``.tiktoken`` ranks files and their metadata;
  ranks <-> merges (:func:`~bpe_core.formats.tiktoken.ranks_to_vocab_merges`).
* :mod:`bpe_core.formats.huggingface` -- Hugging Face ``tokenizer.json`` (BPE, WordPiece).
* :mod:`bpe_core.formats.bert` -- BERT's ``vocab.txt``.
* :mod:`bpe_core.formats.upload` -- uploaded text, and reading any of the above
  (or the project's own JSON, each tokenizer's ``to_dict``) by content.

This package's ``__init__`` imports none of them, so the BPE encoder can use
:mod:`~bpe_core.formats.tiktoken` without importing the readers (which build
tokenizers); the names are exported by :mod:`bpe_core` itself.
"""
