"""numba's ``njit`` when numba is installed, else a stand-in that leaves functions as plain Python.

The compiled kernels (:mod:`bpe_core.count_kernel`, :mod:`bpe_core.bpe.merge_kernel`) decorate their
functions with :func:`njit` from here, so both modules import (for docs and doctests) without numba; their
callers check :data:`HAVE_NUMBA` before running them.  Importing this module imports numba: only the kernels
do, and only they are imported lazily, when a large training may use them.
"""

from __future__ import annotations

try:
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # no numba: the kernel modules still import; callers check HAVE_NUMBA
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        """Stand-in for ``numba.njit`` when numba is missing: the function stays plain Python."""
        return args[0] if args and callable(args[0]) else (lambda f: f)


__all__ = ["HAVE_NUMBA", "njit"]
