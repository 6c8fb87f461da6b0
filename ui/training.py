"""Training, cached per (text, :class:`~bpe_core.interface.TrainingSpec`): moving a slider never retrains.

The cache is this module's own small LRU (:data:`CACHE_ENTRIES` tokenizers per
server process, shared by all sessions, kept inside one ``st.cache_resource``
object so that ``st.cache_resource.clear()`` empties it too).  Unlike a
``st.cache_resource`` function it can train with a progress callback -- the
Playground's progress bar and Cancel button -- and a training that is stopped
part-way caches nothing, so the previous tokenizer stays in place.

A session can mark one settings key as cancelled (see :func:`cancel` and
:func:`ui.view.previous_if_cancelled`); :func:`train` then refuses to start that
training again in that session until :func:`resume` is called, so pages other
than the Playground do not silently restart a training the user stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict

import streamlit as st

from bpe_core.interface import ProgressCallback, TrainedTokenizer, TrainingSpec
from ui import imported as imported_tokenizers
from ui import state_keys as sk

TrainingKey = tuple
"""What :func:`training_key` returns: equal keys mean the same tokenizer."""

CACHE_ENTRIES = 8
"""Trained tokenizers kept per server process (least recently used dropped first)."""

PROGRESS_MIN_CHARS = 300_000
"""Texts at least this long (characters) train with a progress bar and a Cancel button."""

CANCELLED_KEY = sk.TRAINING_CANCELLED_FOR
LAST_KEY = sk.TRAINING_LAST


class CancelledInThisSession(ValueError):
    """:func:`train` was asked for a training this session cancelled (and has not resumed).

    Not :class:`bpe_core.interface.TrainingCancelled`, which stops a training
    that is running: this one refuses to *start* one, so that pages other than
    the Playground do not silently restart a training the user stopped.
    """


@st.cache_resource(show_spinner=False)
def _store() -> dict:
    """The process-wide cache: an LRU of tokenizers, its lock, and the last text's digest."""
    return {"lock": threading.Lock(), "lru": OrderedDict(), "digest": (None, b"")}


def _digest(text: str) -> bytes:
    """A content hash of ``text``, memoised for the very same ``str`` object (uploads, samples)."""
    store = _store()
    last_text, last = store["digest"]
    if last_text is text:
        return last
    d = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    store["digest"] = (text, d)
    return d


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


def cached(key: TrainingKey | None) -> TrainedTokenizer | None:
    """The cached tokenizer for ``key`` (marked recently used), or ``None`` if it is not trained."""
    if key is None:
        return None
    store = _store()
    with store["lock"]:
        tok = store["lru"].get(key)
        if tok is not None:
            store["lru"].move_to_end(key)
        return tok


def _put(key: TrainingKey, tok: TrainedTokenizer) -> None:
    store = _store()
    with store["lock"]:
        lru = store["lru"]
        lru[key] = tok
        lru.move_to_end(key)
        while len(lru) > CACHE_ENTRIES:
            lru.popitem(last=False)


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
        ValueError, TypeError: from the engine, with its message; not cached.
        CancelledInThisSession: this session cancelled training on these settings.
    """
    if imported is not None:
        return imported_tokenizers.get(imported)  # ValueError when the server no longer has it
    key = training_key(text, spec)
    tok = cached(key)
    if tok is not None:
        return tok
    if is_cancelled(key):
        raise CancelledInThisSession(
            "training on these settings was cancelled; press “Train with these settings” to train, "
            "or change the settings"
        )
    # count in this process: the server is multi-threaded, and uploads are at most 64 MiB
    tok = spec.train(text, progress=progress, num_workers=1)
    _put(key, tok)
    return tok


def remember(settings) -> None:
    """Note the sidebar's settings as this session's last trained tokenizer (the fallback after a Cancel).

    Args:
        settings: a :class:`ui.inputs.Settings` whose tokenizer is trained (not imported).
    """
    st.session_state[LAST_KEY] = (settings_key(settings), dataclasses.replace(settings))


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
