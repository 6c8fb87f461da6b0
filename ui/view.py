"""Page building blocks shared by the pages: training with messages, the slider, counts, coloured text."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from bpe_core.analysis.metrics import basic_counts
from bpe_core.interface import TrainedTokenizer
from bpe_core.pretokenize import pretoken_prefix
from ui import render, training
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.inputs import Settings
from ui.limits import MAX_DRAW_CHARS, MAX_DRAW_TOKENS
from ui.safe_text import md


def trained_or_stop(settings: Settings, *, brief: bool = False) -> TrainedTokenizer:
    """Train (cached) for the sidebar's settings, or explain in the page why not and stop the page.

    Trainings that take more than a moment (:func:`ui.training.shows_progress`) train
    with a progress bar (counting, then merging) and a Cancel button.  Cancel
    stops training at once (Streamlit interrupts the run at the next progress
    update) and caches nothing; the page then goes on with the previous
    tokenizer of this session *and the settings it was trained with* (see
    :func:`previous_if_cancelled`, which every page shares), or stops after
    saying so when this session has no previous tokenizer.  Input and
    engine errors are shown as messages; the sidebar keeps the user's text and
    settings untouched.  When training stopped before the size asked for, the
    page says so in one quiet line (the reason in full is in
    :func:`training_details`).

    Args:
        settings: the sidebar's :class:`~ui.inputs.Settings`; switched in place
            to the previous tokenizer's settings after a Cancel.
        brief: the early-stop line without the pointer to "How this tokenizer was trained" (pages without it).

    Returns:
        The tokenizer at its full trained size (or the imported one).

    Raises:
        streamlit's stop exception (:func:`st.stop`): when there is nothing to show.
    """
    if settings.problem:
        st.info(md(settings.problem), icon=":material/edit_note:")
        st.stop()
    if settings.imported is not None:  # nothing to train: the file's tokenizer, as it is
        try:
            return training.train(settings.text, settings.spec, settings.imported)
        except ValueError as exc:
            st.error(f"Cannot use the imported tokenizer: {md(exc)}", icon=":material/error:")
            st.stop()
    previous = previous_if_stopped(settings)
    if previous is not None:
        return previous
    if training.cancel_applies(settings) or training.failure(settings):  # nothing to fall back on: said above
        st.stop()
    key = training.settings_key(settings)
    tok = training.cached(key)
    if tok is None:
        try:
            if not training.shows_progress(settings.text, settings.spec):
                with st.spinner("Training…"):
                    tok = training.train(settings.text, settings.spec)
            else:
                tok = _train_with_progress(settings, key)
        except (ValueError, TypeError):  # remembered by training.train: the message, the previous view
            previous = previous_if_failed(settings)
            if previous is None:
                st.stop()
            return previous
    training.remember(settings)
    if not settings.text.strip():
        st.info("The text is only whitespace: every token below is spaces, tabs or newlines.", icon=":material/info:")
    if tok.training is not None and tok.training.stop_reason:  # one quiet line; the reason in full in the details
        asked = tok.training.requested_vocab_size
        st.caption(
            f":material/info: Training stopped at {tok.max_vocab_size:,} of the {asked:,} tokens asked for: "
            f"{view_of(tok.algorithm).stop_phrase}" + ("." if brief else " (see “How this tokenizer was trained”).")
        )
    return tok


def sidebar_tokenizer(settings: Settings) -> TrainedTokenizer:
    """The sidebar's tokenizer for a page that shows it beside others (Encode step by step).

    Unlike :func:`trained_or_stop` it never stops the page: the page's other
    columns go on whatever happens here.  After a Cancel it is the session's
    previous tokenizer, as on every page (:func:`previous_if_cancelled`:
    ``settings`` is switched to its settings, the notice and the "Train with
    these settings" button are shown).  Otherwise it is
    :func:`ui.training.for_settings` (trained without a progress bar, or the
    imported tokenizer).

    Args:
        settings: the sidebar's :class:`~ui.inputs.Settings` (may be switched in place).

    Returns:
        The tokenizer at its full trained size.

    Raises:
        ui.training.CancelledInThisSession: this session cancelled training on
            these settings and has no previous tokenizer (the notice is shown).
        ValueError, TypeError: from the engine, as :func:`ui.training.train`.
    """
    previous = previous_if_stopped(settings)
    if previous is not None:
        return previous
    try:
        return training.for_settings(settings)
    except training.CancelledInThisSession:
        raise
    except (ValueError, TypeError):
        previous = previous_if_failed(settings)
        if previous is None:
            raise
        return previous


def progress_panel(
    title: str,
    label: str,
    *,
    cancel_label: str,
    cancel_key: str,
    on_cancel: Callable[..., None],
    args: tuple = (),
    help: str = "",
):
    """A bordered panel with a title, a progress bar and a Cancel button (training's, Compare's measuring).

    Clicking Cancel reruns the page at the next update of the bar (Streamlit stops the run there), with
    ``on_cancel(*args)`` called first: it marks what was cancelled for the rerun to see.

    Args:
        title: the bold line above the bar (Markdown; escape user text).
        label: the bar's first label.
        cancel_label: the button's text.
        cancel_key: the button's widget key (:mod:`ui.state_keys`).
        on_cancel: the button's ``on_click`` callback.
        args: its arguments.
        help: the button's hover text.

    Returns:
        ``(box, bar)``: ``box.empty()`` removes the panel; ``bar.progress(fraction, text=...)`` moves the bar.
    """
    box = st.empty()
    with box.container(border=True):
        st.markdown(f"**{title}**")
        bar = st.progress(0.0, text=label)
        st.button(cancel_label, key=cancel_key, icon=":material/cancel:", on_click=on_cancel, args=args, help=help)
    return box, bar


def _train_with_progress(settings: Settings, key: training.TrainingKey) -> TrainedTokenizer:
    """Train with a progress bar and a Cancel button; both disappear when training ends."""
    box, bar = progress_panel(
        f"Training on {len(settings.text):,} characters…",
        "Counting pre-tokens…",
        cancel_label="Cancel training",
        cancel_key=sk.CANCEL_TRAINING,
        on_cancel=training.cancel,
        args=(key,),
        help="Stop training now and keep the previous tokenizer.",
    )
    shown = [-1]

    def progress(phase: str, done: int, total: int) -> None:
        # counting is the first 30 % of the bar, merging the rest (an estimate of their usual shares)
        if phase == "count":
            frac = 0.3 * done / total if total else 0.0
            label = f"Counting pre-tokens: chunk {done:,} of {total:,}" if total else "Counting pre-tokens…"
        else:
            frac = 0.3 + 0.7 * done / total if total else 1.0
            label = f"Merging: {done:,} of {total:,} merges"
        pct = int(frac * 100)
        if pct != shown[0]:  # at most about 100 updates; each one lets Streamlit deliver a Cancel click
            shown[0] = pct
            bar.progress(min(max(frac, 0.0), 1.0), text=label)

    try:
        return training.train(settings.text, settings.spec, progress=progress)
    finally:  # trained, failed or cancelled: the bar and its Cancel button go
        box.empty()


def previous_if_stopped(settings: Settings) -> TrainedTokenizer | None:
    """The session's previous tokenizer after a Cancel or a failed training, each with its notice.

    :func:`previous_if_cancelled`, else :func:`previous_if_failed`; ``None`` when neither applies or
    the session has no previous tokenizer.
    """
    previous = previous_if_cancelled(settings)
    return previous if previous is not None else previous_if_failed(settings)


MAX_TRAIN_SIZE = 100_000
"""The sidebar's largest "Vocabulary size to train" (:mod:`ui.inputs`)."""


def _train_at(size: int) -> None:
    """The "Train at N tokens" button's callback: the sidebar's size to train becomes ``size``."""
    st.session_state[sk.MAX_VOCAB] = size


def previous_if_failed(settings: Settings) -> TrainedTokenizer | None:
    """After a failed training: say why, offer the smallest size that works, go on with the previous tokenizer.

    When training the sidebar's settings failed in this session (:func:`ui.training.failure`), it
    draws the engine's message and, when the size asked for was too small for the text
    (:class:`~bpe_core.interface.VocabSizeTooSmall`), a button that sets the sidebar's size to train to
    the smallest that works (one click trains it).  Like :func:`previous_if_cancelled`, it switches
    ``settings`` in place to those of the session's previous tokenizer, which the page goes on showing:
    the view the user had stays, and no progress panel is left behind.

    Args:
        settings: the sidebar's :class:`~ui.inputs.Settings`.

    Returns:
        The previous tokenizer (full size), or ``None``: no failure (nothing drawn), or a failure and no
        previous tokenizer in this session (the message and button drawn, ``settings`` untouched).
    """
    failed = training.failure(settings)
    if failed is None:
        return None
    message, minimum = failed
    last_key, last_settings = training.last_trained()
    previous = training.cached(last_key)
    with st.container(border=True):
        st.error(f"Cannot train on this input: {md(message)}", icon=":material/error:")
        if minimum is not None and minimum <= MAX_TRAIN_SIZE:
            st.button(
                f"Train at {minimum:,} tokens, the smallest size that works",
                key=sk.TRAIN_AT_MINIMUM,
                icon=":material/play_arrow:",
                type="primary",
                on_click=_train_at,
                args=(minimum,),
                help="Set the sidebar's “Vocabulary size to train” to this size and train.",
            )
        if previous is not None:
            st.caption(
                f"Still showing the previous tokenizer, {md(previous.name)} with {previous.max_vocab_size:,} tokens, "
                f"on the text it was trained on ({md(last_settings.text_label)})."
            )
    if previous is None:
        return None
    for name, value in vars(last_settings).items():
        setattr(settings, name, value)
    return previous


def previous_if_cancelled(settings: Settings) -> TrainedTokenizer | None:
    """After a Cancel: say so, offer to train after all, and go on with the session's previous tokenizer.

    The one cancel fallback of every page (Playground, Merges and Insights
    through :func:`trained_or_stop`, Encode step by step through
    :func:`sidebar_tokenizer`, Compare directly).  When this session cancelled
    training on the sidebar's settings (:func:`ui.training.cancel_applies`),
    it draws a warning naming the cancelled text and the tokenizer still shown,
    with a "Train with these settings" button (:func:`ui.training.resume`),
    and switches ``settings`` in place to the settings the previous tokenizer
    was trained with, so that the page's texts, counts and labels all describe
    that tokenizer (the sidebar's widgets keep what the user chose).  Once
    switched, ``settings`` are no longer the cancelled ones, so calling this
    again in the same run does nothing; without a previous tokenizer they
    stay cancelled, so a page calls it once per run (the button has a fixed key).

    Args:
        settings: the sidebar's :class:`~ui.inputs.Settings`.

    Returns:
        The previous tokenizer (at its full size), or ``None``: no Cancel
        applies (nothing drawn, ``settings`` untouched), or this session has no
        previous tokenizer (the warning says that training was cancelled;
        ``settings`` untouched, and :func:`ui.training.train` refuses them).
    """
    if not training.cancel_applies(settings):
        return None
    last_key, last_settings = training.last_trained()
    previous = training.cached(last_key)
    note = f"Training on {md(settings.text_label)} was cancelled."
    if previous is not None:
        note += (
            f" Still showing the previous tokenizer, {md(previous.name)} with {previous.max_vocab_size:,} tokens, "
            f"on the text it was trained on ({md(last_settings.text_label)})."
        )
    with st.container(border=True):
        st.warning(note, icon=":material/cancel:")
        st.button(
            "Train with these settings",
            key=sk.RESUME_TRAINING,
            icon=":material/play_arrow:",
            on_click=training.resume,
            help="Start the training that was cancelled.",
        )
    if previous is None:
        return None
    for name, value in vars(last_settings).items():
        setattr(settings, name, value)
    return previous


def session_size(tok: TrainedTokenizer, key: str = sk.VOCAB_SIZE) -> int:
    """The shared vocabulary size in ``st.session_state[key]``, clamped to ``tok``'s range.

    It resets for a tokenizer it has not met: to a link's pending size (:mod:`ui.links`, once),
    else to the full size.  The server slider (:func:`vocab_slider`) and the live view share it.
    """
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    owner = sk.owner_key(key)
    if st.session_state.get(owner) != id(tok):
        st.session_state[owner] = id(tok)
        pending = st.session_state.pop(sk.PENDING_SIZE, None)  # a link's size (ui.links), once
        st.session_state[key] = hi if pending is None else min(max(pending, lo), hi)
    value = min(max(int(st.session_state.get(key, hi)), lo), hi)
    st.session_state[key] = value
    return value


def vocab_slider(tok: TrainedTokenizer, key: str = sk.VOCAB_SIZE) -> int:
    """The vocabulary-size slider over a trained tokenizer's sizes; returns the chosen size.

    The value is shared by every page (session state under ``key``); it resets to
    the full size whenever a different tokenizer is trained.
    """
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    session_size(tok, key)
    if lo == hi:
        st.caption(f"Vocabulary size: {hi} (no merges were learned, so there is nothing to slide).")
        return hi
    return st.slider(
        "Vocabulary size",
        min_value=lo,
        max_value=hi,
        key=key,
        persist_state="session",
        help=view_of(tok.algorithm).sizes_help(tok),
    )


def token_count(
    full: TrainedTokenizer,
    current: TrainedTokenizer,
    text: str,
    trained_on_text: bool = True,
) -> int:
    """Tokens of ``text`` under ``current``.

    When ``full`` was trained on ``text`` (``trained_on_text``; not for an
    imported tokenizer, whose training counted another text) the count is
    :meth:`~bpe_core.interface.TrainedTokenizer.training_text_tokens` when the
    tokenizer knows it without encoding (BPE: off the trace; WordPiece: from
    the training word counts); otherwise the text is encoded.
    """
    n = current.training_text_tokens() if trained_on_text else None
    return n if n is not None else len(current.encode(text))


def token_counts(
    text: str,
    full: TrainedTokenizer,
    current: TrainedTokenizer,
    trained_on_text: bool = True,
) -> dict[str, float]:
    """Draw the row of counts (tokens, characters, bytes, ratios) and return them (see :func:`token_count`)."""
    counts = basic_counts(text, token_count(full, current, text, trained_on_text))
    cols = st.columns(5)
    cols[0].metric(
        "Tokens",
        f"{counts['tokens']:,}",
        delta=versus_bytes(int(counts["tokens"]), int(counts["bytes"])),
        delta_color="off",
        delta_arrow="off",
        border=True,
        help="Tokens the whole text takes at this vocabulary size, and how much shorter that is than its bytes.",
    )
    cols[1].metric("Characters", f"{counts['characters']:,}", border=True)
    cols[2].metric("Bytes (UTF-8)", f"{counts['bytes']:,}", border=True)
    cols[3].metric("Bytes per token", f"{counts['bytes_per_token']:.2f}", border=True)
    same = counts["characters"] == counts["bytes"]
    cols[4].metric(
        "Characters per token",
        f"{counts['chars_per_token']:.2f}",
        delta=SAME_AS_BYTES if same else None,
        delta_color="off",
        delta_arrow="off",
        border=True,
    )
    return counts


SAME_AS_BYTES = "= bytes per token: every character is 1 byte"
"""The characters-per-token card's note when the text is all ASCII (one UTF-8 byte per character), so that the two
per-token cards show the same number (mirrored in ``ui/live_view/live.js``)."""


def versus_bytes(tokens: int, n_bytes: int) -> str:
    """The token count's note: how much shorter than the text's UTF-8 bytes (mirrored in ``ui/live_view/live.js``).

    >>> versus_bytes(1492, 3700), versus_bytes(3700, 3700), versus_bytes(3699, 3700), versus_bytes(3701, 3700)
    ('60% fewer than bytes', 'as many as bytes', '<1% fewer than bytes', '<1% more than bytes')
    """
    if not n_bytes or tokens == n_bytes:
        return "as many as bytes" if n_bytes else ""
    pct = round(abs(1 - tokens / n_bytes) * 100)
    return f"{pct if pct else '<1'}% {'fewer' if tokens < n_bytes else 'more'} than bytes"


def coloured_text(
    text: str,
    tok: TrainedTokenizer,
    *,
    show_whitespace: bool = True,
    total_tokens: int | None = None,
) -> None:
    """Draw ``text`` (a bounded prefix of it) with each token coloured, plus the legend.

    ``total_tokens`` is the whole text's token count, for the "showing the first N" note.
    """
    prefix = pretoken_prefix(text, MAX_DRAW_CHARS, tok.pattern, tuple(tok.special_tokens))
    spans = tok.token_spans(prefix)[:MAX_DRAW_TOKENS]
    merges = tok.vocab_size - tok.min_vocab_size  # the rank colours span this tokenizer's merges, first to last
    body = render.tokens_html(
        spans,
        show_whitespace=show_whitespace,
        total_tokens=total_tokens,
        text=prefix,
        max_rank=max(merges - 1, 0),
        rank_label=lambda i: view_of(tok.algorithm).rank_label(tok, i),
    )
    st.html(body)
    st.html(view_of(tok.algorithm).legend_html)


def training_details(tok: TrainedTokenizer) -> None:
    """An expander with what training did: pre-tokens, time, why it stopped."""
    info = tok.training
    if info is None:
        return
    split = view_of(tok.algorithm).split_note(tok)
    learned = view_of(tok.algorithm).trained_note(tok)
    with st.expander("How this tokenizer was trained"):
        st.markdown(
            f"- **{info.pretokens:,}** pre-tokens counted, **{info.unique_pretokens:,}** distinct\n"
            f"- **{info.special_occurrences:,}** special-token occurrences removed before counting\n"
            f"- {learned} (asked for {info.requested_vocab_size:,} tokens, got {tok.max_vocab_size:,})\n"
            f"- counting took {info.count_seconds * 1000:.1f} ms, training {info.merge_seconds * 1000:.1f} ms\n"
            f"- {split}" + (f"\n- stopped early: {info.stop_reason}" if info.stop_reason else "")
        )


def per_row(n: int) -> int:
    """Views per row for ``n`` views: all of them up to 3, else 3 (Streamlit stacks them on narrow screens).

    From 3 views on, a view added or removed after the others leaves every row above it as it was, so the
    browser keeps those columns instead of drawing them again: two rows of 2 for 4 views redrew all four at
    every Compare click from 3 to 4 (Chromium, English sample: "on" click median 490 -> 399 ms).
    """
    return min(max(n, 1), 3)
