"""The packed-pieces helpers of :mod:`bpe_core.pieces`, held to plain list operations on random pieces."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.pieces import PackedPieces, code_points, drop_ranges, pack_utf8, utf8_non_ascii, without_pieces
from bpe_core.unigram.batch import prefixed_code_points

PIECES = st.lists(st.text(alphabet="ab é世🙂\n", max_size=6), max_size=30)


@settings(max_examples=200, deadline=None)
@given(PIECES, st.data())
def test_without_pieces_equals_the_list_less_those_pieces(pieces, data):
    drop = sorted(data.draw(st.sets(st.integers(0, max(len(pieces) - 1, 0)))) if pieces else [])
    kept = without_pieces(pieces, np.array(drop, dtype=np.int64))
    want = [p for k, p in enumerate(pieces) if k not in set(drop)]
    assert isinstance(kept, PackedPieces) and list(kept) == want
    data_want, offsets_want = pack_utf8(want)
    assert kept.data.tolist() == data_want.tolist() and kept.offsets.tolist() == offsets_want.tolist()
    packed = PackedPieces(pieces, *pack_utf8(pieces))  # from the bytes a packed list carries: the same
    again = without_pieces(packed, np.array(drop, dtype=np.int64))
    assert list(again) == want and again.data.tolist() == data_want.tolist()


def test_drop_ranges_of_code_points_leaves_out_those_strings():
    strings = ["ab", "", "é世", "🙂", "c"]
    codes, starts = code_points(strings)
    got, offsets = drop_ranges(codes, starts, np.array([0, 3]))
    assert (got.tolist(), offsets.tolist()) == (code_points(["", "é世", "c"])[0].tolist(), [0, 0, 2, 3])
    assert drop_ranges(codes, starts, np.array([0, 1, 2, 3, 4]))[1].tolist() == [0]


@settings(max_examples=200, deadline=None)
@given(PIECES, st.data())
def test_prefixed_code_points_equal_the_strings_with_the_prefix(pieces, data):
    where = np.array(data.draw(st.lists(st.booleans(), min_size=len(pieces), max_size=len(pieces))), dtype=bool)
    codes, starts = prefixed_code_points(pieces, where, "a")
    want = code_points(["a" + p if w else p for p, w in zip(pieces, where.tolist())])
    assert codes.tolist() == want[0].tolist() and starts.tolist() == want[1].tolist()


@settings(max_examples=200, deadline=None)
@given(PIECES)
def test_utf8_non_ascii_is_str_isascii(pieces):
    assert utf8_non_ascii(*pack_utf8(pieces)).tolist() == [not p.isascii() for p in pieces]
