"""The files the engine keeps in its cache folder: tables computed once, and old ones removed.

The cache folder (:func:`bpe_core.counting.native.cache_dir`) holds what is slow
to make and depends only on the code and the tools: the compiled kernels'
library (:func:`bpe_core.counting.native.library_path`), numba's JIT cache
(:func:`~bpe_core.counting.native.numba_cache_dir`), and per-code-point tables
of character classes (``uint8[0x110000]`` and the like, 0.1-1.5 s each to compute).
Each file's name ends in a key, a digest of what it was made from, so an edit
or an upgrade makes a new file instead of reading a stale one.

Without pruning, every edit of a kernel source left its old library, JIT
folder and tables behind (52 MB after a day of rebuilds).  Whenever a new one
is written, :func:`remove_stale` deletes the older ones of its kind, keeping
the :data:`KEEP_STALE` most recently written: another checkout or server
sharing the folder (``$BPE_CORE_CACHE_DIR``, ``~/.cache/bpe_core``) may still use one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
from collections.abc import Callable

import numpy as np
import regex

from . import native

__all__ = ["KEEP_STALE", "cached_table", "remove_stale", "source_key"]

KEEP_STALE = 2
"""Older files of each kind kept beside the current one (for other checkouts or servers sharing the folder)."""


def source_key(*sources: str, extra: str = "") -> str:
    """A 16-hex-digit digest of the ``regex`` and Python versions, ``extra`` and the bytes of ``sources``.

    Args:
        sources: file paths relative to ``bpe_core/`` (``"counting/kernel.py"``), read as bytes.
        extra: any further text the table depends on (a character class).

    Raises:
        OSError: a source cannot be read.

    >>> len(source_key("counting/cache_files.py")), source_key(extra="a") == source_key(extra="b")
    (16, False)
    """
    h = hashlib.sha256(f"{regex.__version__} {sys.version} {extra}".encode())
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in sources:
        with open(os.path.join(package, *name.split("/")), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def cached_table(
    kind: str,
    key: str,
    compute: Callable[[], np.ndarray],
    valid: Callable[[np.ndarray], bool],
    *,
    prune: bool = True,
) -> np.ndarray:
    """The array kept in the cache folder as ``bpe_core_<kind>-<key>.npy``; computed and kept there when absent.

    Args:
        kind: what the table is (``"pattern_classes"``): the file name's stem.
        key: its digest (:func:`source_key`).
        compute: ``() -> ndarray``, called when the file is missing, unreadable or not ``valid``.
        valid: ``ndarray -> bool``: the loaded array has the expected shape, type and values.
        prune: remove older tables of this kind once a new one is written (:func:`remove_stale`);
            ``False`` where several keys are current at once (one table per character class).

    Returns:
        The array, loaded or computed.  A read-only cache folder is no error: the array is computed each time.
    """
    path = os.path.join(native.cache_dir(), f"bpe_core_{kind}-{key}.npy")
    try:
        table = np.load(path)
        if valid(table):
            return table
    except (OSError, ValueError):
        pass
    table = compute()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp.npy"
        np.save(tmp, table)
        os.replace(tmp, path)
    except OSError:
        return table
    if prune:
        remove_stale(path)
    return table


def remove_stale(current: str, keep: int = KEEP_STALE) -> list[str]:
    """Delete the older files or folders of ``current``'s kind beside it; returns the paths removed.

    Their kind is the name up to its last ``-`` (``bpe_core_kernels-<key>.so``,
    ``numba-<key>``).  The ``keep`` most recently modified others stay.  An entry
    that cannot be removed (gone already, no permission) is left and not reported.

    Args:
        current: the path just written, kept whatever its age.
        keep: older entries of the kind to keep.
    """
    folder, name = os.path.split(os.path.abspath(current))
    stem = name.rsplit("-", 1)[0] + "-"
    try:
        others = [e for e in os.scandir(folder) if e.name.startswith(stem) and e.name != name and ".tmp" not in e.name]
        others.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    except OSError:
        return []
    removed = []
    for entry in others[keep:]:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)
            removed.append(entry.path)
        except OSError:
            continue
    return removed
