r"""The Unigram tokenizer: a vocabulary of pieces with scores, the training states, encoding and persistence.

Ids and training states
-----------------------
A trained tokenizer keeps every *training state*: the vocabulary and scores
after each pruning round (:mod:`bpe_core.unigram.trainer`).  Ids are laid out
so that **every state is a prefix of the ids**:

* the special tokens first, in the order given, then the unknown token
  ``<unk>`` unless it is one of them (so with no special tokens ``<unk>`` is
  id 0, SentencePiece's convention; :attr:`UnigramTokenizer.unknown_id`
  points at it wherever it is);
* then the *required characters* (every character of the training words, so
  any word can be spelt), by score in the last state, highest first;
* then the other pieces, the last removed first: the pieces of the final
  state, then those removed by the last round (the one whose removal would
  have cost most first), and so on back to the largest state kept (the
  trained size: see below).

The state after round ``r`` is ids ``0 .. size_r - 1`` with that round's
scores.  ``rank_of(id)`` is ``id - min_vocab_size`` for a learned piece
(``None`` for special tokens and required characters): the piece belongs to
every view larger than ``min_vocab_size + rank``, as for BPE a merge of rank
``r`` belongs to every view past it.

``with_vocab_size(n)`` (the slider) returns the **smallest training state of
size >= n, cut short to n**: ids ``0 .. n - 1`` with that state's scores.
When ``n`` is a state's size that is exactly the state; in between it is the
next pruning round stopped early, after removing only the pieces it would
remove first (the lowest loss increase) -- a real point of the pruning
sequence.  :meth:`UnigramTokenizer.training_states` lists the exact sizes.

A view's own states are ``n`` and the training states below it, and its
:attr:`~UnigramTokenizer.trace` the rounds between them (the round that
crosses ``n`` cut to its removals below ``n``, its ``loss_before`` the loss at
``n``): what :meth:`~UnigramTokenizer.to_dict` saves and what
:meth:`~UnigramTokenizer.truncated` keeps.  The trainer returns the view at
the size asked for truncated, so ``max_vocab_size`` is the trained size and
training to ``k`` gives exactly the view at ``k`` of a longer training (same
ids, scores, trace and counts).

Encoding, decoding, offsets
---------------------------
Encoding splits special tokens out first (longest match first), cuts the rest
into words (SentencePiece-style by default: one ``▁`` in front of the text,
none after a special token, see :mod:`bpe_core.unigram.encoder`) and takes
each word's Viterbi segmentation with Hugging Face's ties (in compiled code
for many new words at once, :func:`~bpe_core.unigram.encoder.viterbi_many`;
each word's ids are remembered).  Decoding writes every ``▁`` as a space and
drops the one ``▁`` that encoding put in front of the text, so
``decode(encode(t)) == t`` for every ``t`` the vocabulary can spell -- no
unknown character and no literal ``▁`` (read as a space, as SentencePiece
reads it) -- with special tokens anywhere and leading spaces kept, as
SentencePiece.  The unknown token decodes as ``⁇`` (U+2047, SentencePiece's
unknown surface, without the spaces SentencePiece puts around it; U+FFFD when
a piece holds ``⁇``), not as its text ``<unk>`` as Hugging Face writes it:
``<unk>`` is a special token, which would cut the word in two on re-encoding.
(Decoding cannot give back the characters an unknown token stood for, so
around unknown tokens ``encode(decode(ids))`` may take other pieces than
``ids``.)  With any other pattern pieces are plain substrings, decoding joins
them, and the unknown token decodes as its text (split out again as a special
token; a ``⁇`` could join two pre-tokens into one).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import regex

from ..interface import TrainingInfo
from ..persistence import (
    JsonFile,
    ViewCache,
    json_bool,
    json_field,
    json_float,
    json_int,
    json_optional_str,
    json_version,
    training_from_json,
)
from ..pieces import SplitPieces, regex_pieces
from ..pretokenize import (
    PATTERNS,
    compile_pattern,
    iter_pretoken_strings,
    resolve_pattern,
    split_special,
    splits_at_spaces,
)
from ..spans import TokenSpan
from .batch import unigram_piece_tokens
from .encoder import (
    METASPACE,
    PREPEND_ALWAYS,
    PREPEND_FIRST,
    SENTENCEPIECE,
    SENTENCEPIECE_PATTERN,
    SENTENCEPIECE_RX,
    PieceTable,
    compiled_encoder_ready,
    lattice_words,
    viterbi,
    viterbi_many,
    word_offsets,
)
from .trace import PruneRound, UnigramReplay, WordLattice, word_lattice

__all__ = ["BYTE_PIECES", "DEFAULT_UNK_TOKEN", "UnigramTokenizer", "UnigramTrainingInfo"]

DEFAULT_UNK_TOKEN = "<unk>"
"""The unknown token's text (SentencePiece's and Hugging Face's default)."""

FORMAT = "bpe-playground/unigram"

_SURROGATE = regex.compile(r"[\ud800-\udfff]")

BYTE_PIECES = tuple(f"<0x{b:02X}>" for b in range(256))
"""The byte pieces of byte fallback, ``<0x00>`` .. ``<0xFF>`` (SentencePiece's and Hugging Face's names)."""

_BYTE_VALUE = {p: b for b, p in enumerate(BYTE_PIECES)}

_CACHE_WORDS = 1 << 18
"""Words whose ids a view keeps (the cache is emptied when full)."""

_COMPILED_MIN_CHARS = 4096
"""Missing words of fewer characters than this are segmented in Python (the compiled call costs more)."""


UNKNOWN_SURFACES = ("\u2047", "\ufffd")
"""What ``decode`` writes for the unknown token with SentencePiece-style words: the first no piece holds."""


@dataclass(slots=True)
class UnigramTrainingInfo(TrainingInfo):
    """Facts about one Unigram training run: :class:`~bpe_core.interface.TrainingInfo` and Unigram's own.

    The shared fields mean for Unigram: ``pretokens`` word occurrences in the
    training text (special tokens not counted), ``unique_pretokens`` distinct
    words, ``initial_tokens`` tokens of the training text under the seed state
    (special tokens count one each), ``merge_seconds`` the wall time after
    counting (seed, EM and pruning), ``stop_reason`` why the trained size
    differs from the requested one (``None`` when it does not).

    Attributes:
        characters: required characters (distinct characters of the words).
        seed_size: pieces of the initial vocabulary (required characters included,
            special tokens not).
        rounds: pruning rounds run (down to the required characters).
        seed_seconds, em_seconds, prune_seconds: wall time of building the seed
            vocabulary, EM re-estimation and pruning (Viterbi, alternatives,
            choice), in seconds; they add up to ``merge_seconds``.
    """

    characters: int = 0
    seed_size: int = 0
    rounds: int = 0
    seed_seconds: float = 0.0
    em_seconds: float = 0.0
    prune_seconds: float = 0.0


def _index_pieces(pieces: list) -> dict[str, int]:
    """``{piece: id}`` of a vocabulary in id order (``ValueError`` for an empty, non-``str`` or repeated piece)."""
    index: dict[str, int] = {}
    for i, p in enumerate(pieces):
        if not isinstance(p, str) or p == "":
            raise ValueError(f"piece #{i} must be a non-empty str, got {p!r}")
        if p in index:
            raise ValueError(f"piece {p!r} is given twice (ids {index[p]} and {i})")
        index[p] = i
    return index


def _byte_fallback_ids(index: dict[str, int], base: int) -> list[int]:
    """The ids of ``<0x00>`` .. ``<0xFF>`` (``ValueError`` unless all are among the first ``base`` ids)."""
    byte_ids = [index.get(BYTE_PIECES[b], -1) for b in range(256)]
    bad = next((b for b, i in enumerate(byte_ids) if not 0 <= i < base), None)
    if bad is not None:
        raise ValueError(
            f"byte fallback needs the piece {BYTE_PIECES[bad]!r} among the first {base} ids (the smallest "
            "state); it is missing or later"
        )
    return byte_ids


class _States:
    """What all views of one tokenizer share: the pieces, specials, states and trace."""

    __slots__ = (
        "base", "byte_ids", "pieces", "prepend", "rounds", "scores", "sizes", "special_ids", "specials", "tables",
        "tokens0", "unk_id",
    )  # fmt: skip

    def __init__(self, pieces, specials, unk_id, base, sizes, scores, rounds, tokens0=None, byte_ids=None,
                 prepend=PREPEND_FIRST):  # fmt: skip
        self.pieces: list[str] = pieces
        self.specials: dict[str, int] = specials
        self.special_ids: frozenset[int] = frozenset(specials.values())
        self.unk_id: int = unk_id
        self.base: int = base
        self.sizes: list[int] = sizes  # strictly decreasing
        self.scores: list[list[float]] = scores  # scores[k][id] for id < sizes[k]
        self.rounds: list[PruneRound] = rounds
        self.tables: dict[int, PieceTable] = {}  # the last few views' encoding tables, by size
        self.tokens0: int | None = tokens0  # the training text's tokens at state 0, when known
        self.byte_ids: list[int] | None = byte_ids  # byte fallback: the id of <0x00> .. <0xFF>, else None
        self.prepend: str = prepend  # where "▁" is put in front of a stretch (encoder.PREPEND_FIRST / _ALWAYS)


class UnigramTokenizer(ViewCache, JsonFile):
    """A Unigram tokenizer (SentencePiece's model) at one vocabulary size, and its training states.

    Build one with :func:`bpe_core.unigram.train_unigram`, :meth:`from_pieces`,
    :meth:`from_dict` / :meth:`load`, or
    :func:`bpe_core.unigram.unigram_from_hf_json`.

    Attributes:
        name: display name.
        pattern_name: ``"sentencepiece"``, another key of
            :data:`bpe_core.pretokenize.PATTERNS`, or a regex source.
        training: :class:`UnigramTrainingInfo`, or ``None`` (loaded, built from pieces).

    >>> tok = UnigramTokenizer.from_pieces([("▁hug", -1.0), ("▁", -2.0), ("h", -3.0), ("u", -3.0), ("g", -3.0),
    ...                                     ("s", -3.0)])
    >>> [tok.describe_token(i) for i in tok.encode("hugs hug")]
    ['▁hug', 's', '▁hug']
    >>> tok.decode(tok.encode("hugs hug")), tok.unknown_id
    ('hugs hug', 0)
    """

    algorithm = "unigram"
    """The key of :data:`bpe_core.interface.ALGORITHMS` that trains this kind of tokenizer."""

    is_byte_level = False
    """Tokens are strings (pieces), not bytes."""

    def __init__(
        self,
        states: _States,
        n: int,
        *,
        name: str,
        pattern_name: str,
        training: UnigramTrainingInfo | None = None,
        train_words: tuple[dict[str, int], int] | None = None,
    ):
        self._st = states
        self.name = name
        self.pattern_name = pattern_name
        self._metaspace = pattern_name == SENTENCEPIECE
        self._rx = SENTENCEPIECE_RX if self._metaspace else compile_pattern(resolve_pattern(pattern_name))
        self.training = training
        self._train_words = train_words
        self._views: dict[int, UnigramTokenizer] = {}
        self._narrow_to(n)

    # -- construction ------------------------------------------------------------

    @classmethod
    def from_states(
        cls,
        pieces: Sequence[str],
        special_tokens: Sequence[str],
        unk_token: str,
        *,
        base: int,
        sizes: Sequence[int],
        scores: Sequence[Sequence[float]],
        rounds: Sequence[PruneRound] = (),
        n: int | None = None,
        name: str = "Unigram",
        pattern_name: str = SENTENCEPIECE,
        training: UnigramTrainingInfo | None = None,
        train_words: tuple[dict[str, int], int] | None = None,
        initial_tokens: int | None = None,
        byte_fallback: bool = False,
        prepend: str = PREPEND_FIRST,
        checked: bool = False,
    ) -> UnigramTokenizer:
        """Build a tokenizer from its parts (what the trainer and :meth:`from_dict` call).

        Args:
            pieces: the text of every id, in id order (special tokens included).
            special_tokens: the special tokens' texts (the unknown token among
                them); each must be in ``pieces``.
            unk_token: the unknown token's text.
            base: :attr:`min_vocab_size`.
            sizes: the training states' sizes, strictly decreasing; ``sizes[0]``
                is :attr:`max_vocab_size` and must not exceed ``len(pieces)``.
            scores: ``scores[k]``: the score of each id ``< sizes[k]`` at state ``k``.
            rounds: the pruning rounds (``rounds[k - 1]`` produced state ``k``).
            n: the view's size (default ``sizes[0]``).
            name: display name.
            pattern_name: see the class attributes.
            training: the training facts.
            train_words: ``({lattice word: count}, special occurrences)`` of the
                training text, for :meth:`training_text_tokens`.
            initial_tokens: tokens of the training text at the first state
                (``sizes[0]``), when known (the later states' are in ``rounds``).
            byte_fallback: characters outside the vocabulary are encoded as
                the pieces ``<0x00>`` .. ``<0xFF>`` of their UTF-8 bytes (which
                must all be among the first ``base`` ids) instead of the unknown
                token; byte pieces are never matched in the text.
            prepend: SentencePiece-style words only: where a ``"▁"`` is put in
                front of a stretch, :data:`~bpe_core.unigram.encoder.PREPEND_FIRST`
                (SentencePiece's, the default) or
                :data:`~bpe_core.unigram.encoder.PREPEND_ALWAYS` (Hugging Face's
                ``prepend_scheme="always"``).
            checked: the pieces are known to be distinct non-empty strings (the
                trainer's): their check is skipped.

        Raises:
            ValueError: inconsistent parts (the message says which).
        """
        if prepend not in (PREPEND_FIRST, PREPEND_ALWAYS):
            raise ValueError(f"prepend must be {PREPEND_FIRST!r} or {PREPEND_ALWAYS!r}, got {prepend!r}")
        pieces = list(pieces)
        index = {p: i for i, p in enumerate(pieces)} if checked else _index_pieces(pieces)
        specials = {}
        for s in special_tokens:
            if s not in index:
                raise ValueError(f"special token {s!r} is not in the vocabulary")
            specials[s] = index[s]
        if unk_token not in specials:
            raise ValueError(f"the unknown token {unk_token!r} must be one of the special tokens")
        sizes = [int(x) for x in sizes]
        if not sizes or any(b >= a for a, b in itertools.pairwise(sizes)) or sizes[0] > len(pieces):
            raise ValueError("state sizes must be strictly decreasing and within the vocabulary")
        if len(scores) != len(sizes) or any(len(sc) < sz for sc, sz in zip(scores, sizes)):
            raise ValueError("each training state needs one score per id")
        if not 0 < base <= sizes[-1]:
            raise ValueError(f"min_vocab_size {base} must be between 1 and the smallest state {sizes[-1]}")
        byte_ids = _byte_fallback_ids(index, base) if byte_fallback else None
        st = _States(
            pieces, dict(sorted(specials.items(), key=lambda kv: kv[1])), specials[unk_token], base, sizes,
            [[float(x) for x in sc[:sz]] for sc, sz in zip(scores, sizes)], list(rounds), initial_tokens, byte_ids,
            prepend,
        )  # fmt: skip
        if n is None:
            n = sizes[0]
        if not base <= n <= sizes[0]:
            raise ValueError(f"vocab_size {n} is outside {base}..{sizes[0]}")
        return cls(st, n, name=name, pattern_name=pattern_name, training=training, train_words=train_words)

    @classmethod
    def from_pieces(
        cls,
        pieces: Iterable[tuple[str, float]],
        special_tokens: Sequence[str] = (),
        unk_token: str = DEFAULT_UNK_TOKEN,
        *,
        pattern: str = SENTENCEPIECE,
        name: str = "Unigram",
        byte_fallback: bool = False,
        prepend: str = PREPEND_FIRST,
    ) -> UnigramTokenizer:
        """A tokenizer of fixed pieces and scores (no training states): special tokens, ``<unk>``, then ``pieces``.

        With ``byte_fallback`` the 256 byte pieces ``<0x00>`` .. ``<0xFF>``
        (score 0.0) come between ``<unk>`` and ``pieces``, SentencePiece's
        layout (``byte_fallback=True``, no ``<s>``/``</s>``).

        Args:
            pieces: ``(piece, score)`` in id order after the special tokens.
            special_tokens: special tokens (ids 0, 1, ...); ``unk_token`` is
                appended after them unless it is one of them.
            unk_token: the unknown token's text.
            pattern: ``"sentencepiece"`` or a pattern name / regex.
            name: display name.
            byte_fallback: unknown characters as their UTF-8 byte pieces (see :meth:`from_states`).
            prepend: where a ``"▁"`` is put in front of a stretch (see :meth:`from_states`).

        Returns:
            A tokenizer whose only state is the whole vocabulary (special tokens score 0.0).

        Raises:
            ValueError: a piece is empty or repeated, or collides with a special token.
        """
        specials = list(special_tokens)
        if unk_token not in specials:
            specials.append(unk_token)
        items = list(pieces)
        head = specials + (list(BYTE_PIECES) if byte_fallback else [])
        texts = head + [p for p, _ in items]
        scores = [0.0] * len(head) + [float(s) for _, s in items]
        return cls.from_states(
            texts, specials, unk_token, base=len(texts), sizes=[len(texts)], scores=[scores], name=name,
            pattern_name=pattern, byte_fallback=byte_fallback, prepend=prepend,
        )  # fmt: skip

    # -- sizes and views ---------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Token ids of this view (special tokens included)."""
        return self._n

    @property
    def max_vocab_size(self) -> int:
        """The trained size (the size asked for, or the seed's when smaller): what :meth:`with_vocab_size` can reach."""
        return self._st.sizes[0]

    @property
    def min_vocab_size(self) -> int:
        """Special tokens, ``<unk>`` and the required characters: the smallest view."""
        return self._st.base

    def training_states(self) -> list[int]:
        """The sizes of this view's states (``vocab_size``, then after each later round), ascending."""
        return sorted(self._view_parts()[0])

    @property
    def state_sizes(self) -> list[int]:
        """The view's states' sizes in training order (``vocab_size`` first, then after each round, decreasing)."""
        return list(self._view_parts()[0])

    def _view_parts(self) -> tuple[list[int], list[list[float]], list[PruneRound]]:
        """Sizes, scores and rounds of this view's states: ``vocab_size``, then every training state below it."""
        if self._parts is None:
            st, n, k0 = self._st, self._n, self._state
            sizes = [n, *st.sizes[k0 + 1 :]]
            scores = [st.scores[k][: sizes[j]] for j, k in enumerate(range(k0, len(st.sizes)))]
            rounds = list(st.rounds[k0:])
            if rounds and rounds[0].size_before > n:  # the round that crosses n: its removals of ids < n
                r = rounds[0]
                inc = r.loss_increase[len(r.loss_increase) - (n - r.size_after) :]
                rounds[0] = replace(r, size_before=n, loss_before=self._training_loss(), loss_increase=inc)
            self._parts = (sizes, scores, rounds)
        return self._parts

    def _training_loss(self) -> float | None:
        """The training words' Viterbi loss (nats) in this view, or ``None`` when the words are not known."""
        if self._train_loss is not None:
            return self._train_loss
        if self._train_words is None:
            return None
        counts, _ = self._train_words
        sc = self.scores
        enc = self.encode_word
        best = np.fromiter((sum(sc[i] for i in enc(w)) for w in counts), dtype=np.float64, count=len(counts))
        weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        return float(-(weights * best).sum())  # summed as the trainer sums it

    def truncated(self, loss: float | None = None, tokens: int | None = None) -> UnigramTokenizer:
        """The view as a tokenizer of its own: its states only, so ``max_vocab_size == vocab_size``.

        The trainer returns the view at the size asked for this way; it is
        what :meth:`to_dict` saves (the states above are dropped).  ``loss``
        and ``tokens``: the training words' loss and the training text's tokens
        in this view, when known (the trainer computes them with its lattices;
        else they are computed here, a Viterbi per training word).

        >>> tok = UnigramTokenizer.from_pieces([("▁a", -1.0), ("a", -2.0), ("▁", -2.0)])
        >>> tok.truncated() is tok
        True
        """
        st, n = self._st, self._n
        if n == st.sizes[0]:
            return self
        self._train_loss = loss if loss is not None else self._train_loss
        self._train_tokens = tokens if tokens is not None else self._train_tokens
        sizes, scores, rounds = self._view_parts()
        tok = UnigramTokenizer.from_states(
            st.pieces[:n], list(st.specials), self.unk_token, base=st.base, sizes=sizes, scores=scores,
            rounds=rounds, n=n, name=self.name, pattern_name=self.pattern_name, training=self.training,
            train_words=self._train_words, initial_tokens=self.training_text_tokens(),
            byte_fallback=self.byte_fallback, prepend=self._st.prepend, checked=True,
        )  # fmt: skip
        tok._st.tables[n] = tok._table = self.piece_table()  # the same pieces and scores
        tok._cache = self._cache
        return tok

    def _narrow_to(self, n: int) -> None:
        """Make this tokenizer (a fresh copy) the view at size ``n``: the smallest training state of size ``>= n``.

        What :meth:`~bpe_core.persistence.ViewCache.with_vocab_size` calls (see the
        module docstring for what the view holds); the per-view caches start empty.
        """
        sizes = self._st.sizes
        k = 0
        while k + 1 < len(sizes) and sizes[k + 1] >= n:
            k += 1
        self._n = n
        self._state = k
        self._table: PieceTable | None = None
        self._cache: dict[str, tuple[int, ...]] = {}
        self._parts: tuple[list[int], list[list[float]], list[PruneRound]] | None = None
        self._unknown_text: str | None = None
        self._train_tokens: int | None = None
        self._train_loss: float | None = None  # the training words' loss here, when the trainer computed it

    # -- vocabulary ---------------------------------------------------------------

    @property
    def pieces(self) -> list[str]:
        """The text of every id of the whole training (all states), in id order."""
        return self._st.pieces

    @property
    def vocab(self) -> dict[int, str]:
        """``{id: piece}`` of this view."""
        return dict(enumerate(self._st.pieces[: self._n]))

    @property
    def scores(self) -> list[float]:
        """The score (log-probability) of every id of this view; special tokens 0.0."""
        return self._st.scores[self._state][: self._n]

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token: id}`` in id order, ``<unk>`` included."""
        return dict(self._st.specials)

    @property
    def prepend(self) -> str:
        """SentencePiece-style words: where a ``"▁"`` is put in front of a stretch of text.

        ``"first"`` (:data:`~bpe_core.unigram.encoder.PREPEND_FIRST`, SentencePiece's: in front
        of the text) or ``"always"`` (:data:`~bpe_core.unigram.encoder.PREPEND_ALWAYS`, files
        imported with Hugging Face's ``prepend_scheme="always"``).
        """
        return self._st.prepend

    @property
    def byte_fallback(self) -> bool:
        """Characters outside the vocabulary are encoded as byte pieces ``<0xNN>`` (else as :attr:`unknown_id`)."""
        return self._st.byte_ids is not None

    @property
    def unknown_id(self) -> int:
        """The id of ``<unk>``, which stands for characters the vocabulary cannot spell."""
        return self._st.unk_id

    @property
    def unk_token(self) -> str:
        """The unknown token's text."""
        return self._st.pieces[self._st.unk_id]

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex on the original text (``"sentencepiece"``: :data:`SENTENCEPIECE_PATTERN`)."""
        return SENTENCEPIECE_PATTERN if self._metaspace else resolve_pattern(self.pattern_name)

    @property
    def trace(self) -> list[PruneRound]:
        """The view's pruning rounds in order, from ``vocab_size`` down (:class:`~bpe_core.unigram.trace.PruneRound`).

        The first is cut to its removals below ``vocab_size`` when the view
        lies inside a round (see the module docstring).
        """
        return list(self._view_parts()[2])

    def state_pieces(self, index: int) -> list[tuple[int, str, float]]:
        """``(id, piece, score)`` of the pieces of this view's state ``index`` (0 = this view), specials left out."""
        sizes, scores, _ = self._view_parts()
        size = sizes[index]
        sc = scores[index]
        sp = self._st.special_ids
        return [(i, self._st.pieces[i], sc[i]) for i in range(size) if i not in sp]

    def _check_id(self, token_id: int) -> None:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < self._n:
            raise ValueError(f"unknown token id {token_id!r} (vocab size {self._n})")

    def id_to_token(self, token_id: int) -> str:
        """The piece of an id (``ValueError`` outside this view)."""
        self._check_id(token_id)
        return self._st.pieces[token_id]

    def token_to_id(self, piece: str) -> int | None:
        """The id of a piece in this view, or ``None``."""
        self.piece_table()
        i = self._table.piece_ids.get(piece) if piece not in self._st.specials else self._st.specials[piece]
        if i is None and self._st.byte_ids is not None and piece in _BYTE_VALUE:
            i = self._st.byte_ids[_BYTE_VALUE[piece]]
        return i

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of the token's piece (``▁`` included, as the piece has it); a byte piece's one byte."""
        piece = self.id_to_token(token_id)
        b = self._byte_of(token_id)
        return piece.encode("utf-8") if b is None else bytes([b])

    def _byte_of(self, token_id: int) -> int | None:
        """The byte a byte-fallback piece stands for, else ``None``."""
        ids = self._st.byte_ids
        if ids is None:
            return None
        b = _BYTE_VALUE.get(self._st.pieces[token_id])
        return b if b is not None and ids[b] == token_id else None

    def describe_token(self, token_id: int) -> str:
        """The token's piece, ``▁`` included."""
        return self.id_to_token(token_id)

    def rank_of(self, token_id: int) -> int | None:
        """``id - min_vocab_size`` for a learned piece (it is in every view larger than that); ``None`` otherwise."""
        if isinstance(token_id, int) and self._st.base <= token_id < self._n:
            return token_id - self._st.base
        return None

    def learned_tokens(self) -> list[tuple[int, int]]:
        """``(rank, id)`` of every learned piece of this view (not special, not a required character), by rank."""
        return [(i - self._st.base, i) for i in range(self._st.base, self._n)]

    def merged_parts(self) -> dict[int, tuple[int, int]]:
        """Empty: pieces are kept from a seed vocabulary by pruning, never built from two parts."""
        return {}

    def fast_encoder(self):
        """``None``: Unigram has no faster encoder than :meth:`encode`."""
        return None

    # -- encoding -------------------------------------------------------------------

    def piece_table(self) -> PieceTable:
        """The Viterbi encoder's table of this view's pieces (ids, scores, the unknown piece), built once per size."""
        if self._table is None:
            st = self._st
            table = st.tables.get(self._n)
            if table is None:
                sc = self.scores
                skip = st.special_ids | frozenset(st.byte_ids or ())  # byte pieces are never matched in the text
                ids = {st.pieces[i]: i for i in range(self._n) if i not in skip}
                table = PieceTable(ids, sc, st.unk_id, min(sc))
                if len(st.tables) >= 8:
                    st.tables.pop(next(iter(st.tables)))
                st.tables[self._n] = table
            self._table = table
        return self._table

    def _check_text(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.isascii():
            m = _SURROGATE.search(text)
            if m is not None:
                raise ValueError(
                    f"text contains an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}, which is "
                    "not a character and has no UTF-8 form; remove it or replace it with U+FFFD"
                )

    def word_arcs(self, word: str) -> list[tuple[int, int, int]]:
        """The best segmentation of one lattice word: ``[(start, end, piece id), ...]``, offsets in ``word``."""
        return viterbi(word, self.piece_table())

    def encode_word(self, word: str) -> tuple[int, ...]:
        """The ids of one lattice word (``"▁"``-prefixed for SentencePiece-style words), cached."""
        ids = self._cache.get(word)
        if ids is None:
            ids = self._word_ids(word, viterbi(word, self.piece_table()))
            if len(self._cache) >= _CACHE_WORDS:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def _word_ids(self, word: str, arcs: list[tuple[int, int, int]]) -> tuple[int, ...]:
        """The ids of a word's segmentation; with byte fallback an unknown run as the byte pieces of its UTF-8."""
        byte_ids, unk = self._st.byte_ids, self._st.unk_id
        if byte_ids is None:
            return tuple(i for _s, _e, i in arcs)
        return tuple(x for s, e, i in arcs for x in ((i,) if i != unk else (byte_ids[b] for b in word[s:e].encode())))

    def _encode_words(self, words: list[str]) -> list[int]:
        """The ids of lattice words, each looked up in the cache; the missing ones segmented together.

        Many missing characters go to the compiled encoder
        (:func:`~bpe_core.unigram.encoder.viterbi_many`, the same segmentations),
        when its kernels are built; else each word to :func:`~bpe_core.unigram.encoder.viterbi`.
        """
        cache = self._cache
        missing = [w for w in dict.fromkeys(words) if w not in cache]
        if missing:
            if len(cache) + len(missing) >= _CACHE_WORDS:
                cache.clear()
            table = self.piece_table()
            if sum(map(len, missing)) >= _COMPILED_MIN_CHARS and compiled_encoder_ready():
                plain = self._st.byte_ids is None
                for w, found in zip(missing, viterbi_many(missing, table, ids_only=plain)):
                    cache[w] = found if plain else self._word_ids(w, found)
            else:
                for w in missing:
                    cache[w] = self._word_ids(w, viterbi(w, table))
        out: list[int] = []
        extend = out.extend
        for w in words:
            extend(cache[w])
        return out

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: special tokens, then each word's Viterbi segmentation.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]``.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        self._check_text(text)
        out: list[int] = []
        specials = self._st.specials
        for k, (segment, is_special) in enumerate(split_special(text, tuple(specials))):
            if is_special:
                out.append(specials[segment])
            elif self._metaspace:
                out.extend(self._encode_words(lattice_words(segment, k == 0, self._st.prepend)))
            else:
                out.extend(self._encode_words(list(iter_pretoken_strings(segment, self._rx))))
        return out

    def _segments(self, text: str, first: bool = True):
        """``(start, end, lattice word or None for a special token, original text)`` over ``text``.

        ``len(word) - (end - start)`` is 1 for the word holding the ``"▁"`` put in front of a stretch, else 0.
        ``first``: ``text`` starts the whole text (a SentencePiece-style ``"▁"`` goes in front of it).
        """
        offset = 0
        for k, (segment, is_special) in enumerate(split_special(text, tuple(self._st.specials))):
            if is_special:
                yield offset, offset + len(segment), None, segment
            elif self._metaspace:
                for a, b, w in word_offsets(segment, k == 0 and first, self._st.prepend):
                    yield offset + a, offset + b, w, segment[a:b]
            else:
                pos = offset
                for w in iter_pretoken_strings(segment, self._rx):
                    yield pos, pos + len(w), w, w
                    pos += len(w)
            offset += len(segment)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets into ``text`` itself.

        ``display`` is the piece (``▁`` shown as the piece has it; for the
        unknown token, the characters it covers).  The ``▁`` that encoding puts
        in front of the text stands for no character: a token made of it
        alone is an empty span at its word's start.  Unknown tokens are
        ``is_special`` (as WordPiece's ``[UNK]``); ``rank`` is :meth:`rank_of`.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        self._check_text(text)
        return self._spans(text, True)

    def _spans(self, text: str, first: bool) -> list[TokenSpan]:
        """:meth:`token_spans` of ``text``; ``first``: it starts the whole text (see :meth:`_segments`)."""
        out: list[TokenSpan] = []
        specials = self._st.specials
        for ws, we, word, orig in self._segments(text, first):
            if word is None:
                out.append(TokenSpan(specials[orig], orig.encode("utf-8"), orig, ws, we, True))
            else:
                out.extend(self._word_spans(word, ws, len(word) - (we - ws)))
        return out

    def corpus_pieces(self) -> SplitPieces | None:
        """How corpus figures measure this view (:class:`bpe_core.interface.CorpusPieces`): by its words.

        A unit is cut at the special tokens and into words (SentencePiece-style:
        a space or ``▁`` and what follows, up to the next); each word is
        encoded as on its own, knowing whether it starts the text (where a
        ``"▁"`` goes in front of it): all of them at once by
        :func:`bpe_core.unigram.batch.unigram_piece_tokens`, whose textbook
        twin encodes each with :meth:`token_spans`' machinery.  A word not at the text's start that does
        not start with a space follows a special token, where the words of one
        scheme get a ``"▁"`` and the other's not, whatever the text around.
        ``None`` for a pattern not known to split at spaces.
        """
        if not splits_at_spaces(self.pattern):
            return None
        specials = tuple(self._st.specials)

        def encode(pieces, first):  # all pieces at once, compiled (equal to the textbook encoder, tested)
            return unigram_piece_tokens(self, pieces, first, compiled=compiled_encoder_ready())

        return regex_pieces(self, self.pattern, specials, encode)

    def word_spans(self, word: str, text: str) -> list[TokenSpan]:
        """The tokens of one word of a text, offsets from the word's start (:meth:`token_spans`, one word).

        Args:
            word: the lattice word (:attr:`~bpe_core.unigram.trace.WordLattice.word`).
            text: the characters of the text it stands for
                (:attr:`~bpe_core.unigram.trace.WordLattice.text`): ``word``
                itself, or ``word`` less the ``"▁"`` put in front of a stretch.

        Returns:
            ``list[TokenSpan]``, offsets into ``text``.
        """
        return self._word_spans(word, 0, len(word) - len(text))

    def _word_spans(self, word: str, ws: int, lead: int) -> list[TokenSpan]:
        """The spans of one lattice word starting at ``ws`` in the text; ``lead``: 1 if its ``"▁"`` was put in."""
        out: list[TokenSpan] = []
        pieces = self._st.pieces
        unk = self._st.unk_id
        shift = ws - lead  # original offset of lattice position 0
        for s, e, i in self.word_arcs(word):
            a, b = max(ws, shift + s), shift + e
            if i == unk and self._st.byte_ids is not None:  # byte fallback: each character's bytes
                for q in range(s, e):
                    cb = word[q].encode("utf-8")
                    qa, qb = max(ws, shift + q), shift + q + 1
                    for x in cb:
                        tid = self._st.byte_ids[x]
                        out.append(
                            TokenSpan(
                                tid, bytes([x]), f"<0x{x:02X}>", qa, qb, False, len(cb) > 1, is_byte_fallback=True
                            )
                        )
            elif i == unk:
                out.append(TokenSpan(i, pieces[i].encode("utf-8"), word[s:e], a, b, True))
            else:
                p = pieces[i]
                out.append(TokenSpan(i, p.encode("utf-8"), p, a, b, False, False, self.rank_of(i)))
        return out

    def encode_steps(self, text: str, k: int = 5) -> list[WordLattice]:
        """The lattice of every word of ``text``: arcs with scores, the best path and the ``k`` runners-up.

        Args:
            text: any ``str`` without unpaired surrogates.
            k: runner-up segmentations per word (exact; see :func:`~bpe_core.unigram.trace.k_best`).

        Returns:
            ``list[WordLattice]``, one per word or special token; the ``ids``
            concatenated equal :meth:`encode`.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        self._check_text(text)
        table = self.piece_table()
        out: list[WordLattice] = []
        for ws, we, word, orig in self._segments(text):
            if word is None:
                i = self._st.specials[orig]
                out.append(WordLattice(orig, orig, ws, we, True, (), None, (), (i,)))
            else:
                out.append(word_lattice(self, orig, word, ws, we, table, k))
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ids: pieces joined; SentencePiece-style, ``▁`` -> space and the ``▁`` put in front dropped.

        SentencePiece-style, the unknown token is written ``⁇`` (see the module
        docstring), and when the first id is a piece starting with ``▁``, that
        ``▁`` -- the one encoding puts in front of the text -- is dropped; so
        ``decode(encode(t)) == t`` for every ``t`` the vocabulary can spell
        (no unknown character, no literal ``▁``), special tokens anywhere.

        Raises:
            ValueError: an id is not in this view.
        """
        pieces = self._st.pieces
        ids = list(ids)
        for i in ids:
            self._check_id(i)
        if not self._metaspace:
            if self._st.byte_ids is not None and any(self._byte_of(i) is not None for i in ids):
                return self._decode_bytes(ids)
            return "".join(pieces[i] for i in ids)
        text = self._decode_bytes(ids) if self._st.byte_ids is not None else self._decode_pieces(ids)
        first = ids[0] if ids else None
        if (
            first is not None
            and first not in self._st.special_ids
            and self._byte_of(first) is None
            and pieces[first].startswith(METASPACE)
        ):
            text = text[1:]  # the "▁" encoding put in front of the text
        return text

    def _decode_pieces(self, ids: list[int]) -> str:
        """SentencePiece-style pieces joined, ``▁`` as a space, the unknown token as its surface."""
        pieces, unk = self._st.pieces, self._st.unk_id
        return "".join(self._unknown_surface() if i == unk else pieces[i].replace(METASPACE, " ") for i in ids)

    def _decode_bytes(self, ids: list[int]) -> str:
        """Decode with byte pieces: each run of them is UTF-8 (an invalid sequence -> U+FFFD), the rest as usual."""
        pieces = self._st.pieces
        out: list[str] = []
        for is_byte, group in itertools.groupby(ids, key=lambda i: self._byte_of(i) is not None):
            g = list(group)
            if is_byte:
                out.append(bytes(self._byte_of(i) for i in g).decode("utf-8", errors="replace"))
            elif not self._metaspace:
                out.append("".join(pieces[i] for i in g))
            else:
                out.append(self._decode_pieces(g))
        return "".join(out)

    def _unknown_surface(self) -> str:
        """The first of :data:`UNKNOWN_SURFACES` that no piece of this view holds (else the unknown token's text)."""
        if self._unknown_text is None:
            pieces = [p for p in self.piece_table().piece_ids]
            self._unknown_text = next((c for c in UNKNOWN_SURFACES if not any(c in p for p in pieces)), self.unk_token)
        return self._unknown_text

    def training_text_tokens(self) -> int | None:
        """Tokens of the training text in this view (exact, from the word counts), or ``None`` if not trained here."""
        if self._train_words is None:
            return None
        if self._train_tokens is None and self._n == self._st.sizes[self._state]:
            k = self._state  # a training state: the trainer counted its tokens (with the same Viterbi ties)
            known = self._st.rounds[k - 1].tokens_after if k else self._st.tokens0
            self._train_tokens = known or None
        if self._train_tokens is None:
            counts, n_special = self._train_words
            enc = self.encode_word
            self._train_tokens = n_special + sum(c * len(enc(w)) for w, c in counts.items())
        return self._train_tokens

    def replay(self, text: str) -> UnigramReplay:
        """Training replayed on ``text``: per state its loss, removals, kept pieces and segmentation."""
        self._check_text(text)
        return UnigramReplay(self, text)

    # -- persistence --------------------------------------------------------------

    def to_dict(self) -> dict:
        """The view as JSON-ready data (``"format": "bpe-playground/unigram"``).

        Keeps this view's states (``vocab_size`` and the training states below
        it) and its rounds (:attr:`trace`), so the loaded tokenizer's slider
        covers ``min_vocab_size .. vocab_size``.  Scores are written as JSON
        numbers that read back bit-identical.
        """
        st = self._st
        n = self._n
        sizes, scores, view_rounds = self._view_parts()
        rounds = [
            [r.round, r.size_before, r.size_after, r.loss_before, r.loss_after, list(r.loss_increase), r.tokens_after]
            for r in view_rounds
        ]
        return {
            "format": FORMAT,
            "version": 1,
            "name": self.name,
            "pattern_name": self.pattern_name,
            "vocab": st.pieces[:n],
            "special_tokens": list(st.specials),
            "unk_token": self.unk_token,
            "min_vocab_size": st.base,
            "state_sizes": sizes,
            "state_scores": scores,
            "trace": rounds,
            "training": asdict(self.training) if self.training is not None else None,
            "byte_fallback": self.byte_fallback,
            "prepend": self._st.prepend,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> UnigramTokenizer:
        """Rebuild a tokenizer from :meth:`to_dict` output.

        Raises:
            ValueError: not this format, or inconsistent (the message names the field).
        """
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ValueError(f'not a BPE Playground Unigram file (missing "format": "{FORMAT}")')
        try:
            for key in ("vocab", "special_tokens", "unk_token", "min_vocab_size", "state_sizes", "state_scores",
                        "trace"):  # fmt: skip
                if key not in data:
                    raise ValueError(f'the field "{key}" is missing')
            json_version(data)
            pieces = _strings(data["vocab"], '"vocab"', "a list of piece strings")
            specials = _strings(data["special_tokens"], '"special_tokens"', "a list of piece strings")
            unk = json_field(data["unk_token"], str, '"unk_token"', "a string")
            sizes, scores = _states_from_json(data["state_sizes"], data["state_scores"], len(pieces))
            base = json_int(data["min_vocab_size"], '"min_vocab_size"', 1, sizes[-1])
            rounds = _rounds_from_json(data["trace"], sizes)
            pattern_name = json_optional_str(data.get("pattern_name"), '"pattern_name"', SENTENCEPIECE)
            name = json_optional_str(data.get("name"), '"name"', "Unigram")
            byte_fallback = json_bool(data.get("byte_fallback", False), '"byte_fallback"')
            prepend = json_field(data.get("prepend", PREPEND_ALWAYS), str, '"prepend"', "a string")  # files from
            if prepend not in (PREPEND_FIRST, PREPEND_ALWAYS):  # before "prepend": the scheme of then
                raise ValueError(f'"prepend" must be "{PREPEND_FIRST}" or "{PREPEND_ALWAYS}", got {prepend!r}')
            training = None
            if data.get("training") is not None:
                training = training_from_json(data["training"], cls=UnigramTrainingInfo)
            if pattern_name != SENTENCEPIECE and pattern_name not in PATTERNS:
                resolve_pattern(pattern_name)  # a custom regex must compile
            return cls.from_states(
                pieces, specials, unk, base=base, sizes=sizes, scores=scores, rounds=rounds, n=sizes[0], name=name,
                pattern_name=pattern_name, training=training, byte_fallback=byte_fallback, prepend=prepend,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"tokenizer file is malformed: {exc}") from None

    def __repr__(self) -> str:
        return f"UnigramTokenizer(name={self.name!r}, vocab_size={self._n}, pattern={self.pattern_name!r})"


def _strings(raw: object, field: str, what: str) -> list[str]:
    """A JSON list of strings, each checked (``ValueError`` naming the entry)."""
    return [json_field(x, str, f"{field}[{i}]", "a string") for i, x in enumerate(json_field(raw, list, field, what))]


def _states_from_json(raw_sizes: object, raw_scores: object, n_pieces: int) -> tuple[list[int], list[list[float]]]:
    """``"state_sizes"`` and ``"state_scores"`` of :meth:`UnigramTokenizer.from_dict`, every number checked.

    The sizes must fall strictly from at most ``n_pieces``; state ``k`` has one finite score per id below its size.
    """
    sizes = [
        json_int(x, f'"state_sizes"[{k}]', 1, n_pieces)
        for k, x in enumerate(json_field(raw_sizes, list, '"state_sizes"', "a list of sizes"))
    ]
    if not sizes:
        raise ValueError('"state_sizes" is empty: a tokenizer has at least one state')
    for k in range(1, len(sizes)):
        if sizes[k] >= sizes[k - 1]:
            raise ValueError(f'"state_sizes"[{k}] is {sizes[k]}, not below the state before it ({sizes[k - 1]})')
    rows = json_field(raw_scores, list, '"state_scores"', "a list of score lists")
    if len(rows) != len(sizes):
        raise ValueError(f'"state_scores" has {len(rows)} states, "state_sizes" {len(sizes)}')
    scores = []
    for k, row in enumerate(rows):
        json_field(row, list, f'"state_scores"[{k}]', "a list of scores")
        if len(row) != sizes[k]:
            raise ValueError(f'"state_scores"[{k}] has {len(row)} scores for a state of {sizes[k]} ids')
        scores.append([json_float(x, f'"state_scores"[{k}][{i}]') for i, x in enumerate(row)])
    return sizes, scores


def _rounds_from_json(raw: object, sizes: Sequence[int]) -> list[PruneRound]:
    """``"trace"`` of :meth:`UnigramTokenizer.from_dict`: one round per state after the first, every field checked.

    Row ``k``, ``[round, size before, size after, loss before or null, loss after, [loss increases],
    tokens after or null]`` (files from before the tokens were counted end at the increases), took state
    ``k`` (``sizes[k]`` ids) to state ``k + 1``, removing one id per loss increase; its round number follows
    the previous row's.
    """
    rows = json_field(raw, list, '"trace"', "a list of rounds")
    if len(rows) != len(sizes) - 1:
        raise ValueError(f'"trace" has {len(rows)} rounds for {len(sizes)} states (one round between two states)')
    rounds = []
    for k, row in enumerate(rows):
        where = f'"trace"[{k}]'
        json_field(row, list, where, "a list of 7 fields")
        if len(row) not in (6, 7):  # 6: files from before the tokens were counted
            raise ValueError(f"{where} must hold 7 fields, got {len(row)}")
        number = json_int(row[0], f"{where}[0]", 1)
        if k and number != rounds[-1].round + 1:
            raise ValueError(f"{where}[0] is round {number}, after round {rounds[-1].round}")
        before, after = json_int(row[1], f"{where}[1]"), json_int(row[2], f"{where}[2]")
        if (before, after) != (sizes[k], sizes[k + 1]):
            raise ValueError(f"{where} goes from {before} to {after} ids; the states say {sizes[k]} to {sizes[k + 1]}")
        loss_before = None if row[3] is None else json_float(row[3], f"{where}[3]")
        increases = json_field(row[5], list, f"{where}[5]", "a list of loss increases")
        if len(increases) != before - after:
            raise ValueError(f"{where}[5] lists {len(increases)} removals; the round removed {before - after}")
        tokens = None if len(row) == 6 or row[6] is None else json_int(row[6], f"{where}[6]")
        rounds.append(PruneRound(
            number, before, after, loss_before, json_float(row[4], f"{where}[4]"),
            tuple(json_float(x, f"{where}[5][{i}]") for i, x in enumerate(increases)), tokens,
        ))  # fmt: skip
    return rounds
