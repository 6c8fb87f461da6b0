"""Streaming and parallel training: files, iterables, workers, chunk boundaries, progress and cancel.

Expectations come from independent paths: the whole-text counter
``count_pretokens`` (one regex pass over the joined text, no chunking), the
naive trainer in ``bpe_core/textbook/bpe.py`` (recounts every pair each step), and
``bytes.decode`` for what a valid UTF-8 cut is.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import random
from pathlib import Path

import pytest

from bpe_core import BPETokenizer, TrainingCancelled, count_pretokens, train_bpe
from bpe_core.counting import stream as counting
from bpe_core.counting.stream import count_file, count_iterable, count_text, file_chunks
from bpe_core.pretokenize import PATTERNS
from bpe_core.textbook.bpe import train_merges as naive_train
from tests.conftest import sample, seed_text

EOT = "<|endoftext|>"


def corpus() -> str:
    """Real multi-document text: the seed articles, code, and the multilingual sample, joined by EOT lines."""
    return f"\n{EOT}\n".join([seed_text(), sample("python"), sample("multilingual"), sample("numbers")])


def as_bytes_counts(counter) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for s, c in counter.items():
        b = s.encode("utf-8")
        out[b] = out.get(b, 0) + c
    return out


def trace_of(tok: BPETokenizer) -> list[tuple[int, int, int, int, int]]:
    return [(s.left_id, s.right_id, s.new_id, s.count, s.tokens_after) for s in tok.trace]


@pytest.fixture(scope="module")
def text() -> str:
    return corpus()


@pytest.fixture(scope="module")
def text_file(tmp_path_factory, text) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    return path


def test_str_file_and_iterable_give_identical_merges(text, text_file):
    # The reference: training on the string with the default (one-chunk for this size) counting.
    ref = train_bpe(text, 700, [EOT])
    # A file cut into ~2 KB chunks (dozens of them), an open text file (its lines), and a generator
    # of 7-character pieces -- which cut through words, newlines and the special token itself.
    from_file = train_bpe(text_file, 700, [EOT], chunk_size=2048)
    with open(text_file, encoding="utf-8") as f:
        from_lines = train_bpe(f, 700, [EOT], chunk_size=1500)
    from_pieces = train_bpe((text[i : i + 7] for i in range(0, len(text), 7)), 700, [EOT], chunk_size=999)
    assert len(ref.trace) == 700 - 257
    for tok in (from_file, from_lines, from_pieces):
        assert tok.merges == ref.merges
        assert trace_of(tok) == trace_of(ref)
        assert tok.training.pretokens == ref.training.pretokens
        assert tok.training.special_occurrences == ref.training.special_occurrences == text.count(EOT) >= 3


def test_streamed_merges_match_the_naive_trainer(text, text_file):
    # Independent check of the chunked path: the naive trainer recounts every pair at every step.
    part = text[:20_000]
    path = text_file.with_name("part.txt")
    path.write_text(part, encoding="utf-8")
    tok = train_bpe(path, 257 + 60, [EOT], chunk_size=500)
    expected = naive_train(part, 257 + 60, PATTERNS["gpt2"], [EOT])
    assert [(s.left, s.right, s.count) for s in tok.trace] == expected


def test_one_and_two_workers_give_identical_merges(text_file, text, monkeypatch):
    # Lower the size under which counting stays in this process, so that 2 workers really run.
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)
    one = count_file(text_file, "gpt2", [EOT], num_workers=1, chunk_bytes=4096)
    two = count_file(text_file, "gpt2", [EOT], num_workers=2, chunk_bytes=4096)
    assert one.workers == 1 and two.workers == 2 and two.chunks > 4
    assert two.word_counts == one.word_counts
    whole, n_special = count_pretokens(text, "gpt2", [EOT])
    assert one.word_counts == as_bytes_counts(whole)
    assert one.special_occurrences == two.special_occurrences == n_special == text.count(EOT)

    tok1 = train_bpe(text_file, 600, [EOT], num_workers=1, chunk_size=4096)
    tok2 = train_bpe(text_file, 600, [EOT], num_workers=2, chunk_size=4096)
    assert tok1.merges == tok2.merges and trace_of(tok1) == trace_of(tok2)
    streamed = count_iterable(iter(text.splitlines(keepends=True)), "gpt2", [EOT], num_workers=2, chunk_chars=3000)
    assert streamed.workers == 2 and streamed.word_counts == one.word_counts


def dense_text(seed: int) -> str:
    """Lines full of 3- and 4-byte characters; each line ends in a printable ASCII character and some
    of the next lines start with an ASCII letter, so the line-break boundary rule has places to cut."""
    rnd = random.Random(seed)
    wide = "日本語テキスト中文한국어€✓→" + "😀🎉𝔘𝔫𝔦𝔠𝔬𝔡𝔢🙂🚀"
    lines = []
    for _ in range(300):
        body = "".join(rnd.choice(wide) for _ in range(rnd.randint(1, 9)))
        start = rnd.choice(["", "A", "z", "Q"])
        end = rnd.choice([".", "!", "x", "7", ""])
        lines.append(start + body + end)
        if rnd.random() < 0.1:
            lines.append(EOT + rnd.choice(wide))
    return "\n".join(lines)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("chunk_bytes", [1, 5, 13, 64])
def test_chunk_boundaries_never_split_a_character(tmp_path, seed, chunk_bytes):
    text = dense_text(seed)
    data = text.encode("utf-8")
    assert sum(len(ch.encode()) >= 3 for ch in text) > 0.5 * len(text)  # mostly 3- and 4-byte characters
    path = tmp_path / "dense.txt"
    path.write_bytes(data)
    chunks = file_chunks(path, [EOT], chunk_bytes)
    assert len(chunks) > 20
    assert chunks[0][0] == 0 and chunks[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    for s, e in chunks:
        piece = data[s:e].decode("utf-8")  # raises if a cut fell inside a character
        assert e - s >= chunk_bytes or e == len(data)
        # every cut is either just before the special token or after "<ASCII>\n" before an ASCII letter
        if s:
            assert piece.startswith(EOT) or (data[s - 2 : s - 1].isascii() and data[s - 1 : s] == b"\n")
    # and the chunked counts are the whole text's counts, for every named pattern
    for pattern in ("gpt2", "cl100k", "o200k", "none"):
        counted = count_file(path, pattern, [EOT], num_workers=1, chunk_bytes=chunk_bytes)
        whole, n_special = count_pretokens(text, pattern, [EOT])
        assert counted.word_counts == as_bytes_counts(whole), pattern
        assert counted.special_occurrences == n_special


def test_streamed_pieces_cut_anywhere_count_like_the_whole(text):
    rnd = random.Random(7)
    pieces, i = [], 0
    while i < len(text):
        k = rnd.randint(1, 40)
        pieces.append(text[i : i + k])
        i += k
    whole, n_special = count_pretokens(text, "cl100k", [EOT])
    got = count_iterable(pieces, "cl100k", [EOT], num_workers=1, chunk_chars=257)
    assert got.chunks > 50
    assert got.word_counts == as_bytes_counts(whole) and got.special_occurrences == n_special


def test_a_str_is_text_and_a_path_is_a_file(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("aaaa aaaa aaaa", encoding="utf-8")
    as_text = train_bpe(str(path), 258)  # the characters of the path name, not the file
    as_file = train_bpe(path, 258)
    # pre-tokens "aaaa", " aaaa" x2: (a,a) 9 first; then (aa,aa) 3 beats (" ",aa) 2
    assert as_file.merges == [(b"a", b"a"), (b"aa", b"aa")]
    assert as_text.merges != as_file.merges
    with pytest.raises(TypeError, match=r"str \(the text\), an os.PathLike \(a file\) or an iterable of str"):
        train_bpe(b"aaaa", 258)
    with pytest.raises(TypeError, match="pieces must be str, got bytes"):
        train_bpe([b"aaaa"], 258)


def test_file_errors(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("ok text\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0xE9 at offset 11"):
        train_bpe(bad, 300)
    with pytest.raises(FileNotFoundError):
        train_bpe(tmp_path / "missing.txt", 300)
    with pytest.raises(IsADirectoryError):
        train_bpe(tmp_path, 300)
    with pytest.raises(ValueError, match="num_workers must be at least 1"):
        train_bpe("abc", 300, num_workers=0)
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfhello hello")
    assert train_bpe(bom, 260).merges == train_bpe("hello hello", 260).merges


def test_progress_reports_each_chunk_then_the_merges(text_file):
    calls = []
    tok = train_bpe(text_file, 1200, [EOT], chunk_size=8192, progress=lambda *a: calls.append(a))
    count_calls = [c for c in calls if c[0] == "count"]
    merge_calls = [c for c in calls if c[0] == "merge"]
    n_chunks = len(file_chunks(text_file, [EOT], 8192))
    # one report before counting and one per chunk, each with the known total
    assert count_calls == [("count", k, n_chunks) for k in range(n_chunks + 1)]
    assert len(merge_calls) >= 100  # about 200 reports over 943 merges
    assert merge_calls[-1] == ("merge", len(tok.trace), 1200 - 257)
    assert [c[1] for c in merge_calls] == sorted(c[1] for c in merge_calls)


@pytest.mark.parametrize("phase", ["count", "merge"])
def test_cancel_keeps_the_previous_tokenizer(text, text_file, phase, monkeypatch):
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)
    current = train_bpe(text, 400, [EOT])
    before_ids = current.encode(text[:2000])

    def cancel(p, done, total):
        if p == phase and done >= 2:
            raise TrainingCancelled("stop")

    with contextlib.suppress(TrainingCancelled):
        current = train_bpe(text_file, 2000, [EOT], num_workers=2, chunk_size=4096, progress=cancel)
    assert current.max_vocab_size == 400
    assert current.encode(text[:2000]) == before_ids
    assert multiprocessing.active_children() == []  # the counting workers are gone


def test_count_text_chunks_a_long_string(text):
    got = count_text(text, "gpt2", [EOT], num_workers=1, chunk_chars=1000)
    whole, _ = count_pretokens(text, "gpt2", [EOT])
    assert got.chunks > 20 and got.word_counts == as_bytes_counts(whole)


def test_small_inputs_are_counted_without_workers(text, text_file):
    # Under PARALLEL_MIN_BYTES (4 MiB) nothing is gained from processes: all three kinds count here,
    # even with the default num_workers (all cores) -- a stream of unknown length is read ahead to know.
    assert len(text.encode()) < counting.PARALLEL_MIN_BYTES
    assert count_file(text_file, "gpt2", [EOT]).workers == 1
    assert count_text(text, "gpt2", [EOT], chunk_chars=2000).workers == 1
    streamed = count_iterable(iter(text.splitlines(keepends=True)), "gpt2", [EOT], chunk_chars=2000)
    assert streamed.workers == 1 and streamed.chunks > 10
