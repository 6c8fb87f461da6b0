"""WordPiece on the Playground through Streamlit's AppTest: what is on screen is what the engine says."""

from __future__ import annotations

import re

import pytest

from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS, train_wordpiece
from tests.conftest import html_bodies, metric, sample, token_texts, unmd


def choose_wordpiece(app):
    app.radio(key="algorithm").set_value("wordpiece").run()
    assert not app.exception, app.exception
    return app


def test_choosing_wordpiece_retokenizes_the_sample(app):
    text = sample("english")
    bpe_tokens = metric(app, "Tokens")
    choose_wordpiece(app)
    tok = train_wordpiece(text, 1000, DEFAULT_SPECIAL_TOKENS)
    ids = tok.encode(text)
    assert metric(app, "Tokens") == f"{len(ids):,}" != bpe_tokens
    assert metric(app, "Bytes per token") == f"{len(text.encode()) / len(ids):.2f}"
    body = html_bodies(app)
    assert body.count('class="tk') == len(ids)
    # the coloured tokens show the text as typed; only whitespace is left between them
    shown = token_texts(body)
    assert "".join(shown) == "".join(text.split())
    assert app.slider[0].value == tok.vocab_size == app.slider[0].max
    assert app.slider[0].min == tok.min_vocab_size
    # the sample is long enough for WordPiece's 1,000 tokens too: no early stop, no box
    assert tok.training.stop_reason is None and not app.info


def test_continuations_are_drawn_joined_to_their_word(app):
    text = sample("english")
    choose_wordpiece(app)
    app.slider[0].set_value(300).run()
    assert not app.exception
    view = train_wordpiece(text, 1000).with_vocab_size(300)
    spans = view.token_spans(text)
    assert metric(app, "Tokens") == f"{len(spans):,}"
    body = html_bodies(app)
    # every ## piece is drawn as a continuation of the token before it, without a line break between
    n_cont = sum(1 for s in spans if s.is_continuation)
    classes = re.findall(r'<span class="(tk[^"]*)"', body)
    assert n_cont > 0 and sum("cont" in c.split() for c in classes) == n_cont
    assert '<wbr><span class="tk cont' not in body
    assert "".join(token_texts(body)) == "".join(text.split())
    # every other piece of a word is shaded (issue 32.4): the edge between two pieces shows whatever their colours
    place, expected = 0, []
    for s in spans:
        place = place + 1 if s.is_continuation else 0
        expected.append(place % 2 == 1)
    assert ["alt" in c.split() for c in classes] == expected and any(expected)


def test_wordpiece_sidebar_uses_bert_settings(app):
    choose_wordpiece(app)
    assert app.multiselect(key="wp_special_tokens").value == list(DEFAULT_SPECIAL_TOKENS)
    with pytest.raises(KeyError):
        app.selectbox(key="pattern")  # WordPiece always splits BERT-style: no pattern to choose
    assert any("BERT-style" in c.value for c in app.caption)
    assert app.toggle(key="wp_lowercase").value is False


def test_lowercase_toggle_retrains(app):
    text = sample("english")
    choose_wordpiece(app)
    app.number_input(key="max_vocab").set_value(3000).run()  # more than the sample gives: every word learned
    cased = train_wordpiece(text, 3000)
    assert app.slider[0].max == cased.max_vocab_size < 3000
    app.toggle(key="wp_lowercase").set_value(True).run()
    assert not app.exception
    tok = train_wordpiece(text, 3000, lowercase=True)
    # fewer distinct words once lower-cased ("The" = "the"), so fewer tokens to learn them all
    assert app.slider[0].max == tok.max_vocab_size < cased.max_vocab_size
    app.slider[0].set_value(250).run()
    assert metric(app, "Tokens") == f"{len(tok.with_vocab_size(250).encode(text)):,}"
    # lower-cased tokens are drawn with the original capitals
    shown = token_texts(html_bodies(app))
    assert "".join(shown) == "".join(text.split())


def test_slider_shows_smaller_vocabularies(app):
    text = sample("english")
    choose_wordpiece(app)
    tok = train_wordpiece(text, 1000)
    app.slider[0].set_value(tok.min_vocab_size).run()
    assert not app.exception
    alphabet_only = tok.with_vocab_size(tok.min_vocab_size)
    # no merges: one token per non-space character
    assert metric(app, "Tokens") == f"{len(alphabet_only.encode(text)):,}" == f"{len(''.join(text.split())):,}"


def test_missing_unknown_token_is_reported_and_settings_kept(app):
    choose_wordpiece(app)
    app.multiselect(key="wp_special_tokens").set_value(["[PAD]", "[CLS]"]).run()
    assert not app.exception
    assert any("unknown token '[UNK]'" in unmd(e.value) for e in app.error)
    assert app.multiselect(key="wp_special_tokens").value == ["[PAD]", "[CLS]"]
    assert app.radio(key="algorithm").value == "wordpiece"


def test_switching_back_to_bpe_keeps_its_settings(app):
    app.selectbox(key="pattern").set_value("none").run()
    bpe_tokens = metric(app, "Tokens")
    choose_wordpiece(app)
    app.radio(key="algorithm").set_value("bpe").run()
    assert not app.exception
    assert app.selectbox(key="pattern").value == "none"
    assert app.multiselect(key="special_tokens").value == ["<|endoftext|>"]
    assert metric(app, "Tokens") == bpe_tokens


def test_pasted_markup_is_escaped_under_wordpiece(app):
    text = 'Hi <img src=x onerror="alert(1)"> & <script>alert(2)</script> bye'
    choose_wordpiece(app)
    app.radio(key="source").set_value("Paste").run()
    app.text_area(key="paste_text").input(text).run()
    assert not app.exception
    body = html_bodies(app)
    assert "<script" not in body and "<img" not in body
    tok = train_wordpiece(text, 1000)
    assert metric(app, "Tokens") == f"{len(tok.encode(text)):,}"
    assert "".join(token_texts(body)) == "".join(text.split())


def test_course_sized_vocabulary_can_be_asked_for(app):
    # the sidebar accepts sizes below 256: WordPiece trains to them, BPE explains its minimum
    app.radio(key="algorithm").set_value("wordpiece").run()
    app.number_input(key="max_vocab").set_value(120).run()
    assert not app.exception and not app.error
    app.radio(key="algorithm").set_value("bpe").run()
    assert any("at least 257" in e.value for e in app.error)
    assert app.number_input(key="max_vocab").value == 120
