"""Fully offline (issue 32.7), in Debian's Chromium: no page asks any host but the app's for anything.

Every request the browser makes goes through a Playwright route: requests to the app's own host go on,
any other is refused and counted.  One visitor walks every page (every lesson, every Insights tab, the
Merges player, Compare with every production tokenizer offered) and the count must stay at zero, while
the icons still draw: Streamlit's own Material Symbols font is among the fonts the page loaded.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.browser.helpers import wait_idle
from ui import catalogue
from ui.insights_tabs import VIEWS
from ui.lessons.catalogue import slugs

pytestmark = pytest.mark.browser


def _settle(pg) -> None:
    pg.wait_for_selector("[data-testid=stMain]", timeout=60_000)
    pg.wait_for_timeout(800)
    wait_idle(pg, 120_000)
    pg.wait_for_timeout(400)
    wait_idle(pg, 120_000)


def test_no_request_leaves_the_machine_on_any_page(browser, server):
    host = urlparse(server).netloc
    outside: list[str] = []
    local = [0]

    def route(r) -> None:
        url = r.request.url
        if url.startswith(("data:", "blob:", "about:")) or urlparse(url).netloc == host:
            local[0] += 1
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.route("**/*", route)
    try:
        pg = ctx.new_page()
        visits = [f"learn?lesson={slug}" for slug in slugs()]
        visits += ["", "?algo=wordpiece", "?algo=unigram", "merges", "merges?algo=unigram", "encode"]
        visits += [f"insights?view={view}" for view in VIEWS]
        visits += ["compare?cmp=" + ",".join(catalogue.entries())]
        for path in visits:
            pg.goto(f"{server}/{path}")
            _settle(pg)
        pg.goto(f"{server}/merges")
        _settle(pg)
        pg.get_by_role("button", name="Play").first.click()
        pg.wait_for_timeout(1500)
        fonts = pg.evaluate("() => [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)")
        assert any("Material Symbols" in f for f in fonts), fonts  # the icons draw, from the app's own font file
        assert local[0] > 50
        assert outside == [], f"{len(outside)} requests to other hosts: {sorted(set(outside))}"
    finally:
        ctx.close()
