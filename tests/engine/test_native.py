"""The kernels' two carriers (counting.native): the built shared library and numba's JIT give the Python paths' results.

Oracles: the pure-Python merge loop and the regex counter (``BPE_CORE_KERNELS=python``),
on real text: the seed articles, multilingual text, and megabytes of the standard
library's source (many distinct pre-tokens, so the merge loop grows and compacts
its arrays many times).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from bpe_core import train_bpe
from bpe_core.counting import native
from bpe_core.counting.stream import KERNELS_ENV, count_pretokens_fast
from bpe_core.pretokenize import count_pretokens
from tests.conftest import stdlib_text

pytest.importorskip("numba")

from bpe_core.counting import native_build

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The library built from the current sources into a fresh folder, and loaded."""
    path = str(tmp_path_factory.mktemp("native") / "bpe_core_kernels-test.so")
    native_build.build_library(path)
    native.load_library(path)
    return path


@pytest.fixture
def carrier(monkeypatch, library, request):
    monkeypatch.setattr(native, "override", request.param)
    monkeypatch.setenv(KERNELS_ENV, "compiled")
    return request.param


def _python_training(monkeypatch, text, vocab):
    monkeypatch.setenv(KERNELS_ENV, "python")
    try:
        return train_bpe(text, vocab, [EOT])
    finally:
        monkeypatch.setenv(KERNELS_ENV, "compiled")


@pytest.mark.parametrize("carrier", ["aot", "jit"], indirect=True)
def test_each_carrier_trains_what_the_python_loop_trains(monkeypatch, carrier, seeds, multilingual):
    text = EOT.join([seeds, multilingual])
    got = train_bpe(text, 1500, [EOT])
    want = _python_training(monkeypatch, text, 1500)
    assert got.merges == want.merges and len(got.merges) == 1500 - 257
    assert got.trace == want.trace
    assert native.carrier() == carrier


@pytest.mark.parametrize("carrier", ["aot", "jit"], indirect=True)
def test_each_carrier_grows_and_compacts_exactly_on_megabytes(monkeypatch, carrier):
    text = stdlib_text(1_500_000)
    got = train_bpe(text, 4000, [EOT])
    want = _python_training(monkeypatch, text, 4000)
    assert got.merges == want.merges and got.trace == want.trace


@pytest.mark.parametrize("carrier", ["aot", "jit"], indirect=True)
def test_each_carrier_counts_what_the_regex_counts(carrier, seeds, multilingual):
    for text in (seeds, multilingual, "It's 2024:  42 cafés\n\n\t naïve  ", stdlib_text(300_000)):
        fast = count_pretokens_fast(text, (EOT,), force=True)
        counts, _ = count_pretokens(text, "gpt2", (EOT,))
        assert fast is not None and fast[0] == {k.encode(): v for k, v in counts.items()}


def test_the_library_is_loaded_from_its_file(library):
    assert os.path.getsize(library) > 10_000
    assert native.carrier() == "aot"


def test_a_kernel_refuses_arrays_of_the_wrong_shape_or_type(library):
    from bpe_core.counting.kernel import gather

    buf = np.frombuffer(b"abcdef", dtype=np.uint8)
    from bpe_core.counting.kernel import _gather

    out = np.zeros(3, dtype=np.uint8)
    _gather(buf, np.array([0, 4]), np.array([1, 2]), out)
    assert bytes(out) == b"aef"
    assert bytes(gather(buf, np.array([1]), np.array([2]))) == b"bc"
    with pytest.raises(TypeError, match=r"kernel gather: argument 1 must be a C-contiguous 1-D int64 array"):
        _gather(buf, np.array([0, 4], dtype=np.int32), np.array([1, 2]), out)
    with pytest.raises(TypeError, match=r"argument 3 must be a C-contiguous 1-D uint8 array"):
        _gather(buf, np.array([0, 4]), np.array([1, 2]), np.zeros(6, dtype=np.uint8)[::2])
    with pytest.raises(TypeError, match=r"kernel gather takes 4 arguments, got 3"):
        _gather(buf, np.array([0]), np.array([1]))


def test_the_error_path_of_the_library_becomes_a_runtime_error(library, monkeypatch):
    from bpe_core.counting.kernel import _gather

    monkeypatch.setattr(native, "override", "aot")
    native._STATE["failed"].value = 1  # what the library's numba_do_raise stand-in sets
    out = np.zeros(1, dtype=np.uint8)
    with pytest.raises(RuntimeError, match=r"kernel gather failed in the compiled library"):
        _gather(np.frombuffer(b"a", dtype=np.uint8), np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64), out)
    assert native._STATE["failed"].value == 0


def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CORE_CACHE_DIR", str(tmp_path))
    assert native.cache_dir() == str(tmp_path)
    assert native.library_path().startswith(str(tmp_path) + os.sep + native.LIBRARY_PREFIX + "-")
    assert not native.is_ready()


def test_prefetch_is_a_no_op_in_python_and_the_intrinsic_in_the_kernels():
    """``prefetch`` hints the cache only: in Python it returns nothing and reads nothing, whatever the index.

    Compiled, the kernel modules call numba's intrinsic in its place (the
    merge loop's equality with the Python loop, above, runs through it).
    """
    from bpe_core.bpe import merge_kernel

    ids = np.arange(4, dtype=np.int32)
    assert native.prefetch(ids, 10**9) is None and ids.tolist() == [0, 1, 2, 3]
    native.materialize()
    assert merge_kernel.prefetch is not native.prefetch
    assert type(merge_kernel.prefetch).__name__ == "_Intrinsic"


def test_prefetch_takes_a_row_of_a_2d_array_when_compiled():
    """Compiled, ``prefetch(rows, j)`` of a 2-D array brings row ``j`` (as the piece counter does); nothing changes."""
    import numba

    native.materialize()
    from bpe_core.counting import pretoken_kernel

    fetch = pretoken_kernel.prefetch  # the intrinsic, as the kernel module calls it

    @numba.njit
    def touch(rows, j):
        fetch(rows, j)
        return rows[j, 0] + rows[j, 3]

    rows = np.arange(40, dtype=np.int64).reshape(10, 4)
    assert touch(rows, 7) == 28 + 31 and rows.tolist() == np.arange(40).reshape(10, 4).tolist()


def test_numba_caches_the_jit_code_in_a_folder_named_by_the_library_key():
    """numba keys its cache by each module's source, not by compile options: the folder carries the library's key.

    So a change to ``native.py`` (say, reference counting turned off) cannot reuse machine code cached before it.
    """
    from numba.core import config

    from bpe_core.counting import pretoken_kernel

    native.materialize()
    folder = native.numba_cache_dir()
    assert os.path.basename(folder) == f"numba-{native._key()}"
    assert native.library_path().endswith(f"-{native._key()}.so")
    assert pretoken_kernel._count_pieces.dispatcher._cache._cache_path.startswith(folder + os.sep)
    assert pretoken_kernel._key_ahead._cache._cache_path.startswith(folder + os.sep)  # a helper, rebound
    assert folder != config.CACHE_DIR  # set only while the dispatchers were made


def test_a_fresh_library_folder_keeps_the_jit_cache(tmp_path, monkeypatch):
    """``$BPE_CORE_CACHE_DIR`` moves the library, not numba's cache: a build there reuses the JIT code."""
    before = native.numba_cache_dir()
    monkeypatch.setenv("BPE_CORE_CACHE_DIR", str(tmp_path))
    assert native.cache_dir() == str(tmp_path) and native.numba_cache_dir() == before
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert native.numba_cache_dir() == str(tmp_path / "numba" / f"numba-{native._key()}")
