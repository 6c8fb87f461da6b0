"""Unigram on screen: its words, exports, lattices, live-view tables, pruning story and cost.

Registers the ``"unigram"`` :class:`~ui.algorithms.AlgorithmView` when imported
(:func:`ui.algorithms.view_of` imports it the first time Unigram is asked for).
"""

from __future__ import annotations

from typing import Any

from bpe_core import UnigramTokenizer, unigram_to_hf_json
from bpe_core.analysis.live import unigram_size_totals, unigram_step_versions, unigram_versions
from ui import live_view
from ui.algorithms import AlgorithmView, Export, LiveTables, project_json, register
from ui.lattice_view import lattices_html
from ui.limits import PRUNED_LISTED
from ui.merges.pruning import UnigramPruningHistory
from ui.safe_text import md

LIVE_MAX_CHARS = 100_000
"""The longest text (characters) the live view draws a Unigram tokenizer on; longer texts are drawn on the server.

Unigram's tables hold every distinct word's Viterbi segmentation at every training state, built once per
(text, tokenizer): measured here at 2.2 s for 60,000 characters and 7.9 s for 300,000 (vocab 1,000, the
1 MB corpus's prefixes), more than training itself; a server-drawn slider move costs a rerun instead.  BPE's
and WordPiece's tables take under 1 s at 300,000 characters, so they have no limit."""

LEGEND_HTML = (
    '<div class="bpe-legend">Each coloured box is one piece; <code>▁</code> marks a space (SentencePiece-style: '
    "a piece may start with it). Hover a token for its id and piece; a dark box is a special token, or characters "
    "the vocabulary cannot spell (<code>&lt;unk&gt;</code>). <code>·</code> space, <code>→</code> tab, "
    "<code>↵</code> newline.</div>"
)
"""The key to the coloured view of a Unigram tokenizer."""


def exports(tok: UnigramTokenizer, base: str) -> list[Export]:
    """The download buttons: the project's JSON and Hugging Face ``tokenizer.json``."""
    return [
        project_json(tok, base),
        Export(
            "Hugging Face tokenizer.json",
            lambda: unigram_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "Unigram model (pieces and scores) with SentencePiece-style Metaspace words: same ids as here.",
            ":material/hub:",
        ),
    ]


def sizes_help(tok: UnigramTokenizer) -> str:
    """The slider's help: what its two ends mean, and that training runs the other way round."""
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return (
        f"{lo} = {len(tok.special_tokens)} special tokens (<unk> among them) plus every character of the "
        f"training text, no longer piece; {hi} = the trained vocabulary. Training runs the other way round from "
        "BPE: it starts from a large vocabulary and prunes it. Each position is the vocabulary after a pruning "
        "round, with that round's scores; sizes between rounds stop the next round early (its pieces with the "
        "smallest loss increase go first)."
    )


def trained_note(tok: UnigramTokenizer) -> str:
    """What training learned, for "How this tokenizer was trained" (Markdown)."""
    info = tok.training
    seed = getattr(info, "seed_size", 0)
    rounds = tok.trace
    return (
        f"**{seed:,}** pieces in the seed vocabulary, pruned 10 % a round by the loss each removal would cause; "
        f"**{len(rounds):,}** rounds from {tok.max_vocab_size:,} down to the characters"
    )


def steps_html(pieces: Any, colour: Any = None) -> str:
    """The Encode page's drawing of Unigram's steps: each word's lattice (:func:`ui.lattice_view.lattices_html`)."""
    del colour
    return lattices_html(pieces)


# ---------------------------------------------------------------------------
# the live view: each word's segmentation at every training state (Viterbi over a pruned vocabulary does not nest)


def totals(full: UnigramTokenizer, text: str, trained_on_text: bool) -> list[int]:
    """Tokens of the whole text at every size (each distinct word once, whatever the text)."""
    del trained_on_text
    return unigram_size_totals(full, text)


def tables(full: UnigramTokenizer, drawn: str, lo: int) -> dict[str, Any]:
    """The browser's Unigram tables: each word's segmentation at every point of the pruning (``unigram_versions``)."""
    del lo
    return live_view.word_tables("unigram", full, unigram_versions(full, drawn), always_display=True)


def player(full: UnigramTokenizer, text: str, drawn: str) -> dict[str, Any]:
    """The Merges player's data: each word's Viterbi segmentation after every pruning round (0..n), each round's card.

    The card: sizes, loss before and after, tokens, and the pieces removed (cheapest first) with the loss
    increase each was estimated to cause (formatted as the server's card does).
    """
    trace = full.trace
    replay = full.replay(text)
    sizes = full.state_sizes
    counts = [full.training_text_tokens()] + [r.tokens_after for r in trace]
    if any(t is None for t in counts):  # not recorded: count the text at each state's size
        every = unigram_size_totals(full, text)
        counts = [every[s - full.min_vocab_size] for s in sizes]
    v = unigram_step_versions(full, drawn)
    out = live_view.payload_head(0, len(trace), text, drawn, counts) | {"base": "unigram"}
    out.update(live_view.word_tables("unigram", full, v, always_display=True))
    removed = []
    for k in range(1, len(trace) + 1):
        rows = replay.removed(k)[:PRUNED_LISTED]
        removed.append([[p, f"+{x:.3g}", f"{x:.4g}"] for _i, p, x in rows])
    finite = live_view.finite
    out["trace"] = {
        "round": [r.round for r in trace],
        "sizes": list(sizes),
        "loss": [finite(replay.states[k].loss) for k in range(len(sizes))],
        "lossBefore": [finite(r.loss_before) for r in trace],
        "lossAfter": [finite(r.loss_after) for r in trace],
        "nRemoved": [r.n_removed for r in trace],
        "removed": removed,
    }
    out["v"] = live_view.payload_version(out)
    return out


VIEW = register(
    AlgorithmView(
        name="unigram",
        stop_phrase="the text's seed vocabulary has no more pieces",
        short="Unigram",
        kind="Unigram",
        piece_noun="word",
        legend_html=LEGEND_HTML,
        sizes_help=sizes_help,
        split_note=lambda tok: (
            "pre-tokenization: SentencePiece-style (a space becomes ▁ and starts a word)"
            if tok.pattern_name == "sentencepiece"
            else f"pattern: {md(tok.pattern_name or 'custom')}"
        ),
        exports=exports,
        merges_caption=(
            "Unigram training runs the other way round from BPE: it starts from a large vocabulary of frequent "
            "substrings, gives every piece a probability (EM), and each round removes the 10 % of pieces whose "
            "removal would raise the loss (the text's negative log-likelihood) least, until only the characters "
            "are left. Step through the rounds: each shows the loss, the pieces removed with the loss increase "
            "each would have caused, the pieces kept, and the text re-segmented."
        ),
        encode_caption=(
            "Unigram (the tokenizer trained on your text) works differently: it cuts the text into words (a space "
            "becomes ▁ and starts a word), and for each word considers every way of spelling it with pieces of "
            "its vocabulary: the lattice. Each piece has a score (its log-probability); the segmentation with the "
            "highest total wins (Viterbi). Below: every candidate piece as an arc with its score, the best path "
            "highlighted, and the runners-up with their totals."
        ),
        specials_help="<unk> stands for characters the vocabulary cannot spell, so keep it. Type to add your own.",
        trained_note=trained_note,
        steps_html=steps_html,
        # a learned piece's rank is its place among the pieces training kept (kept longest first), not a merge
        rank_label=lambda tok, i: f"piece #{tok.rank_of(i) + 1:,}, score {tok.scores[i]:.2f}",
        live=LiveTables(totals=totals, tables=tables, player=player, max_chars=LIVE_MAX_CHARS),
        history=UnigramPruningHistory,
        chars_per_second=150_000,
        long_word_chars=2_000,
    )
)
"""Unigram's :class:`~ui.algorithms.AlgorithmView`."""
