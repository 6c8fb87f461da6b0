"""Build the kernels' shared library: numba compiles, LLVM emits an object file, zig links it.

Every :func:`bpe_core.counting.native.kernel` gets a C-callable wrapper (numba's
``cfunc``: each array argument becomes a pointer and its dimensions, viewed
again as an array with ``numba.carray``), named ``bpe_core_<module>_<kernel>``.  The
wrappers' LLVM modules are linked into one, with the small functions that
numba's wrappers reference on their error path (``numba_gil_ensure`` /
``numba_gil_release`` over Python's ``PyGILState_*``, a no-op
``NRT_MemInfo_call_dtor`` and ``NRT_Free`` over ``free``: the kernels allocate
nothing, so no numba runtime object ever reaches them; see also below);
llvmlite emits position-independent machine code for this CPU (optimization
level 3, as numba's JIT), and ``python -m ziglang cc -shared`` (the ``ziglang``
wheel: the zig toolchain's linker, no system compiler) links it.  The
remaining undefined symbols are Python's C API, which the interpreter that
loads the library provides.

numba's wrappers keep a path that turns a kernel's exception into a Python
one; the kernels raise none (``error_model="numpy"``, no bounds checks, no
allocation), so that path is never taken, but it is linked: the functions it
calls (``numba_do_raise``, ``numba_unpickle``,
``numba_runtime_build_excinfo_struct``) set the library's ``bpe_core_failed``
flag instead, which :class:`bpe_core.counting.native.Kernel` checks after every call
and turns into a ``RuntimeError``.

Used by :func:`bpe_core.bpe.trainer.warm_compiled_loop`, which checks the built
library against the Python paths before putting it in place.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from . import native
from .cache_files import remove_stale

__all__ = ["build_library"]

_RUNTIME_STUBS = """
@bpe_core_failed = global i32 0
declare void @free(ptr)
define ptr @numba_unpickle(ptr %data, i32 %size, ptr %hash) {
  store i32 1, ptr @bpe_core_failed
  ret ptr null
}
define ptr @numba_runtime_build_excinfo_struct(ptr %a, ptr %b) {
  store i32 1, ptr @bpe_core_failed
  ret ptr null
}
define void @numba_do_raise(ptr %exc) {
  store i32 1, ptr @bpe_core_failed
  ret void
}
define void @NRT_Free(ptr %p) {
  call void @free(ptr %p)
  ret void
}
declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)
define void @numba_gil_ensure(ptr %state) {
  %s = call i32 @PyGILState_Ensure()
  store i32 %s, ptr %state
  ret void
}
define void @numba_gil_release(ptr %state) {
  %s = load i32, ptr %state
  call void @PyGILState_Release(i32 %s)
  ret void
}
define void @NRT_MemInfo_call_dtor(ptr %mi) {
  ret void
}
"""


def _cfunc(k: native.Kernel):
    """The C-callable wrapper (numba's ``cfunc``) of a kernel: pointers and dimensions in, the kernel's result out."""
    from numba import carray, cfunc, types

    scalar = {
        "u1": types.uint8, "u2": types.uint16, "u4": types.uint32, "i4": types.int32, "i8": types.int64,
        "f8": types.float64,
    }  # fmt: skip
    params: list[str] = []
    sig: list = []
    lines: list[str] = []
    call: list[str] = []
    for i, (code, ndim) in enumerate(k.params):
        name = f"a{i}"
        call.append(name)
        if ndim:
            dims = [f"{name}_n{d}" for d in range(ndim)]
            params += [f"{name}_p", *dims]
            sig += [types.CPointer(scalar[code]), *[types.int64] * ndim]
            shape = ", ".join(dims) + ("," if ndim == 1 else "")
            lines.append(f"    {name} = carray({name}_p, ({shape}))")
        else:
            params.append(name)
            sig.append(types.int64)
    body = "\n".join(lines)
    if k.returns is None:
        src = f"def wrapper({', '.join(params)}):\n{body}\n    kernel({', '.join(call)})\n"
        restype = types.void
    else:
        src = f"def wrapper({', '.join(params)}):\n{body}\n    return kernel({', '.join(call)})\n"
        restype = types.int64
    scope = {"carray": carray, "kernel": k.dispatcher}
    exec(compile(src, f"<cfunc {k.name}>", "exec"), scope)  # the source is built above from the specs
    return cfunc(restype(*sig), error_model="numpy", boundscheck=False)(scope["wrapper"])


def build_library(path: str) -> str:
    """Compile every kernel into one shared library at ``path`` (written atomically); returns ``path``.

    Takes about 15 s of CPU (numba's compile of every kernel, then LLVM and the link).  Then the
    libraries and JIT folders of older sources are removed, but for the
    :data:`~bpe_core.counting.cache_files.KEEP_STALE` newest (:func:`~bpe_core.counting.cache_files.remove_stale`).

    Raises:
        ImportError: numba or llvmlite is not installed.
        RuntimeError: the link failed (the message carries the linker's output),
            e.g. the ``ziglang`` package is missing.
    """
    import llvmlite.binding as llvm

    native.materialize()
    modules = []
    for k in native.kernels():
        cf = _cfunc(k)
        module = llvm.parse_assembly(cf._library.get_llvm_str())
        module.get_function(cf.native_name).name = k.symbol
        modules.append(module)
    main = modules[0]
    for module in [*modules[1:], llvm.parse_assembly(_RUNTIME_STUBS)]:
        main.link_in(module)
    main.verify()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    machine = target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        reloc="pic",
        codemodel="default",
        opt=3,
    )
    obj = machine.emit_object(main)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        obj_path = os.path.join(tmp, "kernels.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        out = os.path.join(tmp, os.path.basename(path))
        cmd = [sys.executable, "-m", "ziglang", "cc", "-shared", "-o", out, obj_path]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"linking the kernels failed ({' '.join(cmd[1:4])}): {done.stderr.strip()[-2000:]}")
        os.replace(out, path)
    remove_stale(path)  # the libraries of older sources, and their JIT folders
    remove_stale(native.numba_cache_dir())
    return path
