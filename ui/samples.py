"""The built-in sample texts (written for this project, in ``samples/``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"

SAMPLES: dict[str, tuple[str, str]] = {
    "english": ("English prose", "english.txt"),
    "python": ("Python source code", "python.txt"),
    "multilingual": ("Multilingual, CJK and emoji", "multilingual.txt"),
    "numbers": ("Numbers and arithmetic", "numbers.txt"),
}
"""Sample key -> (label shown in the menu, file name in ``samples/``)."""


@cache
def load_sample(key: str) -> str:
    """Text of a built-in sample.

    Args:
        key: a key of :data:`SAMPLES`.

    Returns:
        The sample's text (``str``).

    Raises:
        KeyError: unknown key.
    """
    _label, filename = SAMPLES[key]
    return (SAMPLES_DIR / filename).read_text(encoding="utf-8")
