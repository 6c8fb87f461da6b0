"""Real browser: the app as a user sees it, in Debian's Chromium."""

from __future__ import annotations

from itertools import pairwise

import pytest

from bpe_core import train_bpe
from tests.browser.helpers import deep, screenshot, wait_idle
from tests.conftest import sample, unmark_whitespace

pytestmark = pytest.mark.browser


def _shown_tokens(pg) -> list[str]:
    return pg.eval_on_selector_all(".bpe-view .tk", "els => els.map(e => e.textContent)")


def test_landing_page_shows_coloured_tokens(page):
    text = sample("english")
    expected = train_bpe(text, 1000, ["<|endoftext|>"]).encode(text)
    shown = _shown_tokens(page)
    assert len(shown) == len(expected)
    assert unmark_whitespace("".join(shown)) == text
    colours = page.eval_on_selector_all(
        ".bpe-view .tk", "els => els.slice(0, 40).map(e => getComputedStyle(e).backgroundColor)"
    )
    # every token is painted, and neighbours never share a colour
    assert all(c not in ("rgba(0, 0, 0, 0)", "transparent") for c in colours)
    assert all(a != b for a, b in pairwise(colours))
    # the hover tooltip carries id, kind and bytes
    page.locator(".bpe-view .tk").first.hover()
    tip = page.locator(".bpe-live .live-tip").inner_text()
    assert tip.startswith(f"id {expected[0]} · ") and "bytes " in tip
    screenshot(page, "playground")


def test_pasted_markup_is_shown_as_text_and_never_runs(page):
    hostile = 'Hi <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> </span><b>bold</b>'
    page.get_by_text("Paste", exact=True).click()
    box = page.get_by_label("Your text")
    box.fill(hostile)
    box.press("Control+Enter")
    page.wait_for_function(
        deep("() => deepAll('.bpe-view .tk').map(e => e.textContent).join('').includes('onerror')"),
        timeout=30_000,
    )
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".bpe-view img").count() == 0 and page.locator(".bpe-view b").count() == 0
    assert unmark_whitespace("".join(_shown_tokens(page))) == hostile
    screenshot(page, "playground-pasted-markup")


def test_downloaded_exports_give_the_same_ids(page, tmp_path):
    import json

    from tokenizers import Tokenizer

    from bpe_core import load_tokenizer_bytes

    text = sample("english")
    expected = train_bpe(text, 1000, ["<|endoftext|>"]).encode(text)
    page.get_by_text("Export this tokenizer").click()
    page.get_by_role("button", name="Project JSON").wait_for()
    with page.expect_download() as info:
        page.get_by_role("button", name="Hugging Face tokenizer.json").click()
    path = tmp_path / "tokenizer.json"
    info.value.save_as(path)
    assert Tokenizer.from_file(str(path)).encode(text).ids == expected
    with page.expect_download() as info:
        page.get_by_role("button", name="Project JSON").click()
    info.value.save_as(tmp_path / "own.json")
    data = (tmp_path / "own.json").read_bytes()
    assert json.loads(data)["format"] == "bpe-playground/bpe"
    assert load_tokenizer_bytes(data, "own.json").encode(text) == expected


def test_clicking_a_token_shows_how_it_was_built(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    spans = tok.token_spans(text)
    # the first drawn token that a merge made at least two levels deep (an independent check: its trace)
    index, span = next((i, s) for i, s in enumerate(spans) if s.rank is not None and s.rank > 50)
    step = tok.trace[span.rank]
    page.locator(".bpe-view .tk").nth(index).click()
    dialog = page.get_by_role("dialog")
    dialog.wait_for(timeout=30_000)
    wait_idle(page)
    body = dialog.inner_text()
    assert f"id {span.id} · merge #{span.rank + 1}" in body
    assert "Merge tree" in body
    # the tree's first level is the merged pair: both parts are listed with their ids
    assert f"id {step.left_id} · " in body and f"id {step.right_id} · " in body
    screenshot(page, "playground-token-dialog")
