"""The textbook Unigram: the course's printed numbers, and the fast trainer and encoder equal to it.

Source, not our own output: the Hugging Face course, chapter 6, "Unigram
tokenization", on its toy corpus (``hug`` 10, ``pug`` 5, ``pun`` 12, ``bun`` 4,
``hugs`` 5): the initial vocabulary with its frequencies (sum 210), each word's
best segmentation and probability, ``unhug`` -> ``un hug``, the loss 169.8,
removing ``hug`` costs 23.5 and removing ``pu`` nothing.

Fast paths checked against the textbook, from the same pieces, scores and word
counts (the parts that are the same algorithm; the seeds differ on purpose):
the Viterbi encoder (:func:`bpe_core.unigram.encoder.viterbi` via
``UnigramTokenizer.encode_word``), and, for every pruning round of a real
training, the loss before and after, the removal costs (SentencePiece's
estimate) and the EM step's new scores.
"""

from __future__ import annotations

import math
from functools import cache

import pytest

from bpe_core.textbook import unigram_training as ut
from bpe_core.textbook.unigram import Unigram, segmentations, sentencepiece_words, viterbi
from bpe_core.unigram import train_unigram
from bpe_core.unigram.encoder import PieceTable
from bpe_core.unigram.encoder import viterbi as fast_viterbi
from tests.conftest import sample, seed_text

COURSE_WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
# The course's initial vocabulary and frequencies, as printed.
COURSE_SEED = {
    "h": 15, "u": 36, "g": 20, "hu": 15, "ug": 20, "p": 17, "pu": 17, "n": 16, "un": 16, "b": 4, "bu": 4, "s": 5,
    "hug": 15, "gs": 5, "ugs": 5,
}  # fmt: skip
# The course's best segmentation of each word and its probability, as printed.  "pug", "pun", "bun" and "hugs" tie
# (p ug = pu g, p un = pu n, b un = bu n, h ugs = hug s): the course names one, Viterbi with Hugging Face's rule
# takes the one whose last piece starts first.
COURSE_BEST = {"hug": (["hug"], 0.071428), "pug": (["pu", "g"], 0.007710), "pun": (["pu", "n"], 0.006168),
               "bun": (["bu", "n"], 0.001451), "hugs": (["hug", "s"], 0.001701)}  # fmt: skip
VITERBI_TIES = {"pug": ["p", "ug"], "pun": ["p", "un"], "bun": ["b", "un"], "hugs": ["h", "ugs"]}
TRAIN_TEXT = sample("english") + seed_text()[:12000]
EM_ITERATIONS = 2
# The fast M-step's floor on a character's expected count: none at this commit; SentencePiece's 0.5
# (bpe_core.textbook.unigram_training.MIN_CHAR_COUNT) once the fast trainer's EM follows SentencePiece exactly.
FAST_MIN_CHAR_COUNT = 0.0


@pytest.fixture(scope="module")
def course_scores() -> dict[str, float]:
    return ut.scores_from_counts(ut.initial_vocabulary(COURSE_WORDS, strict=True))


# -- the course's toy example ---------------------------------------------------------


def test_course_initial_vocabulary():
    seed = ut.initial_vocabulary(COURSE_WORDS, strict=True)
    assert seed == COURSE_SEED
    assert sum(seed.values()) == 210
    assert "pug" in ut.initial_vocabulary(COURSE_WORDS)  # without `strict`, whole words are substrings too


def test_course_segmentations_and_their_probabilities(course_scores):
    for word, (pieces, probability) in COURSE_BEST.items():
        best, score = viterbi(word, course_scores)
        assert [p for _s, _e, p in best] == VITERBI_TIES.get(word, pieces)
        assert math.exp(score) == pytest.approx(probability, abs=1e-6)  # printed to 6 places
        assert sum(course_scores[p] for p in pieces) == pytest.approx(score, rel=1e-12)  # the printed one is a best
    pug = segmentations("pug", course_scores)
    assert [(p, round(math.exp(s), 6)) for p, s in pug] == [(["p", "ug"], 0.00771), (["pu", "g"], 0.00771),
                                                            (["p", "u", "g"], 0.001322)]  # fmt: skip


def test_course_viterbi_on_unhug(course_scores):
    assert [p for _s, _e, p in viterbi("unhug", course_scores)[0]] == ["un", "hug"]


def test_course_loss_and_removal_costs(course_scores):
    assert round(ut.loss(COURSE_WORDS, course_scores), 1) == 169.8
    assert round(ut.loss_without(COURSE_WORDS, course_scores, "hug"), 1) == 23.5
    assert ut.loss_without(COURSE_WORDS, course_scores, "pu") == 0.0


def test_forward_backward_equals_enumeration_of_all_segmentations():
    """The E-step by forward-backward equals the expected counts summed over every segmentation, by probability."""
    words = dict(list(ut.count_words(sample("english")).items())[:60])
    scores = ut.scores_from_counts(ut.initial_vocabulary(words, max_length=5))
    by_fb = ut.expected_counts(words, scores)
    by_enum = dict.fromkeys(scores, 0.0)
    for word, count in words.items():
        segs = segmentations(word, scores)
        z = sum(math.exp(s) for _p, s in segs)
        for pieces, s in segs:
            for p in pieces:
                by_enum[p] += count * math.exp(s) / z
    assert by_fb == pytest.approx(by_enum, rel=1e-9, abs=1e-12)


def test_textbook_tokenizer_on_a_toy_text():
    tok = ut.train("hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5, 13)
    assert tok.vocab_size == 13 and tok.vocab[0] == "<unk>"
    assert tok.decode(tok.encode("hugs pun")) == "hugs pun"
    assert tok.encode("xyz") == [tok.vocab.index("▁"), tok.unknown_id]  # "▁" known, then one unknown run


# -- the fast paths equal the textbook ---------------------------------------------------


@cache
def fast_tokenizer():
    return train_unigram(TRAIN_TEXT, 1500, em_iterations=EM_ITERATIONS)


def state(tok, size: int) -> dict[str, float]:
    """``{piece: score}`` of the training state of ``size`` pieces (special tokens left out)."""
    return {piece: score for _i, piece, score in tok.with_vocab_size(size).state_pieces(0)}


def test_the_textbook_words_are_the_fast_trainers():
    from bpe_core.unigram import count_unigram_words

    assert count_unigram_words(TRAIN_TEXT, "sentencepiece", ["<unk>"])[0] == ut.count_words(TRAIN_TEXT)


@pytest.mark.parametrize("size", [None, 600, 200])
def test_fast_viterbi_equals_textbook_viterbi_on_real_words(size):
    tok = fast_tokenizer() if size is None else fast_tokenizer().with_vocab_size(size)
    scores = state(tok.truncated(), tok.vocab_size)
    texts = [sample("english"), sample("multilingual"), sample("numbers"), sample("python"), seed_text()]
    words = {w for t in texts for w, _o in sentencepiece_words(t)}
    for word in sorted(words):
        fast = tok.encode_word(word)
        book, total = viterbi(word, scores)
        assert [None if i == tok.unknown_id else tok.id_to_token(i) for i in fast] == [p for _s, _e, p in book], word
        fast_total = sum(tok.scores[i] if i != tok.unknown_id else math.nan for i in fast)
        if tok.unknown_id not in fast:
            assert total == pytest.approx(fast_total, rel=1e-12), word
    assert any(tok.unknown_id in tok.encode_word(w) for w in words)  # unknown characters were exercised


def test_fast_viterbi_function_equals_textbook_on_ties_and_unknowns():
    scores = {"▁": -2.0, "a": -1.0, "b": -1.0, "ab": -2.0, "ba": -2.0, "▁a": -3.0, "▁ab": -4.0}
    ids = {p: k + 1 for k, p in enumerate(scores)}
    table = PieceTable(ids, [0.0, *scores.values()], 0, min(scores.values()))
    for word in ["▁abab", "▁ba", "▁xxa", "▁axbx", "ab", "▁", "▁▁ab", "x"]:
        fast = [(s, e, None if i == 0 else word[s:e]) for s, e, i in fast_viterbi(word, table)]
        assert fast == viterbi(word, scores)[0], word


def rounds():
    """The pruning rounds of the fast training that start at a training state (the first is cut at the size asked)."""
    return fast_tokenizer().trace[1:]


def test_fast_losses_equal_the_textbook_loss():
    tok, words = fast_tokenizer(), ut.count_words(TRAIN_TEXT)
    assert len(rounds()) >= 20
    for r in rounds():
        assert ut.loss(words, state(tok, r.size_before)) == pytest.approx(r.loss_before, rel=1e-12)
        assert ut.loss(words, state(tok, r.size_after)) == pytest.approx(r.loss_after, rel=1e-12)


def test_fast_pruning_costs_equal_the_textbook_estimate():
    tok, words = fast_tokenizer(), ut.count_words(TRAIN_TEXT)
    for r in rounds():
        before = state(tok, r.size_before)
        costs = ut.removal_costs(words, before)
        removed = [tok.id_to_token(i) for i in range(r.size_after, r.size_before)]
        assert sorted(costs[p] for p in removed) == pytest.approx(sorted(r.loss_increase), rel=1e-9, abs=1e-9)
        kept = [costs[p] for p in costs if p not in removed]
        assert max(costs[p] for p in removed) <= min(kept, default=math.inf) + 1e-9, r.round  # the cheapest went


def test_fast_em_step_equals_the_textbook_em_step():
    """After a round's removals, EM from the old scores of what is left gives the next state's scores."""
    tok, words = fast_tokenizer(), ut.count_words(TRAIN_TEXT)
    for r in rounds()[::4]:
        before, after = state(tok, r.size_before), state(tok, r.size_after)
        scores = {p: before[p] for p in after}
        for _ in range(EM_ITERATIONS):
            expected, scores = ut.em_step(words, scores, FAST_MIN_CHAR_COUNT)
        assert scores == pytest.approx(after, rel=1e-9, abs=1e-9), r.round
        assert sum(expected.values()) > len(words)  # every word takes at least one piece


def test_textbook_pieces_in_the_fast_tokenizer_encode_alike():
    book = ut.train(sample("english"), 300)
    from bpe_core.unigram import UnigramTokenizer

    fast = UnigramTokenizer.from_pieces(list(book.scores.items()))
    for word in sorted({w for t in (sample("english"), sample("python")) for w, _o in sentencepiece_words(t)}):
        assert [fast.id_to_token(i) for i in fast.encode_word(word)] == [
            book.vocab[i] for i, _s, _e in book.encode_word(word)
        ], word


def test_textbook_unigram_round_trip():
    tok = Unigram({"▁": -2.0, "a": -1.0, "b": -1.5, "▁ab": -2.5})
    for text in ["ab ab", " ab", "ab  a", "", "b\u2581a", "xa yb"]:
        assert tok.encode(tok.decode(tok.encode(text))) == tok.encode(text), text
