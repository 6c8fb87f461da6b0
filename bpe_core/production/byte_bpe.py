"""Byte-level BPE in Hugging Face's form: a vocab, ranked merges, a sequence of splits and added tokens.

Hugging Face ``tokenizer.json`` files (DeepSeek V4) and llama.cpp's ``gpt2``-type
GGUF vocabularies (GPT-2, Qwen 2, Llama 3, StarCoder, Falcon, ...) describe
byte-level BPE the same way:

* **added tokens** (``added_tokens``; GGUF ``CONTROL`` and ``USER_DEFINED`` tokens)
  are cut out of the raw text first, longest match first, each one id;
* **pre-tokenization** is a sequence of ``Split`` regexes, each with the
  ``Isolated`` behaviour: every match becomes a piece of its own and so does
  every stretch between matches, and each split runs inside the pieces of the
  one before (:class:`SplitSequence`; one regex for most tokenizers, three for
  DeepSeek V4, up to five in llama.cpp's list);
* each piece is UTF-8 encoded and its bytes merged, lowest merge rank first,
  leftmost first, as in :mod:`bpe_core.bpe.encoder` -- whose
  :func:`~bpe_core.bpe.encoder.merge_short` / :func:`~bpe_core.bpe.encoder.merge_long`
  do the merging here too; a merge's result is the id the vocabulary gives its
  string (two merges may make the same token, which the project's own
  :class:`~bpe_core.bpe.BPETokenizer` cannot express);
* with ``ignore_merges`` (Llama 3's ``tokenizer.json``), a piece that is itself a
  token is that token, as tiktoken looks pieces up before merging.

Tokens in these files are written in GPT-2's byte-to-unicode alphabet
(:func:`bpe_core.formats.huggingface.byte_to_unicode`: a space is ``Ġ``);
:func:`hf_token_bytes` reads them back as bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property, lru_cache

import numpy as np

from ..bpe.encoder import LONG_PIECE, merge_long, merge_short
from ..formats.huggingface import byte_to_unicode
from ..pieces import (
    PieceTokens,
    SplitPieces,
    combine_piece_tokens,
    lookup_pieces,
    pack_utf8,
    piece_tokens_from_byte_ranges,
    piece_tokens_from_ids,
    piece_tokens_from_spans,
    token_lengths,
)
from ..pretokenize import TIKTOKEN_SOURCES, compile_pattern, iter_pretoken_strings, split_special
from ..spans import TokenSpan, display_bytes, spans_from_token_bytes
from ..steps import EncodeStep, PieceSteps
from .encodings import check_text

__all__ = ["ByteLevelBPE", "SplitSequence", "hf_token_bytes", "parse_merge"]

CACHE_LIMIT = 1 << 18
"""Pieces cached per tokenizer (the cache is emptied when full)."""

LEVEL_CACHE_CHARS = 256
"""A piece of a split sequence's inner level up to this many characters has its ids cached (words repeat)."""


class SplitSequence:
    r"""Hugging Face's ``pre_tokenizers.Sequence`` of ``Split(pattern, behavior="Isolated")``, in order.

    Each pattern cuts every piece the previous ones left into its matches and
    the stretches between them (:func:`bpe_core.pretokenize.iter_pretoken_strings`
    on that piece alone, so a look-ahead at a piece's end sees the end of the
    string, as Hugging Face runs each split on each piece).

    Args:
        patterns: regex sources (``regex``-module syntax), applied in order.

    Raises:
        ValueError: no pattern, or a pattern that does not compile or matches the empty string.

    >>> SplitSequence([r"\p{N}{1,3}", r" ?\p{L}+|\s+"]).split("in 2024 AD")
    ['in', ' ', '202', '4', ' AD']
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        if isinstance(patterns, str) or not patterns:
            raise ValueError("a split sequence needs a list of one or more regex sources")
        self.patterns = tuple(patterns)
        self._rx = [compile_pattern(p) for p in self.patterns]

    @property
    def main(self) -> str:
        """The last pattern (the word-level one): what a single-pattern consumer (``Tokenizer.pattern``) gets."""
        return self.patterns[-1]

    def __len__(self) -> int:
        return len(self._rx)

    def level(self, k: int, text: str) -> list[str]:
        """Pattern ``k``'s split of one piece: its matches and the stretches between them, in order.

        tiktoken's patterns go through :func:`bpe_core.pretokenize.iter_pretoken_strings`
        (its exact twins for the characters the two regex engines classify
        differently); the others through one ``finditer`` pass.
        """
        rx = self._rx[k]
        if rx.pattern in TIKTOKEN_SOURCES:
            return iter_pretoken_strings(text, rx)
        out: list[str] = []
        pos = 0
        for m in rx.finditer(text):
            s, e = m.span()
            if s == e:
                continue
            if s > pos:
                out.append(text[pos:s])
            out.append(text[s:e])
            pos = e
        if pos < len(text):
            out.append(text[pos:])
        return out

    def split(self, text: str) -> list[str]:
        """The pieces of ``text`` (no special tokens in it), in order; they concatenate to ``text``."""
        pieces = [text] if text else []
        for k in range(len(self._rx)):
            out: list[str] = []
            for p in pieces:
                out += self.level(k, p)
            pieces = out
        return pieces

    def __repr__(self) -> str:
        return f"SplitSequence({list(self.patterns)!r})"


PROBE_AFTER: tuple[str, ...] = (
    "a", "A", "é", "ß", "ǅ", "ʰ", "中", "ｈ", "ก", "ა", "Ω", "я", "1", "٣", "Ⅻ", "½", ",", "'", "(", "-", "=", "€",
    "≠", "^", "\u0301", "\x01", "\u200b", "\u00a0", "\u3000", "\t", "\n", "\r", "\u2581", "<", "😀",
)  # fmt: skip
"""What may follow the space of a unit cut when :func:`cut_table` probes a split sequence: one character of each
general category, and the classes the registered patterns name (ASCII, Latin, CJK, Thai, Georgian, ``▁``)."""


@lru_cache(maxsize=16)
def cut_table(patterns: tuple[str, ...]) -> np.ndarray:
    """``uint8[0x110000]``: the characters ``X`` after which a split sequence cuts ``"X" + " " + Y`` at the space.

    A split sequence's pieces can run across such a space (DeepSeek Coder's
    ``" = "``: no pattern of it matches ``=``, so it and the spaces around stay
    one stretch).  Every ``X`` below U+0800 and a few above it are probed with
    each ``Y`` of :data:`PROBE_AFTER`: ``X`` is allowed when the split of
    ``X + " " + Y`` is the split of ``X`` followed by that of ``" " + Y``
    (probed 128 at a time, newline-separated; one by one where a batch differs);
    no other character is (corpus units then do not end after it).  A probe,
    not a proof: ``tests/engine/test_corpus.py`` checks the registered files
    on real and adversarial texts.

    Args:
        patterns: :attr:`SplitSequence.patterns`.
    """
    splits = SplitSequence(patterns)
    table = np.zeros(0x110000, dtype=np.uint8)
    probes = [c for c in (*map(chr, range(0x21, 0x800)), *"中ｈกაΩ€≠😀ⅫⅩ") if not c.isspace()]
    heads = {x: splits.split(x) for x in probes}
    ok = dict.fromkeys(probes, True)
    for y in PROBE_AFTER:
        tail, lone = splits.split(" " + y + "\n"), splits.split(" " + y)
        alive = [x for x in probes if ok[x]]
        for k in range(0, len(alive), 128):
            batch = alive[k : k + 128]
            want = [p for x in batch for p in (*heads[x], *tail)]
            if splits.split("".join(x + " " + y + "\n" for x in batch)) == want:
                continue
            for x in batch:
                ok[x] = splits.split(x + " " + y) == heads[x] + lone
    for x, good in ok.items():
        table[ord(x)] = good
    return table


def hf_token_bytes(token: str) -> bytes | None:
    """The bytes a token in GPT-2's byte-to-unicode alphabet stands for, or ``None`` if it is not in that alphabet.

    >>> hf_token_bytes("Ġworld"), hf_token_bytes("<|endoftext|>"), hf_token_bytes("世")
    (b' world', b'<|endoftext|>', None)
    """
    table = _UNICODE_TO_BYTE
    try:
        return bytes([table[c] for c in token])
    except KeyError:
        return None


_UNICODE_TO_BYTE = {c: b for b, c in byte_to_unicode().items()}


def parse_merge(merge: str | Sequence[str]) -> tuple[str, str]:
    """A merge as ``(left, right)``, from either form a file writes it in.

    ``"left right"`` is cut at the first space after the first character (as
    llama.cpp reads GGUF merges); newer ``tokenizer.json`` files write a two-item list.

    Raises:
        ValueError: neither form.
    """
    if isinstance(merge, str):
        cut = merge.find(" ", 1)
        if cut > 0:
            return merge[:cut], merge[cut + 1 :]
    elif len(merge) == 2 and all(isinstance(x, str) for x in merge):
        return merge[0], merge[1]
    raise ValueError(f"not a merge: {merge!r}")


class ByteLevelBPE:
    """A byte-level BPE production tokenizer (DeepSeek V4, llama.cpp's ``gpt2``-type vocabularies).

    Args:
        name: display name.
        vocab: ``{token bytes: id}`` of the ordinary tokens (every single byte among them).
        merges: ``[(left bytes, right bytes), ...]`` in rank order.
        splits: the pre-tokenizer.
        added: ``{text: id}`` of the added tokens, matched in the raw text first.
        special_ids: which added tokens are special (flagged ``is_special`` in spans).
        ignore_merges: a piece that is a token is taken whole.
        source: where the files came from.

    Raises:
        ValueError: a merge whose parts are not tokens.

    A byte without a token of its own (:attr:`missing_bytes`) is dropped from
    the ids, as Hugging Face's BPE without an unknown token drops it.  An added
    token stands for the text it matches: DeepSeek LLM's ``ø`` (a user-defined
    token written in the byte alphabet, where it means the byte 0xF8) decodes as
    ``ø``, so the ids of a text hold exactly its UTF-8.

    Attributes:
        name, source: as given.
        is_byte_level: ``True``; ``unknown_id``: ``None``.
        pattern: the main split pattern (``splits.main``), for single-pattern consumers.
        special_text: ``True``: added-token text in the input is that token.
    """

    algorithm = "bpe"
    """The registered algorithm whose encoding this follows (its views draw the steps), as a trained one's."""
    algorithm_label = "Byte-level BPE"
    is_byte_level = True
    unknown_id = None
    special_text = True

    def __init__(
        self,
        name: str,
        vocab: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]],
        splits: SplitSequence,
        added: Mapping[str, int] = {},
        *,
        special_ids: Iterable[int] = (),
        ignore_merges: bool = False,
        source: str = "",
    ) -> None:
        self.name = name
        self.source = source
        self.splits = splits
        self.ignore_merges = ignore_merges
        self._by_bytes = dict(vocab)
        self._added = dict(added)
        self._added_order = tuple(sorted(self._added, key=self._added.get))
        self._special_ids = frozenset(special_ids) | frozenset()
        decoder: dict[int, bytes] = {i: b for b, i in self._by_bytes.items()}
        for s, i in self._added.items():  # an added token stands for the text it matches (so ids hold the UTF-8)
            decoder[i] = s.encode("utf-8")
        self._decoder = decoder
        # a byte without a token is dropped, as Hugging Face's BPE (no unk_token) and llama.cpp drop it: MPT lacks
        # the 13 bytes no UTF-8 text holds, StarCoder also 0xF1..0xF4 (lead bytes of U+40000..U+10FFFF)
        self._byte_ids = [self._by_bytes.get(bytes([x]), -1) for x in range(256)]
        self.missing_bytes = bytes(x for x in range(256) if self._byte_ids[x] < 0)
        self._shift = max(*decoder, 2).bit_length()
        ranks: dict[int, int] = {}
        new_ids: list[int] = []
        rank_of: dict[int, int] = {}
        self._dropped = 0
        for left, right in merges:
            a, b, new = self._by_bytes.get(left), self._by_bytes.get(right), self._by_bytes.get(left + right)
            if a is None or b is None:
                raise ValueError(f"{name}: merge {left!r} + {right!r} uses a string that is not a token")
            if new is None:  # llama.cpp would merge and then spell the result byte by byte; no file here has one
                self._dropped += 1
                continue
            r = len(new_ids)
            new_ids.append(new)
            ranks.setdefault(a << self._shift | b, r)
            rank_of.setdefault(new, r)
        self._ranks = ranks
        self._new_ids = new_ids
        self._rank_of = rank_of
        self._cache: dict[str, tuple[int, ...]] = {}
        self._level_caches: list[dict[str, tuple[int, ...]]] = [{} for _ in range(len(splits))]

    # -- the declared interface ---------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Distinct token ids (ordinary and added)."""
        return len(self._decoder)

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{added token: id}`` of every added token (matched in the text), in id order."""
        return {s: self._added[s] for s in self._added_order}

    @property
    def pattern(self) -> str:
        """The main split pattern (:attr:`SplitSequence.main`)."""
        return self.splits.main

    @property
    def vocab(self) -> dict[int, bytes]:
        """``{id: bytes}`` of every token (an added token: the UTF-8 of its text, which it matches)."""
        return dict(self._decoder)

    @cached_property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """``{token bytes: id}`` of the ordinary tokens (for the vocabulary diff and the token dialog)."""
        return dict(self._by_bytes)

    @property
    def token_ids_by_bytes(self) -> dict[bytes, int]:
        """Same as :attr:`mergeable_ranks` (what :func:`~bpe_core.production.registry.production_token_ids` reads)."""
        return self.mergeable_ranks

    def _piece_ids(self, piece: str) -> tuple[int, ...]:
        """The ids of one pre-token (cached): whole if ``ignore_merges`` and a token, else merged byte by byte."""
        ids = self._cache.get(piece)
        if ids is not None:
            return ids
        data = piece.encode("utf-8")
        whole = self._by_bytes.get(data) if self.ignore_merges else None
        if whole is not None:
            ids = (whole,)
        else:
            seq = [self._byte_ids[x] for x in data]
            if self.missing_bytes and -1 in seq:
                seq = [x for x in seq if x >= 0]  # (a -1 never pairs: its keys are negative)
            if len(seq) < 2:
                ids = tuple(seq)
            elif len(seq) > LONG_PIECE:
                ids = tuple(merge_long(seq, self._ranks.get, self._shift, self._new_ids, len(self._new_ids)))
            else:
                ids = merge_short(seq, self._ranks.get, self._shift, self._new_ids, len(self._new_ids))
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[piece] = ids
        return ids

    def _segments(self, text: str) -> Iterable[tuple[str, bool]]:
        check_text(text)
        return split_special(text, self._added_order) if self._added else [(text, False)] if text else []

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: added tokens, then each piece's merges (see the module docstring).

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        out: list[int] = []
        for segment, is_added in self._segments(text):
            if is_added:
                out.append(self._added[segment])
                continue
            if len(self.splits) == 1:
                for piece in self.splits.level(0, segment):
                    out.extend(self._piece_ids(piece))
            else:
                self._encode_level(segment, 0, out)
        return out

    def _encode_level(self, piece: str, k: int, out: list[int]) -> None:
        """Append the ids of ``piece`` split from level ``k`` on; short pieces' ids cached per level."""
        if k == len(self.splits):
            out.extend(self._piece_ids(piece))
            return
        cache = self._level_caches[k]
        ids = cache.get(piece)
        if ids is not None:
            out.extend(ids)
            return
        start = len(out)
        for sub in self.splits.level(k, piece):
            self._encode_level(sub, k + 1, out)
        if len(piece) <= LEVEL_CACHE_CHARS:
            if len(cache) >= CACHE_LIMIT:
                cache.clear()
            cache[piece] = tuple(out[start:])

    def fast_encoder(self) -> Callable[[str], list[int]]:
        """:meth:`encode` (its piece cache makes repeated words cheap)."""
        return self.encode

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of a token (an added token's UTF-8).

        Raises:
            ValueError: no such id.
        """
        b = self._decoder.get(token_id) if isinstance(token_id, int) else None
        if b is None:
            raise ValueError(f"token id {token_id!r} is not in {self.name} (vocab size {self.vocab_size})")
        return b

    def decode(self, ids: Iterable[int]) -> str:
        """The text of the ids (invalid UTF-8 as U+FFFD, as Hugging Face's ``ByteLevel`` decoder writes it).

        Raises:
            ValueError: an id is not a token.
        """
        return b"".join([self.token_bytes(i) for i in ids]).decode("utf-8", errors="replace")

    def describe_token(self, token_id: int) -> str:
        """Printable form of a token's bytes (``<0xNN>`` for bytes that are not whole characters)."""
        return display_bytes(self.token_bytes(token_id))

    def rank_of(self, token_id: int) -> int | None:
        """The rank of the first merge that makes ``token_id``, or ``None`` (single bytes, added tokens)."""
        return self._rank_of.get(token_id)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets (an added token covers exactly its matched text).

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        if self.missing_bytes and not set(self.missing_bytes).isdisjoint(text.encode("utf-8", "surrogatepass")):
            return self._lossy_spans(text)
        ids: list[int] = []
        tbytes: list[bytes] = []
        for segment, is_added in self._segments(text):
            if is_added:
                ids.append(self._added[segment])
                tbytes.append(segment.encode("utf-8"))
                continue
            for piece in self.splits.split(segment):
                for i in self._piece_ids(piece):
                    ids.append(i)
                    tbytes.append(self._decoder[i])
        return spans_from_token_bytes(
            text, ids, tbytes, special_ids=self._special_ids | frozenset(self._added.values()), rank_of=self.rank_of
        )

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this tokenizer (:class:`bpe_core.interface.CorpusPieces`): by its pre-tokens.

        A unit is cut at the added tokens and by the split sequence
        (:meth:`SplitSequence.split`); each piece is merged on its own, as
        :meth:`encode` merges it, all pieces in one compiled call
        (:meth:`_encode_pieces`; the textbook :meth:`_encode_pieces_textbook`
        runs :meth:`_piece_ids` on each).  A unit ends only
        after a character the split sequence cuts after (:func:`cut_table`), so
        it splits as it does inside the text (``tests/engine/test_corpus.py``
        checks every registered file).
        """
        added = self._added_order
        splits = self.splits

        def split(unit: str) -> list[str]:
            out: list[str] = []
            for segment, is_added in split_special(unit, added) if added else [(unit, False)]:
                if is_added:
                    out.append(segment)
                else:
                    out += splits.split(segment)
            return out

        from ..counting.pretoken_kernel import machine_for

        # the compiled pre-tokenizer runs one tiktoken-style pattern, with digits cut out first or not
        key = (
            "pre-tokens" if machine_for(splits.patterns) else "split-sequence",
            splits.patterns,
            tuple(sorted(added)),
        )
        return SplitPieces(self, key, split, self._encode_pieces, cut_after=cut_table(splits.patterns))

    def _encode_pieces(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder: every piece's merges in the compiled kernel, in threads.

        The pieces go to :func:`~bpe_core.bpe.piece_merge_kernel.encode_byte_pieces` as their UTF-8
        bytes; an added token or, with ``ignore_merges``, a piece that is a token is that one token; a piece
        holding a byte without a token goes through :meth:`token_spans`.  Must equal
        :meth:`_encode_pieces_textbook` (``tests/engine/test_byte_bpe_pieces.py``), which runs where no
        compiled kernels can.
        """
        from ..counting import native

        if native.carrier() is None:
            return self._encode_pieces_textbook(pieces, first)
        from ..bpe.piece_merge_kernel import encode_byte_pieces

        added = self._added
        specials = self._special_ids | frozenset(added.values())
        data, offsets = pack_utf8(pieces)
        lossy = np.zeros(0, dtype=np.int64)
        if self.missing_bytes:
            held = np.zeros(len(data) + 1, dtype=np.int64)  # bytes without a token, counted up to each byte
            np.cumsum(np.isin(data, np.frombuffer(self.missing_bytes, dtype=np.uint8)), out=held[1:])
            lossy = np.flatnonzero(held[offsets[1:]] > held[offsets[:-1]])
            lossy = lossy[[pieces[k] not in added for k in lossy.tolist()]] if added else lossy
        rest = np.setdiff1d(np.arange(len(pieces)), lossy) if lossy.size else None
        keep = [pieces[k] for k in rest.tolist()] if rest is not None else pieces
        if rest is not None:
            data, offsets = pack_utf8(keep)
        whole = self._whole_ids(keep, np.diff(offsets))
        tokens = encode_byte_pieces(self._byte_tables, data, offsets, whole)
        fast = piece_tokens_from_byte_ranges(data, offsets, *tokens, specials)
        if rest is None:
            return fast
        slow = piece_tokens_from_spans([self.token_spans(pieces[k]) for k in lossy.tolist()], self.unknown_id)
        return combine_piece_tokens(len(pieces), [(rest, fast), (lossy, slow)])

    def _whole_ids(self, pieces: Sequence[str], byte_sizes: np.ndarray) -> np.ndarray:
        """``int64[n]``: each piece's id when it is one token whole (an added token; a token with ``ignore_merges``).

        ``byte_sizes``: each piece's UTF-8 length (only pieces as long as an added token are looked up).
        """
        whole = lookup_pieces(pieces, byte_sizes, self._added)
        if self.ignore_merges:  # only the tokens no merge reaches differ from merging
            token = lookup_pieces(pieces, byte_sizes, self._not_merged)
            whole = np.where(whole >= 0, whole, token)
        return whole

    @cached_property
    def _not_merged(self) -> dict[str, int]:
        """``{text: id}`` of the tokens no merge makes from their own bytes (taken whole with ``ignore_merges``)."""
        from ..bpe.piece_merge_kernel import tokens_not_merged

        return tokens_not_merged(self._byte_tables, self._by_bytes)

    @cached_property
    def _byte_tables(self):
        """The :class:`~bpe_core.bpe.piece_merge_kernel.CharMergeTables` of the merges, over bytes."""
        from ..bpe.piece_merge_kernel import byte_merge_tables

        return byte_merge_tables(self._byte_ids, self._ranks, self._shift, self._new_ids, len(self._new_ids))

    def _encode_pieces_textbook(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook :meth:`_encode_pieces`: each piece's ids (:meth:`_piece_ids`) in Python, one by one."""
        added = self._added
        ids = [(added[p],) if p in added else self._piece_ids(p) for p in pieces]
        specials = self._special_ids | frozenset(added.values())
        if not self.missing_bytes:
            return piece_tokens_from_ids(pieces, ids, token_lengths(self._decoder), specials)
        missing = set(self.missing_bytes)
        lossy = [k for k, p in enumerate(pieces) if p not in added and not missing.isdisjoint(p.encode("utf-8"))]
        if not lossy:
            return piece_tokens_from_ids(pieces, ids, token_lengths(self._decoder), specials)
        bad = set(lossy)
        whole = [k for k in range(len(pieces)) if k not in bad]
        fast = piece_tokens_from_ids([pieces[k] for k in whole], [ids[k] for k in whole], token_lengths(self._decoder),
                                     specials)  # fmt: skip
        slow = piece_tokens_from_spans([self.token_spans(pieces[k]) for k in lossy], self.unknown_id)
        return combine_piece_tokens(len(pieces), [(whole, fast), (lossy, slow)])

    def _lossy_spans(self, text: str) -> list[TokenSpan]:
        """:meth:`token_spans` of a text holding bytes without a token: laid out piece by piece over the bytes kept.

        Each token covers the characters its bytes come from (the dropped bytes
        skipped), so the spans of one piece never depend on another's.
        """
        specials = self._special_ids | frozenset(self._added.values())
        missing = set(self.missing_bytes)
        out: list[TokenSpan] = []
        offset = 0
        for segment, is_added in self._segments(text):
            if is_added:
                tid = self._added[segment]
                out.append(TokenSpan(tid, segment.encode("utf-8"), segment, offset, offset + len(segment), True))
                offset += len(segment)
                continue
            for piece in self.splits.split(segment):
                char_of = [c for c, ch in enumerate(piece) for b in ch.encode("utf-8") if b not in missing]
                bounds = {0, len(char_of)} | {k for k in range(1, len(char_of)) if char_of[k] != char_of[k - 1]}
                pos = 0
                for i in self._piece_ids(piece):
                    tb = self._decoder[i]
                    a, b = char_of[pos], char_of[pos + len(tb) - 1] + 1
                    partial = pos not in bounds or pos + len(tb) not in bounds
                    shown = display_bytes(tb) if partial else piece[a:b]
                    out.append(TokenSpan(i, tb, shown, offset + a, offset + b, i in specials, partial, self.rank_of(i)))
                    pos += len(tb)
                offset += len(piece)
        return out

    def encode_steps(self, text: str) -> list[PieceSteps]:
        """Each pre-token's merges, one per step, as :func:`bpe_core.bpe.trace.bpe_encode_steps` shows the trained ones.

        A step applies the lowest-ranked merge present to every occurrence, left to right.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[PieceSteps] = []
        pos = 0
        for segment, is_added in self._segments(text):
            if is_added:
                step = EncodeStep((self._added[segment],), (segment,), "added token: one id, never merged")
                out.append(PieceSteps(segment, pos, pos + len(segment), True, (step,)))
                pos += len(segment)
                continue
            for piece in self.splits.split(segment):
                out.append(PieceSteps(piece, pos, pos + len(piece), False, tuple(self._piece_steps(piece))))
                pos += len(piece)
        return out

    def _piece_steps(self, piece: str) -> list[EncodeStep]:
        """The merges of one piece, recorded (the textbook loop; the last ids equal :meth:`_piece_ids`)."""
        label = self.describe_token
        data = piece.encode("utf-8")
        ids = [i for i in (self._byte_ids[x] for x in data) if i >= 0]
        first = EncodeStep(tuple(ids), tuple(map(label, ids)), f"{len(ids)} byte{'s' * (len(ids) != 1)}")
        whole = self._by_bytes.get(data) if self.ignore_merges else None
        if whole is not None and len(ids) > 1:
            note = f"the whole pre-token is token {whole}: taken directly (ignore_merges)"
            return [first, EncodeStep((whole,), (label(whole),), note, self.rank_of(whole), (0,))]
        steps = [first]
        shift, get = self._shift, self._ranks.get
        while len(ids) > 1:
            found = [(r, k) for k in range(len(ids) - 1) if (r := get(ids[k] << shift | ids[k + 1])) is not None]
            if not found:
                break
            rank, k = min(found)
            a, b, new = ids[k], ids[k + 1], self._new_ids[rank]
            out: list[int] = []
            marked: list[int] = []
            i = 0
            while i < len(ids):
                if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                    marked.append(len(out))
                    out.append(new)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            ids = out
            times = f" ({len(marked)}×)" if len(marked) > 1 else ""
            note = f"merge #{rank + 1}: {label(a)!r} + {label(b)!r} → {label(new)!r}{times}"
            steps.append(EncodeStep(tuple(ids), tuple(map(label, ids)), note, rank, tuple(marked)))
        return steps

    def __repr__(self) -> str:
        return f"ByteLevelBPE(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


def from_hf_tokenizer_json(data: bytes, name: str, source: str = "") -> ByteLevelBPE:
    """A :class:`ByteLevelBPE` from a Hugging Face ``tokenizer.json`` (BPE model, ``ByteLevel`` alphabet).

    Reads ``added_tokens``, ``model.vocab``/``merges``/``ignore_merges`` and the
    pre-tokenizer: a ``Sequence`` of ``Split`` (``Isolated``, not inverted)
    ending in a ``ByteLevel`` without its own regex, or a lone ``ByteLevel``
    with its regex (GPT-2's pattern).

    Raises:
        ValueError: a file of another shape (the message says what).
    """
    from ..pretokenize import GPT2_PATTERN

    doc = json.loads(data)
    model = doc.get("model") or {}
    if model.get("type") != "BPE" or model.get("byte_fallback") or model.get("continuing_subword_prefix"):
        raise ValueError(f"{name}: not a byte-level BPE tokenizer.json")
    if (doc.get("normalizer") or {}).get("normalizers", []) not in ([], None):
        raise ValueError(f"{name}: a normalizer is not supported here")
    pre = doc.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    patterns: list[str] = []
    for step in steps:
        if step.get("type") == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            patterns.append(step["pattern"]["Regex"])
        elif step.get("type") == "ByteLevel" and not step.get("add_prefix_space"):
            if step.get("use_regex", True):
                patterns.append(GPT2_PATTERN)
        else:
            raise ValueError(f"{name}: pre-tokenizer step {step.get('type')!r} is not supported here")
    vocab: dict[bytes, int] = {}
    for token, i in model["vocab"].items():
        b = hf_token_bytes(token)
        if b is not None:
            vocab.setdefault(b, i)
    merges = []
    for m in model["merges"]:
        left, right = parse_merge(m)
        merges.append((hf_token_bytes(left) or b"", hf_token_bytes(right) or b""))
    added = {t["content"]: t["id"] for t in doc.get("added_tokens", [])}
    special = [t["id"] for t in doc.get("added_tokens", []) if t.get("special")]
    return ByteLevelBPE(
        name, vocab, merges, SplitSequence(patterns), added, special_ids=special,
        ignore_merges=bool(model.get("ignore_merges")), source=source,
    )  # fmt: skip
