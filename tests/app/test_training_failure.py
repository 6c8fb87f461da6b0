"""After a failed training (issue 32.1, AppTest): the previous view stays, no progress panel is left behind,
and one click trains at the smallest size that works; the default size trains every built-in sample.

The issue's case is a 2 MB upload switched to WordPiece (or Unigram) at the default 1,000 tokens, which the
text's alphabet does not fit.  Here the text is smaller but just as wide (1,100 distinct CJK characters in
two-character words), and the progress threshold is lowered so that the failing training runs with its bar
and Cancel button, as the 2 MB one does.  The smallest size that works comes from the engine
(:class:`bpe_core.VocabSizeTooSmall`), and the tokenizer the button trains is compared with the engine's.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import VocabSizeTooSmall, get_algorithm, train_bpe
from bpe_core.interface import TrainingSpec
from tests.conftest import APP, FULL_SIZE, html_bodies, metric, sample
from ui import training
from ui.inputs import DEFAULT_MAX_VOCAB
from ui.samples import SAMPLES

EOT = ("<|endoftext|>",)
WIDE = " ".join(chr(0x4E00 + i) + chr(0x4E00 + (i * 7 + 3) % 1100) for i in range(1100))
"""1,100 distinct CJK characters, each first in one word and second in another: WordPiece needs each twice
(plain and ``##``), Unigram once, and both more than the default 1,000 ids."""


def minimum(algorithm: str, text: str) -> int:
    """The smallest vocabulary size the engine trains ``algorithm`` at on ``text`` (its defaults otherwise)."""
    alg = get_algorithm(algorithm)
    spec = TrainingSpec(algorithm, DEFAULT_MAX_VOCAB, alg.default_pattern, tuple(alg.default_special_tokens))
    with pytest.raises(VocabSizeTooSmall) as info:
        spec.train(text)
    return info.value.minimum


@pytest.fixture
def at(monkeypatch):
    """The app on the English sample (BPE, full size), then the wide text pasted (BPE trains it)."""
    monkeypatch.setattr(training, "PROGRESS_MIN_CHARS", 1000)  # every training here runs with its bar
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.session_state["server_view"] = True  # AppTest runs no JavaScript
    app.query_params["size"] = str(FULL_SIZE)
    app.run()
    app.radio(key="source").set_value("Paste").run()
    app.text_area(key="paste_text").input(WIDE).run()
    assert not app.exception and not app.error, (app.exception, app.error)
    assert metric(app, "Characters") == f"{len(WIDE):,}"
    return app


@pytest.mark.parametrize("algorithm", ["wordpiece", "unigram"])
def test_a_size_too_small_keeps_the_view_and_offers_the_smallest_that_works(at, algorithm):
    bpe_tokens = metric(at, "Tokens")
    assert bpe_tokens == f"{len(train_bpe(WIDE, 1000, EOT).encode(WIDE)):,}"
    need = minimum(algorithm, WIDE)
    assert need > DEFAULT_MAX_VOCAB

    at.radio(key="algorithm").set_value(algorithm).run()
    assert not at.exception, at.exception
    (error,) = at.error
    assert "Cannot train on this input" in error.value and f"needs at least {need}" in error.value
    # the progress panel is gone: no Cancel button, no "Training on ... characters" heading
    assert [b for b in at.button if b.key == "cancel_training"] == []
    assert not [m for m in at.markdown if "Training on" in m.value]
    # the previous view stays: the BPE tokens of the same text, and the sidebar keeps the user's choice
    assert metric(at, "Characters") == f"{len(WIDE):,}" and metric(at, "Tokens") == bpe_tokens
    assert html_bodies(at).count('class="tk') > 1000
    assert at.radio(key="algorithm").value == algorithm
    assert any("Still showing the previous tokenizer" in c.value for c in at.caption)

    # one click: the sidebar's size becomes the smallest that works, and that tokenizer is drawn
    button = at.button(key="train_at_minimum")
    assert button.label == f"Train at {need:,} tokens, the smallest size that works"
    button.click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert at.number_input(key="max_vocab").value == need
    alg = get_algorithm(algorithm)
    expected = TrainingSpec(algorithm, need, alg.default_pattern, tuple(alg.default_special_tokens)).train(WIDE)
    assert metric(at, "Tokens") == f"{len(expected.encode(WIDE)):,}"
    assert [b for b in at.button if b.key == "train_at_minimum"] == []


def test_other_pages_show_the_previous_tokenizer_without_training_again(at, monkeypatch):
    at.radio(key="algorithm").set_value("wordpiece").run()
    assert at.error
    spec_tries = []
    real_spec_train = TrainingSpec.train

    def spec_train(self, *args, **kwargs):
        spec_tries.append(self.algorithm)
        return real_spec_train(self, *args, **kwargs)

    monkeypatch.setattr(TrainingSpec, "train", spec_train)
    for page in ("app_pages/merges.py", "app_pages/insights.py", "app_pages/encode.py", "app_pages/compare.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert any("Cannot train on this input" in e.value for e in at.error), page
        assert "wordpiece" not in spec_tries, f"{page} trained the failing settings again"
    assert [b for b in at.button if b.key == "train_at_minimum"]


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_the_default_size_trains_every_sample(name, algorithm):
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["server_view"] = True
    at.query_params.update({"sample": name, "algo": algorithm})
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert at.number_input(key="max_vocab").value == DEFAULT_MAX_VOCAB
    alg = get_algorithm(algorithm)
    text = sample(name)
    tok = TrainingSpec(algorithm, DEFAULT_MAX_VOCAB, alg.default_pattern, tuple(alg.default_special_tokens)).train(text)
    assert metric(at, "Tokens") == f"{len(tok.with_vocab_size(min(500, tok.max_vocab_size)).encode(text)):,}"
