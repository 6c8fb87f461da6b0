"""Training, cached per (text, :class:`~bpe_core.interface.TrainingSpec`): moving a slider never retrains.

The cache is this module's own LRU, bounded by memory (:data:`CACHE_BUDGET_BYTES`
per server process, each tokenizer's size estimated by :func:`estimate_bytes`),
shared by all sessions, kept inside one ``st.cache_resource`` object so that
``st.cache_resource.clear()`` empties it too.  Each session also holds strong
references to the tokenizers it shows (:data:`ui.state_keys.TRAINING_HELD`, the
sidebar's always among them), so what strangers train can evict a tokenizer from
the shared cache but never from a session that shows it: its slider and
controls never jump.  Unlike a
``st.cache_resource`` function it can train with a progress callback -- the
Playground's progress bar and Cancel button -- and a training that is stopped
part-way caches nothing, so the previous tokenizer stays in place.

A training that fails (the engine's ``ValueError``/``TypeError``: a vocabulary size below what the text
needs, bad special tokens...) is remembered per session with its message (:func:`failure`): no page
trains it again, and :func:`ui.view.previous_if_failed` shows the previous tokenizer with the message
and, for a size too small, a button to train at the smallest size that works.

A session can mark one settings key as cancelled (see :func:`cancel` and
:func:`ui.view.previous_if_cancelled`); :func:`train` then refuses to start that
training again in that session until :func:`resume` is called, so pages other
than the Playground do not silently restart a training the user stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sys
import threading
import types
from collections import OrderedDict

import streamlit as st

from bpe_core.interface import ProgressCallback, TrainedTokenizer, TrainingSpec, VocabSizeTooSmall
from ui import imported as imported_tokenizers
from ui import state_keys as sk
from ui.algorithms import view_of

TrainingKey = tuple
"""What :func:`training_key` returns: equal keys mean the same tokenizer."""

CACHE_BUDGET_BYTES = 1 << 30
"""Memory (bytes, as :func:`estimate_bytes` counts) of the tokenizers the shared cache keeps per server
process; the least recently used go first, but always at least the newest one stays."""

SESSION_HELD = 4
"""Tokenizers each session holds on to (the sidebar's, and the latest others a page showed)."""

PROGRESS_MIN_CHARS = 1_000_000
"""Texts at least this long (characters) always train with a progress bar and a Cancel button;
shorter ones do when :func:`expected_seconds` says training takes longer than :data:`PROGRESS_MIN_SECONDS`."""

PROGRESS_MIN_SECONDS = 0.5
"""Trainings expected to take longer than this (seconds) show the progress bar and Cancel."""

CANCELLED_KEY = sk.TRAINING_CANCELLED_FOR
LAST_KEY = sk.TRAINING_LAST
HELD_KEY = sk.TRAINING_HELD


class CancelledInThisSession(ValueError):
    """:func:`train` was asked for a training this session cancelled (and has not resumed).

    Not :class:`bpe_core.interface.TrainingCancelled`, which stops a training
    that is running: this one refuses to *start* one, so that pages other than
    the Playground do not silently restart a training the user stopped.
    """


@st.cache_resource(show_spinner=False)
def _store() -> dict:
    """The process-wide cache: an LRU of ``key -> (tokenizer, bytes)``, its total bytes, its lock, the last digest."""
    return {"lock": threading.Lock(), "lru": OrderedDict(), "bytes": 0, "digest": (None, b""), "flights": {}}


class _Flight:
    """One training under way, for the sessions that ask for the same key meanwhile (see :func:`_train_once`).

    Attributes:
        done: set when the training ended, trained or not.
        tok: the tokenizer, once trained (``None`` while training, or when it failed).
        progress: the trainer's last ``(phase, done, total)`` report, for the waiting sessions' bars.
    """

    def __init__(self) -> None:
        self.done = threading.Event()
        self.tok: TrainedTokenizer | None = None
        self.progress: tuple[str, int, int] | None = None


def _digest(text: str) -> bytes:
    """A content hash of ``text``, memoised for the very same ``str`` object (uploads, samples)."""
    store = _store()
    last_text, last = store["digest"]
    if last_text is text:
        return last
    d = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    store["digest"] = (text, d)
    return d


def text_digest(text: str) -> bytes:
    """A 16-byte content hash of ``text`` (BLAKE2b), memoised for the very same ``str`` object (uploads, samples).

    The key of every per-text cache of the app (training, Compare's figures).
    """
    return _digest(text)


def training_key(text: str, spec: TrainingSpec, imported: str | None = None) -> TrainingKey:
    """The one cache key of a tokenizer: the training text's digest and the spec, or the imported file.

    Every cache of the app that holds a tokenizer, or something computed from
    one, keys on this (the training LRU, the Cancel mark, the Merges page's
    history) or on :func:`view_key` (figures of one vocabulary size).

    Args:
        text: training text.
        spec: how it is trained.
        imported: key of an imported tokenizer (:mod:`ui.imported`): the key is
            then the file's, whatever ``text`` and ``spec`` say.

    Returns:
        A hashable tuple; equal keys mean the same tokenizer.
    """
    if imported is not None:
        return ("imported", imported)
    return (_digest(text), len(text), spec.key())


def view_key(text: str, spec: TrainingSpec, imported: str | None = None, size: int | None = None) -> str:
    """:func:`training_key` and a vocabulary size, as one string (for ``st.cache_data`` keys of figures).

    The size is the part after the last ``|``.
    """
    return f"{training_key(text, spec, imported)!r}|{size}"


def settings_key(settings) -> TrainingKey:
    """:func:`training_key` of the sidebar's :class:`ui.inputs.Settings`."""
    return training_key(settings.text, settings.spec, settings.imported)


def estimate_bytes(tok: object) -> int:
    """Memory an object holds, in bytes: ``sys.getsizeof`` summed over everything it references.

    Follows dicts, lists, tuples, sets and objects' ``__dict__``/``__slots__``; counts each
    object once; does not follow classes, modules, functions or compiled patterns (shared
    with the rest of the process).  A 1,000-token BPE tokenizer is a few hundred KB, a
    50,000-token one some tens of MB.

    Args:
        tok: a tokenizer (or any object).

    Returns:
        The estimate in bytes.
    """
    seen: set[int] = set()
    stack = [tok]
    total = 0
    shared = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, re.Pattern)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj, 64)
        if isinstance(obj, (*shared, str, bytes, bytearray, int, float)):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        else:
            d = getattr(obj, "__dict__", None)
            if isinstance(d, dict):
                stack.append(d)
            for cls in type(obj).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    value = getattr(obj, name, None)
                    if value is not None:
                        stack.append(value)
    return total


def _held() -> OrderedDict | None:
    """The session's held tokenizers (created on first use), or ``None`` outside a session."""
    try:
        held = st.session_state.get(HELD_KEY)
        if held is None:
            held = st.session_state[HELD_KEY] = OrderedDict()
        return held
    except Exception:  # no script run context: nothing to hold
        return None


def _hold(key: TrainingKey, tok: TrainedTokenizer) -> None:
    """Keep a strong reference to ``tok`` in this session (the :data:`SESSION_HELD` latest, and the sidebar's)."""
    held = _held()
    if held is None:
        return
    held[key] = tok
    held.move_to_end(key)
    sidebar_key = last_trained()[0]
    for old in list(held)[: max(len(held) - SESSION_HELD, 0)]:
        if old != sidebar_key:
            del held[old]


def cached(key: TrainingKey | None) -> TrainedTokenizer | None:
    """The cached tokenizer for ``key`` (marked recently used), or ``None`` if it is not trained.

    Looks in what this session holds first (the very object it shows, which goes back into the
    shared cache if that dropped it), then in the shared cache.
    """
    if key is None:
        return None
    held = _held()
    tok = held.get(key) if held is not None else None
    if tok is not None:
        _put(key, tok)  # marks it recently used, or puts it back; one trained meanwhile by another session stays
        return tok
    store = _store()
    with store["lock"]:
        entry = store["lru"].get(key)
        if entry is not None:
            store["lru"].move_to_end(key)
            return entry[0]
    return None


def cache_bytes() -> int:
    """Bytes (as :func:`estimate_bytes` counts) of the tokenizers in the shared cache now."""
    return _store()["bytes"]


def _put(key: TrainingKey, tok: TrainedTokenizer) -> TrainedTokenizer:
    """Cache ``tok`` under ``key``; returns the cached tokenizer (one already there for ``key`` stays)."""
    store = _store()
    with store["lock"]:
        entry = store["lru"].get(key)
        if entry is not None:  # the first one stays: sessions showing it keep their slider (ui.view.session_size)
            store["lru"].move_to_end(key)
            return entry[0]
    size = estimate_bytes(tok)  # outside the lock: it walks the whole tokenizer
    with store["lock"]:
        lru = store["lru"]
        entry = lru.get(key)
        if entry is not None:
            lru.move_to_end(key)
            return entry[0]
        lru[key] = (tok, size)
        store["bytes"] += size
        while store["bytes"] > CACHE_BUDGET_BYTES and len(lru) > 1:
            _old, (_tok, old_size) = lru.popitem(last=False)
            store["bytes"] -= old_size
    return tok


def _train_once(key: TrainingKey, text: str, spec: TrainingSpec, progress: ProgressCallback | None) -> TrainedTokenizer:
    """Train ``spec`` on ``text`` and cache it, once however many sessions ask for ``key`` at the same time.

    The first caller trains (in its own thread, with its ``progress``); a caller that comes while that
    training runs waits for it instead of training the same tokenizer again, and its ``progress``
    gets the trainer's reports meanwhile (every 0.1 s, so a Cancel click still stops its run).  When
    the first caller's training fails or is stopped, a waiting caller trains by itself.

    Raises:
        ValueError, TypeError: from the engine (nothing cached); whatever ``progress`` raises.
    """
    store = _store()
    while True:
        with store["lock"]:
            entry = store["lru"].get(key)
            if entry is not None:
                store["lru"].move_to_end(key)
                return entry[0]
            flight = store["flights"].get(key)
            mine = flight is None
            if mine:
                flight = store["flights"][key] = _Flight()
        if mine:
            break
        while not flight.done.wait(0.1):
            if progress is not None and flight.progress is not None:
                progress(*flight.progress)
        if flight.tok is not None:
            return flight.tok

    def report(phase: str, done: int, total: int) -> None:
        flight.progress = (phase, done, total)
        if progress is not None:
            progress(phase, done, total)

    try:
        # count in this process: the server is multi-threaded, and uploads are at most 64 MiB
        flight.tok = _put(key, spec.train(text, progress=report, num_workers=1))
        return flight.tok
    finally:
        with store["lock"]:
            store["flights"].pop(key, None)
        flight.done.set()


def warm(text: str, spec: TrainingSpec) -> TrainedTokenizer:
    """Train ``spec`` on ``text`` into the shared cache, outside any session (the background warm-up, :mod:`ui.warmup`).

    Raises:
        ValueError, TypeError: from the engine (nothing cached).
    """
    return _train_once(training_key(text, spec), text, spec, None)


def expected_seconds(text: str, spec: TrainingSpec) -> float:
    """A cautious guess of how long training ``spec`` on ``text`` takes (seconds), from its length and algorithm.

    ``len(text)`` over the algorithm's :attr:`~ui.algorithms.AlgorithmView.chars_per_second`, plus a
    second per 50,000 tokens asked for; any run of non-space characters of its
    :attr:`~ui.algorithms.AlgorithmView.long_word_chars` or more counts as slow by itself.

    Args:
        text: the training text.
        spec: how it is trained.

    Returns:
        Seconds (a guess; :data:`PROGRESS_MIN_SECONDS` is the bar's threshold).
    """
    view = view_of(spec.algorithm)
    guess = len(text) / view.chars_per_second + spec.vocab_size / 50_000
    long_word = view.long_word_chars
    if len(text) >= long_word and re.search(rf"\S{{{long_word}}}", text):
        guess = max(guess, 1.0)
    return guess


def shows_progress(text: str, spec: TrainingSpec) -> bool:
    """Whether training ``spec`` on ``text`` runs long enough for the progress bar and the Cancel button.

    Texts of :data:`PROGRESS_MIN_CHARS` characters or more, or whose :func:`expected_seconds` exceed
    :data:`PROGRESS_MIN_SECONDS`.
    """
    return len(text) >= PROGRESS_MIN_CHARS or expected_seconds(text, spec) > PROGRESS_MIN_SECONDS


def cancel(key: TrainingKey) -> None:
    """Mark ``key``'s training as cancelled in this session (the Cancel button's callback)."""
    st.session_state[CANCELLED_KEY] = key


def resume() -> None:
    """Forget a cancellation: the next :func:`train` for those settings trains."""
    st.session_state.pop(CANCELLED_KEY, None)


def is_cancelled(key: TrainingKey) -> bool:
    """Whether this session cancelled the training for ``key``."""
    return st.session_state.get(CANCELLED_KEY) == key


def cancel_applies(settings) -> bool:
    """Whether the sidebar's settings are the ones this session cancelled, and are still untrained.

    An imported tokenizer or settings with a problem train nothing, so no
    Cancel applies to them; neither does it once their tokenizer is cached
    after all (another session trained it).

    Args:
        settings: a :class:`ui.inputs.Settings`.

    Returns:
        ``True`` when :func:`for_settings` would raise :class:`CancelledInThisSession` for them.
    """
    if settings.imported is not None or settings.problem or CANCELLED_KEY not in st.session_state:
        return False
    key = settings_key(settings)
    return is_cancelled(key) and cached(key) is None


FAILURES_KEPT = 8
"""Failed trainings each session remembers (the newest)."""


def _failures() -> OrderedDict:
    """The session's failed trainings (created on first use; an empty one outside a session)."""
    try:
        failures = st.session_state.get(sk.TRAINING_FAILED)
        if failures is None:
            failures = st.session_state[sk.TRAINING_FAILED] = OrderedDict()
        return failures
    except Exception:  # no script run context: nothing is remembered
        return OrderedDict()


def _note_failure(key: TrainingKey, exc: Exception) -> None:
    """Remember that training ``key`` failed with ``exc`` in this session (the :data:`FAILURES_KEPT` newest)."""
    failures = _failures()
    failures[key] = (str(exc), exc.minimum if isinstance(exc, VocabSizeTooSmall) else None)
    failures.move_to_end(key)
    while len(failures) > FAILURES_KEPT:
        failures.popitem(last=False)


def failure(settings) -> tuple[str, int | None] | None:
    """How training the sidebar's settings failed in this session, or ``None`` (not tried, or it trained).

    Args:
        settings: a :class:`ui.inputs.Settings`.

    Returns:
        ``(the engine's message, the smallest vocabulary size that trains or None)``; ``None`` also for an
        imported tokenizer or settings with an input problem (nothing is trained for them).
    """
    if settings.imported is not None or settings.problem:
        return None
    return _failures().get(settings_key(settings))


def train(
    text: str,
    spec: TrainingSpec,
    imported: str | None = None,
    *,
    progress: ProgressCallback | None = None,
) -> TrainedTokenizer:
    """Train (once) and return the tokenizer for ``spec`` on ``text``, or the imported one.

    Args:
        text: training text.
        spec: how to train (:meth:`bpe_core.interface.TrainingSpec.train`).
        imported: key of a tokenizer imported from a file (:mod:`ui.imported`):
            it is returned as it is and nothing is trained.
        progress: ``progress(phase, done, total)`` passed to the trainer when it
            has to train; an exception it raises (the Cancel button's rerun)
            stops training and nothing is cached.

    Returns:
        The trained tokenizer at its full size; pages take views of it with
        ``with_vocab_size``.

    Raises:
        ValueError, TypeError: from the engine, with its message; not cached, but remembered for the
            session (:func:`failure`): asked again, the same settings raise the same message at once
            (a :class:`~bpe_core.interface.VocabSizeTooSmall` again for a size too small).
        CancelledInThisSession: this session cancelled training on these settings.
    """
    if imported is not None:
        return imported_tokenizers.get(imported)  # ValueError when the server no longer has it
    key = training_key(text, spec)
    tok = cached(key)
    if tok is not None:
        _hold(key, tok)
        return tok
    if is_cancelled(key):
        raise CancelledInThisSession(
            "training on these settings was cancelled; press “Train with these settings” to train, "
            "or change the settings"
        )
    failed = _failures().get(key)
    if failed is not None:
        message, minimum = failed
        raise VocabSizeTooSmall(message, minimum) if minimum is not None else ValueError(message)
    try:
        tok = _train_once(key, text, spec, progress)
    except (ValueError, TypeError) as exc:
        _note_failure(key, exc)
        raise
    _hold(key, tok)
    return tok


def remember(settings) -> None:
    """Note the sidebar's settings as this session's last trained tokenizer (the fallback after a Cancel).

    Args:
        settings: a :class:`ui.inputs.Settings` whose tokenizer is trained (not imported).
    """
    key = settings_key(settings)
    st.session_state[LAST_KEY] = (key, dataclasses.replace(settings))
    tok = cached(key)
    if tok is not None:
        _hold(key, tok)


def last_trained() -> tuple[TrainingKey | None, object]:
    """``(settings key, Settings)`` noted by :func:`remember`, or ``(None, None)``."""
    return st.session_state.get(LAST_KEY) or (None, None)


def for_settings(settings, *, progress: ProgressCallback | None = None) -> TrainedTokenizer:
    """The sidebar's tokenizer: the imported one, or :func:`train` on the sidebar's text and parameters.

    A trained one is :func:`remember`-ed, whichever page asked for it.

    Args:
        settings: a :class:`ui.inputs.Settings`.
        progress: as in :func:`train`.

    Raises:
        ValueError, TypeError, CancelledInThisSession: as :func:`train`.
    """
    tok = train(settings.text, settings.spec, settings.imported, progress=progress)
    if settings.imported is None:
        remember(settings)
    return tok
