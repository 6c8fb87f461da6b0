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


def import_widget() -> Imported | None:
    """The sidebar's file uploader for a tokenizer; returns the tokenizer in force, if any.

    A bad file shows its error under the widget and the previously imported
    tokenizer (if any) stays in force, as with text uploads.
    """
    uploaded = st.file_uploader(
        "Tokenizer file",
        type=["json", "tiktoken", "txt"],
        accept_multiple_files=True,
        key=sk.TOKENIZER_UPLOAD,
        help=(
            "A tokenizer exported from this app (any format) or made elsewhere: this project's JSON, a Hugging Face "
            "tokenizer.json (byte-level BPE or WordPiece), a tiktoken .tiktoken file (add its .json metadata for the "
            "pattern and special tokens; without it GPT-2's pattern is assumed), or a BERT vocab.txt."
        ),
    )
    last: Imported | None = st.session_state.get(sk.TOKENIZER_IMPORT_GOOD)
    if not uploaded:
        return last if last is not None and last.key in _REGISTRY else None
    try:
        result = load_files([(f.name, f.getvalue()) for f in uploaded])
    except ValueError as exc:
        st.error(f"Cannot import this tokenizer: {exc}", icon=":material/error:")
        if last is not None and last.key in _REGISTRY:
            st.caption(f"Still using the previous import, {last.filename}.")
            return last
        return None
    st.session_state[sk.TOKENIZER_IMPORT_GOOD] = result
    return result


def describe(imp: Imported) -> str:
    """One line about an imported tokenizer, for the sidebar caption."""
    tok = imp.tokenizer
    view = view_of(imp.algorithm)
    return (
        f"**{imp.filename}**: {view.kind}, {tok.max_vocab_size:,} tokens{view.import_note(tok)}, "
        f"{len(tok.special_tokens)} special tokens. Every page uses it; the text is only encoded, never trained on."
    )
