"""How much the pages draw: every draw limit of the app, defined once.

A page draws a bounded part of a long text (a prefix cut at a pre-token boundary, so the drawn
tokens are exactly the whole text's first tokens) and a bounded number of tokens; every count and
figure still covers the whole text.  The server's drawing and the browser's live view of the same
page use the same limits, so switching "Draw on the server" shows the same part of the text.

Limits on what the app *computes* (the longest text the live view builds tables for, a compression
curve's sample) are kept with the computation: an algorithm's live-view limit with its registration
(:attr:`ui.algorithms.LiveTables.max_chars`), Compare's measuring limits in :mod:`ui.catalogue`.
"""

from __future__ import annotations

# -- the Playground (server view and live view) ------------------------------

MAX_DRAW_CHARS = 20_000
"""The coloured view draws about this many characters of the text (cut at a pre-token boundary;
see :func:`bpe_core.pretokenize.pretoken_prefix`); counts cover all of it."""

MAX_DRAW_TOKENS = 6_000
"""... and at most this many tokens."""

# -- the Merges page (the browser's player and the server's stepper) ---------

MAX_STEP_CHARS = 6_000
"""The text drawn at each step is about this many characters of the training text (a prefix on a pre-token
boundary).  The browser's player, which the page shows unless "Draw on the server" is on, drew 6,000 characters
and 6,000 tokens, the server's stepper 4,000 and 4,000; both draw the player's now."""

MAX_STEP_TOKENS = 6_000
"""... and at most this many tokens of a step."""

PRUNED_LISTED = 60
"""A Unigram pruning round's card lists this many removed pieces by name (the table has them all)."""

# -- the Compare page ---------------------------------------------------------

COMPARE_DRAW_CHARS = 4_000
"""Each of Compare's coloured views draws at most this many characters of the text (the figures cover all of it)."""

COMPARE_DRAW_TOKENS = 5_000
"""... and at most this many tokens."""

# -- the Insights page --------------------------------------------------------

EXAMPLES_CHARS = 20_000
"""A token's occurrences in context are looked for in about this many characters of the training text."""

CHUNK_DRAW_CHARS = 3_000
"""The pre-tokenizer playground draws the chunks of at most this many characters."""

# -- Encode step by step -------------------------------------------------------

STEP_LINES = 400
"""A tokenizer's column draws at most this many step lines (a note counts the pre-tokens left out)."""

STEP_TRIED = 12
"""At most this many missed WordPiece candidates are drawn per line (the note counts them all)."""

LATTICE_WORDS = 40
"""At most this many Unigram lattices (words) are drawn (a note counts the others)."""

LATTICE_ARCS = 400
"""At most this many arcs are drawn per word (a note counts the others; the best path is always drawn)."""
