"""Run the ``>>>`` examples of every ``bpe_core`` module (the README's promise that they are true)."""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil

import pytest

import bpe_core
from bpe_core.production.encodings import ENCODINGS_DIR_ENV, EncodingUnavailable, load_encoding

MODULES = sorted(
    [
        "bpe_core",
        *(m.name for m in pkgutil.walk_packages(bpe_core.__path__, "bpe_core.") if m.name != "bpe_core.__main__"),
    ]
)
MUST_HAVE_EXAMPLES = [
    "bpe_core",
    "bpe_core.interface",
    "bpe_core.bpe.trainer",
    "bpe_core.bpe.encoder",
    "bpe_core.wordpiece.trainer",
    "bpe_core.production.encodings",
    "bpe_core.analysis.metrics",
    "bpe_core.textbook",
    "bpe_core.textbook.base",
    "bpe_core.textbook.bpe",
    "bpe_core.textbook.wordpiece",
    "bpe_core.textbook.unigram",
    "bpe_core.textbook.unigram_training",
    "bpe_core.textbook.ranks",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    if name == "bpe_core.production.encodings":
        try:
            load_encoding("gpt2")
        except EncodingUnavailable:
            if os.environ.get("CI") or os.environ.get(ENCODINGS_DIR_ENV):
                raise
            pytest.skip("GPT-2's ranks are not available on this machine")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name in MUST_HAVE_EXAMPLES:
        assert result.attempted > 0


def test_main_entry_points_carry_examples():
    from bpe_core import BPETokenizer, TrainingSpec, load_encoding, train_bpe, train_wordpiece

    for obj in (train_bpe, train_wordpiece, load_encoding, BPETokenizer.encode, BPETokenizer.decode, TrainingSpec):
        assert ">>>" in (obj.__doc__ or ""), obj.__qualname__
