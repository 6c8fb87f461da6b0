"""Compare's live columns, server side (issue 16 item 3), through Streamlit's AppTest.

AppTest runs no JavaScript, so these read what the server sends the browser: the slider's and each
live column's payload (``ui/live_view``), checked against an independently trained tokenizer, and
what the page draws on the server around them.  The browser side is ``tests/browser/test_compare_live.py``.
"""

from __future__ import annotations

import base64
import gzip
import json
from array import array

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import train_bpe
from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS as BERT_SPECIALS
from bpe_core.wordpiece import train_wordpiece
from tests.app.test_compare import PAGE, table, view_headers
from tests.conftest import APP, FULL_SIZE, sample


def live_page(query: dict[str, str] | None = None) -> AppTest:
    """A new session on Compare, opened on a link, with the live view (the default: no "Draw on the server")."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"size": str(FULL_SIZE), **(query or {})})
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def components(at) -> dict[str, dict]:
    """``{widget key: data sent}`` of the page's live views."""
    out = {}
    for e in at.get("bidi_component"):
        if e.proto.component_name == "bpe_playground.live_view":
            out[e.proto.id.rsplit("-", 1)[-1]] = json.loads(e.proto.json)
    return out


def unpack(packed: dict) -> list[int]:
    """The little-endian ints of a packed table (``{"w": 2 | 4, "z": base64(gzip(...))}``)."""
    arr = array("H" if packed["w"] == 2 else "I", gzip.decompress(base64.b64decode(packed["z"])))
    return arr.tolist()


def server_views(at) -> int:
    return sum('class="bpe-view' in h.proto.body for h in at.get("html"))


def test_the_slider_and_the_bpe_column_are_live_and_follow_the_shared_size():
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    at = live_page()
    assert not at.slider  # no server slider: it is drawn in the browser
    live = components(at)
    assert set(live) == {"compare_live_slider", "compare_live_bpe"}
    slider, column = live["compare_live_slider"], live["compare_live_bpe"]
    assert (slider["role"], slider["group"], slider["lo"], slider["hi"], slider["size"]) == (
        "slider",
        "compare",
        lo,
        hi,
        hi,
    )
    assert slider["text"] == ""  # the slider sends no text
    assert (column["role"], column["group"], column["label"], column["size"]) == ("column", "compare", "BPE (gpt2)", hi)
    assert (column["lo"], column["hi"], column["text"], column["maxTokens"]) == (lo, hi, text, 5_000)
    assert column["textBytes"] == len(text.encode())
    assert unpack(column["totals"]) == [len(tok.with_vocab_size(k).encode(text)) for k in range(lo, hi + 1)]
    # GPT-2 and cl100k stay drawn on the server, under their own titles
    assert server_views(at) == 2 and view_headers(at) == ["GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    assert next(iter(table(at))) == f"BPE (gpt2) · {hi:,}"

    # the browser reports the size a drag ended at (ui.live_view writes it to the shared "vocab_size")
    at.session_state["vocab_size"] = 400
    at.run()
    live = components(at)
    assert live["compare_live_slider"]["size"] == live["compare_live_bpe"]["size"] == 400
    assert live["compare_live_bpe"]["v"] == column["v"]  # the same tables: nothing is re-sent but the size
    rows = table(at)
    assert rows["BPE (gpt2) · 400"]["Tokens"] == len(tok.with_vocab_size(400).encode(text))


def test_other_text_counts_come_from_the_text_not_the_trace():
    other = "Tokenizers <|endoftext|> cost money: naïve façade, 日本語.\nThe lighthouse keepers counted."
    tok = train_bpe(sample("english"), 1000, ["<|endoftext|>"])
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    at = live_page()
    at.radio(key="compare_source").set_value("Other text").run()
    at.text_area(key="compare_text").input(other).run()
    assert not at.exception
    column = components(at)["compare_live_bpe"]
    assert column["text"] == other and column["textChars"] == len(other)
    assert unpack(column["totals"]) == [len(tok.with_vocab_size(k).encode(other)) for k in range(lo, hi + 1)]


def test_highlight_draws_the_trained_column_on_the_server_and_keeps_the_live_slider():
    at = live_page()
    at.toggle(key="compare_highlight").set_value(True).run()
    assert not at.exception
    assert set(components(at)) == {"compare_live_slider"}  # the marks depend on every column: drawn here
    assert server_views(at) == 3
    assert view_headers(at)[0].startswith("BPE (gpt2) · ")


@pytest.mark.parametrize("server_view", [True, False])
def test_wordpiece_follows_the_slider_and_the_full_size_bpe_does_not(server_view):
    text = sample("english")
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["server_view"] = server_view
    at.query_params.update({"size": "150", "algo": "wordpiece", "cmp": "bpe,wordpiece"})
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    wp = train_wordpiece(text, 1000, BERT_SPECIALS)
    bpe = train_bpe(text, 1000, ["<|endoftext|>"])
    rows = table(at)
    assert rows["WordPiece · 150"]["Tokens"] == len(wp.with_vocab_size(150).encode(text))
    live = components(at)
    if server_view:  # "Draw on the server": the server slider and every column drawn here, as before
        assert live == {} and at.slider(key="vocab_size").value == 150 and server_views(at) == 2
        return
    assert set(live) == {"compare_live_slider", "compare_live_wordpiece"}
    column = live["compare_live_wordpiece"]
    assert (column["kind"], column["label"], column["size"]) == ("wordpiece", "WordPiece", 150)
    lo, hi = wp.min_vocab_size, wp.max_vocab_size
    assert unpack(column["totals"]) == [len(wp.with_vocab_size(k).encode(text)) for k in range(lo, hi + 1)]
    # the BPE trained for comparison is shown at its full size: drawn on the server
    assert view_headers(at) == [f"BPE (gpt2) · {bpe.vocab_size:,}"] and server_views(at) == 1
