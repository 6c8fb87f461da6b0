r"""Unigram encoding: SentencePiece-style words, the lattice of pieces, Viterbi with Hugging Face's ties.

A Unigram tokenizer cuts a text into words (pre-tokens), and each word into
the segmentation of highest total score (the sum of its pieces' scores,
log-probabilities), found by the Viterbi algorithm over the word's *lattice*:
one arc from character ``s`` to character ``e`` for every vocabulary piece
equal to ``word[s:e]``.

Exactly as Hugging Face ``tokenizers``' ``models.Unigram`` (its
``encode_optimized``, a port of SentencePiece's ``unigram_model.cc``), read
from its Rust source, ``tokenizers/src/models/unigram/model.rs``:

* positions are visited left to right; from each start every piece starting
  there (shortest first) offers ``best[start] + score`` to its end position,
  which takes it only when it is strictly greater than what it holds -- so
  between equal totals the path whose **last piece starts earliest** wins,
  and recursively for the rest of the path;
* a character with no single-character piece gets an *unknown* arc of score
  ``min_score - 10`` (``min_score``: the lowest score in the vocabulary,
  special tokens included);
* after backtracking, consecutive unknown arcs are fused into one string
  (``fuse_unk``, which ``Unigram::from`` always sets), and every string is
  looked up in the vocabulary: a fused run that happens to be a piece gets
  that piece's id, anything else the unknown id.

Scores are Python ``float`` (IEEE double, as Rust's ``f64``) and each path
total is accumulated in the same order (``score + best[start]``), so equal
inputs give bit-identical totals and the same ties.

SentencePiece-style words (the ``"sentencepiece"`` pattern) are Hugging Face's
``pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always",
split=True)``: every space ``" "`` becomes ``"▁"`` (U+2581), a ``"▁"`` is put
in front of each stretch of text between special tokens that does not start
with one, and the text is cut before every ``"▁"``.  On the original text those
words are exactly the matches of :data:`SENTENCEPIECE_PATTERN`
(``[ ▁][^ ▁]*|[^ ▁]+``), each written ``"▁" + rest`` (:func:`metaspace_word`),
so offsets map back one character for one character, except the ``"▁"`` put in
front of a stretch, which stands for no character of the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import regex

from ..pretokenize import SENTENCEPIECE_PATTERN

__all__ = [
    "METASPACE",
    "SENTENCEPIECE",
    "SENTENCEPIECE_PATTERN",
    "UNK_PENALTY",
    "PieceTable",
    "metaspace_word",
    "viterbi",
]

METASPACE = "\u2581"
"""``▁`` (U+2581 LOWER ONE EIGHTH BLOCK): SentencePiece's mark of a space, which pieces may start with."""

SENTENCEPIECE = "sentencepiece"
"""The pattern name of SentencePiece-style (Metaspace) pre-tokenization, the Unigram default (its words:
:data:`bpe_core.pretokenize.SENTENCEPIECE_PATTERN`)."""

UNK_PENALTY = 10.0
"""An unknown character's arc scores ``min_score - UNK_PENALTY`` (HF's and SentencePiece's ``kUnkPenalty``)."""

SENTENCEPIECE_RX = regex.compile(SENTENCEPIECE_PATTERN)


def metaspace_word(word: str) -> str:
    """The lattice string of one ``"sentencepiece"`` word: ``"▁"`` and the word without its leading space or ``▁``.

    >>> metaspace_word(" world"), metaspace_word("Hello")
    ('▁world', '▁Hello')
    """
    return METASPACE + (word[1:] if word[0] in " \u2581" else word)


class PieceTable:
    """What Viterbi needs of one vocabulary: piece -> id, the scores, and a prefix index.

    Attributes:
        piece_ids: ``{piece: id}`` of the pieces that take part in the lattice
            (special tokens are cut out of the text before, so they are not here).
        scores: ``scores[id]`` for every id of the vocabulary (``float``).
        unk_id: the id of the unknown token.
        unk_score: the score of an unknown character's arc, ``min_score - 10``.
        prefixes: ``{prefix: id or -1}`` for every non-empty prefix of every
            piece (``-1``: a prefix that is no piece) -- the trie of the lattice.
    """

    __slots__ = ("piece_ids", "prefixes", "scores", "unk_id", "unk_score")

    def __init__(self, piece_ids: Mapping[str, int], scores: Sequence[float], unk_id: int, min_score: float):
        self.piece_ids = dict(piece_ids)
        self.scores = list(scores)
        self.unk_id = unk_id
        self.unk_score = min_score - UNK_PENALTY
        prefixes: dict[str, int] = {}
        for piece in self.piece_ids:
            for k in range(1, len(piece)):
                prefixes.setdefault(piece[:k], -1)
        for piece, i in self.piece_ids.items():
            prefixes[piece] = i
        self.prefixes = prefixes

    def arcs(self, word: str) -> list[tuple[int, int, int]]:
        """Every arc of the lattice of ``word``: ``(start, end, id)`` in characters, by start then end.

        Unknown arcs (one character, :attr:`unk_id`) are included where no
        single-character piece starts, as Hugging Face's ``populate_nodes`` does.
        """
        out: list[tuple[int, int, int]] = []
        get = self.prefixes.get
        n = len(word)
        for s in range(n):
            single = False
            for e in range(s + 1, n + 1):
                i = get(word[s:e])
                if i is None:
                    break
                if i >= 0:
                    out.append((s, e, i))
                    single = single or e == s + 1
            if not single:
                out.append((s, s + 1, self.unk_id))
        return out


def viterbi(word: str, table: PieceTable) -> list[tuple[int, int, int]]:
    """The best segmentation of one word, as Hugging Face ``Unigram`` (see the module docstring).

    Must equal the textbook's :func:`bpe_core.textbook.unigram.viterbi` (tests/engine/test_textbook_unigram.py).

    Args:
        word: the word's lattice string (non-empty).
        table: the vocabulary.

    Returns:
        ``[(start, end, id), ...]`` covering ``word`` in order (character
        offsets); consecutive unknown characters are one entry (the unknown id,
        or the id of the piece that the run happens to spell).
    """
    n = len(word)
    get = table.prefixes.get
    scores = table.scores
    unk_id = table.unk_id
    unk_score = table.unk_score
    best = [0.0] * (n + 1)
    back = [-1] * (n + 1)
    bid = [0] * (n + 1)
    for s in range(n):
        here = best[s]
        single = False
        for e in range(s + 1, n + 1):
            i = get(word[s:e])
            if i is None:
                break
            if i >= 0:
                cand = scores[i] + here
                if back[e] < 0 or cand > best[e]:
                    best[e] = cand
                    back[e] = s
                    bid[e] = i
                if e == s + 1:
                    single = True
        if not single:
            cand = unk_score + here
            e = s + 1
            if back[e] < 0 or cand > best[e]:
                best[e] = cand
                back[e] = s
                bid[e] = unk_id
    out: list[tuple[int, int, int]] = []
    e = n
    run_end = -1  # end of the run of unknown arcs being fused, or -1
    while e > 0:
        s = back[e]
        if bid[e] == unk_id:
            if run_end < 0:
                run_end = e
        else:
            if run_end >= 0:
                out.append(_fused(word, e, run_end, table))
                run_end = -1
            out.append((s, e, bid[e]))
        e = s
    if run_end >= 0:
        out.append(_fused(word, 0, run_end, table))
    out.reverse()
    return out


def _fused(word: str, s: int, e: int, table: PieceTable) -> tuple[int, int, int]:
    """A run of unknown characters as one token: a piece's id if the run spells one (as HF's lookup), else unknown."""
    i = table.piece_ids.get(word[s:e])
    return (s, e, table.unk_id if i is None else i)
