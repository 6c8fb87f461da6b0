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
into words (SentencePiece-style by default, see :mod:`bpe_core.unigram.encoder`)
and takes each word's Viterbi segmentation with Hugging Face's ties.
Decoding is Hugging Face's ``decoders.Metaspace``: every ``▁`` becomes a space,
except that the first token's ``▁`` are dropped (the mark that encoding put in
front of the text); so ``decode(encode(t)) == t`` whenever ``t`` does not start
with a space, holds no ``▁``, no special token and no character outside the
vocabulary.  The unknown token decodes as ``⁇`` (U+2047, SentencePiece's
unknown surface, without the spaces SentencePiece puts around it; U+FFFD when
a piece holds ``⁇``), not as its text ``<unk>`` as Hugging Face writes it:
``<unk>`` is a special token, which would cut the word in two on re-encoding
and put a ``▁`` in front of the rest.  (Decoding cannot give back the characters an
unknown token stood for, so around unknown tokens ``encode(decode(ids))`` may
take other pieces than ``ids``.)  With any
other pattern pieces are plain substrings, decoding joins them, and the
unknown token decodes as its text (split out again as a special token; a
``⁇`` could join two pre-tokens into one).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import regex

from ..pretokenize import PATTERNS, compile_pattern, iter_pretoken_strings, resolve_pattern, split_special
from ..spans import TokenSpan
from .encoder import (
    METASPACE,
    SENTENCEPIECE,
    SENTENCEPIECE_PATTERN,
    SENTENCEPIECE_RX,
    PieceTable,
    metaspace_word,
    viterbi,
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

UNKNOWN_SURFACES = ("\u2047", "\ufffd")
"""What ``decode`` writes for the unknown token with SentencePiece-style words: the first no piece holds."""


@dataclass
class UnigramTrainingInfo:
    """Facts about one Unigram training run.

    Attributes:
        requested_vocab_size: the ``vocab_size`` asked for.
        pretokens: word occurrences in the training text (special tokens not counted).
        unique_pretokens: distinct words.
        special_occurrences: special-token occurrences cut out of the text.
        characters: required characters (distinct characters of the words).
        seed_size: pieces of the initial vocabulary (required characters included,
            special tokens not).
        rounds: pruning rounds run (down to the required characters).
        initial_tokens: tokens of the training text under the seed state (special tokens count one each).
        count_seconds, seed_seconds, em_seconds, prune_seconds: wall time of
            counting words, building the seed vocabulary, EM re-estimation and
            pruning (Viterbi, alternatives, choice), in seconds.
        stop_reason: why the trained size differs from the requested one, or ``""``.
    """

    requested_vocab_size: int
    pretokens: int = 0
    unique_pretokens: int = 0
    special_occurrences: int = 0
    characters: int = 0
    seed_size: int = 0
    rounds: int = 0
    initial_tokens: int = 0
    count_seconds: float = 0.0
    seed_seconds: float = 0.0
    em_seconds: float = 0.0
    prune_seconds: float = 0.0
    stop_reason: str = ""

    @property
    def merge_seconds(self) -> float:
        """Seconds of training after counting (seed, EM, pruning): :class:`~bpe_core.interface.TrainingInfo`'s name."""
        return self.seed_seconds + self.em_seconds + self.prune_seconds


class _States:
    """What all views of one tokenizer share: the pieces, specials, states and trace."""

    __slots__ = (
        "base", "byte_ids", "pieces", "rounds", "scores", "sizes", "special_ids", "specials", "tables", "tokens0",
        "unk_id",
    )  # fmt: skip

    def __init__(self, pieces, specials, unk_id, base, sizes, scores, rounds, tokens0=None, byte_ids=None):
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


class UnigramTokenizer:
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
        self._n = n
        self.name = name
        self.pattern_name = pattern_name
        self._metaspace = pattern_name == SENTENCEPIECE
        self._rx = SENTENCEPIECE_RX if self._metaspace else compile_pattern(resolve_pattern(pattern_name))
        self.training = training
        self._train_words = train_words
        self._train_tokens: int | None = None
        k = 0
        while k + 1 < len(states.sizes) and states.sizes[k + 1] >= n:
            k += 1
        self._state = k
        self._table: PieceTable | None = None
        self._cache: dict[str, tuple[int, ...]] = {}
        self._parts: tuple[list[int], list[list[float]], list[PruneRound]] | None = None
        self._unknown_text: str | None = None

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

        Raises:
            ValueError: inconsistent parts (the message says which).
        """
        pieces = list(pieces)
        index = {}
        for i, p in enumerate(pieces):
            if not isinstance(p, str) or p == "":
                raise ValueError(f"piece #{i} must be a non-empty str, got {p!r}")
            if p in index:
                raise ValueError(f"piece {p!r} is given twice (ids {index[p]} and {i})")
            index[p] = i
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
        byte_ids = None
        if byte_fallback:
            byte_ids = [index.get(BYTE_PIECES[b], -1) for b in range(256)]
            bad = next((b for b, i in enumerate(byte_ids) if not 0 <= i < base), None)
            if bad is not None:
                raise ValueError(
                    f"byte fallback needs the piece {BYTE_PIECES[bad]!r} among the first {base} ids (the smallest "
                    "state); it is missing or later"
                )
        st = _States(
            pieces, dict(sorted(specials.items(), key=lambda kv: kv[1])), specials[unk_token], base, sizes,
            [[float(x) for x in sc[:sz]] for sc, sz in zip(scores, sizes)], list(rounds), initial_tokens, byte_ids,
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
            pattern_name=pattern, byte_fallback=byte_fallback,
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
        if self._train_words is None:
            return None
        counts, _ = self._train_words
        sc = self.scores
        enc = self.encode_word
        return -sum(c * sum(sc[i] for i in enc(w)) for w, c in counts.items())

    def truncated(self) -> UnigramTokenizer:
        """The view as a tokenizer of its own: its states only, so ``max_vocab_size == vocab_size``.

        The trainer returns the view at the size asked for this way; it is
        what :meth:`to_dict` saves (the states above are dropped).

        >>> tok = UnigramTokenizer.from_pieces([("▁a", -1.0), ("a", -2.0), ("▁", -2.0)])
        >>> tok.truncated() is tok
        True
        """
        st, n = self._st, self._n
        if n == st.sizes[0]:
            return self
        sizes, scores, rounds = self._view_parts()
        tok = UnigramTokenizer.from_states(
            st.pieces[:n], list(st.specials), self.unk_token, base=st.base, sizes=sizes, scores=scores,
            rounds=rounds, n=n, name=self.name, pattern_name=self.pattern_name, training=self.training,
            train_words=self._train_words, initial_tokens=self.training_text_tokens(),
            byte_fallback=self.byte_fallback,
        )  # fmt: skip
        tok._st.tables[n] = tok._table = self._table_()  # the same pieces and scores
        tok._cache = self._cache
        return tok

    def with_vocab_size(self, n: int) -> UnigramTokenizer:
        """The smallest training state of size ``>= n``, cut short to ids ``0 .. n - 1`` (see the module docstring).

        Raises:
            TypeError: ``n`` is not an ``int``.
            ValueError: ``n`` is outside ``min_vocab_size .. max_vocab_size``.
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"vocab_size must be an int, got {type(n).__name__}")
        if not self.min_vocab_size <= n <= self.max_vocab_size:
            raise ValueError(
                f"vocab_size {n} is outside {self.min_vocab_size}..{self.max_vocab_size} (special tokens, <unk> "
                "and the required characters up to the trained size)"
            )
        if n == self._n:
            return self
        return UnigramTokenizer(
            self._st, n, name=self.name, pattern_name=self.pattern_name, training=self.training,
            train_words=self._train_words,
        )  # fmt: skip

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
        self._table_()
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

    def _table_(self) -> PieceTable:
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

    def _words(self, segment: str) -> list[str]:
        """The words of an ordinary segment (no special token), as the pattern cuts them (original text)."""
        if self._metaspace:
            return SENTENCEPIECE_RX.findall(segment)
        return iter_pretoken_strings(segment, self._rx)

    def _lattice_word(self, w: str) -> str:
        return metaspace_word(w) if self._metaspace else w

    def _word_arcs(self, word: str) -> list[tuple[int, int, int]]:
        return viterbi(word, self._table_())

    def encode_word(self, word: str) -> tuple[int, ...]:
        """The ids of one lattice word (``"▁"``-prefixed for SentencePiece-style words), cached."""
        ids = self._cache.get(word)
        if ids is None:
            arcs = viterbi(word, self._table_())
            byte_ids, unk = self._st.byte_ids, self._st.unk_id
            if byte_ids is None:
                ids = tuple(i for _s, _e, i in arcs)
            else:  # byte fallback: an unknown run as the byte pieces of its UTF-8 (Hugging Face's and SentencePiece's)
                ids = tuple(
                    x for s, e, i in arcs for x in ((i,) if i != unk else (byte_ids[b] for b in word[s:e].encode()))
                )
            if len(self._cache) >= 1 << 18:
                self._cache.clear()
            self._cache[word] = ids
        return ids

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
        encode_word = self.encode_word
        lattice_word = self._lattice_word
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
                continue
            for w in self._words(segment):
                out.extend(encode_word(lattice_word(w)))
        return out

    def _segments(self, text: str):
        """``(start, end, lattice word or None for a special token, original text)`` over ``text``."""
        offset = 0
        for segment, is_special in split_special(text, tuple(self._st.specials)):
            if is_special:
                yield offset, offset + len(segment), None, segment
            elif self._metaspace:
                for m in SENTENCEPIECE_RX.finditer(segment):
                    yield offset + m.start(), offset + m.end(), metaspace_word(m.group()), m.group()
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
        out: list[TokenSpan] = []
        pieces = self._st.pieces
        specials = self._st.specials
        unk = self._st.unk_id
        for ws, we, word, orig in self._segments(text):
            if word is None:
                out.append(TokenSpan(specials[orig], orig.encode("utf-8"), orig, ws, we, True))
                continue
            shift = ws - (len(word) - len(orig))  # original offset of lattice position 0 (ws - 1 when "▁" was put in)
            for s, e, i in self._word_arcs(word):
                a, b = max(ws, shift + s), shift + e
                if i == unk and self._st.byte_ids is not None:  # byte fallback: each character's bytes
                    for q in range(s, e):
                        cb = word[q].encode("utf-8")
                        qa, qb = max(ws, shift + q), shift + q + 1
                        for x in cb:
                            tid = self._st.byte_ids[x]
                            out.append(TokenSpan(tid, bytes([x]), f"<0x{x:02X}>", qa, qb, False, len(cb) > 1))
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
        table = self._table_()
        out: list[WordLattice] = []
        for ws, we, word, orig in self._segments(text):
            if word is None:
                i = self._st.specials[orig]
                out.append(WordLattice(orig, orig, ws, we, True, (), None, (), (i,)))
            else:
                out.append(word_lattice(self, orig, word, ws, we, table, k))
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ids: pieces joined; SentencePiece-style, ``▁`` -> space and the first token's ``▁`` dropped.

        SentencePiece-style, the unknown token is written ``⁇`` (see the module
        docstring), and the first token's ``▁`` is kept (as a space) when it is
        a word of its own -- the text began with a space, which encoding does
        not mark again -- where Hugging Face's ``Metaspace`` decoder drops it; so
        ``encode(decode(ids)) == ids`` for the ids of a text without unknown characters.

        Raises:
            ValueError: an id is not in this view.
        """
        pieces = self._st.pieces
        ids = list(ids)
        for i in ids:
            self._check_id(i)
        if self._st.byte_ids is not None and any(self._byte_of(i) is not None for i in ids):
            return self._decode_bytes(ids)
        if not self._metaspace:
            return "".join(pieces[i] for i in ids)
        unk = self._st.unk_id
        specials = self._st.special_ids
        parts = [self._unknown_surface() if i == unk else pieces[i].replace(METASPACE, " ") for i in ids]
        if parts and ids[0] not in specials:
            # the first word's "▁" is the mark encoding put in front of the text, unless that word is "▁" alone
            # (the text began with a space): then the next token starts a new word, is special, or there is none
            nxt = ids[1] if len(ids) > 1 else None
            alone = pieces[ids[0]] == METASPACE and (
                nxt is None or (nxt in specials and nxt != unk) or pieces[nxt].startswith(METASPACE)
            )
            if not alone:
                parts[0] = parts[0].removeprefix(" ")
        return "".join(parts)

    def _decode_bytes(self, ids: list[int]) -> str:
        """Decode with byte pieces: each run of them is UTF-8 (an invalid sequence -> U+FFFD), the rest as usual."""
        pieces, unk, specials = self._st.pieces, self._st.unk_id, self._st.special_ids
        out: list[str] = []
        for is_byte, group in itertools.groupby(ids, key=lambda i: self._byte_of(i) is not None):
            g = list(group)
            if is_byte:
                out.append(bytes(self._byte_of(i) for i in g).decode("utf-8", errors="replace"))
            elif not self._metaspace:
                out.append("".join(pieces[i] for i in g))
            else:
                out.extend(self._unknown_surface() if i == unk else pieces[i].replace(METASPACE, " ") for i in g)
        if self._metaspace and ids[0] not in specials and self._byte_of(ids[0]) is None:
            # the first word's "▁" is the mark encoding put in front of the text, unless it is "▁" alone
            nxt = ids[1] if len(ids) > 1 else None
            alone = pieces[ids[0]] == METASPACE and (
                nxt is None
                or (nxt in specials and nxt != unk)
                or (self._byte_of(nxt) is None and pieces[nxt].startswith(METASPACE))
            )
            if not alone:
                out[0] = out[0].removeprefix(" ")
        return "".join(out)

    def _unknown_surface(self) -> str:
        """The first of :data:`UNKNOWN_SURFACES` that no piece of this view holds (else the unknown token's text)."""
        if self._unknown_text is None:
            pieces = [p for p in self._table_().piece_ids]
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
            pieces = [str(p) for p in data["vocab"]]
            specials = [str(s) for s in data["special_tokens"]]
            unk = str(data["unk_token"])
            base = int(data["min_vocab_size"])
            sizes = [int(x) for x in data["state_sizes"]]
            scores = [[float(x) for x in sc] for sc in data["state_scores"]]
            rounds = [
                PruneRound(
                    int(r[0]),
                    int(r[1]),
                    int(r[2]),
                    None if r[3] is None else float(r[3]),
                    float(r[4]),
                    tuple(float(x) for x in r[5]),
                    int(r[6]) if len(r) > 6 and r[6] is not None else None,
                )
                for r in data["trace"]
            ]
            pattern_name = str(data.get("pattern_name") or SENTENCEPIECE)
            name = str(data.get("name") or "Unigram")
            training = UnigramTrainingInfo(**data["training"]) if data.get("training") is not None else None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"tokenizer file is malformed: {type(exc).__name__}: {exc}") from None
        for r in rounds:
            if len(r.loss_increase) != r.size_before - r.size_after:
                raise ValueError(f"tokenizer file is malformed: round {r.round} lists the wrong number of removals")
        if pattern_name != SENTENCEPIECE and pattern_name not in PATTERNS:
            resolve_pattern(pattern_name)  # a custom regex must compile
        return cls.from_states(
            pieces, specials, unk, base=base, sizes=sizes, scores=scores, rounds=rounds, n=sizes[0], name=name,
            pattern_name=pattern_name, training=training, byte_fallback=bool(data.get("byte_fallback", False)),
        )  # fmt: skip

    def save(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` as JSON to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> UnigramTokenizer:
        """Read a tokenizer written by :meth:`save` (``ValueError`` for a file that is not one)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a JSON tokenizer file: {exc}") from None
        return cls.from_dict(data)

    def __repr__(self) -> str:
        return f"UnigramTokenizer(name={self.name!r}, vocab_size={self._n}, pattern={self.pattern_name!r})"
