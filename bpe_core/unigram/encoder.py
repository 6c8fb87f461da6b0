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

SentencePiece-style words (the ``"sentencepiece"`` pattern) are what
SentencePiece makes of a text (``add_dummy_prefix``, ``escape_whitespaces``,
``split_by_whitespace``): every space ``" "`` becomes ``"▁"`` (U+2581), one
``"▁"`` is put in front of the text -- unless the text starts with a special
token; none is put after a special token -- and the text is cut before every
``"▁"`` (:func:`lattice_words`).  So ``"<sep>world"`` and ``"<sep> world"``
are different words (``world`` and ``▁world``), and a text that starts with a
space starts with the word ``"▁"`` alone: decoding drops exactly the one
``"▁"`` put in front, and gives every text back.  On the original text the
words are the matches of :data:`SENTENCEPIECE_PATTERN` (``[ ▁][^ ▁]*|[^ ▁]+``),
each written ``"▁" + rest`` when it starts with a space or ``"▁"``
(:func:`metaspace_word`), so offsets map back one character for one
character, except the ``"▁"`` put in front of the text, which stands for no
character.  Hugging Face writes this as ``Metaspace(prepend_scheme="first")``,
except that it puts no ``"▁"`` in front of a text that starts with a space.

Tokenizers imported from a Hugging Face file with ``prepend_scheme="always"``
keep that scheme (:data:`PREPEND_ALWAYS`): a ``"▁"`` in front of every
stretch between special tokens that does not start with a space or ``"▁"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import regex

from ..pretokenize import SENTENCEPIECE_PATTERN

__all__ = [
    "METASPACE",
    "PREPEND_ALWAYS",
    "PREPEND_FIRST",
    "SENTENCEPIECE",
    "SENTENCEPIECE_PATTERN",
    "UNK_PENALTY",
    "PieceTable",
    "compiled_encoder_ready",
    "lattice_words",
    "metaspace_word",
    "viterbi",
    "viterbi_many",
    "viterbi_packed",
    "word_offsets",
]

METASPACE = "\u2581"
"""``▁`` (U+2581 LOWER ONE EIGHTH BLOCK): SentencePiece's mark of a space, which pieces may start with."""

SENTENCEPIECE = "sentencepiece"
"""The pattern name of SentencePiece-style (Metaspace) pre-tokenization, the Unigram default (its words:
:data:`bpe_core.pretokenize.SENTENCEPIECE_PATTERN`)."""

UNK_PENALTY = 10.0
"""An unknown character's arc scores ``min_score - UNK_PENALTY`` (HF's and SentencePiece's ``kUnkPenalty``)."""

SENTENCEPIECE_RX = regex.compile(SENTENCEPIECE_PATTERN)


PREPEND_FIRST = "first"
"""SentencePiece's scheme: one ``"▁"`` in front of the text (unless it starts with a special token), none after
special tokens.  What this package trains with."""

PREPEND_ALWAYS = "always"
"""Hugging Face ``Metaspace(prepend_scheme="always")``: a ``"▁"`` in front of every stretch between special tokens
that does not start with a space or ``"▁"`` (kept for files imported with it)."""


def metaspace_word(word: str) -> str:
    """The lattice string of one matched word: a leading space or ``▁`` written ``▁``, anything else as it is.

    >>> metaspace_word(" world"), metaspace_word("▁world"), metaspace_word("world")
    ('▁world', '▁world', 'world')
    """
    return METASPACE + word[1:] if word[0] in " \u2581" else word


def _prefixed(segment: str, first: bool, scheme: str) -> bool:
    """Whether a ``"▁"`` is put in front of this stretch (see the module docstring)."""
    if scheme == PREPEND_FIRST:
        return first
    return segment[0] not in " \u2581"


def lattice_words(segment: str, first: bool, scheme: str = PREPEND_FIRST) -> list[str]:
    """The lattice words of one stretch of text between special tokens (SentencePiece-style).

    Args:
        segment: the stretch (non-empty, no special token in it).
        first: the stretch starts the text (offset 0).
        scheme: :data:`PREPEND_FIRST` or :data:`PREPEND_ALWAYS`.

    Returns:
        The words in order, ``"▁"``-marked.

    >>> lattice_words("hug  pugs", True), lattice_words(" hug", True), lattice_words("hug", False)
    (['▁hug', '▁', '▁pugs'], ['▁', '▁hug'], ['hug'])
    """
    if _prefixed(segment, first, scheme):
        segment = METASPACE + segment
    return [metaspace_word(w) for w in SENTENCEPIECE_RX.findall(segment)]


def word_offsets(segment: str, first: bool, scheme: str = PREPEND_FIRST) -> list[tuple[int, int, str]]:
    """:func:`lattice_words` with each word's character offsets in ``segment``: ``[(start, end, word), ...]``.

    ``len(word) - (end - start)`` is 1 for the word that holds the ``"▁"`` put
    in front of the stretch (which stands for no character; a word of it
    alone is ``(0, 0, "▁")``), else 0.

    >>> word_offsets(" hug", True)
    [(0, 0, '▁'), (0, 4, '▁hug')]
    """
    lead = 1 if _prefixed(segment, first, scheme) else 0
    if lead:
        segment = METASPACE + segment
    return [
        (max(m.start() - lead, 0), m.end() - lead, metaspace_word(m.group()))
        for m in SENTENCEPIECE_RX.finditer(segment)
    ]


class PieceTable:
    """What Viterbi needs of one vocabulary: piece -> id, the scores, and a prefix index.

    Attributes:
        piece_ids: ``{piece: id}`` of the pieces that take part in the lattice
            (special tokens are cut out of the text before, so they are not here).
        scores: ``scores[id]`` for every id of the vocabulary (``float``).
        unk_id: the id of the unknown token.
        unk_score: the score of an unknown character's arc, ``min_score - 10``.
        prefixes: ``{prefix: id or -1}`` for every non-empty prefix of every
            piece (``-1``: a prefix that is no piece) -- the trie of the lattice
            for the Python Viterbi, built on first use (the compiled encoder
            reads :meth:`trie` instead).
    """

    __slots__ = ("_prefixes", "_trie", "piece_ids", "scores", "unk_id", "unk_score")

    def __init__(self, piece_ids: Mapping[str, int], scores: Sequence[float], unk_id: int, min_score: float):
        self.piece_ids = dict(piece_ids)
        self.scores = list(scores)
        self.unk_id = unk_id
        self.unk_score = min_score - UNK_PENALTY
        self._prefixes: dict[str, int] | None = None
        self._trie: tuple | None = None

    @property
    def prefixes(self) -> dict[str, int]:
        """``{prefix: id or -1}`` of every non-empty prefix of every piece (see the class attributes)."""
        if self._prefixes is None:
            prefixes: dict[str, int] = {}
            for piece in self.piece_ids:
                for k in range(1, len(piece)):
                    prefixes.setdefault(piece[:k], -1)
            for piece, i in self.piece_ids.items():
                prefixes[piece] = i
            self._prefixes = prefixes
        return self._prefixes

    def trie(self) -> tuple[np.ndarray, np.ndarray]:
        """The pieces as arrays for the compiled encoder: ``(trie, scores)``.

        A trie over code points (:func:`bpe_core.unigram.kernels._trie_build`): a
        hash table whose keys, ``node * 2**21 + code point``, sit beside their
        entries, ``child node * 2**32 + piece id + 1``; node 0 is the root.
        ``scores`` is :attr:`scores` as ``float64``.  Built once per table.
        """
        if self._trie is None:
            from . import kernels as K

            pieces = list(self.piece_ids)
            lens = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
            starts = np.zeros(len(pieces) + 1, dtype=np.int64)
            np.cumsum(lens, out=starts[1:])
            codes = np.frombuffer("".join(pieces).encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
            size = 1 << max(4, int(2 * (starts[-1] + 1)).bit_length())
            trie = np.full(2 * size, -1, dtype=np.int64)
            ids = np.fromiter(self.piece_ids.values(), dtype=np.int32, count=len(pieces))
            K._trie_build(codes, starts, ids, trie)
            self._trie = (trie, np.array(self.scores, dtype=np.float64))
        return self._trie

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


def compiled_encoder_ready() -> bool:
    """Whether the compiled encoder runs without a compile pause (its library built), or is asked for.

    :data:`bpe_core.counting.stream.KERNELS_ENV` ``python``: never; ``compiled``: always (numba's JIT
    until the library is built); ``auto``: once the library is built (its build starts in the background).
    """
    from ..counting import kernels_mode, kernels_ready

    mode = kernels_mode()
    return mode != "python" and kernels_ready(mode == "compiled")


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


def viterbi_many(words: Sequence[str], table: PieceTable, *, ids_only: bool = False) -> list:
    """:func:`viterbi` of every word, in compiled code (:func:`bpe_core.unigram.kernels._encode_words`).

    The same segmentations, ties and fused unknown runs (tested against :func:`viterbi`).

    Args:
        words: lattice words (non-empty).
        table: the vocabulary.
        ids_only: return each word's ids alone (a ``tuple``), not its arcs.

    Returns:
        One ``[(start, end, id), ...]`` (or ``(id, ...)``) per word.
    """
    from . import kernels as K

    trie, scores = table.trie()
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    wstart = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lens, out=wstart[1:])
    codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    n = int(wstart[-1])
    out_id, out_s, out_e = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int32)
    m = int(lens.max()) + 1 if len(words) else 1
    unk = np.array([table.unk_score])
    k = K._encode_words(codes, wstart, trie, scores, table.unk_id, unk, out_id, out_s, out_e,
                        np.empty(m), np.empty(m, np.int64), np.empty(m, np.int32))  # fmt: skip
    bounds = np.append(np.flatnonzero(out_s[:k] == 0), k).tolist()  # each word's first token starts at 0
    ids = out_id[:k].tolist()
    if ids_only:
        return [tuple(ids[a:b]) for a, b in itertools.pairwise(bounds)]
    arcs = list(zip(out_s[:k].tolist(), out_e[:k].tolist(), ids))
    return [arcs[a:b] for a, b in itertools.pairwise(bounds)]


def viterbi_packed(
    codes: np.ndarray, wstart: np.ndarray, table: PieceTable, *, compiled: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`viterbi` of many words given as code points, as flat arrays (no per-token Python objects).

    Args:
        codes: ``int32``, the words' code points joined.
        wstart: ``int64[n_words + 1]``, each word's start in ``codes``; every word non-empty.
        table: the vocabulary.
        compiled: run :func:`bpe_core.unigram.kernels._encode_words` once per distinct word (found by
            :func:`~bpe_core.unigram.kernels._distinct_words`; numba's JIT when their library is not built);
            else :func:`viterbi` on each distinct word.

    Returns:
        ``(word, start, end, id)``, ``int64`` each, one entry per token in text order: the token's word
        and its characters ``start:end`` in that word -- :func:`viterbi`'s arcs of every word, concatenated.

    Raises:
        ValueError: an empty word.
    """
    lens = np.diff(wstart)
    if lens.size and int(lens.min()) <= 0:
        raise ValueError("viterbi_packed: every word must hold at least one character")
    if compiled and lens.size:
        return _viterbi_distinct(np.ascontiguousarray(codes, dtype=np.int32), np.ascontiguousarray(wstart, np.int64),
                                 table)  # fmt: skip
    text = np.asarray(codes, dtype="<u4").tobytes().decode("utf-32-le")
    memo: dict[str, list[tuple[int, int, int]]] = {}
    cols: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
    for w, (a, b) in enumerate(itertools.pairwise(wstart.tolist())):
        word = text[a:b]
        arcs = memo.get(word)
        if arcs is None:
            arcs = memo[word] = viterbi(word, table)
        cols[0].extend([w] * len(arcs))
        for s, e, i in arcs:
            cols[1].append(s)
            cols[2].append(e)
            cols[3].append(i)
    word_of, starts, ends, ids = (np.array(c, dtype=np.int64) for c in cols)
    return word_of, starts, ends, ids


def _viterbi_distinct(codes: np.ndarray, wstart: np.ndarray, table: PieceTable):
    """:func:`viterbi_packed`'s compiled path: the distinct words found, segmented once each, copied to the rest."""
    from . import kernels as K

    n_words = wstart.size - 1
    first_of = np.empty(n_words, dtype=np.int64)
    slots = np.full(1 << max(4, (2 * n_words).bit_length()), -1, dtype=np.int64)
    nd = K._distinct_words(codes, wstart, slots, first_of)
    distinct = np.flatnonzero(first_of == np.arange(n_words))
    row = np.empty(n_words, dtype=np.int64)
    row[distinct] = np.arange(nd)
    row = row[first_of]  # each word's distinct word
    dlen = np.diff(wstart)[distinct]
    dstart = np.zeros(nd + 1, dtype=np.int64)
    np.cumsum(dlen, out=dstart[1:])
    dcodes = codes[np.repeat(wstart[distinct] - dstart[:-1], dlen) + np.arange(int(dstart[-1]))]
    trie, scores = table.trie()
    n = int(dstart[-1])
    out_id, out_s, out_e = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int32)
    m = int(dlen.max()) + 1
    k = K._encode_words(dcodes, dstart, trie, scores, table.unk_id, np.array([table.unk_score]), out_id, out_s, out_e,
                        np.empty(m), np.empty(m, np.int64), np.empty(m, np.int32))  # fmt: skip
    ntok = np.bincount(np.cumsum(out_s[:k] == 0) - 1, minlength=nd)  # each word's first token starts at 0
    toff = np.concatenate([[0], np.cumsum(ntok)])
    total = int(ntok[row].sum())
    word, starts, ends, ids = (np.empty(total, dtype=np.int64) for _ in range(4))
    K._copy_tokens(row, toff, out_id, out_s, out_e, word, starts, ends, ids)
    return word, starts, ends, ids


def _fused(word: str, s: int, e: int, table: PieceTable) -> tuple[int, int, int]:
    """A run of unknown characters as one token: a piece's id if the run spells one (as HF's lookup), else unknown."""
    i = table.piece_ids.get(word[s:e])
    return (s, e, table.unk_id if i is None else i)
