"""WordPiece training on long words: bpe_core against Hugging Face ``tokenizers``, in one run.

Usage::

    python benchmarks/bench_wordpiece_long.py [--vocab-size 1000] [--cases rand100k,b64,a200k,...]

Each case is one text without spaces (one long word, or as BERT's
pre-tokenizer cuts it: a base64 line splits at ``+``, ``/`` and ``=``),
trained to ``--vocab-size`` tokens (default 1,000, the app's default) with
BERT's special tokens:

* ours: :func:`bpe_core.wordpiece.train_wordpiece` (words over 256 characters
  are linked lists of positions with a pair -> positions index);
* HF: ``tokenizers``' ``WordPieceTrainer`` with ``BertPreTokenizer``, the text
  given as one sequence.

They learn different vocabularies (Hugging Face's trainer picks pairs by
frequency, ours by the course's likelihood score), so this compares cost, not
output.  Each trainer runs in a fresh process (so one's memory does not count
against the other); the script prints wall seconds, CPU seconds (all threads)
and peak RSS of each, and the ratio ours / HF by wall time (below 1: ours is
faster).  ``--timeout`` bounds each run (default 300 s; a run that exceeds it
prints ``> timeout``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_text(case: str) -> str:
    """The text of a named case (deterministic)."""
    rng = random.Random(0)
    if case == "rand100k":  # 100 KB of random letters a-z: one word
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=100_000))
    if case == "rand1m":
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=1_000_000))
    if case == "b64":  # a 100 KB base64 line (BERT's pre-tokenizer cuts it at + / =)
        return base64.b64encode(rng.randbytes(75_000)).decode()
    if case == "b64url":  # the URL-safe alphabet: - and _ are punctuation too
        return base64.urlsafe_b64encode(rng.randbytes(75_000)).decode()
    if case == "alnum100k":  # letters and digits only: one 100 KB word
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", k=100_000))
    if case == "a200k":
        return "a" * 200_000
    if case == "cjk100k":  # 100,000 CJK characters without spaces: one word (BertPreTokenizer does not split CJK)
        return "".join(rng.choices("日本語中文字漢字仮名", k=100_000))
    raise ValueError(f"unknown case {case!r}")


CASES = ["rand100k", "alnum100k", "b64", "a200k", "rand1m", "cjk100k"]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
from bench_wordpiece_long import make_text
text = make_text({case!r})
t0, c0 = time.perf_counter(), time.process_time()
if {who!r} == "ours":
    from bpe_core.wordpiece import train_wordpiece
    tok = train_wordpiece(text, {vocab})
    size = tok.vocab_size
else:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tr = trainers.WordPieceTrainer(vocab_size={vocab}, special_tokens=list(DEFAULT_SPECIAL_TOKENS), show_progress=False)
    tok.train_from_iterator([text], trainer=tr)
    size = tok.get_vocab_size()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"wall": wall, "cpu": cpu, "rss": rss, "vocab": size}}))
"""


def run(who: str, case: str, vocab: int, timeout: float) -> dict | None:
    """Train in a fresh process; its measurements, or ``None`` when it ran past ``timeout`` seconds."""
    code = CHILD.format(root=str(ROOT), bench=str(Path(__file__).parent), case=case, who=who, vocab=vocab)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {[*CASES, 'b64url']}")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    print(f"vocab {args.vocab_size:,}; load average at start {' '.join(map(str, _load()))}")
    print("| case | characters | ours s (CPU) | ours MiB | HF s (CPU) | HF MiB | ours/HF |")
    print("|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        n = len(make_text(case))
        ours = run("ours", case, args.vocab_size, args.timeout)
        hf = run("hf", case, args.vocab_size, args.timeout)

        def cell(r):
            return f"> {args.timeout:.0f}" if r is None else f"{r['wall']:.2f} ({r['cpu']:.2f})"

        def mib(r):
            return "-" if r is None else f"{r['rss']:.0f}"

        ratio = "-" if ours is None or hf is None else f"{ours['wall'] / hf['wall']:.2f}"
        print(f"| {case} | {n:,} | {cell(ours)} | {mib(ours)} | {cell(hf)} | {mib(hf)} | {ratio} |", flush=True)
    print(f"load average at end {' '.join(map(str, _load()))}; {time.strftime('%Y-%m-%d %H:%M')}")


def _load() -> tuple[float, ...]:
    try:
        return tuple(round(x, 1) for x in os.getloadavg())
    except OSError:
        return ()


if __name__ == "__main__":
    main()
