"""``check_tables``' merge checks: the whole-set test accepts exactly what the per-merge loop accepts.

:func:`bpe_core.bpe.model._merge_triples_pass` tests every merge triple at once
(set operations) and lets the per-merge loop, which names the first bad merge,
run only when it fails.  Held here to the loop itself on a real trained table,
with one id of one merge changed at random (hypothesis), and on each kind of
bad triple the loop names.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import train_bpe
from bpe_core.bpe import model
from tests.conftest import seed_text


@pytest.fixture(scope="module")
def tables():
    tok = train_bpe(seed_text()[:20000], 256 + 1 + 120, ["<|endoftext|>"])
    vocab = dict(tok._vocab_full)
    on_id = {i: s for s, i in tok._specials.items()}
    return vocab, list(tok._merges), on_id, model._byte_ids(vocab, on_id)


def _loop_accepts(vocab, merges, on_id, byte_ids) -> bool:
    """Whether the per-merge loop alone (the whole-set test switched off) accepts the triples."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(model, "_merge_triples_pass", lambda *a: False)
        try:
            model._check_merge_triples(vocab, merges, on_id, byte_ids)
        except (ValueError, TypeError):
            return False
    return True


def test_a_trained_table_passes_both_ways(tables):
    vocab, merges, on_id, byte_ids = tables
    assert model._merge_triples_pass(vocab, merges, on_id, byte_ids)
    assert _loop_accepts(vocab, merges, on_id, byte_ids)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_one_changed_id_is_judged_as_the_loop_judges_it(tables, data):
    vocab, merges, on_id, byte_ids = tables
    k = data.draw(st.integers(0, len(merges) - 1))
    side = data.draw(st.integers(0, 2))
    new_id = data.draw(st.integers(-2, max(vocab) + 3))
    changed = list(merges)
    triple = list(changed[k])
    triple[side] = new_id
    changed[k] = tuple(triple)
    fast = model._merge_triples_pass(vocab, changed, on_id, byte_ids)
    assert fast == _loop_accepts(vocab, changed, on_id, byte_ids)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m, v: m.append((m[0][0], m[0][1], max(v) + 7)), "not in the vocabulary"),
        (lambda m, v: m.append((256, 97, 300)), "special token"),
        (lambda m, v: m.append((97, 98, 99)), "the id of byte 0x63"),
        (lambda m, v: m.append(m[0]), "already created"),
        (lambda m, v: m.__setitem__(0, (m[0][1], m[0][0], m[0][2])), "are not those of ids"),
        (lambda m, v: m.append((97, True, 300)), "ids must be int"),
        (lambda m, v: m.append((97, 98)), "must be \\(left id, right id, new id\\)"),
    ],
)
def test_each_bad_triple_is_named_by_the_loop(tables, edit, message):
    vocab, merges, on_id, byte_ids = tables
    changed = list(merges)
    edit(changed, vocab)
    assert not model._merge_triples_pass(vocab, changed, on_id, byte_ids)
    with pytest.raises((ValueError, TypeError), match=message):
        model._check_merge_triples(vocab, changed, on_id, byte_ids)
