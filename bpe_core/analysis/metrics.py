"""Compression and coverage figures of a tokenizer on a text.

Every figure is a plain count or ratio, defined here once so that the pages,
the command line and the tests agree on what each number means.  Words are
whitespace-separated: maximal runs of non-whitespace characters, the
unit "fertility" is usually counted in (tokens per word, as in Rust et al.,
2021, "How Good is Your Tokenizer?").

The pages' entry points are :func:`measure` (every figure of a text under any
tokenizer, choosing the path by the tokenizer's kind) and
:func:`compression_curve` (tokens of a text across vocabulary sizes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np
import regex

from ..interface import Tokenizer, TrainedTokenizer
from ..pretokenize import Split, aligned_chunks, tokenizer_split
from ..spans import TokenSpan
from .scripts import ScriptRow, script_breakdown

_WORD = regex.compile(r"\S+")

Piece = tuple[int, int, tuple[int, int] | None]
"""One part of a word as a tokenizer cut it: ``(start, end, byte_range)``.

``start``/``end`` are the token's character range clipped to the word.
``byte_range`` is ``None`` for a token made of whole characters; for a token
holding only part of a character it is the token's UTF-8 byte range clipped to
the word's, so that two different byte-level cuts of one character differ."""


@dataclass(frozen=True, slots=True)
class TextMetrics:
    """Figures for one tokenizer on one text.

    Attributes:
        tokens: number of tokens.
        characters: number of characters (Python code points).
        bytes: number of UTF-8 bytes.
        bytes_per_token: ``bytes / tokens`` (0.0 for no tokens); higher = more compression.
        chars_per_token: ``characters / tokens`` (0.0 for no tokens).
        words: whitespace-separated words (runs of non-space characters).
        words_split: words touched by two or more tokens.
        fertility: ``tokens / words``, tokens per word (0.0 for no words); every
            token counts, including whitespace-only and special tokens.
        distinct_tokens: number of different token ids used.
        vocab_size: the tokenizer's vocabulary size.
        vocab_used: ``distinct_tokens / vocab_size``, share of the vocabulary used.
        special_tokens: occurrences of special tokens (such as ``<|endoftext|>``)
            among the tokens, unknown-word tokens not included.
        unknown_tokens: tokens that stand for text the tokenizer cannot spell
            (WordPiece's ``[UNK]`` in place of a word); always 0 for byte-level BPE.
        byte_fallback_tokens: byte pieces (``<0xE3>``) spelling characters the
            vocabulary lacks (SentencePiece-style byte fallback, ``TokenSpan.is_byte_fallback``);
            always 0 for byte-level BPE.
        scripts: tokens per character for each character group present
            (:func:`bpe_core.analysis.scripts.script_breakdown`, in
            :data:`~bpe_core.analysis.scripts.SCRIPT_GROUPS` order); empty when not computed.
    """

    tokens: int
    characters: int
    bytes: int
    bytes_per_token: float
    chars_per_token: float
    words: int
    words_split: int
    fertility: float
    distinct_tokens: int
    vocab_size: int
    vocab_used: float
    special_tokens: int = 0
    unknown_tokens: int = 0
    byte_fallback_tokens: int = 0
    scripts: tuple[ScriptRow, ...] = ()

    @property
    def words_split_share(self) -> float:
        """``words_split / words`` (0.0 for no words)."""
        return _ratio(self.words_split, self.words)


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def word_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges ``(start, end)`` of the whitespace-separated words of ``text``, in order."""
    return [m.span() for m in _WORD.finditer(text)]


def word_pieces(
    text: str, spans: Sequence[TokenSpan], words: Sequence[tuple[int, int]] | None = None
) -> list[tuple[Piece, ...]]:
    """How the tokens cut each word: for every word, the :data:`Piece` of each token that overlaps it.

    A token overlaps a word when their character ranges intersect (a token
    such as ``" the"`` overlaps only the word ``the``; a token running over two
    words appears in both).  Empty tokens are left out.  Byte ranges (for
    tokens holding part of a character) assume a byte-level tokenizer, whose
    tokens' bytes concatenate to the text's UTF-8, the only kind that makes
    such tokens.

    Args:
        text: the encoded text.
        spans: its tokens, in order (``tokenizer.token_spans(text)``).
        words: the word ranges (default :func:`word_ranges` of ``text``).

    Returns:
        One tuple of pieces per word, same order as ``words``; a word of one
        piece is not split.
    """
    if words is None:
        words = word_ranges(text)
    byte_starts: list[int] | None = None
    if any(s.is_partial for s in spans):
        byte_starts = list(accumulate((len(s.token_bytes) for s in spans), initial=0))
    out: list[tuple[Piece, ...]] = []
    n = len(spans)
    si = 0
    prev_c = prev_b = 0  # a character offset and its byte offset, for the words' byte ranges
    for ws, we in words:
        while si < n and spans[si].end <= ws:
            si += 1
        pieces: list[Piece] = []
        k = si
        wbs = wbe = 0
        if byte_starts is not None:
            wbs = prev_b + len(text[prev_c:ws].encode("utf-8", errors="surrogatepass"))
            wbe = wbs + len(text[ws:we].encode("utf-8", errors="surrogatepass"))
            prev_c, prev_b = ws, wbs
        while k < n and spans[k].start < we:
            s = spans[k]
            if s.end > s.start and s.end > ws:
                byte_range = None
                if s.is_partial and byte_starts is not None:
                    byte_range = (max(byte_starts[k], wbs), min(byte_starts[k + 1], wbe))
                pieces.append((max(s.start, ws), min(s.end, we), byte_range))
            k += 1
        out.append(tuple(pieces))
    return out


def words_split_differently(text: str, spans_per_tokenizer: Sequence[Sequence[TokenSpan]]) -> list[tuple[int, int]]:
    """The words that the given tokenizers do not all cut the same way.

    Two tokenizers cut a word the same way when the tokens overlapping it,
    clipped to the word, give the same character ranges (and, for tokens that
    hold part of a character, the same byte ranges); a leading space inside a token
    does not count as a difference.

    Args:
        text: the text all tokenizers encoded.
        spans_per_tokenizer: each tokenizer's ``token_spans(text)``.

    Returns:
        The ``(start, end)`` character ranges of those words, in text order;
        empty for fewer than two tokenizers.
    """
    if len(spans_per_tokenizer) < 2:
        return []
    words = word_ranges(text)
    cuts = [word_pieces(text, spans, words) for spans in spans_per_tokenizer]
    return [w for i, w in enumerate(words) if any(c[i] != cuts[0][i] for c in cuts[1:])]


def _is_unknown(s: TokenSpan, unknown_id: int | None) -> bool:
    """An unknown-word token: the unknown id standing for text other than its own string."""
    return unknown_id is not None and s.id == unknown_id and s.display.encode("utf-8", "surrogatepass") != s.token_bytes


def compute_metrics(
    text: str, spans: Sequence[TokenSpan], vocab_size: int, unknown_id: int | None = None, *, scripts: bool = False
) -> TextMetrics:
    """Compute :class:`TextMetrics` from a text and its token spans.

    Args:
        text: the encoded text.
        spans: ``tokenizer.token_spans(text)``.
        vocab_size: ``tokenizer.vocab_size``.
        unknown_id: the id of the unknown token (WordPiece's ``[UNK]``), or
            ``None``.  A span with this id counts as unknown when it stands for
            other text (an unspellable word), as a special token when the text
            itself says ``[UNK]``.
        scripts: also fill ``scripts`` (:func:`bpe_core.analysis.scripts.script_breakdown`).

    Returns:
        The metrics.  A word counts as split when more than one token overlaps
        its character range (see :func:`word_pieces`); a character cut into
        several byte tokens therefore splits its word.

    This is the definition every faster path must equal: the chunked ones
    here, and the figures by distinct pieces of :mod:`bpe_core.analysis.corpus`.
    """
    rows = tuple(script_breakdown(text, spans)) if scripts else ()
    return metrics_from_counts(span_counts(text, spans, unknown_id), len({s.id for s in spans}), vocab_size, rows)


def span_counts(text: str, spans: Sequence[TokenSpan], unknown_id: int | None) -> Counts:
    """The additive :class:`Counts` of :func:`compute_metrics` (sum them over pieces of a text cut between words)."""
    pieces = word_pieces(text, spans)
    return Counts(
        tokens=len(spans),
        characters=len(text),
        bytes=len(text.encode("utf-8", errors="surrogatepass")),
        words=len(pieces),
        words_split=sum(1 for p in pieces if len(p) > 1),
        special_tokens=sum(1 for s in spans if s.is_special and not _is_unknown(s, unknown_id)),
        unknown_tokens=sum(1 for s in spans if _is_unknown(s, unknown_id)),
        byte_fallback_tokens=sum(1 for s in spans if s.is_byte_fallback),
    )


@dataclass(slots=True)
class Counts:
    """The additive counts behind :class:`TextMetrics` (they sum over the pieces of a text)."""

    tokens: int = 0
    characters: int = 0
    bytes: int = 0
    words: int = 0
    words_split: int = 0
    special_tokens: int = 0
    unknown_tokens: int = 0
    byte_fallback_tokens: int = 0

    def add(self, other: Counts) -> None:
        """Add ``other``'s counts to these."""
        for f in self.__slots__:
            setattr(self, f, getattr(self, f) + getattr(other, f))


def metrics_from_counts(
    c: Counts, distinct_tokens: int, vocab_size: int, scripts: tuple[ScriptRow, ...] = ()
) -> TextMetrics:
    """:class:`TextMetrics` from the additive counts and the number of distinct token ids used.

    Args:
        c: the additive counts (tokens, characters, bytes, words, ...).
        distinct_tokens: how many different token ids the text's tokens have.
        vocab_size: the tokenizer's vocabulary size (for the share of it used).
        scripts: the per-script rows, in :data:`~bpe_core.analysis.scripts.SCRIPT_GROUPS` order.
    """
    return TextMetrics(
        tokens=c.tokens,
        characters=c.characters,
        bytes=c.bytes,
        bytes_per_token=_ratio(c.bytes, c.tokens),
        chars_per_token=_ratio(c.characters, c.tokens),
        words=c.words,
        words_split=c.words_split,
        fertility=_ratio(c.tokens, c.words),
        distinct_tokens=distinct_tokens,
        vocab_size=vocab_size,
        vocab_used=_ratio(distinct_tokens, vocab_size),
        special_tokens=c.special_tokens,
        unknown_tokens=c.unknown_tokens,
        byte_fallback_tokens=c.byte_fallback_tokens,
        scripts=scripts,
    )


def basic_counts(text: str, n_tokens: int) -> dict[str, float]:
    """Tokens, characters, bytes and the two ratios, without needing the spans.

    Args:
        text: the text.
        n_tokens: its number of tokens under some tokenizer.

    Returns:
        ``{"tokens", "characters", "bytes", "bytes_per_token", "chars_per_token"}``.
    """
    n_bytes = len(text.encode("utf-8", errors="surrogatepass"))
    return {
        "tokens": n_tokens,
        "characters": len(text),
        "bytes": n_bytes,
        "bytes_per_token": _ratio(n_bytes, n_tokens),
        "chars_per_token": _ratio(len(text), n_tokens),
    }


def compute_metrics_chunked(
    text: str,
    token_spans: Callable[[str], Sequence[TokenSpan]],
    vocab_size: int,
    chunk_chars: int = 500_000,
    unknown_id: int | None = None,
    *,
    split: Split,
) -> TextMetrics:
    """:func:`compute_metrics` of a long text in bounded memory, one chunk at a time.

    The text is cut by :func:`bpe_core.pretokenize.aligned_chunks` at
    pre-token boundaries of the tokenizer's ``split`` that fall between two
    words; every count adds up over the chunks (distinct tokens as a union of
    ids), so the result equals ``compute_metrics(text, token_spans(text),
    vocab_size)``, unless a stretch of more than a million characters has no
    such boundary (one giant word).

    Args:
        text: the text.
        token_spans: the tokenizer's ``token_spans`` (or any function giving the
            spans of a piece of text).
        vocab_size: the tokenizer's vocabulary size.
        chunk_chars: the shortest chunk, in characters (a chunk ends at the
            first suitable boundary after that).
        unknown_id: as for :func:`compute_metrics`.
        split: the tokenizer's ``(pattern, special_tokens)``.

    Returns:
        The metrics of the whole text.

    Raises:
        Whatever ``token_spans`` raises; ValueError for ``chunk_chars < 1`` or
        a bad pattern or special-token list in ``split``.
    """

    def measure(piece: str) -> tuple[Counts, set[int]]:
        spans = token_spans(piece)
        return span_counts(piece, spans, unknown_id), {sp.id for sp in spans}

    return _chunked(text, measure, vocab_size, chunk_chars, split)


def _chunked(
    text: str, measure: Callable[[str], tuple[Counts, set[int]]], vocab_size: int, chunk_chars: int, split: Split
) -> TextMetrics:
    """Sum ``measure(piece)`` over the :func:`~bpe_core.pretokenize.aligned_chunks` of ``text``."""
    counts, ids = _chunked_counts(text, measure, chunk_chars, split)
    return metrics_from_counts(counts, len(ids), vocab_size)


def _chunked_counts(
    text: str, measure: Callable[[str], tuple[Counts, set[int]]], chunk_chars: int, split: Split
) -> tuple[Counts, set[int]]:
    """``(counts, ids)`` summed over the :func:`~bpe_core.pretokenize.aligned_chunks` of ``text``."""
    total = Counts()
    ids: set[int] = set()
    for start, end in aligned_chunks(text, chunk_chars, [split]):
        counts, used = measure(text[start:end])
        total.add(counts)
        ids |= used
    return total, ids


@functools.cache
def _whitespace_code_points() -> np.ndarray:
    r"""The code points ``regex``'s ``\s`` matches (the separators of :func:`word_ranges`), sorted."""
    every = "".join(map(chr, range(0x110000)))
    return np.array(sorted({ord(c) for c in regex.findall(r"\s", every)}), dtype=np.uint32)


def byte_lengths(vocab: Mapping[int, bytes]) -> np.ndarray:
    """A table of token lengths in bytes, indexed by token id, for :func:`byte_level_counts`.

    Args:
        vocab: ``{id: token bytes}`` (a tokenizer's ``vocab``).

    Returns:
        ``int64`` array of length ``max(id) + 1``; ids not in ``vocab`` hold 0.
    """
    table = np.zeros(max(vocab, default=-1) + 1, dtype=np.int64)
    for i, b in vocab.items():
        table[i] = len(b)
    return table


def byte_level_counts(
    text: str, ids: Sequence[int], lengths: np.ndarray, special_ids: frozenset[int] = frozenset()
) -> Counts:
    """The :class:`Counts` of a byte-level tokenizer's ids, without building a span per token.

    For a tokenizer whose tokens' bytes concatenate to the text's UTF-8 (byte-level
    BPE, the tiktoken encodings), this gives the same counts as
    :func:`compute_metrics` on its spans, computed with numpy: a word (a run of
    non-whitespace characters) is split exactly when a token boundary falls
    strictly inside the word's UTF-8 byte range, inside one of its characters included.

    Args:
        text: the encoded text (no unpaired surrogates).
        ids: its token ids.
        lengths: :func:`byte_lengths` of the tokenizer's vocabulary.
        special_ids: the ids of the special tokens.

    Returns:
        The counts (``unknown_tokens`` is 0: byte-level BPE spells everything).

    Raises:
        ValueError: an id outside ``lengths``, or tokens whose lengths do not add
            up to the text's UTF-8 length (not a byte-level tokenization of ``text``).
    """
    tok = np.asarray(ids, dtype=np.int64)
    if tok.size and (tok.min() < 0 or tok.max() >= len(lengths)):
        raise ValueError("a token id is outside the tokenizer's vocabulary")
    ends = np.cumsum(lengths[tok])  # byte offset after each token
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    char_bytes = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    starts_b = np.concatenate(([0], np.cumsum(char_bytes)))  # byte offset of each character, and the end
    n_bytes = int(starts_b[-1])
    token_bytes = int(ends[-1]) if ends.size else 0
    if token_bytes != n_bytes:
        raise ValueError(f"the tokens hold {token_bytes} bytes, the text {n_bytes}")
    word = ~np.isin(cps, _whitespace_code_points())
    edges = np.flatnonzero(np.diff(np.concatenate(([False], word, [False])).astype(np.int8)))
    w_start, w_end = starts_b[edges[0::2]], starts_b[edges[1::2]]  # each word's byte range
    inside = np.searchsorted(ends, w_end, "left") - np.searchsorted(ends, w_start, "right")
    return Counts(
        tokens=int(tok.size),
        characters=len(text),
        bytes=n_bytes,
        words=int(w_start.size),
        words_split=int(np.count_nonzero(inside > 0)),
        special_tokens=int(np.isin(tok, list(special_ids)).sum()) if special_ids else 0,
    )


def byte_level_metrics_chunked(
    text: str,
    encode: Callable[[str], Sequence[int]],
    lengths: np.ndarray,
    vocab_size: int,
    special_ids: frozenset[int] = frozenset(),
    chunk_chars: int = 500_000,
    *,
    split: Split,
) -> TextMetrics:
    """:func:`compute_metrics_chunked` for a byte-level tokenizer, from its ids (:func:`byte_level_counts`).

    Equal to ``compute_metrics(text, tokenizer.token_spans(text), vocab_size)``
    for byte-level BPE and the tiktoken encodings, at a fraction of the time
    and memory on long texts (no :class:`TokenSpan` per token).

    Args:
        text: the text.
        encode: the tokenizer's ``encode`` (or any function giving the same ids).
        lengths: :func:`byte_lengths` of its vocabulary.
        vocab_size: its vocabulary size.
        special_ids: the ids of its special tokens.
        chunk_chars: as for :func:`compute_metrics_chunked`.
        split: the tokenizer's ``(pattern, special_tokens)``.

    Returns:
        The metrics of the whole text.

    Raises:
        Whatever ``encode`` raises; ValueError as :func:`byte_level_counts` and
        :func:`compute_metrics_chunked`.
    """

    def measure(piece: str) -> tuple[Counts, set[int]]:
        ids = encode(piece)
        return byte_level_counts(piece, ids, lengths, special_ids), set(ids)

    return _chunked(text, measure, vocab_size, chunk_chars, split)


# ---------------------------------------------------------------------------
# the pages' entry points: choose the path by the tokenizer's kind


def measure(
    tokenizer: Tokenizer,
    text: str,
    chunk_chars: int = 500_000,
    split: Split | None = None,
    *,
    lengths: np.ndarray | None = None,
) -> TextMetrics:
    """Every :class:`TextMetrics` figure of ``text`` under ``tokenizer``, by the fastest exact path.

    A byte-level tokenizer (``tokenizer.is_byte_level``: trained BPE, the
    tiktoken encodings) is measured from its ids
    (:func:`byte_level_metrics_chunked`), encoded through
    ``tokenizer.fast_encoder()`` when it offers one (tiktoken, where its ids
    are provably ours); any other tokenizer (WordPiece, Unigram) from its spans
    (:func:`compute_metrics_chunked`), with ``tokenizer.unknown_id`` counting
    unspellable words.  Both give ``compute_metrics(text, tokenizer.token_spans(text),
    tokenizer.vocab_size, tokenizer.unknown_id)``.

    Args:
        tokenizer: any :class:`~bpe_core.interface.Tokenizer`.
        text: the text (no unpaired surrogates).
        chunk_chars: the shortest chunk, in characters (see :func:`compute_metrics_chunked`).
        split: the tokenizer's ``(pattern, special_tokens)`` (default
            :func:`~bpe_core.pretokenize.tokenizer_split` of it).
        lengths: :func:`byte_lengths` of a byte-level tokenizer's vocabulary,
            when the caller keeps it (computed here otherwise).

    Returns:
        The metrics of the whole text.

    Raises:
        TypeError, ValueError: as the tokenizer's ``encode``.

    >>> from bpe_core import train_bpe
    >>> tok = train_bpe("low lower lowest " * 20, 270)
    >>> m = measure(tok, "lower lowest")
    >>> m.tokens == len(tok.encode("lower lowest")), m.words
    (True, 2)
    """
    if split is None:
        split = tokenizer_split(tokenizer)
    if tokenizer.is_byte_level:
        fast = tokenizer.fast_encoder()
        return byte_level_metrics_chunked(
            text,
            fast if fast is not None else tokenizer.encode,
            byte_lengths(tokenizer.vocab) if lengths is None else lengths,
            tokenizer.vocab_size,
            frozenset(tokenizer.special_tokens.values()),
            chunk_chars,
            split=split,
        )
    return compute_metrics_chunked(
        text, tokenizer.token_spans, tokenizer.vocab_size, chunk_chars, tokenizer.unknown_id, split=split
    )


def compression_curve(
    tokenizer: TrainedTokenizer, text: str, sizes: Sequence[int], *, on_training_text: bool = False
) -> list[int]:
    """Tokens of ``text`` under ``tokenizer`` at each vocabulary size in ``sizes``.

    On the training text the counts come from the training itself
    (``training_text_tokens()`` of each view: BPE reads them off its trace, at
    no cost); otherwise, and where a view does not know, each view encodes
    ``text`` (through its ``fast_encoder()`` when it has one).

    Args:
        tokenizer: a trained tokenizer (any view of it).
        text: the text to count.
        sizes: vocabulary sizes, each in ``min_vocab_size..max_vocab_size``.
        on_training_text: ``text`` is the text ``tokenizer`` was trained on.

    Returns:
        ``list[int]``: the token count at each size, in the order of ``sizes``.

    Raises:
        TypeError, ValueError: a size out of range (as ``with_vocab_size``), or as ``encode``.

    >>> from bpe_core import train_bpe
    >>> text = "low lower lowest " * 20
    >>> tok = train_bpe(text, 262)
    >>> compression_curve(tok, text, [256, 262], on_training_text=True) == [
    ...     len(tok.with_vocab_size(256).encode(text)), len(tok.encode(text))]
    True
    """
    counts: list[int] = []
    for n in sizes:
        view = tokenizer.with_vocab_size(n)
        known = view.training_text_tokens() if on_training_text else None
        if known is None:
            fast = view.fast_encoder()
            known = len(fast(text) if fast is not None else view.encode(text))
        counts.append(known)
    return counts
