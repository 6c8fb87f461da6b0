"""Compare on a large text with every production tokenizer (issue 31 item 2): how long until the figures are ready.

Usage::

    python benchmarks/bench_compare_page.py [--corpus /work/corpora/medium.txt] [--keys all|KEY,KEY]
                                            [--whole] [--no-apptest]

Rows, on the ``--corpus`` text (default the 20 MB corpus) with every production tokenizer (``--keys``) and a
BPE trained on the first 1 MB of it (the trained one Compare shows):

* **corpus figures (cold)**: :func:`ui.catalogue.measure_all` with nothing cached -- what Compare runs
  (:func:`bpe_core.analysis.corpus.measure_corpus` for all of them at once) once the server's warm-up has
  loaded the tokenizers and compiled the kernels (both done first, outside the timing), per phase
  (count, split, encode) from its progress reports;
* **corpus figures (cached)**: the same call again: a second visit (figures kept per text digest and tokenizer);
* **Compare page, AppTest**: the whole page (picker, 22 coloured columns, figures table, charts) with that
  text as "Other text", first with nothing measured, then once more (``--no-apptest`` skips it);
* **whole text** (``--whole``): :func:`bpe_core.analysis.metrics.measure` tokenizer by tokenizer on the whole
  text, what Compare did before (minutes on 20 MB; the peer the corpus path must beat).

Target: the page ready in under 5 s on the 20 MB text with every production tokenizer.  The machine is shared
(2 cores): the load average is printed with the numbers; the current ones are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

WARM_CHARS = 20_000
"""Before timing, the kernels are compiled by measuring this many characters (as the server's warm-up does)."""

TRAIN_CHARS = 1_000_000
"""The trained BPE column is trained on this many characters of the corpus (at 1,000 tokens)."""


def load(keys: list[str]):
    from bpe_core.production.registry import load_production

    return [load_production(k) for k in keys]


def built_columns(keys: list[str], text: str):
    from bpe_core import train_bpe
    from ui.catalogue import Built

    t0 = time.perf_counter()
    builts = [Built(tok, tok.name, f"prod|{k}", None, "production") for k, tok in zip(keys, load(keys))]
    loaded = time.perf_counter() - t0
    bpe = train_bpe(text[:TRAIN_CHARS], 1000, ["<|endoftext|>"])
    builts.append(Built(bpe, f"BPE · {bpe.vocab_size}", "bench|bpe|1000"))
    return builts, loaded


def time_measure(builts, text) -> tuple[float, dict[str, float]]:
    import streamlit as st

    from ui import catalogue

    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    last = [t0]

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        phases[phase] = phases.get(phase, 0.0) + now - last[0]
        last[0] = now

    st.cache_resource.clear()
    catalogue.measure_all(builts, text, progress)
    return time.perf_counter() - t0, phases


def apptest(text: str, keys: list[str]) -> tuple[float, float]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ui import state_keys as sk

    st.cache_resource.clear()  # nothing measured: the page measures the text itself
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
    at.session_state["server_view"] = True
    at.run()
    at.switch_page("app_pages/compare.py").run()
    at.session_state[sk.COMPARE_TOKENIZERS] = ["bpe", *keys]
    at.radio(key=sk.COMPARE_SOURCE).set_value("Other text").run()
    t0 = time.perf_counter()
    at.text_area(key=sk.COMPARE_TEXT).input(text).run()
    first = time.perf_counter() - t0
    assert not at.exception, at.exception
    t0 = time.perf_counter()
    at.run()
    return first, time.perf_counter() - t0


def main() -> None:
    from bpe_core.analysis import corpus_kernel
    from bpe_core.analysis.metrics import measure
    from bpe_core.counting import unit_kernel
    from bpe_core.production.registry import PRODUCTION

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/work/corpora/medium.txt")
    ap.add_argument("--keys", default="all", help="production keys, comma-separated, or all")
    ap.add_argument("--whole", action="store_true", help="also measure each tokenizer on the whole text (slow)")
    ap.add_argument("--no-apptest", action="store_true", help="skip the AppTest rows")
    args = ap.parse_args()
    keys = list(PRODUCTION) if args.keys == "all" else args.keys.split(",")
    text = Path(args.corpus).read_text(encoding="utf-8")
    print(f"{args.corpus}: {len(text):,} characters; {len(keys)} production tokenizers + a trained BPE")
    print("load:", os.getloadavg())
    t0 = time.perf_counter()
    unit_kernel.warm()
    corpus_kernel.warm()
    builts, loaded = built_columns(keys, text)
    from bpe_core.analysis.corpus import measure_corpus

    measure_corpus(text[:WARM_CHARS], [b.tokenizer for b in builts])  # what the server's warm-up compiles
    took = time.perf_counter() - t0
    print(f"warm-up (not timed below): kernels, a {WARM_CHARS:,}-character text, {len(keys)} tokenizers loaded: "
          f"{took:.1f} s (loading {loaded:.1f} s)")  # fmt: skip
    cold, phases = time_measure(builts, text)
    print(f"corpus figures (cold):   {cold:7.2f} s   " + "  ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    t0 = time.perf_counter()
    from ui import catalogue

    catalogue.measure_all(builts, text)
    print(f"corpus figures (cached): {time.perf_counter() - t0:7.3f} s")
    print("load:", os.getloadavg())
    if not args.no_apptest:
        first, again = apptest(text, keys)
        print(f"Compare page, AppTest:   {first:7.2f} s first, {again:.2f} s again (figures cached)")
        print("load:", os.getloadavg())
    if args.whole:
        total = 0.0
        for b in builts:
            t0 = time.perf_counter()
            measure(b.tokenizer, text)
            dt = time.perf_counter() - t0
            total += dt
            print(f"  whole text {b.label:32s} {dt:7.2f} s")
        print(f"whole text, tokenizer by tokenizer: {total:7.2f} s ({total / cold:.1f}x the corpus figures)")
        print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
