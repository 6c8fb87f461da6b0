"""The compiled kernels and what carries them: a shared library built ahead of time, or numba's JIT.

The hot loops of counting (:mod:`bpe_core.counting.kernel`) and of the BPE merge
loop (:mod:`bpe_core.bpe.merge_kernel`) are Python functions written for numba.
Nothing here imports numba on its own: a function marked :func:`njit` (a helper)
or :func:`kernel` (an entry point called from Python) stays plain Python until
a carrier needs machine code.  Two carriers run the kernels:

* ``"aot"`` (ahead of time): :mod:`bpe_core.counting.native_build` has numba compile every
  kernel once, as a C-callable function over raw pointers, into one shared
  library in the cache directory (:func:`library_path`), linked by the ``zig``
  toolchain that the ``ziglang`` wheel ships (nothing to install by hand, no
  system compiler).  Later processes load that file with :mod:`ctypes`: they
  never import numba or LLVM, which hold about 130 MiB once loaded, and ctypes
  releases the GIL around each call, so threads count in parallel.
* ``"jit"``: numba compiles the kernels in this process (its own disk cache
  keeps the machine code), for when the library is not built yet and a caller
  insists (:data:`bpe_core.counting.stream.KERNELS_ENV` ``compiled``: tests and
  benchmarks), or when it cannot be built here.

Both run the same machine code from the same sources, so their results are
equal (tested, ``tests/engine/test_native.py``).  A kernel never allocates: the
Python callers size every array, and a kernel that needs more room says so
in its return value, so the library needs no numba runtime.

>>> from bpe_core.counting import native
>>> native.carrier() in ("aot", "jit", None)
True
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import sys
import threading
from collections.abc import Callable
from functools import lru_cache

import numpy as np

__all__ = [
    "HAVE_NUMBA",
    "LIBRARY_PREFIX",
    "MMAP_THRESHOLD",
    "Kernel",
    "cache_dir",
    "carrier",
    "is_ready",
    "kernel",
    "kernels",
    "library_path",
    "load_library",
    "materialize",
    "njit",
    "override",
    "prefetch",
    "release_large_blocks",
]

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
"""Whether numba is installed (found without importing it): needed to build the library or to JIT."""

KERNEL_MODULES: tuple[str, ...] = (
    "bpe_core.counting.kernel",
    "bpe_core.counting.unit_kernel",
    "bpe_core.counting.pretoken_kernel",
    "bpe_core.analysis.corpus_kernel",
    "bpe_core.bpe.merge_kernel",
    "bpe_core.wordpiece.wp_kernel",
    "bpe_core.wordpiece.encode_kernel",
    "bpe_core.unigram.kernels",
    "bpe_core.bpe.piece_merge_kernel",
)
"""The modules that declare kernels (:func:`kernel`); the library holds all of theirs."""

KERNEL_SOURCES: tuple[str, ...] = (
    "counting/native.py",
    "counting/native_build.py",
    "counting/kernel.py",
    "counting/unit_kernel.py",
    "counting/pretoken_kernel.py",
    "analysis/corpus_kernel.py",
    "bpe/merge_kernel.py",
    "wordpiece/wp_kernel.py",
    "wordpiece/encode_kernel.py",
    "unigram/kernels.py",
    "bpe/piece_merge_kernel.py",
)
"""The source files (relative to ``bpe_core/``) whose text the library's machine code depends on."""

LIBRARY_PREFIX = "bpe_core_kernels"
"""File names of the built library start with this.

Each kernel's symbol is its module's dotted name with ``_`` for ``.``, then ``_<name>``."""

_DTYPES = {"u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "i4": np.int32, "i8": np.int64, "f8": np.float64}

_HELPERS: list[tuple[Callable, dict]] = []
"""Every :func:`njit` helper with its numba options, in definition order."""

_KERNELS: dict[str, Kernel] = {}
"""Every :func:`kernel`, by name."""

_LOCK = threading.RLock()
_STATE: dict[str, object] = {}
"""``materialized`` (numba dispatchers made), ``library`` (the loaded ctypes library), its ``path``
and ``failed`` flag (see :mod:`bpe_core.counting.native_build`), ``mallopt`` (:func:`release_large_blocks` ran)."""

override: str | None = None
"""Tests set this to ``"aot"`` or ``"jit"`` to run one carrier whatever :func:`carrier` would choose."""


def njit(*args, **options):
    """Mark a helper that kernels call, with numba's ``njit`` options; it stays plain Python until :func:`materialize`.

    Use bare (``@njit``) or with options (``@njit(inline="always")``).
    """

    def mark(func):
        _HELPERS.append((func, options))
        return func

    return mark(args[0]) if args and callable(args[0]) else mark


def prefetch(a, i) -> None:
    """Ask the CPU to bring ``a[i]`` into its cache ahead of use; nothing else happens (no value, no fault).

    ``a`` is a 1-D array, or a 2-D one whose row ``i`` is brought (its first item's cache line).

    Kernels call it a few items ahead of the item they work on, so that the
    memory loads of several items overlap instead of waiting one after another.
    In Python it does nothing; :func:`materialize` puts in its place, in every
    kernel module, a numba intrinsic that emits LLVM's ``llvm.prefetch`` (read,
    high locality, data cache).
    """


def _prefetch_intrinsic():
    """The numba intrinsic that :func:`prefetch` becomes in compiled code (``llvm.prefetch`` of ``&a[i]``)."""
    from llvmlite import ir
    from numba.core import cgutils
    from numba.core import types as nt
    from numba.extending import intrinsic

    @intrinsic
    def prefetch_item(typingctx, a, i):
        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            array = context.make_array(array_type)(context, builder, args[0])
            # row i of an n-D array: its first item
            index = [args[1]] + [context.get_constant(signature.args[1], 0)] * (array_type.ndim - 1)
            item = cgutils.get_item_pointer(context, builder, array_type, array, index, wraparound=False)
            byte_ptr = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), "llvm.prefetch.p0i8"
            )
            # read (0), locality 3 (keep in every cache level), data cache (1)
            builder.call(fn, [builder.bitcast(item, byte_ptr), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return nt.void(a, i), codegen

    return prefetch_item


class Kernel:
    """An entry point of the compiled code, called from Python with numpy arrays and integers.

    Args:
        func: the Python function (numba-compilable, nopython, no allocation).
        args: one spec per argument: ``"u1[]"``, ``"u2[]"``, ``"u4[]"``, ``"i4[]"``, ``"i8[]"``, ``"f8[]"``
            (C-contiguous 1-D arrays of uint8 / uint16 / uint32 / int32 / int64 / float64), ``"i8[:,:]"``
            (C-contiguous 2-D int64) or ``"i8"`` (an integer).
        returns: ``"i8"`` (an integer) or ``None``.
        nrt: compile with numba's reference counting of arrays (its NRT; numba's ``_nrt`` flag).  Off by
            default: a kernel allocates nothing (the library links no allocator), and with it on numba counts
            a reference for each array argument of an inlined helper at each call -- a call into the runtime
            that cost 20-50 % of the hot loops (the piece counter, the merge loops).

    Calling checks each array's dtype, dimensions and contiguity (a ``TypeError``
    names the argument; a wrong pointer would otherwise read the wrong memory),
    then runs the kernel on the current :func:`carrier`.
    """

    def __init__(self, func: Callable, args: tuple[str, ...], returns: str | None, nrt: bool = False) -> None:
        self.func = func
        self.name = func.__name__.lstrip("_")
        self.symbol = f"{func.__module__.replace('.', '_')}_{self.name}"
        self.args = args
        # the specs parsed once: each argument's (dtype code, dimensions), 0 dimensions for an integer
        self.params = tuple((spec[:2], (spec.count(":") or 1) if "[" in spec else 0) for spec in args)
        self.returns = returns
        self.nrt = nrt
        self.dispatcher = None  # numba's, after materialize()
        self._cfn = None  # the ctypes function, once the library is loaded
        self.__doc__ = func.__doc__
        self.__wrapped__ = func

    def _check(self, values: tuple) -> None:
        if len(values) != len(self.params):
            raise TypeError(f"kernel {self.name} takes {len(self.params)} arguments, got {len(values)}")
        for i, (code, ndim) in enumerate(self.params):
            if not ndim:
                continue
            a, dtype = values[i], _DTYPES[code]
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim or not a.flags.c_contiguous:
                got = (
                    f"{a.dtype} {a.ndim}-D, contiguous={a.flags.c_contiguous}" if isinstance(a, np.ndarray) else type(a)
                )
                want = f"a C-contiguous {ndim}-D {dtype.__name__} array"
                raise TypeError(f"kernel {self.name}: argument {i} must be {want}, got {got}")

    def __call__(self, *values):
        """Run the kernel on ``values`` (arrays and integers, as declared); returns its integer result or ``None``.

        Raises:
            TypeError: an argument is not as declared.
            RuntimeError: the library's error path ran (see :mod:`bpe_core.counting.native_build`).
        """
        self._check(values)
        if carrier() == "aot":
            flat: list[int] = []
            for v, (_, ndim) in zip(values, self.params):
                if ndim:
                    flat.append(v.ctypes.data)
                    flat.extend(v.shape)
                else:
                    flat.append(int(v))
            result = self._cfn(*flat)
            failed = _STATE["failed"]
            if failed.value:  # the error path of numba's wrapper ran (see bpe_core.counting.native_build)
                failed.value = 0
                raise RuntimeError(f"kernel {self.name} failed in the compiled library {_STATE['path']}")
        else:
            materialize()
            result = self.dispatcher(*values)
        return None if self.returns is None else int(result)

    def c_signature(self) -> tuple[list, object]:
        """``(argtypes, restype)`` of the library's C function (pointers, then the dimensions of each array)."""
        argtypes: list = []
        for _, ndim in self.params:
            argtypes += [ctypes.c_void_p, *[ctypes.c_int64] * ndim] if ndim else [ctypes.c_int64]
        return argtypes, (None if self.returns is None else ctypes.c_int64)


def kernel(*args: str, returns: str | None = "i8", nrt: bool = False):
    """Declare an entry point of this package's compiled code (see :class:`Kernel` for the argument specs).

    >>> from bpe_core.counting.kernel import _gather  # @kernel("u1[]", "i8[]", "i8[]", "u1[]", returns=None)
    >>> _gather.args, _gather.symbol
    (('u1[]', 'i8[]', 'i8[]', 'u1[]'), 'bpe_core_counting_kernel_gather')
    """

    def make(func: Callable) -> Kernel:
        k = Kernel(func, args, returns, nrt)
        _KERNELS[f"{func.__module__}.{k.name}"] = k
        return k

    return make


def kernels() -> list[Kernel]:
    """Every declared kernel, after importing the modules that declare them."""
    import importlib

    modules = KERNEL_MODULES
    for name in modules:
        importlib.import_module(name)
    return [k for key, k in _KERNELS.items() if key.rsplit(".", 1)[0] in modules]


def materialize() -> None:
    """Import numba and turn every helper and kernel into a numba dispatcher (once per process).

    Helpers are rebound in their modules, so that compiled code calling them finds
    dispatchers (compiled without reference counting, as kernels are by default:
    see :class:`Kernel`'s ``nrt``); kernels keep theirs in :attr:`Kernel.dispatcher`
    (their module names stay the :class:`Kernel`, which Python callers use).

    Raises:
        ImportError: numba is not installed.
    """
    with _LOCK:
        if _STATE.get("materialized"):
            return
        import numba

        release_large_blocks()
        declared = kernels()  # imports the modules that declare helpers and kernels
        modules = {k.func.__module__ for k in declared}
        compiled_prefetch = _prefetch_intrinsic()
        for name in modules:  # each kernel module's own name for prefetch
            names = sys.modules[name].__dict__
            for key, value in list(names.items()):
                if value is prefetch:
                    names[key] = compiled_prefetch
        with _numba_cache_in(numba_cache_dir()):
            for func, options in _HELPERS:
                if func.__module__ not in modules:
                    continue
                compiled = numba.njit(cache=True, error_model="numpy", **{"_nrt": False, **options})(func)
                sys.modules[func.__module__].__dict__[func.__name__] = compiled
            for k in declared:
                k.dispatcher = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=k.nrt)(k.func)
        _STATE["materialized"] = True


def numba_cache_dir() -> str:
    """Where numba caches this package's JIT-compiled code: a folder per key of the library (:func:`library_path`).

    numba keys its on-disk cache by each module's own source and the function's
    types, not by the compile options (reference counting, :class:`Kernel`'s
    ``nrt``) nor by this module's :func:`prefetch`; keyed by the library's key
    (every kernel source, this file included, the tools, the CPU), a change to any
    of them starts from an empty cache instead of reusing stale machine code.
    Under ``$NUMBA_CACHE_DIR`` when it is set, else where :func:`cache_dir` is
    without ``$BPE_CORE_CACHE_DIR``: a library built into a fresh folder (a
    test's, a server's) reuses the JIT code compiled before instead of compiling
    every kernel again (3.5 minutes on a 2-core machine).
    """
    return os.path.join(os.environ.get("NUMBA_CACHE_DIR") or _default_cache_dir(), f"numba-{_key()}")


@contextlib.contextmanager
def _numba_cache_in(folder: str):
    """Set numba's cache folder to ``folder`` while dispatchers are made (each picks its folder when made)."""
    from numba.core import config

    before = config.CACHE_DIR
    config.CACHE_DIR = folder
    try:
        yield
    finally:
        config.CACHE_DIR = before


# ---------------------------------------------------------------------------
# where the library lives, and loading it


def cache_dir() -> str:
    """The folder for the built library and other caches of this package.

    ``$BPE_CORE_CACHE_DIR`` when set; else the ``__pycache__`` folder beside this
    file when it is writable (as Python's own bytecode cache); else
    ``$XDG_CACHE_HOME/bpe_core`` (``~/.cache/bpe_core``).
    """
    return os.environ.get("BPE_CORE_CACHE_DIR") or _default_cache_dir()


def _default_cache_dir() -> str:
    """:func:`cache_dir` without ``$BPE_CORE_CACHE_DIR``: beside this file when writable, else the user's cache."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    try:
        os.makedirs(here, exist_ok=True)
        if os.access(here, os.W_OK):
            return here
    except OSError:
        pass
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "bpe_core")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _cpu() -> str:
    """What the machine code was compiled for: the CPU's model and feature flags (Linux), else the platform."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor()


@lru_cache(maxsize=1)
def _key() -> str:
    """A digest of everything the library's machine code depends on (sources, tools' versions, CPU)."""
    h = hashlib.sha256()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bpe_core/
    for name in KERNEL_SOURCES:
        with open(os.path.join(package, *name.split("/")), "rb") as f:
            h.update(f.read())
    h.update(f"{_version('numba')} {_version('llvmlite')} {_version('ziglang')} {sys.version}".encode())
    h.update(f"{platform.machine()} {platform.system()} {_cpu()}".encode())
    return h.hexdigest()[:16]


def library_path() -> str:
    """Path of the shared library of the current sources, tools and CPU (it may not exist yet)."""
    suffix = ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"
    return os.path.join(cache_dir(), f"{LIBRARY_PREFIX}-{_key()}{suffix}")


def is_ready() -> bool:
    """True when the library of the current sources is built (loading it takes milliseconds)."""
    return os.path.exists(library_path())


def load_library(path: str | None = None) -> None:
    """Load a built library (default :func:`library_path`) and bind every kernel to its C function.

    Raises:
        OSError: the file is missing or cannot be loaded (a symbol it needs is missing).
        AttributeError: a kernel's symbol is not in it.
    """
    with _LOCK:
        path = path or library_path()
        lib = ctypes.CDLL(path)
        release_large_blocks()
        for k in kernels():
            fn = getattr(lib, k.symbol)
            fn.argtypes, fn.restype = k.c_signature()
            k._cfn = fn
        _STATE["failed"] = ctypes.c_int32.in_dll(lib, "bpe_core_failed")
        _STATE["library"], _STATE["path"] = lib, path


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)

MMAP_THRESHOLD = 1 << 20
"""1 MiB: blocks at least this large are mapped on their own and unmapped when freed.

Measured (training in one process, two runs each), glibc's dynamic threshold /
128 KiB / 1 MiB / 4 MiB: peak RSS on the 100 MB corpus 245-251 / 201-202 /
200 / 205-208 MiB, on the 20 MB corpus 102-103 / 105 / 115 MiB (128 KiB
onwards); counting 20 MB alone 0.34-0.36 / 0.43 / 0.39 / 0.35 CPU-s (each
chunk's buffers are fresh pages below the threshold: 14,000 / 38,000 /
33,000 / 17,500 page faults).  1 MiB keeps both peaks low for about 0.05
CPU-s per 20 MB."""


def release_large_blocks() -> None:
    """Have glibc's ``malloc`` give every block of :data:`MMAP_THRESHOLD` or more its own ``mmap`` (once per process).

    glibc starts at 128 KiB, and raises its threshold (up to 32 MiB) each time
    such a block is freed, after which it serves large arrays from its heaps,
    which keep freed memory resident.  A training frees large arrays as it goes
    (the count table's before the merge loop, arrays the loop outgrows), so a
    fixed threshold returns them to the system at once.  Called when the
    kernels are first loaded (large trainings only).  No-op where ``mallopt``
    is missing (not glibc).
    """
    if _STATE.get("mallopt"):
        return
    _STATE["mallopt"] = True
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def carrier() -> str | None:
    """Which carrier runs the kernels in this process: ``"aot"``, ``"jit"`` or ``None`` (none can).

    ``"aot"`` once the library is built (it is loaded on first use); else ``"jit"``
    when numba is installed; else ``None``.  :data:`override` wins when set.
    """
    if override is not None:
        if override == "aot" and "library" not in _STATE:
            load_library()
        return override
    if "library" in _STATE:
        return "aot"
    if is_ready():
        try:
            load_library()
            return "aot"
        except (OSError, AttributeError):
            pass
    return "jit" if HAVE_NUMBA else None
