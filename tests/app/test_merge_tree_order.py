"""The merge-tree chart draws every token's two parts left to right, as the merge made it (issue 17.6)."""

from __future__ import annotations

from bpe_core import train_bpe
from bpe_core.analysis.insights import merge_tree
from tests.conftest import sample
from ui.insights_view import tree_figure


def _children(icicle) -> dict[str, list[str]]:
    kids: dict[str, list[str]] = {}
    for node, parent in zip(icicle.ids, icicle.parents, strict=True):
        if parent:
            kids.setdefault(parent, []).append(node)
    return kids


def _check_left_to_right(tok, token_id: int) -> int:
    """Assert the figure's children order equals (left, right) of each merge; return the number of merges seen."""
    fig = tree_figure(merge_tree(tok, token_id))
    (icicle,) = fig.data
    assert icicle.sort is False  # Plotly would otherwise reorder siblings by value (bytes), largest first
    node_id = dict(zip(icicle.ids, (int(h.split()[1]) for h in icicle.hovertext), strict=True))
    merged = 0
    for parent, kids in _children(icicle).items():
        assert len(kids) == 2
        left, right = (tok.vocab[node_id[k]] for k in kids)
        assert left + right == tok.vocab[node_id[parent]]  # the parts, in the figure's order, spell the token
        rank = tok.rank_of(node_id[parent])
        assert (left, right) == tok.merges[rank]  # and are the merge's own left and right
        merged += 1
    return merged


def test_json_is_drawn_j_then_son():
    text = "JSON JSON JSON SON SON SON SON SON SON J J " * 20
    tok = train_bpe(text, 256 + 6, pattern=r"\S+")
    json_id = next(i for i, b in tok.vocab.items() if b == b"JSON")
    (icicle,) = tree_figure(merge_tree(tok, json_id)).data
    labels = [lab.split("<br>")[0] for lab in icicle.labels]
    assert labels[:3] == ["JSON", "J", "SON"]  # the small left part first: pre-order, left to right
    # the right part is larger than the left: a size-sorted chart would draw SON before J
    assert icicle.values[1] < icicle.values[2]
    _check_left_to_right(tok, json_id)


def test_every_learned_token_of_the_english_sample_left_to_right():
    tok = train_bpe(sample("english"), 600)
    seen = sum(_check_left_to_right(tok, token_id) for token_id in range(tok.min_vocab_size, tok.vocab_size))
    assert seen > 900
    shapes = {(len(a) < len(b), len(a) > len(b)) for a, b in tok.merges}
    assert (True, False) in shapes and (False, True) in shapes  # both a larger right part and a larger left one
