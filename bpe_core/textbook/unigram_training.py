r"""Unigram training, the textbook way: a big initial vocabulary, EM, and pruning what costs least.

As the Hugging Face course (chapter 6, "Unigram tokenization") teaches it, with
SentencePiece's EM and its estimate of what a removal costs (the course names
both as what real implementations do):

1. **Words**: SentencePiece-style (:func:`bpe_core.textbook.unigram.sentencepiece_words`),
   counted; special tokens are cut out first.
2. **Initial vocabulary** (:func:`initial_vocabulary`): every substring of the
   words up to ``max_length`` characters, with its count (occurrences inside
   the words, weighted by the words' counts); every character is kept, so any
   word can be spelt.  A piece's first score is ``log(count / total)``.
   SentencePiece seeds differently: from a suffix array of the text it takes
   only the substrings that occur at least twice and are not always followed
   by the same character, scored ``count * length``, the best million.
3. **EM** (:func:`em_step`): the *expected* count of every piece over all
   segmentations of every word, each weighted by its probability
   (forward-backward, :func:`expected_counts`; :func:`segmentations` would give
   the same by enumeration), then new scores from those counts.  The M-step
   is SentencePiece's Bayesian one, ``digamma(count) - digamma(total)``
   (plain EM would take ``log(count / total)``).
4. **Loss** (:func:`loss`): the words' negative log-likelihood under their best
   segmentations, weighted by counts, in nats.
5. **Pruning**: the cost of removing a piece is how much the loss would grow.
   The course re-encodes the corpus without it (:func:`loss_without`);
   SentencePiece estimates it from the piece's own best segmentation without
   it (:func:`removal_costs`), which is what training here uses.  The pieces
   that cost least (a share, 10 %) go, never a character; EM runs again.
   Repeat until the vocabulary is as small as asked.

The fast trainer :func:`bpe_core.unigram.trainer.train_unigram` must give, from
the same vocabulary and word counts, :func:`em_step`'s scores, :func:`loss`
and :func:`removal_costs`.

>>> tok = train("hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5, 13)
>>> [tok.describe_token(i) for i in tok.encode("hugs pun")]
['▁hug', 's', '▁pun']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .base import check_text, split_special_tokens
from .unigram import UNK_PENALTY, Unigram, sentencepiece_words, viterbi

__all__ = ["count_words", "digamma", "em_step", "expected_counts", "initial_vocabulary", "loss", "loss_without",
           "removal_costs", "scores_from_counts", "train"]  # fmt: skip

Counts = Mapping[str, float]


def count_words(text: str, special_tokens: Sequence[str] = ()) -> dict[str, int]:
    """Step 1: ``{word: count}`` of the SentencePiece-style words, in order of first appearance."""
    words: dict[str, int] = {}
    for start, end, special in split_special_tokens(check_text(text), special_tokens):
        if not special:
            for word, _origin in sentencepiece_words(text, start, end):
                words[word] = words.get(word, 0) + 1
    return words


def initial_vocabulary(words: Counts, max_length: int = 16, strict: bool = False) -> dict[str, int]:
    """Step 2: every substring of the words up to ``max_length`` characters, with its count.

    ``strict``: leave out a substring that is only ever a whole word (the
    course's toy example takes "all strict substrings"); characters always stay.

    >>> initial_vocabulary({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, strict=True)["hug"]
    15
    """
    counts: dict[str, int] = {}
    inside: set[str] = set()
    for word, n in words.items():
        for s in range(len(word)):
            for e in range(s + 1, min(len(word), s + max_length) + 1):
                counts[word[s:e]] = counts.get(word[s:e], 0) + n
                if e - s < len(word):
                    inside.add(word[s:e])
    return {p: c for p, c in counts.items() if not strict or len(p) == 1 or p in inside}


def scores_from_counts(counts: Counts) -> dict[str, float]:
    """``{piece: log(count / total)}``: the scores of a vocabulary whose pieces were counted."""
    total = sum(counts.values())
    return {p: math.log(c / total) for p, c in counts.items()}


def log_add(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` without overflow."""
    if a < b:
        a, b = b, a
    return a if b == -math.inf else a + math.log1p(math.exp(b - a))


def expected_counts(words: Counts, scores: Mapping[str, float]) -> dict[str, float]:
    """Step 3's E-step: each piece's expected count over all segmentations, by forward-backward.

    ``alpha[e]`` sums the probabilities of all segmentations of ``word[:e]``,
    ``beta[s]`` those of ``word[s:]``; the arc ``word[s:e]`` is used with
    probability ``alpha[s] * P(piece) * beta[e] / alpha[n]`` (all in logs).
    """
    expected = dict.fromkeys(scores, 0.0)
    for word, count in words.items():
        n = len(word)
        arcs = [(s, e, word[s:e]) for s in range(n) for e in range(s + 1, n + 1) if word[s:e] in scores]
        alpha = [0.0] + [-math.inf] * n
        for s, e, p in sorted(arcs, key=lambda arc: arc[1]):  # by end: alpha[s] is complete when used
            alpha[e] = log_add(alpha[e], alpha[s] + scores[p])
        beta = [-math.inf] * n + [0.0]
        for s, e, p in reversed(arcs):  # by start, last first: beta[e] is complete when used
            beta[s] = log_add(beta[s], scores[p] + beta[e])
        for s, e, p in arcs:
            expected[p] += count * math.exp(alpha[s] + scores[p] + beta[e] - alpha[n])
    return expected


def digamma(x: float) -> float:
    """The digamma function ``ψ(x)`` for ``x > 0``: ``ψ(x) = ψ(x + 1) - 1/x``, then the asymptotic series.

    >>> round(digamma(1.0), 12)  # minus the Euler-Mascheroni constant
    -0.577215664902
    """
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return acc + math.log(x) - 0.5 / x - series


MIN_EXPECTED = 1e-10
"""The smallest expected count the M-step takes (``digamma(0)`` is ``-inf``)."""

MIN_CHAR_COUNT = 0.5
"""A character's smallest expected count in the M-step.  SentencePiece drops every piece expected fewer than 0.5
times (``kExpectedFrequencyThreshold``); a character cannot go (every word must stay spellable), so it keeps 0.5."""


def em_step(words: Counts, scores: Mapping[str, float], min_char_count: float = MIN_CHAR_COUNT) -> tuple[dict, dict]:
    """One EM iteration: ``(expected counts, new scores)``; the M-step is ``digamma(count) - digamma(total)``.

    Args:
        words: ``{word: count}``.
        scores: ``{piece: score}``, every character of the words among the pieces.
        min_char_count: a character's expected count is raised to at least this (:data:`MIN_CHAR_COUNT`).

    Returns:
        ``({piece: expected count}, {piece: new score})``.
    """
    expected = expected_counts(words, scores)
    counts = {p: max(c, min_char_count if len(p) == 1 else 0.0, MIN_EXPECTED) for p, c in expected.items()}
    norm = digamma(sum(counts.values()))
    return expected, {p: digamma(c) - norm for p, c in counts.items()}


def loss(words: Counts, scores: Mapping[str, float]) -> float:
    """Step 4: ``-sum(count * best segmentation's score)`` over the words, in nats."""
    unk_score = min(scores.values()) - UNK_PENALTY
    return -sum(count * viterbi(word, scores, unk_score)[1] for word, count in words.items())


def loss_without(words: Counts, scores: Mapping[str, float], piece: str) -> float:
    """The course's cost of removing ``piece``: the loss without it minus the loss with it (scores unchanged)."""
    return loss(words, {p: s for p, s in scores.items() if p != piece}) - loss(words, scores)


def removal_costs(words: Counts, scores: Mapping[str, float]) -> dict[str, float]:
    """Step 5, SentencePiece's estimate: what removing each piece of more than one character would cost.

    A piece its words' best segmentations use ``f`` times (of ``total`` uses
    of all pieces) is replaced, at each use, by its own best segmentation
    without it, whose pieces ``a`` then have the counts ``freq(a) + f`` out of
    ``total + f * (len(alt) - 1)``; the cost is ``f`` times the drop in log
    probability.  A piece no best segmentation uses costs 0.
    """
    unk_score = min(scores.values()) - UNK_PENALTY
    freq = dict.fromkeys(scores, 0.0)
    for word, count in words.items():
        for _s, _e, p in viterbi(word, scores, unk_score)[0]:
            freq[p] += count
    total = sum(freq.values())
    others = dict(scores)  # the vocabulary less the piece being priced
    costs = {}
    for piece, f in freq.items():
        if len(piece) == 1:
            continue
        if f == 0:
            costs[piece] = 0.0
            continue
        del others[piece]
        alt = [p for _s, _e, p in viterbi(piece, others, unk_score)[0]]
        others[piece] = scores[piece]
        logprob_alt = sum(math.log(freq[a] + f) for a in alt) - len(alt) * math.log(total + f * (len(alt) - 1))
        costs[piece] = f * (math.log(f) - math.log(total) - logprob_alt)
    return costs


def train(text: str, vocab_size: int, special_tokens: Sequence[str] = ("<unk>",), *, max_length: int = 16,
          em_iterations: int = 2, share: float = 0.1) -> Unigram:  # fmt: skip
    """Train a Unigram tokenizer (steps 1-5 of the module docstring).

    Args:
        text: the training text.
        vocab_size: special tokens (``<unk>`` among them or added) + pieces.
        special_tokens: cut out of the text, never learned.
        max_length: the longest piece, in characters.
        em_iterations: EM iterations after the seed and after each pruning.
        share: the share of the pieces each pruning removes (at least one).

    Returns:
        The :class:`~bpe_core.textbook.unigram.Unigram` tokenizer (smaller when
        the text has too few pieces; never below its characters).

    Raises:
        ValueError: the text has no words (empty, or only special tokens).
    """
    specials = list(special_tokens) + ([] if "<unk>" in special_tokens else ["<unk>"])
    words = count_words(text, special_tokens)
    if not words:
        raise ValueError("the text has no words to train on (it is empty or holds only special tokens)")
    scores = scores_from_counts(initial_vocabulary(words, max_length))
    for _ in range(em_iterations):
        scores = em_step(words, scores)[1]
    while len(specials) + len(scores) > vocab_size:
        costs = removal_costs(words, scores)
        if not costs:
            break
        n_remove = min(len(costs), len(specials) + len(scores) - vocab_size, max(1, int(len(scores) * share)))
        for piece in sorted(costs, key=lambda p: (costs[p], scores[p]))[:n_remove]:
            del scores[piece]
        for _ in range(em_iterations):
            scores = em_step(words, scores)[1]
    return Unigram(scores, specials)
