"""The first screen shows subwords (issue 17.1): no box above the text, a size where words are split.

The fraction of split words is computed with the engine (the tokenizer the app
trains, at the size it shows), over every run of letters of the English sample.
"""

from __future__ import annotations

import bisect

import regex
from streamlit.testing.v1 import AppTest

from bpe_core import train_bpe
from tests.conftest import APP, metric, sample
from ui import links
from ui import state_keys as sk

COMMON = ("the", "and", "of", "to", "a", "in", "that", "was", "it", "is")


def split_fraction(tok, text: str) -> float:
    """Share of the text's words (runs of letters) that the tokenizer cuts into two or more tokens."""
    starts = sorted(s.start for s in tok.token_spans(text))
    words = [(m.start(), m.end()) for m in regex.finditer(r"\p{L}+", text)]
    split = sum(bisect.bisect_left(starts, b) > bisect.bisect_right(starts, a) for a, b in words)
    return split / len(words)


def test_first_load_shows_subwords_without_a_box():
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn view
    at.run()
    assert not at.exception, at.exception
    assert not at.info and not at.warning and not at.error  # nothing above the text
    text = sample("english")
    full = train_bpe(text, 1000, ["<|endoftext|>"])
    assert full.max_vocab_size == 1000  # the sample is long enough: training reaches the default size
    size = at.session_state[sk.VOCAB_SIZE]
    assert size == links.FIRST_VIEW_SIZE < full.max_vocab_size  # room to drag both ways
    shown = full.with_vocab_size(size)
    assert metric(at, "Tokens") == f"{len(shown.encode(text)):,}"
    frac = split_fraction(shown, text)
    assert frac >= 1 / 3, frac  # a third or more of the words in pieces (about 0.49)
    assert split_fraction(full, text) < frac  # ... fewer at the full size (about 0.05): dragging right joins them
    for word in COMMON:
        assert len(shown.encode(" " + word)) == 1, word  # common words whole
    assert any("left" in c.value and "right" in c.value for c in at.caption)  # the caption invites dragging


def test_an_early_stop_is_one_quiet_line():
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn view
    at.query_params["size"] = "400"
    at.run()
    at.number_input(key=sk.MAX_VOCAB).set_value(5000).run()  # more than the sample can give
    assert not at.exception
    assert not at.info and not at.warning
    (line,) = [c.value for c in at.caption if "Training stopped at" in c.value]
    assert "of the 5,000 tokens asked for" in line


def test_a_link_with_a_size_keeps_it():
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn view
    at.query_params["size"] = "800"
    at.run()
    assert at.session_state[sk.VOCAB_SIZE] == 800
