"""The escaping helpers of ui.safe_text: Markdown as Streamlit renders it (markdown-it-py as a CommonMark oracle)."""

from __future__ import annotations

import doctest

import pytest

import ui.safe_text
from tests.conftest import unmd
from ui.safe_text import md, plotly

HOSTILE = [
    "**x**![p](http://127.0.0.1:9/pwn.png)",
    "<i>x</i>",
    "<a href=x>y</a>",
    "_x_ ~~y~~ `z` $a$ :red[b] :material/home: [c](d) &amp; \\*",
    "# heading",
    "1. list",
    "> quote",
    "- item\nnext line",
    "www.example.com a@b.co https://e.f",
    "vocab_size: 1,000 (mine.json)",
]


def test_doctests():
    assert doctest.testmod(ui.safe_text).failed == 0


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_renders_the_value_as_plain_text(value):
    """CommonMark (markdown-it-py, the reference parser's rules) turns the escaped value into one plain paragraph."""
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").render(md(value))
    assert html.startswith("<p>") and html.count("<p>") == 1
    inner = html.removeprefix("<p>").removesuffix("</p>\n")
    assert "<" not in inner.replace("&lt;", "")  # no element at all
    assert unmd(md(value)) == value.replace("\n", " ")  # and the reader sees what was typed


def test_plain_values_stay_readable_in_the_source():
    assert md("mine.json (2 files): ok, vocab_size 1,000.") == "mine.json (2 files): ok, vocab_size 1,000."


def test_plotly_escapes_its_html_subset():
    assert plotly("<b>x</b> & <br>") == "&lt;b&gt;x&lt;/b&gt; &amp; &lt;br&gt;"
    assert plotly(42) == "42"
