"""Byte-level BPE on screen: its words, exports, live-view tables, Merges story and cost.

Registers the ``"bpe"`` :class:`~ui.algorithms.AlgorithmView` when imported
(:func:`ui.algorithms.view_of` imports it the first time BPE is asked for).
"""

from __future__ import annotations

from typing import Any

from bpe_core import BPETokenizer, bpe_to_hf_json, bpe_to_tiktoken_files
from bpe_core.analysis.live import NEVER, bpe_boundaries, bpe_size_totals
from ui import live_view, render
from ui.algorithms import AlgorithmView, Export, LiveTables, project_json, register
from ui.merges.history import BPEMergeHistory
from ui.safe_text import md


def exports(tok: BPETokenizer, base: str) -> list[Export]:
    """The download buttons: the project's JSON, tiktoken's ranks and metadata, Hugging Face ``tokenizer.json``."""
    unique = len(set(tok.vocab.values())) == tok.vocab_size
    return [
        project_json(tok, base),
        Export(
            "tiktoken ranks",
            lambda: bpe_to_tiktoken_files(tok, base)[0],
            f"{base}.tiktoken",
            "text/plain",
            "Read with tiktoken.load.load_tiktoken_bpe; pair it with the metadata file.",
            ":material/format_list_numbered:",
        ),
        Export(
            "tiktoken metadata",
            lambda: bpe_to_tiktoken_files(tok, base)[1],
            f"{base}.tiktoken.json",
            "application/json",
            "pat_str, special_tokens and explicit_n_vocab for tiktoken.Encoding(...).",
            ":material/settings:",
        ),
        Export(
            "Hugging Face tokenizer.json",
            lambda: bpe_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "Load with tokenizers.Tokenizer.from_file: same ids as here."
            if unique
            else "Unavailable: two merges produced the same bytes, which tokenizer.json cannot hold.",
            ":material/hub:",
            disabled=not unique,
        ),
    ]


def sizes_help(tok: BPETokenizer) -> str:
    """The slider's help: what its two ends mean."""
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return f"{lo} = the 256 byte tokens plus {lo - 256} special tokens, no merges; {hi} = all {hi - lo} merges."


# ---------------------------------------------------------------------------
# the live view: one vanishing size per byte boundary (BPE's segmentations nest)


def totals(full: BPETokenizer, text: str, trained_on_text: bool) -> list[int]:
    """Tokens of the whole text at every size: off the trace when trained on ``text`` (free), else computed."""
    trace, info = full.trace, full.training
    if trained_on_text and info is not None and len(trace) == full.max_vocab_size - full.min_vocab_size:
        return [info.initial_tokens] + [s.tokens_after for s in trace]
    return bpe_size_totals(full, text)


def tables(full: BPETokenizer, drawn: str, lo: int) -> dict[str, Any]:
    """The browser's BPE tables: each byte boundary's vanishing size (:func:`bpe_core.analysis.live.bpe_boundaries`)."""
    out: dict[str, Any] = {}
    b = bpe_boundaries(full, drawn)
    new_ids = b.new_ids
    used = sorted({r for r in b.rank if r < NEVER - 1})
    affine = all(new_ids[r] == lo + r for r in used)
    out["kind"] = "bpe"
    out["bpe"] = {
        "rank": live_view.pack(b.rank),
        "gone": live_view.pack(b.gone_at) if b.step is not None else None,
        "step": live_view.pack(b.step) if b.step is not None else None,
        "newBase": lo if affine else None,
        "newIds": None if affine else [[r, new_ids[r]] for r in used],
        "byteIds": None if b.byte_ids == list(range(256)) else b.byte_ids,
        "specials": [list(s) for s in b.specials],
        "specialIds": sorted(b.special_ids),
    }
    return out


def player(full: BPETokenizer, text: str, drawn: str) -> dict[str, Any]:
    """The Merges player's data: the drawn text's boundary tables and each merge's pair, count and replacements.

    Raises:
        ValueError: the trace does not cover every merge (a tokenizer not trained here).
    """
    trace = full.trace
    if len(trace) != full.max_vocab_size - full.min_vocab_size:  # one merge per size, or the trace is cut
        raise ValueError("this tokenizer has no training trace, so its merges cannot be played")
    payload = live_view.text_payload(full, text, drawn, live_view.whole_text_totals(full, text, True))
    payload["trace"] = {
        "left": [s.left_id for s in trace],
        "right": [s.right_id for s in trace],
        "newId": [s.new_id for s in trace],
        "count": [s.count for s in trace],
        "replaced": [s.replaced for s in trace],
    }
    return payload


VIEW = register(
    AlgorithmView(
        name="bpe",
        short="BPE",
        kind="byte-level BPE",
        piece_noun="pre-token",
        legend_html=render.LEGEND_HTML,
        sizes_help=sizes_help,
        split_note=lambda tok: f"pattern: {md(tok.pattern_name or 'custom')}",
        import_note=lambda tok: f", {len(tok.merges):,} merges",
        exports=exports,
        merges_caption=(
            "Training repeats one move: find the most frequent pair of neighbouring tokens and merge it into a new "
            "token. Step through the merges, or press Play, and watch the text shrink into fewer, longer tokens."
        ),
        compare_vocab_size=1000,
        compare_curve=True,
        live=LiveTables(totals=totals, tables=tables, player=player),
        history=BPEMergeHistory,
        # byte-level BPE's training is linear in the text (200,000 characters without a space: 0.19 s)
        chars_per_second=1_000_000,
        long_word_chars=1_000_000,
        special_tokens_key="special_tokens",  # the first algorithm's key, older than the others' naming
        variants=True,
    )
)
"""Byte-level BPE's :class:`~ui.algorithms.AlgorithmView`."""
