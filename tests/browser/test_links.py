"""Links equal the screen (issues 17.2 and 32.2), in Debian's Chromium.

One user walks through more than twenty interactions on every page -- samples,
paste, algorithm, pattern, sizes, the slider, colours, whitespace, special
tokens, drawing on the server, the Merges step (Next, Previous, Play, Pause),
its table's search and "All merges", Compare's choices, highlight, other text
and pattern variants, Encode's word and tokenizers, a lesson and its example,
an Insights tab, an upload -- and after each one the address bar is opened in
a fresh browser context (a new session of the same server).  That second
browser must show the same page, tokens, counts, slider positions, merge card,
comparison, tab and widget states (text boxes, toggles, radios, menus, pills),
and keep the same address.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.helpers import deep, screenshot, wait_idle

pytestmark = pytest.mark.browser

OTHER = "Zürich, 2024: another text to compare on, typed and never sent with Ctrl+Enter."
PASTED = "Links should reopen exactly what you saw: the same tokens, the same counts, the same sizes. " * 3


def settle(pg) -> None:
    """Wait for the rerun an interaction started (and any that follows it) to finish."""
    pg.wait_for_timeout(600)
    wait_idle(pg)
    pg.wait_for_timeout(300)
    wait_idle(pg)


def observe(pg) -> dict:
    """What the screen shows: page, token texts, metrics, sliders, merge card, compare views, open tab."""
    return pg.evaluate(
        deep(
            """() => {
        const txt = (sel) => deepAll(sel).map(e => e.textContent);
        const main = document.querySelector('[data-testid=stMain]');
        return {
            path: location.pathname,
            views: deepAll('.bpe-view').map(v => [...v.querySelectorAll('.tk')]
                       .map(e => e.textContent).join('\\u2502')),
            metrics: deepAll('[data-testid=stMetric], .bpe-live .live-card')
                       .map(m => m.innerText),
            sliders: deepAll('[data-testid=stSlider] input[type=range], .bpe-live input[type=range]').map(s => s.value),
            card: txt('.merge-card .no'),
            tab: txt('[role=tab][aria-selected=true]'),
            counts: (main ? deepText(main) : '').match(/[\\d,]+ tokens · [^\\n]*/g) || [],
            warnings: (document.body.innerText.match(/[^\\n]*Session State API[^\\n]*/g) || []),
            // widget states: text boxes, toggles/radios, menus (their chips), pills
            boxes: [...document.querySelectorAll('textarea, input[type=text], input[type=number]')]
                       .filter(e => e.getAttribute('role') !== 'combobox')
                       .map(e => (e.getAttribute('aria-label') || '') + '=' + e.value),
            checks: [...document.querySelectorAll('input[type=checkbox], input[type=radio]')]
                       .map(e => (e.checked ? '1' : '0')).join(''),
            menus: [...document.querySelectorAll('[data-testid=stSelectbox], [data-testid=stMultiSelect]')]
                       .map(e => e.textContent + '=' + [...e.querySelectorAll('input')].map(i => i.value).join(',')),
            pills: [...document.querySelectorAll('[data-testid=stButtonGroup] button[aria-pressed=true]')]
                       .map(b => b.innerText),
        };
    }"""
        )
    )


def query(url: str) -> dict:
    return {k: v[-1] for k, v in parse_qs(urlparse(url).query, keep_blank_values=True).items()}


def reopen_and_compare(browser, pg, what: str) -> dict:
    """Open ``pg``'s address in a fresh context; assert it shows what ``pg`` shows; return the observation."""
    settle(pg)
    url, seen = pg.url, observe(pg)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        other = ctx.new_page()
        other.goto(url)
        other.wait_for_selector("[data-testid=stMain]", timeout=60_000)
        settle(other)
        if seen["views"]:
            other.wait_for_selector(".bpe-view .tk", timeout=60_000)
            settle(other)
        deadline = 60
        again = observe(other)
        while again != seen and deadline > 0:  # a slow part (a reference encoding loading) may still be drawing
            other.wait_for_timeout(1000)
            wait_idle(other)
            deadline -= 1
            again = observe(other)
        assert seen["warnings"] == [], f"after {what}: Streamlit warned about a widget default"
        for key in seen:
            assert again[key] == seen[key], f"after {what}: {key} differs\nlink: {url}"
        assert query(other.url) == query(url), f"after {what}: the reopened page rewrote its address"
    finally:
        ctx.close()
    return seen


def _select(pg, label: str, option: str) -> None:
    pg.get_by_role("combobox", name=label, exact=True).click()
    pg.get_by_role("option", name=option, exact=True).click()
    settle(pg)


def _pick(pg, label: str, option: str) -> None:
    """Add ``option`` to the multiselect ``label`` (again if a rerun closed its menu before the click)."""
    box = pg.get_by_role("combobox", name=label, exact=True)
    for attempt in range(4):
        wait_idle(pg)
        box.click()
        try:
            pg.get_by_role("option", name=option, exact=True).click(timeout=5_000)
            break
        except Exception:  # playwright's TimeoutError: a rerun closed the menu under us; try again
            pg.keyboard.press("Escape")
            if attempt == 3:
                raise
    pg.keyboard.press("Escape")
    settle(pg)


def _radio(pg, option: str) -> None:
    pg.locator("[data-testid=stSidebar] label").filter(has_text=option).first.click()
    settle(pg)


def _nav(pg, title: str) -> None:
    pg.locator("[data-testid=stSidebarNav] a").filter(has_text=title).first.click()
    settle(pg)


def test_every_interaction_leaves_a_link_that_reopens_the_same_view(page, browser, tmp_path):
    pg = page
    steps = []

    def check(what: str) -> dict:
        seen = reopen_and_compare(browser, pg, what)
        assert seen["menus"] and seen["checks"], f"after {what}: no widget states read"  # the selectors still match
        steps.append(what)
        return seen

    # the sidebar: samples, the slider, algorithm, pattern, sizes, colours, whitespace
    _select(pg, "Sample text", "Python source code")
    assert query(pg.url)["sample"] == "python"
    check("sample: Python")
    _select(pg, "Sample text", "Multilingual, CJK and emoji")
    seen = check("sample: Multilingual")
    assert query(pg.url)["size"] == seen["sliders"][0]  # the link's size is the slider's, not the last sample's

    thumb = pg.get_by_role("slider").first
    thumb.focus()
    for _ in range(3):
        thumb.press("ArrowLeft")
        settle(pg)
    seen = check("slider: three steps left")
    assert query(pg.url)["size"] == seen["sliders"][0]

    _radio(pg, "WordPiece")
    seen = check("algorithm: WordPiece")
    assert query(pg.url)["algo"] == "wordpiece" and query(pg.url)["size"] == seen["sliders"][0]
    _radio(pg, "Byte-level BPE")
    _select(pg, "Pre-tokenization pattern", "GPT-4 (cl100k_base)")
    check("pattern: cl100k")

    box = pg.get_by_label("Vocabulary size to train", exact=True)
    box.fill("600")
    box.press("Enter")
    settle(pg)
    seen = check("vocabulary size to train: 600")
    assert query(pg.url)["vocab"] == "600" and query(pg.url)["size"] == seen["sliders"][0]

    _radio(pg, "One colour per token id")
    assert query(pg.url)["colour"] == "id"
    check("colours: per id")
    pg.locator("[data-testid=stMain] label").filter(has_text="Show whitespace").first.click()
    settle(pg)
    assert query(pg.url)["ws"] == "0"
    check("whitespace off")

    # paste: the previous sample's size must not stay behind
    _radio(pg, "Paste")
    text_box = pg.get_by_label("Your text", exact=True)
    text_box.fill(PASTED)
    text_box.press("Control+Enter")
    settle(pg)
    seen = check("paste")
    q = query(pg.url)
    assert q["src"] == "paste" and q["text"] == PASTED and "sample" not in q and q["size"] == seen["sliders"][0]

    # the Merges page: Next, Next, Previous, Play then Pause
    _nav(pg, "Merges")
    pg.wait_for_selector(".merge-card", timeout=60_000)
    for button, want in (("Next", "2"), ("Prev", "1")):
        pg.get_by_role("button", name=button).click()
        settle(pg)
        assert query(pg.url)["step"] == want, f"after {button}"
        check(f"merges: {button}")
    pg.get_by_role("button", name="Play").click()
    pg.wait_for_timeout(2500)
    pg.get_by_role("button", name="Pause").click()
    settle(pg)
    seen = check("merges: play, pause")
    assert int(query(pg.url)["step"]) > 1

    # Compare: add GPT-4o
    _nav(pg, "Compare")
    pg.wait_for_selector(".bpe-view", timeout=90_000)
    pg.get_by_role("button", name="GPT-4o (o200k_base)").click()
    settle(pg)
    assert "o200k_base" in query(pg.url)["cmp"].split(",")
    seen = check("compare: GPT-4o added")
    assert "GPT-4o (o200k_base)" in seen["pills"]

    # Insights: another tab
    _nav(pg, "Insights")
    pg.get_by_role("tab", name="Vocabulary diff").click()
    settle(pg)
    assert query(pg.url)["view"] == "diff"
    check("insights: vocabulary diff")

    # issue 32.2: the settings links used to miss
    _nav(pg, "Merges")
    pg.wait_for_selector(".merge-card", timeout=60_000)
    find = pg.get_by_label("Find a merge", exact=True)
    find.fill("th")
    find.press("Enter")
    settle(pg)
    assert query(pg.url)["find"] == "th"
    check("merges: find 'th'")
    pg.locator("[data-testid=stMain] label").filter(has_text="All merges").first.click()
    settle(pg)
    assert query(pg.url)["allmerges"] == "1"
    check("merges: all merges")

    _nav(pg, "Compare")
    pg.wait_for_selector(".bpe-view", timeout=90_000)
    pg.locator("[data-testid=stMain] label").filter(has_text="Highlight words split differently").first.click()
    settle(pg)
    assert query(pg.url)["hl"] == "1"
    check("compare: highlight words split differently")
    pg.get_by_text("More BPE variants").click()
    _pick(pg, "BPE with other patterns (at the slider's size)", "GPT-2 (r50k_base)")
    assert query(pg.url)["cmppat"] == "gpt2"
    check("compare: a pattern variant")
    pg.get_by_role("radiogroup", name="Text to compare on").get_by_text("Other text").click()
    settle(pg)
    other = pg.locator('textarea[aria-label="Other text to compare on"]')
    other.fill(OTHER)
    pg.wait_for_function("t => new URL(location.href).searchParams.get('cmptext') === t", arg=OTHER, timeout=30_000)
    seen = check("compare: other text, followed as typed")
    assert any("Zürich" in v.replace("\u2502", "") for v in seen["views"])  # the columns show the other text

    _nav(pg, "Encode step by step")
    pg.wait_for_selector(".enc-piece", timeout=60_000)
    word = pg.get_by_label("Word or phrase", exact=True)
    word.fill("naïve café")
    word.press("Enter")
    settle(pg)
    assert query(pg.url)["word"] == "naïve café"
    pg.get_by_role("button", name="Remove OpenAI · GPT-2 (r50k_base)").click()
    settle(pg)
    assert query(pg.url)["enc"].split(",") == ["trained", "cl100k_base"]
    seen = check("encode: GPT-2 removed")
    assert [m for m in seen["menus"] if m.startswith("Tokenizers")] == [
        "TokenizersTrained on your textOpenAI · GPT-4 (cl100k_base)="
    ]

    _nav(pg, "Learn")
    example = pg.locator('textarea[aria-label="Your own example"]')
    example.fill("naïve 🙂")
    pg.wait_for_function("() => new URL(location.href).searchParams.get('example') === 'naïve 🙂'", timeout=30_000)
    check("learn: the lesson's example")

    _nav(pg, "Playground")
    _pick(pg, "Special tokens", "<|im_start|>")
    assert query(pg.url)["special"] == "<|endoftext|>,<|im_start|>"
    check("sidebar: a special token added")
    pg.locator("[data-testid=stSidebar] summary").filter(has_text="Advanced").click()
    pg.locator("[data-testid=stSidebar] label").filter(has_text="Draw on the server").first.click()
    settle(pg)
    assert query(pg.url)["server"] == "1"
    check("sidebar: draw on the server")

    # back to the Playground, then an upload: the link says so, and carries no other text
    _nav(pg, "Playground")
    _radio(pg, "Upload")
    upload = tmp_path / "my notes.txt"
    upload.write_text("Uploaded text is never put in a link. " * 5, encoding="utf-8")
    pg.locator("[data-testid=stSidebar] input[type=file]").first.set_input_files(str(upload))
    pg.wait_for_selector(".bpe-view .tk", timeout=60_000)
    settle(pg)
    q = query(pg.url)
    assert q["src"] == "upload" and "text" not in q and "sample" not in q
    screenshot(pg, "links-last-step")
    assert len(steps) >= 22
