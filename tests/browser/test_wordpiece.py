"""Real browser: WordPiece pieces of one word are drawn touching, words apart."""

from __future__ import annotations

import pytest

from bpe_core.wordpiece import train_wordpiece
from tests.browser.helpers import deep, screenshot
from tests.conftest import sample

pytestmark = pytest.mark.browser


def test_wordpiece_continuations_touch_their_word(page):
    text = sample("english")
    page.get_by_text("WordPiece", exact=True).click()
    page.wait_for_function(
        deep("() => deepOne('.bpe-legend') && deepOne('.bpe-legend').textContent.includes('##')"),
        timeout=60_000,
    )
    # the sample is learned whole at full size; drag the slider to the left third to see pieces
    track = page.locator(".bpe-live .live-slider")
    box = track.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
    page.wait_for_selector(".bpe-view .tk.cont", timeout=60_000)
    full = train_wordpiece(text, 1000)
    size = int(track.input_value())
    spans = full.with_vocab_size(size).token_spans(text)
    assert page.locator(".bpe-view .tk").count() == len(spans)
    # each continuation box starts where the box before it ends (same line): the word reads as one
    gaps = page.eval_on_selector_all(
        ".bpe-view .tk.cont",
        """els => els.slice(0, 50).map(e => {
            const a = e.previousElementSibling.getBoundingClientRect(), b = e.getBoundingClientRect();
            return Math.abs(a.top - b.top) < 2 ? b.left - a.right : null;
        }).filter(g => g !== null)""",
    )
    assert gaps and all(abs(g) <= 1.5 for g in gaps)
    # while words are separated by the drawn whitespace
    assert page.locator(".bpe-view .gap").count() > 0
    page.locator(".bpe-view .tk.cont").first.hover()
    tip = page.locator(".bpe-live .live-tip").inner_text()
    assert "token ##" in tip
    screenshot(page, "playground-wordpiece")
