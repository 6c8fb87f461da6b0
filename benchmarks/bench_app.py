"""Page times of the Streamlit app as a visitor meets them, in real Chromium (and, with ``--apptest``, on the server).

Usage::

    python benchmarks/bench_app.py [--samples english,python,multilingual,numbers] [--repeat 3]
    python benchmarks/bench_app.py --apptest [--repeat 5] [--upload FILE] [--compare-production]

**In Chromium** (the default; issue 31 item 4).  Starts ``streamlit run app.py`` on a free port as a visitor's
server runs it (the background warm-up of :mod:`ui.warmup` included) and drives Debian's Chromium through
Playwright (``/usr/bin/chromium``, flags as in ``tests/browser/helpers.py``; never ``playwright install``):

* **start-up**: the first visit after the server started (it starts the warm-up), then how long until the
  warm-up ended (its line in the server's log, which also names its slowest jobs and any that failed);
* **first render** of each page (Playground, Merges, Compare, Insights, Encode step by step, Learn) on each
  built-in sample, opened from a link (``/<page>?src=sample&sample=<key>``) in a new session: in a fresh
  browser context (*cold*: nothing cached, the whole frontend downloaded) and in a new tab of a context that
  has loaded the app once (*new tab*: the frontend's files in the browser cache, as for a returning student);
* **page switch**: in one session, a click on each page's link in the sidebar, twice around all pages;
* **Compare buttons**: on Compare, each tokenizer pill clicked on and then off;
* **the floor**: the same first renders and switches of ``benchmarks/floor_app.py`` (Streamlit alone, the app's
  six pages with none of its work), served after the app's server stops, and each median beside the app's.

A time runs from navigation start (first render) or the pointer press (switch, button) to the end of the last
script run it caused: Streamlit's ``script_finished`` message read off the page's websocket, taken after the
next animation frame (the run's elements drawn), once no run has ended for 0.4 s and the app says no script
runs.  All times are the page's own clock (``performance.now()``).  Targets (issue 31): first render <= 1.5 s
and a page switch <= 0.5 s at the median, each Compare button <= 0.5 s.

**On the server** (``--apptest``): the script run times through ``streamlit.testing.v1.AppTest``, in this
process, no browser -- the page's Python work alone (training, encoding, HTML building):

* for each built-in sample with the default settings (byte-level BPE, GPT-2 pattern, vocab 1,000): the first
  render of each page in a fresh session, training included (the training cache emptied first), then the
  same page again with the tokenizer cached (``cached``); a Playground slider move (median over ``--repeat``);
* **Compare with five production encodings** (``--compare-production`` runs only this): the first render of
  Compare opened on a link choosing the trained BPE and GPT-2, cl100k, o200k, Llama 3 and Mistral v1;
  *cold* = the encodings' files not yet loaded in this process, *warm* = loaded by an earlier session;
* ``--upload FILE``: one session with that file uploaded in the sidebar (the upload's run, slider moves, the
  first and a second render of every other page).

The machine is shared with other jobs: numbers are noisy; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

from benchmarks.serving import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402

"""As in ``tests/browser/helpers.py``."""

WATCH = """
(() => {
  // page-clock times (performance.now()) of: pointer presses; messages sent to the server; each script run's end
  // (Streamlit's ForwardMsg script_finished, field 6, read off the websocket): its arrival, and after the next
  // frame (the run drawn)
  window.__bpeClicks = []; window.__bpeFinished = [];
  document.addEventListener('pointerdown', () => window.__bpeClicks.push(performance.now()), true);
  const finished = (buf) => {
    const b = new Uint8Array(buf); let i = 0;
    const varint = () => { let x = 0, m = 1, c; do { c = b[i++]; x += (c & 127) * m; m *= 128; } while (c & 128);
                           return x; };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wt = tag % 8;
      if (wt === 0) { const v = varint(); if (field === 6) return v; }
      else if (wt === 2) { const n = varint(); i += n; }  // (not i += varint(): i is read first)
      else if (wt === 1) i += 8; else if (wt === 5) i += 4; else return null;
    }
    return null;
  };
  const Native = window.WebSocket;
  window.__bpeSent = [];
  window.WebSocket = class extends Native {
    send(data) { window.__bpeSent.push(performance.now()); return super.send(data); }
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        if (!(ev.data instanceof ArrayBuffer)) return;
        if (finished(ev.data) === null) return;
        const end = [performance.now()];  // the message's arrival, then (when frames are drawn) the next frame's
        window.__bpeFinished.push(end);
        requestAnimationFrame(() => setTimeout(() => end.push(performance.now()), 0));
      });
    }
  };
})();
"""
"""Init script of every benchmark page: notes pointer presses and the end of each script run (page clock)."""

IDLE = """() => { const a = document.querySelector('[data-testid="stApp"]');
                   return !!a && a.getAttribute('data-test-script-state') === 'notRunning'; }"""

PAGES = {
    "Playground": ("", "BPE Playground"),
    "Merges": ("merges", "Merges"),
    "Compare": ("compare", "Compare tokenizers"),
    "Insights": ("insights", "Insights"),
    "Encode step by step": ("encode", "Encode step by step"),
    "Learn": ("learn", None),
}
"""Page (its link's text in the sidebar) -> (URL path, its title; ``None``: the lesson's own)."""

COMPARE_BUTTONS = (
    "GPT-4o (o200k_base)",
    "Llama 3",
    "Llama 4",
    "Mistral Tekken",
    "Mistral v1 (SentencePiece)",
    "WordPiece",
    "Unigram",
    "GPT-2 (r50k_base)",
)
"""Compare's pills clicked on and off (GPT-2 last: it is on when the page opens, so off then on)."""


def warmed(log, proc: subprocess.Popen, limit: float = 600.0) -> str:
    """Wait for the server's log line that its warm-up ended (:data:`ui.warmup.DONE_LOG`); that line.

    ``log``: the server's output file (as given to :func:`start_server`).  Raises ``SystemExit`` when the server
    exits or ``limit`` seconds pass first.
    """
    from ui.warmup import DONE_LOG

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        log.seek(0)
        for line in log.read().decode("utf-8", "replace").splitlines():
            if DONE_LOG in line:
                return line[line.index(DONE_LOG) :]
        if proc.poll() is not None:
            raise SystemExit("streamlit exited before its warm-up ended")
        time.sleep(0.25)
    raise SystemExit(f"no warm-up line in the server's log after {limit:.0f} s")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def answer(pg, since: float, quiet_ms: int = 400, timeout: float = 180.0) -> tuple[float, float]:
    """From ``since`` (page clock) to the end of the last script run, once the page is quiet: ``(total, server)``.

    ``total``: milliseconds to the frame after the last run's end; ``server``: of those, the milliseconds
    between the last message the page sent before that run ended and the run's end arriving (the server's
    script run as the page waits for it; the rest is the browser: booting the frontend, drawing).
    """
    deadline = time.time() + timeout
    seen = -1
    while time.time() < deadline:
        ends = [end for end in pg.evaluate("() => window.__bpeFinished") if end[0] >= since]
        if ends and len(ends) == seen and pg.evaluate(IDLE):
            sent = [t for t in pg.evaluate("() => window.__bpeSent") if since <= t <= ends[-1][0]]
            return ends[-1][-1] - since, ends[-1][0] - (sent[-1] if sent else since)
        seen = len(ends)
        pg.wait_for_timeout(quiet_ms if ends else 20)
    raise TimeoutError("no script run ended")


def open_page(ctx, url: str, page: str, query: str):
    """A new tab of ``ctx`` on ``page`` opened from a link; ``(tab, (total, server) ms of its first render)``."""
    path, title = PAGES[page]
    pg = ctx.new_page()
    pg.goto(f"{url}/{path}?{query}")
    if title:
        pg.wait_for_selector(f"h1:has-text('{title}')", timeout=180_000)
    return pg, answer(pg, 0.0)


def click(pg, locator) -> tuple[float, float]:
    """Click ``locator``; ``(total, server)`` milliseconds from the pointer press to the end of the runs it caused."""
    n = pg.evaluate("() => window.__bpeClicks.length")
    locator.click()
    pg.wait_for_function(f"() => window.__bpeClicks.length > {n}")
    return answer(pg, pg.evaluate("() => window.__bpeClicks[window.__bpeClicks.length - 1]"))


def new_context(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.add_init_script(WATCH)
    return ctx


def chromium_rows(browser, url: str, samples: list[str], repeat: int, buttons: bool = True) -> list[dict]:
    """Every measurement of the Chromium run: ``{"what", "page", "sample", "ms", "server"}`` (ms).

    ``buttons``: also click Compare's tokenizer pills (not on the floor app, which has none).
    """
    rows = []

    def note(what: str, page: str, sample: str, ms: tuple[float, float]) -> None:
        rows.append({"what": what, "page": page, "sample": sample, "ms": ms[0], "server": ms[1]})
        print(f"  {what:<18} {page:<28} {sample:<13} {ms[0]:7.0f} ms (server {ms[1]:5.0f} ms)", flush=True)

    for sample in samples:
        query = f"src=sample&sample={sample}"
        for _ in range(repeat):
            for page in PAGES:
                ctx = new_context(browser)
                _pg, ms = open_page(ctx, url, page, query)
                note("first render", page, sample, ms)
                ctx.close()
        ctx = new_context(browser)  # a returning student: the frontend in the browser cache, a new session
        open_page(ctx, url, "Playground", query)[0].close()
        for _ in range(repeat):
            for page in PAGES:
                pg, ms = open_page(ctx, url, page, query)
                note("first render (tab)", page, sample, ms)
                pg.close()
        pg = open_page(ctx, url, "Playground", query)[0]
        for lap in range(2):
            for page in [*list(PAGES)[1:], "Playground"]:
                link = pg.locator('[data-testid="stSidebarNav"] a', has_text=page).first
                note("switch" if lap == 0 else "switch again", page, sample, click(pg, link))
        if not buttons:
            ctx.close()
            continue
        click(pg, pg.locator('[data-testid="stSidebarNav"] a', has_text="Compare").first)
        for label in COMPARE_BUTTONS:
            for state in ("on", "off") if label != "GPT-2 (r50k_base)" else ("off", "on"):
                button = pg.locator('[data-testid="stMain"] button', has_text=label).first
                note(f"button {state}", label, sample, click(pg, button))
        ctx.close()
    return rows


FLOOR_APP = ROOT / "benchmarks" / "floor_app.py"
"""Streamlit alone: the app's six pages with none of its work (its times are the floor under the app's)."""


def floor_rows(browser, repeat: int) -> list[dict]:
    """The first renders and page switches of :data:`FLOOR_APP`, served and timed as the app is."""
    print("floor: Streamlit alone (benchmarks/floor_app.py)", flush=True)
    with tempfile.TemporaryFile() as log:
        proc, url = start_server(log, command=[sys.executable, "-m", "streamlit", "run", str(FLOOR_APP)])
        try:
            ctx = new_context(browser)
            open_page(ctx, url, "Playground", "")[0].close()  # the server's first visit: not counted
            ctx.close()
            return chromium_rows(browser, url, ["floor"], repeat, buttons=False)
        finally:
            proc.terminate()
            proc.wait(30)


def print_floor(app, floor) -> None:
    """Each kind of page time at the median: the app's, Streamlit's floor, and their difference and ratio."""
    print("The app against Streamlit alone (benchmarks/floor_app.py), median ms:")
    for what in ("first render", "first render (tab)", "switch", "switch again"):
        a, f = app[app["what"] == what]["ms"].median(), floor[floor["what"] == what]["ms"].median()
        print(f"  {what:<18} app {a:6.0f}  floor {f:6.0f}  app's own work {a - f:6.0f}  ratio {a / f:5.2f}x")
    print()


def chromium_main(args: argparse.Namespace) -> None:
    """The Chromium run (see the module docstring); prints each time, then the tables and the targets."""
    import pandas as pd
    import psutil
    from playwright.sync_api import sync_playwright

    samples = args.samples.split(",")
    load0 = os.getloadavg()
    with tempfile.TemporaryFile() as log, sync_playwright() as p:
        proc, url = start_server(log)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        t0 = time.perf_counter()
        ctx = new_context(browser)
        first = open_page(ctx, url, "Playground", "src=sample&sample=english")[1][0]
        ctx.close()
        line = warmed(log, proc)
        waited = time.perf_counter() - t0
        rss0 = psutil.Process(proc.pid).memory_info().rss
        print(f"first visit after start-up: {first:.0f} ms; warm-up done {waited:.1f} s after it began; "
              f"RSS {rss0 / 2**20:.0f} MiB\n  {line}", flush=True)  # fmt: skip
        rows = chromium_rows(browser, url, samples, args.repeat)
        rss1 = psutil.Process(proc.pid).memory_info().rss
        proc.terminate()
        proc.wait(30)
        floor = floor_rows(browser, args.repeat)
        browser.close()
    load1 = os.getloadavg()
    df = pd.DataFrame(rows)
    table = df.pivot_table(index=["what", "page"], columns="sample", values="ms", aggfunc="median").round()
    table["median"] = df.groupby(["what", "page"])["ms"].median().round()
    table["p95"] = df.groupby(["what", "page"])["ms"].apply(lambda v: pct(list(v), 0.95)).round()
    table["server"] = df.groupby(["what", "page"])["server"].median().round()
    print()
    print(f"Chromium, ms (median over {args.repeat} opens per page and sample for first renders; server: the "
          f"part between the page's last message and the run's end arriving); "
          f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; "
          f"server RSS {rss0 / 2**20:.0f} -> {rss1 / 2**20:.0f} MiB")  # fmt: skip
    print(table.astype(int).to_string())
    print()
    for what, target in (("first render", 1500), ("first render (tab)", 1500), ("switch", 500),
                         ("switch again", 500)):  # fmt: skip
        part = df[df["what"] == what]
        per_page = part.groupby("page")["ms"].median()
        print(f"{what}: median {part['ms'].median():.0f} ms (server {part['server'].median():.0f} ms), "
              f"p95 {pct(list(part['ms']), 0.95):.0f} ms; worst page {per_page.idxmax()} {per_page.max():.0f} ms "
              f"(target <= {target} ms at the median)")  # fmt: skip
    print_floor(df, pd.DataFrame(floor))
    buttons = df[df["what"].str.startswith("button")]
    per_button = buttons.groupby(["what", "page"])["ms"].median()
    print(f"Compare buttons: median {buttons['ms'].median():.0f} ms (server {buttons['server'].median():.0f} ms), "
          f"p95 {pct(list(buttons['ms']), 0.95):.0f} ms; "
          f"worst {' '.join(per_button.idxmax())} {per_button.max():.0f} ms (target <= 500 ms each)")  # fmt: skip


APPTEST_PAGES = {
    "Playground": "app_pages/playground.py",
    "Merges": "app_pages/merges.py",
    "Compare": "app_pages/compare.py",
    "Encode step by step": "app_pages/encode.py",
    "Insights": "app_pages/insights.py",
}


def timed_run(at) -> float:
    t0 = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t0
    if at.exception:
        raise SystemExit(f"page raised: {at.exception}")
    return dt


def slider_moves(at, repeat: int) -> list[float]:
    """Move the Playground's slider ``repeat`` times across its range; the seconds of each run."""
    slider = at.slider[0]
    lo, hi = slider.min, slider.max
    times = []
    for n in [lo + (hi - lo) * k // repeat for k in range(repeat)]:
        at.slider[0].set_value(n)
        times.append(timed_run(at))
    return times


def bench_upload(app: str, path: Path, repeat: int) -> None:
    """One session with ``path`` uploaded in the sidebar: the upload's run, slider moves, every page."""
    import pandas as pd
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    data = path.read_bytes()
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(app, default_timeout=1200)
    at.run()
    at.radio(key="source").set_value("Upload").run()
    at.file_uploader[0].set_value((path.name, data, "text/plain"))
    rows = [{"what": "Playground: upload (training included)", "ms": round(timed_run(at) * 1000)}]
    rows.append(
        {"what": "Playground: slider move (median)", "ms": round(statistics.median(slider_moves(at, repeat)) * 1000)}
    )
    for page, page_path in list(APPTEST_PAGES.items())[1:]:
        at.switch_page(page_path)
        rows.append({"what": f"{page}: first render", "ms": round(timed_run(at) * 1000)})
        rows.append({"what": f"{page}: again, cached", "ms": round(timed_run(at) * 1000)})
    print()
    print(f"{path} ({len(data) / 1e6:.1f} MB uploaded): server-side ms; load average {os.getloadavg()[0]:.1f}")
    print(pd.DataFrame(rows).to_string(index=False))


PRODUCTION_PICK = ("bpe", "gpt2", "cl100k_base", "o200k_base", "llama3", "mistral_v1")
"""The Compare choice the production benchmark opens (the trained BPE and five production encodings)."""


def forget_loaded_encodings() -> None:
    """Empty the per-process caches of the production loaders (the next load reads and verifies the files)."""
    from bpe_core.production.encodings import bpe_from_encoding, load_encoding
    from bpe_core.production.registry import load_production

    load_production.cache_clear()
    load_encoding.cache_clear()
    bpe_from_encoding.cache_clear()


def bench_compare_production(app: str, repeat: int) -> None:
    """First render of Compare with five production encodings chosen (cold and warm files), per sample."""
    import pandas as pd
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ui.samples import SAMPLES

    rows = []
    for key, (label, _file) in SAMPLES.items():
        for mode in ("cold", "warm"):
            times = []
            for _ in range(repeat if mode == "warm" else 1):
                at = AppTest.from_file(app, default_timeout=300)
                at.session_state["sample"] = key
                at.query_params["cmp"] = ",".join(PRODUCTION_PICK)
                at.run()  # the landing page: trains the BPE (not timed)
                at.switch_page("app_pages/compare.py")
                st.cache_resource.clear()
                st.cache_data.clear()
                if mode == "cold":
                    forget_loaded_encodings()
                times.append(timed_run(at))
                shown = [r.value.strip("*") for r in at.markdown if r.value.startswith("**")]
            rows.append({"sample": label, "what": f"Compare, 5 production encodings: first render ({mode} files)",
                         "ms": round(statistics.median(times) * 1000)})  # fmt: skip
            print(rows[-1], "columns:", ", ".join(shown), flush=True)
    table = pd.DataFrame(rows).pivot(index="what", columns="sample", values="ms")
    print()
    print(f"Compare with {', '.join(PRODUCTION_PICK)}: server-side ms (AppTest; warm = median of {repeat}); "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(table.to_string())


def apptest_main(args: argparse.Namespace) -> None:
    """The server-side tables (``--apptest``): page runs, slider moves, Compare with five production encodings."""
    import pandas as pd
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ui.samples import SAMPLES

    app = str(ROOT / "app.py")
    # warm up imports (streamlit, plotly, pandas, tiktoken) so the first sample is not charged for them
    AppTest.from_file(app, default_timeout=120).run()
    if args.compare_production:
        bench_compare_production(app, args.repeat)
        return

    rows = []
    for key, (label, _file) in SAMPLES.items():
        for page, path in APPTEST_PAGES.items():
            st.cache_resource.clear()
            st.cache_data.clear()
            at = AppTest.from_file(app, default_timeout=120)
            at.session_state["sample"] = key  # the sidebar's sample choice, as a first visit with it selected
            at.run()  # landing page (trains)
            if page != "Playground":
                at.switch_page(path)
                st.cache_resource.clear()
                st.cache_data.clear()
            else:
                st.cache_resource.clear()
                st.cache_data.clear()
            first = timed_run(at)
            cached = timed_run(at)
            rows.append({"sample": label, "what": f"{page}: first render", "ms": round(first * 1000)})
            rows.append({"sample": label, "what": f"{page}: again, cached", "ms": round(cached * 1000)})
        at = AppTest.from_file(app, default_timeout=120)
        at.session_state["sample"] = key
        at.run()
        times = slider_moves(at, args.repeat)
        rows.append(
            {"sample": label, "what": "Playground: slider move (median)", "ms": round(statistics.median(times) * 1000)}
        )
        print(rows[-1], flush=True)

    table = pd.DataFrame(rows).pivot(index="what", columns="sample", values="ms")
    print()
    print(f"Server-side ms per script run (AppTest); load average {os.getloadavg()[0]:.1f}")
    print(table.to_string())
    moves = [r["ms"] for r in rows if "slider" in r["what"]]
    print(f"slider move, worst sample: {max(moves)} ms (target <= 100 ms)")
    bench_compare_production(app, args.repeat)
    if args.upload is not None:
        bench_upload(app, args.upload, args.repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", default="english,python,multilingual,numbers", help="Chromium: samples, by key")
    ap.add_argument("--repeat", type=int, default=3, help="opens per page and sample (AppTest: slider moves)")
    ap.add_argument("--apptest", action="store_true", help="the server-side tables through AppTest instead")
    ap.add_argument("--upload", type=Path, default=None, help="AppTest: also time one session with this file")
    ap.add_argument(
        "--compare-production", action="store_true", help="AppTest: only Compare with five production encodings"
    )
    args = ap.parse_args()
    if args.apptest or args.upload is not None or args.compare_production:
        apptest_main(args)
    else:
        chromium_main(args)


if __name__ == "__main__":
    main()
