"""Presentation mode at 1280x720 (issue 17.3), in Debian's Chromium.

The Playground must show ten or more lines of tokens without scrolling, the
Merges page its card and the tokens the current merge made; the normal view
is measured too, to show what the mode changes.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import deep, screenshot, wait_idle

pytestmark = pytest.mark.browser


def visible_token_lines(pg) -> int:
    """Lines of coloured tokens fully visible in the window (and in their scroll box)."""
    return pg.evaluate(
        deep(
            """() => {
        const tops = new Set();
        for (const t of deepAll('.bpe-view .tk', document.querySelector('[data-testid=stMain]'))) {
            const r = t.getBoundingClientRect(), box = t.closest('.bpe-view').getBoundingClientRect();
            if (r.height && r.top >= Math.max(0, box.top) && r.bottom <= Math.min(innerHeight, box.bottom))
                tops.add(Math.round(r.top));
        }
        return tops.size;
    }"""
        )
    )


def fully_visible(pg, selector: str) -> bool:
    return pg.evaluate(
        deep(
            """(sel) => { const inner = sel.replace(/^\\[data-testid=stMain\\] /, '');  // a scope outside the component
                      const scope = inner === sel ? document : document.querySelector('[data-testid=stMain]');
                      const e = deepAll(inner, scope).find(x => x.offsetParent);  // drawn ones only
                      if (!e) return false;
                      const r = e.getBoundingClientRect(), box = (e.closest('.bpe-view') || e).getBoundingClientRect();
                      return r.top >= 0 && r.bottom <= innerHeight
                             && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        }"""
        ),
        selector,
    )


def open_at(browser, server, path: str, selector: str = ".bpe-view .tk"):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    pg.goto(f"{server}/{path}")
    pg.wait_for_selector(selector, timeout=90_000)
    pg.wait_for_timeout(800)
    wait_idle(pg)
    pg.wait_for_timeout(500)
    return ctx, pg


def test_playground_shows_ten_lines_of_tokens(browser, server):
    ctx, pg = open_at(browser, server, "")
    try:
        normal = visible_token_lines(pg)
    finally:
        ctx.close()
    ctx, pg = open_at(browser, server, "?present=1")
    try:
        lines = visible_token_lines(pg)
        screenshot(pg, "present-playground-1280x720")
        assert lines >= 10, (lines, normal)
        assert pg.get_by_role("switch", name="Presentation mode").is_checked()
        assert not pg.locator("[data-testid=stMain] [data-testid=stCaptionContainer]").first.is_visible()
        cards = pg.locator("[data-testid=stMain] [data-testid=stMetric], [data-testid=stMain] .bpe-live .live-card")
        assert cards.filter(has_text="Tokens").first.is_visible()
        assert not cards.filter(has_text="Characters").first.is_visible()
        assert fully_visible(pg, "[data-testid=stMain] .bpe-live .live-slider")  # the slider stays, on screen
        assert not pg.locator("[data-testid=stMain] .bpe-live .live-ids").first.is_visible()
        font = pg.eval_on_selector("[data-testid=stMain] .bpe-view", "e => parseFloat(getComputedStyle(e).fontSize)")
        assert font >= 22  # the normal view draws 15 px
    finally:
        ctx.close()


@pytest.mark.parametrize(
    "step",
    [1, 40, 300],
)
def test_merges_shows_the_card_and_the_new_tokens(browser, server, step):
    ctx, pg = open_at(browser, server, f"merges?present=1&step={step}", ".merge-card")
    try:
        screenshot(pg, f"present-merges-{step}-1280x720")
        assert fully_visible(pg, ".merge-card")
        assert fully_visible(pg, "[data-testid=stMain] .bpe-view .tk.hl")  # scrolled into view in its box
    finally:
        ctx.close()
