"""The Insights page's views, one function per tab.

Token genealogy, vocabulary diff, held-out evaluation, per-script breakdown,
pre-tokenizer playground, under-used tokens.

The numbers come from :mod:`bpe_core.analysis.insights` and :mod:`bpe_core.analysis.metrics`;
the production encodings come through the tokenizer catalogue (:mod:`ui.catalogue`), so they
load and fail the same way everywhere.  Each ``*_view`` function draws one tab.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bpe_core import get_algorithm
from bpe_core.analysis.insights import (
    MergeTree,
    TooFewDocuments,
    heldout_split,
    merge_set_diff,
    merge_tree,
    pretoken_chunks,
    production_ranks_of,
    token_occurrences,
    tree_rows,
    unused_tokens,
    vocab_diff,
)
from bpe_core.analysis.metrics import TextMetrics
from bpe_core.analysis.scripts import ScriptRow, script_breakdown
from bpe_core.interface import Tokenizer, TrainedTokenizer
from bpe_core.pretokenize import (
    PATTERN_LABELS,
    PATTERNS,
    compile_pattern,
    count_pretokens,
    pretoken_prefix,
    shared_pretoken_prefix,
    tokenizer_split,
)
from bpe_core.production.registry import PRODUCTION, production_keys_of, production_token_ids
from ui import catalogue, render
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.figures_table import FigureColumn, figures_table_html
from ui.inputs import Settings
from ui.limits import CHUNK_DRAW_CHARS, EXAMPLES_CHARS
from ui.merges.text import examples_html
from ui.render import readable
from ui.safe_text import md
from ui.safe_text import plotly as plotly_text
from ui.training import train, view_key

DEFAULT_COMPARED = ("gpt2", "cl100k_base", "o200k_base")
"""Production encodings the views compare with until the page's picker says otherwise (:func:`production_picker`)."""

SCRIPT_MAX_CHARS = 200_000
"""The per-script breakdown covers at most this many characters of the text."""

PATTERN_BASES = ("gpt2", "cl100k", "o200k", "bert")
"""Patterns the playground can start from."""

Trained = TrainedTokenizer

NONE = "—"
"""What a table cell shows where there is no value (a rank a token does not have), instead of ``None``."""


def tok_key(settings: Settings, size: int, trained_on: str | None = None) -> str:
    """The cache key of the sidebar's tokenizer at ``size``, or of one trained with its spec on ``trained_on``.

    See :func:`ui.training.view_key` (the one key builder).
    """
    if trained_on is None:
        return view_key(settings.text, settings.spec, settings.imported, size)
    return view_key(trained_on, settings.spec, None, size)


def default_production(algorithm: str) -> list[str]:
    """What the Insights page compares a tokenizer of ``algorithm`` with until its picker says otherwise.

    :data:`DEFAULT_COMPARED` of the same algorithm, else every production
    tokenizer of it (from the registrations: BERT for WordPiece, XLM-R for Unigram).
    """
    own = production_keys_of(algorithm)
    return [k for k in DEFAULT_COMPARED if k in own] or own


def comparable(tok: Tokenizer, keys: list[str]) -> list[str]:
    """The production tokenizers among ``keys`` whose tokens compare with ``tok``'s as written.

    A byte-level tokenizer's tokens are bytes: every production vocabulary can
    say whether it has them (by the bytes its pieces stand for).  Other tokens
    are strings with their algorithm's marks (``##ing``, ``▁the``): only a
    production vocabulary of the same algorithm writes them so.
    """
    same = production_keys_of(tok.algorithm)
    return [k for k in keys if tok.is_byte_level or k in same]


def chosen_production(algorithm: str = "bpe") -> list[str]:
    """The production encodings chosen on the Insights page (:func:`default_production` until then), registry order."""
    chosen = st.session_state.get(sk.INS_PRODUCTION)
    chosen = default_production(algorithm) if chosen is None else chosen
    return [k for k in PRODUCTION if k in chosen]


def production_picker(algorithm: str = "bpe") -> list[str]:
    """The Insights page's choice of production encodings (OpenAI, Meta, Mistral) to compare with; returns the keys.

    The genealogy's "in the production encodings", the vocabulary diff, the
    held-out table and the per-script breakdown use them (and so does the
    Playground's token dialog).
    """
    if sk.INS_PRODUCTION not in st.session_state:
        st.session_state[sk.INS_PRODUCTION] = default_production(algorithm)
    st.pills(
        "Production encodings to compare with",
        list(PRODUCTION),
        selection_mode="multi",
        format_func=lambda k: PRODUCTION[k].label,
        key=sk.INS_PRODUCTION,
        persist_state="session",
        help="Loaded offline from verified files: "
        + " · ".join(f"{spec.label} ({spec.family})" for spec in PRODUCTION.values()),
        wrap=True,
    )
    return chosen_production(algorithm)


def loaded_production(settings: Settings) -> dict[str, catalogue.Built]:
    """The chosen production encodings that load (the catalogue's loader); the unavailable ones said in one line."""
    entries = [catalogue.production_entry(key) for key in chosen_production(settings.spec.algorithm)]
    out: dict[str, catalogue.Built] = {}
    columns = catalogue.build_columns(entries, settings, None)
    catalogue.column_problems(columns)
    for col in columns:
        if col.built is not None:
            out[col.entry.key] = col.built
    return out


def _label(key: str) -> str:
    return PRODUCTION[key].label if key in PRODUCTION else key


@st.cache_data(max_entries=16, show_spinner=False)
def _counts(cache_key: str, text: str, _tok: Tokenizer) -> dict[int, int]:
    """``{token id: occurrences}`` of ``text`` encoded (through tiktoken when that is exact and the text long)."""
    return dict(token_occurrences(catalogue.encode_fast(catalogue.Built(_tok, "", cache_key), text)))


# ---------------------------------------------------------------------------
# token genealogy


def token_label(tok: Trained, token_id: int) -> str:
    """Menu text of a learned token: readable form, its rank in the algorithm's words and id.

    For example ``"ing  ·  merge #12  ·  id 271"`` (BPE, WordPiece) or ``"▁the  ·  piece #3, score -3.20  ·  id 7"``
    (Unigram): the rank's words come from ``ui.algorithms.view_of(tok.algorithm).rank_label``.
    """
    rank = view_of(tok.algorithm).rank_label(tok, token_id)
    return f"{render.shown_token(tok, token_id)}  ·  {rank}  ·  id {token_id}"


def tree_html(tree: MergeTree) -> str:
    """The merge tree as an indented list: each node's token, its merge rank or 'byte', children below it."""
    lines = []
    for row in tree_rows(tree):
        what = f"merge #{row.rank + 1}" if row.rank is not None else "base token"
        token = render.visible_text(row.display)
        lines.append(
            f'<div style="margin-left:{row.depth * 1.6}em;line-height:1.9">'
            f'<span class="tk" style="background:{render.id_colour(row.id)}">{token}</span> '
            f'<span style="opacity:.7;font-size:13px">id {row.id} · {what}</span></div>'
        )
    return '<div class="bpe-view" style="max-height:420px">' + "".join(lines) + "</div>"


def tree_figure(tree: MergeTree) -> go.Figure:
    """A Plotly icicle of the merge tree: the token on top, its two parts below, down to bytes.

    Each box is one node; its label is the token and its merge rank; a box's
    width is the token's byte length, so the bottom row is one box per byte.
    """
    rows = tree_rows(tree)
    fig = go.Figure(
        go.Icicle(
            ids=[r.node for r in rows],
            parents=[r.parent for r in rows],
            labels=[
                html.escape(r.display.translate(render.WS_MARKS)) + (f"<br>#{r.rank + 1}" if r.rank is not None else "")
                for r in rows
            ],
            values=[r.n_bytes for r in rows],
            branchvalues="total",
            marker={"colors": [render.id_colour(r.id) for r in rows]},
            hovertext=[f"id {r.id} · {r.n_bytes} bytes" for r in rows],
            hoverinfo="label+text",
            tiling={"orientation": "v"},
            sort=False,  # keep each token's two parts left to right (Plotly sorts by size by default)
            textfont={"family": "ui-monospace, monospace", "color": "#1b1b1f"},
        )
    )
    fig.update_layout(height=120 + 70 * tree.depth(), margin={"l": 4, "r": 4, "t": 8, "b": 4})
    return fig


def production_rows(token_bytes: bytes, production: dict[str, catalogue.Built]) -> pd.DataFrame:
    """For each production encoding: whether ``token_bytes`` is one token there, its rank, and its tokens as text.

    The numbers are written out (``"30,001"``), and :data:`NONE` where there is none (no single token; part of
    a character, which cannot be encoded as text), never a bare null.
    """
    ranks = production_ranks_of(token_bytes, {k: production_token_ids(k) for k in production})
    rows = []
    for key, built in production.items():
        rank = ranks[key]
        try:
            pieces = len(built.tokenizer.encode(token_bytes.decode("utf-8")))
        except UnicodeDecodeError:
            pieces = None  # part of a character: it cannot be encoded as text on its own
        rows.append(
            {
                "Encoding": built.label,
                "Single token": rank is not None,
                "Rank there": NONE if rank is None else f"{rank:,}",
                "Tokens as text": NONE if pieces is None else f"{pieces:,}",
            }
        )
    return pd.DataFrame(rows)


def genealogy_view(settings: Settings, tok: Trained) -> None:
    """Pick a learned token; draw its merge tree, its occurrences, and its rank in the production encodings."""
    learned = tok.learned_tokens()
    if not learned:
        st.info("No merges were learned at this vocabulary size: every token is a single byte.", icon=":material/info:")
        return
    ids = [i for _r, i in reversed(learned)]  # latest merges first: the longest, most interesting tokens
    if st.session_state.get(sk.INS_TOKEN) not in ids:
        st.session_state[sk.INS_TOKEN] = ids[0]
    token_id = st.selectbox(
        "Token (type to search by its text)",
        ids,
        format_func=lambda i: token_label(tok, i),
        key=sk.INS_TOKEN,
        help="Every token a merge made at this vocabulary size, the latest merge first.",
    )
    genealogy_details(settings, tok, token_id)


def genealogy_details(settings: Settings, tok: Trained, token_id: int) -> None:
    """One token's genealogy: figures, merge tree, occurrences in context, and the production encodings' view of it.

    Used by the Insights tab and by the Playground's click-a-token dialog.  A
    token no merge made (a byte, an alphabet entry, a special token) gets a
    short note instead of a tree.
    """
    if token_id in set(tok.special_tokens.values()):
        st.info("A special token: never merged, never split, added before any merge.", icon=":material/info:")
        return
    if tok.rank_of(token_id) is None:
        kind = "a single byte" if tok.is_byte_level else f"an alphabet entry of {view_of(tok.algorithm).short}"
        st.info(f"Token {token_id} is {kind}: a base token, no merge made it.", icon=":material/info:")
        return
    tree = merge_tree(tok, token_id)
    counts = _counts(tok_key(settings, tok.vocab_size), settings.text, tok)
    if not tree.children:  # a learned token no merge made: a Unigram piece, kept from the seed by pruning
        size = tok.min_vocab_size + tree.rank + 1
        st.info(
            f"{view_of(tok.algorithm).short} does not build tokens by merging: this piece was kept from a large "
            f"seed vocabulary while pruning removed others. It is in every vocabulary of at least {size:,} tokens; "
            f"it occurs {counts.get(token_id, 0):,} times in the training text.",
            icon=":material/info:",
        )
        prefix = pretoken_prefix(settings.text, EXAMPLES_CHARS, *tokenizer_split(tok), slack=EXAMPLES_CHARS)
        shown = examples_html(tok.token_spans(prefix), {token_id: None})
        if shown:
            st.html(shown)
        return
    c = st.columns(4)
    c[0].metric("Merge rank", f"#{tree.rank + 1:,}", border=True, help="1 = the first merge learned.")
    c[1].metric("Merge levels", tree.depth(), border=True, help="Longest chain of merges down to a base token.")
    c[2].metric("Base tokens", len(tree.leaves()), border=True, help="Bytes (BPE) or alphabet entries (WordPiece).")
    c[3].metric(
        "Occurrences",
        f"{counts.get(token_id, 0):,}",
        border=True,
        help="How often the token occurs in the training text.",
    )  # a short label: a long one is cut at 1280 px
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Merge tree**")
        st.html(tree_html(tree))
    with right:
        st.plotly_chart(tree_figure(tree), config={"displayModeBar": False})
    prefix = pretoken_prefix(settings.text, EXAMPLES_CHARS, *tokenizer_split(tok), slack=EXAMPLES_CHARS)
    shown = examples_html(tok.token_spans(prefix), {token_id: None})
    if shown:
        st.html(shown)
    elif counts.get(token_id, 0) == 0:
        st.caption("Encoding the training text never produces this token: later merges always absorb it.")
    st.markdown("**In the production encodings**")
    production = loaded_production(settings)
    production = {k: production[k] for k in comparable(tok, list(production))}
    if not production and not tok.is_byte_level:  # string tokens (##ing) compare only with the same algorithm's
        st.info(_same_algorithm_note(tok), icon=":material/info:")
        return
    if production:
        st.dataframe(production_rows(tree.token_bytes, production), hide_index=True, width="stretch")
        st.caption(
            "Rank there = the token's place in that vocabulary (its merge order; the 256 bytes come first): its id, "
            "except in Mistral Tekken (id = rank + 1,000 special tokens). Mistral v1: the id of the piece that "
            "stands for these bytes (▁ for a space)."
        )


# ---------------------------------------------------------------------------
# vocabulary diff


def overlap_figure(curves: dict[str, list[int]], first_size: int) -> go.Figure:
    """Share of the first k learned tokens each production encoding also has, against vocabulary size.

    Args:
        curves: ``{label: overlap_curve}`` (see :class:`bpe_core.analysis.insights.VocabDiff`).
        first_size: the vocabulary size after the first merge (256 + specials + 1).
    """
    fig = go.Figure()
    for label, curve in curves.items():
        xs = [first_size + k for k in range(len(curve))]
        ys = [have / (k + 1) for k, have in enumerate(curve)]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=plotly_text(label)))
    fig.update_layout(
        height=340,
        margin={"l": 8, "r": 8, "t": 36, "b": 8},
        title={"text": "Share of your learned tokens the production encoding also has", "font": {"size": 14}},
        xaxis_title="Your vocabulary size (tokens)",
        yaxis={"title": "Shared", "tickformat": ".0%", "range": [0, 1.02]},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def _same_algorithm_note(tok: Trained) -> str:
    """Why nothing is compared with a string-token vocabulary, and which production tokenizers to pick."""
    names = " or ".join(PRODUCTION[k].label for k in production_keys_of(tok.algorithm))
    pick = f"Pick {names} above" if names else "No production tokenizer of this algorithm is registered"
    return (
        f"{view_of(tok.algorithm).short} tokens are strings written with their algorithm's marks (##ing, ▁the): "
        f"they compare only with a production vocabulary of the same algorithm. {pick}."
    )


TOKEN_TABLE_HEIGHT = 400
"""Pixels a table of tokens takes before it scrolls (as tall as Streamlit's own dataframes)."""


def token_table(where, frame: pd.DataFrame) -> None:
    """Draw a table of tokens in ``where`` (a column, or ``st``): numbers right, tokens isolated in their direction.

    A column named ``Token`` or ending in ``pattern`` holds tokens (:func:`ui.render.table_token_html`: a
    right-to-left token reads in its own order without moving the row; invisible characters are shown by
    code point); the others hold whole numbers.  The table scrolls past :data:`TOKEN_TABLE_HEIGHT`.
    """
    columns = [FigureColumn(c, c, "token" if c == "Token" or c.endswith("pattern") else "int") for c in frame.columns]
    where.html(figures_table_html(frame, columns, max_height=TOKEN_TABLE_HEIGHT))


def diff_view(settings: Settings, tok: Trained) -> None:
    """Learned tokens against each production tokenizer: shares, the overlap curve, only-yours and shared tables.

    A byte-level vocabulary against every chosen production encoding; a
    WordPiece one against BERT's, a Unigram one against XLM-R's
    (:func:`comparable`): tokens compare as written.
    """
    production = loaded_production(settings)
    production = {k: production[k] for k in comparable(tok, list(production))}
    if not production:
        if not tok.is_byte_level:
            st.info(_same_algorithm_note(tok), icon=":material/info:")
        return
    diffs = {k: vocab_diff(tok, b.label, production_token_ids(k)) for k, b in production.items()}
    learned = len(tok.learned_tokens())
    if not learned:
        st.info("No merges were learned at this vocabulary size.", icon=":material/info:")
        return
    cols = st.columns(len(diffs))
    for col, (key, d) in zip(cols, diffs.items()):
        col.metric(
            f"{_label(key)} has",
            f"{d.shared_fraction:.1%}",
            border=True,
            help=f"{len(d.shared):,} of your {learned:,} learned tokens are single tokens in {_label(key)} too.",
        )
    st.plotly_chart(
        overlap_figure({_label(k): d.overlap_curve for k, d in diffs.items()}, tok.min_vocab_size + 1),
        config={"displayModeBar": False},
    )
    if st.session_state.get(sk.INS_DIFF_PRODUCTION) not in diffs:
        st.session_state[sk.INS_DIFF_PRODUCTION] = next(iter(diffs))
    key = st.radio(
        "Compare with",
        list(diffs),
        format_func=_label,
        horizontal=True,
        key=sk.INS_DIFF_PRODUCTION,
        persist_state="session",
    )
    d = diffs[key]
    left, right = st.columns(2)
    left.markdown(f"**Only in yours: {len(d.only_ours):,}** (by merge rank)")
    token_table(
        left,
        pd.DataFrame({"Rank": [r + 1 for r, _b in d.only_ours], "Token": [readable(b) for _r, b in d.only_ours]}),
    )
    right.markdown(f"**Shared: {len(d.shared):,}**")
    token_table(
        right,
        pd.DataFrame(
            {
                "Rank": [r + 1 for r, _b, _x in d.shared],
                "Token": [readable(b) for _r, b, _x in d.shared],
                f"Rank in {_label(key)}": [x for _r, _b, x in d.shared],
            }
        ),
    )
    st.caption("Rank = merge order in your tokenizer, 1 = first merge. Single bytes are left out: all have them.")


# ---------------------------------------------------------------------------
# held-out evaluation


def split_controls(settings: Settings) -> tuple[str, str] | None:
    """The split widgets (by, fraction, seed) and the resulting ``(training part, held-out part)``, or ``None``."""
    c1, c2, c3 = st.columns([2, 2, 1])
    by = c1.radio(
        "Split by",
        ["document", "fraction"],
        format_func={"document": "Documents (seeded choice)", "fraction": "Fraction (the tail)"}.get,
        horizontal=True,
        key=sk.INS_SPLIT,
        persist_state="session",
        help="Documents are the blocks between blank lines, or between the first special token if the text has it.",
    )
    fraction = c2.slider(
        "Held-out share",
        0.05,
        0.5,
        0.2,
        0.05,
        key=sk.INS_FRACTION,
        persist_state="session",
        format="percent",
        help="The share of the text's characters to hold out; whole documents come as near as they can (the "
        "share actually held out is said below), or the tail is held out when they cannot.",
    )
    seed = c3.number_input("Seed", 0, 2**31 - 1, 0, key=sk.INS_SEED, persist_state="session", disabled=by == "fraction")
    specials = settings.spec.special_tokens
    separator = specials[0] if specials else None
    try:
        try:
            parts = heldout_split(settings.text, fraction, int(seed), separator, by=by)
        except TooFewDocuments as exc:  # whole documents would hold out another share: the tail instead
            parts = heldout_split(settings.text, fraction, int(seed), separator, by="fraction")
            st.info(f"Not split by documents: {md(exc)}. The last {fraction:.0%} is held out instead (as "
                    "*Fraction* does).", icon=":material/info:")  # fmt: skip
    except ValueError as exc:
        st.warning(f"Cannot split this text: {md(exc)}", icon=":material/warning:")
        return None
    train_part, held = parts
    total = len(train_part) + len(held)
    st.caption(
        f"Held out: **{len(held) / total:.1%}** of the characters ({len(held):,} of {total:,}); the training "
        f"part: {len(train_part):,}."
    )
    return parts


def train_part_tokenizer(settings: Settings, train_text: str, size: int) -> Trained:
    """The sidebar's tokenizer trained on ``train_text`` only (cached), at ``size`` when it reaches it.

    Raises:
        ValueError, TypeError: from the engine.
    """
    full = train(train_text, settings.spec)
    return full.with_vocab_size(min(max(size, full.min_vocab_size), full.max_vocab_size))


def heldout_frame(rows: Sequence[tuple[str, TextMetrics, TextMetrics]]) -> pd.DataFrame:
    """The held-out table: per tokenizer, held-out and training-part figures and the relative drop.

    Args:
        rows: ``(label, metrics on the training part, metrics on the held-out part)``.
    """
    out = []
    for label, seen, held in rows:
        drop = 1 - held.bytes_per_token / seen.bytes_per_token if seen.bytes_per_token else 0.0
        out.append(
            {
                "Tokenizer": label,
                "Held-out tokens": held.tokens,
                "Held-out bytes/token": held.bytes_per_token,
                "Training-part bytes/token": seen.bytes_per_token,
                "Drop": drop,
                "Held-out tokens/word": held.fertility,
                "Held-out unknown": held.unknown_tokens,
            }
        )
    return pd.DataFrame(out)


HELDOUT_COLUMNS: tuple[FigureColumn, ...] = (
    FigureColumn("Tokenizer", "Tokenizer", "text"),
    FigureColumn("Held-out tokens", "Held-out tokens", "int", "Tokens of the held-out part"),
    FigureColumn("Held-out bytes/token", "Held-out bytes / token", "3f", "UTF-8 bytes per token, held out"),
    FigureColumn(
        "Training-part bytes/token", "Training-part bytes / token", "3f", "UTF-8 bytes per token, training part"
    ),
    FigureColumn(
        "Drop",
        "Drop",
        "share",
        "How much less a token carries on unseen text: 1 - held-out / training-part bytes/token",
    ),
    FigureColumn("Held-out tokens/word", "Held-out tokens / word", "3f", "Tokens per word, held out"),
    FigureColumn("Held-out unknown", "Held-out unknown", "int", "Unknown tokens ([UNK]) in the held-out part"),
)
"""The held-out table's columns (:func:`heldout_frame`), drawn by :func:`ui.figures_table.figures_table_html`: headers
wrap, so every column fits at 1280 px and wider."""


def heldout_caption(frame: pd.DataFrame, unseen: str) -> str:
    """What the held-out table's Drop means, and why some are negative (named, with their figure).

    Args:
        frame: :func:`heldout_frame`'s table.
        unseen: the sentence saying which tokenizers were trained on other data (lower-case start).
    """
    text = (
        "Drop = 1 − held-out bytes per token ÷ training-part bytes per token: how much less a token carries on "
        "the held-out part. A tokenizer trained on a small text compresses that text well and unseen text less: "
        f"the drop shows how much. {unseen[0].upper() + unseen[1:]}, so both parts are unseen for them."
    )
    negative = [(r["Tokenizer"], r["Drop"]) for r in frame.to_dict("records") if r["Drop"] < 0]
    if negative:
        named = ", ".join(f"{md(label)} {drop:.1%}" for label, drop in negative)
        text += (
            f" A negative drop ({named}) means the held-out part is compressed *better* than the training part: "
            "for a tokenizer that saw neither, it only says that the held-out part is easier text for it (more "
            "common words, fewer rare characters), not that it learned anything from the training part."
        )
    return text


def heldout_figure(frame: pd.DataFrame) -> go.Figure:
    """Grouped bars: bytes per token on the training part and on the held-out part, per tokenizer."""
    fig = go.Figure()
    names = [html.escape(t).replace(" · ", "<br>").replace(" (", "<br>(") for t in frame["Tokenizer"]]
    fig.add_trace(go.Bar(name="Training part", x=names, y=frame["Training-part bytes/token"]))
    fig.add_trace(go.Bar(name="Held-out part", x=names, y=frame["Held-out bytes/token"]))
    fig.update_layout(
        barmode="group",
        height=340,
        margin={"l": 8, "r": 8, "t": 36, "b": 8},
        title={"text": "Bytes per token: seen text vs unseen text", "font": {"size": 14}},
        yaxis_title="Bytes per token",
        xaxis={"tickangle": 0},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


def heldout_view(settings: Settings, tok: Trained, size: int) -> None:
    """Split, train on the training part, and measure every tokenizer on both parts.

    ``tok`` is the sidebar's tokenizer, shown for contrast: trained on the whole
    text (held-out part included), or imported from a file (trained on other
    data; the tokenizer trained on the training part then takes its algorithm,
    pattern, special tokens and vocabulary size).
    """
    parts = split_controls(settings)
    if parts is None:
        return
    train_text, held_text = parts
    if settings.imported is not None:
        how = "A tokenizer like the imported one (its algorithm, pattern, special tokens and size) is trained"
        whole_label = f"Imported tokenizer (trained on other data) · {tok.vocab_size:,}"
        unseen = "The imported tokenizer and the production encodings were trained on other data"
    else:
        how = "The trained tokenizer is retrained, at the sidebar's settings,"
        whole_label = f"Trained on all the text (saw the held-out part) · {tok.vocab_size:,}"
        unseen = (
            "the tokenizer trained on all the text has seen the held-out part, which flatters it. "
            "The production encodings were trained on other data"
        )
    st.caption(f"{how} on the training part only (shown at vocabulary size {size:,} or its largest).")
    try:
        with st.spinner("Training on the training part…"):
            part_tok = train_part_tokenizer(settings, train_text, size)
    except (ValueError, TypeError) as exc:
        st.error(f"Cannot train on the training part: {md(exc)}", icon=":material/error:")
        return
    builts = [
        catalogue.Built(part_tok, f"Trained on the training part · {part_tok.vocab_size:,}",
                        tok_key(settings, part_tok.vocab_size, train_text)),
        catalogue.Built(tok, whole_label, tok_key(settings, tok.vocab_size)),
        *loaded_production(settings).values(),
    ]  # fmt: skip
    with st.spinner("Encoding…"):
        rows = [
            (b.label, catalogue.measure(b.cache_key, train_text, b), catalogue.measure(b.cache_key, held_text, b))
            for b in builts
        ]
    frame = heldout_frame(rows)
    st.html(figures_table_html(frame, HELDOUT_COLUMNS))
    st.plotly_chart(heldout_figure(frame), config={"displayModeBar": False})
    st.caption(heldout_caption(frame, unseen))


# ---------------------------------------------------------------------------
# per-script breakdown


@st.cache_data(max_entries=16, show_spinner=False)
def _breakdown(cache_key: str, text: str, _tok: Tokenizer) -> list[ScriptRow]:
    return script_breakdown(text, _tok.token_spans(text))


def scripts_frame(text: str, breakdowns: dict[str, list[ScriptRow]]) -> pd.DataFrame:
    """Table of the breakdown: one row per character group, characters and tokens/char per tokenizer."""
    groups: dict[str, dict[str, Any]] = {}
    for label, rows in breakdowns.items():
        for r in rows:
            row = groups.setdefault(r.group, {"Group": r.group, "Characters": r.characters})
            row[label] = r.tokens_per_char
    return pd.DataFrame(list(groups.values()))


def scripts_figure(breakdowns: dict[str, list[ScriptRow]]) -> go.Figure:
    """Grouped bars: tokens per character in each group, one colour per tokenizer."""
    fig = go.Figure()
    for label, rows in breakdowns.items():
        fig.add_trace(go.Bar(name=plotly_text(label), x=[r.group for r in rows], y=[r.tokens_per_char for r in rows]))
    fig.update_layout(
        barmode="group",
        height=380,
        margin={"l": 8, "r": 8, "t": 36, "b": 8},
        title={"text": "Tokens per character, by script", "font": {"size": 14}},
        yaxis_title="Tokens per character",
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


def scripts_view(settings: Settings, tok: Trained) -> None:
    """Per character group: characters, and tokens per character for the trained tokenizer and the production ones."""
    builts = [catalogue.Built(tok, f"{tok.name} · {tok.vocab_size:,}", tok_key(settings, tok.vocab_size))]
    builts += list(loaded_production(settings).values())
    splits = [tokenizer_split(b.tokenizer) for b in builts]
    text = shared_pretoken_prefix(settings.text, SCRIPT_MAX_CHARS, splits, slack=SCRIPT_MAX_CHARS)
    if len(text) < len(settings.text):
        st.caption(f"The breakdown covers the first {len(text):,} characters of the text.")
    with st.spinner("Encoding…"):
        breakdowns = {b.label: _breakdown(b.cache_key, text, b.tokenizer) for b in builts}
    frame = scripts_frame(text, breakdowns)
    config = {b.label: st.column_config.NumberColumn(format="%.3f") for b in builts}
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config)
    st.plotly_chart(scripts_figure(breakdowns), config={"displayModeBar": False})
    st.caption(
        "Each token counts once, shared among the characters it covers in proportion to their UTF-8 bytes, so "
        "a group's tokens add up to the text's token count. Groups: Unicode scripts; emoji; digits; whitespace; "
        "punctuation and symbols. WordPiece tokens never cover whitespace, so its Whitespace row is 0. "
        "The trained tokenizer has seen this text, which flatters it: the Held-out evaluation tab is the fair test."
    )


# ---------------------------------------------------------------------------
# pre-tokenizer playground


def _base_changed() -> None:
    st.session_state[sk.INS_PATTERN_TEXT] = PATTERNS[st.session_state[sk.INS_PATTERN_BASE]]


def chunks_html(text: str, chunks: Sequence[tuple[int, int, bool]]) -> str:
    """The text with each pre-token drawn as a box (colours cycle by position); escaped."""
    parts = ['<div class="bpe-view">']
    for i, (start, end, special) in enumerate(chunks):
        colour = render.PALETTE[i % len(render.PALETTE)]
        cls = "tk special" if special else "tk"
        tip = f"pre-token {i + 1} · characters {start}–{end}" + (" · special token" if special else "")
        parts.append(
            f'<wbr><span class="{cls}" style="background:{colour}" data-tip="{tip}">'
            f"{render.visible_text(text[start:end])}</span>"
        )
    parts.append("</div>")
    return "".join(parts)


def playground_pattern() -> str:
    """The pattern editor; returns the pattern in force (the last valid one when the edit is invalid)."""
    if "ins_pattern_base" not in st.session_state:
        st.session_state[sk.INS_PATTERN_BASE] = "gpt2"
    if "ins_pattern_text" not in st.session_state:
        st.session_state[sk.INS_PATTERN_TEXT] = PATTERNS[st.session_state[sk.INS_PATTERN_BASE]]
    st.selectbox(
        "Start from",
        PATTERN_BASES,
        format_func=PATTERN_LABELS.get,
        key=sk.INS_PATTERN_BASE,
        on_change=_base_changed,
        help="Replaces the pattern below with this encoding's pattern.",
    )
    typed = st.text_area("Split pattern (regex module syntax)", key=sk.INS_PATTERN_TEXT, height=100)
    good = st.session_state.get(sk.INS_PATTERN_GOOD, PATTERNS["gpt2"])
    try:
        compile_pattern(typed)
    except ValueError as exc:
        st.error(f"{md(exc)}. The previous pattern stays in force:", icon=":material/error:")
        st.code(good, language=None)
        return good
    st.session_state[sk.INS_PATTERN_GOOD] = typed
    return typed


def merges_side_by_side(a: TrainedTokenizer, b: TrainedTokenizer, n: int = 40) -> pd.DataFrame:
    """The first ``n`` learned tokens of two tokenizers, rank by rank (readable tokens)."""
    ta = [readable(a.token_bytes(new)) for _r, new in a.learned_tokens()[:n]]
    tb = [readable(b.token_bytes(new)) for _r, new in b.learned_tokens()[:n]]
    k = max(len(ta), len(tb))
    return pd.DataFrame(
        {
            "Rank": list(range(1, k + 1)),
            "Sidebar pattern": ta + [""] * (k - len(ta)),
            "Edited pattern": tb + [""] * (k - len(tb)),
        }
    )


def pretok_view(settings: Settings) -> None:
    """Edit a split pattern, see its chunks on the text, retrain a BPE with it and compare the merges."""
    if get_algorithm(settings.spec.algorithm).fixed_pattern:
        st.info(
            f"{view_of(settings.spec.algorithm).short} always pre-tokenizes "
            f"{get_algorithm(settings.spec.algorithm).pattern_phrase}, so this playground trains byte-level BPE: "
            "the sidebar's text, a BPE with GPT-2's pattern as the baseline, and your pattern.",
            icon=":material/info:",
        )
    pattern = playground_pattern()
    bpe_spec = catalogue.compared_spec(settings, catalogue.variants_algorithm())
    specials = bpe_spec.special_tokens
    try:
        prefix = pretoken_prefix(settings.text, CHUNK_DRAW_CHARS, pattern, specials, slack=3 * CHUNK_DRAW_CHARS)
        counts, _total = count_pretokens(settings.text, pattern, specials)
        chunks = pretoken_chunks(prefix, pattern, specials)
    except (ValueError, TypeError) as exc:
        st.error(md(exc), icon=":material/error:")
        return
    st.caption(
        f"{sum(counts.values()):,} pre-tokens, {len(counts):,} distinct, in the whole text"
        + (f"; the first {len(prefix):,} characters are drawn." if len(prefix) < len(settings.text) else ".")
    )
    st.html(chunks_html(prefix, chunks))
    try:
        with st.spinner("Training with both patterns…"):
            base = catalogue.trained_variant(settings)
            edited = train(settings.text, bpe_spec.replace(pattern=pattern))
    except (ValueError, TypeError) as exc:
        st.error(f"Cannot train: {md(exc)}", icon=":material/error:")
        return
    d = merge_set_diff(base, edited)
    c = st.columns(4)
    c[0].metric("Same first merges", f"{d.same_prefix:,}", border=True, help="Merges equal rank by rank from #1.")
    c[1].metric("Learned tokens in both", f"{d.shared:,}", border=True)
    c[2].metric(
        "Sidebar pattern only", f"{len(d.only_a):,}", border=True, help="Learned with the sidebar's pattern only."
    )
    c[3].metric("Edited pattern only", f"{len(d.only_b):,}", border=True, help="Learned with the edited pattern only.")
    t_base = len(base.encode(settings.text))
    t_edit = len(edited.encode(settings.text))
    st.caption(
        f"Tokens for the whole text: {t_base:,} with {md(base.name)} ({base.vocab_size:,}), "
        f"{t_edit:,} with the edited pattern ({edited.vocab_size:,})."
    )
    left, right = st.columns(2)
    left.markdown("**The first merges, side by side**")
    token_table(left, merges_side_by_side(base, edited))
    right.markdown("**Tokens only the edited pattern learned**")
    token_table(
        right, pd.DataFrame({"Rank": [r + 1 for r, _b in d.only_b], "Token": [readable(b) for _r, b in d.only_b]})
    )


# ---------------------------------------------------------------------------
# under-used tokens


def unused_frame(tok: Trained, unused: Sequence[tuple[int, int, bytes]]) -> pd.DataFrame:
    """Table of unused tokens: merge rank (1-based), id, readable token, length in bytes."""
    shown = [render.shown_token(tok, i) for _r, i, _b in unused]
    return pd.DataFrame(
        {
            "Rank": [r + 1 for r, _i, _b in unused],
            "Id": [i for _r, i, _b in unused],
            "Token": shown,
            "Bytes": [len(b) for _r, _i, b in unused],
        }
    )


def unused_view(settings: Settings, tok: Trained, size: int) -> None:
    """Learned tokens that never occur when the training text (or the held-out part) is encoded."""
    on = st.radio(
        "Encode",
        ["training", "heldout"],
        format_func={
            "training": "The training text (sidebar's tokenizer)",
            "heldout": "The held-out part (tokenizer trained on the rest)",
        }.get,
        horizontal=True,
        key=sk.INS_UNUSED_ON,
        persist_state="session",
    )
    if on == "heldout":
        st.caption("The split is the Held-out evaluation tab's.")
        parts = split_controls(settings)
        if parts is None:
            return
        try:
            tok = train_part_tokenizer(settings, parts[0], size)
        except (ValueError, TypeError) as exc:
            st.error(f"Cannot train on the training part: {md(exc)}", icon=":material/error:")
            return
        trained_on, text = parts
    else:
        trained_on, text = None, settings.text
    with st.spinner("Encoding…"):
        key = tok_key(settings, tok.vocab_size, trained_on)
        unused = unused_tokens(tok, text, list(_counts(key, text, tok)))
    learned = len(tok.learned_tokens())
    st.metric(
        "Learned tokens never used",
        f"{len(unused):,} of {learned:,}",
        border=True,
        help="A merge's token can be absorbed by later merges everywhere it occurs: it then only exists as a step.",
    )
    token_table(st, unused_frame(tok, unused))
