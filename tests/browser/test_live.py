"""Real browser: the live view draws exactly the server's segmentation at every size, during a drag too."""

from __future__ import annotations

import html
import itertools
import re

import pytest

from bpe_core import train_bpe
from bpe_core.pretokenize import pretoken_prefix
from bpe_core.unigram import train_unigram
from bpe_core.wordpiece import train_wordpiece
from tests.browser.helpers import evaluate_json, screenshot, wait_idle
from tests.conftest import sample
from ui import render
from ui.limits import MAX_DRAW_CHARS, MAX_DRAW_TOKENS

pytestmark = pytest.mark.browser

# the tokens drawn at every size in the list, read from the DOM in one round trip
_READ_SIZES = """sizes => { const v = window.__bpeLive, s = v.slider, out = [];
  for (const k of sizes) { s.value = String(k); s.dispatchEvent(new Event('input', {bubbles: true}));
    out.push([Number(v.counts.dataset.total), Array.from(v.view.querySelectorAll('.tk'),
      e => [Number(e.dataset.id), Number(e.dataset.s), Number(e.dataset.e), e.classList.contains('partial'),
            e.textContent]), v.model.blocks ? v.model.blocks.length : 0]); }
  return out; }"""


def _visible(display: str) -> str:
    """What the server view shows of a token as text (its whitespace glyphs, its markup stripped)."""
    return html.unescape(re.sub(r"<[^>]+>", "", render.visible_text(display, True)))


def _expected(tok, k: int, drawn: str) -> list:
    spans = tok.with_vocab_size(k).token_spans(drawn)[:MAX_DRAW_TOKENS]
    return [[s.id, s.start, s.end, s.is_partial, _visible(s.display)] for s in spans]


def _check_sizes(pg, tok, drawn: str, whole: str, sizes: list[int], chunk: int = 40) -> list[int]:
    """Move the slider to each size: the drawn tokens and the total are the server's; returns the blocks drawn."""
    blocks = []
    for i in range(0, len(sizes), chunk):
        part = sizes[i : i + chunk]
        got = evaluate_json(pg, _READ_SIZES, part)
        for k, (total, tokens, drawn_blocks) in zip(part, got):
            assert tokens == _expected(tok, k, drawn), f"size {k}"
            assert total == len(tok.with_vocab_size(k).encode(whole)), f"size {k}"
            blocks.append(drawn_blocks)
    return blocks


def _live(pg) -> None:
    pg.wait_for_function("() => window.__bpeLive && window.__bpeLive.tokens && window.__bpeLive.tokens.length > 0")
    wait_idle(pg)


def _upload(pg, path) -> None:
    pg.get_by_text("Upload", exact=True).click()
    pg.locator('input[type="file"]').set_input_files(str(path))


def _long_text() -> str:
    parts = [sample(n) for n in ("english", "multilingual", "python", "numbers")]
    text = "\n\n".join(parts)
    return (text + "\n\n") * (60_000 // len(text) + 1)


def test_small_text_at_every_size_bpe(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    _live(page)
    assert page.evaluate("() => [Number(window.__bpeLive.slider.min), Number(window.__bpeLive.slider.max)]") == [
        tok.min_vocab_size,
        tok.max_vocab_size,
    ]
    _check_sizes(page, tok, text, text, list(range(tok.min_vocab_size, tok.max_vocab_size + 1)))


def test_small_text_at_every_size_wordpiece(page):
    text = sample("multilingual")
    page.get_by_text("WordPiece", exact=True).click()
    page.locator("[data-testid=stSelectbox]").filter(has_text="English").first.click() if False else None
    page.goto(page.url.split("?")[0] + "?src=sample&sample=multilingual&algo=wordpiece")
    page.wait_for_function(
        "() => window.__bpeLive && window.__bpeLive.model && window.__bpeLive.model.kind === 'wordpiece'"
    )
    wait_idle(page)
    tok = train_wordpiece(text, 1000)
    _check_sizes(page, tok, text, text, list(range(tok.min_vocab_size, tok.max_vocab_size + 1)))
    screenshot(page, "live-wordpiece")


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_20000_character_drawn_text_at_50_sizes(page, tmp_path, algorithm):
    whole = _long_text()
    path = tmp_path / "long.txt"
    path.write_text(whole, encoding="utf-8")
    if algorithm == "wordpiece":
        page.get_by_text("WordPiece", exact=True).click()
        wait_idle(page)
    elif algorithm == "unigram":  # with its own pre-tokenization (the URL may carry the previous test's pattern)
        page.goto(page.url.split("?")[0] + "?algo=unigram&pattern=sentencepiece")
        wait_idle(page, 120_000)
    _upload(page, path)
    page.wait_for_function(
        "n => window.__bpeLive && window.__bpeLive.data && window.__bpeLive.data.textChars === n",
        arg=len(whole),
        timeout=120_000,
    )
    wait_idle(page, 120_000)
    trainers = {
        "bpe": lambda: train_bpe(whole, 1000, ["<|endoftext|>"]),
        "wordpiece": lambda: train_wordpiece(whole, 1000),
        "unigram": lambda: train_unigram(whole, 1000),
    }
    tok = trainers[algorithm]()
    drawn = pretoken_prefix(whole, MAX_DRAW_CHARS, tok.pattern, tuple(tok.special_tokens))
    assert len(drawn) >= MAX_DRAW_CHARS and page.evaluate("() => window.__bpeLive.model.tm.cps.length") == len(drawn)
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    sizes = sorted({lo, hi, *range(lo, hi + 1, max(1, (hi - lo) // 60))})
    assert len(sizes) >= 50
    _check_sizes(page, tok, drawn, whole, sizes, chunk=10)


def test_dragging_redraws_before_the_mouse_is_released(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    _live(page)
    slider = page.locator(".bpe-live .live-slider")
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    before = page.evaluate("() => [window.__bpeLive.counts.dataset.total, window.__bpeLive.view.textContent]")
    page.mouse.move(box["x"] + box["width"] - 3, y)
    page.mouse.down()
    seen = []
    for frac in (0.8, 0.6, 0.4, 0.2):
        page.mouse.move(box["x"] + box["width"] * frac, y, steps=4)
        seen.append(
            page.evaluate(
                "() => [Number(window.__bpeLive.slider.value), window.__bpeLive.counts.dataset.total,"
                " window.__bpeLive.view.dataset.size, window.__bpeLive.view.querySelectorAll('.tk').length]"
            )
        )
    # mouse still down: the text and the count already follow every position
    for value, total, drawn_size, n in seen:
        assert int(drawn_size) == value
        assert int(total) == len(tok.with_vocab_size(value).encode(text)) == n
    assert seen[0][1] != before[0] and len({s[0] for s in seen}) == 4
    page.mouse.up()
    final = seen[-1][0]
    # the server hears the final size: the address bar follows
    page.wait_for_function("k => location.search.includes('size=' + k)", arg=final, timeout=30_000)
    wait_idle(page)
    assert page.evaluate("() => Number(window.__bpeLive.slider.value)") == final
    screenshot(page, "live-after-drag")


def test_keyboard_arrows_redraw_and_report(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    _live(page)
    slider = page.locator(".bpe-live .live-slider")
    slider.focus()
    slider.press("Home")
    assert page.evaluate("() => window.__bpeLive.view.querySelectorAll('.tk').length") == len(text.encode())
    for _ in range(3):
        slider.press("ArrowRight")
    k = tok.min_vocab_size + 3
    assert page.evaluate("() => Number(window.__bpeLive.counts.dataset.total)") == len(
        tok.with_vocab_size(k).encode(text)
    )
    page.wait_for_function("k => location.search.includes('size=' + k)", arg=k, timeout=30_000)


ODD = [
    '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> </span><b>bold</b> &amp; &lt;',
    "**bold** __under__ `code` [link](javascript:alert(1)) # heading\n> quote",
    "שלום עולם, مرحبا بالعالم \u200f(RTL) and back ← naïve 日本語 🙂🙃👍🏽",
    "x" * 3000 + " " + "ab" * 1500,
]


@pytest.mark.parametrize("odd", ODD, ids=["markup", "markdown", "rtl-utf8", "long-words"])
def test_odd_input_is_drawn_as_the_server_does_and_stays_text(page, odd):
    page.get_by_text("Paste", exact=True).click()
    box = page.get_by_label("Your text")
    box.fill(odd)
    box.press("Control+Enter")
    page.wait_for_function(
        "n => window.__bpeLive && window.__bpeLive.data && window.__bpeLive.data.textChars === n",
        arg=len(odd),
        timeout=60_000,
    )
    wait_idle(page)
    tok = train_bpe(odd, 1000, ["<|endoftext|>"])
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    _check_sizes(page, tok, odd, odd, sorted({lo, (lo + hi) // 2, hi}))
    assert page.evaluate("window.__pwned") is None
    tags = page.evaluate("() => [...new Set(Array.from(window.__bpeLive.root.querySelectorAll('*'), e => e.tagName))]")
    assert set(tags) <= {"DIV", "SPAN", "WBR", "LABEL", "INPUT", "DETAILS", "SUMMARY", "BUTTON"}


def test_a_huge_word_of_100_kb(page, tmp_path):
    word = ("tokenization" * 9000)[:100_000]
    path = tmp_path / "word.txt"
    path.write_text(word, encoding="utf-8")
    _upload(page, path)
    page.wait_for_function(
        "n => window.__bpeLive && window.__bpeLive.data && window.__bpeLive.data.textChars === n",
        arg=len(word),
        timeout=120_000,
    )
    wait_idle(page, 120_000)
    tok = train_bpe(word, 1000, ["<|endoftext|>"])
    drawn = pretoken_prefix(word, MAX_DRAW_CHARS, tok.pattern, tuple(tok.special_tokens))
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    _check_sizes(page, tok, drawn, word, sorted({lo, lo + 1, (lo + hi) // 2, hi}))


def test_colour_modes_match_the_server_colours(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    for mode in ("cycle", "id", "rank"):
        page.goto(page.url.split("?")[0] + f"?colour={mode}&size=600")
        page.wait_for_function("() => window.__bpeLive && window.__bpeLive.size === 600", timeout=60_000)
        got = page.evaluate(
            "() => Array.from(window.__bpeLive.view.querySelectorAll('.tk'), e => getComputedStyle(e).backgroundColor)"
            ".slice(0, 300)"
        )
        view = tok.with_vocab_size(600)
        want = render.token_colours(view.token_spans(text), mode, max_rank=600 - view.min_vocab_size - 1)[:300]
        rgb = [f"rgb({int(c[1:3], 16)}, {int(c[3:5], 16)}, {int(c[5:7], 16)})" for c in want]
        assert got == rgb, mode


def test_token_ids_beside_the_text_link_both_ways(page):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    _live(page)
    page.locator(".bpe-live .live-ids summary").click()
    page.wait_for_function("() => window.__bpeLive.idList.childElementCount > 0")  # drawn on the toggle event
    ids = page.evaluate("() => window.__bpeLive.idList.textContent")
    assert [int(x) for x in ids.split()] == tok.encode(text)
    page.locator(".bpe-live .tk").nth(5).hover()
    assert page.locator(".bpe-live .tid.linked").evaluate_all("els => els.map(e => e.dataset.i)") == ["5"]
    linked = "() => Array.from(window.__bpeLive.view.querySelectorAll('.tk'), e => e.classList.contains('linked'))"
    tip = page.locator(".bpe-live .live-tip").inner_text()
    assert tip.startswith(f"id {tok.encode(text)[5]} · ") and "bytes " in tip
    page.locator(".bpe-live .tid").nth(9).hover()
    flags = page.evaluate(linked)
    assert flags.index(True) == 9 and sum(flags) == 1


def test_phone_width_never_breaks_inside_a_token(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    pg = context.new_page()
    pg.goto(server)
    _live(pg)
    # a token drawn on two lines has two client rects
    broken = pg.evaluate(
        "() => Array.from(window.__bpeLive.view.querySelectorAll('.tk')).filter(e => !e.textContent.includes('\\n')"
        " && e.getClientRects().length > 1).length"
    )
    assert broken == 0
    screenshot(pg, "live-phone")
    context.close()


def test_merges_play_at_top_speed_visits_every_step_and_the_server_follows(page, server):
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    page.set_viewport_size({"width": 1400, "height": 1600})
    page.goto(f"{server}/merges")
    page.wait_for_function("() => window.__bpeMerges && window.__bpeMerges.model", timeout=60_000)
    wait_idle(page)
    start = page.evaluate("() => window.__bpeMerges.step")
    page.locator(".bpe-merges .mg-speed").select_option("60")
    page.get_by_role("button", name="Play").click()
    page.wait_for_timeout(3000)
    page.get_by_role("button", name="Pause").click()
    visited = page.evaluate("() => window.__bpeMerges.visited")
    # every step in order from where it started: none skipped, none repeated
    assert len(visited) > 1 and visited == list(range(start + 1, start + 1 + len(visited)))
    final = visited[-1]
    # each step drawn was exact: the highlighted tokens are the ones merge #final made
    made = page.evaluate(
        "() => Array.from(window.__bpeMerges.view.querySelectorAll('.tk.hl'), e => Number(e.dataset.id))"
    )
    assert made and set(made) == {tok.trace[final - 1].new_id}
    assert page.locator(".bpe-merges .merge-card .no").inner_text() == f"Merge #{final:,}"
    # the server hears where it stopped: the link and the server-drawn merge table follow
    page.wait_for_function("k => location.search.includes('step=' + k)", arg=final, timeout=30_000)
    page.wait_for_function(
        "k => document.body.innerText.includes('Merges around step ' + k.toLocaleString('en-US'))",
        arg=final,
        timeout=30_000,
    )
    # Next and Previous are exact and reported too
    page.get_by_role("button", name="Next").click()
    page.wait_for_function("k => location.search.includes('step=' + k)", arg=final + 1, timeout=30_000)
    assert page.evaluate("() => window.__bpeMerges.step") == final + 1
    page.get_by_role("button", name="Prev").click()
    page.wait_for_function(
        "k => location.search.includes('step=' + k + '&') || location.search.endsWith('step=' + k)",
        arg=final,
        timeout=30_000,
    )
    screenshot(page, "live-merges-paused")


def test_typing_redraws_without_ctrl_enter(page):
    page.get_by_text("Paste", exact=True).click()
    wait_idle(page)
    box = page.get_by_label("Your text")
    box.click()
    first, second = "Typing naïve words ", "while the page follows, word by word."
    box.press_sequentially(first, delay=40)
    # a pause: the text typed so far is used (no Ctrl+Enter), while the box keeps the focus
    page.wait_for_function(
        "n => window.__bpeLive && window.__bpeLive.data && window.__bpeLive.data.textChars === n",
        arg=len(first),
        timeout=30_000,
    )
    box.press_sequentially(second, delay=40)
    text = first + second
    page.wait_for_function(
        "n => window.__bpeLive.data.textChars === n && window.__bpeLive.model.tm.cps.length === n",
        arg=len(text),
        timeout=30_000,
    )
    wait_idle(page)
    assert box.input_value() == text  # nothing typed was lost to a rerun
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    _check_sizes(page, tok, text, text, [tok.min_vocab_size, tok.max_vocab_size])


def _old_rule_blocks(units, text: str, min_block: int = 240) -> int:
    """Blocks of the drawn text under the rule before size ranges: cut only between two words at a newline."""
    ranges = [(u[0][1][0].start, u[0][1][-1].end) for u in units]
    count, cs = 1, 0
    for (_, prev_end), (start, _) in itertools.pairwise(ranges):
        nl = next((c for c in range(start - 1, min(prev_end, start - 1) - 1, -1) if c >= 0 and text[c] == "\n"), -1)
        if nl >= 0 and nl + 1 - cs >= min_block:
            count, cs = count + 1, nl + 1
    return count


def test_small_text_at_every_size_unigram_with_blocks_cut_at_newlines_no_piece_crosses(page):
    # every slider position is a point of the pruning (the training states and the rounds stopped early), drawn
    # exactly.  SentencePiece words hold newlines ('.\n\nThe'); a piece crosses such a newline at some sizes only:
    # the blocks of each size range also end at the newlines inside words no piece crosses in that range
    from bpe_core.analysis.live import unigram_versions

    text = sample("english")
    tok = train_unigram(text, 1000)
    units = unigram_versions(tok, text).units
    crossed = {
        k
        for u in units
        for k, spans in u
        if any("\n" in text[s.start : s.end - 1] and text[s.end - 1] != "\n" for s in spans)
    }
    assert crossed, "the sample should hold a piece crossing a newline at some size"
    page.goto(page.url.split("?")[0] + "?src=sample&sample=english&algo=unigram&pattern=sentencepiece")
    page.wait_for_function(
        "() => window.__bpeLive && window.__bpeLive.model && window.__bpeLive.model.kind === 'unigram'",
        timeout=120_000,
    )
    wait_idle(page)
    assert page.evaluate("() => [Number(window.__bpeLive.slider.min), Number(window.__bpeLive.slider.max)]") == [
        tok.min_vocab_size,
        tok.max_vocab_size,
    ]
    sizes = list(range(tok.min_vocab_size, tok.max_vocab_size + 1))
    assert set(tok.training_states()) <= set(sizes)
    counts = _check_sizes(page, tok, text, text, sizes)
    screenshot(page, "live-unigram")
    old = _old_rule_blocks(units, text)
    assert page.evaluate("() => window.__bpeLive.model.blockSets.length") > 1
    assert min(counts) >= old and max(counts) > old, (old, sorted(set(counts)))
    # the same drawing after the slider comes back to a range it left
    _check_sizes(
        page, tok, text, text, [tok.max_vocab_size, tok.min_vocab_size, (tok.min_vocab_size + tok.max_vocab_size) // 2]
    )
