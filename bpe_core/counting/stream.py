r"""Streaming, parallel pre-token counting: the first phase of BPE training.

Training needs only the table ``{pre-token bytes: count}``.  This module builds
it from a ``str``, an iterable of ``str`` pieces, or a file, without ever
holding a whole file in memory: the input is cut into chunks at *safe
boundaries* -- places where cutting the text cannot change how it is split
into pre-tokens -- each chunk is counted on its own (in worker processes when
the input is large), and the per-chunk tables are added up.  Peak memory is
the merged table (it grows with the number of *distinct* pre-tokens) plus one
chunk per worker, not the input size.

Safe boundaries (chosen so that counting chunk by chunk gives exactly the counts
of the whole text):

1. **The start of a special-token occurrence.**  Special tokens are cut out of
   the text before pre-tokenization anyway, so the text on either side is
   pre-tokenized separately in any case.  Used only when no special token
   occurs inside another and no proper suffix of one is a prefix of another
   (true of ``<|endoftext|>``-style tokens); otherwise a cut found by a local
   search could fall inside a different, overlapping occurrence.
2. **Right after a line break that follows a printable ASCII character and
   precedes an ASCII letter** (bytes ``[!-~] \n [A-Za-z]``).  None of the named
   patterns (``gpt2``, ``cl100k``, ``o200k``, ``bert``, ``none``) builds a
   pre-token across such a point: whitespace pre-tokens end at a single ``\n``
   followed by a non-space, and pieces that may swallow trailing newlines
   (cl100k's and o200k's punctuation runs) stop before a letter.  For a custom
   regex this is assumed, not checked.  Not used when a special token contains
   a line break.

Both kinds of cut fall between whole characters: a ``\n`` byte and the UTF-8 form
of a special token never start inside a multi-byte character (UTF-8 is
self-synchronising), so a chunk of a file always decodes on its own.  A chunk
is at least ``chunk_bytes`` long, ending at the first safe boundary after that;
text without any boundary stays in one chunk.

Files are read as UTF-8; a byte-order mark at the very start is dropped (as for
uploads, :func:`bpe_core.formats.upload.decode_text_upload`).

**Where the chunks are counted.**  By default, in the calling process for small
inputs and in a local process pool otherwise; with the compiled GPT-2 counter
(:mod:`bpe_core.counting.kernel`, large inputs), in threads of the calling
process, into one table held in numpy arrays.  Any
:class:`concurrent.futures.Executor` can be passed as ``executor=`` instead: a
``ThreadPoolExecutor``, a ``ProcessPoolExecutor`` of your own, or a Dask
cluster's (``distributed.Client(address).get_executor()``).  For files, each task
gets only ``(path, start, end)`` and reads its own byte range, so no text goes
through the executor (a Dask scheduler ships a few dozen bytes per task; the
workers need the same path, e.g. a shared file system); the per-chunk tables come
back and are added up here (with the compiled counter, as arrays: each worker
counts with the kernels if they are compiled there, else with the regex, and
sends its table as the distinct pre-tokens' bytes, lengths and counts).
Nothing in this module imports Dask.

**Many inputs.**  :func:`count_files` counts several files as one text (chunks of
all of them share one pool); :func:`expand_inputs` turns file names, directories
(every file under them, recursively, in sorted order) and glob patterns into
the list of files.
"""

from __future__ import annotations

import glob
import itertools
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import regex

from ..interface import ProgressCallback
from ..pretokenize import (
    PATTERNS,
    count_pretokens,
    resolve_pattern,
    surrogate_message,
    validate_special_tokens,
)

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "FAST_MIN_BYTES",
    "KERNELS_ENV",
    "PARALLEL_MIN_BYTES",
    "CountResult",
    "PackedCounts",
    "count_file",
    "count_files",
    "count_iterable",
    "count_pretokens_fast",
    "count_text",
    "expand_inputs",
    "file_chunks",
    "kernels_mode",
    "kernels_ready",
]

DEFAULT_CHUNK_BYTES = 2 << 20
"""Target chunk length: 2 MiB (bytes for files, characters for ``str`` input).

Each chunk's table of distinct pre-tokens is added into one table by the thread
that drives the pool, and a word seen in many chunks is added once per chunk:
at 1 MiB that adding took 0.95 s of the 100 MB corpus's count.  Counting the
100 MB corpus (training, best of 3, two runs): 1 MiB 0.93-1.03 s, 2 MiB
0.79 s, 4 MiB 0.81 s, 8 MiB 0.72-0.87 s; at 20 MB no difference (0.15-0.19 s)."""

PARALLEL_MIN_BYTES = 4 << 20
"""Inputs shorter than this (4 MiB) are counted in the calling process: starting
worker processes (about 0.1 s each) costs more than it saves."""

_WINDOW = 1 << 16  # bytes read at a time while looking for a boundary


@dataclass(slots=True)
class CountResult:
    """The pre-token table of a text and facts about how it was counted.

    Attributes:
        word_counts: ``{pre-token UTF-8 bytes: occurrences}``.
        pretokens: pre-token occurrences (special tokens excluded).
        special_occurrences: special-token occurrences cut out of the text.
        chunks: how many chunks the input was cut into.
        workers: processes that counted (1 = the calling process); with an
            ``executor``, the parallel slots it reported (see :func:`executor_slots`).
        seconds: wall time of the counting (seconds).
        sources: the files counted, in order (empty for ``str`` input).
        packed: the same table as arrays (:class:`PackedCounts`), when asked for
            with ``as_arrays=True`` and the compiled counter ran; ``word_counts``
            is then empty (:meth:`table` gives the dict either way).
    """

    word_counts: dict[bytes, int]
    pretokens: int = 0
    special_occurrences: int = 0
    chunks: int = 0
    workers: int = 1
    seconds: float = 0.0
    sources: tuple[str, ...] = ()
    packed: PackedCounts | None = None

    def table(self) -> dict[bytes, int]:
        """``{pre-token UTF-8 bytes: count}``, from ``word_counts`` or built from ``packed``."""
        return self.packed.to_dict() if self.packed is not None and not self.word_counts else self.word_counts


@dataclass(slots=True)
class PackedCounts:
    """A pre-token count table as three numpy arrays, with no Python object per pre-token.

    Pre-token ``i`` is ``data[o:o + lens[i]]`` where ``o = lens[:i].sum()`` (the
    distinct pre-tokens' UTF-8 bytes, concatenated), occurring ``counts[i]``
    times.  What the compiled counter builds (:class:`bpe_core.counting.kernel.CountAccumulator`)
    and the compiled merge loop reads; order is the order first counted.

    Attributes:
        data: ``uint8``, the distinct pre-tokens' bytes, concatenated.
        lens: ``int64``, each pre-token's length in bytes.
        counts: ``int64``, its occurrences.
    """

    data: np.ndarray
    lens: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return int(self.lens.size)

    def to_dict(self) -> dict[bytes, int]:
        """``{pre-token bytes: count}``.

        >>> PackedCounts(np.frombuffer(b"abc", np.uint8), np.array([2, 1]), np.array([5, 1])).to_dict()
        {b'ab': 5, b'c': 1}
        """
        raw = self.data.tobytes()
        ends = np.cumsum(self.lens)
        starts = ends - self.lens
        return dict(zip(map(raw.__getitem__, map(slice, starts.tolist(), ends.tolist())), self.counts.tolist()))


FAST_MIN_BYTES = 1 << 20
"""Inputs of at least this many bytes (1 MiB) under GPT-2's pattern are counted by the compiled
counter (:mod:`bpe_core.counting.kernel`) when its kernels are ready; smaller ones (the app's
texts) by the regex, with nothing to import."""

KERNELS_ENV = "BPE_CORE_KERNELS"
"""Environment variable choosing the compiled kernels (the compiled counter here, the compiled
merge loop of :mod:`bpe_core.bpe.trainer`): ``auto`` (default: for large inputs, once their
library is built, see :mod:`bpe_core.counting.native`), ``python`` (never) or ``compiled`` (whenever the
input allows, with numba's JIT in this process if the library is not built: for tests and
benchmarks)."""

_WARM_UP: dict[str, subprocess.Popen] = {}
"""The background compile started by this process, if any (under ``"process"``)."""


def kernels_mode() -> str:
    """The value of :data:`KERNELS_ENV`: ``"auto"``, ``"python"`` or ``"compiled"``.

    Raises:
        ValueError: it holds anything else.
    """
    mode = os.environ.get(KERNELS_ENV, "auto").strip().lower() or "auto"
    if mode not in ("auto", "python", "compiled"):
        raise ValueError(f"{KERNELS_ENV} must be auto, python or compiled, got {mode!r}")
    return mode


def kernels_ready(force: bool = False) -> bool:
    """True when the compiled kernels can run without a compile pause.

    Args:
        force: accept an unbuilt library (the caller then compiles in this
            process with numba's JIT).

    Returns:
        True when the kernels' library is built (:func:`bpe_core.counting.native.is_ready`);
        else False when numba is missing; else ``force``.  An unbuilt library
        starts the background build (:func:`bpe_core.bpe.trainer.warm_compiled_loop`,
        about 20 s of CPU in a detached process, once per machine and source
        version), once per process, and the caller takes the Python path
        meanwhile: no training ever waits for a compile.
    """
    from . import native

    if native.is_ready():
        return True
    if not native.HAVE_NUMBA:  # numba missing: the Python paths give the same results
        return False
    if force:
        return True
    _start_warm_up()
    return False


def _start_warm_up() -> None:
    """Build the kernels' library in a detached process, once per process."""
    running = _WARM_UP.get("process")
    if running is not None and running.poll() is None:
        return  # still compiling
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    try:
        _WARM_UP["process"] = subprocess.Popen(
            [sys.executable, "-c", "from bpe_core.bpe.trainer import warm_compiled_loop; warm_compiled_loop()"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:  # cannot start a process: stay on the Python paths
        _WARM_UP.pop("process", None)


def _use_fast(source: str, size: int) -> bool:
    """Whether an input of ``size`` bytes (or characters) under ``source`` goes to the compiled counter."""
    if source != PATTERNS["gpt2"]:
        return False
    mode = kernels_mode()
    if mode == "python" or (mode == "auto" and size < FAST_MIN_BYTES):
        return False
    if not kernels_ready(mode == "compiled"):
        return False
    count_pretokens_fast("a b", (), force=True)  # load the machine code here, before workers fork
    return True


def count_pretokens_fast(
    text: str, specials: tuple[str, ...], *, force: bool = False
) -> tuple[dict[bytes, int], int, int] | None:
    """Count the GPT-2 pre-tokens of a text with the compiled counter (:mod:`bpe_core.counting.kernel`).

    The text is split and counted in compiled code over its UTF-8 bytes (GPT-2's
    pattern as a state machine over character classes, see
    :mod:`bpe_core.counting.kernel`).  Same counts as
    :func:`bpe_core.pretokenize.count_pretokens` with GPT-2's pattern.

    Args:
        text: a chunk of text.
        specials: special-token strings, cut out first.
        force: run even if the kernels are not in the disk cache (compiling here).

    Returns:
        ``({pre-token bytes: count}, pre-tokens, special occurrences)``, or ``None``
        when the compiled counter cannot run here (numba missing, kernels not
        compiled yet, or a character without a UTF-8 form, whose error the
        regex path words).
    """
    from . import native

    if native.carrier() is None or (not force and not native.is_ready()):
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    done = _count_utf8_fast(data, specials)
    if done is None:  # cannot happen for text that encoded
        return None
    (buf, starts, lens, counts), pretokens, n_special = done
    raw = buf.tobytes()
    ends = starts + lens
    out = dict(zip(map(raw.__getitem__, map(slice, starts.tolist(), ends.tolist())), counts.tolist()))
    return out, pretokens, n_special


@lru_cache(maxsize=8)
def _special_regex_bytes(specials: tuple[str, ...]) -> regex.Pattern | None:
    """:func:`bpe_core.pretokenize.split_special`'s pattern on UTF-8 bytes (same alternatives, same order)."""
    if not specials:
        return None
    ordered = sorted(specials, key=lambda t: (-len(t), t))
    return regex.compile(b"|".join(regex.escape(t.encode("utf-8")) for t in ordered))


def _count_utf8_fast(data: bytes | np.ndarray, specials: tuple[str, ...], *, reuse: bool = False) -> tuple | None:
    """The compiled counter on UTF-8 bytes: special tokens cut out, the rest split and counted by the kernel.

    Special tokens are found in the bytes (UTF-8 is self-synchronising, so the
    matches are those of :func:`bpe_core.pretokenize.split_special` on the text);
    the kernel checks the UTF-8 as it decodes each character.

    Args:
        data: the UTF-8 bytes (``bytes`` or a ``uint8`` array).
        specials: special-token strings.
        reuse: join the pieces between special tokens in this thread's
            ``joined`` buffer (:func:`_thread_buffer`), so ``buf`` below is valid
            only until the thread's next call; else in a new array.

    Returns:
        ``((buf, starts, lens, counts), pretokens, special occurrences)``: the
        distinct pre-tokens as byte ranges of ``buf`` (a ``uint8`` array) with
        their counts; ``None`` when ``data`` is not valid UTF-8.
    """
    from . import kernel as count_kernel

    rx = _special_regex_bytes(specials)
    src = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    buf, sizes = src, [src.size]
    found = [m.span() for m in rx.finditer(data)] if rx is not None else []
    n_special = len(found)
    if found:
        cuts = [0, *(x for span in found for x in span), src.size]
        parts = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True) if b > a]
        sizes = [b - a for a, b in parts]
        total = sum(sizes)
        buf = _thread_buffer("joined", total)[:total] if reuse else np.empty(total, dtype=np.uint8)
        pos = 0
        for (a, b), n in zip(parts, sizes, strict=True):
            buf[pos : pos + n] = src[a:b]
            pos += n
    bounds = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    done = count_kernel.count_gpt2(buf, bounds, count_kernel.char_classes())
    if done is None:
        return None
    starts, lengths, counts, pretokens = done
    return (buf, starts, lengths, counts), pretokens, n_special


# ---------------------------------------------------------------------------
# counting one piece of text (runs in workers too: module-level and picklable)


def _count_chunk(
    text: str, source: str, specials: tuple[str, ...], fast: bool = False
) -> tuple[dict[bytes, int], int, int]:
    """Count one chunk: ``({pre-token bytes: count}, pre-tokens, special occurrences)``.

    ``fast``: try the compiled counter first (GPT-2's pattern only; see :func:`count_pretokens_fast`).
    """
    if fast:
        done = count_pretokens_fast(text, specials)
        if done is not None:
            return done
    counts, n_special = count_pretokens(text, source, specials)
    try:  # distinct strings have distinct UTF-8 forms, so the keys stay distinct
        out = dict(zip(map(str.encode, counts), counts.values(), strict=True))
    except UnicodeEncodeError:
        for piece in counts:  # name the piece that holds the unpaired surrogate
            try:
                piece.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(surrogate_message(piece, exc)) from None
        raise
    return out, sum(counts.values()), n_special


def _count_file_range(
    path: str, start: int, end: int, source: str, specials: tuple[str, ...], fast: bool = False
) -> tuple[dict[bytes, int], int, int]:
    """Read bytes ``[start, end)`` of a file, decode them as UTF-8 and count them."""
    data = _read_range(path, start, end)
    text = _decode(path, start, data)
    del data
    if start == 0:
        text = text.removeprefix("\ufeff")
    return _count_chunk(text, source, specials, fast)


def _read_range(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


_THREAD_BUFFERS = threading.local()
"""Each counting thread's reusable byte buffers (``read``, ``joined``), kept from one chunk to the next."""


def _thread_buffer(name: str, size: int) -> np.ndarray:
    """The calling thread's reusable ``uint8`` buffer ``name``, at least ``size`` bytes long.

    A chunk's buffers are as large as :data:`bpe_core.counting.native.MMAP_THRESHOLD`
    or more, so a fresh one per chunk is fresh pages from the system each time,
    faulted in and zeroed; reused, the same pages serve every chunk of the thread.
    """
    buf = getattr(_THREAD_BUFFERS, name, None)
    if buf is None or buf.size < size:
        buf = np.empty(size + size // 8, dtype=np.uint8)
        setattr(_THREAD_BUFFERS, name, buf)
    return buf


def _read_range_reused(path: str, start: int, end: int) -> np.ndarray:
    """Bytes ``[start, end)`` of a file (fewer if it ends first), in the calling thread's ``read`` buffer.

    A view of that buffer: valid until the thread's next read.
    """
    n = end - start
    view = memoryview(_thread_buffer("read", n))[:n]
    got = 0
    with open(path, "rb") as f:
        f.seek(start)
        while got < n:
            k = f.readinto(view[got:])
            if not k:
                break
            got += k
    return np.frombuffer(view[:got], dtype=np.uint8)


def _decode(path: str, start: int, data: bytes) -> str:
    """``data`` (bytes ``start..`` of ``path``) as text; a ``ValueError`` naming the offset if not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not valid UTF-8: byte 0x{data[exc.start]:02X} at offset {start + exc.start} "
            "cannot start or continue a character"
        ) from None


def _count_file_range_packed(path: str, start: int, end: int, specials: tuple[str, ...]) -> tuple:
    """Count bytes ``[start, end)`` of a file with the compiled counter, never decoding them into a ``str``.

    The bytes are read into this thread's reusable buffers (:func:`_thread_buffer`),
    so the table that comes back holds its own copy of the distinct pre-tokens.

    Returns:
        ``((data, starts, lens, counts), pretokens, special occurrences)``: the
        distinct pre-tokens' bytes concatenated (``uint8``), where each starts
        in ``data`` and its length (``int64``), its count (``int64``).

    Raises:
        ValueError: the range is not UTF-8 (worded as :func:`_count_file_range` words it).
    """
    from .kernel import gather

    raw = _read_range_reused(path, start, end)
    bom = start == 0 and raw[:3].tobytes() == b"\xef\xbb\xbf"
    done = _count_utf8_fast(raw[3:] if bom else raw, specials, reuse=True)
    if done is None:
        _decode(path, start, raw.tobytes())  # raises with the offset
        raise AssertionError("unreachable: the compiled counter refused valid UTF-8")
    (buf, starts, lens, counts), n, n_special = done
    data = gather(buf, starts, lens)  # out of the thread's buffers, which its next chunk overwrites
    return (data, np.cumsum(lens) - lens, lens, counts), n, n_special


def _count_file_range_shipped(path: str, start: int, end: int, source: str, specials: tuple[str, ...]) -> tuple:
    """Count bytes ``[start, end)`` of a file for an executor: a compact table of arrays to send back.

    Runs where the executor runs it (a Dask worker, another machine): with the
    compiled counter when its kernels are ready there (or forced by
    :data:`KERNELS_ENV`), else with the regex.  Either way the table travels as
    arrays (the distinct pre-tokens' bytes, their starts, lengths and counts), which
    the caller adds with its compiled accumulator: no ``dict`` of ``bytes`` to
    pickle or to add up.

    Returns:
        ``((data, starts, lens, counts), pretokens, special occurrences)``.
    """
    if _use_fast_here():
        return _count_file_range_packed(path, start, end, specials)
    table, n, n_special = _count_file_range(path, start, end, source, specials)
    data = b"".join(table)
    lens = np.fromiter(map(len, table), dtype=np.int64, count=len(table))
    counts = np.fromiter(table.values(), dtype=np.int64, count=len(table))
    starts = np.cumsum(lens) - lens
    return (data, starts, lens, counts), n, n_special


def _use_fast_here() -> bool:
    """Whether this process (an executor's worker) may run the compiled counter without compiling it."""
    from . import native

    return native.is_ready() or (native.HAVE_NUMBA and kernels_mode() == "compiled")


def _count_chunk_packed(text: str, source: str, specials: tuple[str, ...]) -> tuple:
    """:func:`_count_file_range_packed` for a ``str`` chunk (an unpaired surrogate raises as in the regex path)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        _count_chunk(text, source, specials)  # raises the ValueError that names the piece
        raise
    done = _count_utf8_fast(data, specials)
    assert done is not None, "the compiled counter refused valid UTF-8"
    return done


# ---------------------------------------------------------------------------
# boundaries


def _specials_cuttable(specials: Sequence[str]) -> bool:
    """True when cutting at the start of any found special-token occurrence is exact (see module doc)."""
    for s in specials:
        for t in specials:
            if s != t and s in t:
                return False
            for k in range(1, len(s)):
                if t.startswith(s[k:]):
                    return False
    return True


def _boundary_regex_str(specials: tuple[str, ...]) -> regex.Pattern | None:
    """Regex whose match *start* is a safe cut in a ``str`` (zero-width matches)."""
    alts = []
    if specials and _specials_cuttable(specials):
        alts.append("(?=" + "|".join(regex.escape(s) for s in specials) + ")")
    if not any("\n" in s for s in specials):
        alts.append("(?<=[!-~]\\n)(?=[A-Za-z])")
    return regex.compile("|".join(alts)) if alts else None


def _boundary_regex_bytes(specials: tuple[str, ...]) -> regex.Pattern | None:
    """As :func:`_boundary_regex_str`, on UTF-8 bytes."""
    alts = []
    if specials and _specials_cuttable(specials):
        alts.append(b"(?=" + b"|".join(regex.escape(s.encode("utf-8")) for s in specials) + b")")
    if not any("\n" in s for s in specials):
        alts.append(rb"(?<=[!-~]\n)(?=[A-Za-z])")
    return regex.compile(b"|".join(alts)) if alts else None


def file_chunks(
    path: str | os.PathLike, special_tokens: Sequence[str] = (), chunk_bytes: int = DEFAULT_CHUNK_BYTES
) -> list[tuple[int, int]]:
    """Cut a file into chunks at safe boundaries, reading only a small window around each cut.

    Args:
        path: the file.
        special_tokens: the special-token strings of the training run.
        chunk_bytes: minimum chunk length in bytes (the last chunk may be shorter);
            each chunk ends at the first safe boundary at or after that length.

    Returns:
        ``[(start, end), ...]`` byte offsets, covering the file in order.

    Raises:
        OSError: the file cannot be read.
        ValueError: ``chunk_bytes < 1``.
    """
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be at least 1, got {chunk_bytes}")
    specials = validate_special_tokens(special_tokens)
    rx = _boundary_regex_bytes(specials)
    size = os.path.getsize(path)
    if rx is None or size <= chunk_bytes:
        return [(0, size)] if size else []
    overlap = max([8, *(len(s.encode("utf-8")) for s in specials)])
    out: list[tuple[int, int]] = []
    start = 0
    with open(path, "rb") as f:
        while start < size:
            target = start + chunk_bytes
            cut = size
            pos = target  # look for a cut at or after ``pos``; the window starts a byte early for the look-behind
            while pos < size:
                f.seek(pos - 1)
                window = f.read(_WINDOW + overlap + 1)
                m = rx.search(window, 1)
                if m is not None and (m.start() <= _WINDOW or pos - 1 + len(window) >= size):
                    cut = pos - 1 + m.start()
                    break
                pos += _WINDOW
            if cut <= start:
                cut = size
            out.append((start, cut))
            start = cut
    return out


def _str_chunks(pieces: Iterable[str], specials: tuple[str, ...], chunk_chars: int) -> Iterator[str]:
    """Re-cut a stream of ``str`` pieces into chunks of at least ``chunk_chars`` at safe boundaries."""
    rx = _boundary_regex_str(specials)
    parts: list[str] = []
    n = 0
    need = chunk_chars + 1  # join the buffered pieces once they hold this many characters
    for piece in pieces:
        if not isinstance(piece, str):
            raise TypeError(f"training text pieces must be str, got {type(piece).__name__}")
        parts.append(piece)
        n += len(piece)
        if n < need or rx is None:
            continue
        buf = "".join(parts) if len(parts) > 1 else parts[0]
        start = 0  # ``buf[start:]`` is not yielded yet; slicing from ``start`` avoids re-copying the rest
        while len(buf) - start > chunk_chars:
            m = rx.search(buf, start + chunk_chars)
            if m is None:
                break  # a boundary straddling the end of ``buf`` is found again once more text arrives
            yield buf[start : m.start()]
            start = m.start()
        rest = buf[start:] if start else buf
        parts, n = [rest], len(rest)
        # no boundary in the buffered text: wait until it doubles, so that a stream without
        # boundaries costs linear, not quadratic, time
        need = chunk_chars + 1 if n <= chunk_chars else 2 * n
    if n:
        yield "".join(parts)


# ---------------------------------------------------------------------------
# running the chunks, in process or in workers


def _pool_context() -> mp.context.BaseContext:
    """``fork`` when it is safe (Linux, one thread: fast, nothing re-imported), else ``spawn``."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return mp.get_context("fork")
    return mp.get_context("spawn")


def _resolve_workers(num_workers: int | None) -> int:
    if num_workers is None:
        return max(1, os.cpu_count() or 1)
    if isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise TypeError(f"num_workers must be an int or None, got {type(num_workers).__name__}")
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    return num_workers


class _Merger:
    """Adds per-chunk tables into one, and reports progress per chunk."""

    def __init__(self, progress: ProgressCallback | None, total: int) -> None:
        self.counts: dict[bytes, int] = {}
        self.pretokens = 0
        self.specials = 0
        self.chunks = 0
        self.total = total
        self.progress = progress

    def add(self, part: tuple[dict[bytes, int], int, int]) -> None:
        table, n, s = part
        counts = self.counts
        if not counts:
            self.counts = table
        else:
            get = counts.get
            for k, v in table.items():
                counts[k] = get(k, 0) + v
        self.pretokens += n
        self.specials += s
        self.chunks += 1
        if self.progress is not None:
            self.progress("count", self.chunks, self.total)


class _PackedMerger(_Merger):
    """Adds per-chunk results of the compiled counter into one :class:`bpe_core.counting.kernel.CountAccumulator`.

    Runs in the thread that drives the pool; the accumulator's compiled code
    releases the GIL, so the counting threads go on meanwhile.
    """

    def __init__(self, progress: ProgressCallback | None, total: int) -> None:
        from .kernel import CountAccumulator

        super().__init__(progress, total)
        self.acc = CountAccumulator()

    def add(self, part: tuple) -> None:
        (buf, starts, lens, counts), n, s = part
        self.acc.add(buf, starts, lens, counts)
        self.pretokens += n
        self.specials += s
        self.chunks += 1
        if self.progress is not None:
            self.progress("count", self.chunks, self.total)

    def packed(self) -> PackedCounts:
        return PackedCounts(*self.acc.result())


def _run_packed(tasks: list[tuple] | Iterable[tuple], fn: Callable, workers: int, merger: _PackedMerger) -> int:
    """:func:`_run` on ``workers`` threads of this process (the compiled counter releases the GIL)."""
    if workers == 1:
        return _run(tasks, fn, 1, merger)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bpe-count") as pool:
        return _run(tasks, fn, workers, merger, pool)


def _packed_result(
    merger: _PackedMerger, workers: int, t0: float, as_arrays: bool, sources: tuple[str, ...] = ()
) -> CountResult:
    out = _result(merger, workers, t0, sources)
    out.packed = merger.packed()
    if not as_arrays:
        out.word_counts = out.packed.to_dict()
        out.packed = None
    out.seconds = time.perf_counter() - t0
    return out


def executor_slots(executor: Executor) -> int:
    """How many tasks an executor runs at once, as far as it tells (used to bound the tasks in flight).

    Args:
        executor: a ``concurrent.futures.Executor``.

    Returns:
        ``max_workers`` of a standard-library pool; the total worker threads of a
        Dask ``ClientExecutor``'s cluster; else the local core count.
    """
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)  # distributed.cfexecutor.ClientExecutor
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a cluster that cannot answer: fall back to the local figure
            pass
    return max(1, os.cpu_count() or 1)


def _drain(pending: set[Future], merger: _Merger, until: int) -> set[Future]:
    """Wait for futures until at most ``until`` are pending, adding each finished result."""
    while len(pending) > until:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for fut in done:
            merger.add(fut.result())
    return pending


def _run(
    tasks: Iterable[tuple],
    fn: Callable,
    workers: int,
    merger: _Merger,
    executor: Executor | None = None,
) -> int:
    """Run ``fn(*task)`` for every task and add the results; returns the workers used.

    With ``executor``, the tasks are submitted to it (it is not shut down);
    otherwise in ``workers`` local processes (1 = here).  At most two tasks per
    worker are in flight, so a lazy ``tasks`` iterator is consumed only as fast
    as the workers count (bounded memory for streams).  An exception from
    ``fn`` or from the progress callback cancels the pending chunks and
    propagates.
    """
    if executor is None and workers == 1:
        for t in tasks:
            merger.add(fn(*t))
        return 1
    own = executor is None
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) if own else executor
    if not own:
        workers = executor_slots(executor)
    pending: set[Future] = set()
    try:
        for t in tasks:
            pending.add(pool.submit(fn, *t))
            pending = _drain(pending, merger, 2 * workers - 1)
        _drain(pending, merger, 0)
    except BaseException:
        for fut in pending:
            fut.cancel()
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    if own:
        pool.shutdown(wait=True)
    return workers


def _result(merger: _Merger, workers: int, t0: float, sources: tuple[str, ...] = ()) -> CountResult:
    return CountResult(
        word_counts=merger.counts,
        pretokens=merger.pretokens,
        special_occurrences=merger.specials,
        chunks=merger.chunks,
        workers=workers,
        seconds=time.perf_counter() - t0,
        sources=sources,
    )


_GLOB_CHARS = frozenset("*?[")


def expand_inputs(inputs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The files named by file names, directories and glob patterns, in order, each once.

    Args:
        inputs: one name or an iterable of them.  A directory stands for every
            regular file under it (recursively, hidden entries skipped, sorted by
            path); a name holding ``*``, ``?`` or ``[`` that is not an existing
            file is a glob pattern (``**`` recurses), its matches sorted.

    Returns:
        Absolute paths (``str``), first occurrence kept when one file is named twice.

    Raises:
        FileNotFoundError: a name that is neither a file, a directory nor a
            pattern matching at least one file; or no file at all.
        TypeError: an input is not a ``str`` or ``os.PathLike``.
    """
    if isinstance(inputs, str | os.PathLike):
        inputs = [inputs]
    out: dict[str, None] = {}
    for item in inputs:
        if not isinstance(item, str | os.PathLike):
            raise TypeError(f"an input must be a file name (str or os.PathLike), got {type(item).__name__}")
        name = os.fspath(item)
        if os.path.isfile(name):
            found = [name]
        elif os.path.isdir(name):
            found = []
            for root, dirs, files in os.walk(name):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [os.path.join(root, f) for f in sorted(files) if not f.startswith(".")]
        elif _GLOB_CHARS.intersection(name):
            found = sorted(f for f in glob.glob(name, recursive=True) if os.path.isfile(f))
            if not found:
                raise FileNotFoundError(f"no file matches {name}")
        else:
            raise FileNotFoundError(f"cannot read {name}: not found")
        for f in found:
            out.setdefault(os.path.abspath(f), None)
    if not out:
        raise FileNotFoundError("no input file: the directories given hold no files")
    return list(out)


def count_files(
    inputs: str | os.PathLike | Iterable[str | os.PathLike],
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    num_workers: int | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
    as_arrays: bool = False,
) -> CountResult:
    """Count the pre-tokens of several UTF-8 files as one training text (see :func:`expand_inputs`).

    Every file is cut into chunks at safe boundaries (:func:`file_chunks`); the
    end of a file is always a cut, so nothing joins across files.  All chunks
    go to one pool: the local processes, or ``executor``, where each task reads
    its own byte range of its file.  With the compiled counter (GPT-2's pattern,
    large inputs, see :data:`FAST_MIN_BYTES`) and no ``executor``, the chunks are
    counted by ``num_workers`` threads of this process instead (its compiled
    code releases the GIL) into one table held in numpy arrays: no worker
    start-up, no table pickled or added up as a dict; with an ``executor``,
    the tables come back as arrays and are added up likewise.

    Args:
        inputs: file names, directories or glob patterns.
        pattern: pattern name or regex source (see :func:`bpe_core.pretokenize.resolve_pattern`).
        special_tokens: special-token strings, cut out before counting.
        num_workers: local worker processes (default: all cores); ignored with
            ``executor``.  Inputs under :data:`PARALLEL_MIN_BYTES` in all, or of
            a single chunk, are counted in the calling process.
        chunk_bytes: minimum chunk length in bytes.
        progress: ``progress("count", chunks_done, chunks_total)`` after each chunk;
            may raise :class:`bpe_core.interface.TrainingCancelled` to stop.
        executor: a ``concurrent.futures.Executor`` to count on (a Dask
            cluster's ``client.get_executor()``, say); used whatever the input's size.
        as_arrays: when the compiled counter ran here, return the table as
            ``packed`` (:class:`PackedCounts`) and leave ``word_counts`` empty
            (what training wants: no Python object per pre-token); otherwise
            ``word_counts`` holds it.

    Returns:
        A :class:`CountResult` whose ``sources`` are the files, in order.

    Raises:
        FileNotFoundError, OSError: an input is missing or unreadable.
        ValueError: a file is not UTF-8 (the message names it and the byte
            offset); bad pattern or special tokens.
        TypeError: bad argument types.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("low lower"), (d / "b.txt").write_text("lowest low")
    >>> sorted(count_files(d, num_workers=1).word_counts.items())
    [(b' low', 1), (b' lower', 1), (b'low', 1), (b'lowest', 1)]
    """
    t0 = time.perf_counter()
    source = resolve_pattern(pattern)
    specials = validate_special_tokens(special_tokens)
    workers = _resolve_workers(num_workers)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    paths = expand_inputs(inputs)
    tasks = [(path, s, e, source, specials) for path in paths for s, e in file_chunks(path, specials, chunk_bytes)]
    size = sum(t[2] - t[1] for t in tasks)
    fast = _use_fast(source, size)
    if size < PARALLEL_MIN_BYTES:
        workers = 1
    workers = max(1, min(workers, len(tasks)))
    if fast and executor is None:  # compiled counter: threads of this process, tables kept in arrays
        packed_merger = _PackedMerger(progress, len(tasks))
        if progress is not None:
            progress("count", 0, len(tasks))
        tasks = [(path, s, e, specials) for path, s, e, *_ in tasks]
        used = _run_packed(tasks, _count_file_range_packed, workers, packed_merger)
        return _packed_result(packed_merger, used, t0, as_arrays, tuple(paths))
    if fast:  # an executor: each worker counts as it can, and the tables come back as arrays
        packed_merger = _PackedMerger(progress, len(tasks))
        if progress is not None:
            progress("count", 0, len(tasks))
        used = _run(tasks, _count_file_range_shipped, workers, packed_merger, executor)
        return _packed_result(packed_merger, used, t0, as_arrays, tuple(paths))
    merger = _Merger(progress, len(tasks))
    if progress is not None:
        progress("count", 0, len(tasks))
    used = _run(tasks, _count_file_range, workers, merger, executor)
    return _result(merger, used, t0, tuple(paths))


def count_file(
    path: str | os.PathLike,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    num_workers: int | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
    as_arrays: bool = False,
) -> CountResult:
    """Count the pre-tokens of a UTF-8 text file, streamed in chunks, in parallel when large.

    Args:
        path: the file (``str`` or ``os.PathLike``; taken literally, never as a glob).
        pattern: pattern name or regex source (see :func:`bpe_core.pretokenize.resolve_pattern`).
        special_tokens: special-token strings, cut out before counting.
        num_workers: worker processes (default: all cores).  Files under
            :data:`PARALLEL_MIN_BYTES`, or of a single chunk, are counted in the
            calling process.
        chunk_bytes: minimum chunk length in bytes (see :func:`file_chunks`).
        progress: ``progress("count", chunks_done, chunks_total)`` after each chunk;
            may raise :class:`bpe_core.interface.TrainingCancelled` to stop.
        executor: a ``concurrent.futures.Executor`` to count on instead of the
            local processes (see the module doc); each task reads its own byte range.
        as_arrays: see :func:`count_files`.

    Returns:
        A :class:`CountResult`.

    Raises:
        OSError: the file cannot be opened or read (``FileNotFoundError``, ...).
        ValueError: the file is not UTF-8 (the message gives the byte offset);
            bad pattern or special tokens.
        TypeError: bad argument types.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory, not a text file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"cannot read {path}: not found")
    return count_files(
        [path],
        pattern,
        special_tokens,
        num_workers=num_workers,
        chunk_bytes=chunk_bytes,
        progress=progress,
        executor=executor,
        as_arrays=as_arrays,
    )


def count_iterable(
    pieces: Iterable[str],
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    num_workers: int | None = None,
    chunk_chars: int = DEFAULT_CHUNK_BYTES,
    progress: ProgressCallback | None = None,
    total_chars: int | None = None,
    executor: Executor | None = None,
    as_arrays: bool = False,
) -> CountResult:
    """Count the pre-tokens of the text ``"".join(pieces)`` without joining it.

    The pieces (lines of a file, say) are buffered and re-cut at safe boundaries
    into chunks of at least ``chunk_chars`` characters.  With more than one
    worker, chunks are counted in worker processes, at most two per worker in
    flight, so the stream is read only as fast as it is counted.

    Args:
        pieces: an iterable of ``str``.
        pattern: pattern name or regex source.
        special_tokens: special-token strings, cut out before counting.
        num_workers: worker processes (default: all cores); ``1`` counts here.
            A text under :data:`PARALLEL_MIN_BYTES` characters (by
            ``total_chars``, or found by reading that far ahead) is counted here.
        chunk_chars: minimum chunk length in characters.
        progress: ``progress("count", chunks_done, chunks_total)`` after each chunk;
            ``chunks_total`` is ``0`` when unknown (a stream of unknown length).
        total_chars: the text's length if known (for progress and the
            one-process decision), else ``None``.
        executor: a ``concurrent.futures.Executor`` to count on instead of the
            local processes (the chunks' text is sent to it); used whatever the size.
        as_arrays: see :func:`count_files` (with the compiled counter and no
            ``executor``, the chunks are counted by threads of this process).

    Returns:
        A :class:`CountResult`.

    Raises:
        TypeError: a piece is not a ``str``.
        ValueError: the text holds an unpaired surrogate; bad pattern or special tokens.
    """
    t0 = time.perf_counter()
    source = resolve_pattern(pattern)
    specials = validate_special_tokens(special_tokens)
    workers = _resolve_workers(num_workers)
    if chunk_chars < 1:
        raise ValueError(f"chunk_chars must be at least 1, got {chunk_chars}")
    if total_chars is not None and total_chars < PARALLEL_MIN_BYTES:
        workers = 1
    total = 0 if total_chars is None else max(1, -(-total_chars // chunk_chars))
    merger = _Merger(progress, total)
    if progress is not None:
        progress("count", 0, total)
    chunks: Iterator[str] = _str_chunks(pieces, specials, chunk_chars)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    known = total_chars
    if total_chars is None and executor is None:
        # a stream of unknown length: read ahead up to PARALLEL_MIN_BYTES characters, and
        # count a stream that ends before that here, without starting workers
        head: list[str] = []
        n = 0
        for c in chunks:
            head.append(c)
            n += len(c)
            if n >= PARALLEL_MIN_BYTES:
                break
        else:
            workers = 1
        known = n
        chunks = itertools.chain(head, chunks)
    fast = _use_fast(source, PARALLEL_MIN_BYTES if known is None else known)
    if fast and executor is None:  # compiled counter: threads of this process (see count_files)
        packed_merger = _PackedMerger(progress, total)
        used = _run_packed(((c, source, specials) for c in chunks), _count_chunk_packed, workers, packed_merger)
        if total and progress is not None and packed_merger.chunks != total:
            progress("count", packed_merger.chunks, packed_merger.chunks)
        return _packed_result(packed_merger, used, t0, as_arrays)
    tasks = ((c, source, specials, fast) for c in chunks)
    used = _run(tasks, _count_chunk, workers, merger, executor)
    if total and progress is not None and merger.chunks != total:
        progress("count", merger.chunks, merger.chunks)
    return _result(merger, used, t0)


def count_text(
    text: str,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    num_workers: int | None = None,
    chunk_chars: int = DEFAULT_CHUNK_BYTES,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
    as_arrays: bool = False,
) -> CountResult:
    """Count the pre-tokens of one ``str``; long texts are counted chunk by chunk (see :func:`count_iterable`).

    Args and raises as :func:`count_iterable`; ``text`` must be a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return count_iterable(
        (text,),
        pattern,
        special_tokens,
        num_workers=num_workers,
        chunk_chars=chunk_chars,
        progress=progress,
        total_chars=len(text),
        executor=executor,
        as_arrays=as_arrays,
    )
