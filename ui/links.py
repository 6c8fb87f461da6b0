"""Shareable links: the sidebar's and the pages' settings mirrored in the URL query string.

:func:`restore` runs once per browser session, before any widget is drawn: it
reads ``st.query_params``, checks every value and puts the good ones into
``st.session_state`` under the widgets' keys, so the widgets open with them.
A value that fails its check is ignored (the widget keeps its default) and
never raises.  :func:`publish` runs at the *end* of every run (``app.py`` calls
it after the page; the Merges page's fragment after each step it draws) and
writes the final values back -- the slider a new tokenizer reset, the step a
button moved -- so the address bar reopens exactly the view on screen, never
the one before.  (A provisional publish before the page stands when the page
stops early, since nothing can be sent after ``st.stop()``.)
A page's own settings (the Merges step, Compare's choices, the Insights tab)
are in the link only on that page.

The URL uses stable keys, never display labels (``?src=sample&sample=python
&algo=bpe&pattern=cl100k&vocab=2000&colour=rank``).  Pasted text is included
when it is at most :data:`ui.inputs.URL_TEXT_LIMIT` characters; uploaded files
never are.  Streamlit's own ``bind="query-params"`` is not used because it
writes a select widget's display label into the URL.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from bpe_core import algorithm_names, get_algorithm
from bpe_core.pretokenize import PATTERN_LABELS, PATTERNS, compile_pattern
from bpe_core.production.registry import DEFAULT_PRODUCTION, PRODUCTION
from ui import catalogue
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.inputs import CUSTOM, SOURCES, URL_TEXT_LIMIT
from ui.insights_tabs import VIEWS
from ui.lessons.base import MAX_INPUT_CHARS
from ui.lessons.catalogue import slugs
from ui.render import COLOUR_MODES
from ui.samples import SAMPLES
from ui.training import cached, settings_key

RESTORED_FLAG = sk.LINKS_RESTORED
PENDING_STEP = sk.PENDING_STEP
PENDING_SIZE = sk.PENDING_SIZE
PAGE_KEY = sk.LINKS_PAGE

FIRST_VIEW_SIZE = 500
"""The slider's size on a visit whose link has no ``size``: the 1,000-token tokenizer the English sample trains
is drawn with about half of its words in two or more tokens while the common words ("the", "and", "of") are
whole (at the full size only about 5 % are split), so the first screen shows subwords and the slider has room
both ways.  Clamped to the tokenizer's sizes."""


def keep(key: str, default: Any) -> None:
    """Give the widget keyed ``key`` its value through session state (``default`` the first time), before drawing it.

    Used instead of the widget's ``value=``/``default=`` for the widgets whose keys
    :func:`restore` sets (Streamlit warns when a widget has both), and re-assigned on every
    run: a widget drawn anew (on another page, or after a page that did not draw it) would
    otherwise open at its own default instead of the session's value.
    """
    st.session_state[key] = st.session_state.get(key, default)


def _choice(options: Mapping[str, Any] | tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(f"{raw!r} is not one of {', '.join(options)}")
        return raw

    return parse


def _number_in(kind: Callable[[str], float], lo: float, hi: float) -> Callable[[str], float]:
    """A parser of ``kind(raw)`` (``int`` or ``float``) that accepts only ``lo <= value <= hi``."""

    def parse(raw: str) -> float:
        x = kind(raw)
        if not lo <= x <= hi:  # also rejects nan
            raise ValueError(f"{x} is outside {lo}..{hi}")
        return x

    return parse


def _int_in(lo: int, hi: int) -> Callable[[str], int]:
    return _number_in(int, lo, hi)


def _float_in(lo: float, hi: float) -> Callable[[str], float]:
    return _number_in(float, lo, hi)


def _bool(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(f"{raw!r} is not 0 or 1")
    return raw == "1"


def _text(raw: str) -> str:
    if len(raw) > URL_TEXT_LIMIT:
        raise ValueError(f"longer than {URL_TEXT_LIMIT} characters")
    return raw


def _regex(raw: str) -> str:
    if len(raw) > 1000:
        raise ValueError("pattern longer than 1000 characters")
    compile_pattern(raw)  # ValueError for an invalid regex
    return raw


_SOURCE_KEYS = {s.lower(): s for s in SOURCES}


@dataclass(frozen=True)
class Param:
    """One setting in the URL.

    Attributes:
        url: the query-string key.
        state: the widget's session-state key.
        parse: URL string -> widget value; raises ``ValueError`` (or
            ``TypeError``) for a value to ignore.
        dump: widget value -> URL string (default ``str``).
    """

    url: str
    state: str
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str
    page: str | None = None
    """The ``url_path`` of the one page the setting belongs to (``None``: every page)."""
    old: tuple[str, ...] = ()
    """Earlier names of the query-string key, still read (a link shared before a rename keeps working)."""
    default: Any = None
    """The value the widget has without a link: left out of the URL (``None``: always written when set).  A
    setting with a default is written even when empty (``special=``: no special tokens), since leaving it out
    would mean the default."""


def _dump_bool(v: Any) -> str:
    return "1" if v else "0"


def _view_key(label: str) -> str:
    """The stable key of an Insights tab label (the tab widget's value is its label)."""
    return next((k for k, v in VIEWS.items() if v == label), "genealogy")


def _algorithm(raw: str) -> str:
    return _choice(tuple(algorithm_names()))(raw)  # the algorithms registered now (a test may add one)


def _compare_keys(raw: str) -> list[str]:
    keys = [k for k in raw.split(",") if k]
    entries = catalogue.entries()
    if not keys or any(k not in entries for k in keys):
        raise ValueError(f"unknown tokenizer in {raw!r}")
    return list(dict.fromkeys(keys))


def _production_keys(raw: str) -> list[str]:
    keys = [k for k in raw.split(",") if k]
    if any(k not in PRODUCTION for k in keys):
        raise ValueError(f"unknown production encoding in {raw!r}")
    return list(dict.fromkeys(keys))


def _word(raw: str) -> str:
    if not raw or len(raw) > 100:
        raise ValueError("a word of 1 to 100 characters")
    return raw


_COMPARE_SOURCES = {"training": "Training text", "other": "Other text"}

MAX_LIST = 32
"""At most this many items in a list-valued setting (special tokens, sizes, tokenizers)."""


def _dump_list(items: Any) -> str:
    """A list of strings for the URL: ``a,b,c``, or a JSON array when an item holds a comma (a special token may)."""
    items = [str(x) for x in items]
    return json.dumps(items, ensure_ascii=False) if any("," in x for x in items) else ",".join(items)


def _list_of(item: Callable[[str], str]) -> Callable[[str], list[str]]:
    """A parser of :func:`_dump_list`'s form whose items each pass ``item`` (``""``: the empty list)."""

    def parse(raw: str) -> list[str]:
        if raw.startswith('["') and raw.endswith('"]'):  # "[CLS],[SEP]" is a comma list
            items = json.loads(raw)
            if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
                raise ValueError("a JSON list of strings")
        else:
            items = [x for x in raw.split(",") if x] if raw else []
        if len(items) > MAX_LIST:
            raise ValueError(f"more than {MAX_LIST} items")
        return list(dict.fromkeys(item(x) for x in items))

    return parse


def _example(raw: str) -> str:
    if len(raw) > MAX_INPUT_CHARS:
        raise ValueError(f"longer than {MAX_INPUT_CHARS} characters")
    return raw


def _special_token(raw: str) -> str:
    if not raw or len(raw) > 100:
        raise ValueError("a special token of 1 to 100 characters")
    return raw


def _typed_size(raw: str) -> str:
    """A size as typed in Compare's "other vocabulary sizes" (``3000``, ``3k``; checked by the page, which warns)."""
    if not raw or len(raw) > 12:
        raise ValueError("a size of 1 to 12 characters")
    return raw


def _merge_query(raw: str) -> str:
    if len(raw) > 100:
        raise ValueError("a search of at most 100 characters")
    return raw


ENCODE_CHOICES = ("trained", *PRODUCTION)
"""Encode step by step's tokenizer keys (as ``ui.steps_view``: the trained one, then every production encoding)."""


_SIDEBAR: tuple[Param, ...] = (
    Param("src", sk.SOURCE, lambda r: _SOURCE_KEYS[_choice(tuple(_SOURCE_KEYS))(r)], lambda v: str(v).lower()),
    Param("sample", sk.SAMPLE, _choice(SAMPLES)),
    Param("text", sk.PASTE_TEXT, _text),
    Param("algo", sk.ALGORITHM, _algorithm),
    Param("pattern", sk.PATTERN, _choice((*PATTERN_LABELS, CUSTOM))),
    Param("regex", sk.CUSTOM_PATTERN, _regex),
    Param("vocab", sk.MAX_VOCAB, _int_in(1, 100_000)),
)
"""The sidebar's training settings, before the algorithms' own (:func:`params`)."""

_DISPLAY_AND_PAGES: tuple[Param, ...] = (
    Param("colour", sk.COLOUR_MODE, _choice(COLOUR_MODES)),
    Param("ws", sk.SHOW_WS, _bool, _dump_bool),
    Param("present", sk.PRESENT, _bool, _dump_bool),
    Param("server", sk.SERVER_VIEW, _bool, _dump_bool, default=False),
    # the Compare and Encode pages
    Param("cmp", sk.COMPARE_TOKENIZERS, _compare_keys, ",".join, page="compare"),
    Param(
        "cmpon",
        sk.COMPARE_SOURCE,
        lambda r: _COMPARE_SOURCES[r],
        lambda v: next((k for k, x in _COMPARE_SOURCES.items() if x == v), "training"),
        page="compare",
    ),
    Param("cmptext", sk.COMPARE_TEXT, _text, page="compare"),
    Param("cmppat", sk.COMPARE_PATTERNS, _list_of(_choice(PATTERN_LABELS)), _dump_list, page="compare", default=[]),
    Param("cmpsizes", sk.COMPARE_SIZES, _list_of(_typed_size), _dump_list, page="compare", default=[]),
    Param("hl", sk.COMPARE_HIGHLIGHT, _bool, _dump_bool, page="compare", default=False),
    Param("word", sk.ENCODE_WORD, _word, page="encode"),
    Param(
        "enc",
        sk.ENCODE_TOKENIZERS,
        _list_of(_choice(ENCODE_CHOICES)),
        _dump_list,
        page="encode",
        default=["trained", *DEFAULT_PRODUCTION],
    ),
    Param("step", sk.MERGE_STEP, _int_in(0, 10_000_000), page="merges"),
    Param("find", sk.MERGE_QUERY, _merge_query, page="merges", default=""),
    Param("allmerges", sk.MERGE_TABLE_ALL, _bool, _dump_bool, page="merges", default=False),
    Param("lesson", sk.LESSON, _choice(tuple(slugs())), page="learn"),
    # the Insights page
    Param("view", sk.INS_TAB, lambda r: VIEWS[r], _view_key, page="insights"),
    Param("token", sk.INS_TOKEN, _int_in(0, 10_000_000), page="insights"),
    Param("split", sk.INS_SPLIT, _choice(("document", "fraction")), page="insights"),
    Param("heldout", sk.INS_FRACTION, _float_in(0.05, 0.5), page="insights"),
    Param("seed", sk.INS_SEED, _int_in(0, 2**31 - 1), page="insights"),
    Param("pbase", sk.INS_PATTERN_BASE, _choice(("gpt2", "cl100k", "o200k", "bert")), page="insights"),
    Param("ptext", sk.INS_PATTERN_TEXT, _regex, page="insights"),
    Param("diffwith", sk.INS_DIFF_PRODUCTION, _choice(tuple(PRODUCTION)), page="insights", old=("ref",)),
    Param("prod", sk.INS_PRODUCTION, _production_keys, ",".join, page="insights", old=("refs",)),
    Param("unused", sk.INS_UNUSED_ON, _choice(("training", "heldout")), page="insights"),
)
"""The display's and the pages' settings, after the sidebar's."""


def params() -> tuple[Param, ...]:
    """Every setting a link carries, in URL order.

    The algorithms' own widgets come from their registrations: ``lower`` is the lower-casing
    toggle of each algorithm that offers one (:attr:`ui.algorithms.AlgorithmView.lowercase_key`;
    a link carries the one of the algorithm it names), ``special`` each algorithm's special tokens
    (:attr:`ui.algorithms.AlgorithmView.special_tokens_key`), in the link when they differ from the
    algorithm's defaults.  ``example`` is the Learn page's input box of the lesson on screen.
    """
    lower = tuple(
        Param("lower", view_of(name).lowercase_key, _bool, _dump_bool)
        for name in algorithm_names()
        if get_algorithm(name).uses_lowercase
    )
    special = tuple(
        Param(
            "special",
            view_of(name).special_tokens_key,
            _list_of(_special_token),
            _dump_list,
            default=list(get_algorithm(name).default_special_tokens),
        )
        for name in algorithm_names()
    )
    examples = tuple(Param("example", sk.lesson_key(slug, "text"), _example, page="learn") for slug in slugs())
    return (*_SIDEBAR, *lower, *special, *_DISPLAY_AND_PAGES, *examples)


def _applies(p: Param, state: Mapping[str, Any]) -> bool:
    """Whether a setting belongs in the URL given the others (e.g. the text only for pasted text)."""
    source = state.get(sk.SOURCE, SOURCES[0])
    algo = state.get(sk.ALGORITHM, algorithm_names()[0])
    if p.url == "sample":
        return source == "Sample"
    if p.url == "text":
        return source == "Paste" and len(state.get(sk.PASTE_TEXT) or "") <= URL_TEXT_LIMIT
    if p.url in ("pattern", "regex"):
        return not get_algorithm(algo).fixed_pattern and (p.url == "pattern" or state.get(sk.PATTERN) == CUSTOM)
    if p.url == "lower":
        return get_algorithm(algo).uses_lowercase and view_of(algo).lowercase_key == p.state
    if p.url == "special":
        return view_of(algo).special_tokens_key == p.state
    if p.url == "example":
        return sk.lesson_key(state.get(sk.LESSON) or slugs()[0], "text") == p.state
    if p.url == "cmptext":
        return state.get(sk.COMPARE_SOURCE) == "Other text" and len(state.get(sk.COMPARE_TEXT) or "") <= URL_TEXT_LIMIT
    if p.url == "ptext":  # only an edited pattern: the base's own is implied by pbase
        return state.get(sk.INS_PATTERN_TEXT) != PATTERNS.get(state.get(sk.INS_PATTERN_BASE, "gpt2"))
    return True


def _same(value: Any, default: Any) -> bool:
    """Whether a widget's value is its default (a list and a tuple of the same items are the same)."""
    if isinstance(value, list | tuple) and isinstance(default, list | tuple):
        return list(value) == list(default)
    return value == default


def parse_query(query: Mapping[str, str | list[str]]) -> dict[str, Any]:
    """Session-state values from a query string's parameters; bad or unknown ones are left out.

    An algorithm without a pattern gets the algorithm's default pattern (``?algo=unigram``
    opens Unigram with SentencePiece's split, as choosing Unigram in the sidebar does).

    Args:
        query: ``{key: value or list of values}`` (the last of a list wins).

    Returns:
        ``{session-state key: parsed value}``.
    """
    out: dict[str, Any] = {}
    for p in params():
        raw = next((query[k] for k in (p.url, *p.old) if k in query), None)
        if isinstance(raw, list):
            raw = raw[-1] if raw else None
        if raw is None:
            continue
        try:
            out[p.state] = p.parse(str(raw))
        except (ValueError, TypeError, KeyError):
            continue  # a bad value is ignored: the widget keeps its default
    algorithm = out.get(sk.ALGORITHM)
    named = algorithm or algorithm_names()[0]
    for p in params():  # the link's special tokens are those of the algorithm it names, not every algorithm's
        if p.url == "special" and p.state != view_of(named).special_tokens_key:
            out.pop(p.state, None)
        if p.url == "example" and p.state != sk.lesson_key(out.get(sk.LESSON) or slugs()[0], "text"):
            out.pop(p.state, None)
    if algorithm is not None and sk.PATTERN not in out and not get_algorithm(algorithm).fixed_pattern:
        # a link that names an algorithm but no pattern (typed by hand) means that algorithm's own
        # default, as choosing it in the sidebar does -- not the pattern the session happened to start with
        out[sk.PATTERN] = get_algorithm(algorithm).default_pattern
    return out


def query_from_state(state: Mapping[str, Any], page: str | None = None) -> dict[str, str]:
    """The query-string parameters for the current session-state values.

    Args:
        state: session state (or any mapping of widget keys to values).
        page: the ``url_path`` of the page on screen; ``None`` keeps every page's settings.

    Returns:
        ``{url key: string}`` for each setting that has a value and applies.
    """
    out: dict[str, str] = {}
    for p in params():
        if page is not None and p.page is not None and p.page != page:
            continue
        value = state.get(p.state)
        if value is None or not _applies(p, state):
            continue
        if p.default is not None:
            if _same(value, p.default):
                continue
        elif value in ("", []) and p.url not in ("text", "example"):
            continue
        out[p.url] = p.dump(value)
    if out.get("text") == "":
        del out["text"]
    return out


def restore(state: MutableMapping[str, Any] | None = None, query: Mapping[str, Any] | None = None) -> None:
    """Once per session: put the URL's valid settings into session state before the widgets are drawn.

    The slider's size (``?size=``, else :data:`FIRST_VIEW_SIZE`) is kept aside for :func:`apply_pending_size`;
    whether the link carried any setting is noted under :data:`ui.state_keys.LINK_HAD_SETTINGS`.
    """
    state = st.session_state if state is None else state
    if state.get(RESTORED_FLAG):
        return
    state[RESTORED_FLAG] = True
    query = st.query_params.to_dict() if query is None else query
    parsed = parse_query(query)
    state[sk.LINK_HAD_SETTINGS] = bool(parsed) or "size" in query  # a bare first visit is offered the Learn page
    for key, value in parsed.items():
        state[PENDING_STEP if key == sk.MERGE_STEP else key] = value
    size = query.get("size")
    if size is None or size == []:
        state[PENDING_SIZE] = FIRST_VIEW_SIZE  # a first screen that shows subwords
        return
    with contextlib.suppress(ValueError, TypeError, IndexError):  # a bad size is ignored
        state[PENDING_SIZE] = _int_in(1, 100_000)(str(size[-1] if isinstance(size, list) else size))


def apply_pending_size(settings: Any) -> None:
    """Set the vocabulary slider to the URL's ``size`` once, when the sidebar's tokenizer is already trained.

    Otherwise the size stays pending: the page trains (with its progress bar and
    Cancel) and :func:`ui.view.vocab_slider` opens at the pending size instead of
    the full one when it meets the new tokenizer.  A size out of range is clamped.
    """
    size = st.session_state.get(PENDING_SIZE)
    if size is None or settings.problem or settings.imported is not None:
        return
    tok = cached(settings_key(settings))
    if tok is None:
        return
    del st.session_state[PENDING_SIZE]
    st.session_state[sk.owner_key(sk.VOCAB_SIZE)] = id(tok)
    st.session_state[sk.VOCAB_SIZE] = min(max(size, tok.min_vocab_size), tok.max_vocab_size)


def _on_screen_is_current(state: Mapping[str, Any]) -> bool:
    """Whether the slider (and the Merges step) in session state belong to the sidebar's current tokenizer.

    Before a page has run, a changed setting (another sample, algorithm, size...) means the page
    is about to reset them; they are then left out of a provisional link.
    """
    settings = state.get(sk.SETTINGS)
    if settings is None or settings.problem:
        return False
    tok = cached(settings_key(settings))
    return tok is not None and state.get(sk.owner_key(sk.VOCAB_SIZE)) == id(tok)


def publish(page: str | None = None, *, final: bool = True) -> None:
    """Write the current settings (and the slider's size) into ``st.query_params``, changing only what differs.

    Call it with ``final=True`` when the run's values are final: at the end of the run
    (``app.py``) or of a fragment's run (the Merges step).  ``app.py`` also calls it with
    ``final=False`` before the page runs, for a page that stops early (after ``st.stop()``
    nothing more can be sent): that provisional link carries the slider's size and the
    Merges step only when they belong to the tokenizer of the current settings, since
    the page would reset them otherwise.

    Args:
        page: the ``url_path`` of the page on screen (``""`` for the Playground); settings of
            other pages are left out.  ``None``: the page of the last call in this session.
        final: the page has run (see above).
    """
    state = st.session_state
    if page is None:
        page = state.get(PAGE_KEY)
    else:
        state[PAGE_KEY] = page
    want = query_from_state(state, page)
    current = final or _on_screen_is_current(state)
    if not current:
        want.pop("step", None)
    if PENDING_SIZE in state:
        want["size"] = str(state[PENDING_SIZE])
    elif current and sk.VOCAB_SIZE in state and state.get(sk.owner_key(sk.VOCAB_SIZE)) is not None:
        want["size"] = str(state[sk.VOCAB_SIZE])
    have = st.query_params.to_dict()
    for key in [k for k in have if k not in want]:
        del st.query_params[key]
    changed = {k: v for k, v in want.items() if have.get(k) != v}
    if changed:
        st.query_params.update(changed)
