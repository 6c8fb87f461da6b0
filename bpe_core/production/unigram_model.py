"""XLM-RoBERTa's Unigram as shipped: SentencePiece's precompiled charsmap, then the project's Viterbi.

XLM-R (Conneau et al., 2020) is a SentencePiece Unigram model of 250,002
pieces.  Encoding a text (Hugging Face ``tokenizers``' ``Precompiled``
normalizer and ``Unigram`` model, which this module reproduces and its tests
check against):

1. special tokens (``<s> <pad> </s> <unk> <mask>``) are cut out of the raw text;
2. :class:`Charsmap` -- the *precompiled charsmap* (``nmt_nfkc``: NFKC and a
   few extra rules) maps text to text through a double-array trie of UTF-8
   keys; Hugging Face applies it per grapheme cluster (a cluster shorter than
   6 bytes whose bytes start with a key is replaced whole by the shortest
   key's value, else each character by its own value, else kept);
3. whitespace as SentencePiece's ``remove_extra_whitespaces``: runs of spaces
   become one, leading and trailing spaces go;
4. SentencePiece-style words (``▁`` before each, Hugging Face's ``Metaspace``),
   each segmented by Viterbi over the pieces' scores with Hugging Face's ties
   (:func:`bpe_core.unigram.encoder.viterbi`, through
   :class:`~bpe_core.unigram.UnigramTokenizer`).

The vocabulary, scores and charsmap come from llama.cpp's
``ggml-vocab-nomic-bert-moe.gguf`` (nomic-embed-text-v2-moe uses XLM-R's
tokenizer; the file pads the list to 250,048 with unused entries, dropped here).
"""

from __future__ import annotations

import struct
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace

import regex

from ..pieces import SplitPieces, piece_tokens_from_spans
from ..pretokenize import SENTENCEPIECE_PATTERN, split_special
from ..spans import TokenSpan
from ..unigram import UnigramTokenizer
from ..unigram.encoder import METASPACE, SENTENCEPIECE_RX
from ..unigram.trace import WordLattice, word_lattice
from .encodings import check_text
from .gguf_vocab import CONTROL, UNKNOWN, UNUSED, GGUFVocab

__all__ = ["Charsmap", "UnigramXLMR", "unigram_from_gguf"]

_CLUSTER = regex.compile(r"\X")
_SPACES = regex.compile(" {2,}")


class Charsmap:
    """SentencePiece's precompiled charsmap: a darts-clone double-array trie over UTF-8 keys and a string table.

    The blob (``normalizer_spec.precompiled_charsmap``; GGUF
    ``tokenizer.ggml.precompiled_charsmap``) is the trie's size in bytes
    (``uint32``), the trie (``uint32`` units), then the replacement strings,
    each ending in NUL; a key's value is its replacement's offset.

    Args:
        blob: the charsmap's bytes.

    Raises:
        ValueError: the blob is too short for the size it states.

    >>> cm = Charsmap(load_xlmr_charsmap())  # doctest: +SKIP
    >>> cm.normalize("ｈｅｌｌｏ①")  # doctest: +SKIP
    'hello1'
    """

    def __init__(self, blob: bytes) -> None:
        if len(blob) < 4:
            raise ValueError("a precompiled charsmap needs at least 4 bytes")
        (size,) = struct.unpack_from("<I", blob, 0)
        if size % 4 or 4 + size > len(blob):
            raise ValueError(f"precompiled charsmap: trie of {size} bytes does not fit in {len(blob)}")
        self._units = struct.unpack_from(f"<{size // 4}I", blob, 4)
        self._strings = blob[4 + size :]
        self._cache: dict[str, str] = {}
        self._ascii: dict[int, str] | None = None

    def first_match(self, key: bytes) -> str | None:
        """The replacement of the shortest key that ``key`` starts with, or ``None`` (darts' common prefix search).

        The traversal of ``Darts::DoubleArray::commonPrefixSearch``: a unit's
        ``offset`` is ``(u >> 10) << ((u & (1 << 9)) >> 6)``, its label
        ``u & ((1 << 31) | 0xFF)``, a leaf flag at bit 8, a leaf's value ``u & 0x7FFFFFFF``.
        """
        units = self._units
        unit = units[0]
        pos = (unit >> 10) << ((unit & 512) >> 6)
        for byte in key:
            pos ^= byte
            if pos >= len(units):
                return None
            unit = units[pos]
            if unit & 0x800000FF != byte:
                return None
            pos ^= (unit >> 10) << ((unit & 512) >> 6)
            if unit & 256:
                start = units[pos] & 0x7FFFFFFF
                end = self._strings.index(b"\0", start)
                return self._strings[start:end].decode("utf-8")
        return None

    def _cluster(self, g: str) -> str:
        """What Hugging Face's ``Precompiled`` makes of one grapheme cluster (cached)."""
        out = self._cache.get(g)
        if out is None:
            data = g.encode("utf-8")
            whole = self.first_match(data) if len(data) < 6 else None
            if whole is not None:
                out = whole
            else:
                out = "".join(m if (m := self.first_match(c.encode("utf-8"))) is not None else c for c in g)
            if len(self._cache) < 1 << 16:
                self._cache[g] = out
        return out

    def normalize(self, text: str) -> str:
        r"""``text`` through the charsmap, one grapheme cluster at a time (see the module docstring).

        An ASCII text without ``"\r\n"`` (the only ASCII cluster of two characters)
        is one cluster per character: one ``str.translate`` with each character's value.
        """
        if text.isascii() and "\r\n" not in text:
            if self._ascii is None:
                self._ascii = {c: self._cluster(chr(c)) for c in range(128)}
            return text.translate(self._ascii)
        return "".join([self._cluster(g) for g in _CLUSTER.findall(text)])

    def normalize_with_origin(self, text: str) -> tuple[str, list[int], list[int]]:
        """``(normalized, starts, ends)``: character ``j`` comes from the cluster ``text[starts[j]:ends[j]]``."""
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for m in _CLUSTER.finditer(text):
            out = self._cluster(m.group())
            parts.append(out)
            starts += [m.start()] * len(out)
            ends += [m.end()] * len(out)
        return "".join(parts), starts, ends


def _lattice_word(word: str) -> str:
    """A normalized word as XLM-R's lattice sees it: ``▁`` for its leading space, or put in front of it.

    SentencePiece adds a dummy ``▁`` before the text, and after the charsmap and the
    squeezing of spaces only a stretch's first word lacks a leading space: so every
    word of XLM-R's starts with ``▁`` (Hugging Face's ``Metaspace(prepend_scheme="always")``).
    """
    return METASPACE + (word[1:] if word[0] in " \u2581" else word)


def _squeeze_spaces(norm: str, starts: list[int], ends: list[int]) -> tuple[str, list[int], list[int]]:
    """SentencePiece's ``remove_extra_whitespaces`` on normalized text: one space per run, none at either end."""
    keep = [j for j, c in enumerate(norm) if c != " " or (j > 0 and norm[j - 1] != " ")]
    while keep and norm[keep[-1]] == " ":
        keep.pop()
    return "".join(norm[j] for j in keep), [starts[j] for j in keep], [ends[j] for j in keep]


class UnigramXLMR:
    """A production Unigram tokenizer: charsmap normalization, SentencePiece words, Viterbi with the pieces' scores.

    Args:
        pieces: ``(piece, score)`` by id (special tokens included, at their ids).
        special_tokens: the pieces matched in the raw text (``<s> <pad> </s> <unk> <mask>``).
        unk_token: the unknown piece.
        charsmap: the precompiled charsmap's bytes.
        name, source: display name and where the files came from.

    Raises:
        ValueError: as :meth:`~bpe_core.unigram.UnigramTokenizer.from_states` (a repeated piece,
            a special token that is not a piece), or a bad charsmap.

    Attributes:
        unigram: the :class:`~bpe_core.unigram.UnigramTokenizer` that segments the words.
        charsmap: the :class:`Charsmap`.
        pattern: :data:`bpe_core.pretokenize.SENTENCEPIECE_PATTERN` (the words, after normalization).
    """

    algorithm = "unigram"
    """The registered algorithm whose encoding this follows (Viterbi lattices), as a trained one's."""
    algorithm_label = "Unigram (SentencePiece)"
    is_byte_level = False
    special_text = True
    pattern = SENTENCEPIECE_PATTERN

    def __init__(
        self,
        pieces: Sequence[tuple[str, float]],
        special_tokens: Sequence[str],
        unk_token: str,
        charsmap: bytes,
        *,
        name: str,
        source: str = "",
    ) -> None:
        texts = [p for p, _ in pieces]
        self.unigram = UnigramTokenizer.from_states(
            texts, special_tokens, unk_token, base=len(texts), sizes=[len(texts)], scores=[[s for _, s in pieces]],
            name=name,
        )  # fmt: skip
        self.charsmap = Charsmap(charsmap)
        self.name = name
        self.source = source

    @property
    def vocab_size(self) -> int:
        """Pieces (XLM-R: 250,002)."""
        return self.unigram.vocab_size

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token: id}`` in id order."""
        return self.unigram.special_tokens

    @property
    def unknown_id(self) -> int:
        """``<unk>``'s id (3 for XLM-R)."""
        return self.unigram.unknown_id

    @property
    def pieces(self) -> list[str]:
        """Every piece, by id."""
        return self.unigram.pieces

    @property
    def scores(self) -> list[float]:
        """Every piece's score (log-probability), by id."""
        return self.unigram.scores

    @property
    def token_ids_by_bytes(self) -> dict[bytes, int]:
        """``{bytes: id}`` of the ordinary pieces, each under two keys.

        Its UTF-8 as written (``▁the``, as :meth:`token_bytes` and a Unigram
        trained with SentencePiece-style words give it) and with ``▁`` as the
        space it stands for (`` the``, as byte-level and regex-split vocabularies write it).

        For the vocabulary diff and the token dialog (:func:`~bpe_core.production.registry.production_token_ids`).
        """
        specials = set(self.special_tokens.values())
        out = {p.encode(): i for i, p in enumerate(self.pieces) if i not in specials}
        for i, p in enumerate(self.pieces):
            if i not in specials:
                out.setdefault(p.replace("\u2581", " ").encode(), i)
        return out

    def normalize(self, text: str) -> str:
        """What the lattice sees of a text with no special token: charsmap, then SentencePiece's spaces."""
        return _SPACES.sub(" ", self.charsmap.normalize(text)).strip(" ")

    def _words(self, text: str):
        """``(orig start, orig end, lattice word, normalized word, starts, ends)`` per word; ``None`` word: special."""
        check_text(text)
        offset = 0
        for segment, is_special in split_special(text, tuple(self.special_tokens)):
            if is_special:
                yield offset, offset + len(segment), None, segment, [], []
            else:
                norm, starts, ends = _squeeze_spaces(*self.charsmap.normalize_with_origin(segment))
                for m in SENTENCEPIECE_RX.finditer(norm):
                    s, e = m.span()
                    yield (
                        offset + starts[s], offset + ends[e - 1], _lattice_word(m.group()), m.group(),
                        [offset + x for x in starts[s:e]], [offset + x for x in ends[s:e]],
                    )  # fmt: skip
            offset += len(segment)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no ``<s>``/``</s>`` added).

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        check_text(text)
        out: list[int] = []
        specials = self.special_tokens
        encode_word = self.unigram.encode_word
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
                continue
            for w in SENTENCEPIECE_RX.findall(self.normalize(segment)):
                out.extend(encode_word(_lattice_word(w)))
        return out

    def fast_encoder(self) -> Callable[[str], list[int]]:
        """:meth:`encode` (normalized clusters and words are cached)."""
        return self.encode

    def decode(self, ids: Sequence[int]) -> str:
        """The pieces joined, ``▁`` as spaces, the first dropped (Hugging Face's ``Metaspace`` decoder)."""
        return self.unigram.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of a piece (``▁`` kept)."""
        return self.unigram.token_bytes(token_id)

    def describe_token(self, token_id: int) -> str:
        """A piece as written in the vocabulary (``▁world``)."""
        return self.unigram.describe_token(token_id)

    def rank_of(self, token_id: int) -> int | None:
        """``None``: a Unigram vocabulary has no merge order."""
        return None

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with offsets into ``text`` as typed.

        A piece covers the characters its normalized characters came from; the
        ``▁`` in front of a word stands for the space before it (or nothing, for
        the first word), so a piece that is only that ``▁`` is an empty span.
        Where normalization changed a cluster (``ｈ`` -> ``h``), ``display`` is
        the piece's text and a piece covering part of a cluster is ``is_partial``.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        check_text(text)
        out: list[TokenSpan] = []
        specials = self.special_tokens
        offset = 0
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(TokenSpan(specials[segment], segment.encode(), segment, offset, offset + len(segment), True))
            else:
                norm, starts, ends = _squeeze_spaces(*self.charsmap.normalize_with_origin(segment))
                starts = [offset + x for x in starts]
                ends = [offset + x for x in ends]
                for m in SENTENCEPIECE_RX.finditer(norm):
                    out += self._word_spans(m.group(), m.start(), starts, ends)
            offset += len(segment)
        return out

    def _word_spans(self, norm_word: str, ws: int, starts: list[int], ends: list[int]) -> list[TokenSpan]:
        """The spans of the normalized word at ``ws``; ``starts``/``ends``: the segment's origin (text offsets)."""
        word = _lattice_word(norm_word)
        lead = len(word) - len(norm_word)  # 1 when the ▁ was put in front, 0 when the word began with a space
        unk, pieces = self.unknown_id, self.pieces
        out = []
        for s, e, i in self.unigram.word_arcs(word):
            a, b = ws + max(s - lead, 0), ws + e - lead
            if b <= a:  # only the ▁ put in front: it stands for no character
                out.append(TokenSpan(i, pieces[i].encode(), pieces[i], starts[ws], starts[ws], i == unk))
                continue
            start, end = starts[a], ends[b - 1]
            partial = (a > 0 and starts[a - 1] == start) or (b < len(starts) and starts[b] == starts[b - 1])
            shown = word[s:e] if i == unk else pieces[i]
            out.append(TokenSpan(i, pieces[i].encode(), shown, start, end, i == unk, partial))
        return out

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this tokenizer (:class:`bpe_core.interface.CorpusPieces`): by whole units.

        Each distinct unit is one piece.  A unit that starts a document is
        encoded alone; any other starts with a space after a non-space
        character and is encoded after ``"a"`` (the tokens of ``"a"`` then
        dropped), so its leading space is not stripped as a text's first one
        is.  That equals the text only where the character before the space
        normalizes to something that ends in a non-space and forms no grapheme
        cluster with the space: no unit ends after any other character
        (:meth:`_cut_after`), nor after a special token's last character.
        """
        key = ("xlmr-units", id(self.charsmap), tuple(sorted(self.special_tokens)))
        return SplitPieces(self, key, None, self._encode_units, cut_after=self._cut_after())

    def _cut_after(self):
        """``uint8[0x110000]``: the characters after which a unit may end (see :meth:`corpus_pieces`)."""
        table = self.__dict__.get("_cut_table")
        if table is not None:
            return table
        import numpy as np

        table = np.zeros(0x110000, dtype=np.uint8)
        for cp in range(0x30000):
            c = chr(cp)
            if unicodedata.category(c)[0] not in "LNPS" or not (cp < 0x80 or c.isprintable()):
                continue
            out = self.charsmap._cluster(c)
            if out and not out[-1].isspace() and len(_CLUSTER.findall(c + " ")) == 2:
                table[cp] = 1
        for s in self.special_tokens:
            table[ord(s[-1])] = 0
        self.__dict__["_cut_table"] = table
        return table

    def _encode_units(self, pieces, first):
        """:meth:`corpus_pieces`' encoder: each unit's spans as inside the text."""
        lead = len(self.token_spans("a"))
        out: list[list[TokenSpan]] = []
        for piece, at_start in zip(pieces, first):
            if at_start:
                out.append(self.token_spans(piece))
            else:
                out.append(
                    [replace(sp, start=sp.start - 1, end=sp.end - 1) for sp in self.token_spans("a" + piece)[lead:]]
                )
        return piece_tokens_from_spans(out, self.unknown_id)

    def encode_steps(self, text: str, k: int = 5) -> list[WordLattice]:
        """Each word's lattice, best path and ``k`` runners-up (:func:`bpe_core.unigram.trace.word_lattice`).

        The lattices are the normalized words'; the ``text`` of each is the characters it came from.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[WordLattice] = []
        table = self.unigram.piece_table()
        for ws, we, word, norm_word, _starts, _ends in self._words(text):
            if word is None:
                out.append(
                    WordLattice(norm_word, norm_word, ws, we, True, (), None, (), (self.special_tokens[norm_word],))
                )
            else:
                out.append(word_lattice(self.unigram, text[ws:we], word, ws, we, table, k))
        return out

    def __repr__(self) -> str:
        return f"UnigramXLMR(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


def unigram_from_gguf(vocab: GGUFVocab, name: str) -> UnigramXLMR:
    """A :class:`UnigramXLMR` from a ``t5``-type (Unigram) GGUF vocabulary.

    ``CONTROL`` and ``UNKNOWN`` pieces are the special tokens; trailing
    ``UNUSED`` entries (padding) are dropped.

    Raises:
        ValueError: not a ``t5`` model, no scores or no charsmap.
    """
    if vocab.model != "t5" or not vocab.scores or not vocab.precompiled_charsmap:
        raise ValueError(f"{vocab.name}: not a Unigram vocabulary with scores and a precompiled charsmap")
    n = len(vocab.tokens)
    while n and vocab.token_types[n - 1] == UNUSED:
        n -= 1
    specials = [t for t, k in zip(vocab.tokens[:n], vocab.token_types[:n]) if k in (CONTROL, UNKNOWN)]
    unk = next(t for t, k in zip(vocab.tokens, vocab.token_types) if k == UNKNOWN)
    pieces = list(zip(vocab.tokens[:n], vocab.scores[:n]))
    return UnigramXLMR(pieces, specials, unk, vocab.precompiled_charsmap, name=name, source=vocab.source)
