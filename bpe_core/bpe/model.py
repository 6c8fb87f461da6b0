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
import operator
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

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
from ..pretokenize import PATTERNS, compile_pattern, resolve_pattern, validate_special_tokens
from ..spans import display_bytes
from .encoder import BPEEncoder
from .trace import TrainingReplay, bpe_encode_steps

__all__ = ["MAX_ID_GAPS", "BPETokenizer", "MergeStep", "check_tables"]


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
        vocab = _vocab_argument(vocab)
        specials = _resolve_specials(special_tokens, vocab)
        by_bytes = _ids_by_bytes(vocab, set(specials.values()))
        triples = _merge_triples(merges, by_bytes)
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
        if not isinstance(pattern, str) or not isinstance(name, str):
            raise TypeError(f"pattern and name must be str, got {type(pattern).__name__} and {type(name).__name__}")
        check_tables(vocab, merges, specials)
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

    def merged_parts(self) -> dict[int, tuple[int, int]]:
        """``{new id: (left id, right id)}`` of every merge of this view (the token genealogy's edges)."""
        return {new: (left, right) for left, right, new in self._merges[: self._n_merges]}

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
        fix = "; the file is damaged or was edited by hand: save or export the tokenizer again"
        try:
            for key in ("vocab", "merges", "special_tokens", "pattern"):
                if key not in data:
                    raise ValueError(f'the field "{key}" is missing')
            json_version(data)
            vocab = _vocab_from_json(data["vocab"])
            merges = _merges_from_json(data["merges"])
            raw_specials = json_field(data["special_tokens"], dict, '"special_tokens"', 'an object {"token": id}')
            specials = {s: json_int(i, f'"special_tokens"[{s!r}]') for s, i in raw_specials.items()}
            for s, i in specials.items():
                if i not in vocab:
                    raise ValueError(f'"special_tokens"[{s!r}] is id {i}, which is not in the vocabulary (ids '
                                     f"0..{max(vocab, default=-1)})")  # fmt: skip
            pattern = _pattern_from_json(data)
            name = json_optional_str(data.get("name"), '"name"', "BPE")
            _check_merge_bytes(merges, vocab)
            training = None
            if data.get("training") is not None:
                training = training_from_json(data["training"])
            trace = _trace_from_json(data.get("trace"), vocab, merges, training)
            return cls.from_parts(
                vocab=vocab, merges=merges, special_tokens=specials, pattern=pattern, name=name,
                trace=trace, training=training,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"tokenizer file is malformed: {exc}{fix}") from None

    def __repr__(self) -> str:
        pattern = self._pattern_name or "custom"
        return f"BPETokenizer(name={self.name!r}, vocab_size={self.vocab_size}, pattern={pattern!r})"


MAX_ID_GAPS = 1 << 16
"""Ids a vocabulary may leave unused below its largest id (cl100k leaves 16; a rank of 10**40 is refused)."""


def check_tables(
    vocab: Mapping[int, bytes], merges: Sequence[tuple[int, int, int]], specials: Mapping[str, int]
) -> None:
    """Check that a vocabulary, merge id triples and special tokens make a tokenizer that decodes right.

    Every construction path (the constructor, :meth:`BPETokenizer.from_parts`,
    :meth:`BPETokenizer.from_dict`, the importers) goes through this check.

    Args:
        vocab: ``{id: token bytes}``.
        merges: ``[(left id, right id, new id), ...]`` in rank order.
        specials: ``{special token: id}``.

    Raises:
        TypeError: an id is not an ``int`` or a token is not ``bytes``.
        ValueError: a negative id or one far beyond the vocabulary's size
            (more than :data:`MAX_ID_GAPS` unused ids), an empty token, a special
            token whose id is outside the vocabulary or holds other bytes, two
            special tokens on one id, a single byte without an ordinary id of its
            own (missing, or only a special token's), a merge that refers to ids
            outside the vocabulary or to a special token, creates a byte's id or
            an id an earlier merge created, or whose bytes are not its parts'.
    """
    _check_vocab_entries(vocab)
    on_id = _check_specials(vocab, specials)
    _check_merge_triples(vocab, merges, on_id, _byte_ids(vocab, on_id))


def _check_vocab_entries(vocab: Mapping[int, bytes]) -> None:
    """:func:`check_tables`' checks of each vocabulary entry and of the ids' range."""
    for i, b in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"vocab ids must be int, got {type(i).__name__} {i!r}")
        if not isinstance(b, bytes):
            raise TypeError(f"vocab id {i} must hold bytes, got {type(b).__name__} (encode text with .encode('utf-8'))")
        if i < 0:
            raise ValueError(f"vocab id {i} is negative")
        if not b:
            raise ValueError(f"vocab id {i} holds no bytes; every token needs at least one byte")
    if vocab and max(vocab) >= len(vocab) + MAX_ID_GAPS:
        raise ValueError(
            f"token id {max(vocab):,} is far beyond the vocabulary's {len(vocab):,} tokens (at most {MAX_ID_GAPS:,} "
            "ids may be left unused); renumber the tokens from 0"
        )


def _check_specials(vocab: Mapping[int, bytes], specials: Mapping[str, int]) -> dict[int, str]:
    """:func:`check_tables`' checks of the special tokens; returns ``{id: special token}``."""
    on_id: dict[int, str] = {}
    for s, i in specials.items():
        if not isinstance(s, str) or isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"special tokens must map str to int ids, got {s!r}: {i!r}")
        if i not in vocab:
            raise ValueError(
                f"special token {s!r} has id {i}, which is not in the vocabulary (ids up to {max(vocab, default=-1)})"
            )
        if vocab[i] != s.encode("utf-8", "surrogatepass"):
            raise ValueError(
                f"special token {s!r} has id {i}, which holds the bytes {vocab[i]!r}, not the token's UTF-8"
            )
        if i in on_id:
            raise ValueError(f"special tokens {on_id[i]!r} and {s!r} share id {i}")
        on_id[i] = s
    return on_id


def _byte_ids(vocab: Mapping[int, bytes], on_id: Mapping[int, str]) -> set[int]:
    """The ordinary id of each of the 256 bytes (the smallest, when several); ``ValueError`` when one has none."""
    byte_id: dict[int, int] = {}
    for i, b in vocab.items():
        if len(b) == 1 and i not in on_id and (b[0] not in byte_id or i < byte_id[b[0]]):
            byte_id[b[0]] = i
    if len(byte_id) < 256:
        byte = next(x for x in range(256) if x not in byte_id)
        held = [f"{s!r} (id {i})" for i, s in on_id.items() if vocab[i] == bytes([byte])]
        where = f" other than special token {held[0]}" if held else ""
        raise ValueError(
            f"the vocabulary has no token for the single byte 0x{byte:02X}{where}; byte-level BPE needs all 256 "
            "bytes as ordinary tokens, or text holding that byte could not be encoded or decoded"
        )
    return set(byte_id.values())


def _check_merge_triples(
    vocab: Mapping[int, bytes], merges: Sequence[tuple[int, int, int]], on_id: Mapping[int, str], byte_ids: set[int]
) -> None:
    """:func:`check_tables`' checks of the merge id triples, in rank order."""
    if _merge_triples_pass(vocab, merges, on_id, byte_ids):
        return  # the loop below, a few times slower, is left for finding and naming the first bad merge
    created: dict[int, int] = {}
    for k, m in enumerate(merges):
        if len(m) != 3:
            raise ValueError(f"merge #{k} must be (left id, right id, new id), got {m!r}")
        left, right, new = m
        for x in m:
            if isinstance(x, bool) or not isinstance(x, int):
                raise TypeError(f"merge #{k} {m!r}: ids must be int")
            if x not in vocab:
                raise ValueError(f"merge #{k} {list(m)} refers to id {x}, which is not in the vocabulary")
            if x in on_id:
                raise ValueError(f"merge #{k} {list(m)} uses id {x} of special token {on_id[x]!r}")
        if new in byte_ids:
            raise ValueError(f"merge #{k} {list(m)} creates id {new}, the id of byte 0x{vocab[new][0]:02X}")
        if new in created:
            raise ValueError(f"merge #{k} {list(m)} creates id {new}, which merge #{created[new]} already created")
        created[new] = k
        if vocab[new] != vocab[left] + vocab[right]:
            raise ValueError(f"merge #{k} {list(m)}: the bytes of id {new} are not those of ids {left} + {right}")


def _merge_triples_pass(
    vocab: Mapping[int, bytes], merges: Sequence[tuple[int, int, int]], on_id: Mapping[int, str], byte_ids: set[int]
) -> bool:
    """True when every triple passes :func:`_check_merge_triples`' checks, tested on whole sets at once.

    False says only that one fails (or that an id is an ``int`` subclass, which the loop accepts).
    """
    if not all(len(m) == 3 for m in merges) or not all(type(x) is int for m in merges for x in m):
        return False
    lefts, rights, news = zip(*merges) if merges else ((), (), ())
    ids = {*lefts, *rights, *news}
    if not ids <= vocab.keys() or not ids.isdisjoint(on_id) or not byte_ids.isdisjoint(news):
        return False
    if len(set(news)) != len(news):
        return False
    get = vocab.__getitem__
    return all(map(operator.eq, map(get, news), map(operator.add, map(get, lefts), map(get, rights))))


def _vocab_from_json(raw: object) -> dict[int, bytes]:
    """:meth:`BPETokenizer.from_dict`'s ``"vocab"``: ``{"id": "base64 bytes"}`` decoded."""
    raw_vocab = json_field(raw, dict, '"vocab"', 'an object {"id": "base64 bytes"}')
    vocab = {}
    for k, s in raw_vocab.items():
        if not (isinstance(k, str) and k.isascii() and k.isdigit()):
            raise ValueError(f'"vocab" key {k!r} must be a token id written as digits')
        json_field(s, str, f'"vocab"["{k}"]', "a base64 string")
        try:
            vocab[int(k)] = base64.b64decode(s, validate=True)
        except ValueError:
            raise ValueError(f'"vocab"["{k}"] is not valid base64: {s[:40]!r}') from None
    return vocab


def _merges_from_json(raw: object) -> list[tuple[int, ...]]:
    """:meth:`BPETokenizer.from_dict`'s ``"merges"``: a list of ``[left, right, new]`` id triples."""
    merges = []
    for k, m in enumerate(json_field(raw, list, '"merges"', "a list of [left, right, new] ids")):
        json_field(m, list, f'"merges"[{k}]', "a list [left id, right id, new id]")
        if len(m) != 3:
            raise ValueError(f'"merges"[{k}] must hold 3 ids (left, right, new), got {len(m)}')
        merges.append(tuple(json_int(x, f'"merges"[{k}]') for x in m))
    return merges


def _check_merge_bytes(merges: Sequence[tuple[int, ...]], vocab: Mapping[int, bytes]) -> None:
    """Each merge's ids are in ``vocab`` and its new token's bytes are its parts' (``from_dict``'s wording)."""
    for k, m in enumerate(merges):
        if not all(x in vocab for x in m):
            raise ValueError(f'"merges"[{k}] {list(m)} refers to ids not in "vocab"')
        if vocab[m[2]] != vocab[m[0]] + vocab[m[1]]:
            raise ValueError(f'"merges"[{k}]: the bytes of id {m[2]} are not those of ids {m[0]} + {m[1]}')


def _pattern_from_json(data: Mapping) -> str:
    """:meth:`BPETokenizer.from_dict`'s pattern: ``"pattern_name"`` (in :data:`PATTERNS`) if set, else ``"pattern"``."""
    pattern = json_field(data["pattern"], str, '"pattern"', "a regex string")
    pattern_name = json_field(data.get("pattern_name"), (str, type(None)), '"pattern_name"', "a string or null")
    if pattern_name is not None and pattern_name not in PATTERNS:
        raise ValueError(f'"pattern_name" {pattern_name!r} is not one of {", ".join(PATTERNS)}')
    return pattern_name or pattern


def _vocab_argument(vocab: Mapping[int, bytes]) -> dict[int, bytes]:
    """The constructor's ``vocab`` checked (``int`` ids >= 0 to ``bytes``) and copied."""
    if not isinstance(vocab, Mapping):
        raise TypeError(f"vocab must be a dict[int, bytes], got {type(vocab).__name__}")
    vocab = dict(vocab)
    for k, v in vocab.items():
        if isinstance(k, bool) or not isinstance(k, int) or not isinstance(v, bytes | bytearray):
            raise TypeError(f"vocab must map int ids to bytes; found {k!r}: {type(v).__name__}")
        if k < 0:
            raise ValueError(f"vocab id {k} is negative")
    return {k: bytes(v) for k, v in vocab.items()}


def _ids_by_bytes(vocab: Mapping[int, bytes], special_ids: set[int]) -> dict[bytes, list[int]]:
    """Each token's bytes -> its ordinary ids, ascending; raises ``ValueError`` when a single byte has none."""
    by_bytes: dict[bytes, list[int]] = {}
    for i in sorted(vocab):
        if i not in special_ids:
            by_bytes.setdefault(vocab[i], []).append(i)
    for byte in range(256):
        if bytes([byte]) not in by_bytes:
            raise ValueError(f"vocab has no token for the single byte 0x{byte:02X}; byte-level BPE needs all 256")
    return by_bytes


def _merge_triples(
    merges: Sequence[tuple[bytes, bytes]], by_bytes: Mapping[bytes, list[int]]
) -> list[tuple[int, int, int]]:
    """``(left id, right id, new id)`` of each ``(left bytes, right bytes)`` merge: each new id a fresh one."""
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
    return triples


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


def _trace_from_json(
    raw: object, vocab: Mapping[int, bytes], merges: Sequence[tuple[int, ...]], training: TrainingInfo | None
) -> list[MergeStep] | None:
    """:meth:`BPETokenizer.from_dict`'s ``"trace"`` (``None`` for null): rows checked against the merges and counts.

    Row ``k`` must be merge ``k`` (its ids those of ``"merges"[k]``), and its counts must follow
    (:func:`~bpe_core.persistence.check_trace_counts`, from ``"training".initial_tokens`` when given).
    """
    if raw is None:
        return None
    rows = json_field(raw, list, '"trace"', "a list of rows or null")
    if len(rows) > len(merges):
        raise ValueError(f'"trace" has {len(rows):,} rows for {len(merges):,} merges')
    trace = [_step_from_json(row, vocab, f'"trace"[{k}]') for k, row in enumerate(rows)]
    for k, step in enumerate(trace):
        if (step.left_id, step.right_id, step.new_id) != tuple(merges[k]):
            raise ValueError(f'"trace"[{k}] merges ids {step.left_id}, {step.right_id} -> {step.new_id}, '
                             f'but "merges"[{k}] is {list(merges[k])}')  # fmt: skip
    initial = training.initial_tokens if training is not None and training.initial_tokens else None  # 0: unknown
    check_trace_counts([(s.rank, s.count, s.replaced, s.tokens_after) for s in trace], initial, '"trace"')
    return trace


def _step_to_json(s: MergeStep) -> list:
    return [s.rank, s.left_id, s.right_id, s.new_id, s.count, s.replaced, s.tokens_after]


def _step_from_json(row: object, vocab: Mapping[int, bytes], field: str) -> MergeStep:
    json_field(row, list, field, "a list of 7 whole numbers")
    if len(row) != 7:
        raise ValueError(f"{field} must hold 7 numbers, got {len(row)}")
    rank, left, right, new, count, replaced, tokens_after = (json_int(x, field) for x in row)
    for i in (left, right, new):
        if i not in vocab:
            raise ValueError(f'{field} refers to id {i}, which is not in "vocab"')
    return MergeStep(rank, left, right, new, vocab[left], vocab[right], count, replaced, tokens_after)
