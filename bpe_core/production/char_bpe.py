r"""SentencePiece-style BPE over characters with ranked merges and byte fallback (Gemma 4).

Gemma 4's vocabulary (llama.cpp's ``ggml-vocab-gemma-4.gguf``, model ``gemma4``)
encodes as llama.cpp's ``llm_tokenizer_bpe_session`` does for it
(``src/llama-vocab.cpp``, pre-tokenizer ``LLAMA_VOCAB_PRE_TYPE_GEMMA4``):

1. special and user-defined tokens (``<bos>``, ``<|turn>``, ...) are cut out of the raw text;
2. every space becomes ``▁`` (U+2581); no ``▁`` is put in front;
3. the text is cut into lines and runs of newlines (``[^\\n]+|\\n+``); a run of
   newlines that is itself a token is that token (the lines are cut further
   where no merge can cross, :meth:`CharBPE._units`: the same ids, cached per word);
4. inside each piece, starting from one symbol per character, the adjacent pair
   with the lowest merge rank is merged, leftmost first -- the project's
   :func:`~bpe_core.bpe.encoder.merge_short` / :func:`~bpe_core.bpe.encoder.merge_long`
   on character ids (a character that is no token never merges);
5. a symbol that is not a token (a character outside the vocabulary) becomes
   the byte pieces ``<0x00>``..``<0xFF>`` of its UTF-8 (*byte fallback*).

Unlike byte-level BPE the merges work on characters, so a token never holds
part of a character; unlike Mistral v1's SentencePiece BPE, merges are ranked,
not scored.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property

import numpy as np
import regex

from ..bpe.encoder import LONG_PIECE, merge_long, merge_short
from ..pieces import (
    KIND_BYTE_FALLBACK,
    KIND_SPECIAL,
    PieceTokens,
    SplitPieces,
    cut_table_without,
    piece_tokens_from_spans,
)
from ..pretokenize import LINES_PATTERN, split_special
from ..spans import TokenSpan, utf8_len
from ..steps import EncodeStep, PieceSteps
from .byte_bpe import parse_merge
from .encodings import check_text
from .gguf_vocab import BYTE, CONTROL, UNKNOWN, USER_DEFINED, GGUFVocab

__all__ = ["CharBPE", "char_bpe_from_gguf"]

SPACE = "\u2581"
_LINES = regex.compile(LINES_PATTERN)
_PLAIN_PIECES = regex.compile("\n+|[ \u2581]*[^ \u2581\n]+|[ \u2581]+")
"""The pieces of a text without added tokens or crossing tokens: :data:`_LINES`' runs of newlines, and
each line cut where a ``▁`` (a space) follows another character (:meth:`CharBPE._units`)."""
_PLAIN_JOINED = regex.compile("\n+|[ \u2581]*[^ \u2581\n\uffff]+|[ \u2581]+")
""":data:`_PLAIN_PIECES` that never matches nor crosses
:data:`~bpe_core.bpe.piece_merge_kernel.SEPARATOR` (units joined)."""
_WORD_START = regex.compile("(?<=[^\u2581])(?=\u2581)")
"""Where a ``▁`` run starts after another character: where a piece is cut into units (see :meth:`CharBPE._units`)."""

PIECE_PATTERNS = (LINES_PATTERN, "[ \u2581]+[^ \u2581]*")
"""The cuts of :meth:`CharBPE._pieces` between added tokens, as a split sequence on the text as written (spaces not
yet ``▁``): lines and newline runs, then before each run of spaces or ``▁`` that follows another character (less the
cuts inside a crossing token, :attr:`CharBPE._crossing`)."""


class CharBPE:
    """A SentencePiece-style BPE tokenizer with ranked merges over characters and byte fallback.

    Args:
        tokens: every token's text by id (``▁`` for a space; byte pieces ``<0xNN>``).
        token_types: GGUF token types by id (:data:`~bpe_core.production.gguf_vocab.BYTE`, ``CONTROL``, ...).
        merges: ``[(left, right), ...]`` token strings in rank order; each part and result is a token.
        name, source: display name and where the file came from.
        unknown_id: the unknown token's id (default: the ``UNKNOWN``-type token's, if any).

    Raises:
        ValueError: a repeated token, a merge with a part or result that is not a
            token, or a missing byte piece.

    Attributes:
        pattern: :data:`bpe_core.pretokenize.LINES_PATTERN` (lines and runs of newlines).
        unknown_id: ``<unk>``'s id (never emitted: byte fallback spells every character).
    """

    algorithm = "bpe"
    """The registered algorithm whose encoding this follows (merge lines, as BPE's), as a trained one's."""
    algorithm_label = "BPE"
    is_byte_level = False
    special_text = True
    pattern = LINES_PATTERN

    def __init__(
        self,
        tokens: Sequence[str],
        token_types: Sequence[int],
        merges: Sequence[tuple[str, str]],
        *,
        name: str,
        unknown_id: int | None = None,
        source: str = "",
    ) -> None:
        self.name, self.source = name, source
        self._tokens = list(tokens)
        self._types = list(token_types)
        index: dict[str, int] = {}
        for i, t in enumerate(self._tokens):
            if t in index:
                raise ValueError(f"{name}: token {t!r} appears twice (ids {index[t]} and {i})")
            index[t] = i
        self._index = index
        self._added = {t: i for i, t in enumerate(self._tokens) if self._types[i] in (CONTROL, USER_DEFINED)}
        self._added_order = tuple(self._added)
        self._byte_ids = [index.get(f"<0x{b:02X}>", -1) for b in range(256)]
        if min(self._byte_ids) < 0:
            raise ValueError(f"{name}: byte fallback needs the 256 pieces <0x00>..<0xFF>")
        unk = [i for i, k in enumerate(self._types) if k == UNKNOWN]
        self.unknown_id: int | None = unknown_id if unknown_id is not None else (unk[0] if unk else None)
        self._shift = max(len(self._tokens), 2).bit_length()
        ranks: dict[int, int] = {}
        new_ids: list[int] = []
        for r, (left, right) in enumerate(merges):
            a, b, new = index.get(left), index.get(right), index.get(left + right)
            if a is None or b is None or new is None:
                raise ValueError(f"{name}: merge #{r} {left!r} + {right!r} involves a string that is not a token")
            ranks.setdefault(a << self._shift | b, r)
            new_ids.append(new)
        self._ranks, self._new_ids = ranks, new_ids
        self._rank_of: dict[int, int] = {}
        for r, new in enumerate(new_ids):
            self._rank_of.setdefault(new, r)
        self._cache: dict[str, tuple[int, ...]] = {}
        # tokens with a ▁ right after another character (Gemma 4 has one: '>▁</'), and where: no cut there
        self._crossing = [
            (t, j) for t in self._tokens if SPACE in t for j in range(1, len(t)) if t[j] == SPACE and t[j - 1] != SPACE
        ]

    # -- the declared interface ---------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Tokens in the vocabulary (Gemma 4: 262,144)."""
        return len(self._tokens)

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{token: id}`` of the control and user-defined tokens (matched in the text), in id order."""
        return dict(self._added)

    @property
    def token_ids_by_bytes(self) -> dict[bytes, int]:
        """``{bytes a token stands for: id}`` of the ordinary and byte pieces (an ordinary piece wins)."""
        out = {bytes([b]): i for b, i in enumerate(self._byte_ids)}
        skip = {CONTROL, USER_DEFINED, UNKNOWN, BYTE}
        out.update({self.token_bytes(i): i for i, k in enumerate(self._types) if k not in skip})
        return out

    def _word_ids(self, word: str) -> tuple[int, ...]:
        """The ids of one escaped piece (``▁`` for spaces): newline run look-up, merges, byte fallback (cached)."""
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        index = self._index
        whole = index.get(word) if word[0] == "\n" and not word.strip("\n") else None
        if whole is not None:
            ids = (whole,)
        else:
            seq = [index.get(c, -1) for c in word]
            if len(seq) > 1:
                merge = merge_long if len(seq) > LONG_PIECE else merge_short
                seq = list(merge(seq, self._ranks.get, self._shift, self._new_ids, len(self._new_ids)))
            ids = tuple(self._fallback(seq, word))
        if len(self._cache) >= 1 << 18:
            self._cache.clear()
        self._cache[word] = ids
        return ids

    def _fallback(self, seq: list[int], word: str) -> list[int]:
        """``seq`` with each ``-1`` (a character that is no token, in order) replaced by its UTF-8 byte pieces."""
        if -1 not in seq:
            return seq
        unknown = iter(c for c in word if c not in self._index)
        out: list[int] = []
        for i in seq:
            if i >= 0:
                out.append(i)
            else:
                out += [self._byte_ids[b] for b in next(unknown).encode("utf-8")]
        return out

    def _units(self, piece: str) -> list[tuple[int, str]]:
        """``piece`` (a line, escaped) cut where a ``▁`` follows another character, unless a token spans the cut.

        No merge crosses such a cut: a merge's result is a token, and the only
        tokens holding a ``▁`` after another character are :attr:`_crossing`,
        checked at each cut.  So the units encode independently to exactly the
        line's ids -- and repeat, so the cache serves them (a line never repeats).
        """
        cuts = [0]
        for m in _WORD_START.finditer(piece):
            p = m.start()
            if not any(piece.startswith(t, p - j) for t, j in self._crossing if p >= j):
                cuts.append(p)
        cuts.append(len(piece))
        return [(a, piece[a:b]) for a, b in itertools.pairwise(cuts)]

    def _pieces(self, text: str) -> Iterable[tuple[int, str, bool]]:
        """``(start, piece, is_added)`` over ``text``: added tokens, then the units of lines and newline runs."""
        check_text(text)
        offset = 0
        for segment, is_added in split_special(text, self._added_order) if self._added else [(text, False)]:
            if is_added:
                yield offset, segment, True
            else:
                for m in _LINES.finditer(segment):
                    for start, unit in self._units(m.group().replace(" ", SPACE)):
                        yield offset + m.start() + start, unit, False
            offset += len(segment)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no ``<bos>`` added).

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        out: list[int] = []
        for _start, piece, is_added in self._pieces(text):
            if is_added:
                out.append(self._added[piece])
            else:
                out.extend(self._word_ids(piece))
        return out

    def fast_encoder(self) -> Callable[[str], list[int]]:
        """:meth:`encode` (pieces are cached)."""
        return self.encode

    def _check_id(self, token_id: int) -> None:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < len(self._tokens):
            raise ValueError(f"token id {token_id!r} is not in {self.name} (vocab size {self.vocab_size})")

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for: ``▁`` -> ``b" "``, ``<0xNN>`` -> that byte, a special token -> its UTF-8.

        Raises:
            ValueError: no such id.
        """
        self._check_id(token_id)
        t, k = self._tokens[token_id], self._types[token_id]
        if k == BYTE:
            return bytes([int(t[3:5], 16)])
        if k in (CONTROL, USER_DEFINED, UNKNOWN):
            return t.encode("utf-8")
        return t.replace(SPACE, " ").encode("utf-8")

    def describe_token(self, token_id: int) -> str:
        """The token with ``▁`` as a space; a byte or special token as written."""
        self._check_id(token_id)
        t, k = self._tokens[token_id], self._types[token_id]
        return t if k in (BYTE, CONTROL, USER_DEFINED, UNKNOWN) else t.replace(SPACE, " ")

    def decode(self, ids: Iterable[int]) -> str:
        """The tokens' bytes joined, as UTF-8 (invalid sequences as U+FFFD).

        Raises:
            ValueError: an id outside the vocabulary.
        """
        return b"".join([self.token_bytes(i) for i in ids]).decode("utf-8", errors="replace")

    def rank_of(self, token_id: int) -> int | None:
        """The rank of the first merge that makes ``token_id``, or ``None``."""
        return self._rank_of.get(token_id)

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets.

        A token's ``▁`` covers the space it stands for; the byte pieces of one
        character share its range and are ``is_partial`` when it has more than one byte.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[TokenSpan] = []
        for start, piece, is_added in self._pieces(text):
            if is_added:
                tid = self._added[piece]
                out.append(TokenSpan(tid, piece.encode(), piece, start, start + len(piece), True))
                continue
            pos = start
            ids = self._word_ids(piece)
            k = 0
            while k < len(ids):
                tid = ids[k]
                if self._types[tid] == BYTE:
                    ch = text[pos]
                    n = utf8_len(ch)
                    for j in range(n):
                        b = ids[k + j]
                        shown = self._tokens[b] if n > 1 else ch
                        out.append(
                            TokenSpan(b, self.token_bytes(b), shown, pos, pos + 1, False, n > 1, is_byte_fallback=True)
                        )
                    k += n
                    pos += 1
                    continue
                n = len(self._tokens[tid])
                out.append(TokenSpan(tid, self.token_bytes(tid), text[pos : pos + n], pos, pos + n, False, False,
                                     self.rank_of(tid)))  # fmt: skip
                pos += n
                k += 1
        return out

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this tokenizer (:class:`bpe_core.interface.CorpusPieces`): by its pieces.

        A unit is cut as :meth:`encode` cuts a text (added tokens, lines, then
        :meth:`_units`) and each piece is encoded on its own (:meth:`_encode_pieces`).
        A unit of the corpus starts with a space after a non-space character,
        where :meth:`_units` cuts too -- unless that character is ``▁`` (a ``▁``
        run continues) or a token crosses there (:attr:`_crossing`): no unit
        ends after those characters.

        A unit holding no added token and no crossing token is cut by one ``findall``
        (:data:`_PLAIN_PIECES`: runs of newlines; within a line, ``▁``/space runs with the word after
        them), any other as :meth:`_split_textbook` cuts it; the two cut alike
        (``tests/engine/test_char_bpe_pieces.py``).
        """
        added = self._added_order
        triggers = tuple(sorted({t[0] for t in added} | {t[j - 1] for t, j in self._crossing}))
        plain, textbook = _PLAIN_PIECES.findall, self._split_textbook
        crossing = tuple(t for t, _j in self._crossing)

        def special(unit: str) -> list[str] | None:
            if any(t in unit for t in added) or any(t in unit.replace(" ", SPACE) for t in crossing):
                return textbook(unit)
            return None

        def split(unit: str) -> list[str]:
            for c in triggers:
                if c in unit:
                    return special(unit) or plain(unit)
            return plain(unit)

        forbid = {SPACE} | {t[j - 1] for t, j in self._crossing}
        # the same cuts as a split sequence (lines, then a piece per ▁ run and what follows it) less the cuts
        # inside a crossing token: what the compiled pre-tokenizer runs (bpe_core.analysis.corpus._machine_of)
        key = ("split-sequence", PIECE_PATTERNS, tuple(sorted(added)), tuple(self._crossing))
        pieces = _CharPieces(self, key, split, self._encode_pieces, cut_after=cut_table_without(sorted(forbid)))
        pieces.triggers, pieces.special = regex.escape("".join(triggers)), special
        return pieces

    def _split_textbook(self, unit: str) -> list[str]:
        """The pieces of a corpus unit as :meth:`_pieces` cuts a text (added tokens, lines, :meth:`_units`)."""
        out: list[str] = []
        pos = 0
        for start, piece, _is_added in self._pieces(unit):
            if start > pos:  # (never: the pieces cover the unit)
                out.append(unit[pos:start])
            out.append(unit[start : start + len(piece)])
            pos = start + len(piece)
        return out

    def _encode_pieces(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder: every piece's tokens, all pieces in one compiled call.

        The compiled BPE over characters (:func:`bpe_core.bpe.piece_merge_kernel.encode_pieces`)
        with this vocabulary's ranked merges (:attr:`_merge_tables`); an added token, or a run of newlines
        that is a token, is that one token (as :meth:`_word_ids`).  Equal to :meth:`_encode_pieces_textbook`
        (``tests/engine/test_char_bpe_pieces.py``), which runs where no compiled kernels can.
        """
        from ..counting import native

        if native.carrier() is None:
            return self._encode_pieces_textbook(pieces, first)
        from ..bpe.piece_merge_kernel import encode_pieces, pack_pieces

        cps, offsets = pack_pieces(pieces, escape_spaces=True)
        whole = np.fromiter(map(self._added.get, pieces, itertools.repeat(-1)), dtype=np.int64, count=len(pieces))
        specials = whole >= 0
        lines = np.flatnonzero(np.diff(offsets) > 0)
        lines = lines[cps[offsets[lines]] == ord("\n")]
        for k in lines[~specials[lines]].tolist():  # a run of newlines that is a token: taken whole
            if not pieces[k].strip("\n"):
                whole[k] = self._index.get(pieces[k], -1)
        n = len(pieces)
        offsets, ids, starts, ends, kinds = encode_pieces(
            self._merge_tables, cps, offsets, np.full(n, -1, dtype=np.int64), whole, KIND_BYTE_FALLBACK
        )
        kinds[offsets[:-1][specials]] = KIND_SPECIAL
        return PieceTokens(offsets, ids, starts, ends, kinds)

    @cached_property
    def _merge_tables(self):
        """The :class:`~bpe_core.bpe.piece_merge_kernel.CharMergeTables` of this vocabulary.

        Each single-character token is its character's symbol (a character that is no token never
        merges); each merge keeps its rank (the first merge of a pair, as :attr:`_ranks`) and makes
        :attr:`_new_ids` of it.  Every id is a token.
        """
        from ..bpe.piece_merge_kernel import CharMergeTables

        keys = np.fromiter(self._ranks.keys(), dtype=np.int64, count=len(self._ranks))
        ranks = np.fromiter(self._ranks.values(), dtype=np.int64, count=len(self._ranks))
        merges = (keys >> self._shift, keys & ((1 << self._shift) - 1), ranks, np.asarray(self._new_ids)[ranks])
        chars = {t: i for t, i in self._index.items() if len(t) == 1}
        n = len(self._tokens)
        return CharMergeTables.build(chars, merges, n, np.arange(n), self._byte_ids)

    def _encode_pieces_textbook(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook :meth:`_encode_pieces`: each piece's :meth:`token_spans` on its own."""
        return piece_tokens_from_spans([self.token_spans(p) for p in pieces], self.unknown_id)

    def encode_steps(self, text: str) -> list[PieceSteps]:
        """Each piece's merges one per step (lowest rank, every occurrence left to right), then byte fallback.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[PieceSteps] = []
        for start, piece, is_added in self._pieces(text):
            if is_added:
                step = EncodeStep((self._added[piece],), (piece,), "special token: one id, never merged")
                out.append(PieceSteps(piece, start, start + len(piece), True, (step,)))
            else:
                original = text[start : start + len(piece)]
                out.append(PieceSteps(original, start, start + len(piece), False, tuple(self._piece_steps(piece))))
        return out

    def _shown(self, ids: list[int]) -> tuple[int, ...]:
        """Step ids with a character outside the vocabulary shown as ``<unk>``'s id until byte fallback."""
        unk = self.unknown_id if self.unknown_id is not None else -1
        return tuple(i if i >= 0 else unk for i in ids)

    def _label(self, i: int, symbol: str) -> str:
        return symbol.replace(SPACE, " ") if i >= 0 else symbol

    def _piece_steps(self, piece: str) -> list[EncodeStep]:
        """The textbook loop for one piece: merges by rank, then byte fallback (last ids equal :meth:`_word_ids`)."""
        index = self._index
        symbols = list(piece)
        ids = [index.get(c, -1) for c in symbols]
        steps = [EncodeStep(self._shown(ids), tuple(map(self._label, ids, symbols)), f"{len(ids)} characters")]
        whole = index.get(piece) if piece[0] == "\n" and not piece.strip("\n") else None
        if whole is not None and len(ids) > 1:
            steps.append(
                EncodeStep((whole,), (piece,), f"the run of newlines is token {whole}: taken whole", None, (0,))
            )
            return steps
        shift, get = self._shift, self._ranks.get
        while True:
            found = [(r, k) for k in range(len(ids) - 1) if (r := get(ids[k] << shift | ids[k + 1])) is not None]
            if not found:
                break
            rank, k = min(found)
            a, b = ids[k], ids[k + 1]
            left, right = symbols[k].replace(SPACE, " "), symbols[k + 1].replace(SPACE, " ")
            joined = symbols[k] + symbols[k + 1]
            nxt_ids, nxt_sym, marked = [], [], []
            i = 0
            while i < len(ids):
                if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                    marked.append(len(nxt_ids))
                    nxt_ids.append(self._new_ids[rank])
                    nxt_sym.append(joined)
                    i += 2
                else:
                    nxt_ids.append(ids[i])
                    nxt_sym.append(symbols[i])
                    i += 1
            ids, symbols = nxt_ids, nxt_sym
            times = f" ({len(marked)}×)" if len(marked) > 1 else ""
            note = f"merge #{rank + 1}: {left!r} + {right!r} → {left + right!r}{times}"
            steps.append(EncodeStep(self._shown(ids), tuple(map(self._label, ids, symbols)), note, rank, tuple(marked)))
        if -1 in ids:
            final = self._fallback(ids, piece)
            labels = tuple(self.describe_token(i) for i in final)
            steps.append(EncodeStep(tuple(final), labels, "byte fallback: characters outside the vocabulary as "
                                    "their UTF-8 byte pieces"))  # fmt: skip
        return steps

    def __repr__(self) -> str:
        return f"CharBPE(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


class _CharPieces(SplitPieces):
    """:meth:`CharBPE.corpus_pieces`: all the units cut at once (:func:`~bpe_core.bpe.piece_merge_kernel.cut_units`).

    Attributes:
        triggers: the characters (a character class's content) of the units ``special`` cuts.
        special: ``unit -> pieces`` of a unit holding an added or crossing token, else ``None``.
    """

    triggers: str = ""
    special: Callable[[str], list[str] | None] | None = None

    def split_units(self, units: Sequence[str], first: Sequence[bool]) -> tuple[list[str], np.ndarray]:
        """As :meth:`SplitPieces.split_units` (each unit by its ``split``), in one ``findall`` over all of them."""
        from ..bpe.piece_merge_kernel import cut_units

        done = cut_units(units, _PLAIN_JOINED, self.triggers, self.special)
        return done if done is not None else super().split_units(units, first)


def char_bpe_from_gguf(vocab: GGUFVocab, name: str) -> CharBPE:
    """A :class:`CharBPE` from a ``gemma4``-type GGUF vocabulary.

    Raises:
        ValueError: not a ``gemma4`` model, or as :class:`CharBPE`.
    """
    if vocab.model != "gemma4":
        raise ValueError(f"{vocab.name}: tokenizer model {vocab.model!r} is not 'gemma4'")
    merges = [parse_merge(m) for m in vocab.merges]
    unk = vocab.flags.get("unknown_token_id")
    return CharBPE(vocab.tokens, vocab.token_types, merges, name=name, unknown_id=unk, source=vocab.source)
