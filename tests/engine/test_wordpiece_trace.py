"""WordPiece step by step: the trainer's segmentation at step k and greedy encoding, against independent paths.

The independent references: ``bpe_core.textbook.wordpiece`` (words from Hugging Face's
own ``BertPreTokenizer``, merges applied one after the other as strings, scores
as exact fractions recounted from scratch) and the course's ``encode_word``.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import pytest

from bpe_core.steps import PieceSteps, encode_steps
from bpe_core.textbook.wordpiece import count_words as naive_words
from bpe_core.textbook.wordpiece import encode_word as naive_encode_word
from bpe_core.textbook.wordpiece import hf_bert_pretokenizer
from bpe_core.textbook.wordpiece import train as naive_train
from bpe_core.wordpiece import train_wordpiece
from bpe_core.wordpiece.trace import (
    GreedyStep,
    ScoredPair,
    WordPieceReplay,
    explain_score_tie,
    wordpiece_encode_steps,
)
from tests.conftest import sample

# ---------------------------------------------------------------------------
# an independent replay: the trace's merges applied as strings, one after the other


def naive_snapshots(text: str, merges, ks, specials=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), lowercase=False):
    """``{k: {word: pieces after the first k merges}}`` for each k in ``ks``, and the word counts."""
    words, n_special = naive_words(text, specials, lowercase)
    splits = {w: [w[0]] + ["##" + ch for ch in w[1:]] for w in words}
    out = {}
    wanted = set(ks)
    for k in range(max(ks) + 1):
        if k in wanted:
            out[k] = {w: list(s) for w, s in splits.items()}
        if k == len(merges):
            break
        left, right = merges[k]
        merged = left + right[2:]
        for w, split in splits.items():
            if left not in split:
                continue
            res, i = [], 0
            while i < len(split):
                if i + 1 < len(split) and split[i] == left and split[i + 1] == right:
                    res.append(merged)
                    i += 2
                else:
                    res.append(split[i])
                    i += 1
            splits[w] = res
    return out, words, n_special


def naive_ranking(split_of: dict[str, list[str]], words: dict[str, int]):
    """Every pair with its exact score and first occurrence (word index, piece index), best first."""
    tf: dict[str, int] = {}
    pf: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], tuple[int, int]] = {}
    for wi, (w, c) in enumerate(words.items()):
        split = split_of[w]
        for t in split:
            tf[t] = tf.get(t, 0) + c
        for j, pair in enumerate(pairwise(split)):
            pf[pair] = pf.get(pair, 0) + c
            first.setdefault(pair, (wi, j))
    scored = [(Fraction(c, tf[p[0]] * tf[p[1]]), p) for p, c in pf.items()]
    scored.sort(key=lambda sp: (-sp[0], first[sp[1]]))
    return scored, pf, tf, first


@pytest.fixture(scope="module")
def seeds_text(seeds) -> str:
    return seeds[:30_000]


@pytest.mark.parametrize("lowercase", [False, True])
def test_segmentation_at_step_k_equals_a_naive_replay(seeds_text, lowercase):
    tok = train_wordpiece(seeds_text, 1500, lowercase=lowercase)
    replay = WordPieceReplay.from_text(tok, seeds_text)
    n = replay.n_merges
    assert n == len(tok.trace) > 613  # (the seed articles give over 1,000 merges; the fallback sample 815)
    ks = [0, 1, 7, 100, 613, n - 1, n]
    snaps, words, n_special = naive_snapshots(
        seeds_text, [(s.left, s.right) for s in tok.trace], ks, lowercase=lowercase
    )
    assert replay.words == list(words)  # the same words, in the same order of first appearance
    vocab = tok.vocab
    for k in ks:
        ours = [[vocab[i] for i in ids] for ids, _c in replay.segmentation(k)]
        assert ours == [snaps[k][w] for w in words], k
        # the token count of the training text: naive, replay and the trainer's trace agree
        naive_count = n_special + sum(len(snaps[k][w]) * c for w, c in words.items())
        assert replay.token_count(k) == naive_count
        assert naive_count == (tok.trace[k - 1].tokens_after if k else tok.training.initial_tokens)


def test_candidates_rank_like_a_naive_recount(seeds_text):
    tok = train_wordpiece(seeds_text, 1500)
    replay = WordPieceReplay.from_text(tok, seeds_text)
    ks = [0, 3, 250, 900]
    snaps, words, _n = naive_snapshots(seeds_text, [(s.left, s.right) for s in tok.trace], ks)
    for k in ks:
        ranking = replay.candidates(k, top=10)
        scored, pf, tf, first = naive_ranking(snaps[k], words)
        got = [(c.score, (c.left, c.right), c.pair_freq, c.left_freq, c.right_freq) for c in ranking.candidates]
        want = [(s, p, pf[p], tf[p[0]], tf[p[1]]) for s, p in scored[:10]]
        assert got == want, k
        assert ranking.distinct_pairs == len(pf)
        assert ranking.tied == sum(1 for s, _p in scored if s == scored[0][0])
        # the winner is the trainer's merge k
        step = tok.trace[k]
        assert (ranking.winner.left, ranking.winner.right) == (step.left, step.right)
        assert ranking.winner.score == step.score_exact
        # the most frequent pair: highest pair frequency, the earliest among equals
        best_f = max(pf.values())
        earliest = min((p for p in pf if pf[p] == best_f), key=first.get)
        assert (ranking.most_frequent.left, ranking.most_frequent.right, ranking.most_frequent.pair_freq) == (
            *earliest,
            best_f,
        )


def test_replay_agrees_with_the_trace_at_every_merge(english):
    tok = train_wordpiece(english, 5000)  # more than the sample gives: training runs until no pair is left
    assert tok.training.stop_reason is not None
    replay = WordPieceReplay.from_text(tok, english)
    for k, step in enumerate(tok.trace):
        w = replay.candidates(k, top=1).winner
        assert (w.left_id, w.right_id, w.pair_freq, w.left_freq, w.right_freq) == (
            step.left_id, step.right_id, step.pair_freq, step.left_freq, step.right_freq,
        )  # fmt: skip
    assert replay.candidates(len(tok.trace)).winner is None  # every word is one token at the end


def test_trainer_view_spans_cover_the_words_and_count_like_the_trace(english):
    tok = train_wordpiece(english, 1000)
    replay = WordPieceReplay.from_text(tok, english)
    words = [w for w, _span in hf_bert_pretokenizer().pre_tokenize_str(english)]
    for k in (0, 40, len(tok.trace)):
        spans = replay.view(k).token_spans(english)
        assert len(spans) == replay.token_count(k)
        # each piece shows its own characters; the pieces of a word (a first piece, then ## ones) spell the word
        assert all(english[s.start : s.end] == s.display for s in spans)
        spelled: list[str] = []
        for s in spans:
            if s.is_continuation:
                spelled[-1] += s.display
            else:
                spelled.append(s.display)
        assert spelled == words
        pieces = {tuple(tok.vocab[i] for i in ids) for ids, _c in replay.segmentation(k)}
        assert all(s.token_bytes.decode() == tok.vocab[s.id] for s in spans)
        assert pieces  # (the table is not empty)
        if k == 0:  # one token per character of the words
            assert len(spans) == sum(map(len, words))


def test_trainer_view_is_not_greedy_encoding():
    # Training keeps each word's own merge history; greedy encoding takes the longest piece the vocabulary has.
    # On the course corpus after 30 merges the two cut "generate" differently: training made "##at" inside it,
    # while greedy, reading from the left, meets "##ra" (learned from another word) first.
    from tests.engine.test_wordpiece import COURSE_TEXT

    tok = train_wordpiece(COURSE_TEXT, 1500)
    replay = WordPieceReplay.from_text(tok, COURSE_TEXT)
    k = 30
    snaps, _words, _n = naive_snapshots(COURSE_TEXT, [(s.left, s.right) for s in tok.trace], [k])
    trainer = [tok.vocab[i] for i in replay.word_pieces("generate", k)]
    assert trainer == snaps[k]["generate"] == ["g", "##e", "##n", "##e", "##r", "##at", "##e"]
    vocab_k = set(tok.with_vocab_size(tok.min_vocab_size + k).vocab.values())
    assert naive_encode_word("generate", vocab_k) == ["g", "##e", "##n", "##e", "##ra", "##t", "##e"]
    # the page draws the trainer's view
    spans = replay.view(k).token_spans("to generate")
    assert [tok.vocab[s.id] for s in spans] == snaps[k]["to"] + trainer


# ---------------------------------------------------------------------------
# a hand-worked example of the card's numbers and the tie rule


def test_hand_worked_scores_and_tie():
    # Words: "ab" x2, "ac" x1.  Alphabet: "a", "##b", "##c".
    # Frequencies at step 0: a = 2 + 1 = 3, ##b = 2, ##c = 1; pairs (a, ##b) = 2, (a, ##c) = 1.
    # Scores: (a, ##b) = 2 / (3 * 2) = 1/3, (a, ##c) = 1 / (3 * 1) = 1/3: a tie.
    # Tie rule: (a, ##b) occurs first (word #1 "ab", before word #2 "ac"), so merge 1 is a + ##b -> "ab".
    # Tokens: 2*2 + 2*1 = 6 before, 2*1 + 2*1 = 4 after.
    # Step 1: a = 1, ##c = 1, (a, ##c) = 1: score 1 / (1 * 1) = 1; merge 2 is a + ##c -> "ac", tokens 4 -> 3.
    tok = train_wordpiece("ab ab ac", 100)
    replay = WordPieceReplay.from_text(tok, "ab ab ac")
    r0 = replay.candidates(0)
    assert [(c.left, c.right, c.score, c.pair_freq, c.left_freq, c.right_freq) for c in r0.candidates] == [
        ("a", "##b", Fraction(1, 3), 2, 3, 2),
        ("a", "##c", Fraction(1, 3), 1, 3, 1),
    ]
    assert r0.tied == 2
    (line,) = r0.tie_break_lines()
    assert "'a' + '##b' beats 'a' + '##c'" in line and "1/3" in line
    assert "word #1 'ab'" in line and "word #2 'ac'" in line
    r1 = replay.candidates(1)
    assert [(c.left, c.right, c.score) for c in r1.candidates] == [("a", "##c", Fraction(1))] and r1.tied == 1
    assert [replay.token_count(k) for k in range(3)] == [6, 4, 3]
    s1, s2 = tok.trace
    assert (s1.merged, s1.pair_freq, s1.left_freq, s1.right_freq, s1.tokens_after) == ("ab", 2, 3, 2, 4)
    assert (s2.merged, s2.score_exact, s2.tokens_after) == ("ac", Fraction(1), 3)


def test_tie_inside_one_word_is_explained_by_position():
    # One word "abc": a, ##b, ##c each once; (a, ##b) and (##b, ##c) both score 1 / (1 * 1) = 1.
    # Both first occur in word #1; (a, ##b) starts at character 1, (##b, ##c) at character 2.
    tok = train_wordpiece("abc", 100)
    ranking = WordPieceReplay.from_text(tok, "abc").candidates(0)
    assert [(c.left, c.right) for c in ranking.candidates] == [("a", "##b"), ("##b", "##c")]
    (line,) = ranking.tie_break_lines()
    assert "both first occur in word #1 'abc'" in line
    assert "starts at character 1" in line and "at character 2" in line


def test_explain_score_tie_rejects_non_ties():
    a = ScoredPair(1, 2, "a", "##b", "ab", 2, 3, 2, 0, 0, "ab")
    b = ScoredPair(1, 3, "a", "##c", "ac", 1, 3, 1, 1, 0, "ac")
    c = ScoredPair(1, 3, "a", "##c", "ac", 1, 1, 1, 1, 0, "ac")
    assert "beats" in explain_score_tie(a, b)
    with pytest.raises(ValueError, match="no tie"):
        explain_score_tie(a, c)
    with pytest.raises(ValueError, match="would win"):
        explain_score_tie(b, a)
    with pytest.raises(ValueError, match="itself"):
        explain_score_tie(a, a)


def test_replay_argument_errors(english):
    tok = train_wordpiece(english, 300)
    replay = WordPieceReplay.from_text(tok, english)
    with pytest.raises(ValueError, match="out of range"):
        replay.segmentation(replay.n_merges + 1)
    with pytest.raises(TypeError):
        replay.candidates(1.0)
    with pytest.raises(ValueError, match="at least 1"):
        replay.candidates(0, top=0)
    with pytest.raises(TypeError, match="WordPieceTokenizer"):
        WordPieceReplay.from_text(object(), english)


# ---------------------------------------------------------------------------
# greedy longest-match-first, step by step


@pytest.fixture(scope="module")
def multi_tok():
    return train_wordpiece(sample("multilingual") + "\n" + sample("english"), 2000)


WORDS = [
    "tokenization",
    "naïve café",
    "Grüße aus Zürich",
    "東京タワー",
    "Привет, мир!",
    "don't [SEP] 2024!",
    "qqqzzz",  # letters the training text lacks in that position: [UNK]
    "☃ snow",  # a character absent from the training text: [UNK]
    "a" * 150,  # longer than max_input_chars_per_word
]


@pytest.mark.parametrize("text", WORDS)
def test_greedy_steps_end_in_encode(multi_tok, text):
    pieces = encode_steps(multi_tok, text)
    assert [i for p in pieces for i in p.ids] == multi_tok.encode(text)
    assert pieces == multi_tok.encode_steps(text) == wordpiece_encode_steps(multi_tok, text)
    vocab = {s for i, s in multi_tok.vocab.items() if i not in multi_tok.special_tokens.values()}
    for p in pieces:
        assert text[p.start : p.end] == p.text
        if p.is_special:
            continue
        # the course's encode_word (an independent greedy encoder) gives the same pieces
        assert list(p.steps[-1].labels) == naive_encode_word(p.text, vocab)
        for step in p.steps[1:]:
            assert isinstance(step, GreedyStep)
            if step.matched is not None:
                assert step.matched in vocab and step.labels[-1] == step.matched
            # every candidate tried is missing from the vocabulary, longest first, one character shorter each time
            assert not set(step.tried) & vocab
            lengths = [len(t) for t in step.tried] + ([len(step.matched)] if step.matched else [])
            assert all(a == b + 1 for a, b in pairwise(lengths))


def test_greedy_steps_of_one_word_by_hand():
    # Course corpus (seed 004) at vocab 70: encode_word("Hugging") == ["Hugg", "##i", "##n", "##g"] (printed).
    from tests.engine.test_wordpiece import COURSE_TEXT

    tok = train_wordpiece(COURSE_TEXT, 70)
    (p,) = encode_steps(tok, "Hugging")
    assert [s.labels for s in p.steps] == [
        (),
        ("Hugg",),
        ("Hugg", "##i"),
        ("Hugg", "##i", "##n"),
        ("Hugg", "##i", "##n", "##g"),
    ]
    # at the start: the longest vocabulary piece has 5 characters ("##fully" without ##), so "Huggi" is tried first
    first = p.steps[1]
    assert first.tried == ("Huggi",) and first.matched == "Hugg" and (first.start, first.end) == (0, 4)
    assert p.steps[2].tried == ("##ing", "##in") and p.steps[2].matched == "##i"
    assert "remainder '##ing'" in first.note
    # "HOgging": "H" is taken (after "HOggi" ... "HO" miss); at character 2 the five candidates of at most
    # 5 characters, "##Oggin" down to "##O", all miss (no "O" inside a word of the corpus): [UNK]
    (q,) = encode_steps(tok, "HOgging")
    assert q.ids == (tok.unknown_id,) and q.steps[-1].labels == ("[UNK]",)
    assert q.steps[1].tried == ("HOggi", "HOgg", "HOg", "HO") and q.steps[1].matched == "H"
    assert q.steps[-1].tried == ("##Oggin", "##Oggi", "##Ogg", "##Og", "##O")
    assert "whole word becomes [UNK]" in q.steps[-1].note


def test_too_long_and_lowercased_words():
    tok = train_wordpiece("İstanbul and ISTANBUL and istanbul " * 3, 200, lowercase=True)
    word = "x" * (tok.max_input_chars_per_word + 1)
    (p,) = encode_steps(tok, word)
    assert p.ids == (tok.unknown_id,) and "max_input_chars_per_word" in p.steps[-1].note and p.steps[-1].tried == ()
    pieces = encode_steps(tok, "ISTANBUL İstanbul")
    assert [i for q in pieces for i in q.ids] == tok.encode("ISTANBUL İstanbul")
    assert [q.text for q in pieces] == ["ISTANBUL", "İstanbul"]  # the original characters
    assert "lower-cased to 'istanbul'" in pieces[0].steps[0].note


def test_errors_are_the_encoders():
    tok = train_wordpiece("hello world", 40)
    with pytest.raises(TypeError):
        encode_steps(tok, b"bytes")
    with pytest.raises(ValueError, match="surrogate"):
        encode_steps(tok, "a\ud800b")
    assert encode_steps(tok, "") == [] and encode_steps(tok, "   ") == []
    assert isinstance(encode_steps(tok, "hello")[0], PieceSteps)


def test_naive_trainer_agrees_on_the_small_examples():
    # the hand-worked example above, cross-checked with the naive trainer's own numbers
    _vocab, merges = naive_train("ab ab ac", 100)
    assert merges == [("a", "##b", "ab", 2, 3, 2, 4), ("a", "##c", "ac", 1, 1, 1, 3)]
