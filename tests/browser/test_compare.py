"""Real browser: the Compare page as a user sees it, in Debian's Chromium."""

from __future__ import annotations

import pytest

from bpe_core import train_bpe
from tests.browser.helpers import deep, screenshot
from tests.conftest import sample, unmark_whitespace

pytestmark = pytest.mark.browser


def test_compare_page_shows_three_views_side_by_side(browser, server, tiktoken_official):
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    pg = context.new_page()
    try:
        pg.goto(server + "/compare?size=100000")  # the full size (a plain visit opens at FIRST_VIEW_SIZE)
        pg.wait_for_function(  # the three views drawn (the live one draws its tokens once its data is decoded)
            deep("() => deepAll('.bpe-view').length === 3 && deepAll('.bpe-view').every(v => v.querySelector('.tk'))"),
            timeout=90_000,
        )
        text = sample("english")
        expected = [
            train_bpe(text, 1000, ["<|endoftext|>"]).encode(text),
            tiktoken_official("r50k_base").encode(text, allowed_special="all"),
            tiktoken_official("cl100k_base").encode(text, allowed_special="all"),
        ]
        # the views in document order (the live column draws in a shadow root, which locators list last)
        views = deep("() => deepAll('.bpe-view').map(e => e.getBoundingClientRect().toJSON())")
        boxes = pg.evaluate(views)
        # side by side on a wide screen: one row (captions above a view may wrap to different heights)
        tops = [b["y"] for b in boxes]
        assert max(tops) - min(tops) < min(b["height"] for b in boxes) / 2
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
        for i, ids in enumerate(expected):
            shown = pg.evaluate(
                deep("i => [...deepAll('.bpe-view')[i].querySelectorAll('.tk')].map(e => e.textContent)"), i
            )
            assert len(shown) == len(ids)
            assert unmark_whitespace("".join(shown)) == text
        _hovered_token_shows_its_tooltip(pg)
        screenshot(pg, "compare")
        pg.set_viewport_size({"width": 420, "height": 1600})
        pg.wait_for_timeout(500)
        boxes = pg.evaluate(views)
        assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]  # stacked on a narrow screen
        screenshot(pg, "compare-narrow")
    finally:
        context.close()


def _hovered_token_shows_its_tooltip(pg):
    # a server-drawn token (light DOM: not the live column) shows its data-tip under it while hovered; it alone is
    # positioned then (a positioned token is a paint layer of its own: a thousand of them tripled the paint work)
    box = pg.evaluate("() => document.querySelectorAll('.bpe-view .tk')[3].getBoundingClientRect().toJSON()")
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    pg.wait_for_function("() => document.querySelectorAll('.bpe-view .tk')[3].matches(':hover')")
    tk = pg.evaluate(
        """() => { const tks = [...document.querySelectorAll('.bpe-view .tk')], e = tks[3];
                   const after = getComputedStyle(e, '::after');
                   return {content: after.content, position: after.position, tip: e.dataset.tip,
                           positioned: tks.filter(t => getComputedStyle(t).position !== 'static').length}; }"""
    )
    assert tk["tip"].startswith("id ") and "bytes " in tk["tip"]
    assert tk["tip"].split("\n")[0] in tk["content"]  # the tooltip shows the token's own text
    assert tk["position"] == "absolute" and tk["positioned"] == 1
