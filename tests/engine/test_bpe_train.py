"""Training: hand-worked examples, the tie rule, the trace, and a naive cross-check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import PATTERNS, BPETokenizer, TrainingCancelled, train_bpe
from bpe_core.textbook.bpe import train_merges as naive_train

WS = r"\S+"  # whitespace splitting, as in the CS336 handout's example


def merges_of(tok: BPETokenizer) -> list[tuple[bytes, bytes]]:
    return tok.merges


def test_cs336_handout_example():
    # Words: low x5, lower x2, widest x3, newest x6 (spaces are their own one-byte pre-tokens).
    # Pair counts: lo 7, ow 7, we 2+6=8, er 2, wi 3, id 3, de 3, es 3+6=9, st 9, ne 6, ew 6.
    # 1. es and st tie at 9; (s,t) > (e,s) lexicographically -> "st" (9).
    # 2. (e,st) now 9 -> "est" (9).
    # 3. lo and ow tie at 7 (we is down to 2, newest is n e w est); (o,w) > (l,o) -> "ow" (7).
    # 4. (l,ow) 7 -> "low".
    # 5. (w,est) 6, (n,e) 6, (e,w) 6 tie; left "w" is greatest -> "west" (6).
    # 6. (n,e) 6 vs (e,west) 6; "n" > "e" -> "ne" (6).
    text = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
    tok = train_bpe(text, 256 + 6, pattern=WS)
    assert merges_of(tok) == [(b"s", b"t"), (b"e", b"st"), (b"o", b"w"), (b"l", b"ow"), (b"w", b"est"), (b"n", b"e")]
    assert [s.count for s in tok.trace] == [9, 9, 7, 7, 6, 6]
    # tokens: 5*3 + 2*5 + 3*6 + 6*6 = 79 letters + 15 spaces = 94 before any merge;
    # each merge replaces `count` pairs (no overlaps here): 94-9=85, 76, 69, 62, 56, 50.
    assert tok.training.initial_tokens == 94
    assert [s.tokens_after for s in tok.trace] == [85, 76, 69, 62, 56, 50]
    assert [s.new_id for s in tok.trace] == list(range(256, 262))


def test_tie_break_prefix_rule():
    # Words ab x3, abx, az.  Pairs: (a,b) 4, (b,x) 1, (a,z) 1 -> "ab" first.
    # Then (ab,x) 1 and (a,z) 1 tie.  Compare left parts first: b"ab" > b"a" (a proper prefix is
    # smaller), so (ab, x) wins although b"z" > b"x".  Then (a,z).
    tok = train_bpe("ab ab ab abx az", 256 + 3, pattern=WS)
    assert merges_of(tok) == [(b"a", b"b"), (b"ab", b"x"), (b"a", b"z")]


def test_tie_break_equal_left_compares_right():
    # (a,b) 1 and (a,c) 1 tie with the same left part; b"c" > b"b" -> (a,c) first.
    tok = train_bpe("ab ac", 256 + 2, pattern=WS)
    assert merges_of(tok) == [(b"a", b"c"), (b"a", b"b")]


def test_tie_break_uses_bytes_not_ids():
    # Both pairs count 2: (cd) and (ab). "c" > "a" -> cd first, whatever the order in the text.
    tok = train_bpe("ab ab cd cd", 256 + 2, pattern=WS)
    assert merges_of(tok) == [(b"c", b"d"), (b"a", b"b")]


def test_overlapping_pair_counts_vs_replacements():
    # "aaa": the pair (a,a) occurs at positions 0 and 1 -> count 2, but a left-to-right merge
    # replaces only one: [aa, a].  Tokens 3 -> 2.  Next (aa, a) count 1 -> "aaa", tokens 1.
    tok = train_bpe("aaa", 256 + 5, pattern=WS)
    steps = tok.trace
    assert [(s.left, s.right, s.count, s.replaced, s.tokens_after) for s in steps] == [
        (b"a", b"a", 2, 1, 2),
        (b"aa", b"a", 1, 1, 1),
    ]
    # asked for 5 merges, only 2 possible: stop early and say why
    assert tok.vocab_size == 258
    assert tok.training.stop_reason is not None and "258" in tok.training.stop_reason


def test_special_tokens_removed_and_never_merged():
    # Specials get ids 256, 257 in the given order; merges start at 258.  The text around a
    # special is split there: "xy" + "<|eot|>" + "xy" gives the pre-token "xy" twice, so (x,y) has
    # count 2, and no pair ever spans "y<" or ">x".
    tok = train_bpe("xy<|eot|>xy<|pad|>", 256 + 2 + 1, special_tokens=["<|eot|>", "<|pad|>"])
    assert tok.special_tokens == {"<|eot|>": 256, "<|pad|>": 257}
    assert tok.trace[0].new_id == 258 and tok.trace[0].merged == b"xy" and tok.trace[0].count == 2
    assert tok.encode("xy<|eot|>") == [258, 256]
    # 4 letters + 2 specials before merging; one merge of count 2 leaves 4 tokens
    assert tok.training.initial_tokens == 6 and tok.trace[0].tokens_after == 4


def test_merges_never_cross_pretoken_boundaries(english):
    tok = train_bpe(english, 600)
    for left, right in tok.merges:
        merged = left + right
        # under the GPT-2 pattern a token never holds a letter after a space in its middle
        assert b" " not in merged[1:] or merged.strip(b" ") == b""


def test_vocab_size_below_base_alphabet_is_a_clear_error():
    with pytest.raises(ValueError, match=r"at least 258 \(256 byte tokens \+ 2 special tokens\)"):
        train_bpe("hello", 257, special_tokens=["<a>", "<b>"])
    with pytest.raises(TypeError):
        train_bpe("hello", 300.5)
    with pytest.raises(TypeError):
        train_bpe(b"hello", 300)


def test_empty_text_trains_nothing_and_says_so():
    tok = train_bpe("", 300)
    assert tok.vocab_size == 256
    assert "no pair is left" in tok.training.stop_reason


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "none"])
def test_matches_naive_trainer_on_real_text(seeds, pattern):
    text = seeds[:20000]
    tok = train_bpe(text, 256 + 150, pattern=pattern)
    expected = naive_train(text, 256 + 150, PATTERNS[pattern])
    assert [(s.left, s.right, s.count) for s in tok.trace] == expected


def test_matches_naive_trainer_with_special_tokens(seeds):
    text = seeds[:8000].replace("\n\n", "<|endoftext|>")
    tok = train_bpe(text, 256 + 1 + 80, special_tokens=["<|endoftext|>"])
    expected = naive_train(text, 256 + 1 + 80, PATTERNS["gpt2"], ["<|endoftext|>"])
    assert [(s.left, s.right, s.count) for s in tok.trace] == expected


def test_matches_naive_trainer_down_to_single_occurrences(seeds):
    # Trained until no pair is left, so the last merges have count 1: pairs made with count 1
    # are only queued by the trainer once no pair of count 2 or more is left (a rebuild of its
    # index), and the tie rule must still pick among all of them.
    text = seeds[:3000]
    tok = train_bpe(text, 5000)
    expected = naive_train(text, 5000, PATTERNS["gpt2"])
    assert tok.training.stop_reason is not None
    assert [(s.left, s.right, s.count) for s in tok.trace] == expected
    assert sum(s.count == 1 for s in tok.trace) > 100


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcab  \n", max_size=120), st.integers(min_value=0, max_value=40))
def test_matches_naive_trainer_on_random_text(text, n_merges):
    # a tiny alphabet makes ties and overlaps (aaa) frequent
    tok = train_bpe(text, 256 + n_merges, pattern="gpt2")
    expected = naive_train(text, 256 + n_merges, PATTERNS["gpt2"])
    assert [(s.left, s.right, s.count) for s in tok.trace] == expected


def test_trace_tokens_after_equals_encoding_length(english):
    # The trace's token count after merge k must equal encoding the training text with the
    # tokenizer viewed at that size: an independent path (the encoder) gives the same number.
    tok = train_bpe(english, 500)
    for k in (0, 1, 10, 100, len(tok.trace) - 1):
        view = tok.with_vocab_size(256 + k + 1)
        assert len(view.encode(english)) == tok.trace[k].tokens_after
    assert tok.training.initial_tokens == len(english.encode("utf-8"))


@pytest.mark.parametrize("n", [256, 257, 300, 420, 600])
def test_with_vocab_size_equals_training_directly(multilingual, english, n):
    full = train_bpe(english + multilingual, 600)
    direct = train_bpe(english + multilingual, n)
    view = full.with_vocab_size(n)
    assert view.vocab_size == n == direct.vocab_size
    assert view.merges == direct.merges
    for t in (english, multilingual, "unseen words: zyzzyva, ☃, 1234567"):
        assert view.encode(t) == direct.encode(t)


def test_with_vocab_size_range_errors(english):
    tok = train_bpe(english, 300)
    with pytest.raises(ValueError, match=r"256\.\.300"):
        tok.with_vocab_size(301)
    with pytest.raises(ValueError, match=r"256\.\.300"):
        tok.with_vocab_size(255)
    assert tok.with_vocab_size(280).with_vocab_size(300).vocab_size == 300


def test_ids_are_contiguous_and_bytes_consistent(english, multilingual):
    tok = train_bpe(english + multilingual, 700, special_tokens=["<|endoftext|>"])
    vocab = tok.vocab
    assert sorted(vocab) == list(range(tok.vocab_size))
    assert all(vocab[i] == bytes([i]) for i in range(256))
    assert vocab[256] == b"<|endoftext|>"
    for s in tok.trace:
        assert vocab[s.new_id] == vocab[s.left_id] + vocab[s.right_id]


def test_progress_callback_and_cancel(english):
    seen = []
    train_bpe(english, 400, progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert seen[0] == ("count", 0, 1) and seen[-1] == ("merge", 144, 144)

    def cancel(phase, done, total):
        if phase == "merge" and done >= 10:
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        train_bpe(english, 400, progress=cancel)
