"""bpe_core.analysis.live against the server's own segmentation at every vocabulary size, on real text."""

from __future__ import annotations

import base64
import gzip
from array import array
from pathlib import Path

import pytest

from bpe_core import BPETokenizer, train_bpe
from bpe_core.analysis.live import (
    NEVER,
    bpe_boundaries,
    bpe_size_totals,
    unigram_size_totals,
    unigram_step_versions,
    unigram_versions,
    word_versions,
    wordpiece_size_totals,
    wordpiece_versions,
)
from bpe_core.production.encodings import ranks_to_vocab_merges
from bpe_core.wordpiece import train_wordpiece

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
ODD = (
    "<img src=x onerror=alert(1)> **bold** __x__ `code` [a](b)\n"
    "שלום עולם مرحبا بالعالم\u200f — naïve café 日本語のテキスト 🙂🙃👍🏽\n"
    "\t\r\n  \u00a0\u3000 x\x00\x7f end"
)


def _key(spans):
    return [(s.id, s.start, s.end, s.display, s.is_partial, s.is_special, s.rank) for s in spans]


@pytest.fixture(scope="module")
def english():
    return (SAMPLES / "english.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def multi():
    return (SAMPLES / "multilingual.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def bpe_multi(multi):
    return train_bpe(multi, 700, special_tokens=["<|endoftext|>"])


def test_bpe_every_size_equals_token_spans(bpe_multi, multi):
    text = multi[:1500] + "<|endoftext|>" + ODD
    b = bpe_boundaries(bpe_multi, text)
    assert b.step is None  # trained tokenizers are monotone
    for k in range(bpe_multi.min_vocab_size, bpe_multi.max_vocab_size + 1):
        view = bpe_multi.with_vocab_size(k)
        assert _key(b.spans_at(k)) == _key(view.token_spans(text)), k
        assert b.token_count(k) == len(view.encode(text))


def test_bpe_partial_utf8_tokens_are_drawn_as_the_server_does(bpe_multi):
    text = "日本語 🙂🙃 ñ" * 3
    b = bpe_boundaries(bpe_multi, text)
    seen_partial = False
    for k in range(bpe_multi.min_vocab_size, bpe_multi.max_vocab_size + 1, 7):
        spans = bpe_multi.with_vocab_size(k).token_spans(text)
        seen_partial |= any(s.is_partial for s in spans)
        assert _key(b.spans_at(k)) == _key(spans)
    assert seen_partial


def test_bpe_size_totals_equal_encoding_and_the_trace(english):
    tok = train_bpe(english, 600)
    totals = bpe_size_totals(tok, english)
    assert len(totals) == tok.max_vocab_size - tok.min_vocab_size + 1
    # the trace is the trainer's independent count of the same thing
    assert totals[0] == tok.training.initial_tokens
    assert totals[1:] == [s.tokens_after for s in tok.trace]
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1, 37):
        assert totals[k - tok.min_vocab_size] == len(tok.with_vocab_size(k).encode(english))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "bert"])
def test_bpe_size_totals_of_a_long_text_come_from_the_corpus_counter_exactly(english, multi, pattern):
    """Past COUNTED_MIN_CHARS the pre-tokens are counted by the corpus counter: the totals still equal encoding."""
    from bpe_core.analysis import live

    tok = train_bpe(english + multi, 700, special_tokens=["<|endoftext|>"], pattern=pattern)
    text = "<|endoftext|>".join([english, multi, ODD] * 20) + "\n\n  trailing  "
    assert len(text) >= live.COUNTED_MIN_CHARS and tok.corpus_pieces() is not None
    totals = bpe_size_totals(tok, text)
    for k in [tok.min_vocab_size, 300, 451, tok.max_vocab_size]:
        assert totals[k - tok.min_vocab_size] == len(tok.with_vocab_size(k).encode(text)), k


def test_bpe_gone_at_is_one_size_per_boundary(english):
    tok = train_bpe(english, 500)
    text = english[:800]
    b = bpe_boundaries(tok, text)
    n = len(text.encode())
    assert len(b.gone_at) == n - 1
    # every boundary inside a pre-token that the full tokenizer joins has a size in range; pre-token edges never go
    full_cuts = {e for _s, e, _i in b.cuts_at(tok.max_vocab_size)}
    for i, g in enumerate(b.gone_at):
        if i + 1 in full_cuts:
            assert g == NEVER
        else:
            assert tok.min_vocab_size < g <= tok.max_vocab_size


def test_bpe_non_monotone_merges_are_exact():
    # merge 0 uses the token merge 1 makes: the run's ranks fall (1 then 0), so sizes follow the running maximum
    vocab = {i: bytes([i]) for i in range(256)}
    vocab[256], vocab[257], vocab[258] = b"abc", b"ab", b"cd"
    merges = [(b"ab", b"c"), (b"a", b"b"), (b"c", b"d")]
    tok = BPETokenizer(vocab, merges)
    text = "abc abcd cabc ab"
    b = bpe_boundaries(tok, text)
    assert b.step is not None
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1):
        assert _key(b.spans_at(k)) == _key(tok.with_vocab_size(k).token_spans(text)), k


def test_bpe_imported_gpt2_ranks_at_many_sizes(english, tiktoken_official):
    enc = tiktoken_official("r50k_base")
    vocab, merges = ranks_to_vocab_merges(enc._mergeable_ranks)
    tok = BPETokenizer(vocab, merges, pattern=enc._pat_str)
    text = english[:3000]
    b = bpe_boundaries(tok, text)
    # tiktoken's own encoder is the independent reference at the full size
    assert [i for _s, _e, i in b.cuts_at(tok.max_vocab_size)] == enc.encode_ordinary(text)
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1, 997):
        assert _key(b.spans_at(k)) == _key(tok.with_vocab_size(k).token_spans(text)), k


@pytest.mark.parametrize("lowercase", [False, True])
def test_wordpiece_every_size_equals_token_spans(english, lowercase):
    tok = train_wordpiece(english, 500, lowercase=lowercase)
    text = english[:1200] + " [SEP] İstanbul ŞEHİR [UNK] " + ODD
    v = wordpiece_versions(tok, text)
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1):
        view = tok.with_vocab_size(k)
        assert _key(v.spans_at(k)) == _key(view.token_spans(text)), k


def test_wordpiece_word_versions_against_encoding_at_every_size(english):
    tok = train_wordpiece(english, 400)
    for word in ["tokenization", "the", "unbelievably", "zzzq", "a" * 150]:
        versions = word_versions(tok, word)
        for k in range(tok.min_vocab_size, tok.max_vocab_size + 1):
            chosen = [ids for s, ids in versions if s <= k][-1]
            assert list(chosen) == tok.with_vocab_size(k).encode(word), (word, k)


def test_wordpiece_size_totals_equal_encoding(english):
    tok = train_wordpiece(english, 450)
    totals = wordpiece_size_totals(tok, english)
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1, 13):
        assert totals[k - tok.min_vocab_size] == len(tok.with_vocab_size(k).encode(english)), k
    assert totals[-1] == tok.training_text_tokens()


def test_bad_arguments(english):
    tok = train_bpe(english[:500], 270)
    with pytest.raises(TypeError):
        bpe_boundaries(object(), "x")
    with pytest.raises(TypeError):
        bpe_boundaries(tok, b"x")
    with pytest.raises(ValueError, match="surrogate"):
        bpe_boundaries(tok, "a\ud800b")
    with pytest.raises(ValueError, match="outside"):
        bpe_boundaries(tok, "abc").cuts_at(10)


def test_module_examples_run():
    import doctest

    import bpe_core.analysis.live

    result = doctest.testmod(bpe_core.analysis.live)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize("pattern", ["sentencepiece", "gpt2"])
def test_unigram_every_size_equals_token_spans(english, multi, pattern):
    from bpe_core.unigram import SENTENCEPIECE, train_unigram

    text = english[:2500] + "<|endoftext|>" + multi[:600] + ODD
    pat = SENTENCEPIECE if pattern == "sentencepiece" else "gpt2"
    tok = train_unigram(text, 700, special_tokens=["<|endoftext|>"], pattern=pat)
    v = unigram_versions(tok, text)
    totals = unigram_size_totals(tok, text)
    assert len(totals) == tok.max_vocab_size - tok.min_vocab_size + 1
    # every size: each one is a point of the pruning (a state, or the next round stopped early)
    for k in range(tok.min_vocab_size, tok.max_vocab_size + 1):
        view = tok.with_vocab_size(k)
        assert _key(v.spans_at(k)) == _key(view.token_spans(text)), k
        assert totals[k - tok.min_vocab_size] == len(view.encode(text)), k
    # not monotone: some word takes a segmentation at a smaller size that it leaves at a larger one
    assert any(len(unit) > 1 for unit in v.units)


def test_unigram_bad_arguments(english):
    from bpe_core.unigram import train_unigram

    with pytest.raises(TypeError, match="UnigramTokenizer"):
        unigram_versions(train_bpe(english, 300), "x")
    with pytest.raises(TypeError, match="str"):
        unigram_versions(train_unigram(english, 300), b"x")


def test_unigram_is_live_up_to_its_length_limit_and_the_others_always(english):
    """Past its live view's ``max_chars`` Unigram is drawn on the server (its tables cost more than training); BPE and
    WordPiece stay live on the same text."""
    from bpe_core.unigram import train_unigram
    from ui import live_view
    from ui.algorithms import view_of

    text = english
    limit = view_of("unigram").live.max_chars
    long_text = (text * (limit // len(text) + 2))[: limit + 1]
    uni = train_unigram(text, 600)
    assert live_view.supports(uni, text) and live_view.supports(uni, long_text[:limit])
    assert not live_view.supports(uni, long_text)
    for tok in (train_bpe(text, 400), train_wordpiece(text, 400)):
        assert live_view.supports(tok, long_text)


@pytest.mark.parametrize("pattern", ["sentencepiece", "gpt2"])
def test_unigram_step_versions_are_each_pruning_state(english, multi, pattern):
    """The Merges player's table: at every step the text as the training state after that many rounds encodes it.

    Checked against a tokenizer rebuilt from that state's pieces and scores alone (``state_pieces``, no views,
    no versions), and against the trainer's replay of the training text (the server-drawn pruning story).
    """
    from bpe_core.unigram import SENTENCEPIECE, UnigramTokenizer, train_unigram

    text = english[:2500] + "<|endoftext|>" + multi[:600] + ODD
    pat = SENTENCEPIECE if pattern == "sentencepiece" else "gpt2"
    tok = train_unigram(text, 700, special_tokens=["<|endoftext|>"], pattern=pat)
    n = len(tok.trace)
    drawn = text[:3000]  # a prefix, cut inside the training text as the page's drawn part is
    drawn = drawn[: drawn.rindex(" ")]
    v = unigram_step_versions(tok, drawn)
    assert (v.min_vocab_size, v.max_vocab_size) == (0, n) and n > 8  # GPT-2 words: 10 rounds (SentencePiece's seed)
    replay = tok.replay(text)
    changed = 0
    for k in range(n + 1):
        pieces = [(p, s) for _i, p, s in tok.state_pieces(k)]
        state = UnigramTokenizer.from_pieces(pieces, list(tok.special_tokens), pattern=pat)
        assert state.vocab_size == tok.state_sizes[k]
        got = v.spans_at(k)
        assert _key(got) == _key(tok.with_vocab_size(tok.state_sizes[k]).token_spans(drawn)), k
        assert [(s.id, s.start, s.end, s.display) for s in got] == [
            (s.id, s.start, s.end, s.display) for s in state.token_spans(drawn)
        ], k
        whole = [(s.id, s.start, s.end) for s in replay.spans(k) if s.end <= len(drawn)]
        assert [(s.id, s.start, s.end) for s in got] == whole, k
        if k and got != v.spans_at(k - 1):
            changed += 1
    assert changed > n // 2  # most rounds re-segment some of the drawn words
    # versions are kept only where a unit changes, keyed by increasing steps
    for unit in v.units:
        steps = [s for s, _spans in unit]
        assert steps[0] == 0 and steps == sorted(set(steps))


def test_unigram_merges_payload_is_the_pruning_story(english):
    """The player's payload: one step per round, the card's numbers as the server's pruning card has them."""
    from bpe_core.unigram import train_unigram
    from ui import live_view
    from ui.limits import PRUNED_LISTED
    from ui.merges.pruning import UnigramPruningHistory

    tok = train_unigram(english, 1000)
    history = UnigramPruningHistory(tok, english)
    p = live_view.merges_payload(tok, english)
    assert p["kind"] == "merges" and p["base"] == "unigram" and (p["lo"], p["hi"]) == (0, history.n_steps)
    tr = p["trace"]
    assert tr["sizes"] == history.sizes
    assert tr["loss"] == [history.loss_at(k) for k in range(history.n_steps + 1)]
    assert tr["round"] == [r.round for r in history.trace]
    assert tr["nRemoved"] == [r.n_removed for r in history.trace]
    for k in range(1, history.n_steps + 1):
        assert [x[0] for x in tr["removed"][k - 1]] == [piece for _i, piece, _x in history.removed(k)][:PRUNED_LISTED]
    raw = gzip.decompress(base64.b64decode(p["totals"]["z"]))
    totals = list(array("H" if p["totals"]["w"] == 2 else "I", raw))
    assert totals == [history.tokens_at(k) for k in range(history.n_steps + 1)]
    assert live_view.plays_merges(history)
