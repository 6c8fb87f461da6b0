"""WordPiece training and encoding speed: bpe_core against Hugging Face ``tokenizers``, in one run.

Usage::

    python benchmarks/bench_wordpiece.py [TEXT_FILE] [--vocab-size 8000] [--naive-chars 20000]

Times, on the same text (default ``/work/corpora/small.txt``, about 1 MB of
English, falling back to the built-in samples):

* training to ``--vocab-size`` tokens: ours (pure Python, incremental) against
  Hugging Face's ``WordPieceTrainer`` (Rust, multi-threaded).  They learn
  different vocabularies -- Hugging Face's trainer picks pairs by frequency, as
  BPE does, while ours uses the course's likelihood score -- so this compares
  cost, not output;
* on a ``--naive-chars`` prefix, ours against the naive course-style trainer
  of ``bpe_core/textbook/wordpiece.py`` (every score recounted each step), which learns
  exactly the same vocabulary;
* encoding the whole text with our vocabulary: ours against Hugging Face's
  ``WordPiece`` model with the same vocabulary and ``BertPreTokenizer``
  (same ids; the script checks).

Prints seconds and ratios (ours / theirs; below 1 means ours is faster).
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

DEFAULT_TEXT = Path("/work/corpora/small.txt")


def load_text(path: str | None) -> tuple[str, str]:
    if path:
        return Path(path).read_text(encoding="utf-8"), path
    if DEFAULT_TEXT.is_file():
        return DEFAULT_TEXT.read_text(encoding="utf-8"), str(DEFAULT_TEXT)
    samples = sorted((ROOT / "samples").glob("*.txt"))
    return "\n\n".join(p.read_text(encoding="utf-8") for p in samples), "samples/*.txt"


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("text", nargs="?", help="UTF-8 text file (default: /work/corpora/small.txt)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--naive-chars", type=int, default=20_000, help="prefix length for the naive comparison")
    ap.add_argument("--naive-vocab-size", type=int, default=600)
    args = ap.parse_args()
    text, source = load_text(args.text)
    threads = os.environ.get("RAYON_NUM_THREADS", f"all {os.cpu_count()} cores")
    print(f"text: {source}, {len(text):,} characters, {len(text.encode()):,} bytes; HF threads: {threads}")

    ours, t_ours = timed(lambda: train_wordpiece(text, args.vocab_size))
    hf, t_hf = timed(lambda: hf_train(text, args.vocab_size))
    info = ours.training
    print(f"\ntrain to {args.vocab_size:,} tokens")
    print(f"  ours  {t_ours:8.3f} s  (counting {info.count_seconds:.3f} s, merging {info.merge_seconds:.3f} s; "
          f"{len(ours.trace):,} merges, vocab {ours.vocab_size:,})")  # fmt: skip
    print(f"  HF    {t_hf:8.3f} s  (vocab {hf.get_vocab_size():,})")
    print(f"  ratio ours/HF = {t_ours / t_hf:.2f}")

    prefix = text[: args.naive_chars]
    small, t_small = timed(lambda: train_wordpiece(prefix, args.naive_vocab_size))
    (vocab, _merges), t_naive = timed(lambda: naive_train(prefix, args.naive_vocab_size))
    same = [small.vocab[i] for i in range(small.vocab_size)] == vocab
    print(f"\ntrain the first {len(prefix):,} characters to {args.naive_vocab_size} tokens (same vocab: {same})")
    print(f"  ours  {t_small:8.3f} s")
    print(f"  naive {t_naive:8.3f} s")
    print(f"  ratio ours/naive = {t_small / t_naive:.3f}")

    ref = hf_with_vocab(ours.vocab)
    fresh = WordPieceTokenizer.from_dict(ours.to_dict())  # an empty word cache
    ids, t_enc = timed(lambda: fresh.encode(text))
    enc, t_hf_enc = timed(lambda: ref.encode(text, add_special_tokens=False))
    print(f"\nencode the whole text with our vocabulary ({len(ids):,} tokens, same ids: {ids == enc.ids})")
    print(f"  ours  {t_enc:8.3f} s")
    print(f"  HF    {t_hf_enc:8.3f} s")
    print(f"  ratio ours/HF = {t_enc / t_hf_enc:.2f}")


if __name__ == "__main__":
    main()
