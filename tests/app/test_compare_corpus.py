"""Compare on a long text: figures by counted distinct pieces, cached per text and tokenizer, with progress and Cancel.

``ui.catalogue.CORPUS_MIN_CHARS`` is set to 0 here, so the samples take the path a large upload takes
(:func:`bpe_core.analysis.corpus.measure_corpus` under a progress panel); every figure is checked against
:func:`bpe_core.analysis.metrics.compute_metrics` on the whole text's ``token_spans`` and tiktoken's own ids.
"""

from __future__ import annotations

import pytest
import streamlit as st

import ui.catalogue
import ui.compare
from bpe_core import train_bpe
from bpe_core.analysis.metrics import compute_metrics
from bpe_core.production.registry import load_production
from tests.app.test_compare import PAGE, pick, table, view_headers
from tests.conftest import sample
from ui import state_keys as sk

PRODUCTION_KEYS = ("gpt2", "cl100k_base", "mistral_v1", "bert", "xlmr")
"""Byte-level BPE, SentencePiece BPE with byte fallback, WordPiece with [UNK], Unigram (the picker's order)."""

TEXT = sample("multilingual") + "\n<|endoftext|> naïve 🙂 [UNK] 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\n" + sample("english")


@pytest.fixture(scope="module", autouse=True)
def _corpus_kernels_warm():
    """The corpus kernels compiled before the first script run, as the server's warm-up has them (``ui.warmup``).

    AppTest runs without the warm-up; on a fresh checkout the first corpus measurement would otherwise compile
    them inside a script run and could pass AppTest's 60 s limit on a slow machine (CI: 54 s, then over 60 s).
    """
    from bpe_core.analysis import corpus_kernel
    from bpe_core.analysis.corpus import measure_corpus
    from bpe_core.counting import unit_kernel

    unit_kernel.warm()
    corpus_kernel.warm()
    measure_corpus(TEXT[:2000], [load_production(k) for k in dict.fromkeys(("gpt2", "cl100k_base", *PRODUCTION_KEYS))])


@pytest.fixture
def corpus_path(monkeypatch):
    """Every text takes the corpus path; returns the list of ``progress`` reports ``(phase, done, total)`` seen."""
    monkeypatch.setattr(ui.catalogue, "CORPUS_MIN_CHARS", 0)
    seen: list[tuple[str, int, int]] = []
    real = ui.catalogue.measure_corpus

    def recording(source, tokenizers, **kw):
        progress = kw.get("progress")

        def report(phase, done, total):
            seen.append((phase, done, total))
            if progress is not None:
                progress(phase, done, total)

        return real(source, tokenizers, **{**kw, "progress": report})

    monkeypatch.setattr(ui.catalogue, "measure_corpus", recording)
    return seen


def other_text(at, text: str):
    at.radio(key=sk.COMPARE_SOURCE).set_value("Other text").run()
    return at.text_area(key=sk.COMPARE_TEXT).input(text).run()


def test_corpus_figures_equal_the_whole_text_figures(app, corpus_path, tiktoken_official):
    app.switch_page(PAGE).run()
    pick(app, ["bpe", *PRODUCTION_KEYS])
    other_text(app, TEXT)
    assert not app.exception, app.exception
    assert {phase for phase, _, _ in corpus_path} == {"count", "split", "encode"}  # measured on the corpus path
    rows = table(app)
    bpe = train_bpe(sample("english"), 1000, ["<|endoftext|>"])  # the sidebar's tokenizer, trained on its text
    toks = {f"BPE (gpt2) · {bpe.vocab_size:,}": bpe} | {
        load_production(k).name: load_production(k) for k in PRODUCTION_KEYS
    }
    assert list(rows) == list(toks)
    for label, tok in toks.items():
        want = compute_metrics(TEXT, tok.token_spans(TEXT), tok.vocab_size, tok.unknown_id)
        row = rows[label]
        assert row["Tokens"] == want.tokens, label
        assert row["Words split"] == want.words_split, label
        assert row["Distinct tokens"] == want.distinct_tokens, label
        assert row["Special tokens"] == want.special_tokens, label
        assert row["Unknown"] == want.unknown_tokens, label
        assert row["Byte fallback"] == want.byte_fallback_tokens, label
        assert row["Bytes/token"] == pytest.approx(want.bytes_per_token, rel=1e-12)
        assert row["Tokens/word"] == pytest.approx(want.fertility, rel=1e-12)
    ids = tiktoken_official("cl100k_base").encode(TEXT, allowed_special="all")
    assert rows["GPT-4 (cl100k_base)"]["Tokens"] == len(ids)
    assert rows["BERT (bert-base-uncased)"]["Unknown"] > 0 and rows["Mistral v1 (SentencePiece)"]["Byte fallback"] > 0
    assert view_headers(app) == list(rows)  # the coloured columns still drawn, one per tokenizer


def test_a_second_visit_measures_nothing(app, corpus_path, monkeypatch):
    app.switch_page(PAGE).run()
    other_text(app, TEXT)
    before = table(app)
    assert corpus_path

    def fail(*_a, **_k):
        raise AssertionError("measured again")

    monkeypatch.setattr(ui.catalogue, "measure_corpus", fail)
    app.switch_page("app_pages/playground.py").run()
    app.switch_page(PAGE).run()  # cached per (text digest, tokenizer): nothing measured
    assert not app.exception, app.exception
    assert table(app) == before


def test_cancel_keeps_the_previous_view_and_the_page_usable(app, corpus_path, monkeypatch):
    app.switch_page(PAGE).run()
    other_text(app, TEXT)
    before = table(app)
    assert len(before) == 3
    real = ui.catalogue.measure_corpus

    def cancelled(source, tokenizers, **kw):
        kw["progress"]("count", 0, 1)
        request = st.session_state[sk.COMPARE_MEASURE_CANCELLED] = pending[-1]  # what the Cancel button's callback does
        assert request[2] == ("prod|bert",)
        st.stop()  # the run ends at the click; Streamlit reruns the page

    pending: list[tuple] = []
    record = ui.compare.measure_request
    monkeypatch.setattr(ui.compare, "measure_request", lambda b, t: pending.append(record(b, t)) or pending[-1])
    monkeypatch.setattr(ui.catalogue, "measure_corpus", cancelled)
    pick(app, ["bpe", "gpt2", "cl100k_base", "bert"])
    assert not app.exception, app.exception
    monkeypatch.setattr(ui.catalogue, "measure_corpus", real)
    app.run()  # the rerun after the click
    assert not app.exception, app.exception
    assert any("was cancelled" in w.value and "previous figures" in w.value for w in app.warning)
    assert table(app) == before  # the previous view, as it was
    assert app.session_state[sk.COMPARE_TOKENIZERS] == ["bpe", "gpt2", "cl100k_base", "bert"]  # the choice kept
    assert app.text_area(key=sk.COMPARE_TEXT).value == TEXT
    app.button(key=sk.COMPARE_MEASURE_AGAIN).click().run()
    assert not app.exception, app.exception
    rows = table(app)
    assert list(rows) == [*before, "BERT (bert-base-uncased)"] and all(rows[k] == v for k, v in before.items())


def test_an_engine_error_says_why_and_keeps_the_previous_view(app, corpus_path, monkeypatch):
    app.switch_page(PAGE).run()
    other_text(app, TEXT)
    before = table(app)

    def refuse(*_a, **_k):
        raise ValueError("the text is not valid UTF-8: byte 0xE9 at offset 3")

    monkeypatch.setattr(ui.catalogue, "measure_corpus", refuse)
    other_text(app, "café <b>not markup</b>")
    assert not app.exception, app.exception
    assert any("Cannot measure this text" in e.value and "0xE9" in e.value for e in app.error)
    assert any("not for this text" in w.value for w in app.warning)
    assert table(app) == before
    assert app.text_area(key=sk.COMPARE_TEXT).value == "café <b>not markup</b>"  # the user's text stays as typed


@pytest.mark.parametrize("text", [" \n\t  \n", "x", "🙂" * 3000, "a" * 20_000 + " b", "<|endoftext|>" * 50])
def test_adversarial_texts_on_the_corpus_path(app, corpus_path, text):
    app.switch_page(PAGE).run()
    pick(app, ["bpe", "gpt2", "bert", "mistral_v1"])
    other_text(app, text)
    assert not app.exception, app.exception
    rows = table(app)
    for key in ("gpt2", "bert", "mistral_v1"):
        tok = load_production(key)
        want = compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id)
        got = rows[tok.name]
        assert (got["Tokens"], got["Words split"], got["Distinct tokens"]) == (
            want.tokens,
            want.words_split,
            want.distinct_tokens,
        ), (key, text[:20])
        assert (got["Unknown"], got["Byte fallback"], got["Special tokens"]) == (
            want.unknown_tokens,
            want.byte_fallback_tokens,
            want.special_tokens,
        ), (key, text[:20])


def test_special_note_from_the_figures_lists_what_counting_every_string_lists():
    from tests.app.test_charts_compare import settings_for

    text = TEXT + " <|im_start|>user [CLS] x [SEP] <s> </s> <|endoftext|><|fim_prefix|>"
    keys = ["bpe", "gpt2", "qwen", "bert", "mistral_v1", "xlmr", "llama3"]
    columns = ui.catalogue.build_columns(
        [ui.catalogue.entries()[k] for k in keys], settings_for(sample("english")), None
    )
    metrics = ui.catalogue.measure_all([c.built for c in columns], text)
    note = ui.compare.special_tokens_note(text, columns, metrics)
    assert note == ui.compare.special_tokens_note(text, columns)  # every special string of every column counted
    assert "&lt;|im_start|&gt;</code> occurs 1×" in note and "[CLS]</code> occurs 1×" in note
