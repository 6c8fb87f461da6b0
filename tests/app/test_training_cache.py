"""The shared training cache is bounded by memory and never takes a live session's tokenizer away (21.12).

Several AppTests in one pytest process share the server's caches, like the
sessions of one ``streamlit run``: the "strangers" below train many distinct
texts while the first session looks at its tokenizer at a chosen size.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import TrainingSpec, train_bpe
from tests.conftest import APP, metric, sample
from ui import state_keys as sk
from ui import training

EOT = ("<|endoftext|>",)


def _stranger_texts(n: int) -> list[str]:
    english = sample("english").split("\n\n")
    return [f"Stranger {i}: " + "\n\n".join(english[i::3]) for i in range(n)]


def test_strangers_training_never_move_a_sessions_slider(monkeypatch):
    # a budget that holds about one tokenizer: every stranger's training evicts the previous one
    one = training.estimate_bytes(train_bpe(sample("english"), 1000, EOT))
    monkeypatch.setattr(training, "CACHE_BUDGET_BYTES", int(one * 1.5))

    me = AppTest.from_file(str(APP), default_timeout=60)

    me.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn view
    me.run()
    assert not me.exception, me.exception
    me.slider(key=sk.VOCAB_SIZE).set_value(400).run()
    mine = training.cached(training.settings_key(me.session_state[sk.SETTINGS]))

    stranger = AppTest.from_file(str(APP), default_timeout=60)

    stranger.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn view
    stranger.run()
    stranger.radio(key=sk.SOURCE).set_value("Paste").run()
    trained = []
    for text in _stranger_texts(9):
        stranger.text_area(key=sk.PASTE_TEXT).input(text).run()
        assert not stranger.exception, stranger.exception
        trained.append(training.cached(training.settings_key(stranger.session_state[sk.SETTINGS])))
    assert len({id(t) for t in trained}) == 9  # nine distinct trainings
    store = training._store()
    assert training.training_key(sample("english"), me.session_state[sk.SETTINGS].spec) not in store["lru"]
    assert training.cache_bytes() <= training.CACHE_BUDGET_BYTES

    # my next slider step: same tokenizer object (no retraining), the size I chose, not the full size
    me.slider(key=sk.VOCAB_SIZE).set_value(401).run()
    assert not me.exception, me.exception
    assert me.slider(key=sk.VOCAB_SIZE).value == 401
    assert training.cached(training.settings_key(me.session_state[sk.SETTINGS])) is mine
    assert me.session_state[sk.owner_key(sk.VOCAB_SIZE)] == id(mine)
    expected = train_bpe(sample("english"), 1000, EOT).with_vocab_size(401)
    assert metric(me, "Tokens") == f"{len(expected.encode(sample('english'))):,}"


def test_cache_is_bounded_by_the_estimated_bytes(monkeypatch):
    small = train_bpe(sample("english"), 300, EOT)
    large = train_bpe(sample("english") + sample("python"), 1500, EOT)
    s, big = training.estimate_bytes(small), training.estimate_bytes(large)
    assert 0 < s < big  # more merges, more bytes
    assert big > 1500 * 100  # at least ~100 bytes per token (its bytes, merge pair, ranks, trace)
    monkeypatch.setattr(training, "CACHE_BUDGET_BYTES", big + s)
    training._put(("a",), large)
    training._put(("b",), small)
    assert training.cache_bytes() == big + s
    training._put(("c",), small.with_vocab_size(299))  # over budget: the least recently used goes
    assert training.cached(("a",)) is None and training.cached(("b",)) is small
    assert training.cache_bytes() <= training.CACHE_BUDGET_BYTES
    training._put(("d",), large)  # one entry larger than what is left: still cached, the others go
    assert training.cached(("d",)) is large


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        (sample("english"), TrainingSpec("bpe", 1000, "gpt2", EOT), False),  # a moment
        ("word " * 300_000, TrainingSpec("bpe", 1000, "gpt2", EOT), True),  # 1.5 M characters
        ("a" * 8_000, TrainingSpec("wordpiece", 1000, "bert", ("[UNK]",)), True),  # one long word, WordPiece
        ("a" * 8_000, TrainingSpec("bpe", 1000, "gpt2", EOT), False),  # BPE: linear in a word's length
        ("ab " * 3_000, TrainingSpec("wordpiece", 1000, "bert", ("[UNK]",)), False),  # short words
        (sample("english"), TrainingSpec("bpe", 60_000, "gpt2", EOT), True),  # many merges asked for
    ],
)
def test_progress_bar_when_training_takes_more_than_a_moment(text, spec, expected):
    assert training.shows_progress(text, spec) is expected
