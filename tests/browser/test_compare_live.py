"""Real Chromium: Compare's trained columns follow its vocabulary slider in the browser (issue 16 item 3).

The slider is a live view with ``role="slider"``; each trained column that follows it is a live view with
``role="column"`` of the same group (``ui/live_view/group.js``).  Read from the DOM: the column's tokens (id,
first and end character) and its count line, against ``with_vocab_size(k)`` of an independently trained
tokenizer; the production columns, drawn on the server, do not move.
"""

from __future__ import annotations

import itertools

import pytest

from bpe_core import train_bpe
from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS as BERT_SPECIALS
from bpe_core.wordpiece import train_wordpiece
from tests.browser.helpers import deep, evaluate_json, screenshot, wait_idle
from tests.browser.test_compare_production import BROKEN_TOKENS
from tests.conftest import sample
from ui.limits import COMPARE_DRAW_TOKENS as DRAW_TOKENS  # each Compare view draws at most this many tokens

pytestmark = pytest.mark.browser

# the group's views, by role, in page order
_VIEWS = """() => { const g = window.__bpeLiveGroups && window.__bpeLiveGroups.get('compare');
  if (!g) return null; const vs = [...g].filter(v => v.root.isConnected);
  return {slider: vs.filter(v => v.data && v.data.role === 'slider').length,
          columns: vs.filter(v => v.data && v.data.role === 'column' && v.tokens && v.tokens.length).length}; }"""

_SLIDER = "[...window.__bpeLiveGroups.get('compare')].find(v => v.root.isConnected && v.data?.role === 'slider')"
_COLUMNS = "[...window.__bpeLiveGroups.get('compare')].filter(v => v.root.isConnected && v.data?.role === 'column')"

# set the slider to each size (an input event each, as a drag makes) and read every column's drawing
_READ_SIZES = f"""sizes => {{ const s = {_SLIDER}, cols = {_COLUMNS}, out = [];
  for (const k of sizes) {{ s.slider.value = String(k); s.slider.dispatchEvent(new Event('input', {{bubbles: true}}));
    out.push(cols.map(c => [c.data.label, Number(c.colHead.dataset.size), Number(c.colHead.dataset.total),
      c.colCount.textContent, Array.from(c.view.querySelectorAll('.tk'),
        e => [Number(e.dataset.id), Number(e.dataset.s), Number(e.dataset.e)])])); }}
  return out; }}"""

_STATE = f"""() => {{ const s = {_SLIDER}, c = {_COLUMNS}[0];
  return [Number(s.slider.value), Number(c.colHead.dataset.size), Number(c.colHead.dataset.total),
          c.colTitle.textContent, c.view.querySelectorAll('.tk').length,
          Array.from(c.view.querySelectorAll('.tk'), e => e.dataset.s).join(',')]; }}"""


def _open(browser, server, query: str, columns: int, width: int = 1400):
    context = browser.new_context(viewport={"width": width, "height": 1400})
    pg = context.new_page()
    pg.goto(server + "/compare?" + query)
    pg.wait_for_function(
        f"() => {{ const n = ({_VIEWS})(); return n && n.slider === 1 && n.columns === {columns}; }}",
        timeout=120_000,
    )
    wait_idle(pg, 120_000)
    return context, pg


def _spans(tok, k: int, text: str) -> list[list[int]]:
    return [[s.id, s.start, s.end] for s in tok.with_vocab_size(k).token_spans(text)[:DRAW_TOKENS]]


def _bytes_per_token(text: str, n: int) -> str:
    return f"{len(text.encode()) / n:.2f}"


def _production_views(pg) -> list[str]:
    return pg.evaluate(
        deep(
            "() => Array.from(deepAll('.bpe-view'), e => e.textContent)"
            ".filter((t, i, all) => !deepAll('.bpe-view')[i].closest('.bpe-live'))"
        )
    )


def test_bpe_column_equals_the_engine_at_many_sizes(browser, server):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    context, pg = _open(browser, server, "size=100000", columns=1)
    try:
        lo, hi = tok.min_vocab_size, tok.max_vocab_size
        assert pg.evaluate(f"() => [Number({_SLIDER}.slider.min), Number({_SLIDER}.slider.max)]") == [lo, hi]
        assert pg.evaluate(f"() => {_COLUMNS}[0].model.tm.cps.length") == len(text)  # all of it is drawn
        reference = _production_views(pg)
        assert len(reference) == 2  # GPT-2 and cl100k, drawn on the server
        sizes = sorted({lo, lo + 1, lo + 2, 300, 400, 555, 700, 913, hi, *range(lo, hi + 1, 37)})
        for k, cols in zip(sizes, evaluate_json(pg, _READ_SIZES, sizes)):
            ((label, shown, total, line, tokens),) = cols
            n = len(tok.with_vocab_size(k).encode(text))
            assert (label, shown, total) == ("BPE (gpt2)", k, n), k
            assert line == f"{n:,} tokens · {_bytes_per_token(text, n)} bytes/token"
            assert tokens == _spans(tok, k, text), k
        assert _production_views(pg) == reference  # they do not depend on the slider
    finally:
        context.close()


def test_dragging_moves_the_column_before_release_and_the_server_hears_the_end(browser, server):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    context, pg = _open(browser, server, "size=100000", columns=1)
    try:
        reference = _production_views(pg)
        before = pg.evaluate(_STATE)
        box = pg.locator(".live-role-slider .live-slider").bounding_box()
        y = box["y"] + box["height"] / 2
        pg.mouse.move(box["x"] + box["width"] - 3, y)
        pg.mouse.down()
        seen = []
        for frac in (0.8, 0.6, 0.4, 0.2):
            pg.mouse.move(box["x"] + box["width"] * frac, y, steps=4)
            seen.append(pg.evaluate(_STATE))
        # the mouse is still down: the column's tokens (their first characters), title and count already follow
        for value, drawn, total, title, n, _starts in seen:
            assert drawn == value
            assert total == len(tok.with_vocab_size(value).encode(text)) == n
            assert title == f"BPE (gpt2) · {value:,}"
        assert len({s[0] for s in seen}) == 4 and seen[0][5] != before[5] and seen[-1][2] > before[2]
        assert _production_views(pg) == reference
        pg.mouse.up()
        final, total = seen[-1][0], seen[-1][2]
        # the server hears the final size: the address bar, then the figures table, follow
        pg.wait_for_function("k => location.search.includes('size=' + k)", arg=final, timeout=30_000)
        wait_idle(pg)
        row = pg.evaluate(
            """label => { const tr = [...document.querySelectorAll('.fig-table tr')].find(r =>
                 r.querySelector('td[data-col="Tokenizer"]')?.dataset.value === label);
               return tr && Number(tr.querySelector('td[data-col="Tokens"]').dataset.value); }""",
            f"BPE (gpt2) · {final:,}",
        )
        assert row == total
        assert pg.evaluate(_STATE)[:3] == [final, final, total]  # the rerun keeps what the drag showed
        screenshot(pg, "compare-live-after-drag")
    finally:
        context.close()


def test_keyboard_arrows_move_the_column(browser, server):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    context, pg = _open(browser, server, "size=100000", columns=1)
    try:
        slider = pg.locator(".live-role-slider .live-slider")
        slider.focus()
        slider.press("Home")
        for _ in range(5):
            slider.press("ArrowRight")
        k = tok.min_vocab_size + 5
        state = pg.evaluate(_STATE)
        assert state[:3] == [k, k, len(tok.with_vocab_size(k).encode(text))]
        pg.wait_for_function("k => location.search.includes('size=' + k)", arg=k, timeout=30_000)
    finally:
        context.close()


def test_wordpiece_and_a_bpe_pattern_variant_follow_one_slider(browser, server):
    text = sample("english")
    wp = train_wordpiece(text, 1000, BERT_SPECIALS)
    context, pg = _open(browser, server, "algo=wordpiece&cmp=wordpiece,gpt2&size=100000", columns=1)
    try:
        lo, hi = wp.min_vocab_size, wp.max_vocab_size
        sizes = sorted({lo, lo + 1, 150, 333, 600, hi, *range(lo, hi + 1, 61)})
        for k, cols in zip(sizes, evaluate_json(pg, _READ_SIZES, sizes)):
            ((label, shown, total, _line, tokens),) = cols
            assert (label, shown) == ("WordPiece", k)
            assert total == len(wp.with_vocab_size(k).encode(text)), k
            assert tokens == _spans(wp, k, text), k
    finally:
        context.close()
    # the sidebar's BPE and a BPE with another pattern: two live columns under one slider
    bpe = train_bpe(text, 1000, ["<|endoftext|>"])
    other = train_bpe(text, 1000, ["<|endoftext|>"], "cl100k")
    context, pg = _open(browser, server, "cmp=bpe,gpt2&size=100000", columns=1)
    try:
        pg.get_by_text("More BPE variants").click()
        _add_pattern_variant(pg, "cl100k")
        lo = max(bpe.min_vocab_size, other.min_vocab_size)
        sizes = [lo, 300, 500, 700, 900]
        for k, cols in zip(sizes, evaluate_json(pg, _READ_SIZES, sizes)):
            assert [c[0] for c in cols] == ["BPE (gpt2)", "BPE (cl100k)"]
            for tok, (_label, shown, total, _line, tokens) in zip((bpe, other), cols):
                k_tok = min(max(k, tok.min_vocab_size), tok.max_vocab_size)
                assert shown == k_tok and total == len(tok.with_vocab_size(k_tok).encode(text))
                assert tokens == _spans(tok, k_tok, text), (tok.pattern, k)
    finally:
        context.close()


def _add_pattern_variant(pg, pattern: str) -> None:
    """Pick ``pattern`` in "BPE with other patterns" and wait for its live column.

    Under load the pick is sometimes lost (the multiselect's rerun races the page's own; the Compare picker's
    known timing problem, see the issue-16 note), so it is picked again once if the column has not come.
    """
    for attempt in range(2):
        wait_idle(pg, 120_000)
        box = pg.locator("[data-testid=stMultiSelect]").filter(has_text="BPE with other patterns").locator("input")
        box.click()
        pg.keyboard.type(pattern)
        pg.keyboard.press("Enter")
        pg.keyboard.press("Escape")
        try:
            pg.wait_for_function(f"() => ({_VIEWS})().columns === 2", timeout=60_000)
            break
        except Exception:
            if attempt:
                raise
    wait_idle(pg, 120_000)


def test_phone_width_stacks_the_columns_and_keeps_tokens_whole(browser, server):
    context, pg = _open(browser, server, "size=100000", columns=1, width=390)
    try:
        pg.evaluate(f"() => {{ const s = {_SLIDER}.slider; s.value = '400';"
                    " s.dispatchEvent(new Event('input', {bubbles: true})); }")  # fmt: skip
        # the live column first, then GPT-2 and cl100k (the production columns can land a rerun later)
        pg.wait_for_function(deep("() => deepAll('.bpe-view').length === 3"), timeout=60_000)
        wait_idle(pg, 120_000)
        boxes = pg.evaluate(deep("() => deepAll('.bpe-view').map(e => e.getBoundingClientRect().toJSON())"))
        assert len(boxes) == 3
        assert all(a["y"] + a["height"] <= b["y"] for a, b in itertools.pairwise(boxes))
        assert max(b["x"] for b in boxes) - min(b["x"] for b in boxes) < 1
        assert all(b["x"] >= 0 and b["x"] + b["width"] <= 390 for b in boxes)
        result = pg.evaluate(deep(BROKEN_TOKENS))
        assert result["total"] > 2000 and result["broken"] == [], result["broken"][:10]
        screenshot(pg, "compare-live-phone")
    finally:
        context.close()


def test_other_text_is_data_and_counted_exactly(browser, server):
    odd = '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> **bold** שלום 🙂 naïve'
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    context, pg = _open(browser, server, "size=100000", columns=1)
    try:
        pg.get_by_role("radiogroup", name="Text to compare on").get_by_text("Other text").click()
        box = pg.locator('textarea[aria-label="Other text to compare on"]')
        box.fill(odd)
        box.press("Control+Enter")
        pg.wait_for_function(f"n => {_COLUMNS}[0]?.data.textChars === n", arg=len(odd), timeout=60_000)
        wait_idle(pg)
        sizes = [tok.min_vocab_size, 400, tok.max_vocab_size]
        for k, ((_label, _shown, total, _line, tokens),) in zip(sizes, evaluate_json(pg, _READ_SIZES, sizes)):
            assert total == len(tok.with_vocab_size(k).encode(odd))
            assert tokens == _spans(tok, k, odd)
        assert pg.evaluate("window.__pwned") is None
        tags = pg.evaluate(f"() => [...new Set(Array.from({_COLUMNS}[0].root.querySelectorAll('*'), e => e.tagName))]")
        assert set(tags) <= {"DIV", "SPAN", "WBR", "STRONG"}
    finally:
        context.close()
