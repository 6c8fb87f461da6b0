"""Counting on any executor (local processes, threads, a Dask cluster) and on many input files.

Expectations come from independent paths: the whole-text counter
``count_pretokens`` (one regex pass over the joined text, no chunking) and the
trainer on the text as one in-memory ``str``.  The Dask cases run a
``LocalCluster`` in this test process (loopback only, no dashboard); they are
skipped when ``distributed`` is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bpe_core import count_pretokens, train_bpe, train_bpe_from_counts
from bpe_core.counting import stream as counting
from bpe_core.counting.stream import count_file, count_files, count_iterable, expand_inputs
from tests.conftest import ROOT, sample, seed_text, stdlib_code

EOT = "<|endoftext|>"


def documents() -> list[str]:
    """Real documents of different kinds: the seed articles, code, multilingual text, numbers."""
    return [seed_text(), sample("python"), sample("multilingual"), stdlib_code(), sample("numbers")]


def as_bytes_counts(counter) -> dict[bytes, int]:
    return {s.encode("utf-8"): c for s, c in counter.items()}


def trace_of(tok) -> list[tuple[int, int, int, int, int, int]]:
    return [(s.left_id, s.right_id, s.new_id, s.count, s.replaced, s.tokens_after) for s in tok.trace]


@pytest.fixture(scope="module")
def text() -> str:
    return f"\n{EOT}\n".join(documents())


@pytest.fixture(scope="module")
def text_file(tmp_path_factory, text) -> Path:
    path = tmp_path_factory.mktemp("exec") / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def reference(text):
    """Merges and trace of training on the text as one ``str`` in this process (one chunk)."""
    return train_bpe(text, 900, [EOT], num_workers=1, chunk_size=1 << 40)


def train_counted(result, specials=(EOT,)):
    tok = train_bpe_from_counts(
        result.word_counts, 900, specials, "gpt2", special_occurrences=result.special_occurrences
    )
    return tok


def test_thread_and_process_executors_count_like_the_whole_text(text, text_file, reference):
    whole, n_special = count_pretokens(text, "gpt2", [EOT])
    expected = as_bytes_counts(whole)
    with ThreadPoolExecutor(2) as threads:
        by_threads = count_file(text_file, "gpt2", [EOT], chunk_bytes=3000, executor=threads)
        from_str = counting.count_text(text, "gpt2", [EOT], chunk_chars=2500, executor=threads)
    assert by_threads.workers == 2 and by_threads.chunks > 10
    for r in (by_threads, from_str):
        assert r.word_counts == expected
        assert r.special_occurrences == n_special == text.count(EOT)
    tok = train_counted(by_threads)
    assert tok.merges == reference.merges and trace_of(tok) == trace_of(reference)


def test_one_process_n_processes_give_identical_merges(text_file, reference, monkeypatch):
    monkeypatch.setattr(counting, "PARALLEL_MIN_BYTES", 0)  # make 2 workers really run on this small file
    one = count_file(text_file, "gpt2", [EOT], num_workers=1, chunk_bytes=4096)
    two = count_file(text_file, "gpt2", [EOT], num_workers=2, chunk_bytes=4096)
    assert (one.workers, two.workers) == (1, 2)
    assert one.word_counts == two.word_counts
    for r in (one, two):
        tok = train_counted(r)
        assert tok.merges == reference.merges and trace_of(tok) == trace_of(reference)


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_dask_local_cluster_gives_identical_merges(text, text_file, reference, processes):
    distributed = pytest.importorskip("distributed")
    # processes=False talks in-process (inproc://); processes=True listens on the loopback only
    where = {"host": "127.0.0.1"} if processes else {}
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None, **where
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        executor = client.get_executor()
        counted = count_file(text_file, "gpt2", [EOT], chunk_bytes=4096, executor=executor)
        streamed = count_iterable(iter(text.splitlines(keepends=True)), "gpt2", [EOT], chunk_chars=5000,
                                  executor=executor)  # fmt: skip
        trained = train_bpe(text_file, 900, [EOT], chunk_size=4096, executor=executor)
    assert counted.workers == 2 and counted.chunks > 10
    whole, n_special = count_pretokens(text, "gpt2", [EOT])
    assert counted.word_counts == streamed.word_counts == as_bytes_counts(whole)
    assert counted.special_occurrences == n_special
    tok = train_counted(counted)
    assert tok.merges == reference.merges and trace_of(tok) == trace_of(reference)
    assert trained.merges == reference.merges and trace_of(trained) == trace_of(reference)


def test_many_files_a_directory_and_a_glob_count_as_one_text(tmp_path):
    docs = documents()
    d = tmp_path / "shards"
    (d / "sub").mkdir(parents=True)
    paths = [d / "a.txt", d / "b.txt", d / "sub" / "c.txt"]
    for p, doc in zip(paths, docs[:3], strict=True):
        p.write_text(doc, encoding="utf-8")
    (d / ".hidden").write_text("not counted", encoding="utf-8")
    expected: dict[bytes, int] = {}
    for doc in docs[:3]:  # files never join: each is pre-tokenized on its own
        for k, v in as_bytes_counts(count_pretokens(doc, "gpt2")[0]).items():
            expected[k] = expected.get(k, 0) + v
    listed = count_files(paths, chunk_bytes=2000, num_workers=1)
    whole_dir = count_files(d, chunk_bytes=2000, num_workers=1)
    globbed = count_files([str(d / "*.txt"), str(d / "**" / "c.txt")], chunk_bytes=2000, num_workers=1)
    for r in (listed, whole_dir, globbed):
        assert r.word_counts == expected
        assert r.sources == tuple(str(p) for p in paths)
    assert train_bpe(paths, 600, chunk_size=2000).merges == train_bpe_from_counts(expected, 600).merges
    assert expand_inputs([paths[1], paths[0], paths[1]]) == [str(paths[1]), str(paths[0])]
    with pytest.raises(FileNotFoundError, match="no file matches"):
        expand_inputs(str(d / "*.csv"))
    with pytest.raises(FileNotFoundError, match="not found"):
        count_files([paths[0], d / "gone.txt"])
    with pytest.raises(TypeError, match=r"concurrent\.futures\.Executor"):
        count_files(paths, executor=object())


def test_the_default_path_does_not_import_dask(text_file):
    code = (
        "import sys; from pathlib import Path; import bpe_core, bpe_core.__main__; "
        f"from bpe_core.counting.stream import count_files; count_files([{str(text_file)!r}], num_workers=1); "
        "bpe_core.train_bpe(Path(" + repr(str(text_file)) + "), 300); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "[]"
