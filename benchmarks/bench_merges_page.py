"""How long a step change takes on the Merges page (AppTest timings and the parts they are made of).

Run from the repository root:

    python benchmarks/bench_merges_page.py [--repeat 7]

For each built-in sample and each algorithm (byte-level BPE, and WordPiece with
the sidebar's defaults: BERT's special tokens, no lower-casing) it prints, in
milliseconds (median of ``--repeat`` runs):

* ``slider``: one AppTest run after moving the step slider to a random step.
  AppTest reruns the whole app (sidebar included), so this is an upper bound:
  in the browser a step change reruns only the page's fragment.
* ``next`` / ``tick``: the same for the Next button and for a play tick.
* ``text``, ``figures``, ``why (new k)``: the three costly parts of a step, timed
  directly: the segmented, highlighted text; the three Plotly figures; the top-10
  candidates for a step not computed before (replaying the pre-token table).

Training is cached, so none of these retrains; the first page load (which
trains) is printed separately.  A last column gives WordPiece's slider time as
a ratio of BPE's on the same sample.  Nothing here is asserted: it is a
measurement.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from bpe_core import train_bpe  # noqa: E402
from bpe_core.wordpiece import train_wordpiece  # noqa: E402
from ui.merges.history import BPEMergeHistory, WordPieceMergeHistory  # noqa: E402
from ui.merges.text import step_text_html  # noqa: E402
from ui.samples import SAMPLES, load_sample  # noqa: E402


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_sample(key: str, algorithm: str, repeat: int, rng: random.Random) -> tuple[str, float]:
    """One table row for ``key`` under ``algorithm`` (``"bpe"`` or ``"wordpiece"``), and the slider time (s)."""
    import streamlit as st

    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.selectbox(key="sample").set_value(key).run()
    at.radio(key="algorithm").set_value(algorithm).run()
    t0 = time.perf_counter()
    at.switch_page("app_pages/merges.py").run()
    first = time.perf_counter() - t0
    assert not at.exception, at.exception
    n = int(at.slider(key="merge_step").max)

    def move():
        at.slider(key="merge_step").set_value(rng.randint(1, n)).run()

    def nxt():
        if at.slider(key="merge_step").value >= n:
            at.slider(key="merge_step").set_value(1).run()
        at.button(key="merge_next").click().run()

    slider = median_time(move, repeat)
    nxt_t = median_time(nxt, repeat)
    at.slider(key="merge_step").set_value(1).run()
    at.button(key="merge_play").click().run()
    tick = median_time(at.run, repeat)

    text = load_sample(key)
    if algorithm == "wordpiece":
        history = WordPieceMergeHistory(train_wordpiece(text, 1000), text)
    else:
        history = BPEMergeHistory(train_bpe(text, 1000, ["<|endoftext|>"]), text)
    ks = [rng.randint(1, n) for _ in range(repeat)]
    it = iter(ks)
    text_t = median_time(lambda: step_text_html(history, next(it), text), repeat)
    it = iter(ks)
    figs_t = median_time(lambda: history.figures(next(it)), repeat)
    it = iter(rng.sample(range(1, n + 1), repeat))
    why_t = median_time(lambda: history.why(next(it)), repeat)
    line = (
        f"{SAMPLES[key][0][:22]:22s} {algorithm:9s} {len(text):7,d} {n:6d} {ms(first)} {ms(slider)} {ms(nxt_t)} "
        f"{ms(tick)} {ms(text_t)} {ms(figs_t)} {ms(why_t)}"
    )
    return line, slider


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement (the median is printed)")
    args = parser.parse_args()
    rng = random.Random(0)
    print("Merges page, milliseconds (median); AppTest reruns the whole app, the browser only the fragment.")
    print(
        f"{'sample':22s} {'algorithm':9s} {'chars':>7s} {'merges':>6s} {'load':>8s} {'slider':>8s} {'next':>8s} "
        f"{'tick':>8s} {'text':>8s} {'figures':>8s} {'why(new)':>8s} {'slider WP/BPE':>13s}"
    )
    for key in SAMPLES:
        bpe_line, bpe_slider = bench_sample(key, "bpe", args.repeat, rng)
        print(bpe_line, flush=True)
        wp_line, wp_slider = bench_sample(key, "wordpiece", args.repeat, rng)
        print(f"{wp_line} {wp_slider / bpe_slider:13.2f}", flush=True)


if __name__ == "__main__":
    main()
