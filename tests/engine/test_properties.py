"""Property tests (hypothesis) of issue 7 on the trainers: prefix views, id layout, round trips."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core import train_bpe, train_wordpiece

# words from a small alphabet repeat often enough to give many merges, ties included
WORDS = ["ab", "ba", "aab", "abc", "ñu", "日本", "🙂", "a", "  ", "\n", "x1", "'s"]
words = st.lists(st.sampled_from(WORDS), max_size=60)
texts = words.map(" ".join)
any_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SLOW
@given(text=texts, extra=st.integers(0, 40), cut=st.integers(0, 40), probe=any_text)
def test_bpe_prefix_view_equals_training_to_that_size(text, extra, cut, probe):
    full = train_bpe(text, 257 + extra, ["<|endoftext|>"])
    n = min(257 + cut, full.vocab_size)
    direct = train_bpe(text, n, ["<|endoftext|>"])
    view = full.with_vocab_size(n)
    assert view.merges == direct.merges
    assert view.encode(probe) == direct.encode(probe)


@SLOW
@given(text=texts, extra=st.integers(0, 60))
def test_bpe_ids_are_exactly_0_to_vocab_size(text, extra):
    tok = train_bpe(text, 257 + extra, ["<|endoftext|>"])
    vocab = tok.vocab
    assert sorted(vocab) == list(range(tok.vocab_size))
    # token bytes repeat only where two merges built the same bytes (documented in BPETokenizer);
    # a repeat is always a merge token, never a byte or a special token
    seen: dict[bytes, int] = {}
    for i in range(tok.vocab_size):
        b = vocab[i]
        if b in seen:
            assert i >= tok.min_vocab_size and seen[b] >= 256
            step = tok.trace[i - tok.min_vocab_size]
            assert step.left + step.right == b
        seen.setdefault(b, i)


@SLOW
@given(text=texts, probe=any_text)
def test_bpe_round_trip_after_training_on_other_text(text, probe):
    tok = train_bpe(text, 300, ["<|endoftext|>"])
    assert tok.decode(tok.encode(probe)) == probe


@SLOW
@given(text=texts, extra=st.integers(0, 40), cut=st.integers(0, 40))
def test_wordpiece_prefix_view_and_id_layout(text, extra, cut):
    base = train_wordpiece(text, 10_000).min_vocab_size  # specials + alphabet: the smallest size
    full = train_wordpiece(text, base + extra)
    assert sorted(full.vocab) == list(range(full.vocab_size))
    n = min(base + cut, full.vocab_size)
    assert full.with_vocab_size(n).encode(text) == train_wordpiece(text, n).encode(text)
