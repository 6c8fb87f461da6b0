"""Unigram, the model: pieces with probabilities, and a word encoded as its most likely segmentation.

The Unigram language model (Kudo, 2018; SentencePiece; the Hugging Face course,
chapter 6, "Unigram tokenization") gives every piece of its vocabulary a
probability ``P(piece)``, and its **score** is ``log P(piece)``.  The pieces of
a word are taken to be independent (hence "unigram"), so a segmentation's
probability is the product of its pieces' probabilities -- its score the sum
of theirs.  Encoding a word picks the segmentation of highest score.

There are exponentially many segmentations (:func:`segmentations` lists them
all, for small words), but the best one is found in one pass (the Viterbi
algorithm): ``best[e]``, the best score of the first ``e`` characters, is the
maximum over the pieces ``word[s:e]`` of ``best[s] + score(word[s:e])``.

* **Ties** (equal scores): the segmentation whose last piece starts earliest,
  and so on back -- Hugging Face ``tokenizers``' ``Unigram`` rule.
* **Unknown characters**: a character that is no piece gets the unknown token,
  scored 10 below the lowest score (SentencePiece's ``kUnkPenalty``), and a
  run of them is one unknown token.
* **Words** are SentencePiece's: every space becomes ``▁``, a ``▁`` is put in
  front of the text, and the text is cut before every ``▁``
  (:func:`sentencepiece_words`); so pieces can hold the start of a word.

Training is in :mod:`bpe_core.textbook.unigram_training`.  The fast encoder
:func:`bpe_core.unigram.encoder.viterbi` must give exactly :func:`viterbi`'s pieces.

>>> scores = {"▁": -3.0, "h": -3.0, "u": -3.0, "g": -3.0, "s": -3.0, "▁hug": -1.0}
>>> viterbi("▁hugs", scores)
([(0, 4, '▁hug'), (4, 5, 's')], -4.0)
>>> tok = Unigram(scores)
>>> [tok.describe_token(i) for i in tok.encode("hugs hug")], tok.decode(tok.encode("hugs hug"))
(['▁hug', 's', '▁hug'], 'hugs hug')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import regex

from ..pretokenize import SENTENCEPIECE_PATTERN
from .base import TextbookTokenizer

__all__ = ["METASPACE", "UNK_PENALTY", "Unigram", "segmentations", "sentencepiece_words", "viterbi"]

METASPACE = "\u2581"
"""``▁``, SentencePiece's mark of a space."""

UNK_PENALTY = 10.0
"""An unknown character scores this much below the lowest score (SentencePiece's ``kUnkPenalty``)."""

UNKNOWN_TEXT = "\u2047"
"""``⁇``: what :meth:`Unigram.decode` writes for the unknown token (SentencePiece's choice)."""


def sentencepiece_words(text: str, start: int = 0, end: int | None = None) -> list[tuple[str, list[int | None]]]:
    """The words of ``text[start:end]``, SentencePiece-style, each character with the offset it came from.

    Spaces become ``▁``; at the start of the text (``start == 0``) a ``▁`` that
    stands for no character is put in front; the text is cut before every ``▁``.

    >>> [w for w, _origin in sentencepiece_words("Hello  world")]
    ['▁Hello', '▁', '▁world']
    """
    end = len(text) if end is None else end
    norm = ("" if start else METASPACE) + text[start:end].replace(" ", METASPACE)
    origin = ([] if start else [None]) + list(range(start, end))
    words = regex.finditer(f"{METASPACE}[^{METASPACE}]*|[^{METASPACE}]+", norm)
    return [(m.group(), origin[m.start() : m.end()]) for m in words]


def segmentations(word: str, scores: Mapping[str, float]) -> list[tuple[list[str], float]]:
    """Every segmentation of ``word`` into pieces, with its score (sum of log-probabilities), best first.

    Exponential in the word's length: for teaching and for checking :func:`viterbi` on short words.

    >>> segmentations("ab", {"a": -1.0, "b": -2.0, "ab": -2.5})
    [(['ab'], -2.5), (['a', 'b'], -3.0)]
    """
    if not word:
        return [([], 0.0)]
    out = []
    for e in range(1, len(word) + 1):
        if word[:e] in scores:
            out += [([word[:e], *rest], scores[word[:e]] + s) for rest, s in segmentations(word[e:], scores)]
    return sorted(out, key=lambda seg: -seg[1])


def viterbi(word: str, scores: Mapping[str, float], unk_score: float | None = None) -> tuple[list, float]:
    """The best segmentation of one word and its score (see the module docstring for ties and unknowns).

    Args:
        word: the word (non-empty).
        scores: ``{piece: score}``.
        unk_score: an unknown character's score (default: the lowest score minus :data:`UNK_PENALTY`).

    Returns:
        ``([(start, end, piece), ...], total score)``; ``piece`` is ``None`` for
        a run of unknown characters (unless the run happens to be a piece).
    """
    if unk_score is None:
        unk_score = min(scores.values(), default=0.0) - UNK_PENALTY
    n = len(word)
    best: list[float | None] = [0.0] + [None] * n  # best[e]: best score of word[:e]
    back: list[tuple[int, str | None]] = [(0, None)] * (n + 1)  # back[e]: where the last piece starts, and it
    for e in range(1, n + 1):
        for s in range(e):  # earliest start first; a later one must be strictly better
            piece = word[s:e]
            if piece in scores:
                score = scores[piece] + best[s]
            elif e == s + 1:
                piece, score = None, unk_score + best[s]
            else:
                continue
            if best[e] is None or score > best[e]:
                best[e], back[e] = score, (s, piece)
    out: list[tuple[int, int, str | None]] = []
    e = n
    while e > 0:
        s, piece = back[e]
        if piece is None and out and out[-1][2] is None:  # consecutive unknown characters: one token
            e = out.pop()[1]
        out.append((s, e, piece))
        e = s
    out.reverse()
    fused = [(s, e, word[s:e] if p is None and word[s:e] in scores else p) for s, e, p in out]
    return fused, best[n]


class Unigram(TextbookTokenizer):
    """A Unigram tokenizer: special tokens and ``<unk>`` first, then the pieces, best score first.

    Args:
        scores: ``{piece: score}``.
        special_tokens: special tokens (``unk`` is added after them unless among them).
        unk: the unknown token.
        name: display name.
    """

    def __init__(self, scores: Mapping[str, float], special_tokens: Sequence[str] = (), unk: str = "<unk>",
                 name: str = "Textbook Unigram") -> None:  # fmt: skip
        specials = list(special_tokens) + ([] if unk in special_tokens else [unk])
        pieces = sorted(scores, key=lambda p: (-scores[p], p))
        super().__init__(specials + pieces, {s: k for k, s in enumerate(specials)}, name=name,
                         pattern=SENTENCEPIECE_PATTERN, unknown_id=specials.index(unk))  # fmt: skip
        self.scores = dict(scores)
        self.unk_score = min(self.scores.values(), default=0.0) - UNK_PENALTY
        self.ids = {p: len(specials) + k for k, p in enumerate(pieces)}

    def words(self, text: str, start: int, end: int) -> list[tuple[str, list[int | None]]]:
        """SentencePiece-style words (:func:`sentencepiece_words`)."""
        return sentencepiece_words(text, start, end)

    def encode_word(self, word: str) -> list[tuple[int, int, int]]:
        """The Viterbi segmentation of one word, as ``(id, start, end)``."""
        pieces, _score = viterbi(word, self.scores, self.unk_score)
        return [(self.unknown_id if p is None else self.ids[p], s, e) for s, e, p in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        """Pieces joined, ``▁`` as a space, less the one put in front of the text; ``<unk>`` as ``⁇``."""
        for i in ids:
            self._check_id(i)
        text = "".join(UNKNOWN_TEXT if i == self.unknown_id else self.vocab[i] for i in ids).replace(METASPACE, " ")
        starts_with_special = bool(ids) and ids[0] in self.special_tokens.values() and ids[0] != self.unknown_id
        return text if starts_with_special else text.removeprefix(" ")

    def log_probability(self, word: str) -> float:
        """The score of the word's best segmentation (``log P``, natural log)."""
        return viterbi(word, self.scores, self.unk_score)[1]
