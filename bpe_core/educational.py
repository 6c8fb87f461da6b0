"""The readable textbook trainers: the teaching reference, and the tests' oracle.

In the spirit of tiktoken's ``_educational.py``: each algorithm written the
slow, obvious way, every count recomputed from scratch at every step, so a
reader can check it by eye and the tests can check the fast engine against it
(:mod:`bpe_core.bpe.trainer` and :mod:`bpe_core.wordpiece.trainer` must give
the same merges).  Nothing else in ``bpe_core`` imports this module.

* :func:`bpe_train` -- byte-level BPE, as the seed articles' naive versions:
  recount every adjacent pair of every pre-token occurrence each step and pick
  ``max(key=(count, left_bytes, right_bytes))``.
* :func:`wordpiece_train`, :func:`wordpiece_words`, :func:`wordpiece_encode_word`
  -- WordPiece step by step as the Hugging Face course (chapter 6) describes it:
  words come from Hugging Face's own ``BertPreTokenizer`` (not from bpe_core);
  at every step all token and pair frequencies are recounted, each score is an
  exact ``Fraction``, and the winner is the first pair met, scanning words in
  order of first appearance, whose score no later pair beats; encoding is the
  course's greedy ``encode_word``.
* :func:`tiktoken_parts`, :func:`ranks_to_merges` -- a merge list recovered
  from tiktoken ranks by running tiktoken's byte-pair procedure on each token,
  rescanning every pair at every step (cubic in a token's length); the engine's
  :func:`bpe_core.formats.tiktoken.ranks_to_vocab_merges` must give the same merges.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from itertools import pairwise
from typing import Any

import regex

__all__ = [
    "bpe_train",
    "hf_bert_pretokenizer",
    "ranks_to_merges",
    "tiktoken_parts",
    "wordpiece_encode_word",
    "wordpiece_train",
    "wordpiece_words",
]


@cache
def hf_bert_pretokenizer() -> Any:
    """Hugging Face ``tokenizers``' ``BertPreTokenizer`` (an independent word splitter for the oracle)."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.BertPreTokenizer()


# ---------------------------------------------------------------------------
# byte-level BPE


def bpe_train(
    text: str, vocab_size: int, pattern: str, special_tokens: Sequence[str] = ()
) -> list[tuple[bytes, bytes, int]]:
    """Byte-level BPE training, the textbook way: recount every pair, merge the most frequent, repeat.

    Ties go to the lexicographically greatest pair ``(left_bytes, right_bytes)``,
    as :func:`bpe_core.bpe.trainer.train_bpe` does.

    Args:
        text: the training text.
        vocab_size: 256 bytes + the special tokens + the merges wanted.
        pattern: the pre-tokenization regex source (e.g. ``bpe_core.PATTERNS["gpt2"]``).
        special_tokens: strings cut out of the text before counting.

    Returns:
        The merges as ``(left_bytes, right_bytes, count_at_merge_time)``, in order.

    ``l o`` and ``o w`` both occur 3 times; ``(b'o', b'w')`` is the greater pair:

    >>> from bpe_core import PATTERNS
    >>> bpe_train("low lower lowest", 258, PATTERNS["gpt2"])
    [(b'o', b'w', 3), (b'l', b'ow', 3)]
    """
    if special_tokens:
        parts = regex.split("|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True)), text)
    else:
        parts = [text]
    words: dict[tuple[bytes, ...], int] = {}
    for part in parts:
        for m in regex.finditer(pattern, part):
            key = tuple(bytes([b]) for b in m.group().encode("utf-8"))
            words[key] = words.get(key, 0) + 1
    merges = []
    for _ in range(vocab_size - 256 - len(special_tokens)):
        counts: dict[tuple[bytes, bytes], int] = {}
        for w, c in words.items():
            for a, b in pairwise(w):
                counts[(a, b)] = counts.get((a, b), 0) + c
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], p[0], p[1]))
        merges.append((best[0], best[1], counts[best]))
        new_words: dict[tuple[bytes, ...], int] = {}
        for w, c in words.items():
            out = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + c
        words = new_words
    return merges


# ---------------------------------------------------------------------------
# WordPiece


def wordpiece_words(text: str, special_tokens=(), lowercase: bool = False) -> tuple[dict[str, int], int]:
    """WordPiece's words, from Hugging Face's own ``BertPreTokenizer`` (not from bpe_core).

    Returns:
        ``(counts, n_special)``: word counts in order of first appearance
        (specials cut out, optional per-character lower-casing), and the number
        of special-token occurrences cut out.
    """
    if special_tokens:
        alternatives = "|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
        parts = regex.split(alternatives, text)
        n_special = len(parts) - 1
    else:
        n_special = 0
        parts = [text]
    words: dict[str, int] = {}
    for part in parts:
        normalized = "".join(ch.lower() for ch in part) if lowercase else part
        for word, _span in hf_bert_pretokenizer().pre_tokenize_str(normalized):
            words[word] = words.get(word, 0) + 1
    return words, n_special


def wordpiece_train(text: str, vocab_size: int, special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
                lowercase: bool = False, prefix: str = "##"):  # fmt: skip
    """WordPiece training as the Hugging Face course describes it: recount, score exactly, merge, repeat.

    Returns:
        ``(vocab, merges)``: the vocabulary list, and per merge the tuple
        ``(left, right, merged, pair_freq, left_freq, right_freq, tokens_after)``.

    Every pair scores 1/3 at every step here, so the first pair met wins each time:

    >>> vocab, merges = wordpiece_train("hug hugs hug", 8, special_tokens=("[UNK]",))
    >>> vocab
    ['[UNK]', '##g', '##s', '##u', 'h', 'hu', 'hug', 'hugs']
    """
    words, n_special = wordpiece_words(text, special_tokens, lowercase)
    splits = {w: [w[0]] + [prefix + ch for ch in w[1:]] for w in words}
    alphabet = sorted({t for split in splits.values() for t in split})
    vocab = list(special_tokens) + alphabet
    merges = []
    while len(vocab) < vocab_size:
        token_freq: dict[str, int] = {}
        pair_freq: dict[tuple[str, str], int] = {}
        for w, c in words.items():
            split = splits[w]
            for t in split:
                token_freq[t] = token_freq.get(t, 0) + c
            for pair in pairwise(split):
                pair_freq[pair] = pair_freq.get(pair, 0) + c
        if not pair_freq:
            break
        best, best_score = None, None
        for pair, c in pair_freq.items():  # dict order = order of first occurrence
            score = Fraction(c, token_freq[pair[0]] * token_freq[pair[1]])
            if best_score is None or score > best_score:
                best, best_score = pair, score
        left, right = best
        merged = left + right[len(prefix) :]
        for w, split in splits.items():
            out, i = [], 0
            while i < len(split):
                if i + 1 < len(split) and split[i] == left and split[i + 1] == right:
                    out.append(merged)
                    i += 2
                else:
                    out.append(split[i])
                    i += 1
            splits[w] = out
        tokens_after = n_special + sum(len(splits[w]) * c for w, c in words.items())
        merges.append((left, right, merged, pair_freq[best], token_freq[left], token_freq[right], tokens_after))
        if merged not in vocab:
            vocab.append(merged)
    return vocab, merges


def wordpiece_encode_word(word: str, vocab: set[str], unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100):
    """Greedy longest-match-first, exactly as the course's ``encode_word`` (plus BERT's length cap)."""
    if len(word) > max_chars:
        return [unk]
    tokens = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return [unk]
        tokens.append(piece)
        start = end
    return tokens


def tiktoken_parts(ranks: dict[bytes, int], token: bytes) -> list[bytes]:
    """Tiktoken's ``_byte_pair_merge`` on ``token``'s bytes, stopped when two parts remain.

    Every step recomputes the rank of every adjacent pair and merges the lowest
    (the leftmost of equal ranks); it stops early when no pair is ranked.

    >>> tiktoken_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb")
    [b'ab', b'b']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        ranked = [(ranks[a + b], i) for i, (a, b) in enumerate(pairwise(parts)) if a + b in ranks]
        if not ranked:
            break
        _rank, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def ranks_to_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list, in rank order, that tiktoken's procedure implies: each multi-byte token's last two parts.

    Raises:
        ValueError: a token does not end in two parts.
    """
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) > 1:
            parts = tiktoken_parts(ranks, token)
            if len(parts) != 2:
                raise ValueError(f"token {token!r} (rank {rank}) cannot be built from two other tokens")
            merges.append((parts[0], parts[1]))
    return merges
