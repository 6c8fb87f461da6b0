"""Counting pre-tokens at corpus scale: the first phase of training, and the compiled kernels.

Training needs only the table ``{pre-token: count}``; this subpackage builds it
from a ``str``, an iterable, a file or many files, in chunks, in threads,
processes or on a Dask cluster, and keeps it on disk:

* :mod:`~bpe_core.counting.stream` -- streamed, parallel counting at safe
  boundaries (:func:`count_text`, :func:`count_file`, :func:`count_files`);
* :mod:`~bpe_core.counting.table` -- count tables saved to a file, added up
  across shards, and trained from without the text;
* :mod:`~bpe_core.counting.kernel` -- the compiled GPT-2 pre-token counter;
* :mod:`~bpe_core.counting.native` and :mod:`~bpe_core.counting.native_build`
  -- how every compiled kernel of the engine (this counter, the BPE merge
  loop) is compiled ahead of time into one shared library and loaded with
  ``ctypes``.

The readable versions these must equal are
:func:`bpe_core.pretokenize.count_pretokens` and the textbook trainers.
"""

from .stream import (
    KERNELS_ENV,
    CountResult,
    PackedCounts,
    count_file,
    count_files,
    count_iterable,
    count_text,
    expand_inputs,
    kernels_mode,
    kernels_ready,
)

__all__ = [
    "KERNELS_ENV",
    "CountResult",
    "PackedCounts",
    "count_file",
    "count_files",
    "count_iterable",
    "count_text",
    "expand_inputs",
    "kernels_mode",
    "kernels_ready",
]
