"""Encoding speed: the pure-Python encoder, its ``to_tiktoken()`` export and tiktoken itself, in one run.

Usage::

    python benchmarks/bench_encode.py [TEXT_FILE] [--mb 20] [--repeat 3]

On the 20 MB corpus (default ``/work/corpora/medium.txt``; ``--mb`` takes a
prefix), single-threaded, in MB/s of UTF-8 input (MB = 10^6 bytes):

* ``BPETokenizer.encode`` (pure Python) with GPT-2's ranks
  (:func:`bpe_core.reference.bpe_from_reference`) and with a tokenizer trained
  here at vocab 10,000 (on ``small.txt``);
* ``to_tiktoken()`` of the same two tokenizers (tiktoken's Rust encoder on our
  ranks and pattern);
* tiktoken's own ``r50k_base`` (GPT-2) and ``cl100k_base`` encodings.

``to_tiktoken() / tiktoken`` compares our export of GPT-2's ranks with
tiktoken's own r50k_base: the same vocabulary size, so the ratio shows only
what the export costs.  The script checks that the pure-Python GPT-2 encoder
and tiktoken's r50k_base give identical ids on the text.  The machine is
shared, so numbers are noisy; the best of ``--repeat`` runs is kept.
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

from bpe_core import train_bpe  # noqa: E402
from bpe_core.reference import bpe_from_reference, load_reference  # noqa: E402

EOT = "<|endoftext|>"


def best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", default="/work/corpora/medium.txt", help="UTF-8 text to encode")
    ap.add_argument("--mb", type=float, default=None, help="encode only the first MB (10^6 bytes) of the file")
    ap.add_argument("--repeat", type=int, default=3, help="runs per encoder (best kept); pure Python runs once")
    ap.add_argument("--train-file", default="/work/corpora/small.txt", help="text to train the 10k tokenizer on")
    args = ap.parse_args()

    import pandas as pd

    data = Path(args.file).read_bytes()
    if args.mb:
        data = data[: int(args.mb * 1e6)]
    text = data.decode("utf-8", errors="ignore")
    n_mb = len(text.encode("utf-8")) / 1e6

    gpt2_ours = bpe_from_reference("gpt2")
    trained = train_bpe(Path(args.train_file), 10_000, [EOT])
    r50k = load_reference("gpt2").encoding
    cl100k = load_reference("cl100k_base").encoding

    rows = []

    def add(name: str, vocab: int, fn, repeat: int) -> float:
        secs = best_time(fn, repeat)
        rows.append({"encoder": name, "vocab": vocab, "seconds": round(secs, 2), "MB/s": round(n_mb / secs, 2)})
        print(rows[-1], flush=True)
        return secs

    ids_ours: list[int] = []

    def ours_gpt2() -> None:
        gpt2_ours._cache.clear()  # a fresh encoder each run: no pre-token cache carried over
        ids_ours[:] = gpt2_ours.encode(text)

    def ours_trained() -> None:
        trained._cache.clear()
        trained.encode(text)

    add("pure Python, GPT-2 ranks", gpt2_ours.vocab_size, ours_gpt2, 1)
    add("pure Python, trained 10k", trained.vocab_size, ours_trained, 1)
    tk_gpt2 = gpt2_ours.to_tiktoken()
    tk_trained = trained.to_tiktoken()
    rust = {
        "to_tiktoken(), GPT-2 ranks": (gpt2_ours.vocab_size, tk_gpt2),
        "to_tiktoken(), trained 10k": (trained.vocab_size, tk_trained),
        "tiktoken r50k_base": (r50k.n_vocab, r50k),
        "tiktoken cl100k_base": (cl100k.n_vocab, cl100k),
    }
    # interleaved rounds, best of each: the load of the shared machine hits all encoders alike
    best = dict.fromkeys(rust, float("inf"))
    for enc in rust.values():
        enc[1].encode(text[:100_000], allowed_special="all")  # warm up
    for _ in range(args.repeat):
        for name, (_v, enc) in rust.items():
            t0 = time.perf_counter()
            enc.encode(text, allowed_special="all")
            best[name] = min(best[name], time.perf_counter() - t0)
    for name, (vocab, _enc) in rust.items():
        rows.append(
            {"encoder": name, "vocab": vocab, "seconds": round(best[name], 2), "MB/s": round(n_mb / best[name], 2)}
        )
    t_export, t_r50k = best["to_tiktoken(), GPT-2 ranks"], best["tiktoken r50k_base"]

    same = ids_ours == r50k.encode(text, allowed_special="all")
    print()
    print(f"{args.file}: {n_mb:.1f} MB; load average {os.getloadavg()[0]:.1f}")
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"to_tiktoken() / tiktoken r50k_base time ratio (same vocabulary): {t_export / t_r50k:.2f}")
    print(f"pure-Python GPT-2 ids identical to tiktoken r50k_base: {same}")


if __name__ == "__main__":
    main()
