"""BPE training speed and memory: bpe_core against four peers, measured in one run.

Usage (the peers live in requirements-dev.txt: ``pip install -r requirements-dev.txt``)::

    python benchmarks/bench_train.py [--corpora small,medium] [--dir /work/corpora] [--workers 2]
                                     [--long] [--scaling] [--repeat 1] [--peers hf,gigabpe,rustbpe,bpeasy]
                                     [--huge] [--huge-peers gigabpe]

Trainers, each run in a fresh process so that peak memory is measured cleanly
(the kernels' shared library is built first, if it is not, so no timed run
pays the one-time compile; the ``kernels`` column says which carrier ours used:
``aot`` = the library loaded with ctypes, numba never imported),
all at the same vocabulary (the same number of merges: peers without special
tokens get one id less), the GPT-2 split pattern, ``--workers`` processes/threads:

* ``ours``: :func:`bpe_core.train_bpe` on the file (``pathlib.Path``: streamed in
  1 MiB chunks, counted in ``--workers`` processes), special token ``<|endoftext|>``;
  with ``--python-too`` also ``ours-py``, the same with ``BPE_CORE_KERNELS=python``
  (the regex counter and the pure-Python merge loop);
* ``hf``: Hugging Face ``tokenizers`` ``BpeTrainer``, ``ByteLevel`` pre-tokenization
  (``add_prefix_space=False``: GPT-2's regex), all 256 bytes in the alphabet,
  ``RAYON_NUM_THREADS``;
* ``gigabpe``: ``gigabpe.train_bpe([file], pretokenizer="bytelevel", threads=...)``
  (merges identical to Hugging Face's);
* ``rustbpe``: ``rustbpe.Tokenizer().train_from_iterator(lines of the file, pattern=GPT-2's)``;
* ``bpeasy``: ``bpeasy.train_bpe(lines of the file, GPT-2's pattern, max_token_length=128)``.

Cases: the corpora of ``../shared/bench/make_corpora.sh`` (about 1, 20 and 100 MB
of real text; vocab 10,000); with ``--huge``, a 1 GB corpus: ``large.txt`` ten
times over, the copies separated by ``<|endoftext|>`` as its documents are,
written once to ``huge.txt`` beside it (:func:`huge_corpus`; vocab 10,000, and
by default only ``gigabpe`` of the peers, ``--huge-peers``: the others take many
minutes on it); and, with ``--long``, single long pre-tokens (random letters a-j
of 100 KB, 300 KB and 1 MB, and 1 MB of one letter; vocab 1,000).
Columns: wall seconds of the training call (imports and start-up excluded),
its CPU seconds (user + system, all threads, and our counting processes),
for ours the counting and merging split, MB/s (input bytes / wall), and peak
memory in MiB: the process's own peak RSS (``VmHWM``), or, when higher, its RSS
plus the USS of each child (our counting workers) sampled every 20 ms.  Ratios
are ours / peer: below 1 means ours is faster or smaller.

``--scaling`` adds: counting throughput (MB/s, and CPU seconds) on the 20 MB
corpus with 1 and 2 local workers (threads with the compiled counter, else
processes) and with a 2-worker Dask ``LocalCluster`` (needs ``distributed``);
and merge-loop time against the number of distinct pre-tokens (tables of 1,
2.5, 5, 10 and 20 MB prefixes and of the 100 MB corpus, vocab 10,000).  From
these it prints the fits the README uses to estimate 10 GB on N machines.

The script also checks that every counting path (1 process, 2 processes, a
2-worker LocalCluster, a count table written and read back) gives the same
merges on the 1 MB corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EOT = "<|endoftext|>"
PEERS = ("hf", "gigabpe", "rustbpe", "bpeasy")


def _status_mib(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's threads and of its finished, waited-for children."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _lines(path: str):
    with open(path, encoding="utf-8") as f:
        yield from f


SETTLE_SECONDS = 0.3
"""Each child waits this long after its imports before the timed call, whatever the trainer.

Importing numpy starts OpenBLAS's worker threads, which spin about 0.1 s of CPU
before they sleep (measured: 0.174 CPU-s for the import and a 1 s sleep, 0.078
with one BLAS thread); none of the trainers uses BLAS, but inside the timed
window that spin took a core from the counting threads."""


def _start_clock() -> tuple[float, float, float]:
    """The timed call's start, after :data:`SETTLE_SECONDS`: (RSS in MiB, CPU seconds, wall clock seconds)."""
    time.sleep(SETTLE_SECONDS)
    return _status_mib("VmRSS"), _cpu_seconds(), time.perf_counter()


def child(kind: str, path: str, vocab: int, workers: int, specials: list[str]) -> dict:
    """Train once in this process and return the measurements (run with ``--child``)."""
    sys.path.insert(0, str(ROOT))
    from bpe_core.pretokenize import PATTERNS

    gpt2 = PATTERNS["gpt2"]
    n_merges = vocab - 256 - len(specials)
    out: dict = {"count": None, "merge": None}
    if kind in ("ours", "ours-py"):
        if kind == "ours-py":  # the pure-Python counter and merge loop, no numba
            os.environ["BPE_CORE_KERNELS"] = "python"
        from bpe_core import train_bpe

        base, cpu0, t0 = _start_clock()
        tok = train_bpe(Path(path), vocab, specials, "gpt2", num_workers=workers)
        wall = time.perf_counter() - t0
        info = tok.training
        out |= {"count": info.count_seconds, "merge": info.merge_seconds, "merges": len(tok.merges)}
        out["distinct"] = info.unique_pretokens
        from bpe_core.counting import native

        # which carrier ran the compiled counter / merge loop ("aot": the library, numba never imported)
        out["kernels"] = native.carrier() if "bpe_core.bpe.merge_kernel" in sys.modules else "python"
        out["numba imported"] = "numba" in sys.modules
    elif kind == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        base, cpu0, t0 = _start_clock()
        tok.train([path], trainer)
        wall = time.perf_counter() - t0
        out["merges"] = tok.get_vocab_size() - 256 - len(specials)
    elif kind == "gigabpe":
        import gigabpe

        base, cpu0, t0 = _start_clock()
        _, merges = gigabpe.train_bpe([path], vocab, special_tokens=specials, pretokenizer="bytelevel", threads=workers)
        wall = time.perf_counter() - t0
        out["merges"] = len(merges)
    elif kind == "rustbpe":
        import rustbpe

        tok = rustbpe.Tokenizer()
        base, cpu0, t0 = _start_clock()
        tok.train_from_iterator(_lines(path), 256 + n_merges, pattern=gpt2)
        wall = time.perf_counter() - t0
        out["merges"] = tok.vocab_size - 256
    elif kind == "bpeasy":
        import bpeasy

        base, cpu0, t0 = _start_clock()
        ranks = bpeasy.train_bpe(_lines(path), gpt2, 128, 256 + n_merges, 1000)
        wall = time.perf_counter() - t0
        out["merges"] = len(ranks) - 256
    else:
        raise SystemExit(f"unknown trainer {kind}")
    return out | {"wall": wall, "cpu": _cpu_seconds() - cpu0, "base_mib": base, "hwm_mib": _status_mib("VmHWM")}


TIME_LIMIT = {"corpus": 600.0, "huge": 3600.0, "long": 120.0}
"""Seconds a trainer may take on one case before it is stopped (reported as ``> limit``)."""


def run_child(kind: str, path: Path, vocab: int, workers: int, specials: list[str], limit: float) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, __file__, "--child", kind, str(path), str(vocab), str(workers), json.dumps(specials)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        deadline = time.monotonic() + limit
        peak = _watch_memory(proc.pid, deadline=deadline)
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return {"timeout": True}
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            return {"error": err.read().strip().splitlines()[-1:]}
        result = json.loads(out.read().strip().splitlines()[-1])
    result["rss_mib"] = max(peak / 2**20, result["hwm_mib"])
    return result


def _watch_memory(pid: int, every: float = 0.02, deadline: float = float("inf")) -> int:
    """Peak memory of a process and its children until it exits (bytes), sampled every ``every`` seconds.

    The process counts its RSS; each child (our counting workers, forked from it)
    counts its USS -- the pages only it holds -- so pages shared after ``fork`` are
    not counted twice.
    """
    import psutil

    peak = 0
    try:
        proc = psutil.Process(pid)
        while proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
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


def available(kind: str) -> bool:
    if kind in ("ours", "ours-py"):
        return True
    module = {"hf": "tokenizers"}.get(kind, kind)
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def bench_case(
    label: str,
    path: Path,
    vocab: int,
    workers: int,
    repeat: int,
    specials: list[str],
    limit: float,
    python_too: bool = False,
    peers: tuple[str, ...] = PEERS,
) -> dict:
    size = path.stat().st_size
    row: dict = {"case": label, "vocab": vocab}
    results = {}
    for kind in ("ours", *(["ours-py"] if python_too else []), *peers):
        if not available(kind):
            continue
        runs = [run_child(kind, path, vocab, workers, specials, limit) for _ in range(repeat)]
        errors = [r["error"] for r in runs if "error" in r]
        if errors:
            print(f"  {kind} failed on {label}: {errors[0]}", file=sys.stderr)
            continue
        if any(r.get("timeout") for r in runs):
            results[kind] = {"timeout": True}
            continue
        best = min(runs, key=lambda r: r["wall"])
        best["rss_mib"] = max(r["rss_mib"] for r in runs)
        results[kind] = best
    ours = results["ours"]
    row |= {
        "ours s": round(ours["wall"], 2),
        "ours CPU s": round(ours["cpu"], 2),
        "count s": round(ours["count"], 2),
        "merge s": round(ours["merge"], 2),
        "ours MB/s": round(size / 1e6 / ours["wall"], 1),
        "ours MiB": round(ours["rss_mib"]),
        "kernels": ours.get("kernels"),
    }
    py = results.get("ours-py")
    if py and not py.get("timeout"):
        row |= {"ours-py s": round(py["wall"], 2), "ours-py CPU s": round(py["cpu"], 2)}
        row |= {"ours-py count/merge s": f"{py['count']:.2f} / {py['merge']:.2f}", "ours-py MiB": round(py["rss_mib"])}
    for kind in PEERS:
        r = results.get(kind)
        if r is None:
            continue
        if r.get("timeout"):
            row[f"{kind} s"] = f"> {limit:.0f}"
            continue
        row[f"{kind} s"] = round(r["wall"], 2)
        row[f"{kind} CPU s"] = round(r["cpu"], 2)
        row[f"{kind} MiB"] = round(r["rss_mib"])
        row[f"ours/{kind} time"] = round(ours["wall"] / r["wall"], 2)
        row[f"ours/{kind} RSS"] = round(ours["rss_mib"] / r["rss_mib"], 2)
    row["distinct"] = ours.get("distinct")
    row["load"] = round(os.getloadavg()[0], 1)  # 1-minute load average when the case's runs ended
    return row


HUGE_COPIES = 10
"""The 1 GB case is the 100 MB corpus this many times over."""


def huge_corpus(d: Path, copies: int = HUGE_COPIES) -> Path:
    """``d / "huge.txt"``: ``d / "large.txt"`` ``copies`` times over, written once (reused when its size is right).

    The copies are separated by ``<|endoftext|>`` and a line break, as the
    corpus's documents are, so no pre-token spans two copies.  Written to a
    temporary name and renamed, so an interrupted build leaves no short file.

    Raises:
        FileNotFoundError: ``large.txt`` is missing.
    """
    src, out = d / "large.txt", d / "huge.txt"
    sep = (EOT + "\n").encode()
    size = copies * src.stat().st_size + (copies - 1) * len(sep)
    if out.is_file() and out.stat().st_size == size:
        return out
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            for k in range(copies):
                if k:
                    f.write(sep)
                with open(src, "rb") as part:
                    shutil.copyfileobj(part, f, 1 << 22)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def long_inputs(tmp: Path) -> list[tuple[str, Path]]:
    """Single long pre-tokens: random letters a-j and a run of one letter (one GPT-2 pre-token each)."""
    rnd = random.Random(20)
    out = []
    for n in (100_000, 300_000, 1_000_000):
        p = tmp / f"letters_{n}.txt"
        p.write_text("".join(rnd.choices("abcdefghij", k=n)), encoding="ascii")
        out.append((f"{n // 1000} KB random a-j, one pre-token", p))
    p = tmp / "run_1m.txt"
    p.write_text("a" * 1_000_000, encoding="ascii")
    out.append(("1000 KB of 'a', one pre-token", p))
    return out


# ---------------------------------------------------------------------------
# scaling


def scaling(medium: Path, workers: int, large: Path | None = None) -> tuple[list[dict], list[dict]]:
    """Counting throughput per executor on ``medium``, and merge time vs distinct pre-tokens (``large`` too)."""
    sys.path.insert(0, str(ROOT))
    from bpe_core import train_bpe_from_counts
    from bpe_core.counting import stream as counting

    size = medium.stat().st_size
    count_rows = []

    def timed(label: str, cpu_too: bool = True, **kw) -> dict:
        cpu0 = _cpu_seconds()
        r = counting.count_file(medium, "gpt2", [EOT], **kw)
        row = {"counting": label, "seconds": round(r.seconds, 2), "MB/s": round(size / 1e6 / r.seconds, 1)}
        row["CPU s"] = round(_cpu_seconds() - cpu0, 2) if cpu_too else None  # Dask workers: not our children
        row["load"] = round(os.getloadavg()[0], 1)
        count_rows.append(row)
        print(row, flush=True)
        return r

    counting.count_file(medium, "gpt2", [EOT], num_workers=1)  # the kernels' library loaded before timing
    kind = "threads (compiled counter)" if counting.kernels_ready() else "processes"
    ref = timed("1 worker", num_workers=1)
    two = timed(f"{workers} local {kind}", num_workers=workers)
    assert two.word_counts == ref.word_counts
    try:
        import distributed
    except ImportError:
        distributed = None
    if distributed is not None:
        with (
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            client.run(lambda: None)  # workers up before the clock starts
            dask_r = timed(f"Dask LocalCluster, {workers} workers", False, executor=client.get_executor())
        assert dask_r.word_counts == ref.word_counts

    merge_rows = []
    data = medium.read_bytes()
    sizes = [1, 2.5, 5, 10, 20] + ([round(large.stat().st_size / 1e6)] if large is not None else [])
    for mb in sizes:
        if mb > 20:
            r = counting.count_file(large, "gpt2", [EOT], num_workers=workers)
        else:
            cut = data[: int(mb * 1e6)]
            end = cut.rfind(b"\n")
            with tempfile.NamedTemporaryFile(suffix=".txt") as f:
                f.write(cut[: end + 1] if end > 0 else cut)
                f.flush()
                r = counting.count_file(f.name, "gpt2", [EOT], num_workers=workers)
        cpu0, t0 = _cpu_seconds(), time.perf_counter()
        tok = train_bpe_from_counts(r.word_counts, 10_000, [EOT], special_occurrences=r.special_occurrences)
        row = {
            "prefix MB": mb,
            "distinct pre-tokens": len(r.word_counts),
            "merge s": round(time.perf_counter() - t0, 2),
            "merge CPU s": round(_cpu_seconds() - cpu0, 2),
            "merges": len(tok.merges),
        }
        merge_rows.append(row)
        print(row, flush=True)
    return count_rows, merge_rows


def power_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares fit of ``y = a * x ** b`` on log-log axes: ``(a, b)``."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    n = len(xs)
    mx, my = sum(lx) / n, sum(ly) / n
    b = sum((u - mx) * (v - my) for u, v in zip(lx, ly, strict=True)) / sum((u - mx) ** 2 for u in lx)
    return math.exp(my - b * mx), b


# ---------------------------------------------------------------------------


def check_identical_merges(path: Path) -> str:
    """Every counting path gives the same merges on the 1 MB corpus (1 and 2 processes, Dask, a count table)."""
    sys.path.insert(0, str(ROOT))
    from bpe_core import train_bpe, train_bpe_from_counts
    from bpe_core.counting import stream as counting
    from bpe_core.counting.table import CountTable, load_count_table, save_count_table

    def merges(r) -> list:
        return train_bpe_from_counts(r.word_counts, 10_000, [EOT], special_occurrences=r.special_occurrences).merges

    os.environ["BPE_CORE_KERNELS"] = "python"
    whole = train_bpe(path.read_text(encoding="utf-8"), 10_000, [EOT], num_workers=1, chunk_size=1 << 40).merges
    old = counting.PARALLEL_MIN_BYTES
    counting.PARALLEL_MIN_BYTES = 0  # force the workers even on 1 MB
    try:
        paths = {"1 process": counting.count_file(path, "gpt2", [EOT], num_workers=1, chunk_bytes=1 << 18)}
        paths["2 processes"] = counting.count_file(path, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 18)
    finally:
        counting.PARALLEL_MIN_BYTES = old
    try:
        import distributed

        with (
            distributed.LocalCluster(n_workers=2, processes=True, host="127.0.0.1", dashboard_address=None) as c,
            distributed.Client(c) as client,
        ):
            paths["LocalCluster"] = counting.count_file(
                path, "gpt2", [EOT], chunk_bytes=1 << 18, executor=client.get_executor()
            )
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        r = paths["1 process"]
        t = CountTable.from_counts(r.word_counts, "gpt2", [EOT], special_occurrences=r.special_occurrences)
        save_count_table(t, Path(tmp) / "t.npz")
        paths["count table"] = load_count_table(Path(tmp) / "t.npz", pattern="gpt2")
    same = {name: merges(r) == whole for name, r in paths.items()}
    os.environ["BPE_CORE_KERNELS"] = "compiled"  # the numba counter (2 processes) and merge loop
    try:
        r = counting.count_file(path, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 18)
        same["compiled counter and merge loop"] = merges(r) == whole
    finally:
        os.environ["BPE_CORE_KERNELS"] = "auto"
    return f"identical merges to one in-memory str, 1 MB corpus, vocab 10,000: {same}"


def warm_kernels() -> str:
    """Build the kernels' shared library now if it is not (so no timed run pays it)."""
    code = "from bpe_core.counting.native import is_ready; print(is_ready())"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ready = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True)
    if ready.stdout.strip() == "True":
        return "kernels' library: already built"
    t0 = time.perf_counter()
    warm = "from bpe_core.bpe.trainer import warm_compiled_loop; warm_compiled_loop()"
    done = subprocess.run([sys.executable, "-c", warm], check=False, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return f"kernels unavailable ({done.stderr.strip().splitlines()[-1:]}): ours runs the Python paths"
    return f"kernels' library built in {time.perf_counter() - t0:.1f} s (once per machine)"


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


def _table(rows: list[dict]) -> str:
    import pandas as pd

    df = pd.DataFrame(rows)
    try:
        return df.to_markdown(index=False)
    except ImportError:
        return df.to_string(index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/work/corpora", help="directory with small.txt, medium.txt, large.txt")
    ap.add_argument("--corpora", default="small,medium", help="comma-separated corpus names (large = 100 MB)")
    ap.add_argument("--workers", type=int, default=2, help="processes/threads for every trainer")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell (best wall time kept)")
    ap.add_argument("--long", action="store_true", help="also the single-long-pre-token inputs")
    ap.add_argument("--scaling", action="store_true", help="also the counting and merge-loop scaling tables")
    ap.add_argument("--no-check", action="store_true", help="skip the identical-merges check")
    ap.add_argument("--python-too", action="store_true", help="also ours without numba (BPE_CORE_KERNELS=python)")
    ap.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated peers to run (of {','.join(PEERS)})")
    ap.add_argument(
        "--huge", action="store_true", help="also the 1 GB corpus (large.txt x10, written once to huge.txt)"
    )
    ap.add_argument("--huge-peers", default="gigabpe", help="comma-separated peers to run on the 1 GB corpus")
    args = ap.parse_args()
    peers = tuple(filter(None, args.peers.split(",")))
    huge_peers = tuple(filter(None, args.huge_peers.split(",")))
    if set(peers + huge_peers) - set(PEERS):
        ap.error(f"unknown peers {sorted(set(peers + huge_peers) - set(PEERS))}; choose from {', '.join(PEERS)}")
    print(warm_kernels())

    d = Path(args.dir)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for name in filter(None, args.corpora.split(",")):
            p = d / f"{name}.txt"
            if p.is_file():
                size = f"{p.stat().st_size / 1e6:.0f} MB"
                cases.append((f"{name} ({size})", p, 10_000, [EOT], TIME_LIMIT["corpus"], args.python_too, peers))
        if args.huge:
            t0 = time.perf_counter()
            p = huge_corpus(d)
            print(f"{p}: {p.stat().st_size / 1e9:.2f} GB ready in {time.perf_counter() - t0:.1f} s", flush=True)
            label = f"huge ({p.stat().st_size / 1e9:.1f} GB, large x{HUGE_COPIES})"
            cases.append((label, p, 10_000, [EOT], TIME_LIMIT["huge"], False, huge_peers))
        if args.long:
            cases += [
                (label, p, 1_000, [], TIME_LIMIT["long"], args.python_too, peers) for label, p in long_inputs(Path(tmp))
            ]
        for label, path, vocab, specials, limit, python_too, case_peers in cases:
            rows.append(
                bench_case(label, path, vocab, args.workers, args.repeat, specials, limit, python_too, case_peers)
            )
            print(json.dumps(rows[-1]), flush=True)
    print()
    print(f"Machine: {machine()}; {args.workers} workers/threads; load average {os.getloadavg()[0]:.1f} at the end")
    print(_table(rows))
    if args.scaling and (d / "medium.txt").is_file():
        big = d / "large.txt"
        count_rows, merge_rows = scaling(d / "medium.txt", args.workers, big if big.is_file() else None)
        print(_table(count_rows))
        print(_table(merge_rows))
        from bpe_core.bpe.trainer import COMPILED_MIN_PRETOKENS

        # one engine per fit: the compiled loop runs from COMPILED_MIN_PRETOKENS distinct pre-tokens on
        fit_rows = [r for r in merge_rows if r["distinct pre-tokens"] >= COMPILED_MIN_PRETOKENS] or merge_rows
        a, b = power_fit([r["distinct pre-tokens"] for r in fit_rows], [r["merge CPU s"] for r in fit_rows])
        print(
            f"merge-loop fit ({len(fit_rows)} tables of {COMPILED_MIN_PRETOKENS:,}+ distinct pre-tokens): "
            f"CPU seconds = {a:.3g} * distinct ** {b:.2f}"
        )
        sizes = [r["prefix MB"] for r in merge_rows]
        ha, hb = power_fit(sizes, [r["distinct pre-tokens"] for r in merge_rows])
        print(f"distinct pre-tokens fit (Heaps): distinct = {ha:.3g} * MB ** {hb:.2f}")
    if not args.no_check and (d / "small.txt").is_file():
        print(check_identical_merges(d / "small.txt"))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, path, vocab, workers = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        print(json.dumps(child(kind, path, vocab, workers, json.loads(sys.argv[6]))))
    else:
        main()
