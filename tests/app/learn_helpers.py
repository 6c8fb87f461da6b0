"""Opening a lesson in AppTest and reading what it shows (text, figure cards, chip rows, tables)."""

from __future__ import annotations

from html.parser import HTMLParser

from streamlit.testing.v1 import AppTest

from tests.conftest import APP, unmark_whitespace, unmd

LEARN = "app_pages/learn.py"


def open_lesson(slug: str | None, query: dict[str, str] | None = None, **state) -> AppTest:
    """The app opened from a link to the Learn page (``?lesson=<slug>`` and ``query``), run once, without error."""
    at = AppTest.from_file(str(APP), default_timeout=180)
    if slug is not None:
        at.query_params["lesson"] = slug
    at.query_params.update(query or {})
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(LEARN)
    at.run()
    assert not at.exception, at.exception
    return at


class _Text(HTMLParser):
    """The visible text of HTML (tags dropped, entities decoded, styles and scripts left out)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self.skip += 1
        elif tag in ("div", "small", "br"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_text(body: str) -> str:
    p = _Text()
    p.feed(body)
    return "".join(p.parts)


def page_text(at: AppTest) -> str:
    """Everything the page shows as text: titles, Markdown, notes and cards (st.html), tables, captions."""
    parts = [t.value for t in at.title]
    parts += [unmd(m.value) for m in at.markdown]
    parts += [html_text(h.proto.body) for h in at.get("html")]
    parts += [t.value.to_string() for t in at.table]
    parts += [unmd(c.value) for c in at.caption]
    return "\n".join(parts)


class _Blocks(HTMLParser):
    """The lessons' figure cards and chip rows, read from their HTML (nested spans followed with a stack)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[str, list[list[str]]]] = []  # (label, [[chip text, small line], ...])
        self.facts: list[list[str]] = []  # [label, value, detail]
        self.stack: list[str] = []  # the role of each open element: "row", "lab", "chip", "small", "l", "v", "d", ""

    def _role(self, tag: str, cls: list[str]) -> str:
        inside = set(self.stack)
        if tag == "div" and "lesson-chips" in cls:
            self.rows.append(("", []))
            return "row"
        if "row" in inside and tag == "span" and "lab" in cls:
            return "lab"
        if "row" in inside and tag == "span" and "chip" in cls:
            self.rows[-1][1].append(["", ""])
            return "chip"
        if "chip" in inside and tag == "small":
            return "small"
        if tag == "div" and "fact" in cls and "facts" in inside:
            self.facts.append(["", "", ""])
            return "fact"
        if tag == "div" and "lesson-facts" in cls:
            return "facts"
        if "fact" in inside and tag == "div" and cls[:1] in (["l"], ["v"], ["d"]):
            return cls[0]
        return ""

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "wbr", "img", "input"):
            return
        self.stack.append(self._role(tag, (dict(attrs).get("class") or "").split()))

    def handle_endtag(self, tag):
        if tag not in ("br", "wbr", "img", "input") and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        roles = [r for r in self.stack if r]
        role = roles[-1] if roles else ""
        if role == "lab":
            label, chips = self.rows[-1]
            self.rows[-1] = (label + data, chips)
        elif role == "chip":
            self.rows[-1][1][-1][0] += data
        elif role == "small":
            self.rows[-1][1][-1][1] += data
        elif role in ("l", "v", "d"):
            self.facts[-1]["lvd".index(role)] += data


def _blocks(at: AppTest) -> list[_Blocks]:
    out = []
    for h in at.get("html"):
        p = _Blocks()
        p.feed(h.proto.body)
        out.append(p)
    return out


def chip_rows(at: AppTest) -> list[tuple[str, list[tuple[str, str]]]]:
    """``[(row label, [(chip text with whitespace unmarked, small line), ...]), ...]`` of every chip row, in order."""
    return [
        (label, [(unmark_whitespace(t), small) for t, small in chips]) for p in _blocks(at) for label, chips in p.rows
    ]


def chip_row(at: AppTest, label: str) -> list[str]:
    """The chip texts of the first row whose label starts with ``label``."""
    return [t for t, _ in next(chips for lab, chips in chip_rows(at) if lab.startswith(label))]


def facts(at: AppTest) -> list[tuple[str, str, str]]:
    """``(label, value, detail)`` of every figure card on the page, in order."""
    return [tuple(f) for p in _blocks(at) for f in p.facts]


def fact(at: AppTest, label: str) -> tuple[str, str]:
    """``(value, detail)`` of the first figure card whose label starts with ``label``."""
    return next((v, d) for lab, v, d in facts(at) if lab.startswith(label))


def offsets(pairs) -> list[tuple[str, str]]:
    """``[(word, (start, end))]`` as the chips write them: ``(word, "start–end")``."""
    return [(w, f"{a}–{b}") for w, (a, b) in pairs]
