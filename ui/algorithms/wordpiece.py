"""WordPiece on screen: its words, exports, live-view tables, Merges story and cost.

Registers the ``"wordpiece"`` :class:`~ui.algorithms.AlgorithmView` when imported
(:func:`ui.algorithms.view_of` imports it the first time WordPiece is asked for).
"""

from __future__ import annotations

from typing import Any

from bpe_core import WordPieceTokenizer, wordpiece_to_hf_json, wordpiece_to_vocab_txt
from bpe_core.analysis.live import wordpiece_size_totals, wordpiece_step_versions, wordpiece_versions
from ui import live_view
from ui.algorithms import AlgorithmView, Export, LiveTables, project_json, register
from ui.merges.history import WordPieceMergeHistory

LEGEND_HTML = (
    '<div class="bpe-legend">Each coloured box is one token; boxes that touch are the pieces of one word, '
    "the later ones being <code>##</code> continuations. Hover a token for its id, merge rank and vocabulary "
    "string; click it (on the Playground) to see how it was built. A dark box is a special token, "
    "or a word the vocabulary cannot spell (<code>[UNK]</code>). "
    "Whitespace belongs to no token: <code>·</code> space, <code>→</code> tab, <code>↵</code> newline.</div>"
)
"""The key to the coloured view of a WordPiece tokenizer."""


def exports(tok: WordPieceTokenizer, base: str) -> list[Export]:
    """The download buttons: the project's JSON, BERT's ``vocab.txt``, Hugging Face ``tokenizer.json``."""
    return [
        project_json(tok, base),
        Export(
            "BERT vocab.txt",
            lambda: wordpiece_to_vocab_txt(tok),
            f"{base}.vocab.txt",
            "text/plain",
            "One token per line, line number = id; BERT's [UNK] and ## conventions.",
            ":material/format_list_numbered:",
        ),
        Export(
            "Hugging Face tokenizer.json",
            lambda: wordpiece_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "WordPiece model with the BERT pre-tokenizer: same ids as here.",
            ":material/hub:",
        ),
    ]


def sizes_help(tok: WordPieceTokenizer) -> str:
    """The slider's help: what its two ends mean."""
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return (
        f"{lo} = {len(tok.special_tokens)} special tokens plus the {tok.alphabet_size} characters of the "
        f"alphabet (word-initial, and ##-prefixed inside words), no merges; {hi} = all {hi - lo} merged tokens."
    )


# ---------------------------------------------------------------------------
# the live view: each word's segmentation at the sizes where it changes (greedy longest match does not nest)


def totals(full: WordPieceTokenizer, text: str, trained_on_text: bool) -> list[int]:
    """Tokens of the whole text at every size (each distinct word once, whatever the text)."""
    del trained_on_text
    return wordpiece_size_totals(full, text)


def tables(full: WordPieceTokenizer, drawn: str, lo: int) -> dict[str, Any]:
    """The browser's WordPiece tables: each word's segmentation over sizes (see ``wordpiece_versions``)."""
    del lo
    return live_view.word_tables("wordpiece", full, wordpiece_versions(full, drawn), always_display=False)


def player(full: WordPieceTokenizer, text: str, drawn: str) -> dict[str, Any]:
    """The Merges player's data: the trainer's segmentation per step (keyed 0..n) and each merge's card.

    The trainer's segmentation, not greedy encoding: that is what training held at each step.
    """
    trace = full.trace
    totals_ = [full.training.initial_tokens] + [s.tokens_after for s in trace]
    v = wordpiece_step_versions(full, drawn, full.replay(text))
    out = live_view.payload_head(0, len(trace), text, drawn, totals_) | {"base": "wordpiece"}
    out.update(live_view.word_tables("wordpiece", full, v, always_display=False))
    out["trace"] = {
        "left": [s.left_id for s in trace],
        "right": [s.right_id for s in trace],
        "newId": [s.new_id for s in trace],
        "leftText": [s.left for s in trace],
        "rightText": [s.right for s in trace],
        "mergedText": [s.merged for s in trace],
        "score": [s.score for s in trace],
        "pairFreq": [s.pair_freq for s in trace],
        "leftFreq": [s.left_freq for s in trace],
        "rightFreq": [s.right_freq for s in trace],
        "added": [bool(s.added) for s in trace],
    }
    out["v"] = live_view.payload_version(out)
    return out


VIEW = register(
    AlgorithmView(
        name="wordpiece",
        short="WordPiece",
        kind="WordPiece",
        piece_noun="word",
        legend_html=LEGEND_HTML,
        sizes_help=sizes_help,
        split_note=lambda tok: (
            "pre-tokenization: BERT-style (whitespace and punctuation); lower-cased: "
            + ("yes" if tok.lowercase else "no")
        ),
        exports=exports,
        merges_caption=(
            "WordPiece training repeats one move: score every pair of neighbouring pieces inside a word by "
            "freq(pair) / (freq(left) × freq(right)) and merge the best-scoring pair into a new piece. "
            "Step through the merges, or press Play, and watch the words join up."
        ),
        encode_caption=(
            "WordPiece (the tokenizer trained on your text) works differently: it cuts the text into words, then "
            "reads each word from the left, taking the longest piece its vocabulary has (trying the longest "
            "candidate first, then shorter ones), and continues with the rest marked ##. A word it cannot spell, "
            "or longer than 100 characters, becomes [UNK]. One line per piece taken."
        ),
        pattern_note=(
            "WordPiece pre-tokenizes BERT-style: whitespace separates words and every punctuation "
            "character is a word of its own. Pieces after the first in a word are marked ##."
        ),
        specials_help="BERT's by default. [UNK] stands for any word the vocabulary cannot spell, so keep it.",
        lowercase_help="As BERT's uncased models: train and encode on the lower-cased text (accents are kept).",
        live=LiveTables(totals=totals, tables=tables, player=player),
        history=WordPieceMergeHistory,
        # WordPiece's cost grows with a word's length (measured on one busy core: 10,000 characters without a
        # space 0.4 s, 40,000 1.9 s, 200,000 9.9 s)
        chars_per_second=700_000,
        long_word_chars=6_000,
        special_tokens_key="wp_special_tokens",
        lowercase_key="wp_lowercase",
    )
)
"""WordPiece's :class:`~ui.algorithms.AlgorithmView`."""
