"""The live view in real Chromium: redraw time during a drag, Merges playback rate, bytes sent, first renders.

Usage::

    CI=1 python benchmarks/bench_live.py [--chars 60000] [--play-seconds 5]

Starts the app (``streamlit run app.py``) on a free port and drives the
system Chromium with Playwright:

* **drag**: a text of ``--chars`` characters (the four samples, repeated) is
  uploaded, so the live view draws its first ~20,000 characters; the
  slider's thumb is then held and moved across the range with the mouse
  (real ``input`` events).  For each event: the live view's own time
  (re-segmentation and DOM update, ``view.times``), and separately, for 120
  sizes set one by one, the time until the new layout is done (the same
  update plus a forced style/layout read), both for 100 neighbouring positions
  (a sweep, as a drag sends them) and for 120 random jumps.  Median and 95th
  percentile, for byte-level BPE, WordPiece and Unigram.  Goal: median <= 16 ms
  (one frame).
* **play**: the Merges page's Play at the top speed (60 merges/s) for
  ``--play-seconds``: merges per second reached, frames that drew, and
  whether any step was skipped or repeated (Play applies as many steps per
  frame as speed x elapsed time asks).  Goal: >= 30 merges/s, none dropped.
  Unigram's pruning story has few steps (21 rounds on the English sample), so
  it is played from step 0 to its end ``--play-repeats`` times: steps per
  second from the click to the last step drawn (the browser's clock), and
  whether each run visited every step in order.
* **bytes**: the JSON the server sends the live view per (text, tokenizer).
* **first render**: browser time from opening the Playground / Merges page
  in a fresh context to the live view drawn and the script idle; and the
  server's script time of each page (``AppTest``) with the live view and with
  the server-drawn view ("Draw on the server", the pages as they were).

The machine is shared: numbers are noisy; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

from benchmarks.serving import CHROMIUM_ARGS, start_server  # noqa: E402  (bench_compare_live imports them from here)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def wait_idle(pg, timeout: int = 120_000) -> None:
    pg.wait_for_function(
        """() => { const a = document.querySelector('[data-testid="stApp"]');
                   return a && a.getAttribute('data-test-script-state') === 'notRunning'; }""",
        timeout=timeout,
    )


def long_text(chars: int) -> str:
    from tests.conftest import sample

    text = "\n\n".join(sample(n) for n in ("english", "multilingual", "python", "numbers"))
    return ((text + "\n\n") * (chars // len(text) + 1))[:chars]


def drag(pg, algorithm: str) -> dict:
    """Hold the thumb and sweep the slider; then time a 100-position sweep and 120 random jumps, with layout."""
    pg.evaluate("() => { window.__bpeLive.times.length = 0; }")
    slider = pg.locator(".bpe-live .live-slider")
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + box["width"] - 2, y)
    pg.mouse.down()
    for frac in (0.85, 0.6, 0.35, 0.1, 0.4, 0.7, 0.95):
        pg.mouse.move(box["x"] + box["width"] * frac, y, steps=25)
    pg.mouse.up()
    js_times = pg.evaluate("() => window.__bpeLive.times.slice()")
    # a drag's updates with the layout they cause: 100 neighbouring positions across the range (as a mouse
    # sweep sends them), each update followed by a forced style and layout
    sweep = pg.evaluate(
        """() => { const v = window.__bpeLive, s = v.slider, lo = Number(s.min), hi = Number(s.max), out = [];
          for (let i = 0; i <= 100; i++) { const k = Math.round(hi - (hi - lo) * i / 100);
            const t0 = performance.now(); s.value = String(k); s.dispatchEvent(new Event('input'));
            v.view.offsetHeight; v.view.getBoundingClientRect(); out.push(performance.now() - t0); }
          return out; }"""
    )
    layout = pg.evaluate(
        """() => { const v = window.__bpeLive, s = v.slider, lo = Number(s.min), hi = Number(s.max), out = [];
          for (let i = 0; i < 120; i++) { const k = Math.round(lo + (hi - lo) * ((i * 37) % 120) / 119);
            const t0 = performance.now(); s.value = String(k); s.dispatchEvent(new Event('input'));
            v.view.offsetHeight; v.view.getBoundingClientRect(); out.push(performance.now() - t0); }
          return [out, v.tokens.length, v.model.tm.cps.length]; }"""
    )
    times, drawn_tokens, drawn_chars = layout
    return {
        "algorithm": algorithm,
        "drag events": len(js_times),
        "JS median ms": round(statistics.median(js_times), 2),
        "JS p95 ms": round(pct(js_times, 0.95), 2),
        "sweep + layout median ms": round(statistics.median(sweep), 2),
        "sweep + layout p95 ms": round(pct(sweep, 0.95), 2),
        "random jumps + layout median ms": round(statistics.median(times), 2),
        "random jumps + layout p95 ms": round(pct(times, 0.95), 2),
        "drawn chars": drawn_chars,
        "drawn tokens (last)": drawn_tokens,
    }


def play(pg, seconds: float) -> dict:
    pg.wait_for_function("() => window.__bpeMerges && window.__bpeMerges.model", timeout=300_000)
    wait_idle(pg, 300_000)
    # the browser's own frame rate on this page (Play draws at most one step per frame)
    fps = pg.evaluate(
        "() => new Promise(done => { let n = 0; const t0 = performance.now(); const f = now => { n++;"
        " if (now - t0 < 2000) requestAnimationFrame(f); else done(n * 1000 / (now - t0)); };"
        " requestAnimationFrame(f); })"
    )
    pg.evaluate("() => { const v = window.__bpeMerges; v.go(0, false); v.times.length = 0; }")
    pg.locator(".bpe-merges .mg-speed").select_option("60")
    t0 = time.perf_counter()
    pg.locator(".bpe-merges .mg-btn.play").click()
    pg.wait_for_timeout(int(seconds * 1000))
    visited, times, n, draws = pg.evaluate(
        "() => { const v = window.__bpeMerges; const r = [v.visited.slice(), v.times.slice(), v.n, v.frames];"
        " v.pause(); return r; }"
    )
    elapsed = time.perf_counter() - t0
    in_order = visited == list(range(visited[0], visited[0] + len(visited))) if visited else False
    return {
        "steps": len(visited),
        "merges/s": round(len(visited) / elapsed, 1),
        "idle frames/s": round(fps, 1),
        "draws (frames with a step)": draws,
        "in order, none dropped": in_order,
        "step median ms": round(statistics.median(times), 2) if times else None,
        "step p95 ms": round(pct(times, 0.95), 2) if times else None,
        "merges in history": n,
    }


def play_through(pg, repeats: int) -> dict:
    """Play at 60 steps/s from step 0 to the end, ``repeats`` times: steps/s on the browser's clock, order kept."""
    pg.wait_for_function("() => window.__bpeMerges && window.__bpeMerges.model", timeout=300_000)
    wait_idle(pg, 300_000)
    pg.locator(".bpe-merges .mg-speed").select_option("60")
    runs = []
    for _ in range(repeats):
        runs.append(
            pg.evaluate(
                """() => new Promise(done => { const v = window.__bpeMerges; v.go(0, false); v.times.length = 0;
                  const t0 = performance.now(); v.bPlay.click();
                  const f = () => { if (v.playing) { requestAnimationFrame(f); return; }
                    done([v.visited.slice(), performance.now() - t0, v.times.slice(), v.n, v.frames]); };
                  requestAnimationFrame(f); })"""
            )
        )
        wait_idle(pg, 120_000)  # the reported step's rerun
    n = runs[0][3]
    steps = sum(len(r[0]) for r in runs)
    seconds = sum(r[1] for r in runs) / 1000
    times = [t for r in runs for t in r[2]]
    return {
        "runs": repeats,
        "steps": steps,
        "steps/s": round(steps / seconds, 1),
        "draws (frames with a step)": sum(r[4] for r in runs),
        "every run 1..n in order": all(r[0] == list(range(1, n + 1)) for r in runs),
        "step median ms": round(statistics.median(times), 2) if times else None,
        "step p95 ms": round(pct(times, 0.95), 2) if times else None,
        "steps in history": n,
    }


def payload_bytes(text_label: str, text: str) -> list[dict]:
    from bpe_core import train_bpe
    from bpe_core.unigram import train_unigram
    from bpe_core.wordpiece import train_wordpiece
    from ui.live_view import cached_payload, merges_payload

    rows = []
    for algo, tok in (
        ("bpe", train_bpe(text, 1000, ["<|endoftext|>"])),
        ("wordpiece", train_wordpiece(text, 1000)),
        ("unigram", train_unigram(text, 1000)),
    ):
        t0 = time.perf_counter()
        payload = cached_payload(tok, text, True)
        dt = time.perf_counter() - t0
        n = len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        row = {
            "text": text_label,
            "tokenizer": f"{algo} {tok.max_vocab_size}",
            "drawn chars": len(payload["text"]),
            "JSON bytes": n,
            "bytes/drawn char": round(n / max(len(payload["text"]), 1), 2),
            "build ms": round(dt * 1000),
        }
        t0 = time.perf_counter()
        m = merges_payload(tok, text)
        row["Merges JSON bytes"] = len(json.dumps(m, ensure_ascii=False).encode("utf-8"))
        row["Merges build ms"] = round((time.perf_counter() - t0) * 1000)
        rows.append(row)
    return rows


def server_times(pages: tuple[str, ...] = ("Playground", "Merges")) -> list[dict]:
    """Script time of the pages (AppTest), live view vs server-drawn, first and cached.

    ``"Merges (Unigram)"``: the Merges page with Unigram chosen (a link's ``algo=unigram``).
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()  # once per process: component discovery
    rows = []
    for server_view in (False, True):
        for page in pages:
            st.cache_resource.clear()  # training included, as bench_app.py's first render
            st.cache_data.clear()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            at.session_state["server_view"] = server_view
            if "Unigram" in page:
                at.query_params["algo"] = "unigram"
                at.query_params["pattern"] = "sentencepiece"
            t0 = time.perf_counter()
            if page.startswith("Merges"):
                at.switch_page("app_pages/merges.py")
            at.run()
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            at.run()
            again = time.perf_counter() - t0
            rows.append(
                {
                    "page": page,
                    "view": "server-drawn" if server_view else "live",
                    "script ms": round(first * 1000),
                    "rerun ms": round(again * 1000),
                }
            )
    return rows


def first_render(browser, url: str, path: str, ready: str) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    t0 = time.perf_counter()
    pg.goto(url + path)
    pg.wait_for_function(ready, timeout=300_000)
    wait_idle(pg, 300_000)
    dt = time.perf_counter() - t0
    ctx.close()
    return dt


def table(rows: list[dict]) -> None:
    if not rows:
        return
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
    print()


UNIGRAM_MERGES = "/merges?src=sample&sample=english&algo=unigram&pattern=sentencepiece"


UNIGRAM_PLAYER_READY = "() => window.__bpeMerges && window.__bpeMerges.model?.kind === 'unigram'"
"""The Merges page's Unigram player has its model (a ``wait_for_function`` expression)."""


def play_rates(browser, url: str, args: argparse.Namespace) -> None:
    """Print the Merges Play rates in a fresh context: BPE for ``--play-seconds``, Unigram ``--play-repeats`` times."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.goto(url + "/merges")
    print(f"**Merges: Play at 60 merges/s for {args.play_seconds} s (English sample, BPE)**\n")
    table([play(pg, args.play_seconds)])
    pg.goto(url + UNIGRAM_MERGES)
    pg.wait_for_function(UNIGRAM_PLAYER_READY, timeout=300_000)
    print(f"**Merges: Unigram's pruning played at 60 rounds/s from 0 to the end, {args.play_repeats} times**\n")
    table([play_through(pg, args.play_repeats)])
    ctx.close()


def merges_play(args: argparse.Namespace) -> None:
    """The Merges Play rates alone: BPE for ``--play-seconds``, Unigram's pruning ``--play-repeats`` times."""
    from playwright.sync_api import sync_playwright

    proc, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            play_rates(browser, url, args)
            ms = (
                statistics.median(first_render(browser, url, UNIGRAM_MERGES, UNIGRAM_PLAYER_READY) for _ in range(3))
                * 1000
            )
            print("**First render in the browser (median of 3 fresh contexts, training cached)**\n")
            table([{"page": "Merges, Unigram (English sample)", "browser first render ms": round(ms)}])
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("**Server script time (AppTest): live view vs server-drawn**\n")
    table(server_times(("Merges (Unigram)",)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=60_000)
    ap.add_argument("--play-seconds", type=float, default=5.0)
    ap.add_argument("--play-repeats", type=int, default=10, help="Unigram: plays from step 0 to the end")
    ap.add_argument("--merges-only", action="store_true", help="only the bytes and the Merges Play rates")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.conftest import sample

    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    print("**Bytes sent to the browser per (text, tokenizer)**\n")
    rows = []
    for name in ("english", "multilingual"):
        rows += payload_bytes(name, sample(name))
    if not args.merges_only:
        rows += payload_bytes(f"{args.chars:,} chars", long_text(args.chars))
    table(rows)
    if args.merges_only:
        merges_play(args)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return

    proc, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            live_ready = "() => window.__bpeLive && window.__bpeLive.tokens && window.__bpeLive.tokens.length > 0"
            merges_ready = "() => window.__bpeMerges && window.__bpeMerges.model"
            first_render(browser, url, "/", live_ready)  # warm the server's import and the training cache
            firsts = [
                {
                    "page": "Playground (English sample)",
                    "browser first render ms": round(
                        statistics.median(first_render(browser, url, "/", live_ready) for _ in range(3)) * 1000
                    ),
                },
                {
                    "page": "Merges (English sample)",
                    "browser first render ms": round(
                        statistics.median(first_render(browser, url, "/merges", merges_ready) for _ in range(3)) * 1000
                    ),
                },
            ]
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            pg = ctx.new_page()
            pg.goto(url)
            pg.wait_for_function(live_ready, timeout=120_000)
            wait_idle(pg)
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "long.txt"
                path.write_text(long_text(args.chars), encoding="utf-8")
                pg.get_by_text("Upload", exact=True).click()
                pg.locator('input[type="file"]').set_input_files(str(path))
                pg.wait_for_function(
                    "n => window.__bpeLive && window.__bpeLive.data && window.__bpeLive.data.textChars === n",
                    arg=args.chars,
                    timeout=180_000,
                )
                wait_idle(pg, 180_000)
                drags = [drag(pg, "bpe")]
                pg.get_by_text("WordPiece", exact=True).click()
                pg.wait_for_function(
                    "() => window.__bpeLive.model && window.__bpeLive.model.kind === 'wordpiece'", timeout=180_000
                )
                wait_idle(pg, 180_000)
                drags.append(drag(pg, "wordpiece"))
                pg.get_by_text(re.compile(r"^Unigram\b")).first.click()
                pg.wait_for_function(
                    "() => window.__bpeLive.model && window.__bpeLive.model.kind === 'unigram'", timeout=300_000
                )
                wait_idle(pg, 300_000)
                drags.append(drag(pg, "unigram"))
            ctx.close()
            print(f"**Drag on a {args.chars:,}-character text (the first ~20,000 drawn)**\n")
            table(drags)
            play_rates(browser, url, args)
            print("**First render in the browser (median of 3 fresh contexts, training cached)**\n")
            table(firsts)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("**Server script time (AppTest): live view vs server-drawn**\n")
    table(server_times())
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
