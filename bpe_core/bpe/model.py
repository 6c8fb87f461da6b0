"""Byte-level BPE, the model: vocabulary, merges, views and persistence.

The vocabulary of a byte-level BPE tokenizer (GPT-2, Radford et al., 2019;
tiktoken): ids 0-255 are the single bytes (id == byte value), then the special
tokens in the order given, then one id per merge in merge order.  Because the
merges are ordered, the tokenizer of any smaller vocabulary is a prefix of the
merge list, so :meth:`BPETokenizer.with_vocab_size` is an O(1) view.

The parts live next to this module: :mod:`bpe_core.bpe.trainer` learns the
merges, :mod:`bpe_core.bpe.encoder` applies them (and chooses tiktoken's fast
path), :mod:`bpe_core.bpe.trace` replays training and encoding step by step.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from ..interface import TrainingInfo
from ..persistence import JsonFile, ViewCache
from ..pretokenize import PATTERNS, compile_pattern, resolve_pattern, validate_special_tokens
from ..spans import display_bytes
from .encoder import BPEEncoder
from .trace import TrainingReplay, bpe_encode_steps

__all__ = ["BPETokenizer", "MergeStep"]


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge of the training trace.

    Attributes:
        rank: 0-based merge rank (order of learning).
        left_id, right_id: ids of the merged pair.
        new_id: id of the token the merge creates.
        left, right: bytes of the two parts.
        count: the pair's count when it was chosen: adjacent occurrences over all
            pre-tokens, weighted by pre-token frequency (overlapping occurrences,
            as the two ``aa`` pairs in ``aaa``, both count).
        replaced: occurrences actually replaced by the merge (non-overlapping,
            left to right); ``count - replaced`` is the overlap.
        tokens_after: number of tokens the training text has after this merge
            (special tokens count one each).
    """

    rank: int
    left_id: int
    right_id: int
    new_id: int
    left: bytes
    right: bytes
    count: int
    replaced: int
    tokens_after: int

    @property
    def merged(self) -> bytes:
        """Bytes of the new token (``left + right``)."""
        return self.left + self.right


# ---------------------------------------------------------------------------
# the tokenizer


class BPETokenizer(BPEEncoder, ViewCache, JsonFile):
    """A byte-level BPE tokenizer: any vocabulary, merge list, specials and split pattern.

    Build it from a vocabulary and an ordered merge list, as GPT-2 publishes
    them, or get one from :func:`train_bpe`.  Encoding gives exactly tiktoken's
    ids when given an encoding's ranks and pattern (see
    :func:`bpe_core.formats.tiktoken.ranks_to_vocab_merges`).

    Args:
        vocab: ``{id: token bytes}``; must contain all 256 single bytes and the
            special tokens' UTF-8 bytes.
        merges: ordered ``[(left_bytes, right_bytes), ...]``; merge k creates the
            token ``left + right``, which must be in ``vocab``.
        special_tokens: ``None``, a list of special-token strings (their ids are
            looked up in ``vocab`` by their UTF-8 bytes) or ``{string: id}``.
        pattern: pre-tokenization pattern name or regex source.
        name: display name.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: a single byte missing from ``vocab``; a merge whose parts or
            result are not in ``vocab``; a special token not in ``vocab``; bad
            pattern or special tokens.

    When ``vocab`` holds the same bytes under two ids (training can create the
    same bytes by two different merges), merge k's result is the lowest such id
    not yet created, and a merge operand refers to the earliest id with those
    bytes.  Tokenizers from :func:`train_bpe` and :meth:`load` keep their exact
    id triples and are not subject to this rule.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | Mapping[str, int] | None = None,
        pattern: str = "gpt2",
        name: str = "BPE",
    ) -> None:
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a dict[int, bytes], got {type(vocab).__name__}")
        vocab = dict(vocab)
        for k, v in vocab.items():
            if isinstance(k, bool) or not isinstance(k, int) or not isinstance(v, bytes | bytearray):
                raise TypeError(f"vocab must map int ids to bytes; found {k!r}: {type(v).__name__}")
            if k < 0:
                raise ValueError(f"vocab id {k} is negative")
        vocab = {k: bytes(v) for k, v in vocab.items()}
        specials = _resolve_specials(special_tokens, vocab)
        special_ids = set(specials.values())
        by_bytes: dict[bytes, list[int]] = {}
        for i in sorted(vocab):
            if i not in special_ids:
                by_bytes.setdefault(vocab[i], []).append(i)
        for byte in range(256):
            if bytes([byte]) not in by_bytes:
                raise ValueError(f"vocab has no token for the single byte 0x{byte:02X}; byte-level BPE needs all 256")
        taken: set[int] = {ids[0] for b, ids in by_bytes.items() if len(b) == 1}
        triples: list[tuple[int, int, int]] = []
        for k, m in enumerate(merges):
            if not (isinstance(m, tuple | list) and len(m) == 2 and all(isinstance(x, bytes) for x in m)):
                raise TypeError(f"merge #{k} must be a (bytes, bytes) pair, got {m!r}")
            left, right = m
            for part in (left, right):
                if part not in by_bytes:
                    raise ValueError(f"merge #{k} {left!r} + {right!r}: part {part!r} is not in vocab")
            merged = left + right
            candidates = [i for i in by_bytes.get(merged, []) if i not in taken]
            if not candidates:
                raise ValueError(f"merge #{k} {left!r} + {right!r}: the result {merged!r} is not in vocab")
            new_id = candidates[0]
            taken.add(new_id)
            triples.append((by_bytes[left][0], by_bytes[right][0], new_id))
        self._setup(vocab, triples, specials, pattern, name, None, None)

    # -- construction helpers ------------------------------------------------

    @classmethod
    def from_parts(
        cls,
        *,
        vocab: dict[int, bytes],
        merges: list[tuple[int, int, int]],
        special_tokens: dict[str, int],
        pattern: str,
        name: str,
        trace: list[MergeStep] | None = None,
        training: TrainingInfo | None = None,
    ) -> BPETokenizer:
        """Build from id triples ``(left, right, new)``, as the trainer and :meth:`from_dict` do.

        Unlike the constructor, ids are taken as given (no lookup by bytes), so
        two merges with equal bytes keep their own ids.  ``vocab`` may lack the
        merged tokens (their bytes are the parts' bytes joined); ``trace`` and
        ``training`` are the trainer's records (:class:`MergeStep`,
        :class:`~bpe_core.interface.TrainingInfo`).
        """
        self = cls.__new__(cls)
        full = dict(vocab)
        for left, right, new in merges:
            if new not in full:
                full[new] = full[left] + full[right]
        self._setup(full, list(merges), special_tokens, pattern, name, trace, training)
        return self

    def _setup(
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[int, int, int]],
        specials: dict[str, int],
        pattern: str,
        name: str,
        trace: list[MergeStep] | None,
        training: TrainingInfo | None,
    ) -> None:
        self.name = name
        self._pattern_name = pattern if pattern in PATTERNS else None
        self._pattern = resolve_pattern(pattern)
        self._rx = compile_pattern(self._pattern)
        self._specials = dict(specials)
        validate_special_tokens(list(self._specials))
        self._special_ids = frozenset(self._specials.values())
        self._vocab_full = vocab
        self._merges = merges
        self._byte_ids = [0] * 256
        for i in sorted(vocab, reverse=True):
            b = vocab[i]
            if len(b) == 1 and i not in self._special_ids:
                self._byte_ids[b[0]] = i
        self._identity_bytes = self._byte_ids == list(range(256))
        max_id = max(vocab) if vocab else 255
        self._shift = max(max_id, 2).bit_length()
        shift = self._shift
        # pair -> rank (first merge of that id pair wins) and rank -> new id
        ranks: dict[int, int] = {}
        for r, (left, right, _new) in enumerate(merges):
            ranks.setdefault(left << shift | right, r)
        self._ranks = ranks
        self._new_ids = [m[2] for m in merges]
        self._rank_of_id = {m[2]: r for r, m in enumerate(merges)}
        self._trace_full = trace
        self.training = training
        self._n_merges = len(merges)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._views: dict[int, BPETokenizer] = {}

    # -- views -------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Ids this tokenizer can emit: base bytes + special tokens + merges in this view."""
        return 256 + len(self._specials) + self._n_merges

    @property
    def max_vocab_size(self) -> int:
        """The vocabulary size of the full merge list (what :meth:`with_vocab_size` can reach)."""
        return 256 + len(self._specials) + len(self._merges)

    @property
    def min_vocab_size(self) -> int:
        """The smallest vocabulary size: 256 byte tokens plus the special tokens."""
        return 256 + len(self._specials)

    def _narrow_to(self, n: int) -> None:
        """Make this fresh copy the view at size ``n`` (see :meth:`~bpe_core.persistence.ViewCache.with_vocab_size`)."""
        self._n_merges = n - self.min_vocab_size
        self._cache = {}
        self.__dict__.pop("_tiktoken_exact", None)  # remembered per view
        self.__dict__.pop("_tiktoken", None)

    @property
    def pattern(self) -> str:
        """The regex source of the split pattern."""
        return self._pattern

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name in :data:`bpe_core.pretokenize.PATTERNS`, or ``None`` for a custom regex."""
        return self._pattern_name

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token string: id}``."""
        return dict(self._specials)

    @property
    def vocab(self) -> dict[int, bytes]:
        """``{id: bytes}`` of every id this view can emit (specials as their UTF-8)."""
        v = self._vocab_full
        out = {self._byte_ids[b]: v[self._byte_ids[b]] for b in range(256)}
        for i in self._special_ids:
            out[i] = v[i]
        for _l, _r, new in self._merges[: self._n_merges]:
            out[new] = v[new]
        return out

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges of this view as ``(left_bytes, right_bytes)``, in rank order."""
        v = self._vocab_full
        return [(v[left], v[right]) for left, right, _n in self._merges[: self._n_merges]]

    @property
    def merge_ids(self) -> list[tuple[int, int, int]]:
        """The merges of this view as ``(left_id, right_id, new_id)``, in rank order."""
        return list(self._merges[: self._n_merges])

    @property
    def trace(self) -> list[MergeStep]:
        """The training trace of this view's merges (empty for a tokenizer not trained here)."""
        if self._trace_full is None:
            return []
        return self._trace_full[: self._n_merges]

    def token_bytes(self, token_id: int) -> bytes:
        """Bytes of one token id (a special token's UTF-8).

        Raises:
            ValueError: ``token_id`` is not in this view's vocabulary.
        """
        if not self._id_in_view(token_id):
            raise ValueError(f"token id {token_id} is not in this tokenizer's vocabulary (size {self.vocab_size})")
        return self._vocab_full[token_id]

    def rank_of(self, token_id: int) -> int | None:
        """Merge rank that created ``token_id`` (0-based), or ``None`` for bytes and specials."""
        r = self._rank_of_id.get(token_id)
        return r if r is not None and r < self._n_merges else None

    def _id_in_view(self, token_id: int) -> bool:
        if token_id in self._special_ids:
            return True
        v = self._vocab_full.get(token_id)
        if v is None:
            return False
        if len(v) == 1 and self._byte_ids[v[0]] == token_id:
            return True
        r = self._rank_of_id.get(token_id)
        return r is not None and r < self._n_merges

    def describe_token(self, token_id: int) -> str:
        """Readable form of one token's bytes (``<0xNN>`` for bytes that are not whole characters)."""
        return display_bytes(self.token_bytes(token_id))

    # -- the declared interface (bpe_core.interface) ---------------------------

    algorithm = "bpe"
    """The key of :data:`bpe_core.interface.ALGORITHMS` that trains this kind of tokenizer."""

    is_byte_level = True
    """Every id stands for bytes; the ids of a text hold exactly its UTF-8."""

    unknown_id = None
    """Byte-level BPE spells every text: there is no unknown token."""

    def encode_steps(self, text: str) -> list:
        """``list[PieceSteps]``: each pre-token's merges in rank order (:func:`bpe_core.bpe.trace.bpe_encode_steps`)."""
        return bpe_encode_steps(self, text)

    def learned_tokens(self) -> list[tuple[int, int]]:
        """``(merge rank, new id)`` of every merge of this view, in rank order."""
        return [(r, new) for r, (_a, _b, new) in enumerate(self._merges[: self._n_merges])]

    def training_text_tokens(self) -> int | None:
        """Tokens of the training text at this size, read off the trace (exact, free), or ``None``.

        ``None`` for a tokenizer loaded without its full trace or training facts.
        """
        trace, info = self._trace_full, self.training
        if trace is None or info is None or len(trace) != len(self._merges):
            return None
        k = self._n_merges
        return trace[k - 1].tokens_after if k > 0 else info.initial_tokens

    def replay(self, text: str):
        """A :class:`bpe_core.bpe.trace.TrainingReplay` of training on ``text`` (its own training text)."""
        return TrainingReplay.from_text(self, text)

    # -- persistence -----------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-ready ``dict`` of this view: vocab (base64), merge id triples, specials, pattern, trace."""
        v = self._vocab_full
        merges = self._merges[: self._n_merges]
        ids = sorted(self.vocab)
        return {
            "format": "bpe-playground/bpe",
            "version": 1,
            "name": self.name,
            "pattern": self._pattern,
            "pattern_name": self._pattern_name,
            "special_tokens": self._specials,
            "vocab": {str(i): base64.b64encode(v[i]).decode("ascii") for i in ids},
            "merges": [list(m) for m in merges],
            "trace": [_step_to_json(s) for s in self.trace] if self._trace_full is not None else None,
            "training": asdict(self.training) if self.training is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> BPETokenizer:
        """Rebuild a tokenizer from :meth:`to_dict` output.

        Raises:
            ValueError: the data is not this format or is inconsistent; the message
                names the field at fault.
        """
        if not isinstance(data, Mapping) or data.get("format") != "bpe-playground/bpe":
            raise ValueError('not a BPE Playground tokenizer file (missing "format": "bpe-playground/bpe")')
        try:
            vocab = {int(k): base64.b64decode(s, validate=True) for k, s in data["vocab"].items()}
            merges = [tuple(int(x) for x in m) for m in data["merges"]]
            specials = {str(k): int(i) for k, i in data["special_tokens"].items()}
            pattern = data.get("pattern_name") or data["pattern"]
            name = str(data.get("name") or "BPE")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"tokenizer file is malformed: {type(exc).__name__}: {exc}") from None
        for k, m in enumerate(merges):
            if len(m) != 3 or not all(x in vocab for x in m):
                raise ValueError(f"tokenizer file is malformed: merge #{k} {list(m)} refers to ids not in vocab")
            if vocab[m[2]] != vocab[m[0]] + vocab[m[1]]:
                raise ValueError(f"tokenizer file is malformed: merge #{k} result bytes do not equal its parts")
        trace = None
        if data.get("trace") is not None:
            try:
                trace = [_step_from_json(s, vocab) for s in data["trace"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"tokenizer file is malformed: trace: {exc}") from None
        training = None
        if data.get("training") is not None:
            try:
                training = TrainingInfo(**data["training"])
            except TypeError as exc:
                raise ValueError(f"tokenizer file is malformed: training: {exc}") from None
        return cls.from_parts(
            vocab=vocab, merges=merges, special_tokens=specials, pattern=pattern, name=name,
            trace=trace, training=training,
        )  # fmt: skip

    def __repr__(self) -> str:
        pattern = self._pattern_name or "custom"
        return f"BPETokenizer(name={self.name!r}, vocab_size={self.vocab_size}, pattern={pattern!r})"


def _resolve_specials(
    special_tokens: Sequence[str] | Mapping[str, int] | None, vocab: Mapping[int, bytes]
) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if isinstance(special_tokens, Mapping):
        out = {}
        for s, i in special_tokens.items():
            if not isinstance(s, str) or isinstance(i, bool) or not isinstance(i, int):
                raise TypeError("special_tokens must map str to int ids")
            if vocab.get(i) != s.encode("utf-8"):
                raise ValueError(f"special token {s!r}: vocab id {i} does not hold its UTF-8 bytes")
            out[s] = i
        validate_special_tokens(list(out))
        return out
    tokens = validate_special_tokens(special_tokens)
    by_bytes = {}
    for i in sorted(vocab):
        by_bytes.setdefault(vocab[i], i)
    out = {}
    for s in tokens:
        i = by_bytes.get(s.encode("utf-8"))
        if i is None:
            raise ValueError(f"special token {s!r} is not in vocab")
        out[s] = i
    return out


def _step_to_json(s: MergeStep) -> list:
    return [s.rank, s.left_id, s.right_id, s.new_id, s.count, s.replaced, s.tokens_after]


def _step_from_json(row: Sequence, vocab: Mapping[int, bytes]) -> MergeStep:
    rank, left, right, new, count, replaced, tokens_after = (int(x) for x in row)
    return MergeStep(rank, left, right, new, vocab[left], vocab[right], count, replaced, tokens_after)
