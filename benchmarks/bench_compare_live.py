"""Compare's live columns in real Chromium: time per slider update while dragging (issue 16 item 3).

Usage::

    CI=1 python benchmarks/bench_compare_live.py [--chars 60000]

Starts the app (``streamlit run app.py``) on a free port and drives the system Chromium with
Playwright.  On the Compare page the slider's thumb is held and swept across the range with the mouse
(real ``input`` events); each event redraws every live column of the slider's group in the browser
(``ui/live_view/group.js``).  Reported per case, median and 95th percentile:

* **JS ms**: the slider view's own time per event (``times``), which includes redrawing each column
  that follows it (re-segmentation, title, count line, DOM update);
* **with layout ms**: for 120 sizes set one by one, the same update plus a forced layout read.

Cases: the training sample (3,700 characters, all drawn) with BPE, GPT-2 and cl100k, then plus a BPE
with the cl100k pattern (two live columns); the same on a ``--chars`` upload (Compare draws its first
4,000 characters); WordPiece, GPT-2 and cl100k on the upload.  Goal: median <= 16 ms (one frame).  For contrast, the
server's script time of Compare after a size change (AppTest, "Draw on the server" and live): what
each release costs, and what every drag position cost before.

The machine is shared: numbers are noisy; the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

from benchmarks.bench_live import CHROMIUM_ARGS, long_text, pct, start_server, wait_idle  # noqa: E402

SLIDER = "[...window.__bpeLiveGroups.get('compare')].find(v => v.root.isConnected && v.data?.role === 'slider')"
COLUMNS = "[...window.__bpeLiveGroups.get('compare')].filter(v => v.root.isConnected && v.data?.role === 'column')"


def wait_columns(pg, n: int, chars: int | None = None) -> None:
    cond = f"{COLUMNS}.length === {n} && {COLUMNS}.every(c => c.tokens && c.tokens.length)"
    if chars is not None:
        cond += f" && {COLUMNS}.every(c => c.data.textChars === {chars})"
    pg.wait_for_function(f"() => window.__bpeLiveGroups?.get('compare') && {SLIDER} && {cond}", timeout=180_000)
    wait_idle(pg, 180_000)


def drag(pg, case: str) -> dict:
    """Hold the thumb and sweep the slider; then time 120 single updates including layout."""
    pg.evaluate(f"() => {{ {SLIDER}.times.length = 0; }}")
    box = pg.locator(".live-role-slider .live-slider").bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + box["width"] - 2, y)
    pg.mouse.down()
    for frac in (0.85, 0.6, 0.35, 0.1, 0.4, 0.7, 0.95):
        pg.mouse.move(box["x"] + box["width"] * frac, y, steps=25)
    pg.mouse.up()
    js_times = pg.evaluate(f"() => {SLIDER}.times.slice()")
    times, columns = pg.evaluate(
        f"""() => {{ const v = {SLIDER}, s = v.slider, cols = {COLUMNS}, lo = Number(s.min), hi = Number(s.max);
          const out = [];
          for (let i = 0; i < 120; i++) {{ const k = Math.round(lo + (hi - lo) * ((i * 37) % 120) / 119);
            const t0 = performance.now(); s.value = String(k); s.dispatchEvent(new Event('input'));
            for (const c of cols) {{ c.view.offsetHeight; c.view.getBoundingClientRect(); }}
            out.push(performance.now() - t0); }}
          return [out, cols.map(c => [c.data.label, c.model.tm.cps.length, c.tokens.length])]; }}"""
    )
    wait_idle(pg)
    row = {
        "case": case,
        "live columns (label, drawn chars, tokens)": columns,
        "drag events": len(js_times),
        "JS median ms": round(statistics.median(js_times), 2),
        "JS p95 ms": round(pct(js_times, 0.95), 2),
        "with layout median ms": round(statistics.median(times), 2),
        "with layout p95 ms": round(pct(times, 0.95), 2),
    }
    print(row, flush=True)
    return row


def server_times() -> list[dict]:
    """Compare's script time after a size change (AppTest): what a release costs, live and server-drawn."""
    from streamlit.testing.v1 import AppTest

    rows = []
    for server_view in (True, False):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["server_view"] = server_view
        at.query_params["size"] = "100000"
        at.run()
        at.switch_page("app_pages/compare.py").run()
        runs = []
        for size in (400, 600, 800, 500, 700):
            at.session_state["vocab_size"] = size
            t0 = time.perf_counter()
            at.run()
            runs.append(time.perf_counter() - t0)
        rows.append(
            {
                "view": "server-drawn" if server_view else "live",
                "rerun per size median s": round(statistics.median(runs), 3),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, default=60_000, help="characters of the uploaded text")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average: {os.getloadavg()}")
    proc, url = start_server()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            path = Path(tmp) / "long.txt"
            whole = long_text(args.chars)
            path.write_text(whole, encoding="utf-8")

            def page(query: str):
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                pg = ctx.new_page()
                pg.goto(url + "/compare?" + query)
                return ctx, pg

            ctx, pg = page("cmp=bpe,gpt2,cl100k_base&size=100000")
            wait_columns(pg, 1)
            drag(pg, "sample (3,700 chars): BPE + GPT-2 + cl100k")
            pg.get_by_text("More BPE variants").click()
            pg.locator("[data-testid=stMultiSelect]").filter(has_text="BPE with other patterns").locator(
                "input"
            ).click()
            pg.keyboard.type("cl100k")
            pg.keyboard.press("Enter")
            pg.keyboard.press("Escape")
            wait_columns(pg, 2)
            drag(pg, "sample: BPE + BPE (cl100k) + GPT-2 + cl100k")
            pg.get_by_text("Upload", exact=True).click()
            pg.locator('input[type="file"]').set_input_files(str(path))
            wait_columns(pg, 2, len(whole))
            drag(pg, f"{len(whole):,}-char upload: BPE + BPE (cl100k) + GPT-2 + cl100k")
            ctx.close()

            ctx, pg = page("algo=wordpiece&cmp=wordpiece,gpt2,cl100k_base&size=100000")
            wait_columns(pg, 1)
            pg.get_by_text("Upload", exact=True).click()
            pg.locator('input[type="file"]').set_input_files(str(path))
            wait_columns(pg, 1, len(whole))
            drag(pg, f"{len(whole):,}-char upload: WordPiece + GPT-2 + cl100k")
            ctx.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    for r in server_times():
        print(r)


if __name__ == "__main__":
    main()
