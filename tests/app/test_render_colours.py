"""Colour modes of the coloured views: cycle by position, one colour per id, a gradient by merge rank."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from bpe_core import train_bpe
from bpe_core.wordpiece import train_wordpiece
from tests.conftest import html_bodies, sample
from ui import render

STYLE = re.compile(r'style="background:(#[0-9a-f]{6})" data-id="(\d+)" data-tip="id \2 ')


def colours_and_ids(body: str) -> list[tuple[str, int]]:
    """(background, token id) of every drawn token, in order, read back from the HTML."""
    return [(c, int(i)) for c, i in STYLE.findall(body)]


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))


def monotone(colours: list[str]) -> bool:
    """Each step goes from amber towards blue: red and green never rise, blue never falls."""
    pairs = list(zip(map(rgb, colours), map(rgb, colours[1:])))
    return all(a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] for a, b in pairs)


@pytest.fixture(scope="module")
def english_spans():
    text = sample("english")
    tok = train_bpe(text, 700, ["<|endoftext|>"])
    return tok, tok.token_spans(text)


def test_cycle_mode_neighbours_never_share_a_colour(english_spans):
    _tok, spans = english_spans
    got = colours_and_ids(render.tokens_html(spans, mode="cycle"))
    assert len(got) == len(spans)
    assert all(a[0] != b[0] for a, b in pairwise(got))
    assert [c for c, _ in got[:8]] == list(render.PALETTE)  # position i takes PALETTE[i % 8]


def test_id_mode_same_id_same_colour_everywhere(english_spans):
    tok, spans = english_spans
    got = colours_and_ids(render.tokens_html(spans, mode="id"))
    by_id: dict[int, set[str]] = {}
    for colour, i in got:
        by_id.setdefault(i, set()).add(colour)
    assert all(len(c) == 1 for c in by_id.values())
    # and across texts: " the" in another text has the colour it has here
    other = colours_and_ids(render.tokens_html(tok.token_spans("Where is the cat? Over the wall."), mode="id"))
    for colour, i in other:
        if i in by_id:
            assert by_id[i] == {colour}
    # consecutive ids are far apart on the colour wheel: 8 ids, 8 different colours
    assert len({render.id_colour(i) for i in range(256, 264)}) == 8


def test_rank_mode_is_a_monotone_gradient(english_spans):
    tok, spans = english_spans
    n = len(tok.trace)
    # the ends are the documented colours: rank 0 = RANK_EARLY, the last rank = RANK_LATE
    assert render.rank_colour(0, n - 1) == "#ffecb3"  # (255, 236, 179)
    assert render.rank_colour(n - 1, n - 1) == "#8696f5"  # (134, 150, 245)
    assert render.rank_colour(None, n - 1) == render.BASE_COLOUR
    scale = [render.rank_colour(r, n - 1) for r in range(n)]
    assert monotone(scale) and len(set(scale)) > 100  # a real gradient, not a few steps
    # in the view: a later merge is never lighter than an earlier one; bytes are grey
    got = render.tokens_html(spans, mode="rank", max_rank=n - 1)
    drawn = {i: c for c, i in colours_and_ids(got)}
    ranked = sorted((tok.rank_of(i), c) for i, c in drawn.items() if tok.rank_of(i) is not None)
    assert monotone([c for _r, c in ranked])
    assert all(c == render.BASE_COLOUR for i, c in drawn.items() if i < 256)


def test_rank_mode_for_wordpiece_and_default_scale():
    tok = train_wordpiece("hug hug hug pug pug", 12)
    spans = tok.token_spans("hug pug")
    colours = render.token_colours(spans, "rank")  # scale = the largest rank drawn
    top = max(s.rank for s in spans if s.rank is not None)
    for s, c in zip(spans, colours):
        assert c == (render.BASE_COLOUR if s.rank is None else render.rank_colour(s.rank, top))


def test_unknown_mode_is_an_error_and_default_is_cycle(english_spans):
    _tok, spans = english_spans
    with pytest.raises(ValueError, match="unknown colour mode 'rainbow'"):
        render.tokens_html(spans[:3], mode="rainbow")
    assert render.tokens_html(spans[:20]) == render.tokens_html(spans[:20], mode="cycle")


def test_sidebar_colour_mode_reaches_the_playground(app):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    app.radio(key="colour_mode").set_value("id").run()
    assert not app.exception
    got = colours_and_ids(html_bodies(app))
    assert got and all(c == render.id_colour(i) for c, i in got)
    app.radio(key="colour_mode").set_value("rank").run()
    got = colours_and_ids(html_bodies(app))
    assert got and all(c == render.rank_colour(tok.rank_of(i), len(tok.trace) - 1) for c, i in got if i >= 256)
    app.switch_page("app_pages/compare.py").run()  # the Compare page's views follow the same choice
    assert not app.exception
    cmp = colours_and_ids(html_bodies(app))
    assert cmp and all(c == render.BASE_COLOUR for c, i in cmp if i < 256 and i != 50256)


def test_seam_on_a_continuation_piece_skips_the_prefix():
    # WordPiece merge "##a" + "##b" -> "##ab": the seam offset counts the prefix bytes (3 = len("##a")),
    # the drawing shows "ab", so the seam goes between "a" and "b".
    from bpe_core.spans import TokenSpan

    span = TokenSpan(7, b"##ab", "ab", 1, 3, is_continuation=True)
    html_out = render.tokens_html([span], highlight={7: 3}, mode="cycle")
    assert 'a<span class="seam"></span>b' in html_out
    # a word-initial merge "a" + "##b" -> "ab" keeps its plain offset
    first = TokenSpan(8, b"ab", "ab", 0, 2)
    assert 'a<span class="seam"></span>b' in render.tokens_html([first], highlight={8: 1}, mode="cycle")
