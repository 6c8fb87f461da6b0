r"""Byte-level BPE, the textbook way: count the words, recount every pair at every step, merge the most frequent.

Byte-pair encoding (Sennrich et al., 2016, on characters; GPT-2, Radford et
al., 2019, on bytes) learns an ordered list of **merges**.  Training:

1. The text is cut at its special tokens, and each part into **pre-tokens**
   (words) by a regex pattern -- GPT-2's by default; ``pattern=None`` keeps
   each part whole, as minbpe's ``BasicTokenizer`` does.  Each pre-token is
   written as its UTF-8 bytes, one token per byte, and the distinct words are
   counted.
2. Every adjacent pair of tokens in every word is counted, weighted by the
   word's count.
3. The most frequent pair is **merged**: ``left + right`` becomes a new token,
   and every occurrence in every word is replaced, left to right.
4. Steps 2-3 repeat until the vocabulary is as large as asked:
   256 bytes + the special tokens + one token per merge.

When two pairs are equally frequent, a **tie rule** decides (it changes what
is learned):

* ``tie="lexicographic"`` (this project's rule, Stanford CS336's): the
  greatest pair compared as ``(left_bytes, right_bytes)``;
* ``tie="first"`` (the Hugging Face course's and minbpe's): the pair met first,
  scanning the words in order of first appearance, each left to right.

Encoding a pre-token: start from its bytes and, again and again, merge the
adjacent pair whose merge was learned **earliest** (lowest rank), until no
learned pair is left (tiktoken's rule).

The fast trainer :func:`bpe_core.bpe.trainer.train_bpe` and the fast encoder
:mod:`bpe_core.bpe.encoder` must give exactly :func:`train_merges` and
:func:`encode_word`.

>>> tok = BPE.train("aaabdaaabac", 256 + 3, pattern=None, tie="first")  # minbpe's example
>>> tok.encode("aaabdaaabac")
[258, 100, 258, 97, 99]
>>> [tok.describe_token(i) for i in (256, 257, 258)]
['aa', 'aaa', 'aaab']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import NamedTuple

import regex

from ..pretokenize import PATTERNS
from ..spans import TokenSpan, display_bytes, spans_from_token_bytes
from ..steps import EncodeStep
from .base import TextbookTokenizer, check_text, split_special_tokens

__all__ = ["BPE", "Merge", "TrainingStep", "count_pairs", "count_words", "encode_word", "merge_word",
           "train_merges", "training_steps"]  # fmt: skip

TIE_RULES = ("lexicographic", "first")

Pair = tuple[bytes, bytes]
Words = dict[tuple[bytes, ...], int]


class Merge(NamedTuple):
    """One learned merge: the pair and how often it occurred when it was chosen."""

    left: bytes
    right: bytes
    count: int


class TrainingStep(NamedTuple):
    """One step of training, for a reader who wants to watch: the counts it saw and what it chose.

    Attributes:
        rank: 0-based number of the merge.
        pair_counts: ``{(left, right): count}`` of every adjacent pair before the merge, in the order first met.
        merge: the pair chosen.
        words: ``{word as a tuple of tokens: count}`` after the merge.
    """

    rank: int
    pair_counts: dict[Pair, int]
    merge: Merge
    words: Words


def count_words(text: str, pattern: str | None = "gpt2", special_tokens: Sequence[str] = ()) -> Words:
    """Step 1: the pre-tokens of ``text`` as tuples of single bytes, counted, in order of first appearance.

    ``pattern``: a name of :data:`bpe_core.pretokenize.PATTERNS`, a regex source, or ``None`` (no pre-tokenization).

    >>> count_words("low low", "gpt2")
    {(b'l', b'o', b'w'): 1, (b' ', b'l', b'o', b'w'): 1}
    """
    pattern = PATTERNS.get(pattern, pattern)
    words: Words = {}
    for start, end, special in split_special_tokens(check_text(text), special_tokens):
        if not special:
            part = text[start:end]
            for pre_token in [part] if pattern is None else [m.group() for m in regex.finditer(pattern, part)]:
                word = tuple(bytes([b]) for b in pre_token.encode("utf-8"))
                words[word] = words.get(word, 0) + 1
    return words


def count_pairs(words: Words) -> dict[Pair, int]:
    """Step 2: every adjacent pair's count over all words (weighted by the word counts), in the order first met."""
    counts: dict[Pair, int] = {}
    for word, n in words.items():
        for pair in pairwise(word):
            counts[pair] = counts.get(pair, 0) + n
    return counts


def best_pair(counts: dict[Pair, int], tie: str = "lexicographic") -> Pair:
    """Step 3's choice: the most frequent pair, ties broken by ``tie`` (see the module docstring)."""
    if tie == "first":
        return max(counts, key=counts.__getitem__)  # max keeps the first of equal keys
    return max(counts, key=lambda p: (counts[p], p[0], p[1]))


def merge_word(word: tuple[bytes, ...], pair: Pair) -> tuple[bytes, ...]:
    """Step 3 on one word: every occurrence of ``pair`` replaced by one token, left to right.

    >>> merge_word((b'a', b'a', b'a'), (b'a', b'a'))
    (b'aa', b'a')
    """
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def training_steps(words: Words, n_merges: int, tie: str = "lexicographic") -> Iterator[TrainingStep]:
    """Steps 2-4, one :class:`TrainingStep` per merge, until ``n_merges`` or no pair is left."""
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {TIE_RULES}, got {tie!r}")
    for rank in range(n_merges):
        counts = count_pairs(words)
        if not counts:
            return
        pair = best_pair(counts, tie)
        merged: Words = {}
        for word, n in words.items():
            new = merge_word(word, pair)
            merged[new] = merged.get(new, 0) + n
        words = merged
        yield TrainingStep(rank, counts, Merge(pair[0], pair[1], counts[pair]), words)


def train_merges(text: str, vocab_size: int, pattern: str | None = "gpt2", special_tokens: Sequence[str] = (),
                 *, tie: str = "lexicographic") -> list[Merge]:  # fmt: skip
    """Byte-level BPE training: the merges, in order, as :class:`Merge` ``(left, right, count)``.

    Args:
        text: the training text.
        vocab_size: 256 bytes + the special tokens + the merges wanted.
        pattern: pre-tokenization (see :func:`count_words`).
        special_tokens: strings cut out of the text before counting.
        tie: ``"lexicographic"`` or ``"first"`` (see the module docstring).

    Raises:
        ValueError: ``vocab_size`` below 256 + the special tokens; an unknown ``tie`` rule.

    ``l o`` and ``o w`` both occur 3 times; ``(b'o', b'w')`` is the greater pair:

    >>> train_merges("low lower lowest", 258)
    [Merge(left=b'o', right=b'w', count=3), Merge(left=b'l', right=b'ow', count=3)]
    """
    if vocab_size < 256 + len(special_tokens):
        raise ValueError(f"vocab_size {vocab_size} is below 256 bytes + {len(special_tokens)} special tokens")
    words = count_words(text, pattern, special_tokens)
    return [step.merge for step in training_steps(words, vocab_size - 256 - len(special_tokens), tie)]


def encode_word(word: bytes, ranks: dict[Pair, int]) -> list[bytes]:
    """Encode one pre-token: merge the lowest-ranked adjacent pair until none is left (``ranks``: pair -> rank).

    >>> encode_word(b"lower", {(b'o', b'w'): 0, (b'l', b'ow'): 1})
    [b'low', b'e', b'r']
    """
    tokens = [word[i : i + 1] for i in range(len(word))]
    while True:
        ranked = [(ranks[p], p) for p in pairwise(tokens) if p in ranks]
        if not ranked:
            return tokens
        tokens = list(merge_word(tuple(tokens), min(ranked)[1]))


class BPE(TextbookTokenizer):
    """A byte-level BPE tokenizer: ids 0-255 the bytes, then the special tokens, then one id per merge.

    Args:
        merges: ``(left_bytes, right_bytes)`` (or :class:`Merge`) in rank order.
        special_tokens: the special-token strings, in id order.
        pattern: pre-tokenization (see :func:`count_words`).
        name: display name.
    """

    is_byte_level = True

    def __init__(self, merges: Sequence[Sequence], special_tokens: Sequence[str] = (), pattern: str | None = "gpt2",
                 name: str = "Textbook BPE") -> None:  # fmt: skip
        self.merges = [(m[0], m[1]) for m in merges]
        vocab = [bytes([b]) for b in range(256)] + [s.encode("utf-8") for s in special_tokens]
        vocab += [left + right for left, right in self.merges]
        specials = {s: 256 + k for k, s in enumerate(special_tokens)}
        super().__init__(vocab, specials, name=name, pattern=PATTERNS.get(pattern, pattern) or r"(?s).+")
        self.ranks: dict[Pair, int] = {}
        for rank, pair in enumerate(self.merges):
            self.ranks.setdefault(pair, rank)
        self.first_merge = 256 + len(specials)
        self.id_of: dict[bytes, int] = {}
        for i, token in enumerate(vocab):
            if i < 256 or i >= self.first_merge:
                self.id_of.setdefault(token, i)

    @classmethod
    def train(cls, text: str, vocab_size: int, pattern: str | None = "gpt2", special_tokens: Sequence[str] = (),
              *, tie: str = "lexicographic") -> BPE:  # fmt: skip
        """Train on ``text`` (see :func:`train_merges`) and return the tokenizer."""
        return cls(train_merges(text, vocab_size, pattern, special_tokens, tie=tie), special_tokens, pattern)

    def words(self, text: str, start: int, end: int) -> list[tuple[str, list[int | None]]]:
        """The pre-tokens of ``text[start:end]`` by the pattern."""
        part = text[start:end]
        return [
            (m.group(), list(range(start + m.start(), start + m.end()))) for m in regex.finditer(self.pattern, part)
        ]

    def encode_word(self, word: str) -> list[tuple[int, int, int]]:
        """The ids of one pre-token (offsets are not used: :meth:`token_spans` lays bytes over the text)."""
        return [(self.id_of[t], 0, len(word)) for t in encode_word(word.encode("utf-8"), self.ranks)]

    def word_steps(self, word: str) -> tuple[EncodeStep, ...]:
        """The pre-token's bytes, then one line per merge applied, lowest rank first."""
        tokens = [bytes([b]) for b in word.encode("utf-8")]
        lines = [EncodeStep(tuple(word.encode("utf-8")), tuple(map(display_bytes, tokens)), "bytes")]
        while ranked := [(self.ranks[p], p) for p in pairwise(tokens) if p in self.ranks]:
            rank, pair = min(ranked)
            tokens = list(merge_word(tuple(tokens), pair))
            ids = tuple(self.id_of[t] for t in tokens)
            marked = tuple(k for k, t in enumerate(tokens) if t == pair[0] + pair[1])
            note = f"merge {rank}: {display_bytes(pair[0])!r} + {display_bytes(pair[1])!r}"
            lines.append(EncodeStep(ids, tuple(map(display_bytes, tokens)), note, rank, marked))
        return tuple(lines)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens laid over the text's UTF-8 (a token may hold part of a character: ``is_partial``)."""
        ids = self.encode(text)
        specials = frozenset(self.special_tokens.values())
        return spans_from_token_bytes(text, ids, [self.vocab[i] for i in ids], special_ids=specials,
                                      rank_of=self.rank_of)  # fmt: skip

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``: their bytes joined, as UTF-8 (``U+FFFD`` for a broken character)."""
        for i in ids:
            self._check_id(i)
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def describe_token(self, token_id: int) -> str:
        """The token's bytes as text, ``<0xNN>`` for bytes that are not whole characters."""
        return display_bytes(self.token_bytes(token_id))

    def rank_of(self, token_id: int) -> int | None:
        """The rank of the merge that made the token; ``None`` for bytes and special tokens."""
        return token_id - self.first_merge if token_id >= self.first_merge else None
