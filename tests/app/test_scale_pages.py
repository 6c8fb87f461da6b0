"""The app's training path for large texts (AppTest): progress while training; Cancel keeps the previous tokenizer.

"Large" is :data:`ui.training.PROGRESS_MIN_CHARS` characters; the tests lower it
so that the built-in samples take the progress path.  A real Cancel click
interrupts the run inside Streamlit (which AppTest cannot do mid-run); its
effect on the next run is the button's ``on_click`` -- ``training.cancel(key)``
-- which the cancel test performs before that run, as the click would.
Every page goes on with the session's previous tokenizer after a Cancel
(Compare and Encode step by step included), or says that training was
cancelled when the session has none, and none restarts the cancelled training.
The engine-level cancel (the callback raising) is tested in ``tests/engine/test_scale.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import ALGORITHMS, TrainingSpec, train_bpe
from tests.app.test_compare import pick, table
from tests.app.test_encode_page import shown_ids
from tests.conftest import APP, FULL_SIZE, html_bodies, metric, sample, token_texts, unmark_whitespace
from ui import training

EOT = ("<|endoftext|>",)
COMPARE = "app_pages/compare.py"
ENCODE = "app_pages/encode.py"


@pytest.fixture
def spy(monkeypatch):
    """Lower the progress threshold and record every engine training: its text and the progress reports.

    WordPiece trainings are recorded too (``"algorithm": "wordpiece"``), BPE ones with ``"bpe"``.
    """
    monkeypatch.setattr(training, "PROGRESS_MIN_CHARS", 1000)
    calls: list[dict] = []

    def recording(algorithm, real):
        def train(text, *args, progress=None, **kwargs):
            call = {"algorithm": algorithm, "text": text, "reports": [], "had_progress": progress is not None}
            calls.append(call)

            def relay(phase, done, total):
                call["reports"].append((phase, done, total))
                progress(phase, done, total)

            return real(text, *args, progress=relay if progress else None, **kwargs)

        return train

    for name in ("bpe", "wordpiece"):  # every training goes through the registry's trainer
        algorithm = ALGORITHMS[name]
        monkeypatch.setitem(ALGORITHMS, name, dataclasses.replace(algorithm, train=recording(name, algorithm.train)))
    return calls


def shown_text(at) -> str:
    return unmark_whitespace("".join(token_texts(html_bodies(at))))


def test_large_text_trains_with_progress_then_the_bar_goes(spy):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript
    at.query_params["size"] = str(FULL_SIZE)  # the tokenizer at its full size
    at.run()
    assert not at.exception, at.exception
    text = sample("english")
    assert len(spy) == 1 and spy[0]["text"] == text and spy[0]["had_progress"]
    phases = [r[0] for r in spy[0]["reports"]]
    assert phases[0] == "count" and phases[-1] == "merge"
    expected = train_bpe(text, 1000, EOT)
    # the sample runs out of pairs after len(trace) merges; the last report says so
    assert spy[0]["reports"][-1] == ("merge", len(expected.trace), 1000 - 257)
    # the progress box (bar and Cancel button) is gone once training ends, and the page shows the result
    assert [b for b in at.button if b.key == "cancel_training"] == []
    assert not at.warning
    assert metric(at, "Tokens") == f"{len(expected.encode(text)):,}"
    # the slider does not retrain
    at.slider[0].set_value(400).run()
    assert len(spy) == 1
    assert metric(at, "Tokens") == f"{len(expected.with_vocab_size(400).encode(text)):,}"


def test_cancel_keeps_the_previous_tokenizer_and_the_users_choice(spy):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript
    at.query_params["size"] = str(FULL_SIZE)  # the tokenizer at its full size
    at.run()
    english = sample("english")
    english_tok = train_bpe(english, 1000, EOT)
    assert metric(at, "Tokens") == f"{len(english_tok.encode(english)):,}"
    assert len(spy) == 1

    # The user picks the Python sample; training starts and the user clicks Cancel, whose
    # on_click marks exactly these settings as cancelled before Streamlit's rerun.
    python = sample("python")
    new_settings = dataclasses.replace(at.session_state["settings"], text=python)
    key = training.training_key(python, new_settings.spec)
    at.session_state[training.CANCELLED_KEY] = key
    at.selectbox(key="sample").set_value("python").run()
    assert not at.exception, at.exception

    assert len(spy) == 1  # nothing was trained for the cancelled settings
    assert at.selectbox(key="sample").value == "python"  # the user's choice is kept in the sidebar
    (warning,) = at.warning
    assert "Training on Sample: Python source code was cancelled" in warning.value
    assert "previous tokenizer" in warning.value and "Sample: English prose" in warning.value
    # what is drawn and counted is the previous tokenizer on its own text
    assert metric(at, "Tokens") == f"{len(english_tok.encode(english)):,}"
    assert shown_text(at) == english
    # the Merges page, too, goes on with the previous tokenizer instead of training
    at.switch_page("app_pages/merges.py").run()
    assert not at.exception, at.exception
    assert len(spy) == 1 and at.warning
    at.switch_page("app_pages/playground.py").run()

    # "Train with these settings" trains after all (with progress) and shows the Python sample
    at.button(key="resume_training").click().run()
    assert not at.exception, at.exception
    assert len(spy) == 2 and spy[1]["text"] == python and spy[1]["had_progress"]
    python_tok = train_bpe(python, 1000, EOT)
    assert metric(at, "Tokens") == f"{len(python_tok.encode(python)):,}"
    assert shown_text(at) == python
    assert not at.warning


def cancel_python_and_switch_to(page: str) -> tuple[AppTest, str]:
    """The app trained on the English sample; then the user picks the Python sample and cancels, and opens ``page``."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript
    at.query_params["size"] = str(FULL_SIZE)  # the tokenizer at its full size
    at.run()
    assert not at.exception, at.exception
    python = sample("python")
    s = at.session_state["settings"]
    at.session_state[training.CANCELLED_KEY] = training.training_key(python, s.spec)
    at.selectbox(key="sample").set_value("python")
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at, python


def open_with_the_default_training_cancelled(page: str) -> AppTest:
    """A new session that opens ``page`` first, its one training (the default English sample) already cancelled."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    default = TrainingSpec("bpe", 1000, "gpt2", EOT)
    at.session_state[training.CANCELLED_KEY] = training.training_key(sample("english"), default)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def cancel_notice(at) -> str:
    """The one cancel warning of the page (other warnings are the columns' own)."""
    (notice,) = [w.value for w in at.warning if w.value.startswith("Training on ")]
    assert [b.key for b in at.button if b.key == "resume_training"] == ["resume_training"]
    return notice


def test_compare_keeps_the_previous_tokenizer_after_a_cancel(spy):
    at, python = cancel_python_and_switch_to(COMPARE)
    english = sample("english")
    english_tok = train_bpe(english, 1000, EOT)
    python_tok = train_bpe(python, 1000, EOT)
    assert len(python_tok.encode(python)) != len(english_tok.encode(english))  # the counts tell them apart

    assert len(spy) == 1  # only the first, English training: Compare does not restart the cancelled one
    assert at.selectbox(key="sample").value == "python"  # the user's choice is kept in the sidebar
    notice = cancel_notice(at)
    assert "Training on Sample: Python source code was cancelled" in notice
    assert "previous tokenizer" in notice and "Sample: English prose" in notice
    # the sidebar's column is the previous tokenizer, measured on the text it was trained on
    rows = table(at)
    label = f"BPE (gpt2) · {english_tok.vocab_size:,}"
    assert list(rows) == [label, "GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    assert rows[label]["Tokens"] == len(english_tok.encode(english))
    views = [b for b in (h.proto.body for h in at.get("html")) if 'class="bpe-view' in b]
    assert unmark_whitespace("".join(token_texts(views[0]))) == english
    # a BPE variant trains on the previous tokenizer's text too, never on the cancelled one
    at.multiselect(key="compare_patterns").set_value(["cl100k"]).run()
    assert not at.exception, at.exception
    assert len(spy) == 2 and spy[1]["text"] == english
    variant = train_bpe(english, 1000, EOT, "cl100k").with_vocab_size(english_tok.vocab_size)
    assert table(at)[f"BPE (cl100k) · {english_tok.vocab_size:,}"]["Tokens"] == len(variant.encode(english))

    # "Train with these settings" on Compare trains the Python sample after all
    at.button(key="resume_training").click().run()
    assert not at.exception, at.exception
    assert [c["text"] for c in spy[2:]] == [python, python]  # the sidebar's BPE, then the cl100k variant
    rows = table(at)
    assert rows[f"BPE (gpt2) · {python_tok.vocab_size:,}"]["Tokens"] == len(python_tok.encode(python))
    assert not [w for w in at.warning if w.value.startswith("Training on ")]


def test_compare_without_a_previous_tokenizer_after_a_cancel(spy, tiktoken_official):
    at = open_with_the_default_training_cancelled(COMPARE)
    english = sample("english")
    assert spy == []
    notice = cancel_notice(at)
    assert notice == "Training on Sample: English prose was cancelled."
    # the sidebar's column says why it is missing; the references are measured as usual
    rows = table(at)
    assert list(rows) == ["GPT-2 (r50k_base)", "GPT-4 (cl100k_base)"]
    for label, name in (("GPT-2 (r50k_base)", "r50k_base"), ("GPT-4 (cl100k_base)", "cl100k_base")):
        assert rows[label]["Tokens"] == len(tiktoken_official(name).encode(english, allowed_special="all"))
    assert any(
        w.value.startswith("**BPE trained on your text** is not shown: training on these settings was cancelled")
        for w in at.warning
    )
    # no other tokenizer is trained on the cancelled text: each says so in one line
    pick(at, ["bpe", "wordpiece", "gpt2"])
    at.multiselect(key="compare_patterns").set_value(["cl100k"]).run()
    at.multiselect(key="compare_sizes").set_value(["500"]).run()
    assert not at.exception, at.exception
    assert spy == []
    missing = {w.value.split("**")[1]: w.value.split(" is not shown: ")[1] for w in at.warning if "**" in w.value}
    skipped = "not trained, since training on this text was cancelled"
    assert missing == {
        "BPE trained on your text": missing["BPE trained on your text"],
        "WordPiece trained on your text": skipped,
        "BPE (cl100k) · slider size": skipped,
        # the sidebar's BPE at a smaller size is the cancelled training itself
        "BPE (gpt2) · 500": missing["BPE trained on your text"],
    }
    assert list(table(at)) == ["GPT-2 (r50k_base)"]


def test_encode_keeps_the_previous_tokenizer_after_a_cancel(spy):
    at, python = cancel_python_and_switch_to(ENCODE)
    word = at.text_input(key="encode_word").value
    english_tok = train_bpe(sample("english"), 1000, EOT)
    python_tok = train_bpe(python, 1000, EOT)
    assert english_tok.vocab_size != python_tok.vocab_size  # the titles tell them apart

    assert len(spy) == 1
    notice = cancel_notice(at)
    assert "Training on Sample: Python source code was cancelled" in notice and "Sample: English prose" in notice
    title = f"Trained on your text · {english_tok.vocab_size:,} tokens"
    assert any(f'class="enc-title" title="{title}"' in h.proto.body for h in at.get("html"))  # one-line titles
    assert shown_ids(at)[0] == english_tok.encode(word)


def test_encode_without_a_previous_tokenizer_after_a_cancel(spy, tiktoken_official):
    at = open_with_the_default_training_cancelled(ENCODE)
    word = at.text_input(key="encode_word").value
    assert spy == []
    assert cancel_notice(at) == "Training on Sample: English prose was cancelled."
    # the trained column says why it is empty; GPT-2 and cl100k run on
    assert any(i.value.startswith("Not trained: training on these settings was cancelled") for i in at.info)
    assert shown_ids(at) == [tiktoken_official(n).encode(word) for n in ("r50k_base", "cl100k_base")]


def test_a_tokenizer_trained_on_compare_is_the_previous_one_after_a_cancel(spy):
    # English trained on the Playground; then, on the Compare page, the user picks the numbers sample (trained
    # there, for Compare's own column); then the Python sample, whose training is cancelled.  The previous
    # tokenizer is the last one trained -- the numbers sample's -- not the Playground's English one.
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript
    at.query_params["size"] = str(FULL_SIZE)  # the tokenizer at its full size
    at.run()
    at.switch_page(COMPARE).run()
    at.selectbox(key="sample").set_value("numbers").run()
    assert not at.exception, at.exception
    numbers = sample("numbers")
    assert [c["text"] for c in spy] == [sample("english"), numbers]
    python = sample("python")
    s = at.session_state["settings"]
    at.session_state[training.CANCELLED_KEY] = training.training_key(python, s.spec)
    at.selectbox(key="sample").set_value("python")
    at.switch_page("app_pages/playground.py").run()
    assert not at.exception, at.exception
    assert len(spy) == 2
    notice = cancel_notice(at)
    assert "Training on Sample: Python source code was cancelled" in notice
    assert "Sample: Numbers" in notice
    numbers_tok = train_bpe(numbers, 1000, EOT)
    assert metric(at, "Tokens") == f"{len(numbers_tok.encode(numbers)):,}"
    assert shown_text(at) == numbers
