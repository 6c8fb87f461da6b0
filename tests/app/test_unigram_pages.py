"""Unigram on every page through Streamlit's AppTest: no exception, and what is shown is the engine's."""

from __future__ import annotations

import pytest

from bpe_core.unigram import train_unigram
from tests.conftest import html_bodies, metric, sample

PAGES = ["merges", "compare", "insights", "encode"]


@pytest.fixture
def uni(app):
    app.radio(key="algorithm").set_value("unigram").run()
    assert not app.exception, app.exception
    return app


def test_choosing_unigram_trains_it_with_sentencepiece_words(uni):
    text = sample("english")
    assert uni.selectbox(key="pattern").value == "sentencepiece"
    tok = train_unigram(text, 1000)
    assert uni.slider[0].value == tok.vocab_size == uni.slider[0].max
    assert uni.slider[0].min == tok.min_vocab_size
    assert metric(uni, "Tokens") == f"{len(tok.encode(text)):,}"
    assert "pruning round" in uni.slider[0].help


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_with_unigram(uni, page):
    uni.switch_page(f"app_pages/{page}.py").run()
    assert not uni.exception, uni.exception
    assert not uni.error, [e.value for e in uni.error]


def test_merges_page_is_the_pruning_story(uni):
    uni.switch_page("app_pages/merges.py").run()
    tok = train_unigram(sample("english"), 1000)
    slider = uni.slider(key="merge_step")
    assert slider.label == "Pruning round" and slider.max == len(tok.trace)
    slider.set_value(1).run()
    assert not uni.exception
    body = html_bodies(uni)
    r = tok.trace[0]
    assert f"Pruning round {r.round}" in body and f"{r.size_before:,} → {r.size_after:,}" in body


def test_encode_page_draws_the_lattice(uni):
    uni.switch_page("app_pages/encode.py").run()
    uni.text_input(key="encode_word").set_value("tokenization").run()
    assert not uni.exception
    body = html_bodies(uni)
    tok = train_unigram(sample("english"), 1000)
    (w,) = tok.encode_steps("tokenization")
    assert body.count('class="lat-arc') == len(w.arcs) and "best path highlighted" in body


def test_merges_page_plays_the_pruning_in_the_browser(uni):
    """Not server-drawn: the browser's player (ui.live_view) draws the card and the text; the server's panels
    follow the step the player reports (written to ``merge_step`` by its callback)."""
    tok = train_unigram(sample("english"), 1000)
    uni.session_state["server_view"] = False
    uni.switch_page("app_pages/merges.py").run()
    assert not uni.exception, uni.exception
    assert "**Kept after step 1**" in "\n".join(m.value for m in uni.markdown)  # the page opens at step 1
    uni.session_state["server_view"] = False  # (a run puts the conftest's value back)
    uni.session_state["merge_step"] = 3
    uni.run()
    assert not uni.exception, uni.exception
    words = "\n".join(m.value for m in uni.markdown)
    r = tok.trace[2]
    assert f"**Removed by round {r.round}**" in words
    assert f"**Kept after step 3** ({r.size_after:,} tokens of vocabulary" in words
    assert not any(s.key == "merge_step" for s in uni.slider)  # no server slider: the player has its own
