"""Byte-level BPE, the encoder: text to ids and back, and tiktoken's fast path.

Encoding splits out the special tokens (longest match first), pre-tokenizes the
rest with the tokenizer's pattern and, inside each pre-token, applies the
lowest-rank merge present until none applies (leftmost occurrence first) --
GPT-2's and tiktoken's rule.  Short pre-tokens use :func:`merge_short` (a list
scan in C), long ones :func:`merge_long` (a heap, O(n log n)); both give the
same ids.  Pre-tokens are cached per tokenizer view.
Each pre-token's ids must equal :func:`bpe_core.textbook.bpe.encode_word`'s (tests/engine/test_textbook.py).

:class:`BPEEncoder` is mixed into :class:`bpe_core.bpe.model.BPETokenizer`,
whose ``_setup`` builds the tables it reads (``_rx``, ``_ranks``, ``_shift``,
``_new_ids``, ``_n_merges``, ``_byte_ids``, ``_identity_bytes``, ``_specials``,
``_special_ids``, ``_vocab_full``, ``_cache``).  :meth:`BPEEncoder.fast_encoder`
is the one place that decides when tiktoken may encode for it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..pieces import (
    PieceTokens,
    SplitPieces,
    lookup_pieces,
    pack_utf8,
    piece_tokens_from_byte_ranges,
    piece_tokens_from_ids,
    regex_pieces,
    token_lengths,
)
from ..pretokenize import iter_pretoken_strings, pretokenize, split_special, splits_at_spaces, surrogate_message
from ..spans import TokenSpan, spans_from_token_bytes
from .ranks import covering_pattern, mergeable_ranks, ranks_to_vocab_merges

if TYPE_CHECKING:
    import regex

__all__ = ["CACHE_LIMIT", "LONG_PIECE", "NO_RANK", "BPEEncoder", "merge_long", "merge_short"]

LONG_PIECE = 64
"""Pre-tokens longer than this many bytes are encoded with a heap (:func:`merge_long`)."""

CACHE_LIMIT = 1 << 20
"""Pre-tokens cached per tokenizer view (the cache is emptied when full)."""

NO_RANK = 1 << 62
"""Rank of a pair no merge makes (above every real rank)."""


def merge_short(ids: list[int], rank_get: Callable, shift: int, new_ids: Sequence[int], limit: int) -> tuple[int, ...]:
    """BPE inside one short pre-token (``ids`` of length >= 2, mutated): the lowest-rank merge until none applies.

    ``ranks[i]`` holds the merge rank of the pair ``(ids[i], ids[i + 1])``, or a
    rank past the view's last merge (``limit``).  Each round merges the lowest-rank
    pair, leftmost first (``min`` and ``index`` run in C), then re-ranks only the
    two pairs next to it.  Merging one occurrence at a time gives the same result
    as replacing every occurrence of the pair at once: a pair that contains the
    new token always ranks after it, so the next lowest rank is the same pair
    further right, if any.  Module-level, with its tables passed in, so that the
    encoder's hot loop binds them once per segment.
    """
    ranks = [rank_get(ids[i] << shift | ids[i + 1], NO_RANK) for i in range(len(ids) - 1)]
    while ranks:
        best = min(ranks)
        if best >= limit:
            break
        i = ranks.index(best)
        new = new_ids[best]
        ids[i] = new
        del ids[i + 1]
        del ranks[i]
        if i < len(ranks):
            ranks[i] = rank_get(new << shift | ids[i + 1], NO_RANK)
        if i > 0:
            ranks[i - 1] = rank_get(ids[i - 1] << shift | new, NO_RANK)
    return tuple(ids)


def merge_long(ids: list[int], rank_get: Callable, shift: int, new_ids: Sequence[int], limit: int) -> list[int]:
    """BPE inside one long pre-token: :func:`merge_short`'s result in O(n log n), with a heap of (rank, position).

    Args as :func:`merge_short` (``ids`` is mutated); returns the ids as a list.
    """
    get = rank_get
    n = len(ids)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        r = get(ids[i] << shift | ids[i + 1])
        if r is not None and r < limit:
            heap.append((r, i, ids[i], ids[i + 1]))
    heapq.heapify(heap)
    while heap:
        r, i, a, b = heapq.heappop(heap)
        j = nxt[i]
        if not alive[i] or j >= n or ids[i] != a or ids[j] != b:
            continue
        new = new_ids[r]
        ids[i] = new
        alive[j] = False
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            r2 = get(new << shift | ids[k])
            if r2 is not None and r2 < limit:
                heapq.heappush(heap, (r2, i, new, ids[k]))
        p = prv[i]
        if p >= 0:
            r2 = get(ids[p] << shift | new)
            if r2 is not None and r2 < limit:
                heapq.heappush(heap, (r2, p, ids[p], new))
    out = []
    i = 0
    while i < n:
        out.append(ids[i])
        i = nxt[i]
    return out


class BPEEncoder:
    """Mixin of :class:`~bpe_core.bpe.model.BPETokenizer`: encoding, decoding, spans and the fast path."""

    _rx: regex.Pattern
    _ranks: dict[int, int]
    _shift: int
    _new_ids: list[int]
    _n_merges: int
    _byte_ids: list[int]
    _identity_bytes: bool
    _specials: dict[str, int]
    _special_ids: frozenset[int]
    _vocab_full: dict[int, bytes]
    _cache: dict[str, tuple[int, ...]]
    _pattern: str
    _pattern_name: str | None
    name: str
    vocab_size: int
    rank_of: Callable[[int], int | None]
    merges: list[tuple[bytes, bytes]]

    def _encode_piece(self, data: bytes) -> tuple[int, ...]:
        """BPE inside one pre-token: apply the lowest-rank merge until none applies."""
        ids = list(data) if self._identity_bytes else [self._byte_ids[x] for x in data]
        if len(ids) < 2 or self._n_merges == 0:
            return tuple(ids)
        if len(ids) > LONG_PIECE:
            return tuple(merge_long(ids, self._ranks.get, self._shift, self._new_ids, self._n_merges))
        return merge_short(ids, self._ranks.get, self._shift, self._new_ids, self._n_merges)

    def _encode_ordinary(self, segment: str, out: list[int]) -> None:
        cache = self._cache
        get = cache.get
        extend = out.extend
        # the cache-miss path of _encode_piece, inlined with its tables bound once per segment
        limit = self._n_merges
        rank_get = self._ranks.get
        shift = self._shift
        new_ids = self._new_ids
        byte_id = None if self._identity_bytes else self._byte_ids.__getitem__
        for piece in iter_pretoken_strings(segment, self._rx):
            ids = get(piece)
            if ids is None:
                try:
                    data = piece.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise ValueError(surrogate_message(piece, exc)) from None
                if len(data) > LONG_PIECE or limit == 0:
                    ids = self._encode_piece(data)
                else:
                    seq = list(data) if byte_id is None else list(map(byte_id, data))
                    ids = merge_short(seq, rank_get, shift, new_ids, limit) if len(seq) > 1 else tuple(seq)
                if len(cache) >= CACHE_LIMIT:
                    cache.clear()
                cache[piece] = ids
            extend(ids)

    def encode(self, text: str) -> list[int]:
        """Encode text to token ids.

        Special tokens in ``text`` (longest match first) become their ids; the rest
        is pre-tokenized with the pattern and each pre-token is merged on its own.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]`` of token ids.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate (no UTF-8 form).

        >>> from bpe_core import train_bpe
        >>> tok = train_bpe("low lower lowest " * 10, 260)  # merges: o+w, l+ow, " "+low, " low"+e
        >>> [tok.describe_token(i) for i in tok.encode("lowest")]
        ['low', 'e', 's', 't']
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        out: list[int] = []
        specials = self._specials
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
            else:
                self._encode_ordinary(segment, out)
        return out

    def encode_iterable(self, chunks: Iterable[str]) -> Iterator[int]:
        """Encode a stream of text lazily, in memory bounded by the longest pre-token.

        Gives exactly ``encode("".join(chunks))``: the pre-tokens near the end of
        the buffered text, which more text could still change, are held back
        until the next chunk arrives.  (This relies on the split pattern looking
        at most a few characters ahead and never behind, true of all named patterns.)

        Args:
            chunks: an iterable of ``str``, such as an open text file (its lines).

        Yields:
            Token ids, ``int``.

        Raises:
            TypeError: a chunk is not a ``str``.
            ValueError: the text holds an unpaired surrogate.
        """
        specials = tuple(self._specials)
        hold = max([16, *(len(s) for s in specials)])
        buf = ""
        for chunk in chunks:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable needs str chunks, got {type(chunk).__name__}")
            buf += chunk
            if len(buf) <= 2 * hold:
                continue
            safe = self._safe_cut(buf, specials, hold)
            if safe > 0:
                yield from self.encode(buf[:safe])
                buf = buf[safe:]
        if buf:
            yield from self.encode(buf)

    def _safe_cut(self, buf: str, specials: tuple[str, ...], hold: int) -> int:
        """A pre-token boundary in ``buf`` that more text appended at the end cannot move."""
        limit = len(buf) - hold
        cut = 0
        for pt in pretokenize(buf, self._pattern, specials):
            if pt.end > limit:
                break
            cut = pt.end
        return cut

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the tokens.

        Raises:
            ValueError: an id is not in this tokenizer's vocabulary.
        """
        v = self._vocab_full
        try:
            return b"".join([v[i] for i in ids])
        except (KeyError, TypeError):
            bad = [i for i in ids if not isinstance(i, int) or i not in v]
            raise ValueError(f"unknown token id {bad[0]!r} (vocab size {self.vocab_size})") from None

    def decode(self, ids: Iterable[int]) -> str:
        """Decode ids to text; bytes that do not form valid UTF-8 become U+FFFD.

        Raises:
            ValueError: an id is not in this tokenizer's vocabulary.

        >>> from bpe_core import train_bpe
        >>> tok = train_bpe("low lower lowest " * 10, 260)
        >>> tok.decode(tok.encode("lower 🦀")), tok.decode([0xF0, 0x9F])
        ('lower 🦀', '�')
        """
        return self.decode_bytes(list(ids)).decode("utf-8", errors="replace")

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets, specials and partial-UTF-8 flags.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]``; see :class:`bpe_core.spans.TokenSpan`.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        ids = self.encode(text)
        v = self._vocab_full
        return spans_from_token_bytes(
            text, ids, [v[i] for i in ids], special_ids=self._special_ids, rank_of=self.rank_of
        )

    # -- corpus figures --------------------------------------------------------

    def corpus_pieces(self) -> SplitPieces | None:
        """How corpus figures measure this view (:class:`bpe_core.interface.CorpusPieces`): by its pre-tokens.

        A unit is cut at its special tokens and its pre-tokens
        (:func:`bpe_core.pieces.regex_splitter`); each pre-token is merged on its
        own, all of them in the compiled kernel (:meth:`_encode_pieces`, equal to
        :meth:`_encode_pieces_textbook`: :meth:`encode` of each piece alone).  ``None``
        for a pattern not known to split at spaces
        (:func:`bpe_core.pretokenize.splits_at_spaces`: a custom regex, ``none``),
        which is then measured on the whole text.
        """
        if not splits_at_spaces(self._pattern):
            return None
        return regex_pieces(self, self._pattern, tuple(self._specials), self._encode_pieces)

    def _encode_pieces(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder: every piece's merges in one compiled call over its UTF-8, in threads.

        :func:`bpe_core.bpe.piece_merge_kernel.encode_byte_pieces` with this view's merges (a special
        token is that one token).  Must equal :meth:`_encode_pieces_textbook`
        (``tests/engine/test_byte_bpe_pieces.py``), which runs where no compiled kernels can.

        Raises:
            ValueError: a piece holds an unpaired surrogate.
        """
        from ..counting import native

        if native.carrier() is None:
            return self._encode_pieces_textbook(pieces, first)
        from .piece_merge_kernel import byte_merge_tables, encode_byte_pieces

        specials = self._specials
        cached = self.__dict__.get("_byte_tables")
        if cached is None or cached[0] != self._n_merges:  # tables per view (its number of merges)
            tables = byte_merge_tables(self._byte_ids, self._ranks, self._shift, self._new_ids, self._n_merges)
            cached = self.__dict__["_byte_tables"] = (self._n_merges, tables)
        data, offsets = pack_utf8(pieces)
        whole = lookup_pieces(pieces, np.diff(offsets), specials)
        tokens = encode_byte_pieces(cached[1], data, offsets, whole)
        return piece_tokens_from_byte_ranges(data, offsets, *tokens, self._special_ids)

    def _encode_pieces_textbook(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook :meth:`_encode_pieces`: :meth:`encode` of each piece alone, in Python."""
        lengths = token_lengths(self._vocab_full)
        return piece_tokens_from_ids(pieces, [self.encode(p) for p in pieces], lengths, self._special_ids)

    # -- tiktoken's fast path --------------------------------------------------

    def tiktoken_exact(self) -> bool:
        """Whether :meth:`to_tiktoken` gives exactly :meth:`encode`'s ids on every text.

        Checks the conditions of :meth:`to_tiktoken`'s docstring: no two tokens
        share their bytes (1), every token is rebuilt by its own merge (2), a
        named split pattern (3; a custom regex is not proven to cut alike in
        tiktoken's engine) and no special token a prefix of another (4).
        Remembered per view.
        """
        cached = self.__dict__.get("_tiktoken_exact")
        if cached is not None:
            return cached
        specials = list(self._specials)
        ok = self._pattern_name is not None and not any(a != b and b.startswith(a) for a in specials for b in specials)
        if ok:
            ranks = mergeable_ranks(self)
            ok = len(ranks) == self.vocab_size - len(specials)
        if ok:
            try:
                ok = ranks_to_vocab_merges(ranks)[1] == self.merges
            except ValueError:
                ok = False
        self.__dict__["_tiktoken_exact"] = ok
        return ok

    def fast_encoder(self):
        """``text -> ids`` through :meth:`to_tiktoken` when :meth:`tiktoken_exact`, else ``None``."""
        if not self.tiktoken_exact():
            return None
        enc = self.__dict__.get("_tiktoken")
        if enc is None:
            try:
                enc = self.to_tiktoken()
            except ValueError:
                return None
            self.__dict__["_tiktoken"] = enc
        return lambda text: enc.encode(text, allowed_special="all")

    def to_tiktoken(self, name: str | None = None):
        """A ``tiktoken.Encoding`` of this view, for fast encoding of long texts.

        The encoding's ``mergeable_ranks`` map each non-special token's bytes to
        its id here (single bytes and merged tokens); the special tokens are
        passed to tiktoken separately with their ids (:func:`bpe_core.formats.tiktoken.mergeable_ranks`).
        The split pattern is :func:`bpe_core.formats.tiktoken.covering_pattern` of this
        tokenizer's: for a pattern that leaves text unmatched (``bert`` leaves
        whitespace), one more alternative takes each such run as one piece,
        since tiktoken drops what its pattern does not match while
        :meth:`encode` encodes it.  Encode with ``enc.encode(text, allowed_special="all")``
        to treat special tokens as :meth:`encode` does.

        Two merges with the same bytes: training can, rarely, create the same
        byte string by two different merges (ids i < j).  tiktoken's ranks are
        keyed by bytes, so only the earlier id i is kept; j is left out of the
        encoding (its ids have a gap there), tiktoken never emits j, and where
        this tokenizer would produce j tiktoken produces i or a different split.
        Check ``len(set(tok.vocab.values())) == tok.vocab_size`` before relying
        on equal ids.

        When the ids are equal: tiktoken merges, inside each pre-token, the
        adjacent pair whose *concatenated bytes* have the lowest rank (and
        returns a pre-token that is itself a token directly), while
        :meth:`encode` applies the lowest-ranked *merge rule* (a pair of ids).
        The two give the same ids when

        1. no two tokens share their bytes (see above);
        2. every token is rebuilt by its own merge: tiktoken's procedure on the
           token's bytes, using only lower-ranked tokens, ends in exactly the two
           parts of the merge that created it -- then no other pair of tokens
           with the same concatenation can get merged first.  This is what
           :func:`bpe_core.formats.tiktoken.ranks_to_vocab_merges` relies on
           (``ranks_to_vocab_merges(enc._mergeable_ranks)[1] == tok.merges``
           checks it); GPT-2's, cl100k's and o200k's ranks and the tokenizers
           :func:`train_bpe` produces on the tests' real texts satisfy it;
        3. the split pattern cuts text the same way in tiktoken's Rust regex
           engine (``fancy-regex``) as in Python's ``regex`` and never matches
           the empty string (true of the named patterns); and
        4. no special token is a prefix of another: tiktoken matches special
           tokens with an alternation in hash-map order, this tokenizer takes
           the longest match.

        Args:
            name: the encoding's name (default: this tokenizer's ``name``).

        Returns:
            ``tiktoken.Encoding``.

        Raises:
            ValueError: tiktoken's regex engine rejects the split pattern.
        """
        import tiktoken

        return tiktoken.Encoding(
            name or self.name,
            pat_str=covering_pattern(self._pattern),
            mergeable_ranks=mergeable_ranks(self),  # the earliest id of duplicated bytes only
            special_tokens=dict(self._specials),
        )
