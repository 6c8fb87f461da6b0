"""The app's training path for large texts (AppTest): progress while training; Cancel keeps the previous tokenizer.

"Large" is :data:`ui.training.PROGRESS_MIN_CHARS` characters; the tests lower it
so that the built-in samples take the progress path.  A real Cancel click
interrupts the run inside Streamlit (which AppTest cannot do mid-run); its
effect on the next run is the button's ``on_click`` -- ``training.cancel(key)``
-- which the cancel test performs before that run, as the click would.
The engine-level cancel (the callback raising) is tested in ``tests/test_scale.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import train_bpe
from tests.conftest import APP, html_bodies, metric, sample, token_texts, unmark_whitespace
from ui import training

EOT = ("<|endoftext|>",)


@pytest.fixture
def spy(monkeypatch):
    """Lower the progress threshold and record every engine training: its text and the progress reports."""
    monkeypatch.setattr(training, "PROGRESS_MIN_CHARS", 1000)
    calls: list[dict] = []
    real = training.train_bpe

    def recording_train_bpe(text, *args, progress=None, **kwargs):
        call = {"text": text, "reports": [], "had_progress": progress is not None}
        calls.append(call)

        def relay(phase, done, total):
            call["reports"].append((phase, done, total))
            progress(phase, done, total)

        return real(text, *args, progress=relay if progress else None, **kwargs)

    monkeypatch.setattr(training, "train_bpe", recording_train_bpe)
    return calls


def shown_text(at) -> str:
    return unmark_whitespace("".join(token_texts(html_bodies(at))))


def test_large_text_trains_with_progress_then_the_bar_goes(spy):
    at = AppTest.from_file(str(APP), default_timeout=60)
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
    at.run()
    english = sample("english")
    english_tok = train_bpe(english, 1000, EOT)
    assert metric(at, "Tokens") == f"{len(english_tok.encode(english)):,}"
    assert len(spy) == 1

    # The user picks the Python sample; training starts and the user clicks Cancel, whose
    # on_click marks exactly these settings as cancelled before Streamlit's rerun.
    python = sample("python")
    new_settings = dataclasses.replace(at.session_state["settings"], text=python)
    key = training.settings_key(
        python, new_settings.algorithm, new_settings.pattern, new_settings.max_vocab, new_settings.special_tokens, False
    )
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


def test_other_pages_do_not_restart_a_cancelled_training(spy):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    s = at.session_state["settings"]
    at.session_state[training.CANCELLED_KEY] = training.settings_key(
        sample("python"), s.algorithm, s.pattern, s.max_vocab, s.special_tokens, False
    )
    at.selectbox(key="sample").set_value("python")
    at.switch_page("app_pages/encode.py").run()
    assert not at.exception, at.exception
    assert len(spy) == 1  # only the first, English training
    # the page says why its trained column is empty, in its own words, and runs on
    assert any("training on these settings was cancelled" in i.value for i in at.info)
