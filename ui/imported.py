"""Importing a tokenizer file in the sidebar, so every page can use a tokenizer trained elsewhere.

Accepted files are the ones the Playground exports (and their peers'):
this project's JSON, a Hugging Face ``tokenizer.json`` (byte-level BPE or
WordPiece), a tiktoken ``.tiktoken`` ranks file (optionally with the metadata
JSON written next to it), a BERT ``vocab.txt``.  Reading is
:func:`bpe_core.formats.upload.load_tokenizer_bytes`; this module only handles the widget,
the messages, and a small registry of what was loaded.

Imported tokenizers are kept in a process-wide registry keyed by the SHA-256 of
the uploaded bytes, so the same file is parsed once however many sessions or
pages use it, and :func:`ui.training.train` can hand it to every page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from bpe_core import MAX_UPLOAD_BYTES, get_algorithm, load_tokenizer_bytes
from bpe_core.interface import TrainedTokenizer, TrainingSpec
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.safe_text import md

_REGISTRY: dict[str, TrainedTokenizer] = {}
_MAX_KEPT = 16


@dataclass(frozen=True)
class Imported:
    """A tokenizer loaded from an uploaded file.

    Attributes:
        key: SHA-256 hex digest of the uploaded bytes (metadata file included).
        filename: the uploaded file's name (the ranks file's, for tiktoken).
        tokenizer: the loaded tokenizer at its full size.
    """

    key: str
    filename: str
    tokenizer: TrainedTokenizer

    @property
    def algorithm(self) -> str:
        """The key of :data:`bpe_core.interface.ALGORITHMS` of the file's tokenizer (``"bpe"``, ``"wordpiece"``)."""
        return self.tokenizer.algorithm


def spec_of(tok: TrainedTokenizer) -> TrainingSpec:
    """The :class:`~bpe_core.interface.TrainingSpec` that would train a tokenizer like ``tok`` here.

    Its algorithm, pattern (by name when it has one), full size and special
    tokens; lower-casing where the algorithm offers it (``tok.lowercase``).
    """
    lowercase = bool(tok.lowercase) if get_algorithm(tok.algorithm).uses_lowercase else False
    return TrainingSpec(
        tok.algorithm, tok.max_vocab_size, tok.pattern_name or tok.pattern, tuple(tok.special_tokens), lowercase
    )


def get(key: str) -> TrainedTokenizer:
    """The imported tokenizer registered under ``key``.

    Raises:
        ValueError: nothing is registered under ``key`` (the server restarted since the upload).
    """
    try:
        return _REGISTRY[key]
    except KeyError:
        raise ValueError("the imported tokenizer is no longer loaded; upload the file again") from None


def load_files(files: list[tuple[str, bytes]]) -> Imported:
    """Load a tokenizer from one uploaded file, or a ``.tiktoken`` file plus its metadata JSON.

    Args:
        files: ``(filename, bytes)`` of each uploaded file (one or two).

    Returns:
        The :class:`Imported` tokenizer (registered for :func:`get`).

    Raises:
        ValueError: no file, more than two, two that are not ranks + metadata,
            a file over the upload limit, or any error of
            :func:`bpe_core.formats.upload.load_tokenizer_bytes` (its message names the file).
    """
    if not files:
        raise ValueError("no file uploaded")
    if len(files) > 2:
        raise ValueError(f"{len(files)} files uploaded: give one tokenizer file, or a .tiktoken file and its .json")
    for name, data in files:
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"{name} is over the {MAX_UPLOAD_BYTES // 2**20} MiB upload limit")
    meta = None
    if len(files) == 2:
        ranks = [f for f in files if f[0].endswith(".tiktoken")]
        metas = [f for f in files if f[0].endswith(".json")]
        if len(ranks) != 1 or len(metas) != 1:
            raise ValueError("two files uploaded: expected one .tiktoken ranks file and one .json metadata file")
        (name, data), meta = ranks[0], metas[0][1]
    else:
        name, data = files[0]
    digest = hashlib.sha256(data + b"\0" + (meta or b"")).hexdigest()
    if digest not in _REGISTRY:
        tok = load_tokenizer_bytes(data, name, meta=meta)
        while len(_REGISTRY) >= _MAX_KEPT:
            _REGISTRY.pop(next(iter(_REGISTRY)))
        _REGISTRY[digest] = tok
    return Imported(digest, name, _REGISTRY[digest])


@dataclass(frozen=True)
class Outcome:
    """What the last change of the import box did, for the sidebar and the top of the main area.

    Attributes:
        ok: the new file(s) loaded and are in force.
        message: Markdown (user strings escaped): what was loaded, or why not and what is in force.
        fresh: this run is the one that read the new file(s) (a success is announced once).
    """

    ok: bool
    message: str
    fresh: bool = False


def _signature(name: str, data: bytes) -> tuple[str, str]:
    return name, hashlib.sha256(data).hexdigest()


def _candidates(new: list[tuple[str, bytes]], old: list[tuple[str, bytes]]) -> list[list[tuple[str, bytes]]]:
    """The file sets to try for newly chosen files, best first.

    A new ``.json`` beside one earlier ``.tiktoken`` (or the reverse) is first tried as
    its pair (ranks + metadata chosen one after the other), then alone; otherwise the new
    files alone (one file, or a pair chosen together).  Earlier files are never used otherwise.
    """
    if len(new) == 1:
        name = new[0][0]
        other_ext = ".tiktoken" if name.endswith(".json") else ".json" if name.endswith(".tiktoken") else None
        partners = [f for f in old if other_ext and f[0].endswith(other_ext)]
        if len(partners) == 1:
            return [[partners[0], new[0]], new]
    return [new]


def import_widget() -> Imported | None:
    """The sidebar's file uploader for a tokenizer; returns the tokenizer in force, if any.

    A newly chosen file replaces the one in force (the earlier files stay listed in the
    box but are not used, except a ``.tiktoken`` file and its ``.json`` metadata chosen one
    after the other, which are read as a pair).  A bad file shows its error under the
    widget and at the top of the main area (:func:`show_outcome`), and the previously
    imported tokenizer (if any) stays in force, as with text uploads.
    """
    uploaded = st.file_uploader(
        "Tokenizer file",
        type=["json", "tiktoken", "txt"],
        accept_multiple_files=True,
        key=sk.TOKENIZER_UPLOAD,
        help=(
            "A tokenizer exported from this app (any format) or made elsewhere: this project's JSON, a Hugging Face "
            "tokenizer.json (byte-level BPE or WordPiece), a tiktoken .tiktoken file (add its .json metadata for the "
            "pattern and special tokens; without it GPT-2's pattern is assumed), or a BERT vocab.txt. "
            "A newly chosen file replaces the one in use."
        ),
    )
    last: Imported | None = st.session_state.get(sk.TOKENIZER_IMPORT_GOOD)
    if last is not None and last.key not in _REGISTRY:
        last = None
    files = [(f.name, f.getvalue()) for f in uploaded or []]
    seen = st.session_state.get(sk.TOKENIZER_IMPORT_SEEN, set())
    st.session_state[sk.TOKENIZER_IMPORT_SEEN] = {_signature(*f) for f in files}
    new = [f for f in files if _signature(*f) not in seen]
    outcome: Outcome | None = st.session_state.get(sk.TOKENIZER_IMPORT_OUTCOME)
    if not new:  # nothing newly chosen (a rerun, or a file removed): what was in force stays
        if outcome is not None:
            outcome = st.session_state[sk.TOKENIZER_IMPORT_OUTCOME] = Outcome(outcome.ok, outcome.message)
            if not outcome.ok:
                st.error(outcome.message, icon=":material/error:")
        return last
    old = [f for f in files if f not in new]
    error = None
    for candidate in _candidates(new, old):
        try:
            result = load_files(candidate)
        except ValueError as exc:
            error = error or exc
            continue
        st.session_state[sk.TOKENIZER_IMPORT_GOOD] = result
        names = " + ".join(md(n) for n, _ in candidate)
        st.session_state[sk.TOKENIZER_IMPORT_OUTCOME] = Outcome(True, f"Imported {names}: every page uses it.", True)
        return result
    message = f"Cannot import {' + '.join(md(n) for n, _ in new)}: {md(error)}"
    if last is not None:
        message += f" Still using the previous import, {md(last.filename)}."
    st.session_state[sk.TOKENIZER_IMPORT_OUTCOME] = Outcome(False, message, True)
    st.error(message, icon=":material/error:")
    return last


def show_outcome() -> None:
    """At the top of the main area: the import's result when it just happened, or why it failed.

    A success is said once (on the run that read the file); a failure stays until another
    file is chosen or the tokenizer source changes.  Nothing when the sidebar trains.
    """
    outcome: Outcome | None = st.session_state.get(sk.TOKENIZER_IMPORT_OUTCOME)
    if outcome is None or st.session_state.get(sk.TOKENIZER_SOURCE) != "import":
        return
    if outcome.ok:
        if outcome.fresh:
            st.success(outcome.message, icon=":material/check_circle:")
    else:
        st.error(outcome.message, icon=":material/error:")


def describe(imp: Imported) -> str:
    """One line about an imported tokenizer, for the sidebar caption."""
    tok = imp.tokenizer
    view = view_of(imp.algorithm)
    return (
        f"**{md(imp.filename)}**: {view.kind}, {tok.max_vocab_size:,} tokens{view.import_note(tok)}, "
        f"{len(tok.special_tokens)} special tokens. Every page uses it; the text is only encoded, never trained on."
    )
