"""The Merges page through AppTest: the step control drives the card, the highlighted text and the table."""

from __future__ import annotations

import pytest

from bpe_core import train_bpe
from tests.app.test_merges_views import parse_tokens
from tests.conftest import html_bodies, sample, unmark_whitespace
from ui.render import readable


def expected(text: str | None = None, vocab: int = 1000, specials=("<|endoftext|>",), pattern: str = "gpt2"):
    text = sample("english") if text is None else text
    return train_bpe(text, vocab, specials, pattern)


@pytest.fixture
def merges(app):
    app.switch_page("app_pages/merges.py").run()
    assert not app.exception, app.exception
    return app


def step_of(at) -> int:
    return at.slider(key="merge_step").value


def shown_tokens(at) -> list[list]:
    """(classes, text, seam) of every token of the step's coloured text (not of the examples under the card)."""
    bodies = [h.proto.body for h in at.get("html") if "merge-examples" not in h.proto.body]
    return parse_tokens("\n".join(bodies))


def example_windows(at) -> list[list[list]]:
    """The tokens of each example under the card."""
    bodies = [h.proto.body for h in at.get("html") if "merge-examples" in h.proto.body]
    return [parse_tokens(part) for body in bodies for part in body.split('<div class="bpe-view')[1:]]


def card_number(at) -> str:
    body = html_bodies(at)
    i = body.index('<div class="no">')
    return body[i + len('<div class="no">') : body.index("</div>", i)]


def test_page_loads_at_merge_1(merges):
    text = sample("english")
    tok = expected()
    assert step_of(merges) == 1 and merges.slider(key="merge_step").max == len(tok.trace)
    assert card_number(merges) == "Merge #1"
    toks = shown_tokens(merges)
    at_1 = tok.with_vocab_size(256 + 1 + 1)
    assert len(toks) == len(at_1.encode(text))
    assert unmark_whitespace("".join(t for _c, t, _s in toks)) == text
    first = tok.trace[0]
    hl = [t for c, t, _s in toks if "hl" in c]
    assert set(hl) == {readable(first.merged)} and len(hl) == at_1.encode(text).count(first.new_id)


def test_moving_the_step_changes_the_merge_and_the_text(merges):
    text = sample("english")
    tok = expected()
    before = [t for _c, t, _s in shown_tokens(merges)]
    for k in (50, 2, 400):
        merges.slider(key="merge_step").set_value(k).run()
        assert not merges.exception
        assert card_number(merges) == f"Merge #{k}"
        step = tok.trace[k - 1]
        toks = shown_tokens(merges)
        # segmentation at step k == the tokenizer with 256 + 1 special + k tokens
        spans = tok.with_vocab_size(256 + 1 + k).token_spans(text)
        assert [unmark_whitespace(t) for _c, t, _s in toks] == [s.display for s in spans]
        hl = [t for c, t, _s in toks if "hl" in c]
        assert set(hl) == {readable(step.merged)}
        assert len(hl) == sum(1 for s in spans if s.id == step.new_id)
        assert f"{step.count:,}" in html_bodies(merges)
        # the examples under the card: distinct places, each around a highlighted token
        windows = example_windows(merges)
        assert 1 <= len(windows) <= 6
        assert all(any("hl" in c for c, _t, _s in w) for w in windows)
        assert len({tuple(t for _c, t, _s in w) for w in windows}) == len(windows)
        now = [t for _c, t, _s in toks]
        assert now != before
        before = now


def test_buttons_step_through(merges):
    n = len(expected().trace)
    merges.button(key="merge_next").click().run()
    assert step_of(merges) == 2 and card_number(merges) == "Merge #2"
    merges.button(key="merge_prev").click().run()
    merges.button(key="merge_prev").click().run()
    assert step_of(merges) == 0 and "No merge yet" in html_bodies(merges)
    assert not any("hl" in c for c, _t, _s in shown_tokens(merges))
    assert len(shown_tokens(merges)) == len(sample("english").encode())  # one token per byte
    merges.button(key="merge_last").click().run()
    assert step_of(merges) == n and card_number(merges) == f"Merge #{n}"
    merges.button(key="merge_first").click().run()
    assert step_of(merges) == 0


def test_play_advances_the_step_and_pause_stops_it(merges):
    merges.button(key="merge_play").click().run()
    assert merges.session_state["merge_playing"] is True
    assert merges.button(key="merge_play").label == "Pause"
    start = step_of(merges)
    merges.run()  # a timer tick
    assert step_of(merges) == start + 1
    assert card_number(merges) == f"Merge #{start + 1}"
    merges.run()
    assert step_of(merges) == start + 2
    merges.select_slider(key="merge_speed").set_value("5 / s").run()  # 5 merges per tick, once a second
    merges.run()
    assert step_of(merges) == start + 2 + 5
    merges.button(key="merge_play").click().run()
    assert merges.session_state["merge_playing"] is False
    stopped = step_of(merges)
    merges.run()
    assert step_of(merges) == stopped


def test_play_stops_at_the_last_merge(merges):
    n = len(expected().trace)
    merges.slider(key="merge_step").set_value(n - 1).run()
    merges.button(key="merge_play").click().run()
    merges.run()
    assert step_of(merges) == n
    merges.run()
    assert merges.session_state["merge_playing"] is False and step_of(merges) == n
    # playing again from the end starts over
    merges.button(key="merge_play").click().run()
    assert step_of(merges) == 0 and merges.session_state["merge_playing"] is True


def test_why_this_pair_shows_the_winner_and_the_tie_rule(merges):
    tok = expected()
    # find a merge whose count ties with the runner-up in the page's table, and one without a tie
    seen = {True: None, False: None}
    for k in range(1, 40):
        merges.slider(key="merge_step").set_value(k).run()
        why = merges.dataframe[0].value
        step = tok.trace[k - 1]
        # the winner row is the trainer's merge k
        assert (why.iloc[0]["left"], why.iloc[0]["right"], why.iloc[0]["count"]) == (
            readable(step.left),
            readable(step.right),
            step.count,
        )
        assert why.iloc[0]["chosen"] == "✔" and list(why["count"]) == sorted(why["count"], reverse=True)
        tie = len(why) > 1 and why.iloc[1]["count"] == step.count
        body = html_bodies(merges)
        assert ("<b>Tie:</b>" in body) == tie and ("No tie" in body) == (not tie)
        seen[tie] = k
    assert seen[True] and seen[False]


def test_merge_table_search_and_window(merges):
    tok = expected()
    table = merges.dataframe[1].value
    # around step 1: the first rows, the current one included
    assert 1 in list(table["merge #"])
    merges.text_input(key="merge_query").input("·the").run()
    found = merges.dataframe[1].value
    want = [s.rank + 1 for s in tok.trace if "·the" in " ".join(map(readable, (s.left, s.right, s.merged))).casefold()]
    assert list(found["merge #"]) == want and want
    merges.text_input(key="merge_query").input("12").run()
    assert 12 in list(merges.dataframe[1].value["merge #"])


def test_a_new_text_resets_the_step(merges):
    merges.slider(key="merge_step").set_value(60).run()
    merges.selectbox(key="sample").set_value("python").run()
    assert not merges.exception
    assert step_of(merges) == 1
    tok = expected(sample("python"))
    assert merges.slider(key="merge_step").max == len(tok.trace)
    assert card_number(merges) == "Merge #1"
    # python's first merge is two spaces, whose count (264) overlaps: 132 replaced
    first = tok.trace[0]
    assert (first.left, first.right) == (b" ", b" ") and first.count == 2 * first.replaced
    body = html_bodies(merges)
    assert f'<div class="v">{first.replaced:,}</div><div class="d">{first.count - first.replaced:,} overlapped' in body


def test_pasted_markup_is_escaped_everywhere(merges):
    text = "<b>bold</b> <b>bold</b> <script>alert(1)</script> <b>bold</b> & more <b>"
    merges.radio(key="source").set_value("Paste").run()
    merges.text_area(key="paste_text").input(text).run()
    assert not merges.exception
    body = html_bodies(merges)
    assert "<script" not in body and "<b>bold" not in body
    assert unmark_whitespace("".join(t for _c, t, _s in shown_tokens(merges))) == text
    # the tables hold the raw token text (data, not markup)
    assert any("<" in v for v in merges.dataframe[1].value["new token"])


def test_text_without_pairs_explains_itself(merges):
    merges.radio(key="source").set_value("Paste").run()
    # pre-tokens "a", "\n", "b", "\n", "c": one byte each, so there is no pair to merge
    merges.text_area(key="paste_text").input("a\nb\nc").run()
    assert not merges.exception
    assert any("No merge was learned" in i.value for i in merges.info)


def test_step_and_speed_survive_a_visit_to_another_page(merges):
    merges.slider(key="merge_step").set_value(42).run()
    merges.select_slider(key="merge_speed").set_value("10 / s").run()
    merges.switch_page("app_pages/playground.py").run()
    merges.switch_page("app_pages/merges.py").run()
    assert not merges.exception
    assert step_of(merges) == 42 and card_number(merges) == "Merge #42"
    assert merges.select_slider(key="merge_speed").value == "10 / s"


def test_all_merges_lists_the_whole_table(merges):
    n = len(expected().trace)
    merges.slider(key="merge_step").set_value(200).run()
    window = merges.dataframe[1].value
    assert len(window) == 13 and 200 in list(window["merge #"])
    merges.toggle(key="merge_table_all").set_value(True).run()
    assert list(merges.dataframe[1].value["merge #"]) == list(range(1, n + 1))
