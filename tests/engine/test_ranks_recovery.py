"""Merges recovered from tiktoken ranks: the engine's fast procedure equals the readable reference.

:func:`bpe_core.textbook.ranks.tiktoken_parts` rescans every pair at every step, as
tiktoken's ``_byte_pair_merge`` does; :func:`bpe_core.formats.tiktoken.ranks_to_vocab_merges`
must give exactly its merges, on every production encoding (GPT-2, cl100k, o200k,
Llama 3, Llama 4, Tekken), on the pathological ``a, aa, aaa, ...`` file and on
random rank tables (non-monotone ranks, ties between equal pairs).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.bpe import ranks as tk
from bpe_core.bpe.ranks import ranks_to_vocab_merges
from bpe_core.production.registry import production_mergeable_ranks
from bpe_core.textbook.ranks import ranks_to_merges, tiktoken_parts

BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize("key", ["gpt2", "cl100k_base", "o200k_base", "llama3", "llama4", "mistral_tekken"])
def test_production_ranks_give_the_reference_merges(key):
    try:
        ranks = production_mergeable_ranks(key)
    except Exception as exc:  # an encoding not available offline on this machine
        pytest.skip(f"{key}: {exc}")
    long_tokens = [t for t in sorted(ranks, key=ranks.get) if len(t) > tk.SHORT_TOKEN]
    assert long_tokens, "the heap path must be exercised"
    for t in long_tokens:  # the heap path; shorter tokens run the reference's own scan
        assert tk._bpe_parts(ranks, t) == tiktoken_parts(ranks, t), t
    try:
        vocab, merges = ranks_to_vocab_merges(ranks)
    except ValueError as exc:  # Llama 3: a token tiktoken's procedure cannot build (the reference agrees)
        bad = next(t for t in sorted(ranks, key=ranks.get) if len(t) > 1 and len(tk._scan_parts(ranks, t)) != 2)
        assert str(exc).startswith(f"token {bad!r}")
        return
    assert vocab == {r: t for t, r in ranks.items()}
    if key == "gpt2":
        assert merges == ranks_to_merges(dict(ranks))


def test_pathological_run_of_one_letter():
    ranks = BYTES | {b"a" * n: 254 + n for n in range(2, 402)}
    _vocab, merges = ranks_to_vocab_merges(ranks)
    assert merges == ranks_to_merges(ranks)


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.binary(min_size=2, max_size=40).map(lambda b: bytes(x % 3 + 97 for x in b)), max_size=60),
    seed=st.randoms(use_true_random=False),
)
def test_random_rank_tables(tokens, seed):
    """Any rank order (non-monotone, as Llama 3's), long tokens of few letters: heap == scan, part by part."""
    extra = list(dict.fromkeys(t for t in tokens))
    seed.shuffle(extra)
    ranks = BYTES | {t: 256 + k for k, t in enumerate(extra)}
    for t in extra:
        assert tk._heap_parts(ranks, t) == tiktoken_parts(ranks, t)
        assert tk._bpe_parts(ranks, t) == tiktoken_parts(ranks, t)
