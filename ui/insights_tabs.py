"""The Insights page's tabs: stable keys (used in links) and labels.

A module of its own so that :mod:`ui.links` can read them without importing the views.
"""

from __future__ import annotations

VIEWS: dict[str, str] = {
    "genealogy": "Token genealogy",
    "diff": "Vocabulary diff",
    "heldout": "Held-out evaluation",
    "scripts": "Per-script breakdown",
    "pretok": "Pre-tokenizer playground",
    "unused": "Under-used tokens",
}
"""View key (stable, used in links) -> tab label."""
