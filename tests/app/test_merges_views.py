"""The Merges page's pure helpers: figure data, the merge history, highlight HTML, search."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest

from bpe_core import train_bpe
from bpe_core.spans import TokenSpan
from tests.conftest import sample, unmark_whitespace
from ui import charts, render
from ui.limits import MAX_STEP_CHARS
from ui.merges.card import card_html
from ui.merges.history import BPEMergeHistory, history_for
from ui.merges.tables import filter_merges
from ui.merges.text import step_text_html
from ui.render import readable


@pytest.fixture(scope="module")
def english_history():
    text = sample("english")
    return BPEMergeHistory(train_bpe(text, 1000, ["<|endoftext|>"]), text)


class Tokens(HTMLParser):
    """(classes, text, has_seam) of every ``span.tk`` in an HTML body."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tokens: list[list] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "span" and "tk" in classes:
            self.depth = 1
            self.tokens.append([classes, "", False])
        elif tag == "span" and self.depth:
            self.depth += 1
            if "seam" in classes:
                self.tokens[-1][2] = True

    def handle_endtag(self, tag):
        if tag == "span" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.tokens[-1][1] += data


def parse_tokens(body: str) -> list[list]:
    p = Tokens()
    p.feed(body)
    return p.tokens


# ---------------------------------------------------------------------------
# figures


def test_pair_count_figure_is_the_trace_with_a_marker_at_k(english_history):
    trace = english_history.trace
    for k in (1, 7, 300, len(trace)):
        fig = english_history.figures(k)[0]
        series, marker = fig.data[0], fig.data[1]
        assert list(series.y) == [s.count for s in trace]
        assert list(series.x) == list(range(1, len(trace) + 1))
        assert list(marker.x) == [k] and list(marker.y) == [trace[k - 1].count]
        assert fig.layout.yaxis.type == "log"
        assert fig.layout.shapes[0].x0 == k  # the dotted line at the step


def test_pair_count_figure_at_step_zero_has_no_point():
    fig = charts.merge_pair_count_figure([5, 3, 3], 0)
    assert list(fig.data[1].x) == [] and fig.layout.shapes[0].x0 == 0
    with pytest.raises(ValueError, match=r"step 4 is out of range 0\.\.3"):
        charts.merge_pair_count_figure([5, 3, 3], 4)
    with pytest.raises(ValueError, match="labels has 1 items for 3 counts"):
        charts.merge_pair_count_figure([5, 3, 3], 1, labels=["x"])


def test_tokens_figure_marks_the_current_vocabulary_size(english_history):
    text = sample("english")
    tok = english_history.tokenizer
    k = 120
    fig = english_history.figures(k)[1]
    curve, marker = fig.data
    assert curve.x[0] == 257 and curve.x[-1] == tok.max_vocab_size
    # the curve's first point is the text's bytes (one token each, plus nothing for the absent specials);
    # the marker is the real token count at 257 + k, checked by encoding the text with that view
    assert curve.y[0] == len(text.encode())
    assert list(marker.x) == [257 + k]
    assert list(marker.y) == [len(tok.with_vocab_size(257 + k).encode(text))]
    assert marker.customdata[0] == pytest.approx(len(text.encode()) / marker.y[0])


def test_tokens_figure_errors():
    with pytest.raises(ValueError, match="2 vocab sizes but 1 token counts"):
        charts.merge_tokens_figure([256, 257], [10], 256)
    with pytest.raises(ValueError, match="vocab size 300 is not on the curve"):
        charts.merge_tokens_figure([256, 257], [10, 9], 300)


def test_length_figure_counts_the_learned_tokens(english_history):
    tok = english_history.tokenizer
    k = 200
    fig = english_history.figures(k)[2]
    bars = fig.data[0]
    # independent count: the byte length of every token id created by the first k merges
    lengths = Counter(len(tok.token_bytes(new)) for _a, _b, new in tok.merge_ids[:k])
    assert dict(zip(bars.x, bars.y)) == {n: lengths.get(n, 0) for n in range(2, max(lengths) + 1)}
    current = len(tok.token_bytes(tok.merge_ids[k - 1][2]))
    colours = dict(zip(bars.x, bars.marker.color))
    assert colours[current] == charts.MERGE_MARK
    assert all(c == charts.MERGE_LINE for n, c in colours.items() if n != current)


def test_length_figure_empty_at_step_zero():
    fig = charts.merge_length_figure([], None)
    assert list(fig.data[0].x) == [] and list(fig.data[0].y) == []


# ---------------------------------------------------------------------------
# the history, the card and the highlighted text


def test_segmentation_at_step_k_equals_the_view_of_that_size(english_history):
    text = sample("english")
    fresh = train_bpe(text, 1000, ["<|endoftext|>"])  # an independent training run
    for k in (0, 1, 2, 50, 400, english_history.n_steps):
        body, occurrences = step_text_html(english_history, k, text)
        shown = parse_tokens(body)
        expected = fresh.with_vocab_size(256 + 1 + k).encode(text)
        assert len(shown) == len(expected), k
        # token by token, the page shows what the independent tokenizer of that size shows
        spans = fresh.with_vocab_size(256 + 1 + k).token_spans(text)
        assert [unmark_whitespace(t) for _c, t, _s in shown] == [sp.display for sp in spans], k
        highlighted = [t for c, t, _s in shown if "hl" in c]
        assert len(highlighted) == occurrences
        if k:
            new_id = fresh.merge_ids[k - 1][2]
            assert occurrences == expected.count(new_id) > 0
            assert set(highlighted) == {readable(fresh.token_bytes(new_id))}
        else:
            assert occurrences == 0


def test_a_long_text_with_windows_line_ends_is_drawn_exactly():
    # longer than MAX_STEP_CHARS, with no newline between two non-space characters: the drawn part ends on
    # a pre-token boundary, so its tokens at every step are the whole text's first tokens
    text = 2 * (sample("english") + "\n\n" + sample("python")).replace("\n", "\r\n")
    assert len(text) > MAX_STEP_CHARS + 2_000
    history = BPEMergeHistory(train_bpe(text, 600, ["<|endoftext|>"]), text)
    fresh = train_bpe(text, 600, ["<|endoftext|>"])
    for k in (0, 3, 200, history.n_steps):
        shown = [unmark_whitespace(t) for _c, t, _s in parse_tokens(step_text_html(history, k, text)[0])]
        assert MAX_STEP_CHARS <= len("".join(shown)) < len(text)
        whole = fresh.with_vocab_size(256 + 1 + k).token_spans(text)
        assert shown == [sp.display for sp in whole[: len(shown)]], k


def test_highlight_draws_a_seam_between_the_halves(english_history):
    text = sample("english")
    body, _n = step_text_html(english_history, 1, text)  # merge #1 is " " + "t"
    assert english_history.trace[0].left == b" " and english_history.trace[0].right == b"t"
    hl = [t for t in parse_tokens(body) if "hl" in t[0]]
    assert hl and all(t[1] == "·t" and t[2] for t in hl)
    assert 'class="bpe-view focus"' in body


def test_seam_is_skipped_inside_a_character():
    # "é" is C3 A9: a seam after one byte would split the character the token shows whole
    span = TokenSpan(300, "é".encode(), "é", 0, 1, rank=0)
    body = render.tokens_html([span], highlight={300: 1})
    ((classes, shown, seam),) = parse_tokens(body)
    assert "hl" in classes and shown == "é" and not seam
    # partial tokens show hex on both sides of the seam
    part = TokenSpan(301, b"\xe6\x9d", "<0xE6><0x9D>", 0, 1, is_partial=True, rank=1)
    ((classes, shown, seam),) = parse_tokens(render.tokens_html([part], highlight={301: 1}))
    assert shown == "<0xE6><0x9D>" and seam
    # a partial token's space is drawn visibly, highlighted or not
    spaced = TokenSpan(302, b" \xd7", " <0xD7>", 0, 2, is_partial=True, rank=2)
    assert parse_tokens(render.tokens_html([spaced]))[0][1] == "·<0xD7>"
    ((_c, shown, seam),) = parse_tokens(render.tokens_html([spaced], highlight={302: 1}))
    assert shown == "·<0xD7>" and seam


def test_highlight_escapes_user_text():
    evil = "<img src=x onerror=alert(1)>"
    span = TokenSpan(400, evil.encode(), evil, 0, len(evil), rank=3)
    body = render.tokens_html([span], highlight={400: 4})
    assert "<img" not in body and "&lt;img" in body
    ((_c, shown, seam),) = parse_tokens(body)
    assert shown == evil.replace(" ", "·") and seam


def test_card_shows_the_merge_and_escapes():
    text = "<b>x</b> <b>x</b> <b>x</b>"
    hist = BPEMergeHistory(train_bpe(text, 260, pattern=r"\S+"), text)
    # words "<b>x</b>" x3, bytes < b > x < / b >: (b,>) twice per word = 6; (<,b) (>,x) (x,<) (<,/) (/,b)
    # once each = 3.  Merge #1 is b + > (count 6, no overlap), leaving 26 - 6 = 20 tokens.
    card = hist.card(1)
    assert card.parts == ("b", ">", "b>") and card.facts[0][1] == "6" and card.facts[1][1] == "6"
    assert card.tokens_before == len(text.encode()) == 26 and card.tokens_after == 20
    html = card_html(card)
    assert '<span class="chip new">b<span class="seam"></span>&gt;<small>id 256</small>' in html
    assert "Merge #1" in html and "26 → 20" in html
    assert hist.card(0) is None
    assert "No merge yet" in card_html(None, 27)


def test_why_notes_explain_a_tie_and_an_overlap():
    text = "aaa aaa b ab"
    # words aaa x2, ab: (a,a) 2+2 = 4, (a,b) 1 -> (a,a) wins, counted 4, replaced 2 (overlap in "aaa")
    hist = BPEMergeHistory(train_bpe(text, 258, pattern=r"\S+"), text)
    why = hist.why(1)
    assert why.problem is None
    assert list(why.table["left"]) == ["a", "a"] and list(why.table["count"]) == [4, 1]
    assert list(why.table["would replace"]) == [2, 1] and list(why.table["chosen"]) == ["✔", ""]
    joined = " ".join(why.notes)
    assert "No tie" in joined and "Counted 4, replaced 2" in joined and "<code>aaa</code>" in joined
    # step 0 shows how merge #1 will be chosen
    assert hist.why(0).title == "Why merge #1 will join a + a"


def test_history_refuses_tokenizers_without_a_trace():
    from bpe_core import BPETokenizer

    tok = BPETokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
    with pytest.raises(ValueError, match="no training trace"):
        BPEMergeHistory(tok, "ab")
    unregistered = SimpleNamespace(algorithm="morfessor", name="Morfessor")  # an algorithm with no merge history
    with pytest.raises(NotImplementedError, match="does not show Morfessor"):
        history_for(unregistered, "ab")


def test_history_step_bounds(english_history):
    with pytest.raises(ValueError, match="out of range"):
        english_history.view(english_history.n_steps + 1)
    with pytest.raises(ValueError, match="out of range"):
        english_history.card(-1)


# ---------------------------------------------------------------------------
# search


def test_filter_merges(english_history):
    table = english_history.table()
    assert len(table) == english_history.n_steps
    assert list(table["merge #"]) == list(range(1, len(table) + 1))
    # a space can be typed as a space or as the middle dot the table shows
    a = filter_merges(table, " the")
    b = filter_merges(table, "·the")
    assert list(a.index) == list(b.index) and len(a) > 0
    assert all("·the" in " ".join(r).casefold() for r in a[["left", "right", "new token"]].itertuples(index=False))
    # case-insensitive
    assert len(filter_merges(table, "THE")) == len(filter_merges(table, "the"))
    # a number matches the merge number or the id exactly
    seven = filter_merges(table, "7")
    assert 7 in set(seven["merge #"]) and 7 + 256 in set(seven["id"])
    assert set(filter_merges(table, "263")["id"]) >= {263}
    assert filter_merges(table, "   ") is table
    assert len(filter_merges(table, "no such token ⁂")) == 0


def test_readable():
    assert readable(b" t\n\t") == "·t↵→"
    assert readable(b"\xe6\x9d") == "<0xE6><0x9D>"
    assert readable("é".encode()) == "é"
