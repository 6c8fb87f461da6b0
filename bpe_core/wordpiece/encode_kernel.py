"""The compiled WordPiece encoder: BERT-style words and greedy longest-match-first over many pieces at once.

:mod:`bpe_core.wordpiece.batch` lays the distinct pieces of a corpus end to end
as code points, with tables of their normal forms, and calls
:func:`_wordpiece_tokens` once; it equals,
piece by piece, the textbook path: :meth:`bpe_core.wordpiece.WordPieceTokenizer.token_spans`
(words by :data:`bpe_core.pretokenize.BERT_PATTERN`, each word by
:meth:`~bpe_core.wordpiece.WordPieceTokenizer.encode_word`), tested in
``tests/engine/test_wordpiece_batch.py``.

The vocabulary is a trie over code points held in one open-addressing hash
table (``key = node * 0x110000 + code point``, linear probing): node 0 is the
root of the word-initial pieces, node 1 the root of the continuation pieces
(their strings without the ``##`` prefix).  Walking the trie from the current
position and keeping the last node that ends a piece gives the longest
vocabulary piece that starts there, which is what the textbook finds by trying
``word[start:end]`` for ``end`` from the longest down.  Kernels are carried as
every kernel of the package (:mod:`bpe_core.counting.native`): no allocation,
the Python caller sizes every array.
"""

from __future__ import annotations

import numpy as np

from ..counting.native import kernel, njit

__all__ = ["EMPTY", "PUNCT", "SPACE", "fill_trie", "wordpiece_tokens"]

EMPTY = -1
"""An empty slot of the trie's hash table."""

SPACE, PUNCT = 1, 2
"""Character classes (``uint8[0x110000]``): whitespace (``\\s``) and BERT punctuation; 0 is a word character."""

CODES = 0x110000
"""Code points: the trie's key is ``node * CODES + code point``."""


@njit(inline="always")
def _slot(key, mask):
    """The first slot to probe for ``key`` (a multiplicative hash, wrapping in 64 bits)."""
    h = key * np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing
    return (h ^ (h >> 31)) & mask


@kernel("i8[]", "i8[]", "i8[:,:]", returns="i8")
def _fill_trie(keys, values, table):
    """Put ``keys[i] -> values[i]`` into the hash table ``table`` (rows ``(key, value)``, power-of-two rows).

    Empty rows hold :data:`EMPTY` keys.  Returns the longest probe run (for
    tests); the caller makes the table at least twice as large as ``keys``.
    """
    mask = table.shape[0] - 1
    longest = 0
    for i in range(keys.size):
        s = _slot(keys[i], mask)
        run = 0
        while table[s, 0] != EMPTY and table[s, 0] != keys[i]:
            s = (s + 1) & mask
            run += 1
        table[s, 0] = keys[i]
        table[s, 1] = values[i]
        longest = max(longest, run)
    return longest


@njit(inline="always")
def _child(table, mask, node, cp):
    """The trie node after ``node`` on code point ``cp``, or -1 (a key and its value share a cache line)."""
    key = node * CODES + cp
    s = _slot(key, mask)
    while True:
        k = table[s, 0]
        if k == key:
            return table[s, 1]
        if k == EMPTY:
            return -1
        s = (s + 1) & mask


@njit(inline="always")
def _encode_word(norm, ws, we, table, terminal, ids, starts, t):
    """Greedy longest-match-first over ``norm[ws:we]``: tokens from ``t`` on (ids, normalized starts); -1: unknown."""
    mask = table.shape[0] - 1
    pos = ws
    while pos < we:
        node = 0 if pos == ws else 1
        best_id = -1
        best_end = pos
        j = pos
        while j < we:
            node = _child(table, mask, node, np.int64(norm[j]))
            if node < 0:
                break
            j += 1
            if terminal[node] >= 0:
                best_id = terminal[node]
                best_end = j
        if best_id < 0:
            return -1
        ids[t] = best_id
        starts[t] = pos
        t += 1
        pos = best_end
    return t


@njit(inline="always")
def _normalize_piece(cps, start, end, lengths, single, longer_at, longer, norm, origin):
    """``cps[start:end]`` normalized into ``norm``, where each character came from in ``origin``; its length."""
    m = 0
    for k in range(end - start):
        cp = cps[start + k]
        n = lengths[cp]
        if n == 1:
            norm[m] = single[cp]
            origin[m] = k
            m += 1
        elif n > 1:
            at = longer_at[cp]
            for j in range(n):
                norm[m] = longer[at + j]
                origin[m] = k
                m += 1
    return m


@kernel(
    "u4[]", "i8[]", "u1[]", "u4[]", "i4[]", "u4[]", "u1[]", "i8[:,:]", "i8[]", "i8", "i8",
    "u4[]", "i8[]", "i8[]", "i8[]", "i8[]", "i8[]",
)  # fmt: skip
def _wordpiece_tokens(
    cps, char_off, lengths, single, longer_at, longer, classes, table, terminal, max_chars, unk,
    norm, origin, counts, ids, starts, ends,
):  # fmt: skip
    """The WordPiece tokens of every piece: normal form, BERT-style words, each greedily matched.

    Args (arrays are C-contiguous):
        cps: ``uint32``: the pieces' code points, end to end.
        char_off: ``int64[n + 1]``: piece ``p`` is ``cps[char_off[p]:char_off[p + 1]]``.
        lengths, single, longer_at, longer: the normalization: code point ``c`` becomes
            ``lengths[c]`` characters: ``single[c]`` when one, else ``longer[longer_at[c]:][:lengths[c]]``
            (:class:`bpe_core.wordpiece.batch.CharNormalizer`).
        classes: ``uint8[0x110000]``: :data:`SPACE`, :data:`PUNCT` or 0, of normalized characters.
        table: the trie's hash table, rows ``(key, child)``; ``terminal[node]``: the piece id ending there, or -1.
        max_chars: longer words (normalized characters) are unknown (``max_input_chars_per_word``).
        unk: the unknown token's id.
        norm, origin: scratch, as long as the longest normalized piece.
        counts: out, ``int64[n]``: tokens per piece.
        ids, starts, ends: out, at least as long as the pieces' normalized characters: token ids
            and original character ranges from the piece's start.

    Returns:
        The number of tokens written.
    """
    t = 0
    for p in range(counts.size):
        t_piece = t
        end = _normalize_piece(cps, char_off[p], char_off[p + 1], lengths, single, longer_at, longer, norm, origin)
        i = 0
        while i < end:
            c = classes[norm[i]]
            if c == SPACE:
                i += 1
                continue
            ws = i
            i += 1
            if c != PUNCT:
                while i < end and classes[norm[i]] == 0:
                    i += 1
            we = i
            t_word = t
            got = -1
            if we - ws <= max_chars:
                got = _encode_word(norm, ws, we, table, terminal, ids, starts, t)
            if got < 0:  # the whole word is the unknown token
                ids[t_word] = unk
                starts[t_word] = ws
                got = t_word + 1
            for k in range(t_word, got):  # normalized starts -> original character ranges
                ne = starts[k + 1] if k + 1 < got else we
                starts[k] = origin[starts[k]]
                ends[k] = origin[ne - 1] + 1
            t = got
        counts[p] = t - t_piece
    return t


def fill_trie(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A hash table of ``keys -> values``: ``int64[size, 2]`` rows ``(key, value)``, power-of-two size, load <= 1/2.

    Args:
        keys: ``int64``, distinct, non-negative (``node * 0x110000 + code point``).
        values: ``int64``, same length.
    """
    size = 1 << max(4, int(2 * keys.size).bit_length())
    table = np.zeros((size, 2), dtype=np.int64)
    table[:, 0] = EMPTY
    _fill_trie(np.ascontiguousarray(keys, dtype=np.int64), np.ascontiguousarray(values, dtype=np.int64), table)
    return table


def wordpiece_tokens(cps, char_off, tables, classes, trie, max_chars: int, unk: int) -> tuple:
    """Run :func:`_wordpiece_tokens`; returns ``(counts, ids, starts, ends)`` trimmed to the tokens written.

    Args:
        cps: ``uint32`` code points of the pieces, end to end.
        char_off: ``int64[n + 1]``: where each piece starts in ``cps``, then the end.
        tables: ``(lengths, single, longer_at, longer)`` of the normalization.
        classes: ``uint8[0x110000]``: :data:`SPACE`, :data:`PUNCT` or 0.
        trie: ``(table, terminal)`` (see :func:`fill_trie`).
        max_chars: longer words are unknown.
        unk: the unknown token's id.
    """
    n = char_off.size - 1
    lengths = tables[0]
    each = lengths[cps]
    room = max(1, int(each.sum(dtype=np.int64)))  # a token holds at least one normalized character
    widest = int(np.diff(char_off).max(initial=0)) * int(each.max(initial=1))
    norm = np.empty(max(1, widest), dtype=np.uint32)
    origin = np.empty(max(1, widest), dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    ids, starts, ends = (np.empty(room, dtype=np.int64) for _ in range(3))
    total = _wordpiece_tokens(
        cps, char_off, *tables, classes, *trie, max_chars, unk, norm, origin, counts, ids, starts, ends
    )
    return counts, ids[:total], starts[:total], ends[:total]
