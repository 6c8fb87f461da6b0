"""A deliberately simple BPE trainer, independent of bpe_core's incremental one.

It recounts every adjacent pair of every pre-token occurrence at each step, as
the naive versions in the seed articles do, and picks the winner with
``max(key=(count, left_bytes, right_bytes))``.  Slow, but easy to check by eye;
tests compare the engine's merges against it.
"""

from __future__ import annotations

from itertools import pairwise

import regex


def naive_train(
    text: str, vocab_size: int, pattern: str, special_tokens: list[str] = ()
) -> list[tuple[bytes, bytes, int]]:
    """Return the merges as (left_bytes, right_bytes, count_at_merge_time)."""
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
