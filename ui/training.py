"""Training, cached per (text, parameters): moving a slider never retrains.

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
from collections.abc import Callable

import streamlit as st

from bpe_core import BPETokenizer, train_bpe
from bpe_core.wordpiece import WordPieceTokenizer, train_wordpiece
from ui import imported as imported_tokenizers
from ui import state_keys as sk

Tokenizer = BPETokenizer | WordPieceTokenizer
SettingsKey = tuple
ProgressCallback = Callable[[str, int, int], None]

CACHE_ENTRIES = 8
"""Trained tokenizers kept per server process (least recently used dropped first)."""

PROGRESS_MIN_CHARS = 300_000
"""Texts at least this long (characters) train with a progress bar and a Cancel button."""

CANCELLED_KEY = sk.TRAINING_CANCELLED_FOR
LAST_KEY = sk.TRAINING_LAST


class TrainingWasCancelled(ValueError):
    """:func:`train` was asked for settings whose training this session cancelled."""


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


def settings_key(
    text: str,
    algorithm: str,
    pattern: str,
    max_vocab: int,
    special_tokens: tuple[str, ...],
    lowercase: bool = False,
) -> SettingsKey:
    """The cache key of a training: the text's digest and every parameter.

    Args:
        text: training text.
        algorithm: ``"bpe"`` or ``"wordpiece"``.
        pattern: pattern name.
        max_vocab: vocabulary size to train to.
        special_tokens: special-token strings.
        lowercase: WordPiece lower-casing.

    Returns:
        A hashable tuple; equal keys mean the same tokenizer.
    """
    return (_digest(text), len(text), algorithm, pattern, max_vocab, tuple(special_tokens), bool(lowercase))


def cached(key: SettingsKey | None) -> Tokenizer | None:
    """The cached tokenizer for ``key`` (marked recently used), or ``None`` if it is not trained."""
    if key is None:
        return None
    store = _store()
    with store["lock"]:
        tok = store["lru"].get(key)
        if tok is not None:
            store["lru"].move_to_end(key)
        return tok


def _put(key: SettingsKey, tok: Tokenizer) -> None:
    store = _store()
    with store["lock"]:
        lru = store["lru"]
        lru[key] = tok
        lru.move_to_end(key)
        while len(lru) > CACHE_ENTRIES:
            lru.popitem(last=False)


def cancel(key: SettingsKey) -> None:
    """Mark ``key``'s training as cancelled in this session (the Cancel button's callback)."""
    st.session_state[CANCELLED_KEY] = key


def resume() -> None:
    """Forget a cancellation: the next :func:`train` for those settings trains."""
    st.session_state.pop(CANCELLED_KEY, None)


def is_cancelled(key: SettingsKey) -> bool:
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
        ``True`` when :func:`for_settings` would raise :class:`TrainingWasCancelled` for them.
    """
    if settings.imported is not None or settings.problem or CANCELLED_KEY not in st.session_state:
        return False
    key = settings_key(*settings_args(settings))
    return is_cancelled(key) and cached(key) is None


def train(
    text: str,
    algorithm: str,
    pattern: str,
    max_vocab: int,
    special_tokens: tuple[str, ...],
    lowercase: bool = False,
    imported: str | None = None,
    *,
    progress: ProgressCallback | None = None,
) -> Tokenizer:
    """Train (once) and return the tokenizer for these settings, or the imported one.

    Args:
        text: training text.
        algorithm: ``"bpe"`` or ``"wordpiece"``.
        pattern: pattern name (BPE only; WordPiece always splits BERT-style).
        max_vocab: vocabulary size to train to.
        special_tokens: special-token strings.
        lowercase: WordPiece only: lower-case the text first.
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
        TrainingWasCancelled: this session cancelled training on these settings.
    """
    if imported is not None:
        return imported_tokenizers.get(imported)  # ValueError when the server no longer has it
    key = settings_key(text, algorithm, pattern, max_vocab, special_tokens, lowercase)
    tok = cached(key)
    if tok is not None:
        return tok
    if is_cancelled(key):
        raise TrainingWasCancelled(
            "training on these settings was cancelled; press “Train with these settings” to train, "
            "or change the settings"
        )
    if algorithm == "wordpiece":
        tok = train_wordpiece(text, max_vocab, special_tokens, lowercase=lowercase, progress=progress)
    elif algorithm == "bpe":
        # count in this process: the server is multi-threaded, and uploads are at most 64 MiB
        tok = train_bpe(text, max_vocab, special_tokens, pattern, progress=progress, num_workers=1)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    _put(key, tok)
    return tok


def settings_args(settings) -> tuple:
    """``(text, algorithm, pattern, max_vocab, special_tokens, lowercase)`` of a :class:`ui.inputs.Settings`.

    The positional arguments of :func:`train` and :func:`settings_key` for the sidebar's settings.
    """
    return (
        settings.text,
        settings.algorithm,
        settings.pattern,
        settings.max_vocab,
        settings.special_tokens,
        settings.lowercase,
    )


def remember(settings) -> None:
    """Note the sidebar's settings as this session's last trained tokenizer (the fallback after a Cancel).

    Args:
        settings: a :class:`ui.inputs.Settings` whose tokenizer is trained (not imported).
    """
    st.session_state[LAST_KEY] = (settings_key(*settings_args(settings)), dataclasses.replace(settings))


def last_trained() -> tuple[SettingsKey | None, object]:
    """``(settings key, Settings)`` noted by :func:`remember`, or ``(None, None)``."""
    return st.session_state.get(LAST_KEY) or (None, None)


def for_settings(settings, *, progress: ProgressCallback | None = None) -> Tokenizer:
    """The sidebar's tokenizer: the imported one, or :func:`train` on the sidebar's text and parameters.

    A trained one is :func:`remember`-ed, whichever page asked for it.

    Args:
        settings: a :class:`ui.inputs.Settings`.
        progress: as in :func:`train`.

    Raises:
        ValueError, TypeError, TrainingWasCancelled: as :func:`train`.
    """
    tok = train(*settings_args(settings), settings.imported, progress=progress)
    if settings.imported is None:
        remember(settings)
    return tok
