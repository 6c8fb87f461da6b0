"""Compare with the production tokenizers (issue 18): the picker, the link, unavailable encodings, exact counts.

The counts of the Llama 3 and Mistral v1 columns are checked against the packages' own tokenizers
(``llama_models``' tiktoken-based Tokenizer and ``sentencepiece``), imported here only.
"""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import algorithm_names
from bpe_core.production.encodings import EncodingUnavailable, package_file_path
from bpe_core.production.registry import (
    MISTRAL_V1_FILE,
    PRODUCTION,
    load_production,
    production_families,
)
from tests.app.test_compare import PAGE, pick, table
from tests.conftest import APP, FULL_SIZE, html_bodies, sample, token_texts
from ui import catalogue

RARE = "ሰላም 𝔘𝔫𝔦 똠 naïve  tabs\tand\r\nlines"
"""Ethiopic, mathematical letters and a rare Hangul syllable: Mistral v1 spells them with byte fallback."""


def fresh(query: dict[str, str] | None = None) -> AppTest:
    """A new browser session opened on a link (its query string), on the Compare page."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the trained column drawn on the server
    at.query_params.update({"size": str(FULL_SIZE), **(query or {})})  # the sidebar's tokenizer at its full size
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def views(at) -> dict[str, str]:
    """``{column title: its coloured view's HTML}``."""
    titles = [m.value.strip("*") for m in at.markdown if m.value.startswith("**") and m.value.endswith("**")]
    bodies = [b for b in (h.proto.body for h in at.get("html")) if 'class="bpe-view' in b]
    return dict(zip(titles, bodies))


# ---------------------------------------------------------------------------
# the picker and the link


def test_picker_groups_by_family_and_defaults_to_bpe_gpt2_cl100k():
    at = fresh()
    groups = {b.label: (b.options, b.value) for b in at.button_group}
    assert list(groups) == ["Your own", *production_families()]
    assert list(groups)[1:] == [
        "OpenAI", "Meta", "Mistral", "Google", "Alibaba", "DeepSeek", "BERT / encoders", "Other open models",
    ]  # fmt: skip
    # "Your own" is every registered algorithm (the ALGORITHMS registry, not a fixed list)
    own_labels, own_value = groups["Your own"]
    assert len(own_labels) == len(algorithm_names()) and own_value == ["bpe"]
    for family, specs in production_families().items():
        labels, _value = groups[family]
        assert labels == [s.label for s in specs]
    assert groups["OpenAI"][1] == ["gpt2", "cl100k_base"] and groups["Meta"][1] == [] == groups["Mistral"][1]
    assert list(table(at)) == ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]


def test_link_round_trip_of_the_choice():
    chosen = ["bpe", "o200k_base", "llama3", "mistral_v1"]
    at = fresh({"cmp": ",".join(chosen)})
    assert at.session_state["compare_tokenizers"] == chosen
    assert at.button_group(key="compare_pick_meta").value == ["llama3"]
    rows = table(at)
    assert list(rows) == ["BPE (gpt2) · 1,000", "GPT-4o (o200k_base)", "Llama 3", "Mistral v1 (SentencePiece)"]
    # a change is in the address bar at once (the pills' callback runs before the link is written) ...
    pick(at, ["gpt2", "llama4", "mistral_tekken", "mistral_v1"])
    assert at.query_params["cmp"] == "mistral_v1,gpt2,llama4,mistral_tekken"  # the one kept first, then the new
    shown = table(at)
    # ... and that link, opened in a new session, shows the same columns and counts
    again = fresh({"cmp": at.query_params["cmp"]})
    assert table(again) == shown
    assert list(shown) == ["Mistral v1 (SentencePiece)", "GPT-2 (r50k_base)", "Llama 4", "Mistral Tekken"]
    # an unknown key spoils the list: the default is shown
    default = ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    assert list(table(fresh({"cmp": "gpt2,gpt5"}))) == default


# ---------------------------------------------------------------------------
# unavailable encodings: one line, one fold, everything else shown


def test_unavailable_encodings_are_one_line_and_one_fold(monkeypatch):
    def loader_of(key):
        def unavailable():
            label = PRODUCTION[key].label
            raise EncodingUnavailable(
                f"{label} is not available offline",
                details=f"Tried: the {key} file (ConnectionError: HTTPSConnectionPool ... sha256 ...).",
                how_to_add=f"Put {key}'s file in BPE_PLAYGROUND_ENCODINGS.",
            )

        return unavailable

    for key in ("o200k_base", "llama4"):
        monkeypatch.setitem(PRODUCTION, key, dataclasses.replace(PRODUCTION[key], loader=loader_of(key)))
    load_production.cache_clear()
    try:
        at = fresh({"cmp": "bpe,gpt2,o200k_base,llama4,mistral_v1"})
        assert [w.value for w in at.warning] == [
            "GPT-4o (o200k_base) is not available offline · Llama 4 is not available offline"
        ]
        assert "HTTPSConnectionPool" not in " ".join(w.value for w in at.warning)
        (fold,) = [e for e in at.expander if e.label == "How to add it"]
        assert [t.value for t in fold.text] == [
            "Tried: the o200k_base file (ConnectionError: HTTPSConnectionPool ... sha256 ...).",
            "Tried: the llama4 file (ConnectionError: HTTPSConnectionPool ... sha256 ...).",
        ]
        assert "Put llama4's file in BPE_PLAYGROUND_ENCODINGS." in " ".join(m.value for m in fold.markdown)
        assert list(table(at)) == ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", "Mistral v1 (SentencePiece)"]
        assert len(views(at)) == 3
    finally:
        load_production.cache_clear()


# ---------------------------------------------------------------------------
# exact counts: Llama 3 and Mistral v1 against their packages' own tokenizers


def _word_byte_ranges(text: str) -> list[tuple[int, int]]:
    out = []
    for m in re.finditer(r"\S+", text):
        start = len(text[: m.start()].encode("utf-8"))
        out.append((start, start + len(m.group().encode("utf-8"))))
    return out


def _split_words(text: str, pieces: list[tuple[int, int]]) -> int:
    """Words (byte ranges) touched by two or more of the pieces' byte ranges ``(begin, end)``."""
    n = 0
    for ws, we in _word_byte_ranges(text):
        touching = sum(1 for b, e in pieces if e > b and b < we and e > ws)
        n += touching > 1
    return n


def llama3_reference(text: str) -> tuple[list[int], int]:
    """``(ids, words split)`` from llama_models' own Llama 3 tokenizer."""
    from llama_models.llama3.tokenizer import Tokenizer

    tok = Tokenizer.get_instance()
    ids = tok.encode(text, bos=False, eos=False)
    pieces, pos = [], 0
    for i in ids:
        n = len(tok.model.decode_single_token_bytes(i))
        pieces.append((pos, pos + n))
        pos += n
    assert pos == len(text.encode("utf-8"))
    return ids, _split_words(text, pieces)


def mistral_v1_reference(text: str) -> tuple[list[int], int, int]:
    """``(ids, words split, characters spelt by byte fallback)`` from the ``sentencepiece`` package itself.

    SentencePiece gives each piece its byte range in the text; the byte pieces of one character have empty
    ranges but the last, so each takes the range of the byte piece that ends its character.
    """
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(package_file_path(MISTRAL_V1_FILE)))
    proto = sp.encode(text, return_type="proto")
    ids = [p.id for p in proto.pieces]
    assert ids == sp.encode(text)
    ranges = [(p.begin, p.end) for p in proto.pieces]
    fallback_chars = 0
    for k in range(len(ranges) - 1, -1, -1):
        p = proto.pieces[k]
        if p.piece.startswith("<0x") and p.begin == p.end and k + 1 < len(ranges):
            nxt = proto.pieces[k + 1]
            if nxt.piece.startswith("<0x"):
                ranges[k] = ranges[k + 1]
        if p.piece.startswith("<0x") and p.end > p.begin and len(p.surface.encode("utf-8")) > 1:
            fallback_chars += 1
    return ids, _split_words(text, ranges), fallback_chars


@pytest.mark.parametrize("which", ["multilingual", "rare"])
def test_llama3_and_mistral_v1_columns_equal_their_packages(which):
    text = sample("multilingual") if which == "multilingual" else RARE
    at = fresh({"cmp": "llama3,mistral_v1", "cmpon": "other"})
    at.text_area(key="compare_text").input(text).run()
    assert not at.exception, at.exception
    rows = table(at)
    n_bytes, n_words = len(text.encode("utf-8")), len(text.split())
    llama_ids, llama_split = llama3_reference(text)
    sp_ids, sp_split, fallback_chars = mistral_v1_reference(text)
    for label, ids, split, vocab in (
        ("Llama 3", llama_ids, llama_split, 128256),
        ("Mistral v1 (SentencePiece)", sp_ids, sp_split, 32000),
    ):
        row = rows[label]
        assert row["Tokens"] == len(ids), label
        assert row["Distinct tokens"] == len(set(ids)), label
        assert row["Vocab size"] == vocab
        assert row["Bytes/token"] == pytest.approx(n_bytes / len(ids))
        assert row["Chars/token"] == pytest.approx(len(text) / len(ids))
        assert row["Tokens/word"] == pytest.approx(len(ids) / n_words)
        assert row["Words split"] == split, label
        assert row["Vocab used %"] == pytest.approx(100 * len(set(ids)) / vocab)
        assert row["Unknown"] == 0 and row["Special tokens"] == 0
    # the coloured views: one box per token; Mistral v1's byte pieces grouped under their character
    shown = views(at)
    assert len(token_texts(shown["Llama 3"])) == len(llama_ids)
    mistral = shown["Mistral v1 (SentencePiece)"]
    assert len(token_texts(mistral)) == len(sp_ids)
    assert mistral.count('class="bgrp"') == fallback_chars
    if which == "rare":
        assert fallback_chars == 6  # ሰ ላ (ም is a piece), 𝔘 𝔫 𝔦, 똠
        assert '<span class="bchar">ሰ</span>' in mistral
        assert "&lt;0xE1&gt;" in mistral  # the bytes under it, in SentencePiece's own notation


class _Tokens(HTMLParser):
    """Each coloured token's classes and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.tokens = 0, []

    def handle_starttag(self, tag, attrs):
        cls = (dict(attrs).get("class") or "").split()
        if tag == "span" and "tk" in cls:
            self.depth = 1
            self.tokens.append((cls, ""))
        elif tag == "span" and self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag == "span" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            cls, t = self.tokens[-1]
            self.tokens[-1] = (cls, t + data)


def test_sentencepiece_space_marker_is_the_views_whitespace_mark():
    text = "世界 and the sea"
    at = fresh({"cmp": "mistral_v1,gpt2", "cmpon": "other"})
    at.text_area(key="compare_text").input(text).run()
    p = _Tokens()
    p.feed(views(at)["Mistral v1 (SentencePiece)"])
    tok = load_production("mistral_v1")
    assert [tok.describe_token(i) for i in tok.encode(text)] == [" ", "世", "界", " and", " the", " sea"]
    # ▁ is drawn as the view's space mark "·"; the dummy ▁ before the first word covers no character: marked "zw"
    assert [t for _c, t in p.tokens] == ["·", "世", "界", "·and", "·the", "·sea"]
    assert [("zw" in c) for c, _t in p.tokens] == [True] + [False] * 5
    assert "▁" not in html_bodies(at)


def test_measure_is_the_engines_for_every_production_encoding():
    from bpe_core.analysis.metrics import compute_metrics

    text = sample("multilingual")[:3000] + RARE
    for key in PRODUCTION:
        tok = load_production(key)
        col = catalogue.build_columns([catalogue.production_entry(key)], None, None)[0]
        got = catalogue.measure(col.built.cache_key, text, col.built)
        assert got == compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id), key


# ---------------------------------------------------------------------------
# every algorithm side by side (issue 29)


def test_trained_wordpiece_and_unigram_beside_bert_and_xlmr_with_badges():
    """The learner's WordPiece and Unigram beside BERT's and XLM-R's: a badge per column, exact counts."""
    try:
        bert, xlmr = load_production("bert"), load_production("xlmr")
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))
    at = fresh({"cmp": "bpe,wordpiece,unigram,bert,xlmr"})
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert badges == [
        ":gray-badge[Byte-level BPE]", ":gray-badge[WordPiece]", ":gray-badge[Unigram (SentencePiece)]",
        ":gray-badge[WordPiece]", ":gray-badge[Unigram (SentencePiece)]",
    ]  # fmt: skip
    rows = table(at)
    text = sample("english")
    assert rows["BERT (bert-base-uncased)"]["Tokens"] == len(bert.encode(text))
    assert rows["XLM-RoBERTa"]["Tokens"] == len(xlmr.encode(text))
    assert list(views(at))[3:] == ["BERT (bert-base-uncased)", "XLM-RoBERTa"]
