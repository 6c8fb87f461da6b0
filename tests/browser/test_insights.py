"""Real browser: the Insights page opened from a link, in Debian's Chromium."""

from __future__ import annotations

import pytest

from tests.browser.helpers import screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_insights_link_opens_tab_and_colours(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1400})
    pg = context.new_page()
    try:
        pg.goto(server + "/insights?view=genealogy&colour=rank&sample=english")
        pg.wait_for_selector(".js-plotly-plot", timeout=90_000)
        wait_idle(pg)
        assert "colour=rank" in pg.url and "view=genealogy" in pg.url  # the link is kept and completed
        assert "vocab=1000" in pg.url
        screenshot(pg, "insights-genealogy")
        assert pg.get_by_role("tab", selected=True).inner_text().strip() == "Token genealogy"
        pg.goto(server + "/insights?view=scripts&sample=multilingual")
        pg.wait_for_selector(".js-plotly-plot", timeout=90_000)
        wait_idle(pg)
        screenshot(pg, "insights-scripts")
        assert pg.get_by_role("tab", selected=True).inner_text().strip() == "Per-script breakdown"
    finally:
        context.close()
