"""One server, many sessions: what the server shares is built once (issue 31 item 4, issue 32 item 9).

The sessions of one ``streamlit run`` share the process's caches; several AppTests in one pytest process do the
same.  The built-in samples' trainings and the production tokenizers are made once per process -- by the
background warm-up (:mod:`ui.warmup`) before anyone asks, or by the first session that asks -- and every other
session gets the very same objects.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from bpe_core import algorithm_names
from bpe_core.interface import TrainingSpec
from bpe_core.production import registry
from bpe_core.production.encodings import bpe_from_encoding, load_encoding
from tests.conftest import APP, FULL_SIZE, sample
from ui import state_keys as sk
from ui import training, warmup
from ui.inputs import default_spec
from ui.samples import SAMPLES, load_sample


@pytest.fixture
def count_trainings(monkeypatch):
    """Every ``TrainingSpec.train`` call of this test, as ``[(spec, text length), ...]``."""
    calls: list[tuple[TrainingSpec, int]] = []
    original = TrainingSpec.train

    def counted(self, text, *args, **kwargs):
        calls.append((self, len(text)))
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(TrainingSpec, "train", counted)
    return calls


@pytest.fixture
def count_loads(monkeypatch):
    """Every production loader call of this test, ``{key: calls}``; the per-process caches start empty."""
    calls: dict[str, int] = {}
    for key, spec in registry.PRODUCTION.items():

        def loader(key=key, original=spec.loader):
            calls[key] = calls.get(key, 0) + 1
            return original()

        monkeypatch.setitem(registry.PRODUCTION, key, spec.__class__(spec.key, spec.label, spec.family, loader))
    for cached in (registry.load_production, load_encoding, bpe_from_encoding):
        cached.cache_clear()
    yield calls
    for cached in (registry.load_production, load_encoding, bpe_from_encoding):
        cached.cache_clear()  # the counting loaders' objects go with the test


def _session(page: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["server_view"] = True  # AppTest runs no JavaScript: the server-drawn views
    at.query_params["size"] = str(FULL_SIZE)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


def test_two_sessions_on_a_sample_share_one_training(count_trainings):
    first = _session(sample="python")
    second = _session(sample="python")
    key = training.settings_key(first.session_state[sk.SETTINGS])
    assert key == training.settings_key(second.session_state[sk.SETTINGS])
    assert len(count_trainings) == 1, count_trainings
    # the very same object in both sessions (each holds its own reference to it)
    assert first.session_state[sk.TRAINING_HELD][key] is second.session_state[sk.TRAINING_HELD][key]


def test_two_sessions_on_compare_load_each_production_tokenizer_once(count_loads):
    picked = "bpe,gpt2,cl100k_base,o200k_base"
    _session("app_pages/compare.py", sample="english", cmp=picked)
    _session("app_pages/compare.py", sample="numbers", cmp=picked)
    _session("app_pages/encode.py", sample="numbers")  # GPT-2 and cl100k step by step
    assert count_loads == {"gpt2": 1, "cl100k_base": 1, "o200k_base": 1}


def test_sessions_asking_at_the_same_time_train_once(monkeypatch):
    # two sessions (threads) ask for the same untrained tokenizer while it trains: one training, one object
    text = sample("english") + " concurrency"
    spec = TrainingSpec("bpe", 600, "gpt2", ("<|endoftext|>",))
    original = TrainingSpec.train
    calls = []

    def slow(self, text, *args, **kwargs):
        calls.append(self)
        time.sleep(0.3)  # long enough for the second caller to arrive while the first trains
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(TrainingSpec, "train", slow)
    got = []

    def ask():
        got.append(training.train(text, spec))

    threads = [threading.Thread(target=ask), threading.Thread(target=ask)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 2 and got[0] is got[1]
    assert training.cached(training.training_key(text, spec)) is got[0]
    assert original(spec, text).merges == got[0].merges  # the one trained is what training gives


def test_a_failed_training_leaves_the_waiting_session_to_train(monkeypatch):
    text = sample("numbers") + " retry"
    spec = TrainingSpec("bpe", 400, "gpt2", ())
    original = TrainingSpec.train
    calls = []

    def first_fails(self, text, *args, **kwargs):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            time.sleep(0.3)
            raise ValueError("stopped")  # as a Cancel would
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(TrainingSpec, "train", first_fails)
    outcome = {}

    def ask(name):
        try:
            outcome[name] = training.train(text, spec)
        except ValueError as exc:
            outcome[name] = exc

    a = threading.Thread(target=ask, args=("a",), name="a")
    b = threading.Thread(target=ask, args=("b",), name="b")
    a.start()
    time.sleep(0.05)
    b.start()
    a.join()
    b.join()
    assert isinstance(outcome["a"], ValueError) and str(outcome["a"]) == "stopped"
    assert calls == ["a", "b"]  # b waited for a, then trained by itself
    assert outcome["b"].merges == original(spec, text).merges


@pytest.mark.parametrize("algorithm", algorithm_names())
def test_default_spec_is_what_the_sidebar_trains(algorithm):
    at = _session(algo=algorithm)
    assert at.session_state[sk.SETTINGS].spec == default_spec(algorithm)


def test_after_the_warm_up_no_session_trains_or_loads(count_trainings, count_loads):
    done = warmup.run()
    assert done.done.is_set()
    assert [name for name, _s, error in done.steps if error] == []
    trained = len(count_trainings)
    assert trained == len(SAMPLES) * len(warmup.default_specs())  # each sample, each default spec, once
    loaded = dict(count_loads)
    assert loaded == dict.fromkeys(registry.PRODUCTION, 1)
    for key in SAMPLES:
        for algorithm in algorithm_names():
            _session(sample=key, algo=algorithm)
        _session("app_pages/compare.py", sample=key, cmp=",".join(["bpe", *registry.PRODUCTION]))
        _session("app_pages/encode.py", sample=key)
    assert len(count_trainings) == trained, count_trainings[trained:]
    assert count_loads == loaded
    tok = training.cached(training.training_key(load_sample("english"), default_spec("bpe")))
    assert tok is not None and tok.max_vocab_size == 1000


def test_the_warm_up_runs_only_under_a_server(monkeypatch):
    assert warmup.start() is None  # AppTest and plain imports: no Streamlit runtime, no thread
    monkeypatch.setenv(warmup.ENV, "0")
    assert not warmup.enabled()


@pytest.mark.parametrize("whitespace", ["1", "0"])
def test_compare_columns_kept_between_sessions_follow_each_sessions_options(whitespace):
    # a production column's HTML is built once per (tokenizer, text, options) and shared; each session's colour
    # mode and whitespace toggle still give it exactly the column it would draw by itself
    from ui import render
    from ui.compare import VIEW_CSS

    text = load_sample("numbers")
    gpt2 = registry.load_production("gpt2")
    bodies = {}
    for colour in ("cycle", "rank", "cycle"):
        at = _session("app_pages/compare.py", sample="numbers", cmp="bpe,gpt2", colour=colour, ws=whitespace)
        expected = render.tokens_html(
            gpt2.token_spans(text),
            show_whitespace=whitespace == "1",
            total_tokens=len(gpt2.token_spans(text)),
            text=text,
            mode=colour,
        )
        drawn = [e.proto.body.strip() for e in at.main if type(e).__name__ == "Html"]
        assert expected.strip() in drawn, colour
        # the style sheets come once per page, not once per column (the sidebar's carries the token views')
        sheets = [e.proto.body for e in at.get("html")]  # style-only HTML goes to neither main nor the sidebar
        assert sum(body.count(render.CSS.strip()) for body in sheets) == 1
        assert sum(body.count(VIEW_CSS.strip()) for body in sheets) == 1
        bodies.setdefault(colour, expected)
    assert bodies["cycle"] != bodies["rank"]


def test_every_production_tokenizer_is_warmed_and_no_click_loads_or_verifies_a_file(monkeypatch):
    # all the registered production tokenizers (21 on 2026-11-28) are loaded by the warm-up and stay loaded:
    # a session choosing any one of them on Compare or Encode neither loads it again nor sha256-checks a file
    done = warmup.run()
    warmed = [name.removeprefix("load ") for name, _s, error in done.steps if name.startswith("load ") and not error]
    assert sorted(warmed) == sorted(registry.PRODUCTION) and len(warmed) >= 21
    misses = registry.load_production.cache_info().misses, bpe_from_encoding.cache_info().misses
    verified = []  # the module of every sha256 computed in bpe_core.production (each is a file being checked)
    real_sha256 = hashlib.sha256

    def sha256(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("bpe_core.production"):
            verified.append(caller)
        return real_sha256(*args, **kwargs)

    monkeypatch.setattr(hashlib, "sha256", sha256)
    for key in registry.PRODUCTION:  # one session per tokenizer, in the registry's order (the oldest loaded first)
        at = _session("app_pages/compare.py", sample="multilingual", cmp=f"bpe,{key}")
        heads = [m.value.replace("\\", "") for m in at.main.markdown]  # a column's title, markdown escapes off
        assert f"**{registry.PRODUCTION[key].label}**" in heads, key
    _session("app_pages/encode.py", sample="multilingual")
    assert verified == []
    assert (registry.load_production.cache_info().misses, bpe_from_encoding.cache_info().misses) == misses
    assert registry.load_production.cache_info().currsize >= len(registry.PRODUCTION)


def test_after_the_warm_up_compare_buttons_on_a_sample_draw_no_production_column_again(monkeypatch):
    # the warm-up builds every production tokenizer's Compare column of each built-in sample; a session
    # choosing them finds the HTML in the shared cache (no token spans drawn again), and its columns are the
    # very ones it would draw by itself
    from ui import render

    warmup.run()
    drawn = []
    original = render.tokens_html

    def counting(spans, **kwargs):  # notes the production columns Compare draws (the cache key of its caller)
        key = sys._getframe(1).f_locals.get("cache_key", "")
        if str(key).startswith("prod|"):
            drawn.append(key)
        return original(spans, **kwargs)

    monkeypatch.setattr(render, "tokens_html", counting)
    keys = ["gpt2", "llama3", "mistral_v1", "bert", "qwen3_5"]
    at = _session("app_pages/compare.py", sample="python", cmp=",".join(["bpe", *keys]))
    assert drawn == []
    text = load_sample("python")
    html_bodies = [e.proto.body.strip() for e in at.main if type(e).__name__ == "Html"]
    for key in keys:
        tok = registry.load_production(key)
        spans = tok.token_spans(text)
        expected = original(spans, show_whitespace=True, total_tokens=len(spans), text=text, mode="cycle")
        assert expected.strip() in html_bodies, key
    _session("app_pages/compare.py", src="paste", text="Not a sample: 12345 tokens.", cmp="bpe,gpt2")
    assert drawn == ["prod|gpt2"]  # a text that is not a sample: its column is drawn
