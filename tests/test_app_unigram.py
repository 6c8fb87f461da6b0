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
