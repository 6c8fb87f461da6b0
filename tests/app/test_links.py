"""Shareable links: settings <-> query string, bad values ignored, and the round trip through AppTest."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from bpe_core import train_bpe
from bpe_core.pretokenize import CL100K_PATTERN
from tests.conftest import APP, metric, sample
from ui import links
from ui.inputs import URL_TEXT_LIMIT


def fresh(query: dict) -> AppTest:
    """The app opened from a link with this query string."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(query)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the Playground's server-drawn view
    at.run()
    assert not at.exception, at.exception
    return at


def test_parse_query_keeps_good_values_and_drops_bad_ones():
    got = links.parse_query(
        {
            "src": "paste",
            "text": "hello",
            "algo": "wordpiece",
            "vocab": "abc",  # not a number
            "colour": "rainbow",  # not a mode
            "pattern": "cl100k",
            "regex": "(",  # invalid regex
            "heldout": "nan",
            "seed": ["1", "7"],  # repeated: the last wins
            "lower": "1",
            "view": "diff",
            "nonsense": "x",
        }
    )
    assert got == {
        "source": "Paste",
        "paste_text": "hello",
        "algorithm": "wordpiece",
        "pattern": "cl100k",
        "ins_seed": 7,
        "wp_lowercase": True,
        "ins_tab": "Vocabulary diff",
    }
    assert links.parse_query({"text": "x" * (URL_TEXT_LIMIT + 1), "vocab": "0", "view": "Vocabulary diff"}) == {}


def test_an_algorithm_without_a_pattern_gets_its_own_default():
    assert links.parse_query({"algo": "unigram"}) == {"algorithm": "unigram", "pattern": "sentencepiece"}
    assert links.parse_query({"algo": "bpe"}) == {"algorithm": "bpe", "pattern": "gpt2"}
    assert links.parse_query({"algo": "unigram", "pattern": "cl100k"})["pattern"] == "cl100k"
    assert links.parse_query({"algo": "wordpiece"}) == {"algorithm": "wordpiece"}  # its pattern is fixed
    at = fresh({"algo": "unigram"})  # a hand-typed link: Unigram with its own split, as the sidebar would
    assert at.radio(key="algorithm").value == "unigram"
    assert at.selectbox(key="pattern").value == "sentencepiece"


def test_query_from_state_uses_stable_keys_and_only_what_applies():
    state = {"source": "Sample", "sample": "python", "paste_text": "old paste", "algorithm": "bpe",
             "pattern": "custom", "custom_pattern": r"\S+", "max_vocab": 500, "colour_mode": "id",
             "wp_lowercase": True, "ins_tab": "Held-out evaluation"}  # fmt: skip
    assert links.query_from_state(state) == {
        "src": "sample",
        "sample": "python",
        "algo": "bpe",
        "pattern": "custom",
        "regex": r"\S+",
        "vocab": "500",
        "colour": "id",
        "view": "heldout",
    }
    state |= {"source": "Paste", "pattern": "gpt2"}
    q = links.query_from_state(state)
    assert q["text"] == "old paste" and "sample" not in q and "regex" not in q
    state["paste_text"] = "y" * (URL_TEXT_LIMIT + 1)  # too long for a link: left out
    assert "text" not in links.query_from_state(state)
    state["algorithm"] = "wordpiece"
    q = links.query_from_state(state)
    assert q["lower"] == "1" and "pattern" not in q


def test_link_reopens_the_same_view():
    text = sample("python")
    at = fresh({"src": "sample", "sample": "python", "pattern": "cl100k", "vocab": "600", "size": "450",
                "colour": "rank"})  # fmt: skip
    assert at.selectbox(key="sample").value == "python"
    assert at.selectbox(key="pattern").value == "cl100k"
    assert at.number_input(key="max_vocab").value == 600
    assert at.radio(key="colour_mode").value == "rank"
    assert at.slider(key="vocab_size").value == 450
    tok = train_bpe(text, 600, ["<|endoftext|>"], "cl100k").with_vocab_size(450)
    assert metric(at, "Tokens") == f"{len(tok.encode(text)):,}"
    # the page writes the same settings back
    q = at.query_params
    assert {k: q[k] for k in ("src", "sample", "pattern", "vocab", "size", "colour")} == {
        "src": "sample", "sample": "python", "pattern": "cl100k", "vocab": "600", "size": "450", "colour": "rank"
    }  # fmt: skip


def test_changes_are_mirrored_into_the_url(app):
    app.selectbox(key="sample").set_value("numbers").run()
    app.radio(key="colour_mode").set_value("id").run()
    app.slider(key="vocab_size").set_value(300).run()
    q = app.query_params  # written at the end of the run: no further rerun needed
    assert (q["sample"], q["colour"], q["size"]) == ("numbers", "id", "300")
    # a second browser opens that link and sees the same thing
    again = fresh(dict(q))
    assert again.selectbox(key="sample").value == "numbers"
    assert again.slider(key="vocab_size").value == 300
    assert metric(again, "Tokens") == metric(app, "Tokens")


def test_pasted_text_round_trip():
    text = "A short pasted text: links carry it, up to the stated limit."
    at = fresh({"src": "paste", "text": text, "algo": "bpe", "pattern": "custom", "regex": r"\S+", "vocab": "300"})
    assert at.text_area(key="paste_text").value == text
    assert at.text_input(key="custom_pattern").value == r"\S+"
    tok = train_bpe(text, 300, ["<|endoftext|>"], r"\S+")
    assert metric(at, "Tokens") == f"{len(tok.encode(text)):,}"
    assert at.query_params["text"] == text and at.query_params["regex"] == r"\S+"
    assert any(f"{URL_TEXT_LIMIT:,} characters" in c.value for c in at.caption)  # the limit is stated


def test_bad_values_are_ignored_without_a_crash():
    at = fresh({"src": "floppy", "sample": "klingon", "algo": "gzip", "vocab": "-5", "size": "lots",
                "colour": "<script>", "view": "nope", "token": "x", "regex": "(", "pattern": "custom"})  # fmt: skip
    assert at.radio(key="source").value == "Sample"
    assert at.selectbox(key="sample").value == "english"
    assert at.radio(key="algorithm").value == "bpe"
    assert at.number_input(key="max_vocab").value == 1000
    assert at.radio(key="colour_mode").value == "cycle"
    # "custom" with no valid regex yet: GPT-2's pattern stays in force
    assert at.selectbox(key="pattern").value == "custom"
    text = sample("english")
    assert metric(at, "Tokens") == f"{len(train_bpe(text, 1000, ['<|endoftext|>'], 'gpt2').encode(text)):,}"
    assert at.query_params.get("colour") == "cycle" and "token" not in at.query_params


def test_insights_page_settings_in_the_link():
    at = fresh({"view": "pretok", "pbase": "cl100k", "split": "fraction", "heldout": "0.3"})
    at.switch_page("app_pages/insights.py").run()
    assert not at.exception, at.exception
    assert at.session_state["ins_tab"] == "Pre-tokenizer playground"
    assert at.selectbox(key="ins_pattern_base").value == "cl100k"
    assert at.text_area(key="ins_pattern_text").value == CL100K_PATTERN
    at.run()
    q = at.query_params
    assert (q["view"], q["pbase"], q["split"], q["heldout"]) == ("pretok", "cl100k", "fraction", "0.3")
    assert "ptext" not in q  # the base's own pattern is implied


def test_production_choices_keep_their_old_link_names():
    """``refs``/``ref`` became ``prod``/``diffwith`` (one name per concept): an old link still opens the same."""
    old = links.parse_query({"refs": "llama3,gpt2", "ref": "gpt2"})
    new = links.parse_query({"prod": "llama3,gpt2", "diffwith": "gpt2"})
    assert old == new == {"ins_production": ["llama3", "gpt2"], "ins_diff_production": "gpt2"}
    assert links.parse_query({"prod": "gpt2", "refs": "llama3"})["ins_production"] == ["gpt2"]  # the new name wins
    q = links.query_from_state({"ins_production": ["gpt2"], "ins_diff_production": "gpt2"}, "insights")
    assert (q["prod"], q["diffwith"]) == ("gpt2", "gpt2") and "refs" not in q and "ref" not in q


def test_compare_and_encode_settings_in_the_link():
    at = fresh({"cmp": "gpt2,o200k_base", "cmpon": "other", "word": "naïve"})
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    assert at.session_state["compare_tokenizers"] == ["gpt2", "o200k_base"]
    assert at.button_group(key="compare_pick_openai").value == ["gpt2", "o200k_base"]
    assert at.radio(key="compare_source").value == "Other text"
    at.run()
    assert (at.query_params["cmp"], at.query_params["cmpon"]) == ("gpt2,o200k_base", "other")
    at.switch_page("app_pages/encode.py").run()
    assert at.text_input(key="encode_word").value == "naïve"
    # an unknown tokenizer key spoils the list: it is ignored as a whole
    assert links.parse_query({"cmp": "gpt2,gpt5", "cmpon": "Other text"}) == {}


def test_merges_step_in_the_link():
    from tests.app.test_merges_page import card_number

    at = fresh({"step": "5"})
    at.switch_page("app_pages/merges.py").run()
    assert not at.exception, at.exception
    assert card_number(at) == "Merge #5"
    at.run()
    assert at.query_params["step"] == "5"
    # a step past the last merge is clamped to it: the sample's BPE learns 657 merges at vocab 1,000
    n = train_bpe(sample("english"), 1000, ["<|endoftext|>"]).max_vocab_size - 257
    far = fresh({"step": "999999"})
    far.switch_page("app_pages/merges.py").run()
    assert card_number(far) == f"Merge #{n}"


def test_a_new_tokenizer_is_in_the_link_at_once():
    """Issue 17.2: switching the sample resets the slider to the new tokenizer's size *and* the link says so."""
    at = fresh({})
    at.selectbox(key="sample").set_value("python").run()
    assert at.query_params["size"] == str(at.slider(key="vocab_size").value)
    at.selectbox(key="sample").set_value("multilingual").run()
    assert at.query_params["sample"] == "multilingual"
    assert at.query_params["size"] == str(at.slider(key="vocab_size").value)
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="paste_text").input("a pasted text, a pasted text, a pasted text").run()
    q = at.query_params
    assert q["src"] == "paste" and "sample" not in q and q["size"] == str(at.slider(key="vocab_size").value)


def test_link_restored_widgets_have_no_value_argument():
    """Streamlit warns when a widget has a default and its key is also set through session state, as links do.

    The widgets whose keys :mod:`ui.links` restores get their defaults with ``setdefault`` instead.
    """
    import ast
    from pathlib import Path

    from ui import state_keys as sk

    linked = {p.state for p in links.params()}
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for path in [*root.glob("ui/**/*.py"), *root.glob("app_pages/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            key = kw.get("key")
            name = getattr(key, "attr", None) if isinstance(key, ast.Attribute) else None
            if name and getattr(sk, name, None) in linked and {"value", "default", "index"} & set(kw):
                offenders.append(f"{path.name}:{node.lineno} key=sk.{name}")
    assert offenders == []


def test_every_setting_that_changes_the_view_is_in_the_link():
    """Issue 32.2: Compare's other text, patterns, sizes and highlight; Encode's tokenizers; the sidebar's special
    tokens; the Merges table's search and "All merges"; the server view -- each reopens from the link."""
    other = "Other text, with its own words: Zürich 2024."
    at = fresh({"special": "<|endoftext|>,<|im_start|>", "vocab": "400", "cmpon": "other", "cmptext": other,
                "cmppat": "cl100k", "cmpsizes": "300,3k", "hl": "1", "enc": "trained,llama3",
                "find": "·the", "allmerges": "1"})  # fmt: skip
    assert at.multiselect(key="special_tokens").value == ["<|endoftext|>", "<|im_start|>"]
    assert at.session_state["settings"].spec.special_tokens == ("<|endoftext|>", "<|im_start|>")
    assert at.query_params["special"] == "<|endoftext|>,<|im_start|>"
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="compare_text").value == other
    assert at.multiselect(key="compare_patterns").value == ["cl100k"]
    assert at.multiselect(key="compare_sizes").value == ["300", "3k"]
    assert at.toggle(key="compare_highlight").value is True
    q = at.query_params
    assert (q["cmptext"], q["cmppat"], q["cmpsizes"], q["hl"]) == (other, "cl100k", "300,3k", "1")
    at.switch_page("app_pages/encode.py").run()
    assert at.multiselect(key="encode_tokenizers").value == ["trained", "llama3"]
    assert at.query_params["enc"] == "trained,llama3" and "cmptext" not in at.query_params  # Compare's own: gone
    at.multiselect(key="encode_tokenizers").set_value([]).run()
    assert at.query_params["enc"] == ""  # none chosen: said, since leaving it out would mean the default
    assert fresh({"enc": ""}).session_state["encode_tokenizers"] == []
    at.switch_page("app_pages/merges.py").run()
    assert not at.exception, at.exception
    assert at.text_input(key="merge_query").value == "·the" and at.toggle(key="merge_table_all").value is True
    assert (at.query_params["find"], at.query_params["allmerges"]) == ("·the", "1")


def test_special_tokens_in_the_link_are_the_named_algorithms():
    # the defaults go without saying; none at all is said; a comma inside a token takes the JSON form
    assert "special" not in links.query_from_state({"algorithm": "bpe", "special_tokens": ["<|endoftext|>"]})
    assert links.query_from_state({"algorithm": "bpe", "special_tokens": []})["special"] == ""
    odd = ["<a,b>", "<|endoftext|>"]
    raw = links.query_from_state({"algorithm": "bpe", "special_tokens": odd})["special"]
    assert raw == '["<a,b>", "<|endoftext|>"]' and links.parse_query({"special": raw})["special_tokens"] == odd
    got = links.parse_query({"algo": "wordpiece", "special": "[CLS],[SEP]"})
    assert got["wp_special_tokens"] == ["[CLS]", "[SEP]"] and "special_tokens" not in got
    assert links.parse_query({"special": "x" * 101}) == {} and links.parse_query({"enc": "trained,gpt5"}) == {}


def test_the_lessons_own_example_is_in_the_link():
    at = fresh({"lesson": "bytes", "example": "naïve 🙂"})
    at.switch_page("app_pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="lesson_bytes_text").value == "naïve 🙂"
    assert at.query_params["example"] == "naïve 🙂"
    assert len(at.table[0].value) == 7  # the lesson's table: one row per character of the link's example
    assert links.parse_query({"lesson": "bpe-by-hand", "example": "x"}) == {"lesson": "bpe-by-hand",
                                                                            "lesson_bpe_by_hand_text": "x"}  # fmt: skip
