"""The compiled (numba) merge loop gives exactly the Python loop's merges and trace.

Oracles: the pure-Python merge loop of ``bpe_core.bpe.trainer`` (the same table,
``BPE_CORE_KERNELS=python``) and the textbook trainer
``bpe_core.textbook.bpe.train_merges`` (recounts every pair at every step).  Texts:
the seed articles (real English with code), the standard library's own source
(megabytes of real text with many distinct pre-tokens), multilingual text,
runs of one letter (overlapping pairs), and hand-made ties.
"""

from __future__ import annotations

import os

import pytest

from bpe_core import PATTERNS, TrainingCancelled, train_bpe, train_bpe_from_counts
from bpe_core.bpe import trainer
from bpe_core.counting.stream import KERNELS_ENV, count_text
from bpe_core.textbook.bpe import train_merges as naive_train
from tests.conftest import stdlib_text

pytest.importorskip("numba")

EOT = "<|endoftext|>"


def _train(monkeypatch, engine: str, text: str, vocab: int, specials=(), pattern="gpt2"):
    monkeypatch.setenv(KERNELS_ENV, engine)
    return train_bpe(text, vocab, list(specials), pattern)


def test_the_engine_is_chosen_as_documented(monkeypatch):
    monkeypatch.setenv(KERNELS_ENV, "auto")
    assert trainer.merge_engine(10) == "python"  # under COMPILED_MIN_PRETOKENS
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    assert trainer.merge_engine(10) == "compiled"
    assert trainer.merge_engine(10, long_bytes=70_000) == "python"  # long words: the linked-list path
    monkeypatch.setenv(KERNELS_ENV, "python")
    assert trainer.merge_engine(trainer.COMPILED_MIN_PRETOKENS + 1) == "python"
    monkeypatch.setenv(KERNELS_ENV, "fast")
    with pytest.raises(ValueError, match="BPE_CORE_KERNELS must be auto, python or compiled"):
        trainer.merge_engine(10)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "none"])
def test_compiled_loop_matches_the_naive_trainer(monkeypatch, seeds, pattern):
    text = seeds[:20000]
    tok = _train(monkeypatch, "compiled", text, 256 + 150, pattern=pattern)
    assert [(s.left, s.right, s.count) for s in tok.trace] == naive_train(text, 256 + 150, PATTERNS[pattern])


def test_compiled_loop_matches_the_naive_trainer_down_to_single_occurrences(monkeypatch, seeds):
    text = seeds[:3000]
    tok = _train(monkeypatch, "compiled", text, 5000)
    assert tok.training.stop_reason is not None
    assert [(s.left, s.right, s.count) for s in tok.trace] == naive_train(text, 5000, PATTERNS["gpt2"])
    assert sum(s.count == 1 for s in tok.trace) > 100  # the tie rule decides among many count-1 pairs


@pytest.mark.parametrize(
    "text",
    [
        "aaaa aaa aaaaaaa " * 5 + "abab ababab baba",  # overlapping pairs of one letter; a b a b
        "日本語の文章です。 " * 7 + "éé ßß ñññ",  # multi-byte: merges inside UTF-8 characters first
        "x y z xy yz zx " * 3,  # ties everywhere: the greatest bytes win
    ],
)
def test_compiled_loop_matches_the_naive_trainer_on_overlaps_and_ties(monkeypatch, text):
    tok = _train(monkeypatch, "compiled", text, 256 + 60)
    assert [(s.left, s.right, s.count) for s in tok.trace] == naive_train(text, 256 + 60, PATTERNS["gpt2"])


def test_compiled_and_python_loops_agree_on_megabytes_of_real_text(monkeypatch):
    text = stdlib_text(3_000_000)
    counted = count_text(text, "gpt2", [EOT], num_workers=1)
    assert len(counted.word_counts) > 20_000  # tens of thousands of distinct pre-tokens
    runs = {}
    for engine in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, engine)
        runs[engine] = train_bpe_from_counts(
            counted.word_counts, 4000, [EOT], special_occurrences=counted.special_occurrences
        )
    py, nb = runs["python"], runs["compiled"]
    assert py.merges == nb.merges and len(nb.merges) == 4000 - 257
    assert py.trace == nb.trace  # counts, replaced occurrences and tokens after each merge
    assert nb.training.initial_tokens == py.training.initial_tokens


def test_counts_beyond_32_bits_keep_every_bit(monkeypatch, seeds):
    """The compiled loop keeps each word's count in its header as two 32-bit halves.

    Counts of about 2**33 with the low half's top bit set (which a signed 32-bit
    entry holds as a negative number) must come back whole: the Python loop,
    which keeps Python ints, gives the same trace, and the first merge's count is
    the sum worked out here.
    """
    counted = count_text(seeds[:20000], "gpt2", [], num_workers=1).word_counts
    big = {w: c * (2**33 + 2**31 + 3) for w, c in counted.items()}
    runs = {}
    for engine in ("python", "compiled"):
        monkeypatch.setenv(KERNELS_ENV, engine)
        runs[engine] = train_bpe_from_counts(big, 256 + 300)
    assert runs["compiled"].trace == runs["python"].trace
    first = runs["compiled"].trace[0]
    pair = first.left + first.right
    want = sum(c * sum(w[i : i + 2] == pair for i in range(len(w) - 1)) for w, c in big.items())
    assert first.count == want > 2**40


def test_compiled_loop_reports_progress_and_can_be_cancelled(monkeypatch, seeds):
    seen = []
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    tok = train_bpe(seeds[:20000], 256 + 400, progress=lambda *a: seen.append(a))
    merge_calls = [a for a in seen if a[0] == "merge"]
    assert merge_calls[-1] == ("merge", len(tok.merges), 400)
    assert len(merge_calls) >= 100 and [a[1] for a in merge_calls] == sorted(a[1] for a in merge_calls)

    def stop(phase, done, total):
        if phase == "merge" and done >= 50:
            raise TrainingCancelled("stop")

    with pytest.raises(TrainingCancelled):
        train_bpe(seeds[:20000], 256 + 400, progress=stop)


def test_warm_up_builds_checks_and_puts_the_library_in_place(tmp_path, monkeypatch):
    from bpe_core.counting import native

    monkeypatch.setenv("BPE_CORE_CACHE_DIR", str(tmp_path / "cache"))
    assert not native.is_ready()
    trainer.warm_compiled_loop()  # builds, loads, runs both loops and both counters on small inputs, compares
    assert native.is_ready()
    assert os.path.dirname(native.library_path()) == str(tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith("bpe_core_kernels")] == [
        os.path.basename(native.library_path())
    ]  # the checked candidate was renamed into place, nothing else left
