"""Recovering merges from tiktoken ranks: the engine against the readable reference, and tiktoken's own load.

Usage::

    python benchmarks/bench_ranks.py [--encodings cl100k_base,o200k_base] [--run 1200]

Times, in one run:

* the pathological ranks file ``a, aa, aaa, ...`` (``--run`` multi-byte ranks
  after the 256 bytes): :func:`bpe_core.formats.tiktoken.ranks_to_vocab_merges`
  against the plain scan it replaced (every pair rescanned each step, kept in
  the engine as ``_scan_parts``) and against building a ``tiktoken.Encoding``
  from the same ranks (which needs no merge list);
* each production encoding given: the same three.

The merges are checked identical; prints seconds and the ratio ours / scan.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bpe_core.bpe.ranks import ranks_to_vocab_merges
from bpe_core.formats import tiktoken as tk


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def scan_only(ranks):
    saved, tk.SHORT_TOKEN = tk.SHORT_TOKEN, 1 << 62
    try:
        return ranks_to_vocab_merges(ranks)
    finally:
        tk.SHORT_TOKEN = saved


def tiktoken_build(ranks):
    import tiktoken

    return tiktoken.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=dict(ranks), special_tokens={})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--run", type=int, default=1200)
    ap.add_argument("--skip-scan-over", type=int, default=400, help="skip the old scan for runs longer than this")
    args = ap.parse_args()
    rows = []
    run = {bytes([b]): b for b in range(256)} | {b"a" * n: 254 + n for n in range(2, args.run + 2)}
    cases = [(f"a, aa, ... ({args.run} ranks)", run)]
    from bpe_core.production.registry import production_mergeable_ranks

    for key in filter(None, args.encodings.split(",")):
        cases.append((key, production_mergeable_ranks(key)))
    for name, ranks in cases:
        (_v, merges), ours = timed(lambda r=ranks: ranks_to_vocab_merges(r))
        scan = None
        if not name.startswith("a,") or args.run <= args.skip_scan_over:
            (_v2, merges2), scan = timed(lambda r=ranks: scan_only(r))
            assert merges == merges2, name
        _enc, tik = timed(lambda r=ranks: tiktoken_build(r))
        rows.append((name, ours, scan, tik))
    print(f"{'ranks':28} {'ours s':>8} {'scan s':>8} {'ours/scan':>9} {'tiktoken build s':>17}")
    for name, ours, scan, tik in rows:
        s = f"{scan:8.3f} {ours / scan:9.2f}" if scan else f"{'-':>8} {'-':>9}"
        print(f"{name:28} {ours:8.3f} {s} {tik:17.3f}")


if __name__ == "__main__":
    main()
