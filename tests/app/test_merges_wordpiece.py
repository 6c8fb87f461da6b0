"""The Merges page with WordPiece: the trainer's segmentation at each step, the score card, ties, play.

Expected segmentations come from an independent naive replay (the trace's
merges applied one after the other as strings to words cut by Hugging Face's
own ``BertPreTokenizer``), not from the replay the page uses.
"""

from __future__ import annotations

import re

import pytest

from bpe_core.textbook.wordpiece import hf_bert_pretokenizer
from bpe_core.wordpiece import train_wordpiece
from tests.app.test_merges_views import parse_tokens
from tests.conftest import html_bodies, sample
from tests.engine.test_wordpiece_trace import naive_snapshots
from ui.merges.card import card_html
from ui.merges.history import WordPieceMergeHistory, history_for

# ---------------------------------------------------------------------------
# the history itself (no Streamlit run)


def test_card_of_a_hand_worked_example():
    # Words "ab" x2, "ac" x1; alphabet a, ##b, ##c.  Step 0: freq a = 3, ##b = 2, ##c = 1; pairs (a, ##b) = 2,
    # (a, ##c) = 1.  Scores 2 / (3 * 2) = 1/3 and 1 / (3 * 1) = 1/3 tie; (a, ##b) occurs first (word "ab"), so
    # merge #1 = a + ##b -> ab, score 0.3333, tokens 2*2 + 2*1 = 6 -> 4.
    # Merge #2 = a + ##c -> ac: freq a = 1, ##c = 1, pair 1, score 1 / (1 * 1) = 1, tokens 4 -> 3.
    text = "ab ab ac"
    history = history_for(train_wordpiece(text, 100), text)
    assert isinstance(history, WordPieceMergeHistory) and history.n_steps == 2
    c1 = history.card(1)
    assert c1.parts == ("a", "##b", "ab") and (c1.tokens_before, c1.tokens_after) == (6, 4)
    facts = {label: (value, detail) for label, value, detail, _help in c1.facts}
    assert facts["Score"] == ("0.3333", "= 2 / (3 × 2)")
    assert facts["Pair frequency"][0] == "2"
    assert facts["Part frequencies"] == ("3 · 2", "a · ##b")
    assert facts["Tokens of the text"] == ("6 → 4", "−2 (33.3%)")
    c2 = history.card(2)
    facts2 = {label: (value, detail) for label, value, detail, _help in c2.facts}
    assert facts2["Score"] == ("1", "= 1 / (1 × 1)") and facts2["Tokens of the text"][0] == "4 → 3"
    assert history.card(0) is None and "every character is its own token" in card_html(None, 6, history.unit)
    # why merge #1: both pairs, the winner marked, the tie rule in words
    why = history.why(1)
    assert why.problem is None
    assert list(why.table["left"] + " + " + why.table["right"]) == ["a + ##b", "a + ##c"]
    assert list(why.table["chosen"]) == ["✔", ""] and list(why.table["score"]) == [1 / 3, 1 / 3]
    notes = " ".join(why.notes)
    assert "<b>Tie:</b> 2 pairs have exactly the score 1/3" in notes
    assert "first occurrence comes earliest" in notes
    assert "word #1 &#x27;ab&#x27;" in notes and "word #2 &#x27;ac&#x27;" in notes
    # step 2: no tie
    assert "No tie" in " ".join(history.why(2).notes)
    # the segmentation drawn at each step (whitespace is no token)
    assert [s.display for s in history.view(0).token_spans(text)] == ["a", "b", "a", "b", "a", "c"]
    assert [s.display for s in history.view(1).token_spans(text)] == ["ab", "ab", "a", "c"]
    assert [s.display for s in history.view(2).token_spans(text)] == ["ab", "ab", "ac"]
    assert history.highlight(1) == {c1.ids[2]: 1}  # seam after "a"


def test_figures_mark_step_k():
    text = sample("english")
    tok = train_wordpiece(text, 1000)
    history = WordPieceMergeHistory(tok, text)
    for k in (0, 1, 300, history.n_steps):
        scores, curve, lengths = history.figures(k)
        assert list(scores.data[0].y) == [s.score for s in tok.trace]
        assert list(scores.data[1].x) == ([k] if k else [])
        assert list(curve.data[1].y) == [tok.trace[k - 1].tokens_after if k else tok.training.initial_tokens]
        assert list(curve.data[1].x) == [tok.min_vocab_size + k]  # every merge of this text adds an id
        # token lengths in characters (## not counted), of the tokens learned so far
        learned = [len(s.merged.removeprefix("##")) for s in tok.trace[:k]]
        assert sum(lengths.data[0].y) == len(learned)
        bars = dict(zip(lengths.data[0].x or (), lengths.data[0].y or ()))
        assert all(bars.get(n, 0) == learned.count(n) for n in range(2, 12))


def test_table_is_the_trace():
    text = sample("english")
    tok = train_wordpiece(text, 1000)
    table = WordPieceMergeHistory(tok, text).table()
    assert list(table["merge #"]) == list(range(1, len(tok.trace) + 1))
    assert list(table["new token"]) == [s.merged for s in tok.trace]
    assert list(table["pair freq"]) == [s.pair_freq for s in tok.trace]


# ---------------------------------------------------------------------------
# the page


@pytest.fixture
def wp_merges(app):
    app.radio(key="algorithm").set_value("wordpiece").run()
    app.switch_page("app_pages/merges.py").run()
    assert not app.exception, app.exception
    return app


@pytest.fixture(scope="module")
def trained():
    text = sample("english")
    return text, train_wordpiece(text, 1000)


def step_of(at) -> int:
    return at.slider(key="merge_step").value


def card_number(at) -> str:
    body = html_bodies(at)
    i = body.index('<div class="no">')
    return body[i + len('<div class="no">') : body.index("</div>", i)]


def shown_tokens(at) -> list[list]:
    """(classes, text, seam) of every token of the step's text (not the examples under the card)."""
    bodies = [h.proto.body for h in at.get("html") if "merge-examples" not in h.proto.body]
    return parse_tokens("\n".join(bodies))


def expected_pieces(text: str, tok, k: int) -> list[str]:
    """The naive replay's pieces after k merges of every word occurrence of ``text``, ``##`` removed."""
    snaps, _words, _n = naive_snapshots(text, [(s.left, s.right) for s in tok.trace], [k])
    return [p.removeprefix("##") for w, _span in hf_bert_pretokenizer().pre_tokenize_str(text) for p in snaps[k][w]]


def test_page_loads_at_merge_1_in_the_trainers_view(wp_merges, trained):
    text, tok = trained
    assert step_of(wp_merges) == 1 and wp_merges.slider(key="merge_step").max == len(tok.trace)
    assert card_number(wp_merges) == "Merge #1"
    toks = shown_tokens(wp_merges)
    assert [t for _c, t, _s in toks] == expected_pieces(text, tok, 1)
    first = tok.trace[0]
    assert [t for c, t, _s in toks if "hl" in c] == [first.merged]  # "1930s" holds "19" once
    body = html_bodies(wp_merges)
    assert '<span class="gap">' in body  # the whitespace between words is drawn, uncoloured
    assert "as training segments it" in " ".join(c.value for c in wp_merges.caption)


def test_moving_the_step_changes_the_card_and_the_text(wp_merges, trained):
    text, tok = trained
    before = None
    for k in (50, 2, 400):
        wp_merges.slider(key="merge_step").set_value(k).run()
        assert not wp_merges.exception
        assert card_number(wp_merges) == f"Merge #{k}"
        step = tok.trace[k - 1]
        body = html_bodies(wp_merges)
        score = f"= {step.pair_freq:,} / ({step.left_freq:,} × {step.right_freq:,})"
        assert f'<div class="v">{step.score:.4g}</div><div class="d">{score}</div>' in body
        toks = shown_tokens(wp_merges)
        now = [t for _c, t, _s in toks]
        assert now == expected_pieces(text, tok, k)
        hl = [t for c, t, _s in toks if "hl" in c]
        assert set(hl) == {step.merged.removeprefix("##")} and hl
        assert now != before
        before = now
        # why this pair: the winner row is the trainer's merge k
        why = wp_merges.dataframe[0].value
        assert (why.iloc[0]["left"], why.iloc[0]["right"], why.iloc[0]["pair freq"]) == (
            step.left,
            step.right,
            step.pair_freq,
        )
        assert list(why["score"]) == sorted(why["score"], reverse=True)
        assert not wp_merges.error


def test_play_advances(wp_merges):
    wp_merges.button(key="merge_play").click().run()
    assert wp_merges.session_state["merge_playing"] is True
    start = step_of(wp_merges)
    wp_merges.run()  # a timer tick
    assert step_of(wp_merges) == start + 1 and card_number(wp_merges) == f"Merge #{start + 1}"
    wp_merges.run()
    assert step_of(wp_merges) == start + 2
    wp_merges.button(key="merge_play").click().run()
    stopped = step_of(wp_merges)
    wp_merges.run()
    assert step_of(wp_merges) == stopped


def test_a_tie_is_explained_in_words(wp_merges, trained):
    _text, tok = trained
    # merge #1 of this text ("1" + "##9" in "1930s") ties at score 1 with "##9" + "##3" and "##3" + "##0",
    # which occur later in the same word: 1 / (1 * 1) each, since "1930s" is the only word with these characters
    assert (tok.trace[0].left, tok.trace[0].right, tok.trace[0].score) == ("1", "##9", 1.0)
    body = html_bodies(wp_merges)
    assert "<b>Tie:</b>" in body and "first occurrence comes earliest" in body
    assert re.search(r"both first occur in word #\d+ &#x27;1930s&#x27;", body)


def test_lowercasing_is_passed_through(wp_merges):
    wp_merges.toggle(key="wp_lowercase").set_value(True).run()
    assert not wp_merges.exception
    text = sample("english")
    tok = train_wordpiece(text, 1000, lowercase=True)
    assert wp_merges.slider(key="merge_step").max == len(tok.trace)
    # the drawn text keeps the original capitals (offsets map back to the text as typed)
    shown = "".join(t for _c, t, _s in shown_tokens(wp_merges))
    assert shown == "".join(text.split()) and "The" in shown


def test_pasted_markup_is_escaped_and_a_text_without_pairs_explains_itself(wp_merges):
    text = "<b>bold</b> <b>bold</b> <script>alert(1)</script> & more <img src=x onerror=alert(1)>"
    wp_merges.radio(key="source").set_value("Paste").run()
    wp_merges.text_area(key="paste_text").input(text).run()
    assert not wp_merges.exception
    body = html_bodies(wp_merges)
    assert "<script" not in body and "<b>bold" not in body and "<img" not in body
    # every non-space character is drawn, in order (punctuation is a word of its own under BERT splitting)
    assert "".join(t for _c, t, _s in shown_tokens(wp_merges)) == "".join(text.split())
    # one-character words only: nothing to merge, and the page says so
    wp_merges.text_area(key="paste_text").input("a b c . !").run()
    assert not wp_merges.exception
    assert any("No merge was learned" in i.value for i in wp_merges.info)
    assert wp_merges.text_area(key="paste_text").value == "a b c . !"


def test_why_a_rare_pair_wins_with_the_numbers_on_screen():
    """Issue 32.4: the English sample's merge #3 joins 193 + ##0 (the digits of "1930s", seen once, the parts
    nowhere else): the page says why it beats the most frequent pair, with the numbers of this step."""
    text = sample("english")
    tok = train_wordpiece(text, 1000, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    step = tok.trace[2]
    assert (step.left, step.right, step.pair_freq, step.left_freq, step.right_freq) == ("193", "##0", 1, 1, 1)
    history = history_for(tok, text)
    notes = " ".join(history.why(3).notes)
    most = history.why(3).ranking.most_frequent
    assert most.pair_freq > 1
    assert "<b>Why a rarer pair wins:</b> <code>193</code> + <code>##0</code> occurs once" in notes
    assert "they never occur apart" in notes and "1 / (1 × 1) = 1" in notes
    assert f"({most.pair_freq:,} times), can score at most 1 / {most.pair_freq:,} = {1 / most.pair_freq:.4g}" in notes
    # a merge of the most frequent pair itself needs no such note
    k = next(i for i in range(1, history.n_steps + 1) if history.why(i).ranking.most_frequent.pair_freq
             == tok.trace[i - 1].pair_freq)  # fmt: skip
    assert "Why a rarer pair wins" not in " ".join(history.why(k).notes)


def test_the_rare_pair_note_is_on_the_page(wp_merges):
    wp_merges.slider(key="merge_step").set_value(3).run()
    assert not wp_merges.exception, wp_merges.exception
    body = html_bodies(wp_merges)
    assert "Why a rarer pair wins:</b> <code>193</code> + <code>##0</code> occurs once" in body
    assert "1 / (1 × 1) = 1" in body
