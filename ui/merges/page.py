"""The Merges page's Streamlit glue: the cached history, the step controls and the fragment that draws a step."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from bpe_core.interface import TrainingSpec
from ui import links, render
from ui import state_keys as sk
from ui.inputs import Settings
from ui.limits import MAX_STEP_TOKENS
from ui.merges.card import card_html
from ui.merges.history import history_for
from ui.merges.model import MergeHistory
from ui.merges.playback import SPEEDS, Playback
from ui.merges.pruning import UnigramPruningHistory, pruning_card_html, pruning_figures
from ui.merges.tables import merge_table
from ui.merges.text import drawn_text, examples_html, step_spans, step_text_html
from ui.merges.why import why_panel
from ui.safe_text import md
from ui.training import TrainingKey, settings_key, train


@st.cache_resource(max_entries=4, show_spinner=False)
def cached_history(key: TrainingKey, _text: str, _spec: TrainingSpec, _imported: str | None = None) -> MergeHistory:
    """The merge history for training key ``key``; trains only if :func:`ui.training.train` has not."""
    tok = train(_text, _spec, _imported)
    return history_for(tok, _text)


IMPORTED_MERGES_SHOWN = 12
"""Merges an imported tokenizer's note lists (the file's first ones, in order)."""


def imported_note(tok) -> None:
    """What the Merges page can say about a tokenizer imported from a file, which holds no training to replay.

    The file has the vocabulary (and a BPE's merges, in order) but not training's counts or text: the
    note says so, lists the first merges when the tokenizer has any (its
    :meth:`~bpe_core.interface.TrainedTokenizer.learned_tokens` and ``merged_parts``), and points to the
    sidebar's "Train on the text" for a training to step through.
    """
    learned = tok.learned_tokens()
    parts = tok.merged_parts()
    st.info(
        f"**{md(tok.name)}** comes from a file. The file holds the finished vocabulary of "
        f"{tok.vocab_size:,} tokens but not the training that made it (the text, and the counts at each "
        "step), so there is no training to step through here. To watch one, choose *Train on the text* in "
        "the sidebar; the other pages work with this tokenizer as it is.",
        icon=":material/info:",
    )
    rows = [(rank, tid) for rank, tid in learned if tid in parts][:IMPORTED_MERGES_SHOWN]
    if rows:
        st.caption(f"What the file does say: the order of its {len(learned):,} merges. The first {len(rows)}:")
        st.dataframe(
            [
                {
                    "Rank": rank,
                    "Merge": f"{render.shown_token(tok, parts[tid][0])} + {render.shown_token(tok, parts[tid][1])}",
                    "Token": render.shown_token(tok, tid),
                    "Id": tid,
                }
                for rank, tid in rows
            ],
            hide_index=True,
        )


STEP_FIGURES_KEPT = 16
"""Steps whose charts each history keeps (:func:`step_figures`)."""

_STEP_FIGURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STEP_FIGURES_LOCK = threading.Lock()


def step_figures(history: MergeHistory, k: int, build: Callable[[MergeHistory, int], list[go.Figure]]) -> list:
    """``build(history, k)``: the charts of step ``k``, built once per history and step, shared by the sessions.

    A history is shared by every session showing the same tokenizer (:func:`cached_history`), and most of
    them look at the same steps (the first, a shared link's); the figures of the latest
    :data:`STEP_FIGURES_KEPT` steps are kept with it and go with it.  ``st.plotly_chart`` copies a
    figure and never changes it.
    """
    with _STEP_FIGURES_LOCK:
        kept = _STEP_FIGURES.setdefault(history, OrderedDict())
        figs = kept.get(k)
        if figs is not None:
            kept.move_to_end(k)
            return figs
    figs = build(history, k)
    with _STEP_FIGURES_LOCK:
        kept[k] = figs
        while len(kept) > STEP_FIGURES_KEPT:
            kept.popitem(last=False)
    return figs


def _merge_figures(history: MergeHistory, k: int) -> list[go.Figure]:
    return history.figures(k)


def history_or_stop(settings: Settings) -> MergeHistory:
    """The merge history for the sidebar's settings, or a message in the page and ``st.stop()``.

    An imported tokenizer has no training to replay: :func:`imported_note` says what the file holds.
    """
    try:
        history = cached_history(settings_key(settings), settings.text, settings.spec, settings.imported)
    except NotImplementedError as exc:
        st.info(md(exc), icon=":material/info:")
        st.stop()
    except (ValueError, TypeError) as exc:
        if settings.imported is not None:  # expected: a file holds no training
            imported_note(train(settings.text, settings.spec, settings.imported))
        else:
            st.error(f"Cannot replay the merges: {md(exc)}", icon=":material/error:")
        st.stop()
    if history.n_steps == 0:
        what = "No merge was learned" if history.story == "merges" else f"No {history.step_noun} ran"
        st.info(f"{what} from this text, so there is nothing to step through.", icon=":material/info:")
        st.stop()
    return history


def playback(history: MergeHistory) -> Playback:
    """The page's :class:`~ui.merges.playback.Playback` over this session's state."""
    return Playback(st.session_state, history.n_steps)


def reset_for(history: MergeHistory) -> None:
    """Reset the step to 1 (or a shared link's step) and stop playing when a different history is shown."""
    p = playback(history)
    linked = st.session_state.pop(sk.PENDING_STEP, None) if p.is_new_owner(id(history)) else None
    p.reset_for(id(history), linked)  # a step from a shared link, once


def advance_if_playing(history: MergeHistory) -> None:
    """On a play tick (a run not caused by a control), move the step on; stop at the end (:meth:`Playback.tick`)."""
    p = playback(history)
    if p.take_full_rerun():
        st.rerun()  # keeps the touched flag, so the full run that follows does not advance
    p.tick()


_CONTROL_WORDS: dict[str, dict[str, str]] = {
    "merges": {
        "first": "Step 0: no merge yet",
        "prev": "One merge back",
        "play": "Advance through the merges by themselves at the chosen speed",
        "next": "One merge forward",
        "last": "Step {n:,}: every merge applied",
        "speed": "Play speed (merges per second)",
        "slider": "Merge step",
        "slider_help": "Step k shows the text after the first k merges, with merge #k highlighted.",
    },
    "pruning": {
        "first": "Step 0: the trained vocabulary",
        "prev": "One pruning round back",
        "play": "Advance through the pruning rounds by themselves at the chosen speed",
        "next": "One pruning round forward",
        "last": "Step {n:,}: only the characters left",
        "speed": "Play speed (rounds per second)",
        "slider": "Pruning round",
        "slider_help": (
            "Step k shows the vocabulary after k pruning rounds (step 0: the trained vocabulary): each round "
            "removes the pieces whose loss the text would miss least, then re-estimates the scores."
        ),
    },
}
"""The controls' words for each story a history tells (the same keys: one story is on the page at a time)."""


def controls(history: MergeHistory) -> int:
    """Draw first/previous/play/next/last, the speed and the step slider, in the words of the history's story."""
    words = _CONTROL_WORDS[history.story]
    p = playback(history)
    n, playing, k = history.n_steps, p.playing, p.step
    cols = st.columns([1, 1, 1.25, 1, 1, 2.6], vertical_alignment="bottom")
    cols[0].button(
        "First", key=sk.MERGE_FIRST, icon=":material/first_page:", on_click=p.go, kwargs={"to": 0},
        disabled=k == 0, width="stretch", help=words["first"],
    )  # fmt: skip
    cols[1].button(
        "Prev", key=sk.MERGE_PREV, icon=":material/chevron_left:", on_click=p.go, args=(-1,),
        disabled=k == 0, width="stretch", help=words["prev"],
    )  # fmt: skip
    cols[2].button(
        "Pause" if playing else "Play", key=sk.MERGE_PLAY,
        icon=":material/pause:" if playing else ":material/play_arrow:",
        type="primary", on_click=p.toggle, width="stretch", help=words["play"],
    )  # fmt: skip
    cols[3].button(
        "Next", key=sk.MERGE_NEXT, icon=":material/chevron_right:", on_click=p.go, args=(1,),
        disabled=k >= n, width="stretch", help=words["next"],
    )  # fmt: skip
    cols[4].button(
        "Last", key=sk.MERGE_LAST, icon=":material/last_page:", on_click=p.go, kwargs={"to": n},
        disabled=k >= n, width="stretch", help=words["last"].format(n=n),
    )  # fmt: skip
    cols[5].select_slider(
        words["speed"], options=list(SPEEDS), key=sk.MERGE_SPEED, on_change=p.speed_changed, persist_state="session",
    )  # fmt: skip
    return st.slider(
        words["slider"], min_value=0, max_value=n, key=sk.MERGE_STEP, persist_state="session",
        help=words["slider_help"],
    )  # fmt: skip


def step_view(history: MergeHistory, text: str) -> None:
    """Everything that depends on the step: controls, card, text, charts, candidates, table.

    Runs inside a fragment (see :func:`stepper`).
    """
    advance_if_playing(history)
    k = controls(history)
    p = playback(history)
    p.show(k)
    playing = p.playing

    spans = step_spans(history, k, text)
    left, right = st.columns([2, 3], gap="large")
    with left:
        card = history.card(k)
        st.html(card_html(card, history.tokens_at(0), history.unit))
        gaps = None if history.covers_text else drawn_text(history, text)
        examples = examples_html(spans, history.highlight(k), text=gaps)
        if examples:
            st.html(examples)
        figs = step_figures(history, k, _merge_figures)
        st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
    with right:
        body, occurrences = step_text_html(history, k, text, spans=spans)
        if k:
            st.caption(
                f"The text after {k:,} merge{'s' * (k != 1)}{history.trainer_view_note}. Highlighted: the "
                f"{occurrences:,} token{'s' * (occurrences != 1)} made by merge #{k} (a red seam marks where the two "
                "halves met); everything else is dimmed." + history.pieces_note
            )
        else:
            st.caption(history.step_zero_note)
        st.html(body)
    w1, w2 = st.columns(2, gap="large")
    with w1:
        st.subheader("Why this pair?", divider="gray")
        why_panel(history, k, playing)
    with w2:
        st.plotly_chart(figs[1], key=sk.MERGE_FIG_TOKENS, config={"displayModeBar": False})
        st.plotly_chart(figs[2], key=sk.MERGE_FIG_LENGTHS, config={"displayModeBar": False})
    st.subheader("All merges", divider="gray")
    merge_table(history, k)


def stepper(history: MergeHistory, text: str) -> None:
    """The step control and everything it drives, as a fragment that ticks while playing."""
    reset_for(history)
    run_every = playback(history).interval
    draw = pruning_step_view if history.story == "pruning" else step_view

    @st.fragment(run_every=run_every)
    def _fragment() -> None:
        draw(history, text)
        links.publish()  # a fragment's run does not reach app.py's publish: the link follows the step here

    _fragment()


def pruning_step_view(history: UnigramPruningHistory, text: str) -> None:
    """Unigram's pruning story at the chosen round: card, the text before and after, charts, removed and kept pieces.

    Runs inside a fragment (see :func:`stepper`).
    """
    advance_if_playing(history)
    k = controls(history)
    playback(history).show(k)
    prefix = drawn_text(history, text)
    figs = step_figures(history, k, pruning_figures)
    left, right = st.columns([2, 3], gap="large")
    with left:
        st.html(pruning_card_html(history, k))
        st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
    with right:
        after = history.view(k).token_spans(prefix)
        if k:
            before = history.view(k - 1).token_spans(prefix)
            marked = history.highlight(k)
            hits = sum(1 for s in before if s.id in marked)
            st.caption(
                f"Before round {history.trace[k - 1].round}: {hits:,} token{'s' * (hits != 1)} of the drawn text "
                "are pieces this round removes (highlighted)."
            )
            st.html(render.tokens_html(before[:MAX_STEP_TOKENS], highlight=marked, text=prefix))
            st.caption(f"After it ({history.sizes[k]:,} tokens of vocabulary): the same text re-segmented.")
        else:
            st.caption(history.step_zero_note)
        st.html(render.tokens_html(after[:MAX_STEP_TOKENS], text=prefix))
        if len(prefix) < len(text):
            st.caption(f"Showing the first {len(prefix):,} of {len(text):,} characters; every count covers all of it.")
    _pruning_columns(history, k, figs, with_loss=False)


def _pruning_columns(history: UnigramPruningHistory, k: int, figs: list, *, with_loss: bool) -> None:
    """Round ``k``'s charts and tables in two columns, then the table of all rounds.

    Left: the loss chart (``with_loss``; the server-drawn view has it beside the text), the loss increases of
    the pieces round ``k`` removed and their table; right: tokens against vocabulary size and the pieces kept.
    """
    w1, w2 = st.columns(2, gap="large")
    with w1:
        if with_loss:
            st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
        st.plotly_chart(figs[2], key=sk.MERGE_FIG_LENGTHS, config={"displayModeBar": False})
        if k:
            st.markdown(f"**Removed by round {history.trace[k - 1].round}** (cheapest first)")
            st.dataframe(history.removed_table(k), hide_index=True, width="stretch", height=240)
    with w2:
        st.plotly_chart(figs[1], key=sk.MERGE_FIG_TOKENS, config={"displayModeBar": False})
        st.markdown(f"**Kept after step {k:,}** ({history.sizes[k]:,} tokens of vocabulary, highest score first)")
        st.dataframe(history.kept_table(k), hide_index=True, width="stretch", height=240)
    st.subheader("All pruning rounds", divider="gray")
    st.dataframe(history.table(), hide_index=True, width="stretch")


def merge_panels(history: MergeHistory, k: int) -> None:
    """Under the browser's player (:func:`ui.live_view.merges_player`), a merge story's panels at step ``k``.

    Why this pair, the two charts, and the table of all merges.
    """
    # the candidates table needs ~400 px: at 1280 px two equal columns with a large gap leave it 376
    w1, w2 = st.columns([6, 5], gap="medium")
    with w1:
        st.subheader("Why this pair?", divider="gray")
        why_panel(history, k, False)
    with w2:
        figs = step_figures(history, k, _merge_figures)
        st.plotly_chart(figs[0], key=sk.MERGE_FIG_COUNTS, config={"displayModeBar": False})
        st.plotly_chart(figs[1], key=sk.MERGE_FIG_TOKENS, config={"displayModeBar": False})
    st.subheader("All merges", divider="gray")
    merge_table(history, k)


def pruning_panels(history: UnigramPruningHistory, k: int) -> None:
    """Under the browser's player, Unigram's pruning panels at round ``k`` (as :func:`pruning_step_view` draws them).

    The loss, tokens and loss-increase charts (each marking step ``k``), the pieces round ``k`` removed and
    those kept, and the table of all rounds; the card and the text are the player's.
    """
    _pruning_columns(history, k, step_figures(history, k, pruning_figures), with_loss=True)


_PLAYER_PANELS = {"merges": merge_panels, "pruning": pruning_panels}
"""The story a history tells (its ``story``) -> the server's panels under the browser's player."""


def player_panels(history: MergeHistory, k: int) -> None:
    """The server's panels under the browser's player at step ``k``, in the history's story."""
    _PLAYER_PANELS[history.story](history, k)
