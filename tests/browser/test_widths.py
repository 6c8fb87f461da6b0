"""Nothing cut off at 1280, 1440 and 1920 px (issue 17.8): Playground, Merges and every Insights tab.

For each page, opened at 1920 px and then narrowed to 1440 and 1280, at each
width: no element of the main area is wider than the area that shows it
without a scrollbar (tables fit or wrap, charts fit their column, the coloured
text wraps), and nothing reaches past the main area's right edge.  Screenshots of each go to ``artifacts/``.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import deep, screenshot, wait_idle

pytestmark = pytest.mark.browser

WIDTHS = (1280, 1440, 1920)
INSIGHTS_TABS = ("genealogy", "diff", "heldout", "scripts", "pretok", "unused")


def overflow(pg) -> list[str]:
    """Elements of the main area that are cut: wider than their own box (scrolling) or past the main area."""
    return pg.evaluate(
        deep(
            """() => {
        const main = document.querySelector('[data-testid=stMain]');
        const right = main.getBoundingClientRect().right + 1;
        const bad = [];
        // a data frame's resize handle: an invisible 20 px square hung 10 px past its bottom-right corner
        // (it widens the row of a right-hand column without cutting anything); not measured
        const handles = [...main.querySelectorAll('[data-testid=stDataFrameResizable] div[style*="se-resize"]')];
        for (const h of handles) h.style.display = 'none';
        const sel = 'table, [data-testid=stDataFrame], [data-testid=stTable], .js-plotly-plot, .bpe-view, '
                  + '[data-testid=stMetric], [data-testid=stHorizontalBlock], [data-testid=stMarkdownContainer], '
                  + '[data-testid=stCaptionContainer], .stHtml, [data-testid=stExpander], .merge-card';
        for (const e of deepAll(sel, main)) {  // the live view's parts too (in its shadow root)
            const r = e.getBoundingClientRect();
            if (r.width === 0 || e.closest('[data-testid=stExpander] details:not([open])')) continue;
            const name = (e.getAttribute('data-testid') || e.className || e.tagName).toString().slice(0, 40);
            if (r.right > right) bad.push(`${name} ends at ${Math.round(r.right)} > ${Math.round(right)}`);
            if (name === 'stDataFrame') {  // a canvas grid: its columns are cut when its scroller scrolls sideways
                const sc = e.querySelector('.dvn-scroller');
                if (sc && sc.scrollWidth > sc.clientWidth + 2)
                    bad.push(`dataframe columns cut: ${sc.scrollWidth} > ${sc.clientWidth}`);
                continue;
            }
            const style = getComputedStyle(e);
            const scrolls = ['auto', 'scroll'].includes(style.overflowX);
            if (!scrolls && e.scrollWidth > e.clientWidth + 2 && e.tagName !== 'TABLE')
                bad.push(`${name} cut: ${e.scrollWidth} > ${e.clientWidth}: ${e.innerText.slice(0, 60)}`);
            if (e.tagName === 'TABLE' && e.parentElement && e.getBoundingClientRect().width
                    > e.parentElement.getBoundingClientRect().width + 2)
                bad.push(`table wider than its box`);
        }
        for (const h of handles) h.style.display = '';
        return bad;
    }"""
        )
    )


def settle(pg) -> None:
    pg.wait_for_timeout(800)
    wait_idle(pg, 90_000)
    pg.wait_for_timeout(400)


PAGES = [("", ".bpe-view .tk"), ("merges", ".merge-card")] + [
    (f"insights?view={v}", "[data-testid=stTabs]") for v in INSIGHTS_TABS
]


@pytest.mark.parametrize(("path", "selector"), PAGES)
def test_nothing_is_cut_off(browser, server, path, selector):
    """One load at the widest width, then the window narrowed to each narrower one: nothing cut at any.

    Narrowing the open page, as a teacher does moving a window to the projector, is the strict way round: a
    table or chart that did not follow the window would now be too wide (and it saves two page loads a page).
    """
    widths = sorted(WIDTHS, reverse=True)
    ctx = browser.new_context(viewport={"width": widths[0], "height": 900})
    pg = ctx.new_page()
    try:
        pg.goto(f"{server}/{path}")
        pg.wait_for_selector(selector, timeout=90_000)
        for width in widths:
            pg.set_viewport_size({"width": width, "height": 900})
            settle(pg)
            screenshot(pg, f"width-{width}-{path.replace('?view=', '-') or 'playground'}")
            assert overflow(pg) == [], f"/{path} at {width} px"
    finally:
        ctx.close()


SHOT_PAGES = {
    "playground": ("", ".bpe-view .tk"),
    "merges": ("merges", ".merge-card"),
    "compare": ("compare", ".bpe-view .tk"),
    "insights": ("insights", "[data-testid=stTabs]"),
    "encode": ("encode", "[data-testid=stMain] h1"),
}
SHOT_SIZES = ((390, 844), (1280, 720), (1440, 900))

PAGE_FITS = """() => {
    const main = document.querySelector('[data-testid=stMain]');
    return {page: document.documentElement.scrollWidth, window: innerWidth,
            main: main.scrollWidth, mainBox: main.clientWidth};
}"""


@pytest.mark.parametrize("name", SHOT_PAGES)
def test_screenshots_of_every_page_at_phone_projector_and_desktop_width(browser, server, name):
    """Screenshots (the first screen and the whole page) at 390x844, 1280x720 and 1440x900 into ``artifacts/``.

    At each size the page itself never scrolls sideways: wide content wraps or scrolls inside its own box.
    """
    path, selector = SHOT_PAGES[name]
    for width, height in SHOT_SIZES:
        ctx = browser.new_context(viewport={"width": width, "height": height})
        pg = ctx.new_page()
        try:
            pg.goto(f"{server}/{path}")
            pg.wait_for_selector(selector, timeout=120_000)
            settle(pg)
            screenshot(pg, f"page-{name}-{width}x{height}")  # the first screen
            fits = pg.evaluate(PAGE_FITS)
            assert fits["page"] <= fits["window"] and fits["main"] <= fits["mainBox"], (name, width, fits)
            tall = pg.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
            pg.set_viewport_size({"width": width, "height": min(max(tall, height), 12_000)})
            pg.wait_for_timeout(600)
            screenshot(pg, f"page-{name}-{width}-full")
        finally:
            ctx.close()
