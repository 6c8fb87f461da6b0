"""The toy character-level algorithm on screen: one :class:`ui.algorithms.AlgorithmView`, nothing else.

It draws on the server (no :class:`~ui.algorithms.LiveTables`) and has no Merges story (no ``history``):
the pages fall back to their server views and say so.
"""

from __future__ import annotations

from tests.toy.chars import NAME
from ui import algorithms, render


def register() -> None:
    """Register the toy's view (what ``ui/algorithms/<name>.py`` does when imported)."""
    algorithms.register(
        algorithms.AlgorithmView(
            name=NAME,
            short="character model",
            kind="character-level",
            piece_noun="pre-token",
            legend_html=render.LEGEND_HTML,
            sizes_help=lambda tok: (
                f"{tok.min_vocab_size} = the special tokens only; {tok.max_vocab_size} = every character kept."
            ),
            split_note=lambda tok: "every character is one token",
            merges_caption="Training keeps the most frequent characters, one at a time.",
            trained_note=lambda tok: f"**{len(tok.trace):,}** characters kept",
            rank_label=lambda tok, i: f"character #{tok.rank_of(i) + 1:,}",
            stop_phrase="the text has no more distinct characters",
        )
    )


def unregister() -> None:
    """Forget the toy's view (the test's teardown)."""
    algorithms.unregister(NAME)
