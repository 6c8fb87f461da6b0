"""End to end in Debian's Chromium: one user's path through the app, checked against the engine and tiktoken.

Paste a multilingual paragraph, move the slider, switch algorithm, play the
merges, compare with GPT-2 and cl100k; then paste what browsers make of odd
input.  Screenshots of each page go to the git-ignored ``artifacts/`` folder.
"""

from __future__ import annotations

import re

import pytest

from bpe_core import train_bpe, train_wordpiece
from tests.browser.helpers import deep, screenshot, wait_idle
from tests.conftest import unmark_whitespace

pytestmark = pytest.mark.browser

PARAGRAPH = (
    "Tokenizers cut text into pieces. Les tokeniseurs découpent le texte en morceaux; "
    "Tokenizer zerlegen Text in Stücke. Токенизаторы режут текст на части. "
    "分词器把文本切成小块。トークナイザーはテキストを分割します。 "
    "Emoji too: 👩‍💻 codes, 🏳️‍🌈 waves, 👍🏽 agrees. Numbers: 3.14159 + 2,718 = 5,859.59.\n"
    "Tokenizers cut text into pieces, again and again: the same words, the same merges."
)


def _tokens(pg, scope: str = ".bpe-view") -> list[str]:
    return pg.eval_on_selector_all(f"{scope} .tk", "els => els.map(e => e.textContent)")


def _metric(pg, label: str) -> str:
    # the Playground's counts are drawn by its live view (ui/live_view)
    box = pg.locator(".bpe-live .live-card").filter(has=pg.get_by_text(label, exact=True)).first
    return box.locator(".live-card-v").inner_text()


def _wait_tokens(pg, n: int, timeout: int = 60_000) -> None:
    pg.wait_for_function(deep("n => deepAll('.bpe-view .tk').length === n"), arg=n, timeout=timeout)
    wait_idle(pg)


def _paste(pg, text: str) -> None:
    pg.get_by_text("Paste", exact=True).click()
    box = pg.get_by_label("Your text")
    box.fill(text)
    box.press("Control+Enter")


def _nav(pg, title: str) -> None:
    pg.locator("[data-testid=stSidebarNav] a").filter(has_text=title).first.click()


def test_a_users_path_through_the_app(page, tiktoken_official):
    pg = page
    pg.set_viewport_size({"width": 1400, "height": 1800})
    bpe = train_bpe(PARAGRAPH, 1000, ["<|endoftext|>"])

    # 1. paste: the paragraph is tokenized in colour, counts exact
    _paste(pg, PARAGRAPH)
    full = bpe.encode(PARAGRAPH)
    _wait_tokens(pg, len(full))
    assert unmark_whitespace("".join(_tokens(pg))) == PARAGRAPH
    assert _metric(pg, "Tokens") == f"{len(full):,}"
    assert _metric(pg, "Bytes (UTF-8)") == f"{len(PARAGRAPH.encode()):,}"
    screenshot(pg, "e2e-1-pasted")

    # 2. the slider: Home = no merges (one token per byte), then three sizes up
    thumb = pg.get_by_role("slider").first
    thumb.focus()
    thumb.press("Home")
    _wait_tokens(pg, len(PARAGRAPH.encode()))
    for k in range(1, 4):  # one size at a time: each move reruns the page
        thumb.press("ArrowRight")
        want = bpe.with_vocab_size(bpe.min_vocab_size + k).encode(PARAGRAPH)
        _wait_tokens(pg, len(want))
    assert _metric(pg, "Tokens") == f"{len(want):,}"
    screenshot(pg, "e2e-2-slider")

    # 3. WordPiece: re-tokenized, continuations drawn joined to their word
    pg.get_by_text("WordPiece", exact=True).click()
    wp = train_wordpiece(PARAGRAPH, 1000)
    _wait_tokens(pg, len(wp.encode(PARAGRAPH)))
    assert _metric(pg, "Tokens") == f"{len(wp.encode(PARAGRAPH)):,}"
    vocab = wp.vocab
    pieces = [vocab[i] for i in wp.encode(PARAGRAPH)]
    assert pg.locator(".bpe-view .tk.cont").count() == sum(p.startswith("##") for p in pieces)
    screenshot(pg, "e2e-3-wordpiece")
    pg.get_by_text("Byte-level BPE", exact=True).click()
    _wait_tokens(pg, len(full))  # back to BPE at full size: the cached tokenizer, no retraining

    # 4. Merges: press play and watch the step advance, on the pasted text
    _nav(pg, "Merges")
    pg.wait_for_selector(".merge-card", timeout=60_000)
    wait_idle(pg)
    first = pg.locator(".merge-card .no").inner_text()
    pg.get_by_role("button", name="Play").click()
    pg.wait_for_function(
        deep("t => { const c = deepOne('.merge-card .no'); return c && c.textContent !== t; }"),
        arg=first,
        timeout=30_000,
    )
    pg.get_by_role("button", name="Pause").click()
    wait_idle(pg)
    step = int(re.search(r"\d+", pg.locator(".merge-card .no").inner_text()).group())
    assert step > int(re.search(r"\d+", first).group())
    shown = pg.eval_on_selector_all(".bpe-view .tk.hl", "els => els.map(e => e.textContent)")
    assert shown  # the just-merged pair is highlighted in the pasted text
    screenshot(pg, "e2e-4-merges")

    # 5. Compare: our BPE, GPT-2 and cl100k side by side, counts equal to tiktoken's
    _nav(pg, "Compare")
    pg.wait_for_function(deep("() => deepAll('.bpe-view').length === 3"), timeout=90_000)
    wait_idle(pg)
    # our column is drawn in the browser (it follows the slider live): its tokens come once its data is decoded
    pg.wait_for_function(deep("() => deepAll('.bpe-view').every(v => v.querySelector('.tk'))"))
    want = {
        "ours": len(full),
        "gpt2": len(tiktoken_official("r50k_base").encode(PARAGRAPH)),
        "cl100k": len(tiktoken_official("cl100k_base").encode(PARAGRAPH)),
    }
    body = pg.evaluate(deep("() => deepText(document.querySelector('[data-testid=stMain]'))"))
    for n in want.values():
        assert f"{n:,} tokens" in body
    views = pg.locator(".bpe-view")
    counts = [len(views.nth(i).locator(".tk").all()) for i in range(3)]
    assert sorted(counts) == sorted(want.values())
    screenshot(pg, "e2e-5-compare")


def test_odd_input_pasted_in_the_browser(page):
    pg = page
    # An unpaired surrogate cannot travel to the server: the browser's UTF-8 encoder sends U+FFFD.
    # NUL, a combining accent, right-to-left text and a ZWJ family arrive as typed.
    typed = "half \ud83d emoji, NUL \x00 byte, e\u0301, שלום, 👨\u200d👩\u200d👧"
    received = typed.replace("\ud83d", "\ufffd")
    _paste(pg, typed)
    tok = train_bpe(received, 1000, ["<|endoftext|>"])
    _wait_tokens(pg, len(tok.encode(received)))
    assert pg.locator("[data-testid=stException]").count() == 0
    assert _metric(pg, "Characters") == f"{len(received):,}"
    # NUL is drawn as the visible symbol ␀, never as nothing
    assert unmark_whitespace("".join(_tokens(pg))).replace("␀", "\x00") == received
    assert pg.get_by_label("Your text").input_value() == received  # the user's text is still there
    screenshot(pg, "e2e-odd-input")
