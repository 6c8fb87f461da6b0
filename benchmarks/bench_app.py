"""Server-side page times of the Streamlit app, through ``streamlit.testing.v1.AppTest``, in one run.

Usage::

    python benchmarks/bench_app.py [--repeat 5] [--upload FILE] [--compare-production]

For each built-in sample (``ui.samples.SAMPLES``) with the default settings
(byte-level BPE, GPT-2 pattern, vocab 1,000):

* **first render** of each page in a fresh session, training included (the
  training cache is emptied first), then the same page again with the
  tokenizer already cached (``cached``);
* **slider move** on the Playground: the time of the script run after
  ``slider.set_value(...)`` (median over ``--repeat`` moves between sizes).

**Compare with five production encodings** (``--compare-production`` runs
only this): the first render of Compare opened on a link choosing the trained
BPE and GPT-2, cl100k, o200k, Llama 3 and Mistral v1 (issue 18), on each
sample; *cold* = the encodings' files not yet loaded in this process (their
loaders' caches emptied), *warm* = loaded by an earlier session (what every
later visitor meets; the Streamlit caches are emptied either way).

With ``--upload FILE`` (for example the 20 MB corpus), the same for that file
uploaded in the sidebar, as one session would meet it: the upload's run
(training included, on the Playground), slider moves, then the first render of
each other page (the tokenizer already trained) and a second one (cached).

AppTest runs the script in this process without a browser, so these are the
server's times (Python work: training, encoding, HTML building), not what a
browser adds.  The machine is shared with other jobs: numbers are noisy.
Target: a slider move on a built-in sample in at most 100 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

PAGES = {
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
    for page, page_path in list(PAGES.items())[1:]:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="slider moves per sample (median reported)")
    ap.add_argument("--upload", type=Path, default=None, help="also time one session with this file uploaded")
    ap.add_argument(
        "--compare-production", action="store_true", help="only the Compare render with five production encodings"
    )
    args = ap.parse_args()

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
        for page, path in PAGES.items():
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


if __name__ == "__main__":
    main()
