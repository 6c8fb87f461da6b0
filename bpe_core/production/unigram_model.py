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

Corpus figures encode every distinct unit of a corpus at once
(:meth:`UnigramXLMR.unit_tokens`): the same steps over the units' code points
joined -- grapheme clusters, the charsmap, the spaces and the lattice words in
compiled code (:func:`bpe_core.unigram.kernels._normalized_lattice`, twin of
:func:`normalized_lattice_numpy`), then Viterbi once per distinct word.

The vocabulary, scores and charsmap come from llama.cpp's
``ggml-vocab-nomic-bert-moe.gguf`` (nomic-embed-text-v2-moe uses XLM-R's
tokenizer; the file pads the list to 250,048 with unused entries, dropped here).
"""

from __future__ import annotations

import struct
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import regex

from ..pieces import (
    KIND_SPECIAL,
    PieceTokens,
    SplitPieces,
    code_points,
    combine_piece_tokens,
    drop_ranges,
    piece_tokens_from_spans,
)
from ..pretokenize import SENTENCEPIECE_PATTERN, split_special
from ..spans import TokenSpan
from ..unigram import UnigramTokenizer
from ..unigram.batch import (
    PLAIN,
    in_batches,
    metaspace_lattice,
    prefixed_code_points,
    special_kinds,
    unknown_kinds,
)
from ..unigram.encoder import METASPACE, SENTENCEPIECE_RX, compiled_encoder_ready, viterbi_packed
from ..unigram.trace import WordLattice, word_lattice
from .encodings import check_text
from .gguf_vocab import CONTROL, UNKNOWN, UNUSED, GGUFVocab

__all__ = [
    "Charsmap",
    "UnigramXLMR",
    "cluster_values",
    "normalize_packed",
    "normalized_lattice",
    "normalized_lattice_numpy",
    "squeeze_packed",
    "sure_breaks",
    "unigram_from_gguf",
]

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


_SIMPLE = regex.compile(
    r"[\p{Grapheme_Cluster_Break=Other}\p{Grapheme_Cluster_Break=Control}\p{Grapheme_Cluster_Break=CR}"
    r"\p{Grapheme_Cluster_Break=LF}]"
)
"""Characters whose grapheme-break class joins nothing: between two of them \\X always breaks, but for CR LF."""


def sure_breaks(codes: np.ndarray, starts: np.ndarray, simple: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Where a grapheme cluster surely starts, and the runs between those places that ``\X`` must cut.

    Between two characters of :data:`_SIMPLE` classes (Other, Control, CR, LF)
    no rule of UAX #29 but CR LF joins, so a cluster starts there, as at every
    string's start.  The compiled twin: :func:`bpe_core.unigram.kernels._sure_breaks`.

    Args:
        codes: ``int32``, the strings' code points joined.
        starts: ``int64[n + 1]``, each string's start.
        simple: ``uint8[0x110000]``, 1 for the characters of :data:`_SIMPLE` (at least those in ``codes``).

    Returns:
        ``(brk, run_start, run_len)``: ``uint8`` 1 at every sure start; the runs of more than one
        character between two sure starts (``int64`` each).

    >>> simple = np.ones(0x110000, np.uint8); simple[769] = 0
    >>> brk, a, m = sure_breaks(np.array([97, 101, 769, 13, 10, 98], np.int32), np.array([0, 6]), simple)
    >>> brk.tolist(), a.tolist(), m.tolist()  # "é\r\n" is one run: the break after a mark is \X's to find
    ([1, 1, 0, 0, 0, 1], [1], [4])
    """
    n = codes.size
    sc = simple[codes].astype(bool)
    brk = np.ones(n, dtype=np.uint8)
    brk[1:] = sc[1:] & sc[:-1] & ~((codes[:-1] == 13) & (codes[1:] == 10))
    brk[starts[:-1][starts[:-1] < n]] = 1
    sure = np.flatnonzero(brk)
    lens = np.diff(np.append(sure, n))
    return brk, sure[lens > 1], lens[lens > 1]


def cluster_values(
    charsmap: Charsmap, text: str | None, codes: np.ndarray, starts: np.ndarray, *, compiled: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The grapheme clusters (``regex``'s ``\X``) of many strings and what the charsmap makes of each.

    The sure cluster starts come from :func:`sure_breaks` (or its compiled twin,
    ``compiled``); each run between two of them is cut by ``\X`` itself, whose
    rules look back only over characters that join, so inside the run as inside
    its string.  Each cluster's value is :meth:`Charsmap._cluster`'s.

    Args:
        charsmap: the charsmap.
        text: the strings joined (``None``: read off ``codes`` where needed).
        codes: ``int32``, ``text``'s code points.
        starts: ``int64[n + 1]``, each string's start in ``codes``.
        compiled: find the sure starts in compiled code.

    Returns:
        ``(brk, key, vcodes, voff)``: ``uint8`` 1 where a cluster starts; at a cluster's start, the row of
        its value (``int64``); the values' code points joined (``int32``) and each one's start in them
        (``int64[rows + 1]``): one row per distinct character, one per longer cluster.
    """
    present = np.zeros(0x110000, dtype=bool)
    present[codes] = True
    uniq = np.flatnonzero(present)
    simple = np.zeros(0x110000, dtype=np.uint8)
    simple[[c for c in uniq.tolist() if _SIMPLE.match(chr(c))]] = 1
    if compiled:
        from ..unigram import kernels as K

        brk = np.empty(codes.size, dtype=np.uint8)
        run_start, run_len = np.empty(codes.size, dtype=np.int64), np.empty(codes.size, dtype=np.int64)
        runs = K._sure_breaks(codes, starts, simple, brk, run_start, run_len)
        run_start, run_len = run_start[:runs], run_len[:runs]
    else:
        brk, run_start, run_len = sure_breaks(codes, starts, simple)
    row_of = np.zeros(0x110000, dtype=np.int64)
    row_of[uniq] = np.arange(uniq.size)
    key = row_of[codes]
    values = [charsmap._cluster(chr(c)) for c in uniq.tolist()]
    if text is None and run_start.size:
        text = codes.astype(np.uint32).tobytes().decode("utf-32-le")
    for a, m in zip(run_start.tolist(), run_len.tolist()):
        pos = a
        for g in _CLUSTER.findall(text[a : a + m]):
            brk[pos] = 1
            if len(g) > 1:
                key[pos] = len(values)
                values.append(charsmap._cluster(g))
            pos += len(g)
    vcodes, voff = code_points(values)
    return brk, key, vcodes, voff


def normalize_packed(
    codes: np.ndarray, starts: np.ndarray, brk: np.ndarray, key: np.ndarray, vcodes: np.ndarray, voff: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`Charsmap.normalize_with_origin` of many strings at once, as arrays.

    Args:
        codes: ``int32``, the strings' code points joined.
        starts: ``int64[n + 1]``, each one's start.
        brk: ``uint8``, 1 where a cluster starts (:func:`cluster_values`).
        key: ``int64``, at a cluster's start the row of its value.
        vcodes: ``int32``, the values' code points joined.
        voff: ``int64[rows + 1]``, each value's start in ``vcodes``.

    Returns:
        ``(norm, origin_start, origin_end, nstart)``: the normalized code points joined (``int32``), each
        one's cluster (``int64``, positions in ``codes``), each string's start in ``norm``.
    """
    cstart = np.flatnonzero(brk)
    clen = np.diff(np.append(cstart, codes.size))
    row = key[cstart]
    olen = np.diff(voff)[row]
    total = np.concatenate([[0], np.cumsum(olen)])
    within = np.arange(int(total[-1]), dtype=np.int64) - np.repeat(total[:-1], olen)
    norm = vcodes[np.repeat(voff[:-1][row], olen) + within]
    nstart = total[np.searchsorted(cstart, starts, side="left")]
    return norm, np.repeat(cstart, olen), np.repeat(cstart + clen, olen), nstart


def normalized_lattice_numpy(
    codes: np.ndarray, starts: np.ndarray, brk: np.ndarray, key: np.ndarray, vcodes: np.ndarray, voff: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lattice words of many strings after the charsmap and SentencePiece's spaces, each character's origin.

    :func:`normalize_packed`, :func:`squeeze_packed`, then
    :func:`~bpe_core.unigram.batch.metaspace_lattice` with a ``"▁"`` in front of
    every string that does not start with one (as :func:`_lattice_word`).

    Args:
        codes: ``int32``, the strings' code points joined.
        starts: ``int64[n + 1]``, each one's start.
        brk: as :func:`normalize_packed`.
        key: as :func:`normalize_packed`.
        vcodes: as :func:`normalize_packed`.
        voff: as :func:`normalize_packed`.

    Returns:
        ``(lattice, orig_start, orig_end, wstart, wstring)``: the lattice code points (``int32``); per
        lattice character, the cluster it comes from (positions in ``codes``; a ``"▁"`` put in front: the
        start of its string's first character, twice); the words' starts (``int64[n_words + 1]``, every
        word starts with ``"▁"``) and each word's string.  The compiled twin:
        :func:`bpe_core.unigram.kernels._normalized_lattice`.
    """
    n = starts.size - 1
    norm, o_start, o_end, nstart = normalize_packed(codes, starts, brk, key, vcodes, voff)
    kept, sstart = squeeze_packed(norm, nstart)
    sq = norm[kept]
    nonempty = np.diff(sstart) > 0
    head = np.zeros(n, dtype=np.int32)
    head[nonempty] = sq[sstart[:-1][nonempty]]
    lead = (nonempty & (head != 0x20) & (head != 0x2581)).astype(np.int64)
    lattice, lstart, _ = metaspace_lattice(sq, sstart, lead)
    put = lstart[:-1][lead > 0]
    at = np.ones(lattice.size, dtype=bool)
    at[put] = False
    orig_start, orig_end = np.empty(lattice.size, np.int64), np.empty(lattice.size, np.int64)
    orig_start[at], orig_end[at] = o_start[kept], o_end[kept]
    orig_start[put] = orig_end[put] = o_start[kept[sstart[:-1][lead > 0]]]
    wstart = np.append(np.flatnonzero(lattice == 0x2581), lattice.size)  # every word starts with "▁"
    return lattice, orig_start, orig_end, wstart, np.searchsorted(lstart, wstart[:-1], side="right") - 1


def normalized_lattice(
    codes: np.ndarray, starts: np.ndarray, brk: np.ndarray, key: np.ndarray, vcodes: np.ndarray, voff: np.ndarray,
    *, compiled: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """:func:`normalized_lattice_numpy`, or its compiled twin (``compiled``; numba's JIT when not built)."""
    if not compiled:
        return normalized_lattice_numpy(codes, starts, brk, key, vcodes, voff)
    from ..unigram import kernels as K

    room = int(np.bincount(key, minlength=voff.size - 1) @ np.diff(voff)) + starts.size - 1  # every character's value
    lattice = np.empty(room, dtype=np.int32)
    orig_start, orig_end = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    wstart, wstring = np.empty(room + 1, dtype=np.int64), np.empty(room, dtype=np.int64)
    words = K._normalized_lattice(codes, starts, brk, key, vcodes, voff, lattice, orig_start, orig_end, wstart, wstring)
    size = int(wstart[words])
    return lattice[:size], orig_start[:size], orig_end[:size], wstart[: words + 1], wstring[:words]


def squeeze_packed(norm: np.ndarray, nstart: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SentencePiece's ``remove_extra_whitespaces`` (:func:`_squeeze_spaces`) on many normalized strings.

    Args:
        norm: ``int32``, the normalized strings joined.
        nstart: ``int64[n + 1]``, each string's start.

    Returns:
        ``(kept, sstart)``: the positions in ``norm`` kept (``int64``, sorted) and each string's start in them.

    >>> squeeze_packed(np.array([32, 97, 32, 32, 98, 32, 99], np.int32), np.array([0, 6, 7]))[0].tolist()
    [1, 2, 4, 6]
    """
    n = norm.size
    is_sp = norm == 0x20
    at_start = np.zeros(n, dtype=bool)
    at_start[nstart[:-1][nstart[:-1] < n]] = True
    prev_sp = np.concatenate([[False], is_sp[:-1]])
    kept = np.flatnonzero(~(is_sp & (at_start | prev_sp)))
    if kept.size:
        string = np.searchsorted(nstart, kept, side="right") - 1
        last = np.append(string[1:] != string[:-1], True)
        kept = kept[~(last & is_sp[kept])]  # one trailing space at most (runs are one space now)
    return kept, np.searchsorted(kept, nstart, side="left")


def _drop_lead(tokens: PieceTokens, after_a: np.ndarray, lead: int) -> PieceTokens:
    """The tokens of strings written ``"a" + unit`` (``after_a``) less their first ``lead``, one character back.

    Such a string's first ``lead`` tokens are those of ``"a"`` (the unit starts with a space, so ``"a"`` is a
    word of its own).
    """
    after_a = np.asarray(after_a, dtype=bool)
    counts = np.diff(tokens.offsets)
    if (counts[after_a] < lead).any():
        raise ValueError(f"a string written 'a' + unit has fewer than the {lead} tokens of 'a'")
    heads = tokens.offsets[:-1][after_a]
    keep = np.ones(int(tokens.offsets[-1]), dtype=bool)
    for r in range(lead):
        keep[heads + r] = False
    shift = np.repeat(after_a.astype(np.int64), counts)
    dropped = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(after_a * lead, out=dropped[1:])
    return PieceTokens(
        tokens.offsets - dropped, tokens.ids[keep], (tokens.starts - shift)[keep], (tokens.ends - shift)[keep],
        tokens.kinds[keep],
    )  # fmt: skip


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
        All units are encoded at once by :meth:`unit_tokens` (its oracle:
        :meth:`textbook_unit_tokens`, the units one by one).
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
        """:meth:`corpus_pieces`' encoder: every unit at once (:meth:`unit_tokens`, compiled when built)."""
        return self.unit_tokens(pieces, first, compiled=compiled_encoder_ready())

    def textbook_unit_tokens(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook encoder of :meth:`corpus_pieces`: each unit's spans as inside the text, one by one.

        A unit that starts a document is :meth:`token_spans` alone; any other is
        ``token_spans("a" + unit)`` less the tokens of ``"a"``, moved one character back.
        What :meth:`unit_tokens` must equal.
        """
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

    def unit_tokens(self, pieces: Sequence[str], first: Sequence[bool], *, compiled: bool) -> PieceTokens:
        """:meth:`textbook_unit_tokens` of all units at once, as arrays, without a Python object per token.

        The strings :meth:`textbook_unit_tokens` encodes (each unit, ``"a"`` in
        front of those that do not start a document) go through the same steps
        over their code points joined: grapheme clusters (:func:`cluster_starts`),
        the charsmap per cluster with each character's origin
        (:func:`normalize_packed`), SentencePiece's spaces (:func:`squeeze_packed`),
        the lattice words (:func:`~bpe_core.unigram.batch.metaspace_lattice`) and
        every word's Viterbi at once (:func:`~bpe_core.unigram.encoder.viterbi_packed`);
        then the tokens of ``"a"`` are dropped.  Units holding a special token go
        the textbook way.  Equal to :meth:`textbook_unit_tokens` (tested).

        Args:
            pieces: the distinct units.
            first: each unit starts a document.
            compiled: run the compiled Viterbi (else the Python one, the same tokens).

        Returns:
            A :class:`~bpe_core.pieces.PieceTokens` of ``len(pieces)`` units.

        Raises:
            ValueError: a unit holds an unpaired surrogate (as :meth:`token_spans`).
        """
        first = np.asarray(first, dtype=bool)
        try:
            codes, starts = prefixed_code_points(pieces, ~first, "a")
        except UnicodeEncodeError:  # an unpaired surrogate: the textbook path raises token_spans' error
            return self.textbook_unit_tokens(pieces, first)
        plain = self._without_specials(pieces, first, codes, starts)
        idx, rest = np.flatnonzero(plain), np.flatnonzero(~plain)
        codes, starts = drop_ranges(codes, starts, rest)

        def encode(b: np.ndarray) -> PieceTokens:
            a, z = (int(b[0]), int(b[-1]) + 1) if b.size else (0, 0)
            return self._plain_unit_tokens(codes[starts[a] : starts[z]], starts[a : z + 1] - starts[a], compiled)

        tokens = _drop_lead(in_batches(np.diff(starts), encode), ~first[idx], len(self.token_spans("a")))
        textbook = self.textbook_unit_tokens([pieces[i] for i in rest.tolist()], first[rest])
        return combine_piece_tokens(len(pieces), [(idx, tokens), (rest, textbook)])

    def _without_specials(self, pieces, first: np.ndarray, codes: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """``bool[n]``: the units that hold no special token.

        :func:`special_kinds` of only the units that hold the first character of one; ``codes``/``starts``:
        the strings :meth:`unit_tokens` encodes.
        """
        plain = np.ones(len(pieces), dtype=bool)
        specials = tuple(self.special_tokens)
        if not specials or not codes.size:
            return plain
        firsts = np.array(sorted({ord(t[0]) for t in specials}), dtype=np.int32)
        maybe = np.unique(np.searchsorted(starts, np.flatnonzero(np.isin(codes, firsts)), side="right") - 1)
        strings = [pieces[i] if first[i] else "a" + pieces[i] for i in maybe.tolist()]
        plain[maybe] = special_kinds(strings, specials) == PLAIN
        return plain

    def _plain_unit_tokens(self, codes: np.ndarray, xstart: np.ndarray, compiled: bool) -> PieceTokens:
        """:meth:`token_spans` of strings without special tokens, as arrays (offsets in each string).

        ``codes``: ``int32``, the strings' code points joined; ``xstart``: ``int64[n + 1]``, each one's start.
        """
        n = xstart.size - 1
        clusters = cluster_values(self.charsmap, None, codes, xstart, compiled=compiled)
        lattice, orig_start, orig_end, wstart, wstring = normalized_lattice(codes, xstart, *clusters, compiled=compiled)
        word, s, e, ids = viterbi_packed(lattice, wstart, self.unigram.piece_table(), compiled=compiled)
        string = wstring[word]
        ls, le = wstart[word] + s, wstart[word] + e
        starts, ends = orig_start[ls] - xstart[string], orig_end[le - 1] - xstart[string]
        kinds = np.zeros(ids.size, dtype=np.uint8)
        unk = ids == self.unknown_id
        if unk.any():
            empty = starts == ends  # only the "▁" put in front: shown as the unknown piece itself
            kinds[unk & empty] = KIND_SPECIAL
            hard = unk & ~empty
            kinds[hard] = unknown_kinds(lattice, ls[hard], le[hard], self.unigram.unk_token)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(string, minlength=n), out=offsets[1:])
        return PieceTokens(offsets, ids, starts, ends, kinds)

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
