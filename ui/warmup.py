"""What the server does once per process, in the background from start-up, so that no visitor's click waits for it.

``app.py`` calls :func:`start` at the top of every script run; the first call in a process that serves the
app (a Streamlit runtime exists: ``streamlit run``, not ``AppTest``) starts one daemon thread, and every later
call returns at once.  The thread, in order (:func:`jobs`):

1. imports every module of :mod:`ui` (the pages' building blocks, Plotly, pandas), so the first visitor of
   each page is not charged for them;
2. trains the built-in samples (:data:`ui.samples.SAMPLES`) with the sidebar's defaults for every
   registered algorithm, and with the spec Compare trains each algorithm with beside another one
   (:meth:`ui.algorithms.AlgorithmView.compare_spec`), into the shared training cache of
   :mod:`ui.training` -- the cache every session reads, so each sample is trained once per process;
3. loads and sha256-verifies every production tokenizer
   (:func:`bpe_core.production.registry.load_production`, cached per process), the defaults of
   Compare first, and runs each one's encoder and step-by-step encoder once on a short text, so
   whatever they build on first use (tiktoken's tables, the merge list the Encode page replays,
   the byte lengths Compare measures with) is built here;
4. builds what Compare draws of each built-in sample under every production tokenizer (its figures, spans
   and column HTML with the default options: :func:`ui.compare.warm_production_columns`), so that a Compare
   button on a sample finds them in the shared caches;
5. compiles the kernels of corpus figures (:mod:`bpe_core.analysis.corpus`, what Compare measures a long text
   with) and measures a short text under every production tokenizer loaded, so that whatever each builds for
   its distinct pieces on first use is built here;
6. collects garbage once and moves every object alive at that point into the permanent generation
   (:func:`gc.freeze`): Streamlit runs a full collection after every script run
   (``runner.postScriptGC``), which otherwise walks all of these long-lived objects again each time
   (about 0.15 s a run on this machine, holding the GIL against every other session).

A job that fails (a production file not installed) is noted in :attr:`Warmup.steps` and the thread goes
on: the page that needs it says why, as before.  The thread runs at a lower OS priority (nice 10) than the
sessions' script threads.  Set ``BPE_PLAYGROUND_WARMUP=0`` to switch it off.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import pkgutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from bpe_core import algorithm_names
from bpe_core.interface import TrainingSpec
from bpe_core.production.registry import DEFAULT_PRODUCTION, PRODUCTION, load_production, production_token_ids

ENV = "BPE_PLAYGROUND_WARMUP"
"""Environment variable: ``0`` switches the background warm-up off."""

NICE = 10
"""How much lower the warm-up thread's OS priority is than the server's (Linux ``setpriority`` on its thread id)."""

WARM_TEXT = "Tokenizers warm up: 2024 naïve café, 東京, 🙂 <|endoftext|>"
"""A short text each production tokenizer encodes once (letters, digits, accents, CJK, an emoji, a special)."""


@dataclass
class Warmup:
    """One process's warm-up: its thread and what each job took.

    Attributes:
        thread: the daemon thread (``None`` when :func:`run` was called directly).
        done: set when every job has run.
        steps: ``(job name, seconds, error message or None)`` per job, in order.
    """

    thread: threading.Thread | None = None
    done: threading.Event = field(default_factory=threading.Event)
    steps: list[tuple[str, float, str | None]] = field(default_factory=list)


_LOCK = threading.Lock()
_PROCESS: dict[str, Warmup] = {}
"""The process's :class:`Warmup` under ``"state"``, once :func:`start` started it."""


def enabled() -> bool:
    """Whether :func:`start` starts the thread: a Streamlit server runs the app, ``BPE_PLAYGROUND_WARMUP`` is not 0."""
    if os.environ.get(ENV, "1") == "0":
        return False
    from streamlit import runtime

    # AppTest puts a stand-in (a mock) where the runtime goes: only a real one serves visitors
    return runtime.exists() and type(runtime.get_instance()) is runtime.Runtime


def start() -> Warmup | None:
    """Start the warm-up thread once per process (see the module docstring); cheap on every later call.

    Returns:
        The process's :class:`Warmup`, or ``None`` when it is switched off (no runtime, or ``BPE_PLAYGROUND_WARMUP=0``).
    """
    current = _PROCESS.get("state")
    if current is not None:
        return current
    if not enabled():
        return None
    with _LOCK:
        if "state" not in _PROCESS:
            current = _PROCESS["state"] = Warmup()
            current.thread = threading.Thread(target=run, args=(current,), name="bpe-warmup", daemon=True)
            current.thread.start()
    return _PROCESS["state"]


def state() -> Warmup | None:
    """The process's :class:`Warmup` if :func:`start` started one."""
    return _PROCESS.get("state")


def default_specs() -> list[TrainingSpec]:
    """The specs a sample is trained with before anyone asks: each algorithm's sidebar default and Compare's.

    The sidebar's default for an algorithm is :func:`ui.inputs.default_spec`; Compare trains an
    algorithm other than the sidebar's with :meth:`ui.algorithms.AlgorithmView.compare_spec` of the
    sidebar's spec.  Duplicates are left out.
    """
    from ui.algorithms import view_of
    from ui.inputs import default_spec

    out: list[TrainingSpec] = []
    for name in algorithm_names():
        sidebar = default_spec(name)
        for spec in (sidebar, *(view_of(other).compare_spec(sidebar) for other in algorithm_names() if other != name)):
            if spec not in out:
                out.append(spec)
    return out


def _import_ui() -> None:
    import ui

    for info in pkgutil.walk_packages(ui.__path__, "ui."):
        importlib.import_module(info.name)


def _train_samples() -> None:
    from ui import training
    from ui.samples import SAMPLES, load_sample

    for key in SAMPLES:
        text = load_sample(key)
        for spec in default_specs():
            with contextlib.suppress(ValueError, TypeError):  # a default that cannot train this sample: a page says why
                training.warm(text, spec)


def _production_job(key: str) -> Callable[[], None]:
    def job() -> None:
        tok = load_production(key)
        tok.encode(WARM_TEXT)
        tok.encode_steps(WARM_TEXT)
        production_token_ids(key)
        from ui import catalogue

        catalogue.warm_production(key)

    return job


def _columns_job(sample: str, keys: list[str]) -> Callable[[], None]:
    def job() -> None:
        from ui import compare
        from ui.samples import load_sample

        compare.warm_production_columns(load_sample(sample), keys)

    return job


def jobs() -> Iterator[tuple[str, Callable[[], None]]]:
    """``(name, job)`` in the order the thread runs them (see the module docstring)."""
    yield "import ui", _import_ui
    yield "train the samples", _train_samples
    keys = [*DEFAULT_PRODUCTION, *(k for k in PRODUCTION if k not in DEFAULT_PRODUCTION)]
    for key in keys:
        yield f"load {key}", _production_job(key)
    from ui.samples import SAMPLES

    for sample in SAMPLES:
        yield f"Compare columns on {sample}", _columns_job(sample, keys)
    yield "corpus figures", _corpus_figures


def _corpus_figures() -> None:
    from bpe_core.analysis import corpus_kernel
    from bpe_core.analysis.corpus import measure_corpus
    from bpe_core.counting import unit_kernel
    from bpe_core.production.encodings import EncodingUnavailable

    unit_kernel.warm()
    corpus_kernel.warm()
    toks = []
    for key in PRODUCTION:
        with contextlib.suppress(EncodingUnavailable, ValueError):  # not installed: the page says why
            toks.append(load_production(key))
    measure_corpus(WARM_TEXT * 4, toks, num_workers=1)


def run(state: Warmup | None = None) -> Warmup:
    """Run every job of :func:`jobs` in this thread, then freeze what is alive (see the module docstring).

    Args:
        state: where to note the steps (a new :class:`Warmup` by default).

    Returns:
        ``state``, its ``done`` set.
    """
    state = state or Warmup()
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed: run at the usual priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + NICE)
    for name, job in jobs():
        t0 = time.perf_counter()
        error = None
        try:
            job()
        except Exception as exc:  # noted; the page that needs it reports it
            error = f"{type(exc).__name__}: {exc}"
        state.steps.append((name, time.perf_counter() - t0, error))
    t0 = time.perf_counter()
    gc.collect()
    gc.freeze()
    state.steps.append(("gc.freeze", time.perf_counter() - t0, None))
    state.done.set()
    _log(state)
    return state


DONE_LOG = "BPE Playground warm-up done"
"""How the server's log line that the warm-up ended begins (``benchmarks/`` wait for it)."""


def _log(state: Warmup) -> None:
    """One line in the server's log: the warm-up's total, its slowest jobs and any that failed (seconds)."""
    from streamlit.logger import get_logger

    total = sum(seconds for _name, seconds, _error in state.steps)
    slowest = sorted(state.steps, key=lambda step: -step[1])[:5]
    failed = [f"{name} ({error})" for name, _s, error in state.steps if error]
    get_logger(__name__).info(
        "%s: %d jobs in %.1f s; slowest %s; failed: %s",
        DONE_LOG,
        len(state.steps),
        total,
        ", ".join(f"{name} {seconds:.2f} s" for name, seconds, _e in slowest),
        "; ".join(failed) or "none",
    )
