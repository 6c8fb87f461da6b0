"""Replaying training (why this pair) and step-by-step encoding, checked against independent paths."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
import regex
import tiktoken

from bpe_core import BPETokenizer, train_bpe
from bpe_core.bpe.trace import PairCandidate, TrainingReplay, bpe_encode_steps, explain_tie_break
from bpe_core.production.encodings import ENCODINGS, bpe_from_encoding, load_mergeable_ranks
from bpe_core.steps import EncodeStep, PieceSteps, encode_steps
from tests.conftest import sample

WS = r"\S+"  # whitespace splitting: the gaps (spaces) are one-byte pre-tokens, which hold no pair


# ---------------------------------------------------------------------------
# an independent replay: apply the trace's merges in order, the way the seed articles do


def naive_words(text: str, pattern: str, specials=()) -> Counter:
    parts = regex.split("|".join(map(regex.escape, specials)), text) if specials else [text]
    words: Counter = Counter()
    for part in parts:
        for m in regex.finditer(pattern, part):
            words[tuple(m.group().encode())] += 1
    return words


def naive_apply(words: Counter, merges) -> Counter:
    """Apply (left_id, right_id, new_id) merges one after the other to every word, left to right."""
    for a, b, new in merges:
        out: Counter = Counter()
        for w, c in words.items():
            res, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    res.append(new)
                    i += 2
                else:
                    res.append(w[i])
                    i += 1
            out[tuple(res)] += c
        words = out
    return words


def naive_pair_counts(words: Counter) -> Counter:
    counts: Counter = Counter()
    for w, c in words.items():
        for p in pairwise(w):
            counts[p] += c
    return counts


TEXTS = {
    "english": (lambda: sample("english"), "gpt2", ("<|endoftext|>",)),
    "python": (lambda: sample("python"), "gpt2", ()),
    "multilingual": (lambda: sample("multilingual"), "cl100k", ()),
    "numbers": (lambda: sample("numbers"), "none", ()),
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_top_candidate_is_the_traced_merge_at_every_step(name):
    make, pattern, specials = TEXTS[name]
    text = make()
    tok = train_bpe(text, 800, specials, pattern)
    replay = TrainingReplay.from_text(tok, text)
    assert replay.n_merges == len(tok.trace) > 100
    for k, step in enumerate(tok.trace):
        ranking = replay.candidates(k)
        w = ranking.winner
        assert (w.left_id, w.right_id) == (step.left_id, step.right_id), k
        assert w.count == step.count, k
        assert w.replaceable == step.replaced, k
        assert ranking.rank == k
        # the ranking is by count, then by the greater (left bytes, right bytes)
        keys = [(c.count, c.left, c.right) for c in ranking.candidates]
        assert keys == sorted(keys, reverse=True)


def test_pair_counts_equal_an_independent_replay(code):
    # textwrap's source, GPT-2 pattern: recount every pair after k merges with the naive replay above
    tok = train_bpe(code, 700, (), "gpt2")
    replay = TrainingReplay.from_text(tok, code)
    pattern = tok.pattern
    words = naive_words(code, pattern)
    done = 0
    for k in (0, 1, 7, 50, 200, len(tok.trace)):
        words = naive_apply(words, tok.merge_ids[done:k])
        done = k
        expected = {p: c for p, c in naive_pair_counts(words).items()}
        assert dict(replay.pair_counts(k)) == expected, k
        # and the segmentation of the pre-tokens of two or more bytes (one-byte ones hold no pair)
        got: Counter = Counter()
        for ids, c in replay.segmentation(k):
            got[ids] += c
        assert got == Counter({w: c for w, c in words.items() if sum(len(tok.token_bytes(i)) for i in w) > 1})


def test_hand_worked_tie_between_different_left_parts():
    # "ab ab cd cd", words ab x2 and cd x2: pairs (a,b) 2 and (c,d) 2 tie.
    # Ties go to the greatest (left, right): b"c" > b"a", so (c, d) is merged first.
    tok = train_bpe("ab ab cd cd", 256 + 2, pattern=WS)
    ranking = TrainingReplay.from_text(tok, "ab ab cd cd").candidates(0)
    assert [(c.left, c.right, c.count) for c in ranking.candidates] == [(b"c", b"d", 2), (b"a", b"b", 2)]
    assert ranking.tied == 2 and ranking.distinct_pairs == 2
    assert ranking.tie_break_lines() == [
        "'c' + 'd' beats 'a' + 'b' (both 2): left parts compared first, 'c' > 'a': they differ at the first "
        "byte, 0x63 ('c') > 0x61 ('a')."
    ]


def test_hand_worked_tie_with_equal_left_parts_and_a_prefix():
    # "ba ab ac", one of each: pairs (b,a) 1, (a,b) 1, (a,c) 1.
    # k=0: (b,a) wins on its left part, b"b" > b"a"; then (a,c) > (a,b) since the left parts are equal
    #      and b"c" > b"b".
    # k=1: "ba" is merged; (a,b) and (a,c) still tie; left parts equal -> right parts decide -> (a,c).
    text = "ba ab ac"
    tok = train_bpe(text, 256 + 3, pattern=WS)
    replay = TrainingReplay.from_text(tok, text)
    r0 = replay.candidates(0)
    assert [(c.left, c.right) for c in r0.candidates] == [(b"b", b"a"), (b"a", b"c"), (b"a", b"b")]
    assert r0.tied == 3
    assert r0.tie_break_lines()[0].endswith("left parts compared first, 'b' > 'a': they differ at the first byte, "
                                            "0x62 ('b') > 0x61 ('a').")  # fmt: skip
    r1 = replay.candidates(1)
    assert [(c.left, c.right) for c in r1.candidates] == [(b"a", b"c"), (b"a", b"b")]
    assert r1.tie_break_lines() == [
        "'a' + 'c' beats 'a' + 'b' (both 1): the left parts are equal ('a'), so the right parts decide, "
        "'c' > 'b': they differ at the first byte, 0x63 ('c') > 0x62 ('b')."
    ]
    # and the trainer agrees with the hand-worked order
    assert tok.merges == [(b"b", b"a"), (b"a", b"c"), (b"a", b"b")]


def test_hand_worked_prefix_tie():
    # Words ab x3, abx, az: (a,b) 4 is merged first.  Then (ab,x) 1 and (a,z) 1 tie; b"ab" > b"a"
    # because a proper prefix sorts first, so (ab, x) wins although b"z" > b"x".
    text = "ab ab ab abx az"
    tok = train_bpe(text, 256 + 3, pattern=WS)
    r1 = TrainingReplay.from_text(tok, text).candidates(1)
    assert [(c.left, c.right, c.count) for c in r1.candidates] == [(b"ab", b"x", 1), (b"a", b"z", 1)]
    assert r1.tie_break_lines() == [
        "'ab' + 'x' beats 'a' + 'z' (both 1): left parts compared first, 'ab' > 'a': 'a' is a prefix of 'ab', "
        "and a shorter prefix sorts first."
    ]


def test_no_tie_gives_no_lines():
    # "aab aab ab": (a,b) 3 > (a,a) 2, a unique maximum
    tok = train_bpe("aab aab ab", 256 + 1, pattern=WS)
    r = TrainingReplay.from_text(tok, "aab aab ab").candidates(0)
    assert (r.winner.left, r.winner.right, r.winner.count) == (b"a", b"b", 3)
    assert r.tied == 1 and r.tie_break_lines() == []


def test_overlaps_counted_but_not_replaced():
    # "aaa aaa b": each "aaa" holds the pair (a,a) twice (positions 0 and 1) -> count 2 x 2 = 4,
    # but a left-to-right merge uses the middle "a" once -> replaced 1 x 2 = 2.
    text = "aaa aaa b"
    tok = train_bpe(text, 256 + 1, pattern=WS)
    w = TrainingReplay.from_text(tok, text).candidates(0).winner
    assert (w.left, w.right, w.count, w.replaceable, w.overlap_example) == (b"a", b"a", 4, 2, b"aaa")
    assert (tok.trace[0].count, tok.trace[0].replaced) == (4, 2)


def test_no_overlap_has_no_example():
    w = TrainingReplay.from_text(t := train_bpe("ab ab", 257, pattern=WS), "ab ab").candidates(0).winner
    assert w.overlap_example is None and w.count == w.replaceable == 2
    assert t.trace[0].count == 2


def test_replay_after_the_last_merge_is_empty_when_nothing_is_left():
    tok = train_bpe("ab ab", 1000, pattern=WS)  # one merge, then every word is one token
    replay = TrainingReplay.from_text(tok, "ab ab")
    assert replay.n_merges == 1
    r = replay.candidates(1)
    assert r.winner is None and r.candidates == () and r.tied == 0 and r.tie_break_lines() == []


def test_replay_bad_arguments():
    tok = train_bpe("ab ab", 257, pattern=WS)
    replay = TrainingReplay.from_text(tok, "ab ab")
    with pytest.raises(ValueError, match=r"step 2 is out of range: this tokenizer has merges 0\.\.1"):
        replay.candidates(2)
    with pytest.raises(ValueError, match="out of range"):
        replay.segmentation(-1)
    with pytest.raises(TypeError, match="step must be an int, got str"):
        replay.candidates("1")
    with pytest.raises(ValueError, match="top must be at least 1"):
        replay.candidates(0, top=0)
    with pytest.raises(TypeError, match="text must be a str"):
        TrainingReplay.from_text(tok, b"ab")
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        TrainingReplay.from_text(tok, "ab \ud800")
    with pytest.raises(TypeError, match="needs a BPETokenizer"):
        TrainingReplay("not a tokenizer", {})


def test_explain_tie_break_refuses_non_ties():
    a = PairCandidate(97, 98, b"a", b"b", 3, 3)
    b = PairCandidate(99, 100, b"c", b"d", 3, 3)
    with pytest.raises(ValueError, match="rival is the greater pair"):
        explain_tie_break(a, b)
    with pytest.raises(ValueError, match="no tie"):
        explain_tie_break(b, PairCandidate(97, 98, b"a", b"b", 2, 2))
    with pytest.raises(ValueError, match="does not tie with itself"):
        explain_tie_break(a, a)
    # bytes that are not printable ASCII are named in hex only, multi-byte tokens shown as hex
    hi = PairCandidate(0xE6, 0x9D, b"\xe6", b"\x9d", 5, 5)
    lo = PairCandidate(32, 116, b" ", b"t", 5, 5)
    assert explain_tie_break(hi, lo).endswith("'<0xE6>' > ' ': they differ at the first byte, 0xE6 > 0x20.")


# ---------------------------------------------------------------------------
# encoding step by step


def test_hand_worked_encode_steps():
    # merges: #1 a+b, #2 ab+c, #3 b+c.  "abcbc" = a b c b c
    #  - pairs ab(#1) bc(#3) cb(-) bc(#3): lowest is #1 -> [ab, c, b, c], new token at 0
    #  - pairs (ab,c)(#2) (c,b)(-) (b,c)(#3): #2 -> [abc, b, c], new token at 0
    #  - pairs (abc,b)(-) (b,c)(#3): #3 -> [abc, bc], new token at 1
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc", 258: b"bc"}
    tok = BPETokenizer(vocab, [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c")], pattern=WS)
    (piece,) = bpe_encode_steps(tok, "abcbc")
    assert piece.text == "abcbc" and (piece.start, piece.end) == (0, 5) and not piece.is_special
    assert [s.labels for s in piece.steps] == [
        ("a", "b", "c", "b", "c"),
        ("ab", "c", "b", "c"),
        ("abc", "b", "c"),
        ("abc", "bc"),
    ]
    assert [s.rank for s in piece.steps] == [None, 0, 1, 2]
    assert [s.marked for s in piece.steps] == [(), (0,), (0,), (1,)]
    assert [s.note for s in piece.steps] == [
        "5 bytes",
        "merge #1: 'a' + 'b' → 'ab'",
        "merge #2: 'ab' + 'c' → 'abc'",
        "merge #3: 'b' + 'c' → 'bc'",
    ]
    assert piece.ids == (257, 258) == tuple(tok.encode("abcbc"))
    assert piece.merges_applied == 3


def test_one_step_replaces_every_occurrence_of_its_pair():
    # "ababab" with the single merge a+b: one line, three new tokens at positions 0, 1, 2
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    tok = BPETokenizer(vocab, [(b"a", b"b")], pattern=WS)
    (piece,) = bpe_encode_steps(tok, "ababab")
    assert len(piece.steps) == 2
    assert piece.steps[1].labels == ("ab", "ab", "ab") and piece.steps[1].marked == (0, 1, 2)
    assert piece.steps[1].note == "merge #1: 'a' + 'b' → 'ab' (3×)"


WORDS = [
    "tokenization",
    "Hello, world!",
    " naïve café",
    "東京タワー",
    "🙂👍🏽 emoji",
    "Привет мир",
    "नमस्ते",
    "don't stop 2024-11-22",
    "    indented\n\tcode()",
    "<|endoftext|> after a special",
]


def _check_steps(tok, word, pieces):
    ids = [i for p in pieces for i in p.ids]
    assert ids == tok.encode(word), word
    # the pieces cover the text in order
    assert "".join(p.text for p in pieces) == word
    assert [p.start for p in pieces[1:]] == [p.end for p in pieces[:-1]]
    for p in pieces:
        if p.is_special:
            assert len(p.steps) == 1
            continue
        # line 0 is the raw bytes; the bytes never change, only how they are grouped
        assert b"".join(tok.token_bytes(i) for i in p.steps[0].ids) == p.text.encode()
        assert all(len(tok.token_bytes(i)) == 1 for i in p.steps[0].ids)
        for s in p.steps:
            assert b"".join(tok.token_bytes(i) for i in s.ids) == p.text.encode()
            assert s.labels == tuple(tok.describe_token(i) for i in s.ids)
        # merges are applied in increasing rank order, each shrinking the piece
        ranks = [s.rank for s in p.steps[1:]]
        assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
        assert all(len(b.ids) < len(a.ids) for a, b in pairwise(p.steps))


def test_encode_steps_match_encode_for_the_trained_tokenizer(seeds):
    tok = train_bpe(seeds, 1200, ["<|endoftext|>"])
    for word in WORDS:
        _check_steps(tok, word, bpe_encode_steps(tok, word))
    # and for a smaller view of it
    small = tok.with_vocab_size(400)
    for word in WORDS:
        _check_steps(small, word, encode_steps(small, word))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_encode_steps_match_tiktoken_for_reference_ranks(name):
    tok = bpe_from_encoding(name)
    spec = ENCODINGS[name]
    # tiktoken itself, built from the same verified ranks: an independent encoder
    enc = tiktoken.Encoding(
        name=f"test-{name}",
        pat_str=spec.pattern,
        mergeable_ranks=load_mergeable_ranks(name),
        special_tokens=dict(spec.special_tokens),
    )
    for word in WORDS:
        pieces = bpe_encode_steps(tok, word)
        _check_steps(tok, word, pieces)
        assert [i for p in pieces for i in p.ids] == enc.encode(word, allowed_special="all"), word


def test_gpt2_steps_for_tokenization():
    # tiktoken (an independent encoder) cuts "tokenization" into two tokens; the last step must create the
    # later-learned of the two: GPT-2's ranks list the 256 bytes first, so rank r is merge #(r - 255).
    ranks = load_mergeable_ranks("gpt2")
    enc = tiktoken.Encoding("test-gpt2", pat_str=ENCODINGS["gpt2"].pattern, mergeable_ranks=ranks, special_tokens={})
    expected = [enc.decode_single_token_bytes(i) for i in enc.encode("tokenization")]
    assert len(expected) == 2
    (piece,) = bpe_encode_steps(bpe_from_encoding("gpt2"), "tokenization")
    assert [s.encode() for s in piece.steps[-1].labels] == expected
    last = max(expected, key=ranks.get)
    assert piece.steps[-1].note.startswith(f"merge #{ranks[last] - 255}: ")
    assert piece.steps[-1].note.endswith(f"→ {last.decode()!r}")
    assert piece.steps[-1].rank == ranks[last] - 256


def test_special_tokens_are_one_line():
    tok = train_bpe("hello world " * 20, 300, ["<|endoftext|>"])
    pieces = bpe_encode_steps(tok, "hi<|endoftext|>")
    assert [p.is_special for p in pieces] == [False, True]
    assert pieces[1].steps == (EncodeStep((256,), ("<|endoftext|>",), "special token: one id, never merged"),)


def test_encode_steps_dispatch_and_errors():
    class StepWise:
        def encode_steps(self, text):
            return [PieceSteps(text, 0, len(text), False, (EncodeStep((1,), (text,), "whole word"),))]

    (p,) = encode_steps(StepWise(), "hug")
    assert p.ids == (1,) and p.steps[0].note == "whole word"
    with pytest.raises(TypeError, match="int has no step-by-step encoding"):
        encode_steps(3, "x")
    tok = train_bpe("ab ab", 257, pattern=WS)
    with pytest.raises(TypeError, match="text must be a str"):
        bpe_encode_steps(tok, None)
    with pytest.raises(ValueError, match="unpaired surrogate U\\+DC00"):
        bpe_encode_steps(tok, "a\udc00")
    with pytest.raises(TypeError, match="needs a BPETokenizer"):
        bpe_encode_steps(object(), "x")


def test_stepping_on_from_a_memoised_step_equals_replaying_from_scratch(multilingual):
    # the replay applies one merge to the previous step's state when it has it, and re-encodes otherwise
    tok = train_bpe(multilingual, 700, (), "gpt2")
    stepping = TrainingReplay.from_text(tok, multilingual)
    for k in range(0, 120):
        incremental = stepping.segmentation(k)
        scratch = TrainingReplay.from_text(tok, multilingual).segmentation(k)
        assert incremental == scratch, k
