"""A deliberately simple WordPiece trainer, independent of bpe_core's incremental one.

It follows the Hugging Face course's description step by step: words come
from Hugging Face's own ``BertPreTokenizer`` (not from bpe_core), and at every
step all token and pair frequencies are recounted from scratch, each score is
an exact ``Fraction``, and the winner is the first pair met, scanning words in
order of first appearance, whose score no later pair beats.  Slow, but easy to
check by eye; tests compare the engine's trace against it.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import regex
from tokenizers import pre_tokenizers

_HF_BERT = pre_tokenizers.BertPreTokenizer()


def naive_words(text: str, special_tokens=(), lowercase: bool = False) -> tuple[dict[str, int], int]:
    """Word counts in order of first appearance (specials cut out, optional per-character lower-casing),
    and the number of special-token occurrences cut out."""
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
        for word, _span in _HF_BERT.pre_tokenize_str(normalized):
            words[word] = words.get(word, 0) + 1
    return words, n_special


def naive_train(text: str, vocab_size: int, special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
                lowercase: bool = False, prefix: str = "##"):  # fmt: skip
    """Return ``(vocab, merges)``: the vocabulary list, and per merge the tuple
    ``(left, right, merged, pair_freq, left_freq, right_freq, tokens_after)``."""
    words, n_special = naive_words(text, special_tokens, lowercase)
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


def naive_encode_word(word: str, vocab: set[str], unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100):
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
