"""The Insights page through AppTest: every tab's numbers against independently derived values."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import train_bpe
from bpe_core.analysis.insights import heldout_split
from bpe_core.wordpiece import train_wordpiece
from tests.app.test_compare import table  # the figures tables (Compare's, the held-out one), read from their cells
from tests.conftest import APP, FULL_SIZE, html_bodies, metric, sample, token_texts, unmark_whitespace
from ui.insights_tabs import VIEWS

PAGE = "app_pages/insights.py"

# The CS336 handout corpus.  With whitespace splitting (\S+) its merges are, by hand (see test_bpe_train):
# 1 s+t=st  2 e+st=est  3 o+w=ow  4 l+ow=low  5 w+est=west  6 n+e=ne.  The sidebar's default special token
# <|endoftext|> takes id 256, so the merges get ids 257..262 and 263 is the vocabulary size for all six.
CS336 = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
CS336_LINK = {"src": "paste", "text": CS336, "pattern": "custom", "regex": r"\S+", "vocab": "263"}
TIKTOKEN_NAME = {"GPT-2 (r50k_base)": "r50k_base", "GPT-4 (cl100k_base)": "cl100k_base",
                 "GPT-4o (o200k_base)": "o200k_base"}  # fmt: skip


def open_insights(view: str, query: dict | None = None) -> AppTest:
    """The app opened on the Insights page, at one tab, from a link's settings."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"size": str(FULL_SIZE), **(query or {})})  # the tokenizer at its full size
    at.run()
    at.switch_page(PAGE)
    at.session_state["ins_tab"] = VIEWS[view]
    at.run()
    assert not at.exception, at.exception
    return at


def cell_number(cell: str) -> int | None:
    """A table's number written out (``"30,001"``), or ``None`` for the dash of a missing one (never ``None``)."""
    assert cell is not None and cell != "None"
    return None if cell == "—" else int(cell.replace(",", ""))


def frame(at, i: int = 0):
    return at.dataframe[i].value


def token_tables(at) -> list[pd.DataFrame]:
    """The page's tables of tokens (HTML, :func:`ui.insights_view.token_table`), read from each cell's ``data-value``:
    whole numbers as ``int``, tokens as the text shown."""

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.rows: list[dict] = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr":
                self.rows.append({})
            elif tag == "td" and "data-col" in a:
                raw = a["data-value"]
                self.rows[-1][a["data-col"]] = int(raw) if "tok" not in (a.get("class") or "") else raw

    out = []
    for body in (h.proto.body for h in at.get("html")):
        if 'class="fig-table numbered"' in body:
            p = Cells()
            p.feed(body)
            out.append(pd.DataFrame([r for r in p.rows if r]))
    return out


def test_every_tab_opens_on_the_default_sample():
    at = open_insights("genealogy")
    for key, label in VIEWS.items():
        at.session_state["ins_tab"] = label
        at.run()
        assert not at.exception, (key, at.exception)
        assert not at.error, (key, [e.value for e in at.error])


@pytest.mark.parametrize(
    "query",
    [
        {"algo": "wordpiece", "vocab": "400"},  # compared with BERT's vocabulary where the tab compares
        {"sample": "multilingual", "pattern": "custom", "regex": r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"},
    ],
)
def test_every_tab_opens_for_wordpiece_and_a_custom_pattern(query):
    at = open_insights("genealogy", query)
    for key, label in VIEWS.items():
        at.session_state["ins_tab"] = label
        at.run()
        assert not at.exception, (key, at.exception)
        assert not at.error, (key, [e.value for e in at.error])


# ---------------------------------------------------------------------------
# token genealogy


def test_genealogy_by_hand_on_cs336():
    at = open_insights("genealogy", CS336_LINK)
    at.selectbox(key="ins_token").set_value(261).run()  # west
    assert metric(at, "Merge rank") == "#5"
    assert metric(at, "Merge levels") == "3"  # west <- est <- st <- s
    assert metric(at, "Base tokens") == "4"  # w e s t
    # widest -> [w, i, d, est] (w and est never meet); newest -> [ne, west], six times
    assert metric(at, "Occurrences") == "6"
    tree = next(b for b in (h.proto.body for h in at.get("html")) if "margin-left" in b)
    assert token_texts(tree) == ["west", "w", "est", "e", "st", "s", "t"]  # pre-order, down to bytes
    menu = at.selectbox(key="ins_token").options
    assert len(menu) == 6 and menu[0].startswith("ne")  # the latest merge first


def test_genealogy_reference_ranks_against_tiktoken(tiktoken_official):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    at = open_insights("genealogy")
    token_id = next(i for _a, _b, i in reversed(tok.merge_ids) if tok.token_bytes(i).startswith(b" "))
    at.selectbox(key="ins_token").set_value(token_id).run()
    data = tok.token_bytes(token_id)
    occurrences = tok.to_tiktoken().encode(text, allowed_special="all").count(token_id)
    assert metric(at, "Occurrences") == f"{occurrences:,}"
    rows = {r["Encoding"]: r for r in frame(at).to_dict("records")}
    assert len(rows) == 3
    assert set(rows) == set(TIKTOKEN_NAME)
    for label, name in TIKTOKEN_NAME.items():
        enc = tiktoken_official(name)
        row = rows[label]
        try:
            rank = enc.encode_single_token(data)
        except KeyError:
            rank = None
        assert row["Single token"] == (rank is not None)
        assert cell_number(row["Rank there"]) == rank
        assert cell_number(row["Tokens as text"]) == len(enc.encode(data.decode()))


def test_genealogy_for_wordpiece_draws_the_tree_and_says_what_does_not_apply():
    at = open_insights("genealogy", {"algo": "wordpiece", "vocab": "400"})
    tok = train_wordpiece(sample("english"), 400)
    hug = max((m for m in tok.trace if m.added), key=lambda m: len(m.merged))
    at.selectbox(key="ins_token").set_value(hug.new_id).run()
    assert not at.exception
    tree = next(b for b in (h.proto.body for h in at.get("html")) if "margin-left" in b)
    shown = token_texts(tree)
    assert shown[0] == hug.merged and shown[1:] and shown[-1].startswith("##")
    # the production lookup: BERT's vocabulary (the same algorithm's) by the token as written
    from bpe_core.production.encodings import package_file_path
    from bpe_core.production.registry import BERT_VOCAB_FILE

    bert = package_file_path(BERT_VOCAB_FILE).read_text(encoding="utf-8").split("\n")
    (row,) = frame(at, 0).to_dict("records")
    assert row["Encoding"] == "BERT (bert-base-uncased)"
    assert row["Single token"] == (hug.merged in bert)
    if hug.merged in bert:
        assert cell_number(row["Rank there"]) == bert.index(hug.merged)


# ---------------------------------------------------------------------------
# vocabulary diff


def test_vocab_diff_shares_against_tiktoken(tiktoken_official):
    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    learned = [tok.token_bytes(i) for _a, _b, i in tok.merge_ids]
    at = open_insights("diff")

    def has(enc, b):
        try:
            enc.encode_single_token(b)
            return True
        except KeyError:
            return False

    for label, name in (("GPT-2 (r50k_base)", "r50k_base"), ("GPT-4 (cl100k_base)", "cl100k_base")):
        enc = tiktoken_official(name)
        shared = sum(has(enc, b) for b in learned)
        assert metric(at, f"{label} has") == f"{shared / len(learned):.1%}"
    only, shared_tab = token_tables(at)
    gpt2 = tiktoken_official("r50k_base")
    expected_only = [r + 1 for r, b in enumerate(learned) if not has(gpt2, b)]
    assert list(only["Rank"]) == expected_only  # sorted by merge rank
    assert list(shared_tab["Rank in GPT-2 (r50k_base)"]) == [
        gpt2.encode_single_token(b) for b in learned if has(gpt2, b)
    ]


def test_vocab_diff_of_a_wordpiece_is_against_berts():
    """A WordPiece's learned tokens against BERT's vocab.txt, as written (##ing); counted here from the file."""
    from bpe_core.interface import TrainingSpec
    from bpe_core.production.encodings import package_file_path
    from bpe_core.production.registry import BERT_VOCAB_FILE

    at = open_insights("diff", {"algo": "wordpiece", "vocab": "400"})
    assert at.session_state["ins_production"] == ["bert"]  # the default for a WordPiece: the same algorithm's
    spec = TrainingSpec("wordpiece", 400, pattern="bert", special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))
    tok = spec.train(sample("english"))
    bert = set(package_file_path(BERT_VOCAB_FILE).read_text(encoding="utf-8").split("\n"))
    learned = [tok.id_to_token(i) for _r, i in tok.learned_tokens()]
    shared = [t for t in learned if t in bert]
    assert any(t.startswith("##") for t in shared)
    assert metric(at, "BERT (bert-base-uncased) has") == f"{len(shared) / len(learned):.1%}"
    only, shared_tab = token_tables(at)
    assert len(only) + len(shared_tab) == len(learned) and len(shared_tab) == len(shared)
    # GPT-2's vocabulary holds bytes: a WordPiece is not compared with it, and the page says whom to pick
    at.session_state["ins_production"] = ["gpt2"]
    at.run()
    assert any("Pick BERT (bert-base-uncased) above" in i.value for i in at.info) and not token_tables(at)


def test_vocab_diff_of_a_unigram_is_against_xlmrs():
    from bpe_core.production.encodings import EncodingUnavailable
    from bpe_core.production.registry import load_production

    try:
        xlmr = load_production("xlmr")
    except EncodingUnavailable as exc:
        pytest.skip(str(exc))
    at = open_insights("diff", {"algo": "unigram", "vocab": "600"})
    assert at.session_state["ins_production"] == ["xlmr"]
    _only, shared_tab = token_tables(at)
    pieces = set(xlmr.pieces)
    assert len(shared_tab) > 50 and all(
        t.replace(" ", "\u2581") in pieces or t in pieces for t in shared_tab["Token"].map(unmark_whitespace)
    )


# ---------------------------------------------------------------------------
# held-out evaluation


def test_heldout_numbers_on_real_text(tiktoken_official):
    text = sample("english")
    at = open_insights("heldout")
    rows = table(at)
    train_part, held = heldout_split(text, 0.2, 0, "<|endoftext|>")
    assert train_part and held and len(train_part) + len(held) < len(text)
    enc = tiktoken_official("r50k_base")
    gpt2 = rows["GPT-2 (r50k_base)"]
    assert gpt2["Held-out tokens"] == len(enc.encode(held, allowed_special="all"))
    n_train = len(enc.encode(train_part, allowed_special="all"))
    assert gpt2["Training-part bytes/token"] == pytest.approx(len(train_part.encode()) / n_train)
    full = train_bpe(text, 1000, ["<|endoftext|>"])
    part = train_bpe(train_part, 1000, ["<|endoftext|>"])
    part = part.with_vocab_size(min(full.vocab_size, part.vocab_size))
    ours = next(r for label, r in rows.items() if label.startswith("Trained on the training part"))
    held_tokens = len(part.to_tiktoken().encode(held, allowed_special="all"))
    train_tokens = len(part.to_tiktoken().encode(train_part, allowed_special="all"))
    assert ours["Held-out tokens"] == held_tokens
    held_bpt, train_bpt = len(held.encode()) / held_tokens, len(train_part.encode()) / train_tokens
    assert ours["Drop"] == pytest.approx(1 - held_bpt / train_bpt)
    assert held_bpt < train_bpt  # a small tokenizer compresses its own text better than unseen text
    seen_all = next(r for label, r in rows.items() if label.startswith("Trained on all the text"))
    assert seen_all["Held-out tokens"] == len(full.to_tiktoken().encode(held, allowed_special="all"))
    assert seen_all["Held-out tokens"] < ours["Held-out tokens"]  # having seen the part flatters it


def test_heldout_caption_explains_every_negative_drop(tiktoken_official):
    """Issue 32.5: a negative Drop (a production encoding compressing the held-out part better) is named and
    explained in the caption; the multilingual sample's tail gives GPT-2 one (computed with tiktoken)."""
    text = sample("multilingual")
    at = open_insights("heldout", {"sample": "multilingual", "split": "fraction"})
    train_part, held = heldout_split(text, 0.2, 0, "<|endoftext|>", by="fraction")
    enc = tiktoken_official("r50k_base")
    drop = 1 - (len(held.encode()) / len(enc.encode(held))) / (len(train_part.encode()) / len(enc.encode(train_part)))
    rows = table(at)
    assert rows["GPT-2 (r50k_base)"]["Drop"] == pytest.approx(drop)
    assert drop < 0  # GPT-2 compresses this tail better than the rest: -26 % (tiktoken)
    negative = {label: r["Drop"] for label, r in rows.items() if r["Drop"] < 0}
    (caption,) = [c.value for c in at.caption if c.value.startswith("Drop = 1 − held-out")]
    assert "A negative drop (" in caption and "easier text for it" in caption
    for label, value in negative.items():
        assert f"{label} {value:.1%}" in caption


def test_heldout_by_fraction_and_seed():
    text = sample("english")
    at = open_insights("heldout")
    at.radio(key="ins_split").set_value("fraction").run()
    at.slider(key="ins_fraction").set_value(0.3).run()
    _train, held = heldout_split(text, 0.3, 0, "<|endoftext|>", by="fraction")
    assert held and text.endswith(held)
    caption = next(c.value for c in at.caption if c.value.startswith("Held out"))
    assert f"**{len(held) / len(text):.1%}** of the characters ({len(held):,} of {len(text):,})" in caption


def test_heldout_share_is_the_share_of_characters_held_out():
    """Issue 32.5: the multilingual sample has 3 documents (81, 898 and 334 characters); 20 % asked, the caption
    says the share whole documents actually hold out; 10 % asked, they cannot come near, and the tail is held out."""
    text = sample("multilingual")
    at = open_insights("heldout", {"sample": "multilingual"})
    train_part, held = heldout_split(text, 0.2, 0, "<|endoftext|>")
    total = len(train_part) + len(held)
    assert 0.2 / 1.5 <= len(held) / total <= 0.2 * 1.5  # not the 68 % of before
    caption = next(c.value for c in at.caption if c.value.startswith("Held out"))
    assert f"**{len(held) / total:.1%}** of the characters ({len(held):,} of {total:,})" in caption
    at.slider(key="ins_fraction").set_value(0.1).run()
    assert not at.exception, at.exception
    (note,) = [i.value for i in at.info if i.value.startswith("Not split by documents")]
    assert "3 documents" in note and "not 10%" in note
    _train, tail = heldout_split(text, 0.1, 0, "<|endoftext|>", by="fraction")
    caption = next(c.value for c in at.caption if c.value.startswith("Held out"))
    assert f"({len(tail):,} of {len(text):,})" in caption


# ---------------------------------------------------------------------------
# per-script breakdown


def test_scripts_by_hand_and_token_counts(tiktoken_official):
    # No merges (vocab 257 = 256 bytes + <|endoftext|>): one token per byte.  "ab 語": Latin 2 chars,
    # 2 tokens -> 1.0; the space 1.0; 語 is 3 UTF-8 bytes -> 3 tokens for 1 Han character.
    text = "ab 語"
    at = open_insights("scripts", {"src": "paste", "text": text, "vocab": "257"})
    df = frame(at).set_index("Group")
    trained = next(c for c in df.columns if c.startswith("BPE"))
    assert df.loc["Latin", trained] == pytest.approx(1.0)
    assert df.loc["Whitespace", trained] == pytest.approx(1.0)
    assert df.loc["Han", trained] == pytest.approx(3.0)
    assert list(df["Characters"]) == [2, 1, 1] and list(df.index) == ["Latin", "Han", "Whitespace"]
    # each column adds up to the tokenizer's token count (tiktoken's, for the references)
    for label, name in (("GPT-2 (r50k_base)", "r50k_base"), ("GPT-4 (cl100k_base)", "cl100k_base")):
        total = (df["Characters"] * df[label]).sum()
        assert total == pytest.approx(len(tiktoken_official(name).encode(text)))


def test_scripts_on_multilingual_sample(tiktoken_official):
    text = sample("multilingual")
    at = open_insights("scripts", {"sample": "multilingual"})
    df = frame(at).set_index("Group")
    assert {"Latin", "Han", "Cyrillic", "Arabic", "Emoji"} <= set(df.index)
    assert df["Characters"].sum() == len(text)
    enc = tiktoken_official("o200k_base")
    assert (df["Characters"] * df["GPT-4o (o200k_base)"]).sum() == pytest.approx(len(enc.encode(text)))
    # GPT-2 spends more tokens per Han character than GPT-4o (its vocabulary is English-heavy)
    assert df.loc["Han", "GPT-2 (r50k_base)"] > df.loc["Han", "GPT-4o (o200k_base)"]


# ---------------------------------------------------------------------------
# pre-tokenizer playground


def test_pattern_playground_retrains_and_keeps_the_old_pattern_on_error():
    at = open_insights("pretok", {"src": "paste", "text": CS336, "vocab": "263"})
    chunks = next(b for b in (h.proto.body for h in at.get("html")) if "pre-token 1" in b)
    words = CS336.split(" ")
    # GPT-2's pattern: "low", then " low", " lower", ... (the space joins the next word)
    assert [unmark_whitespace(t) for t in token_texts(chunks)] == [words[0]] + [" " + w for w in words[1:]]
    at.text_area(key="ins_pattern_text").input(r"\S+").run()
    assert not at.exception and not at.error
    edited = list(token_tables(at)[0]["Edited pattern"])
    assert edited == ["st", "est", "ow", "low", "west", "ne"]  # the handout's merges, by hand
    # with \S+ the spaces are runs of their own: 16 words + 15 spaces; distinct: 4 words and " "
    assert any(c.value.startswith("31 pre-tokens, 5 distinct") for c in at.caption)
    at.text_area(key="ins_pattern_text").input("(low").run()
    assert not at.exception
    assert any("missing )" in e.value for e in at.error)
    assert at.text_area(key="ins_pattern_text").value == "(low"  # the user's text is kept
    assert list(token_tables(at)[0]["Edited pattern"]) == edited  # ... and \S+ stays in force
    at.selectbox(key="ins_pattern_base").set_value("bert").run()
    from bpe_core.pretokenize import BERT_PATTERN

    assert at.text_area(key="ins_pattern_text").value == BERT_PATTERN


def test_sidebar_custom_pattern_invalid_keeps_previous():
    at = open_insights("unused", CS336_LINK)
    assert at.session_state["settings"].spec.pattern == r"\S+"
    at.text_input(key="custom_pattern").input("[a-").run()
    assert not at.exception
    assert any("invalid pattern" in e.value for e in at.error)
    assert at.session_state["settings"].spec.pattern == r"\S+"
    assert metric(at, "Learned tokens never used") == "2 of 6"  # still the \S+ tokenizer


# ---------------------------------------------------------------------------
# under-used tokens


def test_unused_by_hand_on_cs336():
    # low -> [low]; lower -> [low, e, r]; widest -> [w, i, d, est]; newest -> [ne, west]:
    # "st" (merge 1) and "ow" (merge 3) only ever live inside bigger tokens.
    at = open_insights("unused", CS336_LINK)
    assert metric(at, "Learned tokens never used") == "2 of 6"
    (df,) = token_tables(at)
    assert list(df["Token"]) == ["st", "ow"] and list(df["Rank"]) == [1, 3] and list(df["Id"]) == [257, 259]


def test_unused_on_heldout_part(tiktoken_official):
    text = sample("english")
    at = open_insights("unused")
    at.radio(key="ins_unused_on").set_value("heldout").run()
    assert not at.exception
    train_part, held = heldout_split(text, 0.2, 0, "<|endoftext|>")
    full = train_bpe(text, 1000, ["<|endoftext|>"])
    part = train_bpe(train_part, 1000, ["<|endoftext|>"])
    part = part.with_vocab_size(min(full.vocab_size, part.vocab_size))
    used = set(part.to_tiktoken().encode(held, allowed_special="all"))
    learned = [i for _a, _b, i in part.merge_ids]
    never = [i for i in learned if i not in used]
    assert metric(at, "Learned tokens never used") == f"{len(never):,} of {len(learned):,}"
    (df,) = token_tables(at)
    assert list(df["Id"]) == never


def test_unused_for_wordpiece():
    text = sample("english")
    at = open_insights("unused", {"algo": "wordpiece", "vocab": "400"})
    tok = train_wordpiece(text, 400)
    used = set(tok.encode(text))
    added = [m.new_id for m in tok.trace if m.added]
    never = [i for i in added if i not in used]
    assert metric(at, "Learned tokens never used") == f"{len(never):,} of {len(added):,}"


def test_html_is_escaped_in_the_insights_views():
    text = "<script>alert(1)</script> <img src=x onerror=alert(2)> <script>alert(1)</script>"
    at = open_insights("genealogy", {"src": "paste", "text": text, "vocab": "300"})
    for label in VIEWS.values():
        at.session_state["ins_tab"] = label
        at.run()
        assert not at.exception
        body = html_bodies(at)
        assert "<script" not in body and "<img" not in body


# ---------------------------------------------------------------------------
# figure builders (AppTest sees a Plotly chart as an opaque element)


def test_overlap_figure_by_hand():
    from ui.insights_view import overlap_figure

    # overlap_curve [1, 1, 1, 2, 2, 2]: of the first k learned tokens, that many are shared
    fig = overlap_figure({"toy": [1, 1, 1, 2, 2, 2]}, 258)
    (trace,) = fig.data
    assert list(trace.x) == [258, 259, 260, 261, 262, 263]
    assert list(trace.y) == pytest.approx([1, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 2 / 6])


def test_tree_figure_by_hand():
    from bpe_core.analysis.insights import merge_tree
    from ui.insights_view import tree_figure

    tok = train_bpe(CS336, 262, pattern=r"\S+")  # no special tokens: west is id 260
    (icicle,) = tree_figure(merge_tree(tok, 260)).data
    assert list(icicle.ids) == ["0", "0.0", "0.1", "0.1.0", "0.1.1", "0.1.1.0", "0.1.1.1"]
    assert list(icicle.parents) == ["", "0", "0", "0.1", "0.1", "0.1.1", "0.1.1"]
    assert list(icicle.values) == [4, 1, 3, 1, 2, 1, 1]  # bytes: each parent is the sum of its children
    assert list(icicle.labels) == ["west<br>#5", "w", "est<br>#2", "e", "st<br>#1", "s", "t"]


def test_scripts_and_heldout_figures_carry_the_table():
    import pandas as pd

    from bpe_core.analysis.scripts import ScriptRow
    from ui.insights_view import heldout_figure, scripts_figure

    fig = scripts_figure({"A": [ScriptRow("Latin", 2, 2.0, 1.0), ScriptRow("Han", 1, 3.0, 3.0)]})
    assert list(fig.data[0].x) == ["Latin", "Han"] and list(fig.data[0].y) == [1.0, 3.0]
    frame = pd.DataFrame({"Tokenizer": ["Mine · 300", "<b>x</b>"], "Training-part bytes/token": [4.0, 3.0],
                          "Held-out bytes/token": [2.0, 2.5]})  # fmt: skip
    train_bars, held_bars = heldout_figure(frame).data
    assert list(train_bars.x) == ["Mine<br>300", "&lt;b&gt;x&lt;/b&gt;"]  # labels are escaped
    assert list(train_bars.y) == [4.0, 3.0] and list(held_bars.y) == [2.0, 2.5]


def test_heldout_with_an_imported_tokenizer_says_where_it_was_trained():
    # a BPE trained on Python source, imported from its JSON: it never saw the English sample, so it must
    # not be labelled as trained on all the text; the row trained on the training part takes its settings
    imported = train_bpe(sample("python"), 600, ["<|endoftext|>"])
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.radio(key="tokenizer_source").set_value("import").run()
    upload = [("mine.json", json.dumps(imported.to_dict()).encode(), "application/json")]
    at.file_uploader(key="tokenizer_upload").set_value(upload).run()
    at.switch_page(PAGE)
    at.session_state["ins_tab"] = VIEWS["heldout"]
    at.run()
    assert not at.exception, at.exception
    rows = table(at)
    assert not any(label.startswith("Trained on all the text") for label in rows)
    train_part, held = heldout_split(sample("english"), 0.2, 0, "<|endoftext|>")
    assert rows["Imported tokenizer (trained on other data) · 600"]["Held-out tokens"] == len(imported.encode(held))
    part = train_bpe(train_part, 600, ["<|endoftext|>"])
    label = f"Trained on the training part · {part.vocab_size:,}"
    assert rows[label]["Held-out tokens"] == len(part.encode(held))
    captions = "\n".join(c.value for c in at.caption)
    assert "The imported tokenizer and the production encodings were trained on other data" in captions

    # another file with the same algorithm, pattern, size and special tokens: its own numbers, not the cached ones
    other = train_bpe(sample("numbers"), 600, ["<|endoftext|>"])
    assert len(other.encode(held)) != len(imported.encode(held))
    upload = [("other.json", json.dumps(other.to_dict()).encode(), "application/json")]
    at.file_uploader(key="tokenizer_upload").set_value(upload).run()
    assert not at.exception, at.exception
    rows = table(at)
    assert rows["Imported tokenizer (trained on other data) · 600"]["Held-out tokens"] == len(other.encode(held))


def test_genealogy_and_diff_with_llama3_and_mistral_v1():
    """The production encodings the page's picker (and its link) chooses, against the packages' own tokenizers."""
    import sentencepiece
    from llama_models.llama3.tokenizer import Tokenizer as Llama3

    from bpe_core.production.encodings import package_file_path
    from bpe_core.production.registry import MISTRAL_V1_FILE

    llama = Llama3.get_instance()
    sp = sentencepiece.SentencePieceProcessor(model_file=str(package_file_path(MISTRAL_V1_FILE)))

    def llama_id(b: bytes):
        try:
            return llama.model.encode_single_token(b)
        except KeyError:
            return None

    def sp_id(b: bytes):
        try:
            piece = b.decode("utf-8").replace(" ", "\u2581")
        except UnicodeDecodeError:
            return None
        i = sp.piece_to_id(piece)
        return i if i != sp.unk_id() and sp.id_to_piece(i) == piece else None

    text = sample("english")
    tok = train_bpe(text, 1000, ["<|endoftext|>"])
    at = open_insights("genealogy", {"refs": "llama3,mistral_v1"})  # a link from before "prod": still read
    assert at.button_group(key="ins_production").value == ["llama3", "mistral_v1"]
    token_id = next(i for _a, _b, i in reversed(tok.merge_ids) if tok.token_bytes(i).startswith(b" "))
    at.selectbox(key="ins_token").set_value(token_id).run()
    data = tok.token_bytes(token_id)
    rows = {r["Encoding"]: r for r in frame(at).to_dict("records")}
    assert list(rows) == ["Llama 3", "Mistral v1 (SentencePiece)"]
    for label, want, n_text in (
        ("Llama 3", llama_id(data), len(llama.encode(data.decode(), bos=False, eos=False))),
        ("Mistral v1 (SentencePiece)", sp_id(data), len(sp.encode(data.decode()))),
    ):
        row = rows[label]
        assert row["Single token"] == (want is not None)
        assert cell_number(row["Rank there"]) == want
        assert cell_number(row["Tokens as text"]) == n_text

    at.session_state["ins_tab"] = VIEWS["diff"]
    at.run()
    assert not at.exception, at.exception
    learned = [tok.token_bytes(i) for _a, _b, i in tok.merge_ids]
    for label, lookup in (("Llama 3", llama_id), ("Mistral v1 (SentencePiece)", sp_id)):
        shared = sum(lookup(b) is not None for b in learned)
        assert 0 < shared < len(learned)
        assert metric(at, f"{label} has") == f"{shared / len(learned):.1%}"
    at.run()
    assert at.query_params["prod"] == "llama3,mistral_v1" and "refs" not in at.query_params


def test_production_rows_write_a_dash_where_there_is_no_number(tiktoken_official):
    """A token that is no single token there, or part of a character, shows "—", never None (issue 32.6)."""
    from bpe_core.production.registry import load_production
    from ui import catalogue
    from ui.insights_view import production_rows

    enc = tiktoken_official("r50k_base")
    built = {"gpt2": catalogue.Built(load_production("gpt2"), "GPT-2", "gpt2")}
    word = b" Magikarpology"
    (row,) = production_rows(word, built).to_dict("records")
    assert row == {"Encoding": "GPT-2", "Single token": False, "Rank there": "—",
                   "Tokens as text": f"{len(enc.encode(word.decode()))}"}  # fmt: skip
    (row,) = production_rows("é".encode()[:1], built).to_dict("records")  # the first byte of é
    first_byte = "é".encode()[:1]
    assert row["Rank there"] == f"{enc.encode_single_token(first_byte):,}" and row["Tokens as text"] == "—"


def test_token_tables_isolate_right_to_left_tokens_and_show_invisible_ones():
    """Issue 32.6: an Arabic token keeps its own order without moving its row; a zero-width joiner is shown."""
    text = sample("multilingual")
    tok = train_bpe(text, 2000, ["<|endoftext|>"])
    at = open_insights("diff", {"sample": "multilingual", "vocab": "2000"})
    bodies = [h.proto.body for h in at.get("html") if 'class="fig-table numbered"' in h.proto.body]
    assert len(bodies) == 2
    cells = re.findall(r'<td class="tok" data-col="Token" data-value="([^"]*)">(.*?)</td>', "".join(bodies))
    assert len(cells) == len(tok.trace)  # every learned token, in one table or the other
    assert all(shown.startswith("<bdi>") and shown.endswith("</bdi>") for _v, shown in cells)
    arabic = [shown for value, shown in cells if any("\u0600" <= ch <= "\u06ff" for ch in html.unescape(value))]
    assert arabic
    zwj = [shown for value, shown in cells if html.unescape(value) == "\u200d"]
    assert zwj == ['<bdi><span class="cp">U+200D</span></bdi>']
