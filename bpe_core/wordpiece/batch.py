"""WordPiece over many distinct pieces at once: the corpus figures' encoder, equal to ``token_spans`` piece by piece.

Corpus figures (:mod:`bpe_core.pieces`) ask a tokenizer for the tokens of every
distinct piece of a corpus -- hundreds of thousands of them.  The textbook way
is :meth:`bpe_core.wordpiece.WordPieceTokenizer.token_spans` (or
:meth:`bpe_core.production.bert.BertWordPiece.token_spans`) on each piece, then
:func:`bpe_core.pieces.piece_tokens_from_spans`; :func:`encode_pieces` gives the
same :class:`~bpe_core.pieces.PieceTokens` in four array steps:

1. the pieces end to end as code points (one ``str.encode``);
2. tables of each code point's normal form (:class:`CharNormalizer`, filled
   once per character ever seen: lower-casing and BERT's normalizer map each
   character on its own);
3. the compiled kernel (:func:`bpe_core.wordpiece.encode_kernel.wordpiece_tokens`):
   each piece's normal form with where each character came from, BERT-style
   words (:data:`bpe_core.pretokenize.BERT_PATTERN`, a class per code point) and
   greedy longest-match-first on a trie of the vocabulary;
4. kinds: an unknown word is :data:`~bpe_core.pieces.KIND_UNKNOWN` unless its
   text is the unknown token's own string (as :func:`bpe_core.pieces.span_kind`).

Pieces that hold a special token are encoded the textbook way (they are rare:
a splitter cuts special tokens out).  With ``BPE_CORE_KERNELS=python`` or
without numba, every piece is.  Tested in ``tests/engine/test_wordpiece_batch.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import regex

from ..pieces import KIND_SPECIAL, KIND_UNKNOWN, PieceTokens, combine_piece_tokens, piece_tokens_from_spans
from ..pretokenize import BERT_PATTERN
from ..spans import TokenSpan
from .encode_kernel import CODES, PUNCT, SPACE, fill_trie, wordpiece_tokens

__all__ = ["CharNormalizer", "bert_classes", "encode_pieces", "pieces_holding", "vocabulary_trie"]


class CharNormalizer:
    """A per-character normalization as tables over code points, filled as characters are first seen.

    Args:
        normalize_char: one character -> its normal form (any length, empty included);
            the normal form of a text must be the concatenation of its characters'.

    Thread-safe (filling takes a lock; a filled entry never changes).
    """

    def __init__(self, normalize_char: Callable[[str], str]) -> None:
        self._normalize_char = normalize_char
        self._known = np.zeros(CODES, dtype=bool)
        self._length = np.zeros(CODES, dtype=np.uint8)
        self._single = np.zeros(CODES, dtype=np.uint32)
        self._longer_at = np.zeros(CODES, dtype=np.int32)
        self._longer = np.zeros(0, dtype=np.uint32)
        self._lock = threading.Lock()

    def _fill(self, cps: np.ndarray) -> None:
        seen = np.zeros(CODES, dtype=bool)  # the distinct code points without sorting millions
        seen[cps] = True
        with self._lock:
            longer: list[str] = []
            at = self._longer.size
            for cp in np.flatnonzero(seen & ~self._known).tolist():
                out = self._normalize_char(chr(cp))
                if len(out) > 255:
                    raise ValueError(f"the normal form of U+{cp:04X} is {len(out)} characters long (at most 255)")
                if len(out) == 1:
                    self._single[cp] = ord(out)
                elif out:
                    self._longer_at[cp] = at
                    longer.append(out)
                    at += len(out)
                self._length[cp] = len(out)
            if longer:
                more = np.frombuffer("".join(longer).encode("utf-32-le"), dtype=np.uint32)
                self._longer = np.concatenate([self._longer, more])
            self._known[seen] = True

    def tables(self, cps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(lengths, single, longer_at, longer)`` covering every code point of ``cps`` (``uint32``, no surrogates).

        Code point ``c`` becomes ``lengths[c]`` characters (``uint8[0x110000]``):
        ``single[c]`` (``uint32``) when one, else ``longer[longer_at[c]:][:lengths[c]]``.
        """
        if not self._known[cps].all():
            self._fill(cps)
        return self._length, self._single, self._longer_at, self._longer


IDENTITY = CharNormalizer(lambda c: c)
"""No normalization (a view that does not lower-case)."""


@lru_cache(maxsize=1)
def bert_classes() -> np.ndarray:
    r"""``uint8[0x110000]``: :data:`~bpe_core.wordpiece.encode_kernel.SPACE` for ``\s``, ``PUNCT`` for BERT punctuation.

    Read off :data:`bpe_core.pretokenize.BERT_PATTERN` itself (checked to be
    ``[^\s P]+|[P]``: runs of characters neither whitespace nor punctuation P,
    or one punctuation character), run over every code point, so the kernel's
    words are the pattern's matches.  Read-only.
    """
    words, punct = BERT_PATTERN.rsplit("|", 1)
    if words != rf"[^\s{punct[1:-1]}]+":
        raise AssertionError("BERT_PATTERN is not 'word characters' | 'one punctuation character'")
    cps = np.arange(CODES, dtype=np.uint32)
    cps[0xD800:0xE000] = ord("a")  # surrogates: never in a str that encodes; any word character stands in
    every = cps.tobytes().decode("utf-32-le")
    table = np.zeros(CODES, dtype=np.uint8)
    table[[m.start() for m in regex.finditer(r"\s", every)]] = SPACE
    table[[m.start() for m in regex.finditer(punct, every)]] = PUNCT
    table.flags.writeable = False
    return table


def pieces_holding(text: str, char_off: np.ndarray, strings: Sequence[str]) -> np.ndarray:
    """``bool[n]``: the pieces that may hold one of ``strings`` (special tokens); every piece that does is marked.

    One regex scan over the pieces end to end; a match that runs across pieces
    marks each piece it touches (a match it hid overlaps it, so lies in one of them).

    Args:
        text: the ``n`` pieces joined.
        char_off: ``int64[n + 1]``: where each piece starts in ``text``, then ``len(text)``.
        strings: the special-token strings.
    """
    out = np.zeros(char_off.size - 1, dtype=bool)
    strings = [s for s in strings if s]
    if not strings or not text:
        return out
    rx = regex.compile("|".join(regex.escape(s) for s in sorted(strings, key=len, reverse=True)))
    for m in rx.finditer(text):
        first, last = np.searchsorted(char_off, [m.start(), m.end() - 1], side="right") - 1
        out[first : last + 1] = True
    return out


def _subset(tokens: PieceTokens, idx: np.ndarray) -> PieceTokens:
    """The tokens of pieces ``idx`` (in that order) of ``tokens``."""
    sizes = np.diff(tokens.offsets)[idx]
    offsets = np.zeros(idx.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    take = np.repeat(tokens.offsets[idx], sizes) + (np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], sizes))
    return PieceTokens(offsets, tokens.ids[take], tokens.starts[take], tokens.ends[take], tokens.kinds[take])


def vocabulary_trie(piece_ids: dict[str, int], prefix: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The trie :func:`~bpe_core.wordpiece.encode_kernel.wordpiece_tokens` walks: ``(table, terminal)``.

    Node 0 roots every piece string (``word[start:end]`` at a word's start),
    node 1 every string that starts with ``prefix``, without it (what
    ``prefix + word[start:end]`` finds further in); ``terminal[node]`` is the
    id of the piece ending there, or -1.

    Args:
        piece_ids: ``{piece string: id}`` (special tokens not among them).
        prefix: the continuing-subword prefix (``##``).
        limit: ids at or above it are left out (a smaller vocabulary view).
    """
    edges: dict[int, int] = {}
    terminal = [-1, -1]
    cut = len(prefix)
    for string, i in piece_ids.items():
        if i >= limit:
            continue
        for root, s in ((0, string), (1, string[cut:] if string.startswith(prefix) else None)):
            if s is None:
                continue
            node = root
            for ch in s:
                key = node * CODES + ord(ch)
                child = edges.get(key)
                if child is None:
                    child = edges[key] = len(terminal)
                    terminal.append(-1)
                node = child
            terminal[node] = i
    keys = np.fromiter(edges.keys(), dtype=np.int64, count=len(edges))
    values = np.fromiter(edges.values(), dtype=np.int64, count=len(edges))
    return fill_trie(keys, values), np.array(terminal, dtype=np.int64)


def _use_kernel() -> bool:
    from ..counting.native import HAVE_NUMBA
    from ..counting.stream import kernels_mode

    return HAVE_NUMBA and kernels_mode() != "python"


def encode_pieces(
    pieces: Sequence[str],
    *,
    trie: Callable[[], tuple[np.ndarray, np.ndarray]],
    normalizer: CharNormalizer | None,
    max_chars: int,
    unknown_id: int,
    unk_token: str,
    special_tokens: Sequence[str],
    token_spans: Callable[[str], list[TokenSpan]],
) -> PieceTokens:
    """The WordPiece tokens of each piece, equal to ``piece_tokens_from_spans([token_spans(p) for p in pieces])``.

    Args:
        pieces: the distinct pieces (units, or BERT-style pre-tokens).
        trie: builds (or returns the cached) :func:`vocabulary_trie` of the vocabulary.
        normalizer: the per-character normalization, or ``None`` for none.
        max_chars: ``max_input_chars_per_word`` (normalized characters).
        unknown_id: the unknown token's id.
        unk_token: the unknown token's string (an unknown word whose text is this string is a special token).
        special_tokens: the special-token strings (a piece holding one goes through ``token_spans``).
        token_spans: the textbook encoder of one piece (the oracle; also what raises on bad input).

    Returns:
        A :class:`~bpe_core.pieces.PieceTokens` with offsets in the pieces' original characters.

    Raises:
        TypeError, ValueError: as ``token_spans`` (a piece that is not a ``str``, an unpaired surrogate).
    """
    if not _use_kernel():
        return piece_tokens_from_spans([token_spans(p) for p in pieces], unknown_id)
    try:
        text = "".join(pieces)
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    except (TypeError, UnicodeEncodeError):  # token_spans raises the precise error
        return piece_tokens_from_spans([token_spans(p) for p in pieces], unknown_id)
    char_off = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=char_off[1:])
    fast = _encode_fast(pieces, cps, char_off, trie(), normalizer, max_chars, unknown_id, unk_token)
    slow = pieces_holding(text, char_off, special_tokens)
    if not slow.any():
        return fast
    fast_idx, slow_idx = np.flatnonzero(~slow), np.flatnonzero(slow)
    textbook = piece_tokens_from_spans([token_spans(pieces[i]) for i in slow_idx], unknown_id)
    return combine_piece_tokens(len(pieces), [(fast_idx, _subset(fast, fast_idx)), (slow_idx, textbook)])


def _encode_fast(pieces, cps, char_off, trie, normalizer, max_chars, unknown_id, unk_token) -> PieceTokens:
    """:func:`encode_pieces` by the kernel, special tokens read as text (``cps``, ``char_off``: the pieces packed)."""
    tables = (normalizer or IDENTITY).tables(cps)
    counts, ids, starts, ends = wordpiece_tokens(cps, char_off, tables, bert_classes(), trie, max_chars, unknown_id)
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    kinds = np.zeros(ids.size, dtype=np.uint8)
    unknown = np.flatnonzero(ids == unknown_id)
    if unknown.size:
        owner = np.searchsorted(offsets, unknown, side="right") - 1
        unk_bytes = unk_token.encode("utf-8")
        for t, p in zip(unknown.tolist(), owner.tolist()):
            text = pieces[p][starts[t] : ends[t]]
            kinds[t] = KIND_UNKNOWN if text.encode("utf-8") != unk_bytes else KIND_SPECIAL
    return PieceTokens(offsets, ids, starts, ends, kinds)
