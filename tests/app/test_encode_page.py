"""The "Encode step by step" page through AppTest: its final tokens are the encoders' own."""

from __future__ import annotations

import html
import itertools
import re

import pytest
import tiktoken

from bpe_core import train_bpe
from bpe_core.production.encodings import ENCODINGS, EncodingUnavailable, load_mergeable_ranks
from tests.conftest import html_bodies, sample

IDS = re.compile(r"ids <code>\[([0-9, …]*)\]</code>")


def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken itself, on the verified ranks: an encoder independent of ours."""
    spec = ENCODINGS[name]
    return tiktoken.Encoding(
        f"test-{name}", pat_str=spec.pattern, mergeable_ranks=load_mergeable_ranks(name), special_tokens={}
    )


def shown_ids(at) -> list[list[int]]:
    """The final ids each column shows, in column order."""
    return [[int(x) for x in m.group(1).split(", ")] for m in IDS.finditer(html_bodies(at))]


@pytest.fixture
def encode_page(app):
    app.switch_page("app_pages/encode.py").run()
    assert not app.exception, app.exception
    return app


@pytest.mark.parametrize("word", ["tokenization", "naïve café", "東京タワー 🙂", "don't 2024!"])
def test_final_tokens_equal_the_encoders(encode_page, word):
    encode_page.text_input(key="encode_word").input(word).run()
    assert not encode_page.exception
    trained, gpt2, cl100k = shown_ids(encode_page)
    assert trained == train_bpe(sample("english"), 1000, ["<|endoftext|>"]).encode(word)
    assert gpt2 == tiktoken_encoding("gpt2").encode(word)
    assert cl100k == tiktoken_encoding("cl100k_base").encode(word)


def chips_per_line(body: str) -> list[list[list[str]]]:
    """For each pre-token box (in page order), the chip texts of each of its lines."""
    boxes = []
    for box in body.split('<div class="enc-piece">')[1:]:
        lines = box.split('<div class="enc-line">')[1:]
        boxes.append([[html.unescape(t) for t in re.findall(r'<span class="enc-tok[^"]*">([^<]*)</span>', ln)]
                      for ln in lines])  # fmt: skip
    return boxes


def test_steps_start_from_bytes_and_end_in_the_tokens(encode_page):
    # three columns, one pre-token each ("tokenization"): box 0 trained, 1 GPT-2, 2 cl100k
    word = "tokenization"
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    boxes = chips_per_line(html_bodies(encode_page))
    assert len(boxes) == 3
    finals = [
        [tok.decode([i]) for i in tok.encode(word)],
        [tiktoken_encoding("gpt2").decode([i]) for i in tiktoken_encoding("gpt2").encode(word)],
        [tiktoken_encoding("cl100k_base").decode([i]) for i in tiktoken_encoding("cl100k_base").encode(word)],
    ]
    for lines, final in zip(boxes, finals):
        assert lines[0] == list(word)  # the starting line: one chip per byte (all ASCII here)
        assert lines[-1] == final
        # each line merges, so each has fewer chips than the one before
        assert all(len(b) < len(a) for a, b in itertools.pairwise(lines))
    counts = [re.fullmatch(r"1 pre-token, (\d+) steps?", c.value) for c in encode_page.caption]
    assert [int(m.group(1)) for m in counts if m] == [len(b) - 1 for b in boxes]


def test_vocab_slider_shrinks_the_trained_tokenizer(encode_page):
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    encode_page.slider(key="vocab_size").set_value(300).run()
    trained = shown_ids(encode_page)[0]
    assert trained == tok.with_vocab_size(300).encode("tokenization")
    assert len(trained) > len(tok.encode("tokenization"))


def test_user_text_is_escaped(encode_page):
    encode_page.text_input(key="encode_word").input("<img src=x onerror=alert(1)>").run()
    body = html_bodies(encode_page)
    assert "<img" not in body and "&lt;img" in body


def test_unavailable_reference_is_reported_and_the_rest_shown(encode_page, monkeypatch):
    import ui.steps_view

    def unavailable(key):
        raise EncodingUnavailable(
            f"{key} is not available offline", details=f"Tried: {key}'s file (test).", how_to_add="Install it (test)."
        )

    monkeypatch.setattr(ui.steps_view, "load_production", unavailable)
    ui.steps_view.production_tokenizer.clear()  # the fixture's first run cached the real ones
    encode_page.text_input(key="encode_word").input("hello").run()
    assert not encode_page.exception
    # one line for the page, the longer story in one fold
    assert [w.value for w in encode_page.warning] == [
        "gpt2 is not available offline · cl100k_base is not available offline"
    ]
    (fold,) = [e for e in encode_page.expander if e.label == "How to add it"]
    assert [t.value for t in fold.text] == ["Tried: gpt2's file (test).", "Tried: cl100k_base's file (test)."]
    assert "Install it (test)." in " ".join(m.value for m in fold.markdown)
    (trained,) = shown_ids(encode_page)
    assert trained == train_bpe(sample("english"), 1000, ["<|endoftext|>"]).encode("hello")


def test_every_production_encoding_is_offered_and_ends_in_its_packages_ids(encode_page):
    import sentencepiece
    from llama_models.llama3.tokenizer import Tokenizer as Llama3

    from bpe_core.production.encodings import package_file_path
    from bpe_core.production.registry import MISTRAL_V1_FILE, PRODUCTION

    assert set(encode_page.multiselect(key="encode_tokenizers").options) >= {
        "Trained on your text",
        *(f"{spec.family} · {spec.label}" for spec in PRODUCTION.values()),
    }
    word = "naïve ሰላም 2024"  # Ethiopic: Mistral v1 has no piece for two of its characters (byte fallback)
    encode_page.multiselect(key="encode_tokenizers").set_value(["llama3", "mistral_v1"]).run()
    encode_page.text_input(key="encode_word").input(word).run()
    assert not encode_page.exception
    llama, mistral = shown_ids(encode_page)
    assert llama == Llama3.get_instance().encode(word, bos=False, eos=False)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(package_file_path(MISTRAL_V1_FILE)))
    assert mistral == sp.encode(word)
    body = html.unescape(html_bodies(encode_page))
    assert "byte fallback: 'ሰ' is not a piece: its 3 UTF-8 byte(s) as byte pieces" in body
    assert ">&lt;0xE1&gt;<" in html_bodies(encode_page)  # a byte piece's chip
    assert any(c.value.startswith("3 units, ") for c in encode_page.caption)  # "naïve", " ሰላም", " 2024"


def test_no_text_problem_keeps_the_references(encode_page):
    encode_page.radio(key="source").set_value("Paste").run()
    assert not encode_page.exception
    assert any("Paste some text" in i.value for i in encode_page.info)
    gpt2, _cl100k = shown_ids(encode_page)
    assert gpt2 == tiktoken_encoding("gpt2").encode("tokenization")


def test_wordpiece_shows_the_greedy_longest_match_steps(encode_page):
    from bpe_core.textbook.wordpiece import encode_word as naive_encode_word
    from bpe_core.wordpiece import train_wordpiece

    encode_page.radio(key="algorithm").set_value("wordpiece").run()
    encode_page.text_input(key="encode_word").input("tokenization naïve").run()
    assert not encode_page.exception
    tok = train_wordpiece(sample("english"), 1000)
    trained, gpt2, _cl100k = shown_ids(encode_page)
    assert trained == tok.encode("tokenization naïve")
    assert gpt2 == tiktoken_encoding("gpt2").encode("tokenization naïve")
    vocab = {s for i, s in tok.vocab.items() if i not in tok.special_tokens.values()}
    boxes = chips_per_line(html_bodies(encode_page))
    # the first two boxes are the WordPiece column's words; each line takes one more piece, the course's
    # encode_word gives the last line (and "naïve": this English text has no "ï", so the word is [UNK])
    for word, lines in zip(["tokenization", "naïve"], boxes[:2]):
        final = naive_encode_word(word, vocab)
        assert lines[0] == [] and lines[-1] == final
    assert [len(line) for line in boxes[0]] == list(range(len(boxes[0])))
    assert boxes[1][-1] == ["[UNK]"]
    body = html_bodies(encode_page)
    assert '<span class="enc-miss">tokenizatio</span>' in body  # a candidate tried and missed, struck out
    steps = len(boxes[0]) + len(boxes[1]) - 2  # every line but the two starting lines
    assert f"2 words, {steps} steps" in [c.value for c in encode_page.caption]


@pytest.mark.parametrize("mode", ["id", "rank"])
def test_chips_follow_the_colour_mode(encode_page, mode):
    from ui import render

    encode_page.radio(key="colour_mode").set_value(mode).run()
    encode_page.text_input(key="encode_word").input("tokenization").run()
    assert not encode_page.exception
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    final = tok.encode("tokenization")
    top = tok.vocab_size - tok.min_vocab_size - 1
    want = [render.id_colour(i) if mode == "id" else render.rank_colour(tok.rank_of(i), top) for i in final]
    body = html_bodies(encode_page)
    # the trained column's last line: its chips in order, with their backgrounds
    first_column = body.split('<div class="enc-steps">')[1]
    lines = first_column.split('<div class="enc-line">')
    chips = re.findall(r'class="enc-tok[^"]*" style="background:(#[0-9a-f]{6})"', lines[-1])
    assert chips == want


def test_bert_steps_are_greedy_longest_match_and_xlmr_steps_are_lattices(encode_page):
    """BERT drawn as WordPiece (word by word, the longer candidates struck out), XLM-R as Unigram (lattices)."""
    from bpe_core.production.registry import load_production
    from bpe_core.textbook.wordpiece import encode_word as naive_encode_word

    try:
        bert, xlmr = load_production("bert"), load_production("xlmr")
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))
    word = "Tokenization naïvely"
    encode_page.multiselect(key="encode_tokenizers").set_value(["bert", "xlmr"]).run()
    encode_page.text_input(key="encode_word").input(word).run()
    assert not encode_page.exception
    assert shown_ids(encode_page) == [bert.encode(word), xlmr.encode(word)]
    boxes = chips_per_line(html_bodies(encode_page))
    vocab = set(bert.vocab)
    # BERT's two words (normalized: "tokenization", "naively"), each line one more piece; the course's
    # encode_word (on the same vocabulary) gives the last line
    for normalized, lines in zip(["tokenization", "naively"], boxes[:2]):
        assert lines[0] == [] and lines[-1] == naive_encode_word(normalized, vocab)
    assert "2 words" in " ".join(c.value for c in encode_page.caption)
    body = html.unescape(html_bodies(encode_page))
    assert "BERT's normalizer made 'naïvely' 'naively'" in body
    assert "▁Token" in body and "▁na" in body  # XLM-R's lattice arcs (pieces with their ▁)
