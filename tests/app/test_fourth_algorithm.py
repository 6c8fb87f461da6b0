"""A fourth algorithm, registered from two modules of its own, on every page: one place per algorithm.

The toy (:mod:`tests.toy.chars`: character-level tokens, training keeps the most frequent characters;
:mod:`tests.toy.chars_view`: its screen side) touches no other file.  If a page or a ``ui`` module kept a
table keyed by algorithm names, or switched on a tokenizer's class, the toy would fall through it here.
"""

from __future__ import annotations

from collections import Counter

import pytest

from bpe_core import algorithm_names
from bpe_core.interface import Tokenizer, TrainedTokenizer, TrainingSpec
from tests.conftest import html_bodies, metric, sample
from tests.toy import chars, chars_view
from ui.insights_tabs import VIEWS as INSIGHTS_TABS

TEXT = sample("english")
SIZE = 40


@pytest.fixture
def toy():
    chars.register()
    chars_view.register()
    try:
        yield
    finally:
        chars_view.unregister()
        chars.unregister()
    assert chars.NAME not in algorithm_names()


@pytest.fixture
def app_with_toy(toy, app):
    app.radio(key="algorithm").set_value(chars.NAME).run()
    app.number_input(key="max_vocab").set_value(SIZE).run()
    assert not app.exception, app.exception
    return app


def test_the_toy_trains_through_the_registry(toy):
    tok = TrainingSpec(chars.NAME, SIZE, special_tokens=(chars.UNK,)).train(TEXT)
    assert isinstance(tok, Tokenizer) and isinstance(tok, TrainedTokenizer)
    # an independent count: the most frequent characters, ties by code point
    want = [c for c, _n in sorted(Counter(TEXT).items(), key=lambda kv: (-kv[1], kv[0]))][: SIZE - 1]
    assert [tok.describe_token(i) for _r, i in tok.learned_tokens()] == want
    assert tok.decode(tok.encode("the cat")) == "the cat"
    small = tok.with_vocab_size(3)
    assert small.decode(small.encode("the")) == "".join(c if c in want[:2] else chars.UNK for c in "the")


def test_the_playground_draws_it(app_with_toy):
    at = app_with_toy
    tok = chars.train_chars(TEXT, SIZE)
    assert at.slider[0].max == tok.max_vocab_size and at.slider[0].min == tok.min_vocab_size
    assert metric(at, "Tokens") == f"{len(tok.encode(TEXT)):,}"
    assert "character #1" in html_bodies(at)  # its own rank words in the hover
    assert not at.error, [e.value for e in at.error]


def test_the_merges_page_says_it_has_no_story(app_with_toy):
    at = app_with_toy
    at.switch_page("app_pages/merges.py").run()
    assert not at.exception, at.exception
    assert any("does not show Characters" in i.value for i in at.info)


def test_compare_shows_it_beside_a_production_encoding(app_with_toy):
    at = app_with_toy
    at.session_state["compare_tokenizers"] = [chars.NAME, "gpt2"]
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    tok = chars.train_chars(TEXT, SIZE)
    body = html_bodies(at)
    assert f'data-value="{len(tok.encode(TEXT))}"' in body  # its tokens in the figures table


@pytest.mark.parametrize("tab", list(INSIGHTS_TABS))
def test_every_insights_tab_renders_it(app_with_toy, tab):
    at = app_with_toy
    at.session_state["ins_tab"] = INSIGHTS_TABS[tab]
    at.switch_page("app_pages/insights.py").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_encode_step_by_step_draws_it(app_with_toy):
    at = app_with_toy
    at.switch_page("app_pages/encode.py").run()
    at.text_input(key="encode_word").set_value("tokens").run()
    assert not at.exception, at.exception
    assert "one token per character" in html_bodies(at)
