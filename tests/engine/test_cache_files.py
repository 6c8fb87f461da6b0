"""The cache folder's files (counting.cache_files): tables made once, old libraries and tables removed.

Oracles: the files on disk (names, ages, contents) and how many times a table was computed.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from bpe_core.counting import native
from bpe_core.counting.cache_files import KEEP_STALE, cached_table, remove_stale, source_key


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CORE_CACHE_DIR", str(tmp_path))
    return tmp_path


def _aged(path, age_s: float):
    """Give ``path`` a modification time ``age_s`` seconds ago."""
    t = os.path.getmtime(path) - age_s
    os.utime(path, (t, t))


def test_remove_stale_keeps_the_current_and_the_newest_older_ones_of_its_kind(tmp_path):
    libs = []
    for k in range(6):  # six older libraries, the oldest first
        p = tmp_path / f"bpe_core_kernels-{k:016x}.so"
        p.write_bytes(b"x")
        _aged(p, 1000 - k)
        libs.append(p)
    jit = tmp_path / "numba-0000000000000001"
    (jit / "sub").mkdir(parents=True)
    (jit / "sub" / "f.nbc").write_bytes(b"x")
    other = tmp_path / "bpe_core_pattern_classes-0000000000000001.npy"
    other.write_bytes(b"x")
    current = libs[0]  # the oldest file is the current one: kept whatever its age
    removed = remove_stale(str(current))
    assert sorted(os.path.basename(p) for p in removed) == [f"bpe_core_kernels-{k:016x}.so" for k in (1, 2, 3)]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([current.name, libs[4].name, libs[5].name, jit.name, other.name])
    assert KEEP_STALE == 2


def test_remove_stale_removes_folders_and_keeps_more_when_asked(tmp_path):
    folders = []
    for k in range(4):
        d = tmp_path / f"numba-{k:016x}"
        (d / "unigram").mkdir(parents=True)
        (d / "unigram" / "k.nbi").write_bytes(b"x")
        _aged(d, 100 - k)
        folders.append(d)
    assert remove_stale(str(folders[3]), keep=3) == []
    assert [os.path.basename(p) for p in remove_stale(str(folders[3]), keep=1)] == [folders[1].name, folders[0].name]
    assert sorted(p.name for p in tmp_path.iterdir()) == [folders[2].name, folders[3].name]


def test_remove_stale_of_a_missing_folder_removes_nothing(tmp_path):
    assert remove_stale(str(tmp_path / "gone" / "numba-0000000000000001")) == []


def test_a_table_is_computed_once_then_loaded(folder):
    calls = []

    def compute():
        calls.append(1)
        return np.arange(10, dtype=np.uint8)

    def valid(t):
        return t.shape == (10,)

    first = cached_table("demo", "0123456789abcdef", compute, valid)
    again = cached_table("demo", "0123456789abcdef", compute, valid)
    assert first.tolist() == again.tolist() == list(range(10)) and len(calls) == 1
    assert os.listdir(folder) == ["bpe_core_demo-0123456789abcdef.npy"]


def test_an_invalid_table_on_disk_is_computed_again(folder):
    np.save(folder / "bpe_core_demo-0123456789abcdef.npy", np.zeros(3, dtype=np.uint8))
    got = cached_table("demo", "0123456789abcdef", lambda: np.ones(10, dtype=np.uint8), lambda t: t.shape == (10,))
    assert got.tolist() == [1] * 10
    assert np.load(folder / "bpe_core_demo-0123456789abcdef.npy").tolist() == [1] * 10


def test_a_new_table_removes_the_old_ones_of_its_kind_unless_told_not_to(folder):
    for k in range(5):
        p = folder / f"bpe_core_demo-{k:016x}.npy"
        np.save(p, np.zeros(1))
        _aged(p, 100 - k)
    np.save(folder / "bpe_core_other-0000000000000000.npy", np.zeros(1))
    cached_table("demo", "f" * 16, lambda: np.ones(2), lambda t: True, prune=False)
    assert len(list(folder.glob("bpe_core_demo-*"))) == 6
    cached_table("demo", "e" * 16, lambda: np.ones(2), lambda t: True)
    kept = sorted(p.name for p in folder.glob("bpe_core_demo-*"))
    assert kept == [f"bpe_core_demo-{4:016x}.npy", f"bpe_core_demo-{'e' * 16}.npy", f"bpe_core_demo-{'f' * 16}.npy"]
    assert (folder / "bpe_core_other-0000000000000000.npy").exists()


def test_a_folder_that_cannot_be_written_computes_the_table_each_time(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("BPE_CORE_CACHE_DIR", str(blocker / "cache"))  # under a file: no folder can be made
    calls = []
    for _ in range(2):
        got = cached_table("demo", "0" * 16, lambda: calls.append(1) or np.ones(4), lambda t: True)
        assert got.tolist() == [1.0] * 4
    assert len(calls) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_the_key_follows_the_sources_and_the_extra_text(tmp_path):
    a = source_key("counting/kernel.py", "pretokenize/tiktoken_compat.py")
    assert a == source_key("counting/kernel.py", "pretokenize/tiktoken_compat.py")
    assert a != source_key("counting/kernel.py") != source_key(extra="\\p{L}")
    assert len(a) == 16 and int(a, 16) >= 0
    with pytest.raises(OSError):
        source_key("counting/no_such_file.py")


def test_the_engine_tables_live_in_the_cache_folder_under_their_keys(folder):
    from bpe_core.counting import kernel, pretoken_kernel

    kernel._char_classes.cache_clear()
    pretoken_kernel._classes.cache_clear()
    try:
        table = kernel.char_classes()
        classes = pretoken_kernel.pattern_classes()
    finally:
        kernel._char_classes.cache_clear()
        pretoken_kernel._classes.cache_clear()
    gpt2 = folder / f"bpe_core_gpt2_classes-{source_key('counting/kernel.py', 'pretokenize/tiktoken_compat.py')}.npy"
    key = source_key("counting/pretoken_kernel.py", "pretokenize/tiktoken_compat.py")
    assert np.array_equal(np.load(gpt2), table)
    assert np.array_equal(np.load(folder / f"bpe_core_pattern_classes-{key}.npy"), classes)
    assert native.cache_dir() == str(folder)
