"""A fourth algorithm, a toy, in one engine module: character-level tokens, trained by keeping the most frequent ones.

Training counts the characters of the text (special tokens cut out first) and keeps the
``vocab_size - len(special_tokens)`` most frequent, ties by code point; any other character is the
unknown token ``<unk>``.  Each kept character is one training step, so the vocabulary-size slider
works as for the real algorithms: the tokenizer at size ``n`` keeps the first ``n - min_vocab_size``
characters.

The module answers every member of :class:`bpe_core.interface.TrainedTokenizer` and registers with
:func:`register` -- nothing else in ``bpe_core`` knows it -- and its screen side is one more module
(``tests/toy/chars_view.py``).  ``tests/app/test_fourth_algorithm.py`` opens every page with it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from bpe_core.interface import ALGORITHMS, Algorithm, TrainingInfo, TrainingSpec, register_algorithm
from bpe_core.pretokenize import pretokenize, resolve_pattern, split_special, validate_special_tokens
from bpe_core.spans import TokenSpan
from bpe_core.steps import EncodeStep, PieceSteps

NAME = "chars"
UNK = "<unk>"


@dataclass(frozen=True)
class KeepStep:
    """One training step: a character kept (the trace's entry)."""

    rank: int
    id: int
    char: str
    count: int
    tokens_after: int


class CharTokenizer:
    """Characters as tokens: the special tokens, then the kept characters, most frequent first."""

    algorithm = NAME
    is_byte_level = False

    def __init__(self, specials: tuple[str, ...], steps: list[KeepStep], pattern: str, training: TrainingInfo | None):
        self._specials = tuple(specials)
        self._steps = steps
        self._base = len(specials)
        self._n = self._base + len(steps)
        self._full: CharTokenizer = self
        self._views: dict[int, CharTokenizer] = {self._n: self}
        self._ids = {s.char: s.id for s in steps}
        self.pattern = resolve_pattern(pattern)
        self.pattern_name = pattern
        self.training = training
        self.name = "Characters"

    # -- sizes ---------------------------------------------------------------------------------

    @property
    def min_vocab_size(self) -> int:
        return self._base

    @property
    def max_vocab_size(self) -> int:
        return self._full._n

    @property
    def vocab_size(self) -> int:
        return self._n

    def with_vocab_size(self, n: int) -> CharTokenizer:
        full = self._full
        if isinstance(n, bool) or not isinstance(n, int) or not full._base <= n <= full._n:
            raise ValueError(f"vocab size must be in {full._base}..{full._n}, got {n!r}")
        view = full._views.get(n)
        if view is None:
            view = CharTokenizer.__new__(CharTokenizer)
            view.__dict__.update(full.__dict__)
            view._n = n
            full._views[n] = view
        return view

    # -- vocabulary ----------------------------------------------------------------------------

    @property
    def special_tokens(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self._specials)}

    @property
    def unknown_id(self) -> int:
        return self._specials.index(UNK)

    def _string(self, token_id: int) -> str:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < self._n:
            raise ValueError(f"token id {token_id!r} is not in this vocabulary (size {self._n})")
        return self._specials[token_id] if token_id < self._base else self._steps[token_id - self._base].char

    def token_bytes(self, token_id: int) -> bytes:
        return self._string(token_id).encode("utf-8", "surrogatepass")

    def describe_token(self, token_id: int) -> str:
        return self._string(token_id)

    def rank_of(self, token_id: int) -> int | None:
        return token_id - self._base if isinstance(token_id, int) and self._base <= token_id < self._n else None

    # -- encoding ------------------------------------------------------------------------------

    def _id(self, ch: str) -> int:
        i = self._ids.get(ch)
        return i if i is not None and i < self._n else self.unknown_id

    def token_spans(self, text: str) -> list[TokenSpan]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        out: list[TokenSpan] = []
        pos = 0
        for segment, is_special in split_special(text, self._specials):
            if is_special:
                i = self.special_tokens[segment]
                out.append(TokenSpan(i, segment.encode(), segment, pos, pos + len(segment), True))
            else:
                for k, ch in enumerate(segment):
                    i = self._id(ch)
                    out.append(
                        TokenSpan(
                            i, self.token_bytes(i), self._string(i), pos + k, pos + k + 1, False, False, self.rank_of(i)
                        )
                    )
            pos += len(segment)
        return out

    def encode(self, text: str) -> list[int]:
        return [s.id for s in self.token_spans(text)]

    def decode(self, ids) -> str:
        return "".join(self._string(i) for i in ids)

    def encode_steps(self, text: str) -> list[PieceSteps]:
        out = []
        for p in pretokenize(text, self.pattern, self._specials):
            ids = tuple(self.encode(p.text)) if not p.is_special else (self.special_tokens[p.text],)
            step = EncodeStep(ids, tuple(self._string(i) for i in ids), "one token per character")
            out.append(PieceSteps(p.text, p.start, p.end, p.is_special, (step,)))
        return out

    def fast_encoder(self):
        return None

    # -- training ------------------------------------------------------------------------------

    @property
    def trace(self) -> list[KeepStep]:
        return self._steps[: self._n - self._base]

    def learned_tokens(self) -> list[tuple[int, int]]:
        return [(s.rank, s.id) for s in self.trace]

    def merged_parts(self) -> dict[int, tuple[int, int]]:
        return {}

    def training_text_tokens(self) -> int | None:
        return self.training.initial_tokens if self.training is not None else None

    def replay(self, text: str) -> list[KeepStep]:
        return list(self._steps)

    # -- persistence ---------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "algorithm": NAME,
            "special_tokens": list(self._specials),
            "pattern": self.pattern_name,
            "steps": [asdict(s) for s in self.trace],
            "training": asdict(self.training) if self.training is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict) -> CharTokenizer:
        info = TrainingInfo(**data["training"]) if data.get("training") else None
        return cls(tuple(data["special_tokens"]), [KeepStep(**s) for s in data["steps"]], data["pattern"], info)

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")


def train_chars(
    text: str, vocab_size: int, special_tokens=(UNK,), pattern: str = "gpt2", progress=None
) -> CharTokenizer:
    """Keep the ``vocab_size - len(special_tokens)`` most frequent characters of ``text`` (ties by code point).

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: ``vocab_size`` below the special tokens' count.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    specials = validate_special_tokens(special_tokens)
    if UNK not in specials:
        specials = (*specials, UNK)
    if vocab_size < len(specials):
        raise ValueError(f"vocab_size must be at least {len(specials)} (the special tokens), got {vocab_size}")
    counts: Counter = Counter()
    n_special = 0
    for segment, is_special in split_special(text, specials):
        if is_special:
            n_special += 1
        else:
            counts.update(segment)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: vocab_size - len(specials)]
    total = sum(counts.values()) + n_special
    steps = []
    for r, (ch, c) in enumerate(ranked):
        steps.append(KeepStep(r, len(specials) + r, ch, c, total))
        if progress is not None:
            progress("merge", r + 1, len(ranked))
    info = TrainingInfo(
        requested_vocab_size=vocab_size,
        pretokens=sum(counts.values()),
        unique_pretokens=len(counts),
        special_occurrences=n_special,
        initial_tokens=total,
        stop_reason=None if len(ranked) + len(specials) == vocab_size else "the text has no more distinct characters",
    )
    return CharTokenizer(specials, steps, pattern, info)


def _train_spec(text, spec: TrainingSpec, *, progress=None, num_workers=None) -> CharTokenizer:
    del num_workers
    return train_chars(text, spec.vocab_size, spec.special_tokens, spec.pattern, progress=progress)


def register() -> None:
    """Register the toy algorithm (the one call a new algorithm's package makes in its ``__init__``)."""
    register_algorithm(
        Algorithm(
            name=NAME,
            label="Characters (toy)",
            train=_train_spec,
            from_dict=CharTokenizer.from_dict,
            default_pattern="gpt2",
            default_special_tokens=(UNK,),
            required_special_tokens=(UNK,),
        )
    )


def unregister() -> None:
    """Forget the toy algorithm (the test's teardown)."""
    ALGORITHMS.pop(NAME, None)
