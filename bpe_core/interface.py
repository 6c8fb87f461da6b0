"""The declared interfaces every tokenizer of the app answers, and the one training spec.

Pages and ``ui/`` use only what is declared here: :class:`Tokenizer` for
anything that turns text into ids (trained BPE, WordPiece, Unigram, the
production encodings, imported files) and :class:`TrainedTokenizer` for the
ones trained in this project (a vocabulary-size slider, a training trace, a
replay of training).  :class:`TrainingSpec` is the one value that says how to
train; :data:`ALGORITHMS` maps an algorithm's name to its trainer and class,
so a new algorithm is one :func:`register_algorithm` call.

Data flows one way: text -> trainer (:meth:`TrainingSpec.train`) ->
tokenizer -> spans / metrics / trace -> ``ui`` -> page.

>>> from bpe_core.interface import TrainingSpec, Tokenizer, TrainedTokenizer
>>> spec = TrainingSpec(algorithm="bpe", vocab_size=260, special_tokens=())
>>> tok = spec.train("low lower lowest")
>>> isinstance(tok, Tokenizer) and isinstance(tok, TrainedTokenizer)
True
>>> tok.decode(tok.encode("lowest")), tok.vocab_size
('lowest', 260)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from .spans import TokenSpan

ProgressCallback = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: a trainer's report; raise :class:`TrainingCancelled` in it to stop."""


class TrainingCancelled(Exception):
    """Raised by a progress callback to stop training; every trainer lets it propagate and returns nothing."""


class VocabSizeTooSmall(ValueError):
    """The vocabulary size asked for is below what the algorithm needs on this text before learning anything.

    Every trainer raises it (a ``ValueError``, with a message saying why) before training, so a caller can
    offer the smallest size that works.

    Attributes:
        minimum: the smallest vocabulary size (tokens) that trains on this text with these settings.

    >>> VocabSizeTooSmall("needs at least 300", 300).minimum
    300
    """

    def __init__(self, message: str, minimum: int) -> None:
        super().__init__(message)
        self.minimum = minimum


@dataclass(slots=True)
class TrainingInfo:
    """Facts about a training run, for the app's messages and the benchmarks (every trainer fills one in).

    Attributes:
        requested_vocab_size: the vocabulary size asked for.
        pretokens: pre-token occurrences counted (special tokens excluded).
        unique_pretokens: distinct pre-tokens.
        special_occurrences: special-token occurrences removed from the text.
        initial_tokens: tokens of the training text before any merge (its UTF-8
            byte count outside special tokens, plus one per special token).
        count_seconds: wall time spent counting pre-tokens (seconds).
        merge_seconds: wall time spent in the merge loop (seconds).
        stop_reason: ``None`` when the requested size was reached, else why not.
    """

    requested_vocab_size: int
    pretokens: int = 0
    unique_pretokens: int = 0
    special_occurrences: int = 0
    initial_tokens: int = 0
    count_seconds: float = 0.0
    merge_seconds: float = 0.0
    stop_reason: str | None = None


class EncodedPiece(Protocol):
    """One pre-token's (word's) record in :meth:`Tokenizer.encode_steps`, whatever the algorithm.

    Each algorithm has its own class with more to say (:class:`bpe_core.steps.PieceSteps`: the merge
    or greedy steps, for byte-level BPE, WordPiece and the production encodings;
    :class:`bpe_core.unigram.WordLattice`: Unigram's lattice and its best paths); every one of them
    has these.
    """

    @property
    def text(self) -> str:  # pragma: no cover - protocol
        """The pre-token's (word's) text."""
        ...

    @property
    def start(self) -> int:  # pragma: no cover - protocol
        """Its first character's offset in the encoded text."""
        ...

    @property
    def end(self) -> int:  # pragma: no cover - protocol
        """The offset after its last character."""
        ...

    @property
    def is_special(self) -> bool:  # pragma: no cover - protocol
        """It is a special token (one id, no steps)."""
        ...

    @property
    def ids(self) -> tuple[int, ...]:  # pragma: no cover - protocol
        """Its final token ids."""
        ...


class TrainingStep(Protocol):
    """One entry of :attr:`TrainedTokenizer.trace`, whatever the algorithm.

    Each algorithm has its own class (:class:`bpe_core.bpe.MergeStep`,
    :class:`bpe_core.wordpiece.WordPieceMerge`, :class:`bpe_core.unigram.PruneRound`);
    every one of them has this.
    """

    @property
    def tokens_after(self) -> int | None:  # pragma: no cover - protocol
        """Tokens of the training text after this step, or ``None`` when not recorded."""
        ...


class Replay(Protocol):
    """Training replayed on its own text, step by step (:meth:`TrainedTokenizer.replay`).

    Each algorithm has its own class, read by that algorithm's Merges history and live
    tables only (:class:`bpe_core.bpe.TrainingReplay`, :class:`bpe_core.wordpiece.WordPieceReplay`,
    :class:`bpe_core.unigram.UnigramReplay`); nothing is common to all of them.
    """


@runtime_checkable
class Tokenizer(Protocol):
    """What every tokenizer the app shows answers.

    Attributes:
        name: display name (``"GPT-2 (r50k_base)"``, ``"BPE"``, an imported file's name).
        vocab_size: token ids this tokenizer can emit (special tokens included).
        special_tokens: ``{special token string: id}``, in id order.
        unknown_id: the id standing for text the vocabulary cannot spell
            (WordPiece's ``[UNK]``), or ``None`` when every text can be spelt
            (byte-level tokenizers).
        is_byte_level: every id stands for bytes and the ids of a text hold
            exactly its UTF-8 (true for byte-level BPE and tiktoken encodings);
            ``False`` for WordPiece and Unigram, whose tokens are strings.
        pattern: the pre-tokenization regex source.

    The algorithm's name for a badge (``"Byte-level BPE"``, ``"WordPiece"``, ...)
    comes from :func:`algorithm_label`.
    """

    name: str

    vocab_size: int

    special_tokens: dict[str, int]

    unknown_id: int | None

    is_byte_level: bool

    pattern: str

    def encode(self, text: str) -> list[int]:  # pragma: no cover - protocol
        """Token ids of ``text`` (``TypeError`` for a non-``str``, ``ValueError`` for an unpaired surrogate)."""
        ...

    def decode(self, ids: Sequence[int]) -> str:  # pragma: no cover - protocol
        """Text of a list of token ids (``ValueError`` for an id outside the vocabulary)."""
        ...

    def token_spans(self, text: str) -> list[TokenSpan]:  # pragma: no cover - protocol
        """The tokens of ``text`` with character offsets (see :class:`~bpe_core.spans.TokenSpan`)."""
        ...

    def token_bytes(self, token_id: int) -> bytes:  # pragma: no cover - protocol
        """The bytes a token stands for (WordPiece: the UTF-8 of its vocabulary string)."""
        ...

    def describe_token(self, token_id: int) -> str:  # pragma: no cover - protocol
        """The printable form of one token: its text, ``<0xNN>`` for bytes that are not whole characters."""
        ...

    def rank_of(self, token_id: int) -> int | None:  # pragma: no cover - protocol
        """0-based merge rank that created a token, or ``None`` (single bytes, alphabet, specials)."""
        ...

    def encode_steps(self, text: str) -> Sequence[EncodedPiece]:  # pragma: no cover - protocol
        """How ``text`` is encoded, one pre-token (word) at a time (see :class:`EncodedPiece`)."""
        ...

    def fast_encoder(self) -> Callable[[str], list[int]] | None:  # pragma: no cover - protocol
        """An encoder giving exactly :meth:`encode`'s ids, faster on long texts, or ``None`` when there is none."""
        ...


@runtime_checkable
class TrainedTokenizer(Tokenizer, Protocol):
    """What a tokenizer trained in this project answers on top of :class:`Tokenizer`.

    Attributes:
        algorithm: the key of :data:`ALGORITHMS` that trained it (``"bpe"``, ``"wordpiece"``, ``"unigram"``).
        min_vocab_size: the smallest size :meth:`with_vocab_size` accepts (no merges).
        max_vocab_size: the size of the full training (what :meth:`with_vocab_size` can reach).
        trace: one entry per training step, in order (see :class:`TrainingStep`).
        training: facts about the training run (:class:`TrainingInfo`), or ``None`` when unknown.
    """

    algorithm: str

    min_vocab_size: int

    max_vocab_size: int

    @property
    def trace(self) -> Sequence[TrainingStep]:  # pragma: no cover - protocol
        """One entry per training step, in order."""
        ...

    @property
    def training(self) -> TrainingInfo | None:  # pragma: no cover - protocol
        """Facts about the training run, or ``None`` when unknown (a tokenizer loaded without them)."""
        ...

    def with_vocab_size(self, n: int) -> TrainedTokenizer:  # pragma: no cover - protocol
        """The tokenizer at vocabulary size ``n`` (a view: ids are the same as here)."""
        ...

    def learned_tokens(self) -> list[tuple[int, int]]:  # pragma: no cover - protocol
        """``(step rank, token id)`` of every token training added, in training order."""
        ...

    def merged_parts(self) -> dict[int, tuple[int, int]]:  # pragma: no cover - protocol
        """``{token id: (left id, right id)}`` of every token of this view a merge made from two others.

        Empty for an algorithm whose tokens are not built from parts (Unigram keeps pieces of a seed
        vocabulary); the token genealogy (:func:`bpe_core.analysis.insights.merge_tree`) reads it.
        """
        ...

    def training_text_tokens(self) -> int | None:  # pragma: no cover - protocol
        """Tokens the training text takes at this size, when known without encoding it; else ``None``."""
        ...

    def replay(self, text: str) -> Replay:  # pragma: no cover - protocol
        """A replay of training on ``text`` (its own training text): the state at each step, for the Merges page."""
        ...

    def to_dict(self) -> dict:  # pragma: no cover - protocol
        """The tokenizer as this project's JSON form (what :meth:`save` writes)."""
        ...

    def save(self, path: str | os.PathLike[str]) -> None:  # pragma: no cover - protocol
        """Write :meth:`to_dict` as JSON to ``path`` (``OSError`` when it cannot be written)."""
        ...


@runtime_checkable
class CorpusPieces(Protocol):
    """How a tokenizer's figures over a corpus come from counted distinct pieces (:mod:`bpe_core.analysis.corpus`).

    A tokenizer offers one through a ``corpus_pieces()`` method (read with
    :func:`corpus_pieces`); :mod:`bpe_core.pieces` holds the contract and the
    implementations the package's tokenizers use.

    Attributes:
        key: a hashable value naming the split: tokenizers whose ``split_units``
            cut every unit alike have equal keys and share one count of pieces.
    """

    key: Hashable

    def cut_after(self) -> Any:  # pragma: no cover - protocol
        """``uint8[0x110000]``: the non-space characters a unit may end after (1), or ``None``: every one."""
        ...

    def split_units(self, units: Sequence[str], first: Sequence[bool]) -> tuple[list[str], Any]:  # pragma: no cover
        """Each unit cut into pieces no token crosses: ``(pieces flat, int64 count per unit)``."""
        ...

    def encode(self, pieces: Sequence[str], first: Sequence[bool]) -> Any:  # pragma: no cover - protocol
        """The tokens of each distinct piece as in the text (a :class:`bpe_core.pieces.PieceTokens`)."""
        ...


def corpus_pieces(tokenizer: Any) -> CorpusPieces | None:
    """The :class:`CorpusPieces` a tokenizer declares (its ``corpus_pieces()``), or ``None`` when it declares none.

    A tokenizer without one is measured over a corpus by encoding the whole
    text (:func:`bpe_core.analysis.metrics.measure`), which is exact and slower.
    """
    method = getattr(tokenizer, "corpus_pieces", None)
    return method() if callable(method) else None


# ---------------------------------------------------------------------------
# algorithms and the training spec


@dataclass(frozen=True)
class WordCounts:
    """A text counted for a count table by its algorithm (what :data:`CountWords` returns).

    Attributes:
        counts: each pre-token (word), as ``str`` or UTF-8 ``bytes``, to its occurrences.
        special_occurrences: special-token occurrences cut out of the text.
        pattern: the pattern the table records (the name the trainer knows it by).
        sentence_ends: for an algorithm whose trainer needs the text's sentences (stretches
            between special tokens; Unigram's seed), each sentence's last word and the next
            sentence's first UTF-8 byte (``-1`` for the last); empty otherwise.
        first_byte: the first sentence's first UTF-8 byte (``-1``: none, or not recorded).
    """

    counts: Mapping[str, int] | Mapping[bytes, int]
    special_occurrences: int
    pattern: str
    sentence_ends: tuple[tuple[str, int], ...] = ()
    first_byte: int = -1


CountWords = Callable[[str, str, tuple[str, ...], bool, ProgressCallback | None], WordCounts]
"""``count_words(text, pattern, special_tokens, lowercase, progress) -> WordCounts``: an algorithm's
count of a text for a count table (:func:`bpe_core.counting.table.count_text_table`)."""

TrainFromCounts = Callable[..., TrainedTokenizer]
"""``train_from_counts(word_counts, vocab_size, special_tokens, pattern, *, lowercase, special_occurrences,
sentence_ends, progress) -> TrainedTokenizer``: an algorithm's training on a count table's counts
(``{UTF-8 bytes: count}``, :func:`bpe_core.counting.table.train_from_table`), identical to training on the
counted text."""


@dataclass(frozen=True)
class Algorithm:
    """One trainable algorithm, as the sidebar, the CLI, count tables and the training cache see it.

    Everything the engine does differently per algorithm hangs off its registration
    (:func:`register_algorithm`, called in the algorithm package's ``__init__``): no
    other module keeps a table keyed by an algorithm's name.

    Attributes:
        name: the key (``"bpe"``), used in links, the CLI's ``--algorithm`` and cache keys.
        label: what the sidebar shows (``"Byte-level BPE"``).
        train: ``train(text, spec, progress=None, num_workers=None) -> TrainedTokenizer``;
            ``text`` is a ``str``, an ``os.PathLike`` or an iterable of ``str`` where
            the trainer streams.
        from_dict: rebuilds a tokenizer from this project's JSON form.
        default_pattern: the pre-tokenization pattern name a new spec gets.
        fixed_pattern: the algorithm always pre-tokenizes this way (the sidebar hides the choice).
        pattern_phrase: how it pre-tokenizes when the pattern is fixed, in running text after
            "pre-tokenizes" (``"BERT-style"``).
        default_special_tokens: the special tokens a new spec gets.
        required_special_tokens: special tokens training adds when they are missing (Unigram's
            ``<unk>``); count tables add them too, so that a table trains as the text does.
        uses_lowercase: the algorithm offers lower-casing.
        reads_files: ``train`` takes an ``os.PathLike`` and reads (or streams) the
            file itself; otherwise callers pass the file's text.
        count_words: how a text is counted for a count table (:data:`CountWords`), or ``None``
            when the algorithm has no count tables.
        train_from_counts: training on a count table (:data:`TrainFromCounts`), or ``None``.
        counts_in_text_order: a count table keeps its words in order of first appearance (the
            trainer's ties depend on it), else in ascending byte order.
        streams_counts: its pre-tokens are counted from files streamed in chunks, with worker
            processes or a Dask cluster (:func:`bpe_core.counting.stream.count_files`); otherwise the
            command line reads a file into memory and counts its words in this process.
        hf_model: its model type in a Hugging Face ``tokenizer.json`` (``"BPE"``, ``"WordPiece"``,
            ``"Unigram"``): the format's own name, by which :mod:`bpe_core.formats.huggingface` writes it;
            ``None`` when it has no such form.
    """

    name: str
    label: str
    train: Callable[..., TrainedTokenizer]
    from_dict: Callable[[dict], TrainedTokenizer]
    default_pattern: str = "gpt2"
    fixed_pattern: bool = False
    pattern_phrase: str = ""
    default_special_tokens: tuple[str, ...] = ()
    required_special_tokens: tuple[str, ...] = ()
    uses_lowercase: bool = False
    reads_files: bool = False
    count_words: CountWords | None = None
    train_from_counts: TrainFromCounts | None = None
    counts_in_text_order: bool = False
    streams_counts: bool = False
    hf_model: str | None = None


ALGORITHMS: dict[str, Algorithm] = {}
"""Algorithm name -> :class:`Algorithm`, in the order they were registered (the sidebar's order).

The built-in algorithms register when their package is imported; importing
``bpe_core`` (which any ``bpe_core.*`` import does first) imports them all."""


def register_algorithm(algorithm: Algorithm) -> Algorithm:
    """Add an algorithm to :data:`ALGORITHMS` (the sidebar's choices and the CLI's ``--algorithm`` come from it).

    Raises:
        ValueError: the name is taken.
    """
    if algorithm.name in ALGORITHMS:
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered")
    ALGORITHMS[algorithm.name] = algorithm
    return algorithm


def get_algorithm(name: str) -> Algorithm:
    """The registered :class:`Algorithm` called ``name``.

    Raises:
        ValueError: no such algorithm (the message lists the known ones).
    """
    try:
        return ALGORITHMS[name]
    except KeyError:
        known = ", ".join(ALGORITHMS) or "none"
        raise ValueError(f"unknown algorithm {name!r}; known: {known}") from None


@dataclass(frozen=True)
class TrainingSpec:
    """How to train a tokenizer: one frozen, hashable value.

    The sidebar builds it, the training cache keys on it (with the text's
    digest), the command line parses into it and links serialise it.

    Attributes:
        algorithm: a key of :data:`ALGORITHMS`.
        vocab_size: the vocabulary size to train to (tokens, special tokens included).
        pattern: pre-tokenization pattern name (``"gpt2"``, ``"bert"``, ...) or regex source.
        special_tokens: special-token strings, in id order.
        lowercase: lower-case the text before pre-tokenization (algorithms that offer it).
        byte_fallback: encode characters outside the vocabulary as byte pieces ``<0xNN>``
            instead of the unknown token (Unigram; the byte-level BPE needs none, and
            the other trainers ignore it).

    >>> TrainingSpec("wordpiece", 70, special_tokens=("[UNK]",)).key()
    ('wordpiece', 70, 'gpt2', ('[UNK]',), False, False)
    """

    algorithm: str = "bpe"
    vocab_size: int = 1000
    pattern: str = "gpt2"
    special_tokens: tuple[str, ...] = field(default=())
    lowercase: bool = False
    byte_fallback: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.special_tokens, tuple):
            object.__setattr__(self, "special_tokens", tuple(self.special_tokens))

    def key(self) -> tuple:
        """The spec as a plain tuple (cache keys, equality across processes)."""
        return (
            self.algorithm, self.vocab_size, self.pattern, self.special_tokens, bool(self.lowercase),
            bool(self.byte_fallback),
        )  # fmt: skip

    def replace(self, **changes: Any) -> TrainingSpec:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def train(
        self,
        text: str | os.PathLike[str] | Iterable[str],
        *,
        progress: ProgressCallback | None = None,
        num_workers: int | None = 1,
    ) -> TrainedTokenizer:
        """Train this spec's algorithm on ``text``.

        Args:
            text: the training text (``str``), a file (``os.PathLike``) or an
                iterable of ``str``, as the algorithm's trainer accepts.
            progress: ``progress(phase, done, total)``; raising
                :class:`TrainingCancelled` in it stops training.
            num_workers: counting processes where the trainer has them
                (default 1: in this process).

        Returns:
            The tokenizer at its full trained size.

        Raises:
            ValueError, TypeError: from the trainer, with a precise message.
            TrainingCancelled: raised by ``progress``.
        """
        return get_algorithm(self.algorithm).train(text, self, progress=progress, num_workers=num_workers)


def algorithm_label(tokenizer: Any) -> str:
    """The algorithm badge of any tokenizer: ``"Byte-level BPE"``, ``"BPE"``, ``"WordPiece"`` or ``"Unigram"``.

    A tokenizer says it with an ``algorithm_label`` attribute (the production
    classes do); a trained one, through the label of the algorithm that
    trained it (:data:`ALGORITHMS`, its ``algorithm`` attribute).  Pages draw
    the badge from this, never from a tokenizer's class.

    Returns:
        The label, or ``""`` when the tokenizer says neither.

    >>> from bpe_core.interface import TrainingSpec, algorithm_label
    >>> algorithm_label(TrainingSpec("wordpiece", 40, special_tokens=("[UNK]",)).train("hug pug hugs"))
    'WordPiece'
    """
    label = getattr(tokenizer, "algorithm_label", None)
    if isinstance(label, str) and label:
        return label
    algorithm = ALGORITHMS.get(getattr(tokenizer, "algorithm", None) or "")
    return algorithm.label if algorithm is not None else ""


def algorithm_names() -> list[str]:
    """The registered algorithm names, in registration order (the sidebar's and the CLI's choices)."""
    return list(ALGORITHMS)
