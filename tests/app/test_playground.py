"""The Playground page through Streamlit's AppTest: what is on screen is what the engine says."""

from __future__ import annotations

import html

from bpe_core import train_bpe
from tests.conftest import html_bodies, metric, sample, token_texts, unmark_whitespace


def expected_tokenizer(text: str, vocab: int = 1000, specials=("<|endoftext|>",), pattern: str = "gpt2"):
    return train_bpe(text, vocab, specials, pattern)


def test_sample_loads_tokenized(app):
    text = sample("english")
    tok = expected_tokenizer(text)
    assert metric(app, "Tokens") == f"{len(tok.encode(text)):,}"
    assert metric(app, "Characters") == f"{len(text):,}"
    assert metric(app, "Bytes (UTF-8)") == f"{len(text.encode()):,}"
    assert metric(app, "Bytes per token") == f"{len(text.encode()) / len(tok.encode(text)):.2f}"
    body = html_bodies(app)
    assert body.count('class="tk') == len(tok.encode(text))
    assert app.slider[0].value == tok.vocab_size == app.slider[0].max


def test_slider_changes_token_count_without_retraining(app):
    text = sample("english")
    tok = expected_tokenizer(text)
    before = metric(app, "Tokens")
    app.slider[0].set_value(300).run()
    assert not app.exception
    assert metric(app, "Tokens") == f"{len(tok.with_vocab_size(300).encode(text)):,}" != before
    assert html_bodies(app).count('class="tk') == len(tok.with_vocab_size(300).encode(text))
    app.slider[0].set_value(256 + 1).run()  # no merges at all: one token per byte
    assert metric(app, "Tokens") == f"{len(text.encode()):,}"


def test_pasted_text_is_tokenized_and_escaped(app):
    text = "Pasted <b>bold</b> & <script>alert(1)</script> text, pasted twice: pasted text."
    app.radio(key="source").set_value("Paste").run()
    assert "Paste some text" in app.info[0].value
    app.text_area(key="paste_text").input(text).run()
    assert not app.exception
    tok = expected_tokenizer(text)
    assert metric(app, "Tokens") == f"{len(tok.encode(text)):,}"
    body = html_bodies(app)
    assert "<script" not in body and "<b>" not in body
    assert html.escape("<") in body
    # what the reader sees, token by token, is exactly the pasted text
    shown = token_texts(body)
    assert len(shown) == len(tok.encode(text))
    assert unmark_whitespace("".join(shown)) == text


def test_choosing_a_sample_and_pattern_retokenizes(app):
    app.selectbox(key="sample").set_value("python").run()
    app.selectbox(key="pattern").set_value("none").run()
    text = sample("python")
    tok = expected_tokenizer(text, pattern="none")
    assert metric(app, "Tokens") == f"{len(tok.encode(text)):,}"


def test_vocab_below_base_alphabet_is_reported_and_settings_kept(app):
    app.multiselect(key="special_tokens").set_value(["<|endoftext|>", "<|pad|>"]).run()
    app.number_input(key="max_vocab").set_value(257).run()
    assert not app.exception
    assert any("at least 258" in e.value for e in app.error)
    assert app.number_input(key="max_vocab").value == 257
    assert app.multiselect(key="special_tokens").value == ["<|endoftext|>", "<|pad|>"]


def _delta(at, label: str) -> str | None:
    (m,) = [m for m in at.metric if m.label == label]
    return m.proto.delta or None


def test_counts_say_what_their_numbers_mean(app):
    """Issue 32.5: no "-0% vs bytes" at size 257 (no merges: as many tokens as bytes), and the two per-token cards
    say why they are equal on ASCII text (one byte per character)."""
    text = sample("english")
    n_bytes = len(text.encode())
    tokens = len(expected_tokenizer(text).encode(text))
    assert _delta(app, "Tokens") == f"{round((1 - tokens / n_bytes) * 100)}% fewer than bytes"
    assert text.isascii() and metric(app, "Bytes per token") == metric(app, "Characters per token")
    assert _delta(app, "Characters per token") == "= bytes per token: every character is 1 byte"
    app.slider[0].set_value(257).run()
    assert metric(app, "Tokens") == f"{n_bytes:,}" and _delta(app, "Tokens") == "as many as bytes"
    app.selectbox(key="sample").set_value("multilingual").run()
    multilingual = sample("multilingual")
    assert not multilingual.isascii() and _delta(app, "Characters per token") is None
    assert metric(app, "Bytes per token") != metric(app, "Characters per token")
