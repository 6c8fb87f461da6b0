"""The ``>>>`` examples of the production-tokenizer modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "bpe_core.production.encodings",
        "bpe_core.production.registry",
        "bpe_core.production.sentencepiece_model",
        "bpe_core.production.byte_bpe",
        "bpe_core.production.bert",
        "bpe_core.production.normalize",
    ],
)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
