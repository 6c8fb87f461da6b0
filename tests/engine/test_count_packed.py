"""The compiled counter's array path (threads, :class:`PackedCounts`) counts and trains exactly as the regex path.

With the compiled counter ready and no executor, :func:`bpe_core.counting.stream.count_files`
and :func:`bpe_core.counting.stream.count_iterable` count in threads of the calling
process into a :class:`bpe_core.counting.kernel.CountAccumulator` (numpy arrays), and
:func:`bpe_core.train_bpe` hands those arrays to the compiled merge loop without
building a dict of the table.  Oracles: the regex counter and the pure-Python
merge loop (``BPE_CORE_KERNELS=python``), and the textbook trainer.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bpe_core import PATTERNS, train_bpe
from bpe_core.counting import stream as counting
from bpe_core.counting.stream import KERNELS_ENV, PackedCounts, count_file, count_files, count_text
from bpe_core.textbook.bpe import train_merges as naive_train

pytest.importorskip("numba")

from bpe_core.counting.kernel import CountAccumulator

EOT = "<|endoftext|>"


@pytest.fixture
def parallel_small(monkeypatch):
    """Threads even for small inputs (the 4 MiB threshold would count them in one thread)."""
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)


def _both(monkeypatch, fn, *args, **kw):
    out = {}
    for mode in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, mode)
        out[mode] = fn(*args, **kw)
    return out["python"], out["compiled"]


def test_the_accumulator_adds_up_like_a_dict():
    rnd = random.Random(7)
    want: dict[bytes, int] = {}
    acc = CountAccumulator()
    for _ in range(40):  # enough distinct tokens to grow every array several times
        toks = [bytes(rnd.choices(b"ab\x00\xff c\xc3\xa9", k=rnd.randint(1, 20))) for _ in range(rnd.randint(0, 2000))]
        counts = [rnd.randint(1, 9) for _ in toks]
        for t, c in zip(toks, counts, strict=True):
            want[t] = want.get(t, 0) + c
        sizes = [len(t) for t in toks]
        acc.add(b"".join(toks), np.cumsum([0, *sizes])[:-1], sizes, counts)
    assert len(acc) == len(want)
    assert PackedCounts(*acc.result()).to_dict() == want


def test_files_counted_in_threads_as_arrays(tmp_path, monkeypatch, parallel_small, seeds, multilingual, code):
    files = []
    for i, text in enumerate([seeds, multilingual, code, "\ufeff" + EOT.join([multilingual, seeds])]):
        files.append(tmp_path / f"{i}.txt")
        files[-1].write_text(text, encoding="utf-8")  # the last starts with a byte-order mark
    py, nb = _both(monkeypatch, count_files, files, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 12, as_arrays=True)
    assert py.packed is None and nb.packed is not None and nb.word_counts == {}
    assert nb.table() == py.word_counts
    assert (nb.pretokens, nb.special_occurrences, nb.chunks) == (py.pretokens, py.special_occurrences, py.chunks)
    assert nb.workers == 2 and nb.chunks > 10
    # without as_arrays the same table comes back as the dict
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    assert count_files(files, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 12).word_counts == py.word_counts


def test_several_and_overlapping_special_tokens(tmp_path, monkeypatch, parallel_small, seeds):
    specials = ["<|a|>", "<|a|><|b|>", "é<s>", "<s>"]
    rnd = random.Random(3)
    words = seeds.split(" ")[:3000]
    text = " ".join(w + rnd.choice(["", "", *specials]) for w in words)
    path = tmp_path / "s.txt"
    path.write_text(text, encoding="utf-8")
    py, nb = _both(monkeypatch, count_file, path, "gpt2", specials, num_workers=2, chunk_bytes=1 << 12, as_arrays=True)
    assert nb.packed is not None and nb.table() == py.word_counts
    assert nb.special_occurrences == py.special_occurrences > 100
    py, nb = _both(monkeypatch, count_text, text, "gpt2", specials, num_workers=2, chunk_chars=1 << 12, as_arrays=True)
    assert nb.packed is not None and nb.table() == py.word_counts and nb.pretokens == py.pretokens


def test_invalid_utf8_and_surrogates_raise_the_regex_paths_errors(tmp_path, monkeypatch, parallel_small):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good text here\n" * 3000 + b"a \xe2\x82 b\n" + b"more text\n" * 10)
    messages = []
    for mode in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, mode)
        with pytest.raises(ValueError, match="not valid UTF-8") as err:
            count_file(path, "gpt2", num_workers=2, chunk_bytes=1 << 12, as_arrays=True)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "offset 45002" in messages[1]
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        count_text("a \ud800 b " * 10, "gpt2", num_workers=1, as_arrays=True)


def test_training_on_files_through_the_arrays_is_exact(tmp_path, monkeypatch, parallel_small, seeds, multilingual):
    path = tmp_path / "corpus.txt"
    path.write_text(EOT.join([seeds, multilingual, seeds.upper()]), encoding="utf-8")
    py, nb = _both(monkeypatch, train_bpe, Path(path), 1500, [EOT], num_workers=2, chunk_size=1 << 14)
    assert nb.merges == py.merges and nb.trace == py.trace
    assert nb.training.initial_tokens == py.training.initial_tokens
    assert nb.training.pretokens == py.training.pretokens
    assert nb.training.unique_pretokens == py.training.unique_pretokens


def test_training_through_the_arrays_matches_the_textbook_trainer(monkeypatch, parallel_small, multilingual):
    text = multilingual[:6000] + EOT + "aaaa abab " * 30 + "x x x 😀😀 é é"  # ties, overlaps, non-ASCII
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    tok = train_bpe(text, 420, [EOT], num_workers=2, chunk_size=1 << 10)
    want = naive_train(text, 420, PATTERNS["gpt2"], [EOT])
    assert [(s.left, s.right, s.count) for s in tok.trace] == want


def test_training_after_the_warm_up_loads_the_library_without_numba(tmp_path, seeds, multilingual):
    """Once the library is built, a training counts and merges with it and never imports numba or LLVM."""
    path = tmp_path / "corpus.txt"
    path.write_text(EOT.join([seeds, multilingual] * 3), encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), BPE_CORE_CACHE_DIR=str(tmp_path / "cache"))
    build = "from bpe_core.bpe.trainer import warm_compiled_loop; warm_compiled_loop()"
    done = subprocess.run([sys.executable, "-c", build], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    script = """
import os, sys
from pathlib import Path
os.environ["BPE_CORE_KERNELS"] = "compiled"
from bpe_core import train_bpe
from bpe_core.counting import stream as counting
from bpe_core.counting import native

counting.PARALLEL_MIN_BYTES = 0
tok = train_bpe(Path(sys.argv[1]), 800, ["<|endoftext|>"], num_workers=2, chunk_size=1 << 12)
assert tok.training.count_seconds > 0 and len(tok.merges) == 800 - 257
assert native.carrier() == "aot"
print(sorted(m for m in ("numba", "llvmlite") if m in sys.modules), tok.merges[:3])
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    want = train_bpe(path.read_text(encoding="utf-8"), 800, [EOT]).merges[:3]  # this process's own training
    assert done.stdout.strip() == f"[] {want}"


def test_executors_send_their_tables_as_arrays(tmp_path, monkeypatch, seeds, multilingual):
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    path = tmp_path / "corpus.txt"
    path.write_text(EOT.join([seeds, multilingual] * 2), encoding="utf-8")
    monkeypatch.setenv(KERNELS_ENV, "python")
    want = count_file(path, "gpt2", [EOT], num_workers=1, chunk_bytes=1 << 12)
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    with ThreadPoolExecutor(2) as threads, ProcessPoolExecutor(2) as processes:
        for executor in (threads, processes):
            got = count_file(path, "gpt2", [EOT], chunk_bytes=1 << 12, executor=executor, as_arrays=True)
            assert got.packed is not None and got.table() == want.word_counts
            assert (got.pretokens, got.special_occurrences, got.chunks) == (
                want.pretokens,
                want.special_occurrences,
                want.chunks,
            )
    # a worker without the kernels counts with the regex and sends the same arrays
    monkeypatch.setattr(counting, "_use_fast_here", lambda: False)
    with ThreadPoolExecutor(2) as threads:
        got = count_file(path, "gpt2", [EOT], chunk_bytes=1 << 12, executor=threads)
    assert got.word_counts == want.word_counts and got.packed is None


def test_counting_in_threads_can_be_cancelled(tmp_path, monkeypatch, parallel_small, seeds):
    from bpe_core import TrainingCancelled

    path = tmp_path / "corpus.txt"
    path.write_text(seeds * 3, encoding="utf-8")
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    seen = []

    def progress(phase, done, total):
        seen.append(done)
        if done >= 3:
            raise TrainingCancelled("stop")

    with pytest.raises(TrainingCancelled):
        count_file(path, "gpt2", [EOT], num_workers=2, chunk_bytes=1 << 12, progress=progress, as_arrays=True)
    assert seen[:4] == [0, 1, 2, 3]
