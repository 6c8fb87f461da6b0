"""WordPiece, the encoder: greedy longest-match-first, decoding and token spans.

Inside each word (:mod:`bpe_core.wordpiece.words`) the longest vocabulary
piece that starts there is taken, with the continuing-subword prefix (``##``)
on every piece but the first; a word that cannot be covered, or that is longer
than ``max_input_chars_per_word`` characters, becomes the unknown token.  This
gives exactly Hugging Face ``tokenizers``' ``WordPiece`` model's ids, and the textbook's
:func:`bpe_core.textbook.wordpiece.encode_word` pieces (tests/engine/test_wordpiece.py).

:class:`WordPieceEncoder` is mixed into
:class:`bpe_core.wordpiece.model.WordPieceTokenizer`, whose ``_setup`` builds the
tables it reads (``_piece_ids``, ``_tokens``, ``_n``, ``_prefix``,
``_max_piece``, ``_max_chars``, ``_unknown_id``, ``_unk_token``, ``_specials``,
``_special_ids``, ``_lowercase``, ``_cache``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..pieces import PieceTokens, SplitPieces
from ..pretokenize import split_special
from ..spans import TokenSpan
from .batch import CharNormalizer, encode_pieces, vocabulary_trie
from .words import BERT_RX, bert_words, lowercase_text, normalize_with_origin, surrogate_error

__all__ = ["WORD_CACHE_LIMIT", "WordPieceEncoder"]

WORD_CACHE_LIMIT = 1 << 18
"""Words cached per tokenizer view (the cache is emptied when full)."""

LOWERCASE = CharNormalizer(lowercase_text)
"""Lower-casing per character as tables (:meth:`WordPieceEncoder.encode_pieces`)."""


class WordPieceEncoder:
    """Mixin of :class:`~bpe_core.wordpiece.model.WordPieceTokenizer`: encoding, decoding and spans."""

    _piece_ids: dict[str, int]
    _tokens: list[str]
    _n: int
    _prefix: str
    _max_piece: int
    _max_chars: int
    _unknown_id: int
    _unk_token: str
    _specials: dict[str, int]
    _special_ids: frozenset[int]
    _lowercase: bool
    _cache: dict[str, tuple[int, ...]]
    rank_of: Callable[[int], int | None]

    def encode_word(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first piece ids of one (normalized) word, cached.

        Returns:
            The ids, ``##`` pieces after the first; ``(unknown_id,)`` when the word cannot be
            spelt or is longer than the tokenizer's ``max_input_chars_per_word``.
        """
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        n = len(word)
        if n > self._max_chars:
            ids = (self._unknown_id,)
        else:
            get = self._piece_ids.get
            limit = self._n
            prefix = self._prefix
            longest = self._max_piece
            out: list[int] = []
            start = 0
            while start < n:
                end = min(n, start + longest)
                while end > start:
                    i = get(word[start:end] if start == 0 else prefix + word[start:end])
                    if i is not None and i < limit:
                        break
                    end -= 1
                else:
                    out = [self._unknown_id]
                    break
                out.append(i)
                start = end
            ids = tuple(out)
        if len(self._cache) >= WORD_CACHE_LIMIT:
            self._cache.clear()
        self._cache[word] = ids
        return ids

    def _check_text(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.isascii():
            err = surrogate_error(text)
            if err is not None:
                raise err

    def encode(self, text: str) -> list[int]:
        """Encode text to token ids.

        Special tokens (longest match first) become their ids; the rest is
        lower-cased if configured, split BERT-style into words, and each word is
        encoded greedily, longest vocabulary match first, with the prefix on
        every piece after the first.  Whitespace yields no token.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]`` of token ids.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        self._check_text(text)
        out: list[int] = []
        specials = self._specials
        encode_word = self.encode_word
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
                continue
            norm = lowercase_text(segment) if self._lowercase else segment
            for word in bert_words(norm):
                out.extend(encode_word(word))
        return out

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this view (:class:`bpe_core.interface.CorpusPieces`): by whole units.

        Lower-casing maps each character on its own and whitespace separates
        words, so a unit (which starts at a space) is encoded alone as inside
        the text; each distinct unit is one piece, encoded by
        :meth:`encode_pieces` (equal to :meth:`token_spans` on each).  The key
        ``("units",)`` is BERT's too: they share one count.
        """
        return SplitPieces(self, ("units",), encode=self.encode_pieces)

    def encode_pieces(self, pieces: Sequence[str], first: Sequence[bool] | None = None) -> PieceTokens:
        """The tokens of many distinct pieces at once, equal to :meth:`token_spans` on each piece.

        :func:`bpe_core.wordpiece.batch.encode_pieces`: the pieces' normal forms,
        BERT-style words and greedy longest-match-first in one compiled pass
        (the textbook path when the kernels are off).

        Args:
            pieces: ``str`` pieces (units of a corpus, or any text).
            first: unused (WordPiece puts nothing at a document's start).

        Returns:
            A :class:`~bpe_core.pieces.PieceTokens`, character offsets from each piece's start.

        Raises:
            TypeError, ValueError: as :meth:`token_spans`.

        >>> from bpe_core.wordpiece import WordPieceTokenizer
        >>> tok = WordPieceTokenizer(["[UNK]", "un", "##able", "a"], ("[UNK]",))
        >>> pt = tok.encode_pieces(["unable", " a zz"])  # "zz" cannot be spelt: [UNK], kind 2 (unknown)
        >>> pt.offsets.tolist(), pt.ids.tolist(), pt.starts.tolist(), pt.ends.tolist(), pt.kinds.tolist()
        ([0, 2, 4], [1, 2, 3, 0], [0, 2, 1, 3], [2, 6, 2, 5], [0, 0, 0, 2])
        """
        return encode_pieces(
            pieces,
            trie=self._vocabulary_trie,
            normalizer=LOWERCASE if self._lowercase else None,
            max_chars=self._max_chars,
            unknown_id=self._unknown_id,
            unk_token=self._unk_token,
            special_tokens=tuple(self._specials),
            token_spans=self.token_spans,
        )

    def _vocabulary_trie(self) -> tuple:
        """:func:`bpe_core.wordpiece.batch.vocabulary_trie` of this view, built once."""
        cached = self.__dict__.get("_trie")
        if cached is None or cached[0] != self._n:
            cached = self._trie = (self._n, vocabulary_trie(self._piece_ids, self._prefix, self._n))
        return cached[1]

    def words(self, text: str) -> list[str]:
        """The words encoding sees: special tokens, then BERT-style pre-tokens of the (lower-cased) rest.

        Args:
            text: any ``str``.

        Returns:
            ``list[str]`` in text order.
        """
        self._check_text(text)
        out: list[str] = []
        for segment, is_special in split_special(text, tuple(self._specials)):
            if is_special:
                out.append(segment)
            else:
                out.extend(bert_words(lowercase_text(segment) if self._lowercase else segment))
        return out

    def normalize(self, text: str) -> str:
        """The whitespace normal form that :meth:`decode` returns: the words joined by one space.

        ``decode(encode(text)) == normalize(text)`` whenever no word of ``text``
        becomes the unknown token: whitespace runs become one space, a space
        appears around every punctuation character and special token
        (``"Hi, you."`` -> ``"Hi , you ."``), and the text is lower-cased when
        the tokenizer lower-cases.

        Args:
            text: any ``str``.

        Returns:
            ``" ".join(self.words(text))``.
        """
        return " ".join(self.words(text))

    def decode(self, ids: Iterable[int]) -> str:
        """Decode ids: pieces with the prefix join the previous token, all other tokens are separated by a space.

        This is Hugging Face's ``decoders.WordPiece(cleanup=False)``: a leading
        continuation piece keeps its prefix, and the unknown token decodes as
        its string (``"[UNK]"``).  See :meth:`normalize` for the round trip.

        Args:
            ids: token ids of this view.

        Returns:
            The decoded ``str``.

        Raises:
            ValueError: an id is not in this view.
        """
        toks = self._tokens
        prefix = self._prefix
        plen = len(prefix)
        limit = self._n
        parts: list[str] = []
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < limit:
                raise ValueError(f"unknown token id {i!r} (vocab size {limit})")
            s = toks[i]
            if k == 0:
                parts.append(s)
            elif i not in self._special_ids and s.startswith(prefix):
                parts.append(s[plen:])
            else:
                parts.append(" " + s)
        return "".join(parts)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets into ``text`` itself.

        Offsets refer to the original text also when lower-casing changed its
        length (``İ`` -> ``i̇``).  ``display`` is the covered original text (so a
        coloured view shows the text as typed; the vocabulary string is in
        ``token_bytes``); a piece that covers only part of what one character
        lower-cased to is ``is_partial`` and displays its lower-cased text.  An
        unknown word is one span with the unknown token's id, ``is_special``
        set, covering the whole word.  Whitespace between words belongs to no
        span.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]`` in text order, with ``is_continuation`` set on
            ``##`` pieces and ``rank`` the merge rank of merged tokens.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        return self.token_spans_with(text, self.encode_word)

    def token_spans_with(self, text: str, pieces_of: Callable[[str], Sequence[int] | None]) -> list[TokenSpan]:
        """Token spans of ``text`` with each word cut by ``pieces_of`` instead of greedy matching.

        The Merges page draws the trainer's own segmentation at step *k* with it
        (see :mod:`bpe_core.wordpiece.trace`); :meth:`token_spans` passes the
        greedy encoder.  Special tokens, normalisation and offsets are as in
        :meth:`token_spans`.

        Args:
            text: any ``str`` without unpaired surrogates.
            pieces_of: ``word -> ids`` (the word as normalised and split, e.g.
                lower-cased); ``None`` or ``(unknown_id,)`` draws the word as ``[UNK]``.

        Returns:
            ``list[TokenSpan]`` in text order.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        self._check_text(text)
        out: list[TokenSpan] = []
        toks = self._tokens
        plen = len(self._prefix)
        unk = self._unknown_id
        unk_bytes = self._unk_token.encode("utf-8")
        offset = 0
        for segment, is_special in split_special(text, tuple(self._specials)):
            if is_special:
                out.append(
                    TokenSpan(
                        self._specials[segment], segment.encode("utf-8"), segment, offset, offset + len(segment), True
                    )
                )
                offset += len(segment)
                continue
            norm, origin = normalize_with_origin(segment, self._lowercase)
            for m in BERT_RX.finditer(norm):
                ws, we = m.span()
                ids = pieces_of(m.group())
                if ids is None or tuple(ids) == (unk,):
                    s, e = (ws, we) if origin is None else (origin[ws], origin[we - 1] + 1)
                    out.append(TokenSpan(unk, unk_bytes, segment[s:e], offset + s, offset + e, True))
                    continue
                pos = ws
                for k, i in enumerate(ids):
                    piece = toks[i]
                    length = len(piece) - plen if k else len(piece)
                    ns, ne = pos, pos + length
                    pos = ne
                    partial = False
                    if origin is None:
                        s, e = ns, ne
                    else:
                        s, e = origin[ns], origin[ne - 1] + 1
                        partial = (ns > 0 and origin[ns - 1] == s) or (ne < len(norm) and origin[ne] == e - 1)
                    display = norm[ns:ne] if partial else segment[s:e]
                    out.append(
                        TokenSpan(
                            id=i,
                            token_bytes=piece.encode("utf-8"),
                            display=display,
                            start=offset + s,
                            end=offset + e,
                            is_partial=partial,
                            rank=self.rank_of(i),
                            is_continuation=k > 0,
                        )
                    )
            offset += len(segment)
        return out
