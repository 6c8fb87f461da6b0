"""Shared fixtures: real texts, the production encodings' directory, and the test tiers.

The tests come in three tiers, one folder and one marker each: ``engine`` (``tests/engine``: ``bpe_core``
alone), ``app`` (``tests/app``: ``ui/`` and the pages through Streamlit's AppTest) and ``browser``
(``tests/browser``: the app served and driven in a real Chromium).  ``pytest -m "not browser"`` is the
quick loop; plain ``pytest`` runs everything.
"""

from __future__ import annotations

import inspect
import os
import textwrap
from pathlib import Path

import pytest

pytest_plugins = [
    "tests.tiktoken_cache",  # tiktoken_official: tiktoken's own registry, offline
]

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def _shared_dir() -> Path:
    """The read-only ``shared/`` folder beside the checkout (or the workplace's, for a checkout elsewhere)."""
    for candidate in (ROOT.parent / "shared", Path("/work/shared")):
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared"


SHARED = _shared_dir()
SHARED_ENCODINGS = (
    Path(os.environ["BPE_PLAYGROUND_ENCODINGS"])
    if os.environ.get("BPE_PLAYGROUND_ENCODINGS")
    else SHARED / "data" / "encodings"
)
"""The verified tiktoken ranks files (r50k_base, cl100k_base, o200k_base)."""
SEEDS = SHARED / "seeds"

# Tests and CI point reference loading at the verified copies; an explicit setting wins.
if "BPE_PLAYGROUND_ENCODINGS" not in os.environ and SHARED_ENCODINGS.is_dir():
    os.environ["BPE_PLAYGROUND_ENCODINGS"] = str(SHARED_ENCODINGS)


TIERS = ("engine", "app", "browser")


def pytest_collection_modifyitems(items):
    """Mark every test with its tier: the folder it lives in under ``tests/``."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(ROOT / "tests").parts
        if parts and parts[0] in TIERS:
            item.add_marker(getattr(pytest.mark, parts[0]))
        if parts and parts[0] == "browser":
            # A real Chromium against a real server on a shared 2-core machine: a run that lands between two
            # reruns of the page can miss a wait (seen in CI, never twice in a row). One rerun, reported as
            # "R" in the summary; a real defect fails both times (pytest-rerunfailures).
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=2))


# The command line reports unexpected exceptions as one line; under test they stay tracebacks (bugs stay visible).
os.environ.setdefault("BPE_CORE_DEBUG", "1")


def sample(name: str) -> str:
    """A built-in sample text of the app (written for this project)."""
    return (SAMPLES / f"{name}.txt").read_text(encoding="utf-8")


def seed_text() -> str:
    """The seed articles (real multi-paragraph English with code), when present."""
    if SEEDS.is_dir():
        return "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("0*.txt")))
    return sample("english")


def stdlib_code() -> str:
    """Real Python source: the standard library's textwrap module."""
    return inspect.getsource(textwrap)


def piece_texts() -> list[str]:
    """Real texts the corpus-pieces encoders are held to their textbook versions on (prose, scripts, code, seeds)."""
    return [
        sample("english")[:8000],
        sample("multilingual"),
        stdlib_code()[:6000],
        seed_text()[:8000],
        sample("numbers")[:3000],
    ]


def production_or_skip(key: str):
    """``load_production(key)``, or a skip that says why when its files are not installed here."""
    from bpe_core.production import EncodingUnavailable, load_production

    try:
        return load_production(key)
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))


def text_pieces(tok, text: str) -> tuple[list[str], list[bool]]:
    """The text's pieces in order (as corpus figures cut them) and which one starts the document."""
    from bpe_core.analysis.corpus import text_units, unit_cut_table
    from bpe_core.interface import corpus_pieces

    split = corpus_pieces(tok)
    units = text_units(text, unit_cut_table([split]))
    pieces, _sizes = split.split_units(units, [k == 0 for k in range(len(units))])
    return pieces, [k == 0 for k in range(len(pieces))]


def laid_out_tokens(tok, text: str) -> list[tuple[int, int, int, int]]:
    """The compiled tokens of the text's pieces laid end to end: ``(id, start, end, kind)`` in the text."""
    from bpe_core.interface import corpus_pieces

    pieces, first = text_pieces(tok, text)
    pt = corpus_pieces(tok).encode(pieces, first)
    out, at = [], 0
    for k, piece in enumerate(pieces):
        for t in range(pt.offsets[k], pt.offsets[k + 1]):
            out.append((int(pt.ids[t]), at + int(pt.starts[t]), at + int(pt.ends[t]), int(pt.kinds[t])))
        at += len(piece)
    return out


def assert_equal_piece_tokens(got, want, pieces) -> None:
    """Two :class:`bpe_core.pieces.PieceTokens` of ``pieces`` are equal; else name the first piece that differs."""
    import numpy as np

    assert got.offsets.tolist() == want.offsets.tolist()
    for name in ("ids", "starts", "ends", "kinds"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype, name
        if not np.array_equal(a, b):
            bad = int(np.flatnonzero(a != b)[0])
            k = int(np.searchsorted(got.offsets, bad, side="right")) - 1
            raise AssertionError(f"{name} differ in piece {pieces[k]!r}: {a[bad]} != {b[bad]}")


def stdlib_text(n_chars: int, separator: str = "<|endoftext|>") -> str:
    """Megabytes of real text: the standard library's modules in sorted order, ``separator`` between them,
    cut at ``n_chars`` characters."""
    parts, n = [], 0
    for path in sorted(Path(os.__file__).parent.glob("*.py")):
        part = path.read_text(encoding="utf-8", errors="replace")
        parts.append(part)
        n += len(part)
        if n >= n_chars:
            break
    return separator.join(parts)[:n_chars]


@pytest.fixture(scope="session")
def english() -> str:
    return sample("english")


@pytest.fixture(scope="session")
def multilingual() -> str:
    return sample("multilingual")


@pytest.fixture(scope="session")
def code() -> str:
    return stdlib_code()


@pytest.fixture(scope="session")
def seeds() -> str:
    return seed_text()


APP = ROOT / "app.py"

FULL_SIZE = 100_000
"""A link's ``size`` larger than any tokenizer here: the slider opens at the full size."""


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    """Streamlit caches outlive one AppTest run inside a pytest process: start each test clean."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture
def app():
    """A fresh AppTest of the whole app (navigation, sidebar, landing page), already run once.

    It is opened from a link with ``?size=`` :data:`FULL_SIZE` (clamped to the tokenizer's full size), as most
    tests look at the full tokenizer; a plain first visit opens at :data:`ui.links.FIRST_VIEW_SIZE`
    (``tests/app/test_first_screen.py``).
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the Playground's server-drawn view
    at.query_params["size"] = str(FULL_SIZE)
    at.run()
    assert not at.exception, at.exception
    return at


def metric(at, label: str) -> str:
    """The displayed value of the st.metric with this label."""
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def unmd(markdown: str) -> str:
    """The text a Markdown source shows, as far as backslash escapes go (``\\[UNK\\]`` -> ``[UNK]``).

    Messages escape user strings with :func:`ui.safe_text.md`; tests compare what the reader sees.
    """
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")  # and the word joiners


def html_bodies(at) -> str:
    """All st.html bodies of the page, concatenated."""
    return "\n".join(h.proto.body for h in at.get("html"))


def token_texts(body: str) -> list[str]:
    """The visible text of each coloured token (``span.tk``) in an HTML body, entities decoded."""
    from html.parser import HTMLParser

    class _P(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.depth = 0  # >0 while inside a token span
            self.tokens: list[str] = []

        def handle_starttag(self, tag, attrs):
            classes = dict(attrs).get("class", "") or ""
            if tag == "span" and "tk" in classes.split():
                self.depth = 1
                self.tokens.append("")
            elif tag == "span" and self.depth:
                self.depth += 1

        def handle_endtag(self, tag):
            if tag == "span" and self.depth:
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                self.tokens[-1] += data

    p = _P()
    p.feed(body)
    return p.tokens


def unmark_whitespace(shown: str) -> str:
    """Undo the view's whitespace markers: ``·`` space, ``→`` tab, ``↵`` newline (followed by a real one), ``␍`` CR."""
    return shown.replace("↵\n", "\n").replace("→\t", "\t").replace("·", " ").replace("␍", "\r")
