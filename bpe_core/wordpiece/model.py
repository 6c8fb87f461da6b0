"""WordPiece, the model: an ordered vocabulary, special tokens, views and persistence.

WordPiece as the Hugging Face NLP course, chapter 6, describes it (Google
never published BERT's trainer).  The vocabulary is the special tokens, then
the alphabet (first characters, and ``##``-prefixed inner characters) sorted
by code point, then one token per merge; because training only appends, the
tokenizer of any smaller vocabulary is a prefix (:meth:`WordPieceTokenizer.with_vocab_size`).

The parts live next to this module: :mod:`bpe_core.wordpiece.words` (lower-casing
and BERT-style words), :mod:`bpe_core.wordpiece.trainer` (the merge loop),
:mod:`bpe_core.wordpiece.encoder` (greedy longest-match-first) and
:mod:`bpe_core.wordpiece.trace` (training replayed, encoding step by step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

from ..interface import TrainingInfo
from ..persistence import (
    JsonFile,
    ViewCache,
    check_trace_counts,
    json_field,
    json_int,
    json_optional_str,
    json_version,
    training_from_json,
)
from ..pretokenize import BERT_PATTERN, validate_special_tokens
from .encoder import WordPieceEncoder
from .trace import WordPieceReplay, wordpiece_encode_steps

__all__ = [
    "DEFAULT_MAX_INPUT_CHARS_PER_WORD",
    "DEFAULT_SPECIAL_TOKENS",
    "WordPieceMerge",
    "WordPieceTokenizer",
    "check_options",
]

DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
"""BERT's special tokens, in BERT's order (the course uses the same list)."""

DEFAULT_MAX_INPUT_CHARS_PER_WORD = 100
"""Words longer than this many characters encode as the unknown token (BERT's and Hugging Face's default)."""


@dataclass(frozen=True, slots=True)
class WordPieceMerge:
    """One merge of the WordPiece training trace.

    Attributes:
        rank: 0-based merge rank (order of learning).
        left_id, right_id: ids of the merged pair; ``right`` is always a
            continuation (``##``) token.
        new_id: id of the resulting token.
        left, right: the two tokens' vocabulary strings (``"Hu"``, ``"##g"``).
        merged: the resulting token's string (``"Hug"``): ``left`` plus ``right``
            without its continuing-subword prefix.
        pair_freq: adjacent occurrences of the pair over the training words,
            weighted by word counts, when it was chosen.
        left_freq, right_freq: occurrences of each part in the segmentation at
            that moment (weighted the same way), the score's denominators.
        replaced: occurrences actually replaced (left to right, non-overlapping;
            less than ``pair_freq`` only when ``left == right`` overlaps itself).
        tokens_after: tokens in the training segmentation after this merge
            (special-token occurrences count one each).  This is the trainer's
            segmentation, not greedy encoding, which may differ.
        added: ``False`` when ``merged`` was already in the vocabulary (reached
            earlier by another pair): the merge still applies but adds no id.
    """

    rank: int
    left_id: int
    right_id: int
    new_id: int
    left: str
    right: str
    merged: str
    pair_freq: int
    left_freq: int
    right_freq: int
    replaced: int
    tokens_after: int
    added: bool = True

    @property
    def score(self) -> float:
        """``pair_freq / (left_freq * right_freq)`` as a float (for display; training compares exactly)."""
        return self.pair_freq / (self.left_freq * self.right_freq)

    @property
    def score_exact(self) -> Fraction:
        """The score as an exact :class:`fractions.Fraction`."""
        return Fraction(self.pair_freq, self.left_freq * self.right_freq)

    @property
    def count(self) -> int:
        """Alias of ``pair_freq``, the name :class:`bpe_core.bpe.model.MergeStep` uses."""
        return self.pair_freq


# ---------------------------------------------------------------------------
# training


def check_options(
    vocab_size: int,
    specials: tuple[str, ...],
    unk_token: str,
    prefix: str,
    max_input_chars_per_word: int,
) -> None:
    """Check a WordPiece tokenizer's options (the trainer passes ``vocab_size`` too; ``0`` skips nothing).

    Raises:
        TypeError: an option has the wrong type.
        ValueError: ``unk_token`` is not a special token; an empty or spaced
            prefix; ``max_input_chars_per_word < 1``.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if not isinstance(unk_token, str):
        raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
    if unk_token not in specials:
        raise ValueError(
            f"the unknown token {unk_token!r} must be one of the special tokens {list(specials)}: WordPiece "
            "encodes a word it cannot match as that token"
        )
    if not isinstance(prefix, str):
        raise TypeError(f"continuing_subword_prefix must be a str, got {type(prefix).__name__}")
    if prefix == "" or any(c.isspace() for c in prefix):
        raise ValueError(
            f"continuing_subword_prefix {prefix!r} must be a non-empty string without whitespace (BERT uses '##')"
        )
    if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int):
        raise TypeError(f"max_input_chars_per_word must be an int, got {type(max_input_chars_per_word).__name__}")
    if max_input_chars_per_word < 1:
        raise ValueError(f"max_input_chars_per_word must be at least 1, got {max_input_chars_per_word}")


# ---------------------------------------------------------------------------
# the tokenizer


class WordPieceTokenizer(WordPieceEncoder, ViewCache, JsonFile):
    """A WordPiece tokenizer: an ordered vocabulary, special tokens and the encoding rules.

    Build it from any ordered vocabulary (for example BERT's ``vocab.txt``
    lines), or get one from :func:`train_wordpiece`.  Encoding splits out the
    special tokens (longest match first), lower-cases if asked, pre-tokenizes
    BERT-style and encodes each word greedily, longest match first; it gives
    exactly Hugging Face ``tokenizers``' ids for a ``WordPiece`` model with the
    same vocabulary and a ``BertPreTokenizer`` (and a ``Lowercase`` normalizer).

    Args:
        vocab: the token strings in id order (id = position); continuation
            pieces carry the prefix (``"##ing"``).  Strings must be non-empty and
            distinct, except that a piece may repeat a special token's string
            (the first entry is the special token; specials are matched in the
            raw text, pieces inside words).
        special_tokens: strings of ``vocab`` that are special tokens: matched in
            the raw text before anything else, never split.
        unk_token: the token for unencodable words; one of ``special_tokens``.
        continuing_subword_prefix: the prefix of non-first pieces.
        lowercase: lower-case text (per character) before pre-tokenization.
        max_input_chars_per_word: longer words become ``unk_token`` (characters).
        name: display name.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: an empty or repeated vocabulary string; a special token not in
            ``vocab``; ``unk_token`` not a special token; a bad prefix or maximum.

    The smallest vocabulary size a view can have (:attr:`min_vocab_size`) is
    the length of the leading run of special tokens and one-character pieces
    (``"a"``, ``"##a"``), and at least one more than the largest special id:
    for a trained tokenizer, the special tokens plus the alphabet.
    """

    def __init__(
        self,
        vocab: Sequence[str],
        special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        lowercase: bool = False,
        max_input_chars_per_word: int = DEFAULT_MAX_INPUT_CHARS_PER_WORD,
        name: str = "WordPiece",
    ) -> None:
        if isinstance(vocab, str | bytes) or not isinstance(vocab, Sequence):
            raise TypeError(f"vocab must be a list of token strings in id order, got {type(vocab).__name__}")
        tokens = list(vocab)
        for i, s in enumerate(tokens):
            if not isinstance(s, str):
                raise TypeError(f"vocab entry {i} must be a str, got {type(s).__name__}")
        specials = validate_special_tokens(special_tokens)
        check_options(0, specials, unk_token, continuing_subword_prefix, max_input_chars_per_word)
        self._setup(
            tokens, specials, unk_token, continuing_subword_prefix, bool(lowercase), max_input_chars_per_word,
            str(name), None, None, None,
        )  # fmt: skip

    @classmethod
    def from_parts(
        cls,
        *,
        tokens: list[str],
        special_tokens: Sequence[str],
        unk_token: str,
        prefix: str,
        lowercase: bool,
        max_input_chars_per_word: int,
        name: str,
        base_size: int | None,
        trace: list[WordPieceMerge] | None,
        training: TrainingInfo | None,
        train_words: tuple[dict[str, int], int] | None = None,
    ) -> WordPieceTokenizer:
        """Build from checked parts, as the trainer and :meth:`from_dict` do.

        Args:
            tokens: vocabulary strings in id order.
            special_tokens: as the constructor's (already checked).
            unk_token: as the constructor's.
            prefix: the continuing-subword prefix.
            lowercase: as the constructor's.
            max_input_chars_per_word: as the constructor's.
            name: display name.
            base_size: :attr:`min_vocab_size`, or ``None`` to infer it.
            trace: the trainer's merge records, or ``None``.
            training: the trainer's :class:`~bpe_core.interface.TrainingInfo`, or ``None``.
            train_words: ``(word counts, special occurrences)`` of the training
                text, which makes :meth:`training_text_tokens` answer; not saved.
        """
        self = cls.__new__(cls)
        self._setup(
            tokens, tuple(special_tokens), unk_token, prefix, lowercase, max_input_chars_per_word, name,
            base_size, trace, training,
        )  # fmt: skip
        self._train_words = train_words
        return self

    def _setup(
        self,
        tokens: list[str],
        specials: tuple[str, ...],
        unk_token: str,
        prefix: str,
        lowercase: bool,
        max_chars: int,
        name: str,
        base_size: int | None,
        trace: list[WordPieceMerge] | None,
        training: TrainingInfo | None,
    ) -> None:
        special_ids, piece_ids = _index_tokens(tokens, specials)
        base_size = _base_size(tokens, specials, special_ids, prefix, base_size)
        self.name = name
        self._tokens = tokens
        self._specials = {s: special_ids[s] for s in specials}
        self._special_ids = frozenset(self._specials.values())
        self._piece_ids = piece_ids
        self._unk_token = unk_token
        self._unknown_id = special_ids[unk_token]
        self._prefix = prefix
        self._lowercase = lowercase
        self._max_chars = max_chars
        self._max_piece = max((len(s) for s in piece_ids), default=1)
        self._base = base_size
        self._trace_full = trace
        self.training = training
        # merge rank that created each id (the first merge that produced its string)
        if trace is not None:
            self._rank_of_id = {st.new_id: st.rank for st in trace if st.added}
        else:
            self._rank_of_id = {i: i - base_size for i in range(base_size, len(tokens)) if i not in self._special_ids}
        self._n = len(tokens)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._views: dict[int, WordPieceTokenizer] = {}
        self._train_words: tuple[dict[str, int], int] | None = None  # from_parts(train_words=...)
        self._train_tokens: int | None = None

    # -- views and tables ------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Ids this view can emit (special tokens, alphabet and merged tokens)."""
        return self._n

    @property
    def max_vocab_size(self) -> int:
        """Size of the full vocabulary (what :meth:`with_vocab_size` can reach)."""
        return len(self._tokens)

    @property
    def min_vocab_size(self) -> int:
        """The smallest view: the special tokens plus the alphabet (see the class docstring)."""
        return self._base

    def _narrow_to(self, n: int) -> None:
        """Make this fresh copy the view at size ``n`` (see :meth:`~bpe_core.persistence.ViewCache.with_vocab_size`)."""
        self._n = n
        self._cache = {}
        self._train_tokens = None

    @property
    def vocab(self) -> dict[int, str]:
        """``{id: token string}`` of this view (continuation pieces with their prefix)."""
        return dict(enumerate(self._tokens[: self._n]))

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token string: id}``."""
        return dict(self._specials)

    @property
    def unk_token(self) -> str:
        """The unknown token's string (``"[UNK]"``)."""
        return self._unk_token

    @property
    def continuing_subword_prefix(self) -> str:
        """The prefix of non-first pieces of a word (``"##"``)."""
        return self._prefix

    @property
    def lowercase(self) -> bool:
        """Whether text is lower-cased before pre-tokenization."""
        return self._lowercase

    @property
    def max_input_chars_per_word(self) -> int:
        """Words longer than this many characters encode as the unknown token."""
        return self._max_chars

    @property
    def pattern(self) -> str:
        """The regex source of the (fixed, BERT-style) pre-tokenization."""
        return BERT_PATTERN

    @property
    def pattern_name(self) -> str:
        """Always ``"bert"``: WordPiece pre-tokenizes BERT-style."""
        return "bert"

    @property
    def alphabet_size(self) -> int:
        """Non-special tokens of the smallest view (the initial alphabet for a trained tokenizer)."""
        return self._base - sum(1 for i in self._special_ids if i < self._base)

    @property
    def trace(self) -> list[WordPieceMerge]:
        """The merges that built this view, in rank order (empty when not trained here)."""
        if self._trace_full is None:
            return []
        if self._n == len(self._tokens):
            return list(self._trace_full)
        if self._n <= self._base:
            return []
        return self._trace_full[: self._rank_of_id[self._n - 1] + 1]

    @property
    def merges(self) -> list[tuple[str, str]]:
        """``(left, right)`` token strings of this view's merges, in rank order."""
        return [(s.left, s.right) for s in self.trace]

    def id_to_token(self, token_id: int) -> str:
        """The vocabulary string of an id.

        Raises:
            ValueError: the id is not in this view.
        """
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < self._n:
            raise ValueError(f"unknown token id {token_id!r} (vocab size {self._n})")
        return self._tokens[token_id]

    def token_to_id(self, token: str) -> int | None:
        """The id of a vocabulary string in this view, or ``None``."""
        i = self._specials.get(token)
        if i is None:
            i = self._piece_ids.get(token)
        return i if i is not None and i < self._n else None

    def token_bytes(self, token_id: int) -> bytes:
        """UTF-8 of a token's vocabulary string (``b"##ing"``).

        Raises:
            ValueError: the id is not in this view.
        """
        return self.id_to_token(token_id).encode("utf-8")

    def describe_token(self, token_id: int) -> str:
        """Readable form of a token: its vocabulary string."""
        return self.id_to_token(token_id)

    # -- the declared interface (bpe_core.interface) ---------------------------

    algorithm = "wordpiece"
    """The key of :data:`bpe_core.interface.ALGORITHMS` that trains this kind of tokenizer."""

    is_byte_level = False
    """Tokens are vocabulary strings (``##`` continuations), not bytes."""

    @property
    def unknown_id(self) -> int:
        """The id of the unknown token (``[UNK]``), which stands for a word the vocabulary cannot spell."""
        return self._unknown_id

    def fast_encoder(self):
        """``None``: WordPiece has no faster encoder than :meth:`encode`."""
        return None

    def learned_tokens(self) -> list[tuple[int, int]]:
        """``(merge rank, new id)`` of every merge of this view that added a token, in rank order."""
        return [(m.rank, m.new_id) for m in self.trace if m.added]

    def merged_parts(self) -> dict[int, tuple[int, int]]:
        """``{new id: (left id, right id)}`` of every merge of this view that added a token (the genealogy's edges)."""
        return {m.new_id: (m.left_id, m.right_id) for m in self.trace if m.added}

    def replay(self, text: str):
        """A :class:`bpe_core.wordpiece.trace.WordPieceReplay` of training on ``text`` (its own training text)."""
        return WordPieceReplay.from_text(self, text)

    def rank_of(self, token_id: int) -> int | None:
        """Merge rank that created ``token_id`` (0-based), or ``None`` for specials and the alphabet."""
        r = self._rank_of_id.get(token_id)
        return r if r is not None and token_id < self._n else None

    # -- training facts and step-by-step views --------------------------------

    def training_text_tokens(self) -> int | None:
        """Tokens the training text takes under this view, or ``None`` when not trained in this process.

        Equal to ``len(self.encode(training_text))``, but computed from the
        training word counts (each distinct word encoded once) and remembered
        per view, so a vocabulary-size slider over a large text stays quick.
        Not kept by :meth:`save`.

        Returns:
            ``int`` tokens (special-token occurrences count one each), or ``None``.
        """
        if self._train_words is None:
            return None
        if self._train_tokens is None:
            counts, n_special = self._train_words
            encode_word = self.encode_word
            self._train_tokens = n_special + sum(c * len(encode_word(w)) for w, c in counts.items())
        return self._train_tokens

    def encode_steps(self, text: str) -> list:
        """Greedy longest-match-first encoding of ``text``, one line per decision (for the Encode page).

        See :func:`bpe_core.wordpiece.trace.wordpiece_encode_steps`, which this
        calls; the final ids equal :meth:`encode`.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[bpe_core.steps.PieceSteps]``, one per word or special token.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        return wordpiece_encode_steps(self, text)

    # -- persistence -----------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-ready ``dict`` of this view (``"format": "bpe-playground/wordpiece"``).

        Keys: ``vocab`` (token strings in id order), ``special_tokens`` (in
        the order given at training), ``unk_token``, ``continuing_subword_prefix``,
        ``lowercase``, ``max_input_chars_per_word``, ``min_vocab_size``, ``name``,
        ``trace`` (rows ``[rank, left_id, right_id, new_id, pair_freq, left_freq,
        right_freq, replaced, tokens_after, added]`` or ``None``), ``training``.
        """
        return {
            "format": "bpe-playground/wordpiece",
            "version": 1,
            "name": self.name,
            "pattern_name": "bert",
            "vocab": self._tokens[: self._n],
            "special_tokens": list(self._specials),
            "unk_token": self._unk_token,
            "continuing_subword_prefix": self._prefix,
            "lowercase": self._lowercase,
            "max_input_chars_per_word": self._max_chars,
            "min_vocab_size": self._base,
            "trace": [_merge_to_json(s) for s in self.trace] if self._trace_full is not None else None,
            "training": asdict(self.training) if self.training is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> WordPieceTokenizer:
        """Rebuild a tokenizer from :meth:`to_dict` output.

        Raises:
            ValueError: the data is not this format or is inconsistent; the
                message names the field at fault.
        """
        if not isinstance(data, Mapping) or data.get("format") != "bpe-playground/wordpiece":
            raise ValueError('not a BPE Playground WordPiece file (missing "format": "bpe-playground/wordpiece")')
        try:
            for key in ("vocab", "special_tokens", "unk_token", "continuing_subword_prefix", "lowercase",
                        "max_input_chars_per_word", "min_vocab_size"):  # fmt: skip
                if key not in data:
                    raise ValueError(f'the field "{key}" is missing')
            tokens = [
                json_field(t, str, f'"vocab"[{i}]', "a token string")
                for i, t in enumerate(json_field(data["vocab"], list, '"vocab"', "a list of token strings"))
            ]
            specials = tuple(
                json_field(t, str, f'"special_tokens"[{i}]', "a token string")
                for i, t in enumerate(json_field(data["special_tokens"], list, '"special_tokens"', "a list of strings"))
            )
            unk = json_field(data["unk_token"], str, '"unk_token"', "a string")
            prefix = json_field(data["continuing_subword_prefix"], str, '"continuing_subword_prefix"', "a string")
            lowercase = json_field(data["lowercase"], bool, '"lowercase"', "true or false")
            max_chars = json_int(data["max_input_chars_per_word"], '"max_input_chars_per_word"', 1)
            base = json_int(data["min_vocab_size"], '"min_vocab_size"', 0, len(tokens))
            name = json_optional_str(data.get("name"), '"name"', "WordPiece")
            json_version(data)
            if data.get("pattern_name") not in (None, "bert"):
                raise ValueError(f'"pattern_name" must be "bert" (WordPiece splits as BERT does), got '
                                 f'{data["pattern_name"]!r}')  # fmt: skip
            specials = validate_special_tokens(specials)
            check_options(0, specials, unk, prefix, max_chars)
            training = None
            if data.get("training") is not None:
                training = training_from_json(data["training"])
            trace = None
            if data.get("trace") is not None:
                rows = json_field(data["trace"], list, '"trace"', "a list of rows or null")
                trace = [_merge_from_json(row, tokens, prefix, f'"trace"[{k}]') for k, row in enumerate(rows)]
                initial = training.initial_tokens if training is not None and training.initial_tokens else None
                check_trace_counts([(m.rank, m.pair_freq, m.replaced, m.tokens_after) for m in trace], initial,
                                   '"trace"')  # fmt: skip
            return cls.from_parts(
                tokens=tokens, special_tokens=specials, unk_token=unk, prefix=prefix, lowercase=lowercase,
                max_input_chars_per_word=max_chars, name=name, base_size=base, trace=trace, training=training,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(
                f"tokenizer file is malformed: {exc}; the file is damaged or was edited by hand: "
                "save or export the tokenizer again"
            ) from None

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(name={self.name!r}, vocab_size={self.vocab_size}, lowercase={self._lowercase})"


def _merge_to_json(s: WordPieceMerge) -> list:
    return [
        s.rank, s.left_id, s.right_id, s.new_id, s.pair_freq, s.left_freq, s.right_freq, s.replaced,
        s.tokens_after, s.added,
    ]  # fmt: skip


def _merge_from_json(row: object, tokens: Sequence[str], prefix: str, field: str) -> WordPieceMerge:
    json_field(row, list, field, "a list of 10 values")
    if len(row) != 10:
        raise ValueError(f"{field} needs 10 fields, got {len(row)}")
    n = len(tokens) - 1
    rank, left, right, new = (json_int(x, field, 0, n if k else None) for k, x in enumerate(row[:4]))
    pair_freq, left_freq, right_freq, replaced, tokens_after = (json_int(x, field) for x in row[4:9])
    if not left_freq or not right_freq:
        raise ValueError(f"{field}: the parts' counts must be positive")
    if pair_freq > min(left_freq, right_freq):
        raise ValueError(f"{field}: the pair is counted {pair_freq:,} times, more than a part ({left_freq:,}, "
                         f"{right_freq:,})")  # fmt: skip
    if max(left_freq, right_freq) > tokens_after + replaced:
        raise ValueError(f"{field}: a part is counted more often than the {tokens_after + replaced:,} tokens before "
                         "the merge")  # fmt: skip
    json_field(row[9], bool, field, "a row ending in true or false")
    merged = tokens[left] + tokens[right][len(prefix) :]
    if tokens[new] != merged:
        raise ValueError(f"merge #{rank}: {tokens[left]!r} + {tokens[right]!r} does not give {tokens[new]!r}")
    return WordPieceMerge(
        rank, left, right, new, tokens[left], tokens[right], merged, pair_freq, left_freq, right_freq, replaced,
        tokens_after, bool(row[9]),
    )  # fmt: skip


def _index_tokens(tokens: Sequence[str], specials: tuple[str, ...]) -> tuple[dict[str, int], dict[str, int]]:
    """``(special token -> id, piece -> id)`` of a vocabulary in id order.

    A special token's string takes its first id; a later entry with the same
    string is an ordinary piece.

    Raises:
        ValueError: an empty entry, a piece twice, a special token missing.
    """
    special_set = set(specials)
    special_ids: dict[str, int] = {}
    piece_ids: dict[str, int] = {}
    for i, s in enumerate(tokens):
        if s == "":
            raise ValueError(f"vocab entry {i} is empty; every token needs at least one character")
        if s in special_set and s not in special_ids:
            special_ids[s] = i
        else:  # a later entry with a special token's string is an ordinary piece
            if s in piece_ids:
                raise ValueError(f"token {s!r} appears twice in vocab (ids {piece_ids[s]} and {i})")
            piece_ids[s] = i
    for s in specials:
        if s not in special_ids:
            raise ValueError(f"special token {s!r} is not in vocab")
    return special_ids, piece_ids


def _base_size(
    tokens: Sequence[str], specials: tuple[str, ...], special_ids: dict[str, int], prefix: str, base_size: int | None
) -> int:
    """The initial vocabulary's size: ``base_size`` checked, or (``None``) the leading run of specials and characters.

    Raises:
        ValueError: ``base_size`` is below the last special token's id + 1 or above the vocabulary's size.
    """
    special_set = set(specials)
    plen = len(prefix)
    run = 0
    for s in tokens:
        if s in special_set or len(s) == 1 or (len(s) == plen + 1 and s.startswith(prefix)):
            run += 1
        else:
            break
    floor = max(special_ids.values(), default=-1) + 1
    if base_size is None:
        return max(run, floor)
    if not floor <= base_size <= len(tokens):
        raise ValueError(f"min_vocab_size {base_size} must be in {floor}..{len(tokens)}")
    return base_size
