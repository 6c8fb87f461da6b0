"""BPE training speed and memory: bpe_core against Hugging Face ``tokenizers``, measured in one run.

Usage::

    python benchmarks/bench_train.py [--corpora small,medium,large] [--dir /work/corpora] [--workers 2]

Runs, each in a fresh process so that peak memory is measured cleanly:

* ``ours``: :func:`bpe_core.train_bpe` on the file (``pathlib.Path``: streamed in
  1 MiB chunks, pre-tokens counted in ``--workers`` processes), GPT-2 pattern,
  special token ``<|endoftext|>`` (the corpora separate documents with it);
* ``hf``: Hugging Face ``tokenizers`` ``BpeTrainer`` with ``ByteLevel``
  pre-tokenization (``add_prefix_space=False``, GPT-2's split regex), all 256
  byte symbols in the initial alphabet, the same special token and vocabulary
  size, ``RAYON_NUM_THREADS=--workers`` threads;

on the corpora built by ``../shared/bench/make_corpora.sh`` (about 1 MB, 20 MB and
100 MB of real text from Debian packages) at vocab 10,000, and on a 133 KB
English text (the first 133,000 bytes of ``small.txt``) at vocab 500, where ours
is also timed in process on a ``str`` (the app's path).

Columns: wall seconds (in the child, training only: imports and start-up
excluded), for ours the split between counting and merging, and peak memory in
MiB: the process's own peak RSS (``VmHWM``), or, when higher, the RSS plus the
USS of each counting worker sampled every 20 ms with ``psutil``; the
interpreter and imports are included for both.  ``+MiB`` is what training
added: the peak minus the RSS just before training started (after the
imports), which on small inputs is a truer measure of the training itself
than the peak.  Ratios are ours / HF: below 1 means ours is faster or smaller.  The machine is shared with other
jobs, so single runs are noisy (use ``--repeat``, the table keeps the best wall
time of the repeats).

The script also checks that the streamed, 2-worker path learns exactly the same
merges as training on the text as one in-memory ``str`` (one chunk, one
process) on the 1 MB corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EOT = "<|endoftext|>"


def _status_mib(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def child(kind: str, path: str, vocab: int, workers: int, in_process_str: bool) -> dict:
    """Train once in this process and return the measurements (run with ``--child``).

    Besides the times, the result holds ``base_mib``, the process's RSS just
    before training (interpreter, imports, and for ``--str`` the text), and
    ``hwm_mib``, its exact peak RSS (``VmHWM``: reset by ``exec``, unlike
    ``ru_maxrss``), which the 20 ms sampling can miss on runs of a few
    hundredths of a second.
    """
    sys.path.insert(0, str(ROOT))
    if kind == "ours":
        from bpe_core import train_bpe

        src = Path(path).read_text(encoding="utf-8") if in_process_str else Path(path)
        base = _status_mib("VmRSS")
        t0 = time.perf_counter()
        tok = train_bpe(src, vocab, [EOT], "gpt2", num_workers=workers)
        wall = time.perf_counter() - t0
        info = tok.training
        out = {"wall": wall, "count": info.count_seconds, "merge": info.merge_seconds, "vocab": tok.max_vocab_size}
    else:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=[EOT],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        base = _status_mib("VmRSS")
        t0 = time.perf_counter()
        tok.train([path], trainer)
        wall = time.perf_counter() - t0
        out = {"wall": wall, "count": None, "merge": None, "vocab": tok.get_vocab_size()}
    return out | {"base_mib": base, "hwm_mib": _status_mib("VmHWM")}


def run_child(kind: str, path: Path, vocab: int, workers: int, in_process_str: bool = False) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, __file__, "--child", kind, str(path), str(vocab), str(workers)]
    if in_process_str:
        cmd.append("--str")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        peak = _watch_memory(proc.pid)
        proc.wait()
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{kind} on {path} failed:\n{err.read()}")
        result = json.loads(out.read().strip().splitlines()[-1])
    # the sampled peak counts the counting workers too; VmHWM is exact for the process itself
    result["rss_mib"] = max(peak / 2**20, result["hwm_mib"])
    return result


def _watch_memory(pid: int, every: float = 0.02) -> int:
    """Peak memory of a process and its children until it exits (bytes), sampled every ``every`` seconds.

    The process counts its RSS; each child (our counting workers, forked from it)
    counts its USS -- the pages only it holds -- so pages shared after ``fork`` are
    not counted twice.  ``ru_maxrss`` cannot be used: Linux keeps it across
    ``exec``, so a child would report this (larger) script's peak.
    """
    import psutil

    peak = 0
    try:
        proc = psutil.Process(pid)
        while proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
            try:
                total = proc.memory_info().rss
                for kid in proc.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        total += kid.memory_full_info().uss
            except psutil.Error:
                break
            peak = max(peak, total)
            time.sleep(every)
    except psutil.NoSuchProcess:
        pass
    return peak


def best_of(kind: str, path: Path, vocab: int, workers: int, repeat: int, in_process_str: bool = False) -> dict:
    runs = [run_child(kind, path, vocab, workers, in_process_str) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall"])
    worst = max(runs, key=lambda r: r["rss_mib"])
    best["rss_mib"], best["base_mib"] = worst["rss_mib"], worst["base_mib"]
    return best


def check_identical_merges(path: Path) -> str:
    """Streamed 2-worker file training vs one in-memory str: do they learn identical merges on the 1 MB corpus."""
    sys.path.insert(0, str(ROOT))
    from bpe_core import counting, train_bpe

    old = counting.PARALLEL_MIN_BYTES
    counting.PARALLEL_MIN_BYTES = 0  # force the workers even on 1 MB
    try:
        streamed = train_bpe(path, 10_000, [EOT], num_workers=2, chunk_size=1 << 18)
    finally:
        counting.PARALLEL_MIN_BYTES = old
    whole = train_bpe(path.read_text(encoding="utf-8"), 10_000, [EOT], num_workers=1, chunk_size=1 << 40)
    same = streamed.merges == whole.merges
    return f"identical merges, streamed (2 workers, 256 KiB chunks) vs one str in one process: {same}"


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, Python {platform.python_version()}, {platform.system()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/work/corpora", help="directory with small.txt, medium.txt, large.txt")
    ap.add_argument("--corpora", default="small,medium,large", help="comma-separated corpus names to run")
    ap.add_argument("--workers", type=int, default=2, help="our counting processes and HF's threads")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell (best wall time kept)")
    args = ap.parse_args()

    import pandas as pd

    d = Path(args.dir)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        small = d / "small.txt"
        if small.is_file():
            data = small.read_bytes()[:133_000]
            text = data.decode("utf-8", errors="ignore")  # drop a character cut at the end
            prefix = Path(tmp) / "english_133k.txt"
            prefix.write_text(text, encoding="utf-8")
            cases.append(("133 KB (str, in process)", prefix, 500, True))
            cases.append(("133 KB (file)", prefix, 500, False))
        for name in args.corpora.split(","):
            p = d / f"{name}.txt"
            if p.is_file():
                cases.append((f"{name} ({p.stat().st_size / 1e6:.0f} MB)", p, 10_000, False))
        rows = []
        for label, path, vocab, as_str in cases:
            ours = best_of("ours", path, vocab, args.workers, args.repeat, as_str)
            hf = best_of("hf", path, vocab, args.workers, args.repeat)
            ours_added, hf_added = (r["rss_mib"] - r["base_mib"] for r in (ours, hf))
            rows.append(
                {
                    "corpus": label,
                    "vocab": vocab,
                    "ours s": round(ours["wall"], 2),
                    "count s": round(ours["count"], 2),
                    "merge s": round(ours["merge"], 2),
                    "HF s": round(hf["wall"], 2),
                    "time ours/HF": round(ours["wall"] / hf["wall"], 2),
                    "ours MiB": round(ours["rss_mib"]),
                    "HF MiB": round(hf["rss_mib"]),
                    "RSS ours/HF": round(ours["rss_mib"] / hf["rss_mib"], 2),
                    "ours +MiB": round(ours_added),
                    "HF +MiB": round(hf_added),
                    "+RSS ours/HF": round(ours_added / max(hf_added, 1), 2),
                }
            )
            print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    print()
    print(f"Machine: {machine()}; {args.workers} workers/threads; load average {os.getloadavg()[0]:.1f} at the end")
    print(pd.DataFrame(rows).to_markdown(index=False) if _has_tabulate() else pd.DataFrame(rows).to_string(index=False))
    if small.is_file():
        print(check_identical_merges(small))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, path, vocab, workers = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        print(json.dumps(child(kind, path, vocab, workers, "--str" in sys.argv)))
    else:
        main()
