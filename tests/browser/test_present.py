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


LAYOUT = deep(
    """() => {
    const main = document.querySelector('[data-testid=stMain]');
    const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const px = (e) => parseFloat(getComputedStyle(e).fontSize);
    const toks = deepAll('.bpe-view .tk', main).filter(shown);
    const titles = [...main.querySelectorAll('.enc-title')].filter(shown);
    const cards = [...main.querySelectorAll('[data-testid=stMetric]')].filter(shown);
    const firstBoxes = [...main.querySelectorAll('[data-testid=stColumn]')]
        .map(c => c.querySelector('.enc-piece')).filter(e => e && shown(e));
    return {
        sidebar: document.querySelector('[data-testid=stSidebar]').getBoundingClientRect().width,
        content: document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect().width,
        tokenSizes: [...new Set(toks.filter(t => !t.classList.contains('partial')).map(px))],
        byteSizes: [...new Set(toks.filter(t => t.classList.contains('partial')).map(px))],
        tokens: toks.length,
        liveTokens: toks.filter(t => t.getRootNode() !== document).length,
        serverTokens: toks.filter(t => t.getRootNode() === document).length,
        chipSizes: [...new Set([...main.querySelectorAll('.enc-tok')].filter(shown).map(px))],
        titleLines: titles.map(t => t.getBoundingClientRect().height / parseFloat(getComputedStyle(t).lineHeight)),
        titleCut: titles.filter(t => t.scrollWidth > t.clientWidth).map(t => t.title),
        boxTops: firstBoxes.map(e => Math.round(e.getBoundingClientRect().top)),
        cardWidths: cards.map(c => c.getBoundingClientRect().width),
        viewTops: deepAll('.bpe-view', main).filter(shown).map(v => Math.round(v.getBoundingClientRect().top)),
        counts: (deepText(main).match(/[\\d,]+ tokens · [\\d.]+ bytes\\/token/g) || []),
    };
}"""
)

PAGES = {
    "learn": "learn?present=1",
    "playground": "?present=1",
    "merges": "merges?present=1&step=40",
    "compare": "compare?present=1&cmp=bpe,r50k_base,cl100k_base",
    "insights-genealogy": "insights?present=1&view=genealogy",
    "insights-diff": "insights?present=1&view=diff",
    "encode": "encode?present=1&word=naive%20caf%C3%A9",
}


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_is_laid_out_for_a_projector(browser, server, name):
    """Issue 32.3: at 1280x720 with ``present=1`` every page opens with the sidebar collapsed, every token column
    at one size (server-drawn and live), Encode's titles on one line over aligned columns, Insights' cards side by
    side (not one card stretched over the width)."""
    ctx, pg = open_at(browser, server, PAGES[name], "[data-testid=stMain] h1, [data-testid=stMain] h2")
    try:
        selector = {"encode": ".enc-piece", "insights-diff": "[data-testid=stMetric]"}.get(name, ".bpe-view .tk")
        pg.wait_for_selector(selector, timeout=90_000)  # a production file may still be loading
        pg.wait_for_timeout(1500)
        wait_idle(pg)
        got = pg.evaluate(LAYOUT)
        screenshot(pg, f"present-page-{name}-1280x720")
        assert got["sidebar"] < 1, got  # collapsed: the page has the whole width
        assert got["content"] >= 1100, got
        if name == "encode":
            assert got["chipSizes"] == [20.0], got
            assert len(got["titleLines"]) == 3 and all(n < 1.5 for n in got["titleLines"]), got
            assert len(got["boxTops"]) == 3 and max(got["boxTops"]) - min(got["boxTops"]) <= 1, got
        elif name == "insights-diff":
            assert len(got["cardWidths"]) == 3 and max(got["cardWidths"]) < got["content"] / 2, got
        else:
            assert got["tokens"] > 0 and got["tokenSizes"] == [22.5], got
            assert set(got["byteSizes"]) <= {16.5}, got  # a character's byte pieces: 11 px x 1.5, as in live views
        if name == "compare":  # the trained BPE's live column and the production columns drawn on the server
            assert got["liveTokens"] > 0 and got["serverTokens"] > 0, got
            assert len(got["viewTops"]) == 3 and max(got["viewTops"]) - min(got["viewTops"]) <= 4, got  # aligned
            assert len(got["counts"]) == 3, got  # each column says its count
            # the picker, folded into one button on a projector, still changes the choice
            pg.get_by_role("button", name="Tokenizers: BPE, GPT-2 (r50k_base), GPT-4 (cl100k_base)").click()
            pg.get_by_role("button", name="GPT-4o (o200k_base)").click()
            pg.wait_for_function("() => new URL(location.href).searchParams.get('cmp')?.includes('o200k_base')")
            pg.keyboard.press("Escape")
            pg.wait_for_timeout(800)
            wait_idle(pg)
            pg.get_by_role("button", name="Tokenizers: BPE, GPT-2 (r50k_base), GPT-4 (cl100k_base), GPT-4o").wait_for()
            assert len(pg.evaluate(LAYOUT)["counts"]) == 4
        if name == "insights-genealogy":
            assert len(got["cardWidths"]) == 4 and max(got["cardWidths"]) < got["content"] / 3, got
    finally:
        ctx.close()
