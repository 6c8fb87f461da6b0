"""The shared sidebar: where the text comes from and how the tokenizer is trained.

Every page reads the same :class:`Settings`; the widgets keep their values for
the whole session (``persist_state="session"``), so switching pages loses
nothing.  Bad input is reported here, next to the widget that caused it, and
never clears what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from bpe_core import MAX_UPLOAD_BYTES, algorithm_names, decode_text_upload, get_algorithm
from bpe_core.interface import TrainingSpec
from bpe_core.pretokenize import PATTERN_LABELS, compile_pattern
from ui import algorithms, imported, present
from ui import state_keys as sk
from ui.render import COLOUR_MODES
from ui.safe_text import md
from ui.samples import SAMPLES, load_sample

SOURCES = ("Sample", "Paste", "Upload")

COMMON_SPECIALS = ["<|endoftext|>", "<|pad|>", "<|im_start|>", "<|im_end|>", "[CLS]", "[SEP]"]

DEFAULT_MAX_VOCAB = 1000

CUSTOM = "custom"
"""The pattern menu's key for a regex typed by the user (Settings.pattern is then the regex source)."""

URL_TEXT_LIMIT = 2000
"""Pasted text up to this many characters goes into the page's link (see :mod:`ui.links`)."""


@dataclass
class Settings:
    """What the sidebar says, for the pages.

    Attributes:
        text: the text to train on and to show (may be empty).
        text_label: where it came from, for captions ("Sample: English prose").
        spec: how the tokenizer is trained (for an imported tokenizer: its
            algorithm, pattern, size and special tokens, as if it had been trained here).
        problem: a message about the input when there is nothing usable to show.
        imported: key of an imported tokenizer, or ``None`` to train on the text.
        colour_mode: a key of :data:`ui.render.COLOUR_MODES`.
    """

    text: str
    text_label: str
    spec: TrainingSpec = field(default_factory=TrainingSpec)
    problem: str | None = None
    imported: str | None = None
    """Key of a tokenizer imported from a file (see :mod:`ui.imported`): pages use it instead of training."""
    colour_mode: str = "cycle"


def default_spec(algorithm: str) -> TrainingSpec:
    """The spec the sidebar trains ``algorithm`` with before the user changes anything.

    :data:`DEFAULT_MAX_VOCAB` tokens, the algorithm's default pattern and special tokens
    (:class:`bpe_core.interface.Algorithm`), no lower-casing: what the background warm-up
    (:mod:`ui.warmup`) trains the samples with, so a first visit finds them trained.
    """
    alg = get_algorithm(algorithm)
    return TrainingSpec(algorithm, DEFAULT_MAX_VOCAB, alg.default_pattern, alg.default_special_tokens, False)


def _upload_text() -> tuple[str, str | None, str | None]:
    """(text, label, problem) for the Upload source; the last good upload survives a bad one."""
    uploaded = st.file_uploader(
        "Upload a .txt file",
        type=["txt"],
        key=sk.UPLOAD_FILE,
        max_upload_size=MAX_UPLOAD_BYTES // 2**20,
        help=f"UTF-8 text, up to {MAX_UPLOAD_BYTES // 2**20} MiB. The file is read as bytes, never as a path.",
    )
    if uploaded is None:
        last = st.session_state.get(sk.UPLOAD_GOOD)
        if last:
            return last[1], f"Upload: {last[0]}", None
        return "", None, "Upload a UTF-8 .txt file to tokenize it."
    try:
        text = decode_text_upload(uploaded.getvalue(), uploaded.name)
    except ValueError as exc:
        st.error(md(exc), icon=":material/error:")
        last = st.session_state.get(sk.UPLOAD_GOOD)
        if last:
            st.caption(f"Still showing the previous upload, {md(last[0])}.")
            return last[1], f"Upload: {last[0]}", None
        return "", None, str(exc)
    st.session_state[sk.UPLOAD_GOOD] = (uploaded.name, text)
    return text, f"Upload: {uploaded.name}", None


def sidebar() -> Settings:
    """Draw the sidebar's input widgets and return the current :class:`Settings`."""
    with st.sidebar:
        st.subheader("Text", divider="gray")
        source = st.radio(
            "Source", SOURCES, horizontal=True, key=sk.SOURCE, label_visibility="collapsed", persist_state="session"
        )
        problem = None
        if source == "Sample":
            key = st.selectbox(
                "Sample text",
                list(SAMPLES),
                format_func=lambda k: SAMPLES[k][0],
                key=sk.SAMPLE,
                persist_state="session",
            )
            text, label = load_sample(key), f"Sample: {SAMPLES[key][0]}"
        elif source == "Paste":
            text = st.text_area(
                "Your text",
                key=sk.PASTE_TEXT,
                height=220,
                placeholder="Paste or type any text here.",
                persist_state="session",
            )
            text = text or ""
            label = "Pasted text"
            if not text:
                problem = "Paste some text in the sidebar to tokenize it."
        else:
            text, label, problem = _upload_text()
            label = label or "Upload"

        st.subheader("Tokenizer", divider="gray")
        origin = st.radio(
            "Tokenizer source",
            ["train", "import"],
            format_func={"train": "Train on the text", "import": "Import a file"}.get,
            key=sk.TOKENIZER_SOURCE,
            horizontal=True,
            label_visibility="collapsed",
            persist_state="session",
        )
        if origin == "import":
            settings = _imported_settings(text, label, problem)
        else:
            settings = _trained_settings(text, label, problem)
        st.subheader("Display", divider="gray")
        colour_mode = st.radio(
            "Token colours",
            list(COLOUR_MODES),
            format_func=COLOUR_MODES.get,
            key=sk.COLOUR_MODE,
            persist_state="session",
            help="Cycle: neighbours always differ. Per id: a token has the same colour everywhere. "
            "Merge rank: early merges amber, late merges blue, single bytes grey.",
        )
        present.toggle()
        with st.expander("Advanced", icon=":material/tune:"):  # out of a learner's way
            st.toggle(
                "Draw on the server",
                key=sk.SERVER_VIEW,
                help="Draw the Playground's and Merges' text on the server instead of in the browser: every "
                "slider move then reloads the page (for browsers that block the live view's script).",
            )
        st.caption(
            f"The address bar holds these settings: share it to reopen this view. Pasted text is included "
            f"up to {URL_TEXT_LIMIT:,} characters; uploads are not."
        )
    settings.colour_mode = colour_mode
    return settings


def _imported_settings(text: str, label: str, problem: str | None) -> Settings:
    """Settings for a tokenizer imported from a file (the widget, its caption, or a prompt to upload)."""
    imp = imported.import_widget()
    if imp is None:
        return Settings(
            text=text,
            text_label=label,
            spec=TrainingSpec(algorithm_names()[0], DEFAULT_MAX_VOCAB, "gpt2", ()),
            problem=problem or "Upload a tokenizer file in the sidebar to use it on the text.",
        )
    st.caption(imported.describe(imp))
    return Settings(
        text=text, text_label=label, spec=imported.spec_of(imp.tokenizer), problem=problem, imported=imp.key
    )


def _algorithm_changed() -> None:
    """A newly chosen algorithm gets back the pattern last chosen under it, else its own default.

    (Unigram's default is ``sentencepiece``; BPE's ``gpt2``.)
    """
    alg = get_algorithm(st.session_state[sk.ALGORITHM])
    if not alg.fixed_pattern:
        remembered = st.session_state.get(sk.PATTERN_BY_ALGORITHM, {})
        st.session_state[sk.PATTERN] = remembered.get(alg.name, alg.default_pattern)


def _trained_settings(text: str, label: str, problem: str | None) -> Settings:
    """The training widgets (algorithm, pattern, vocabulary size, special tokens) and their settings.

    The algorithms, their labels, and which widgets each shows (a pattern
    choice, lower-casing, its default special tokens) come from
    :data:`bpe_core.interface.ALGORITHMS`; the sentences from :mod:`ui.algorithms`.
    """
    algorithm = st.radio(
        "Algorithm",
        algorithm_names(),
        format_func=lambda n: get_algorithm(n).label,
        key=sk.ALGORITHM,
        horizontal=True,
        persist_state="session",
        on_change=_algorithm_changed,
    )
    alg, view = get_algorithm(algorithm), algorithms.view_of(algorithm)
    lowercase = False
    if alg.fixed_pattern:
        pattern = alg.default_pattern
        if view.pattern_note:
            st.caption(view.pattern_note)
    else:
        pattern = st.selectbox(
            "Pre-tokenization pattern",
            [*PATTERN_LABELS, CUSTOM],
            format_func=lambda k: PATTERN_LABELS.get(k, "Custom…"),
            key=sk.PATTERN,
            persist_state="session",
            help="How the text is cut into pre-tokens before merging; merges never cross a pre-token boundary.",
        )
        st.session_state.setdefault(sk.PATTERN_BY_ALGORITHM, {})[algorithm] = pattern
        if pattern == CUSTOM:
            pattern = _custom_pattern()
    if alg.uses_lowercase:
        lowercase = st.toggle(
            "Lower-case the text",
            key=view.lowercase_key,
            persist_state="session",
            help=view.lowercase_help,
        )
    st.session_state.setdefault(sk.MAX_VOCAB, DEFAULT_MAX_VOCAB)  # a default via value= would clash with links
    max_vocab = st.number_input(
        "Vocabulary size to train",
        min_value=1,
        max_value=100_000,
        step=100,
        key=sk.MAX_VOCAB,
        persist_state="session",
        help=(
            "Train once up to this size; the slider on each page then shows any smaller size instantly. "
            "Byte-level BPE needs at least 256 + the special tokens; WordPiece at least its alphabet + specials."
        ),
    )
    defaults = list(alg.default_special_tokens)
    # not default=: links set it (ui.links.keep, inlined: ui.links imports this module)
    st.session_state[view.special_tokens_key] = st.session_state.get(view.special_tokens_key, defaults)
    offered = defaults + [t for t in COMMON_SPECIALS if t not in defaults]
    offered += [t for t in st.session_state[view.special_tokens_key] if t not in offered]  # a link's own tokens
    specials = st.multiselect(
        "Special tokens",
        offered,
        key=view.special_tokens_key,
        accept_new_options=True,
        persist_state="session",
        help=view.specials_help,
    )
    return Settings(
        text=text,
        text_label=label,
        spec=TrainingSpec(algorithm, int(max_vocab), pattern, tuple(specials), bool(lowercase)),
        problem=problem,
    )


def _custom_pattern() -> str:
    """The typed split regex; an invalid one shows the regex error and the last valid one stays in force."""
    typed = st.text_input(
        "Custom pattern (regex module syntax)",
        key=sk.CUSTOM_PATTERN,
        persist_state="session",
        placeholder=r"e.g. \p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+",
    )
    good = st.session_state.get(sk.CUSTOM_PATTERN_GOOD, "gpt2")
    if not typed:
        st.caption(f"Type a regex. Until then: {PATTERN_LABELS.get(good, 'the last valid custom pattern')}.")
        return good
    try:
        compile_pattern(typed)
    except ValueError as exc:
        st.error(f"{md(exc)}. The previous pattern stays in force:", icon=":material/error:")
        st.code(PATTERN_LABELS.get(good, good), language=None)
        return good
    st.session_state[sk.CUSTOM_PATTERN_GOOD] = typed
    return typed
