"""The "Encode step by step" page's building blocks: tokenizers to compare, and steps -> HTML.

The steps come from the tokenizer's own
:meth:`~bpe_core.interface.Tokenizer.encode_steps`: byte-level BPE (trained, and
every tiktoken-form production encoding: GPT-2, cl100k, o200k, Llama 3/4,
Tekken) gives one line per merge in rank order; Mistral v1's SentencePiece its
own merges by score and then its byte-fallback steps; WordPiece one line per
greedy longest-match decision, whose missed candidates
(:class:`bpe_core.wordpiece.trace.GreedyStep`) are drawn struck out; Unigram
each word's lattice (:mod:`ui.lattice_view`, through its
:attr:`ui.algorithms.AlgorithmView.steps_html`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import streamlit as st

from bpe_core import GreedyStep, PieceSteps
from bpe_core.interface import Tokenizer, TrainedTokenizer
from bpe_core.production.encodings import EncodingUnavailable
from bpe_core.production.registry import DEFAULT_PRODUCTION, PRODUCTION, load_production
from ui import render, training, view
from ui.algorithms import view_of
from ui.limits import STEP_LINES, STEP_TRIED
from ui.render import visible_text
from ui.safe_text import md
from ui.training import CancelledInThisSession

ChipColour = Callable[[int, int], str | None]
"""``(token id, position in its line) -> background colour`` of a chip, or ``None`` for the default."""

MAX_WORD_CHARS = 200
"""Longest text the page encodes step by step (characters)."""

PRODUCTION_KEYS: tuple[str, ...] = tuple(PRODUCTION)
"""Production encodings offered, by :data:`bpe_core.production.registry.PRODUCTION` key (every registered one)."""

DEFAULT_CHOICE = ("trained", *DEFAULT_PRODUCTION)
"""What the page shows first: the tokenizer trained on your text, GPT-2 and cl100k."""


@st.cache_resource(max_entries=8, show_spinner="Loading the production encoding…")
def production_tokenizer(key: str) -> Tokenizer:
    """The production tokenizer ``key`` (:func:`bpe_core.production.registry.load_production`, loaded once per process).

    Its :meth:`~bpe_core.interface.Tokenizer.encode_steps` gives merge-by-merge
    steps for the tiktoken-form encodings and SentencePiece's own pieces and
    byte-fallback steps for Mistral v1.

    Raises:
        EncodingUnavailable: its files cannot be had offline (one-line message; ``details``, ``how_to_add``).
        ValueError: a file fails its sha256 check.
    """
    return load_production(key)


def production_or_problem(key: str) -> tuple[Tokenizer | None, EncodingUnavailable | str | None]:
    """``(tokenizer, None)``, or ``(None, the EncodingUnavailable)``, or ``(None, another error's one line)``."""
    try:
        return production_tokenizer(key), None
    except EncodingUnavailable as exc:
        return None, exc
    except (ValueError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def rank_top(tokenizer: Tokenizer) -> int:
    """The ``"rank"`` colour scale's top for a production tokenizer: its merges (tokens beyond bytes and specials)."""
    return max(tokenizer.vocab_size - len(tokenizer.special_tokens) - 257, 0)


def trained_or_problem(settings) -> tuple[TrainedTokenizer | None, str | None]:
    """The "Trained on your text" column's tokenizer at the vocabulary slider's size, or why there is none.

    The tokenizer is :func:`ui.view.sidebar_tokenizer`'s: after a Cancel, the
    session's previous tokenizer (``settings`` switched to its settings, the
    cancel notice and "Train with these settings" button drawn), as on every
    page.  The slider is drawn when there is a tokenizer.

    Args:
        settings: the sidebar's :class:`~ui.inputs.Settings`.

    Returns:
        ``(tokenizer, None)``, or ``(None, message)`` for the column: the
        sidebar's input problem, a cancelled training with no previous
        tokenizer, or the engine's error.
    """
    if settings.problem:
        return None, settings.problem
    try:
        full = view.sidebar_tokenizer(settings)
    except CancelledInThisSession as exc:
        return None, f"Not trained: {exc}."
    except (ValueError, TypeError) as exc:  # a failure's message and button are drawn above the columns
        if training.failure(settings):
            return None, "Not trained: see the message above."
        return None, f"Cannot train on this input: {exc}"
    return full.with_vocab_size(view.vocab_slider(full)), None


STEPS_CSS = """
<style>
.enc-steps { font-size: 14px; }
.enc-piece { border: 1px solid rgba(128,128,128,.28); border-radius: 8px; padding: 8px 10px; margin-bottom: 10px;
  background: rgba(128,128,128,.03); }
.enc-piece .head { font-size: 12px; opacity: .7; margin-bottom: 4px; }
.enc-piece.flat { display: flex; align-items: center; flex-wrap: wrap; gap: 8px; padding: 5px 10px; }
.enc-piece.flat .head { margin: 0; }
.enc-piece.flat .what { font-size: 12px; opacity: .65; }
.enc-line { padding: 4px 0 5px 0; border-top: 1px dashed rgba(128,128,128,.22); }
.enc-line .what { display: block; font-size: 12px; opacity: .75; margin-bottom: 3px; overflow-wrap: anywhere; }
.enc-line .toks { display: flex; flex-wrap: wrap; gap: 3px; }
.enc-tok { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 14px; white-space: pre;
  background: #a0c4ff; color: #1b1b1f; border-radius: 4px; padding: 1px 4px; }
.enc-tok.new { background: #ffd166; outline: 2px solid #d1495b; font-weight: 600; }
.enc-tok.special { background: #3d3d4a; color: #fafafa; }
.enc-tok .ws { opacity: .45; }
.enc-miss { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; white-space: pre;
  text-decoration: line-through; opacity: .6; border: 1px dashed rgba(128,128,128,.5); border-radius: 4px;
  padding: 0 3px; }
.enc-line .tried { display: flex; flex-wrap: wrap; gap: 3px; margin-bottom: 3px; align-items: center; }
.enc-line .tried .lead { font-size: 12px; opacity: .65; }
.enc-title { font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; margin-bottom: .5rem; }
.enc-final { font-size: 13px; margin: 4px 0 12px 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.enc-final code { font-size: 12px; }
</style>
"""
"""Style sheet for :func:`steps_html`."""


def _chip(label: str, classes: str, background: str | None = None) -> str:
    style = f' style="background:{background}"' if background else ""
    return f'<span class="enc-tok{classes}"{style}>{visible_text(label)}</span>'


def chip_colours(tokenizer: Tokenizer, mode: str, top: int) -> ChipColour:
    """Chip backgrounds for a colour mode (see :func:`ui.render.token_colours`).

    ``"cycle"`` keeps this view's own scheme (one colour, the tokens a step
    made in amber), ``"id"`` gives each id its stable colour and ``"rank"`` the
    merge-rank gradient up to ``top``.  Special tokens keep their dark chip in
    every mode.

    Args:
        tokenizer: the tokenizer whose steps are drawn (its ``rank_of``).
        mode: a key of :data:`ui.render.COLOUR_MODES`.
        top: the largest merge rank of the scale (a trained tokenizer's
            ``vocab_size - min_vocab_size - 1``; :func:`rank_top` for a production one).
    """
    if mode == "id":
        return lambda token_id, _pos: render.id_colour(token_id)
    if mode == "rank":
        return lambda token_id, _pos: render.rank_colour(tokenizer.rank_of(token_id), top)
    return lambda _id, _pos: None


def steps_html(pieces: Sequence[PieceSteps], max_lines: int = STEP_LINES, colour: ChipColour | None = None) -> str:
    """HTML of step-by-step encoding: one box per pre-token, one line per step; all text escaped.

    Args:
        pieces: :meth:`~bpe_core.interface.Tokenizer.encode_steps` output.
        max_lines: stop drawing after this many lines (a note says so).
        colour: chip backgrounds (:func:`chip_colours`); default this view's own scheme.

    Returns:
        An HTML string including :data:`STEPS_CSS`.
    """
    colour = colour or (lambda _id, _pos: None)
    out = [STEPS_CSS, '<div class="enc-steps">']
    lines = 0
    noun = "word" if any(isinstance(step, GreedyStep) for p in pieces for step in p.steps) else "pre-token"
    for n, piece in enumerate(pieces, 1):
        if lines >= max_lines:
            out.append(f'<div class="enc-final">… {len(pieces) - n + 1:,} more {noun}s not drawn.</div>')
            break
        kind = "special token" if piece.is_special else f"{noun} {n}"
        if len(piece.steps) == 1:  # nothing happens to it: one compact line
            step = piece.steps[0]
            extra = " special" if piece.is_special else ""
            chips = "".join(
                _chip(label, extra, None if piece.is_special else colour(i, k))
                for k, (i, label) in enumerate(zip(step.ids, step.labels, strict=True))
            )
            out.append(
                f'<div class="enc-piece flat"><span class="head">{kind}</span><span class="toks">{chips}</span>'
                f'<span class="what">{html.escape(step.note)}{"" if piece.is_special else ", no merge applies"}'
                "</span></div>"
            )
            lines += 1
            continue
        out.append(f'<div class="enc-piece"><div class="head">{kind}: {visible_text(piece.text)}</div>')
        for step in piece.steps:
            marked = set(step.marked)
            extra = " special" if piece.is_special else ""
            chips = "".join(
                _chip(label, extra + (" new" if k in marked else ""), None if piece.is_special else colour(i, k))
                for k, (i, label) in enumerate(zip(step.ids, step.labels, strict=True))
            )
            tried = ""
            if isinstance(step, GreedyStep) and step.tried:
                misses = "".join(f'<span class="enc-miss">{visible_text(t)}</span>' for t in step.tried[:STEP_TRIED])
                extra = len(step.tried) - STEP_TRIED
                more = f'<span class="lead">… {extra} more</span>' if extra > 0 else ""
                tried = f'<span class="tried"><span class="lead">not in the vocabulary:</span>{misses}{more}</span>'
            out.append(
                f'<div class="enc-line"><span class="what">{html.escape(step.note)}</span>{tried}'
                f'<span class="toks">{chips}</span></div>'
            )
            lines += 1
        out.append("</div>")
    out.append("</div>")
    return "".join(out)


def final_html(pieces: Sequence[PieceSteps]) -> str:
    """One line: how many tokens, and their ids."""
    ids = [i for p in pieces for i in p.ids]
    shown = ", ".join(str(i) for i in ids[:60]) + (", …" if len(ids) > 60 else "")
    return (  # one line in every column (the boxes below stay aligned), the whole list on hover
        f'{STEPS_CSS}<div class="enc-final" title="ids [{shown}]">'
        f"<b>{len(ids):,} token{'s' * (len(ids) != 1)}</b> · ids "
        f"<code>[{shown}]</code></div>"
    )


def encoder_column(
    title: str, tokenizer: Tokenizer, text: str, *, noun: str, top: int, draw: Callable[..., str] | None = None
) -> None:
    """Draw one tokenizer's step-by-step encoding of ``text`` (or why it cannot).

    Args:
        title: the column's title.
        tokenizer: any tokenizer with :meth:`~bpe_core.interface.Tokenizer.encode_steps`.
        text: the word or phrase.
        noun: what one box is (``"pre-token"``, ``"word"``), for the caption.
        top: the ``"rank"`` colour scale's top (see :func:`chip_colours`).
        draw: ``draw(steps, colour)``: the drawing of steps that are not merge lines (Unigram's
            lattices: :attr:`ui.algorithms.AlgorithmView.steps_html`); ``None`` for :func:`steps_html`.
    """
    # one line, cut with an ellipsis (the whole title on hover): the columns' boxes start at one height
    st.html(f'{STEPS_CSS}<div class="enc-title" title="{html.escape(title)}">{html.escape(title)}</div>')
    try:
        pieces = tokenizer.encode_steps(text)
    except TypeError as exc:
        st.info(md(exc), icon=":material/info:")
        return
    except ValueError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    if draw is not None:  # steps that are not merge lines (Unigram: each word's lattice)
        st.caption(f"{len(pieces):,} {noun}{'s' * (len(pieces) != 1)}")
        st.html(final_html(pieces))
        st.html(draw(pieces, chip_colours(tokenizer, render.session_colour_mode(), top)))
        return
    merges = sum(p.merges_applied for p in pieces if not p.is_special)
    st.caption(f"{len(pieces):,} {noun}{'s' * (len(pieces) != 1)}, {merges:,} step{'s' * (merges != 1)}")
    st.html(final_html(pieces))
    st.html(steps_html(pieces, colour=chip_colours(tokenizer, render.session_colour_mode(), top)))


def trained_column(title: str, tokenizer: TrainedTokenizer, text: str) -> None:
    """:func:`encoder_column` for the tokenizer trained on the sidebar's text."""
    top = max(tokenizer.vocab_size - tokenizer.min_vocab_size - 1, 0)
    view = view_of(tokenizer.algorithm)
    encoder_column(title, tokenizer, text, noun=view.piece_noun, top=top, draw=view.steps_html)


def production_column(key: str, tokenizer: Tokenizer, text: str) -> None:
    """:func:`encoder_column` for a production tokenizer, drawn as the registered algorithm its encoding follows.

    Byte-level BPE merge by merge, SentencePiece's units and byte fallback,
    BERT's greedy longest match word by word, XLM-R's Viterbi lattices
    (:attr:`ui.algorithms.AlgorithmView.steps_html` of its ``algorithm``).
    """
    title = f"{production_label(key)} · {tokenizer.vocab_size:,} tokens"
    algorithm = view_of(tokenizer.algorithm)
    noun = algorithm.piece_noun
    if noun == "pre-token" and not tokenizer.is_byte_level:
        noun = "unit"  # SentencePiece-style BPE (Mistral v1, Gemma 4): each space joined to the word after it
    encoder_column(title, tokenizer, text, noun=noun, top=rank_top(tokenizer), draw=algorithm.steps_html)


def production_label(key: str) -> str:
    """Menu label of a production encoding: ``"GPT-2 (r50k_base)"``, ``"Llama 3"``."""
    return PRODUCTION[key].label


def choice_label(key: str) -> str:
    """Menu label of a choice of the page: the trained tokenizer, or ``"OpenAI · GPT-4o (o200k_base)"``."""
    if key == "trained":
        return "Trained on your text"
    return f"{PRODUCTION[key].family} · {PRODUCTION[key].label}"
