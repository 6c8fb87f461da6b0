"""Real browser: the Merges and Encode pages in Debian's Chromium."""

from __future__ import annotations

import pytest

from bpe_core import train_bpe
from tests.browser import screenshot
from tests.conftest import sample
from ui.render import readable

pytestmark = pytest.mark.browser


def _card(pg) -> str:
    return pg.locator(".merge-card .no").inner_text()


def _wait_highlight(pg, token: str) -> None:
    """Wait until the coloured text has highlighted tokens and every one of them reads ``token``."""
    pg.wait_for_function(
        """t => { const els = [...document.querySelectorAll('.bpe-view .tk.hl')];
                  return els.length > 0 && els.every(e => e.textContent === t); }""",
        arg=token,
        timeout=30_000,
    )


def _goto(pg, server, path: str, selector: str) -> None:
    pg.goto(f"{server}/{path}")
    pg.wait_for_selector(selector, timeout=60_000)


def test_merges_page_steps_and_plays(page, server):
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    page.set_viewport_size({"width": 1400, "height": 2300})
    _goto(page, server, "merges", ".merge-card")
    assert _card(page) == "Merge #1"
    hl = page.eval_on_selector_all(".bpe-view .tk.hl", "els => els.map(e => e.textContent)")
    assert hl and set(hl) == {readable(tok.trace[0].merged)}
    screenshot(page, "merges-step-1")

    page.get_by_role("button", name="Next").click()
    page.wait_for_function(
        "() => document.querySelector('.merge-card .no')?.textContent === 'Merge #2'", timeout=90_000
    )
    _wait_highlight(page, readable(tok.trace[1].merged))  # the text follows the card

    # jump through the table: search a merge number and click its row
    box = page.get_by_role("textbox", name="Find a merge")
    box.fill("7")
    box.press("Enter")
    page.wait_for_function("() => document.body.innerText.includes('merges match')", timeout=30_000)
    page.locator("[data-testid=stDataFrame]").last.click(position={"x": 20, "y": 55})
    page.wait_for_function(
        "() => document.querySelector('.merge-card .no')?.textContent === 'Merge #7'", timeout=90_000
    )
    _wait_highlight(page, readable(tok.trace[6].merged))
    screenshot(page, "merges-step-7-tie")

    # play: the step moves on by itself; pause: it stays
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(
        "() => ['Merge #9', 'Merge #10', 'Merge #11'].includes(document.querySelector('.merge-card .no')?.textContent)",
        timeout=30_000,
    )
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Play").wait_for(timeout=30_000)
    screenshot(page, "merges-paused")


def test_encode_page_shows_each_merge(page, server):
    _goto(page, server, "encode", ".enc-steps")
    box = page.get_by_role("textbox", name="Word or phrase")
    box.fill("<b>naïve</b>")
    box.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.enc-piece .head')].some(e => e.textContent.includes('naïve'))",
        timeout=60_000,
    )
    page.wait_for_function("() => document.querySelectorAll('.enc-steps').length === 3", timeout=60_000)
    assert page.locator(".enc-steps b").count() == 0  # the typed markup is text
    assert page.locator(".enc-tok.new").count() > 0
    screenshot(page, "encode-steps")
