"""How long a step change takes on the Merges page (AppTest timings and the parts they are made of).

Run from the repository root:

    python benchmarks/bench_merges_page.py [--repeat 7]

For each built-in sample it prints, in milliseconds (median of ``--repeat`` runs):

* ``slider``: one AppTest run after moving the step slider to a random step.
  AppTest reruns the whole app (sidebar included), so this is an upper bound:
  in the browser a step change reruns only the page's fragment.
* ``next`` / ``tick``: the same for the Next button and for a play tick.
* ``text``, ``figures``, ``why (new k)``: the three costly parts of a step, timed
  directly: the segmented, highlighted text; the three Plotly figures; the top-10
  candidates for a step not computed before (replaying the pre-token table).

Training is cached, so none of these retrains; the first page load (which
trains) is printed separately.  Nothing here is asserted: it is a measurement.
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

from ui.merges_view import BPEMergeHistory, step_text_html  # noqa: E402
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


def bench_sample(key: str, repeat: int, rng: random.Random) -> list[str]:
    import streamlit as st

    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.selectbox(key="sample").set_value(key).run()
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
    from bpe_core import train_bpe

    history = BPEMergeHistory(train_bpe(text, 1000, ["<|endoftext|>"]), text)
    ks = [rng.randint(1, n) for _ in range(repeat)]
    it = iter(ks)
    text_t = median_time(lambda: step_text_html(history, next(it), text), repeat)
    it = iter(ks)
    figs_t = median_time(lambda: history.figures(next(it)), repeat)
    it = iter(rng.sample(range(1, n + 1), repeat))
    why_t = median_time(lambda: history.why(next(it)), repeat)
    return [
        f"{SAMPLES[key][0][:22]:22s} {len(text):7,d} {n:6d} {ms(first)} {ms(slider)} {ms(nxt_t)} {ms(tick)} "
        f"{ms(text_t)} {ms(figs_t)} {ms(why_t)}"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement (the median is printed)")
    args = parser.parse_args()
    rng = random.Random(0)
    print("Merges page, milliseconds (median); AppTest reruns the whole app, the browser only the fragment.")
    print(
        f"{'sample':22s} {'chars':>7s} {'merges':>6s} {'load':>8s} {'slider':>8s} {'next':>8s} {'tick':>8s} "
        f"{'text':>8s} {'figures':>8s} {'why(new)':>8s}"
    )
    for key in SAMPLES:
        for line in bench_sample(key, args.repeat, rng):
            print(line, flush=True)


if __name__ == "__main__":
    main()
