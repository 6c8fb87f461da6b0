"""User strings reach the screen as text in every channel (issue 21, class 7), in Debian's Chromium.

Names and text built to become markup -- ``**x**![p](http://127.0.0.1:9/pwn.png)``
(bold and a tracking pixel in Markdown), ``<i>x</i>`` and ``<a href=x>y</a>``
(HTML, which Plotly renders in its labels too) -- go through every channel a
user controls: pasted text (so the learned token strings carry them), a custom
pattern, a special token, Compare's extra-sizes box, an uploaded text file's
name, an imported tokenizer's file name and its own ``name``.  After each step
no element the user did not ask for exists (no ``<img>``, no ``<b>``/``<strong>``
holding ``x``, no ``<i>``/``<em>`` holding ``x``, no ``<a>`` holding ``y`` or
pointing at ``x``, no italic SVG text from Plotly), the typed strings are on
screen as typed, and nothing ever requests ``127.0.0.1:9``.
"""

from __future__ import annotations

import json

import pytest

from bpe_core import train_bpe
from tests.browser.helpers import screenshot, wait_idle

pytestmark = pytest.mark.browser

PIXEL = "**x**![p](http://127.0.0.1:9/pwn.png)"
ITALIC = "<i>x</i>"
LINK = "<a href=x>y</a>"
TEXT = f"{PIXEL} {ITALIC} {LINK} and some words around them.\n" * 40


def settle(pg) -> None:
    pg.wait_for_timeout(600)
    wait_idle(pg)
    pg.wait_for_timeout(300)
    wait_idle(pg)


def injected(pg) -> list[str]:
    """Elements that user text would have created, anywhere in the app (sidebar, main, Plotly SVG)."""
    return pg.evaluate(
        """() => {
        const bad = [];
        const app = document.querySelector('[data-testid=stApp]');
        for (const e of app.querySelectorAll('img')) bad.push('img ' + e.getAttribute('src'));
        for (const e of app.querySelectorAll('b, strong'))
            if (e.textContent.trim() === 'x') bad.push('bold x');
        for (const e of app.querySelectorAll('i, em'))
            if (e.textContent.trim() === 'x') bad.push('italic x');
        for (const e of app.querySelectorAll('a'))
            if (e.textContent.trim() === 'y' || (e.getAttribute('href') || '').endsWith('/x')
                || e.getAttribute('href') === 'x' || (e.getAttribute('href') || '').includes('127.0.0.1:9'))
                bad.push('link ' + e.outerHTML.slice(0, 80));
        for (const e of app.querySelectorAll('svg a')) bad.push('svg link ' + e.textContent);
        for (const e of app.querySelectorAll('svg tspan'))
            if ((e.getAttribute('style') || '').includes('italic') && e.textContent === 'x') bad.push('svg italic x');
        return bad;
    }"""
    )


def shown(pg) -> str:
    """The app's visible text, without the invisible word joiners that keep autolinks from forming."""
    return pg.locator("[data-testid=stApp]").inner_text().replace("\u2060", "")


def check(pg, step: str, *expected_text: str) -> None:
    settle(pg)
    assert injected(pg) == [], f"after {step}"
    text = shown(pg)
    for s in expected_text:
        assert s in text, f"after {step}: {s!r} is not shown as text"
    screenshot(pg, f"hostile-{step.replace(' ', '-')}")


def _nav(pg, title: str) -> None:
    pg.locator("[data-testid=stSidebarNav] a").filter(has_text=title).first.click()
    settle(pg)


def _sidebar_radio(pg, option: str) -> None:
    pg.locator("[data-testid=stSidebar] label").filter(has_text=option).first.click()
    settle(pg)


def test_hostile_strings_are_text_in_every_channel(page, tmp_path):
    pg = page
    pg.set_viewport_size({"width": 1400, "height": 1600})
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url) if "127.0.0.1:9/" in r.url else None)

    # 1. pasted text: drawn as text, and its token strings (merges of '<', 'i', '>', '*', ...) on every page
    _sidebar_radio(pg, "Paste")
    box = pg.get_by_label("Your text", exact=True)
    box.fill(TEXT)
    box.press("Control+Enter")
    pg.wait_for_selector(".bpe-view .tk", timeout=60_000)
    check(pg, "pasted text")
    _nav(pg, "Merges")
    pg.wait_for_selector(".merge-card", timeout=60_000)
    pg.get_by_role("button", name="Last").click()
    check(pg, "merges page")
    for chart in pg.locator(".js-plotly-plot").all()[:2]:  # hover labels carry merged token strings
        chart.hover()
        pg.wait_for_timeout(300)
        assert injected(pg) == [], "hovering a merges chart"
    _nav(pg, "Insights")
    check(pg, "insights genealogy")

    # 2. a custom pattern (shown in the training details) and an invalid one (its error)
    _nav(pg, "Playground")
    pg.get_by_role("combobox", name="Pre-tokenization pattern", exact=True).click()
    pg.get_by_role("option", name="Custom…", exact=True).click()
    settle(pg)
    pattern = pg.get_by_label("Custom pattern (regex module syntax)", exact=True)
    pattern.fill(r"<i>x</i>|<a href=x>y</a>|\*\*x\*\*|\S+|\s+")
    pattern.press("Enter")
    settle(pg)
    pg.locator("[data-testid=stExpander] summary").filter(has_text="How this tokenizer was trained").click()
    check(pg, "custom pattern")
    pattern.fill(f"({ITALIC}[{PIXEL}")
    pattern.press("Enter")
    check(pg, "invalid pattern", "previous pattern stays in force")

    # 3. a special token: WordPiece without [UNK] lists the special tokens in its error
    pg.get_by_role("combobox", name="Pre-tokenization pattern", exact=True).click()
    pg.get_by_role("option", name="GPT-2 (r50k_base)", exact=True).click()
    settle(pg)
    _sidebar_radio(pg, "WordPiece")
    specials = pg.get_by_role("combobox", name="Special tokens", exact=True)
    for token in (LINK, ITALIC):
        specials.fill(token)
        specials.press("Enter")
        settle(pg)
    pg.keyboard.press("Escape")
    pg.get_by_role("button", name="Remove [UNK]").click()
    check(pg, "special tokens", LINK, ITALIC)
    _sidebar_radio(pg, "Byte-level BPE")

    # 4. Compare's extra-sizes box echoes what was typed
    _nav(pg, "Compare")
    pg.wait_for_selector(".bpe-view", timeout=90_000)
    pg.get_by_text("More BPE variants").click()
    sizes = pg.get_by_role("combobox", name="BPE at other vocabulary sizes (the sidebar's pattern)", exact=True)
    for typed in (PIXEL, LINK):
        sizes.fill(typed)
        sizes.press("Enter")
        settle(pg)
    check(pg, "compare sizes", PIXEL, LINK)

    # 5. an uploaded text file's name, in the rejection message
    _nav(pg, "Playground")
    _sidebar_radio(pg, "Upload")
    upload = pg.locator("[data-testid=stSidebar] input[type=file]").first
    upload.set_input_files({"name": f"{PIXEL}{ITALIC}.txt", "mimeType": "text/plain", "buffer": b"caf\xe9 au lait"})
    check(pg, "bad upload name", f"{PIXEL}{ITALIC}.txt")
    upload.set_input_files({"name": f"{LINK}.txt", "mimeType": "text/plain", "buffer": TEXT.encode()})
    pg.wait_for_selector(".bpe-view .tk", timeout=60_000)
    check(pg, "good upload name")

    # 6. an imported tokenizer: its file name and its own name, in the sidebar, the main area, Compare and charts
    tok = train_bpe(TEXT, 300, ["<|endoftext|>"]).to_dict()
    tok["name"] = f"{ITALIC} {LINK}"
    pg.locator("[data-testid=stSidebar] label").filter(has_text="Import a file").first.click()
    settle(pg)
    files = pg.locator("[data-testid=stSidebar] input[type=file]").last
    files.set_input_files({"name": f"{PIXEL}.json", "mimeType": "application/json", "buffer": json.dumps(tok).encode()})
    pg.wait_for_selector(".bpe-view .tk", timeout=60_000)
    check(pg, "imported file", f"{PIXEL}.json")
    _nav(pg, "Compare")
    pg.wait_for_selector(".bpe-view", timeout=90_000)
    check(pg, "compare with the import", f"{ITALIC} {LINK}")
    for chart in pg.locator(".js-plotly-plot").all():
        chart.hover()
        pg.wait_for_timeout(300)
        assert injected(pg) == [], "hovering a compare chart"
    _nav(pg, "Insights")
    check(pg, "insights with the import")

    assert requests == []  # the tracking pixel was never fetched
