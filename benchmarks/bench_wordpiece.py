"""WordPiece training and encoding speed: bpe_core against Hugging Face ``tokenizers``, in one run.

Usage::

    python benchmarks/bench_wordpiece.py [TEXT_FILE ...] [--dir /work/corpora] [--corpora small,medium]
                                         [--vocab-size 8000] [--repeat 3] [--naive-chars 20000]

Times, on each text (default: ``small.txt`` and ``medium.txt`` of
``../shared/bench/make_corpora.sh``, about 1 MB and 20 MB, in ``--dir``;
falling back to the built-in samples):

* training to ``--vocab-size`` tokens: ours (:func:`bpe_core.wordpiece.train_wordpiece`)
  against Hugging Face's ``WordPieceTrainer`` (Rust, multi-threaded), run
  alternately ``--repeat`` times, best wall time of each kept.  They learn
  different vocabularies -- Hugging Face's trainer picks pairs by frequency,
  as BPE does, while ours uses the course's likelihood score (what differs, and
  the tests that give our loop Hugging Face's rule and get its merges, are in
  ``tests/engine/test_wordpiece_hf.py``) -- so this compares cost, not output;
* on a ``--naive-chars`` prefix of the first text, ours against the naive
  course-style trainer of ``bpe_core/textbook/wordpiece.py`` (every score recounted
  each step), which learns exactly the same vocabulary;
* encoding the first text with our vocabulary: ours against Hugging Face's
  ``WordPiece`` model with the same vocabulary and ``BertPreTokenizer``
  (same ids; the script checks).

Prints seconds and ratios (ours / theirs; below 1 means ours is faster), with
the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokenizers import Tokenizer, models, pre_tokenizers, trainers  # noqa: E402

from bpe_core.textbook.wordpiece import train as naive_train  # noqa: E402
from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS, WordPieceTokenizer, train_wordpiece  # noqa: E402

DEFAULT_DIR = Path("/work/corpora")


def load_texts(paths: list[str], directory: Path, corpora: str) -> list[tuple[str, str]]:
    """``(text, label)`` of each file named, else of each corpus in ``directory``, else of the built-in samples."""
    if not paths:
        paths = [str(directory / f"{name}.txt") for name in corpora.split(",") if (directory / f"{name}.txt").is_file()]
    if paths:
        return [(Path(p).read_text(encoding="utf-8"), p) for p in paths]
    samples = sorted((ROOT / "samples").glob("*.txt"))
    return [("\n\n".join(p.read_text(encoding="utf-8") for p in samples), "samples/*.txt")]


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def hf_train(text: str, vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=list(DEFAULT_SPECIAL_TOKENS), show_progress=False
    )
    tok.train_from_iterator(text.splitlines(), trainer=trainer)
    return tok


def hf_with_vocab(vocab: dict[int, str]) -> Tokenizer:
    tok = Tokenizer(models.WordPiece({s: i for i, s in vocab.items()}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(list(DEFAULT_SPECIAL_TOKENS))
    return tok


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def bench_training(text: str, label: str, vocab_size: int, repeat: int) -> WordPieceTokenizer:
    """Train ours and Hugging Face's alternately ``repeat`` times; print the best wall times and their ratio."""
    t_ours = t_hf = float("inf")
    for _ in range(repeat):
        ours, t = timed(lambda: train_wordpiece(text, vocab_size))
        t_ours = min(t_ours, t)
        hf, t = timed(lambda: hf_train(text, vocab_size))
        t_hf = min(t_hf, t)
    info = ours.training
    print(f"\n{label}: {len(text.encode()):,} bytes, train to {vocab_size:,} tokens (best of {repeat}, {load()})")
    print(f"  ours  {t_ours:8.3f} s  (counting {info.count_seconds:.3f} s, merging {info.merge_seconds:.3f} s; "
          f"{len(ours.trace):,} merges, vocab {ours.vocab_size:,})")  # fmt: skip
    print(f"  HF    {t_hf:8.3f} s  (vocab {hf.get_vocab_size():,})")
    print(f"  ratio ours/HF = {t_ours / t_hf:.2f}")
    return ours


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("text", nargs="*", help="UTF-8 text files (default: the corpora in --dir)")
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="directory of make_corpora.sh's output")
    ap.add_argument("--corpora", default="small,medium", help="corpus names in --dir (small = 1 MB, medium = 20 MB)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs per trainer (best kept)")
    ap.add_argument("--naive-chars", type=int, default=20_000, help="prefix length for the naive comparison")
    ap.add_argument("--naive-vocab-size", type=int, default=600)
    args = ap.parse_args()
    texts = load_texts(args.text, args.dir, args.corpora)
    threads = os.environ.get("RAYON_NUM_THREADS", f"all {os.cpu_count()} cores")
    print(f"texts: {', '.join(label for _, label in texts)}; HF threads: {threads}; {load()}")
    models_trained = [bench_training(text, label, args.vocab_size, args.repeat) for text, label in texts]

    text, _label = texts[0]
    prefix = text[: args.naive_chars]
    small, t_small = timed(lambda: train_wordpiece(prefix, args.naive_vocab_size))
    (vocab, _merges), t_naive = timed(lambda: naive_train(prefix, args.naive_vocab_size))
    same = [small.vocab[i] for i in range(small.vocab_size)] == vocab
    print(f"\ntrain the first {len(prefix):,} characters to {args.naive_vocab_size} tokens (same vocab: {same})")
    print(f"  ours  {t_small:8.3f} s")
    print(f"  naive {t_naive:8.3f} s")
    print(f"  ratio ours/naive = {t_small / t_naive:.3f}")

    ours = models_trained[0]
    ref = hf_with_vocab(ours.vocab)
    t_enc = t_hf_enc = float("inf")
    for _ in range(args.repeat):
        fresh = WordPieceTokenizer.from_dict(ours.to_dict())  # an empty word cache
        ids, t = timed(lambda: fresh.encode(text))  # noqa: B023 -- called at once
        t_enc = min(t_enc, t)
        enc, t = timed(lambda: ref.encode(text, add_special_tokens=False))
        t_hf_enc = min(t_hf_enc, t)
    print(f"\nencode {texts[0][1]} with our vocabulary ({len(ids):,} tokens, same ids: {ids == enc.ids}; {load()})")
    print(f"  ours  {t_enc:8.3f} s")
    print(f"  HF    {t_hf_enc:8.3f} s")
    print(f"  ratio ours/HF = {t_enc / t_hf_enc:.2f}")


if __name__ == "__main__":
    main()
