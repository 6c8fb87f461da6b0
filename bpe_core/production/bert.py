"""BERT's WordPiece as shipped: BERT's normalizer in front of the project's greedy longest-match encoder.

``bert-base-uncased`` (Devlin et al., 2019) encodes in four steps, as Hugging
Face ``tokenizers``' ``BertWordPieceTokenizer`` runs them
(``tokenizers/src/normalizers/bert.rs``, ``pre_tokenizers/bert.rs``,
``models/wordpiece``):

1. special tokens (``[PAD] [UNK] [CLS] [SEP] [MASK]``) are cut out of the raw text;
2. BERT's normalizer, :func:`bpe_core.pretokenize.bert_normalize` -- *clean text*
   (NUL, U+FFFD and control/format characters other than tab, newline and
   carriage return are dropped, every whitespace character becomes a space),
   *Chinese characters* (a space on each side of every CJK ideograph, so each
   is a word), *strip accents* (NFD, then the non-spacing marks, category Mn,
   are dropped) and *lower-casing* (one character at a time), applied one
   character at a time so that offsets map back;
3. BERT-style words: whitespace separates words, each punctuation character is
   a word (:data:`bpe_core.pretokenize.BERT_PATTERN`);
4. each word greedily, longest vocabulary piece first, ``##`` on every piece
   but the first; a word that cannot be matched, or longer than 100
   characters, is ``[UNK]`` -- :class:`bpe_core.wordpiece.WordPieceTokenizer`'s
   own encoder, which this class wraps.

``[CLS]`` and ``[SEP]`` are never added (``add_special_tokens=False``).

>>> from bpe_core.production.registry import load_production
>>> tok = load_production("bert")
>>> [tok.describe_token(i) for i in tok.encode("Héllo, Tokenizers!")]
['hello', ',', 'token', '##izer', '##s', '!']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..pieces import PieceTokens, SplitPieces
from ..pretokenize import bert_normalize, split_special
from ..spans import TokenSpan
from ..steps import EncodeStep, PieceSteps
from ..wordpiece import WordPieceTokenizer, wordpiece_encode_steps
from ..wordpiece.batch import CharNormalizer, encode_pieces
from ..wordpiece.words import BERT_RX
from .encodings import check_text
from .gguf_vocab import GGUFVocab

__all__ = ["BERT_SPECIAL_TOKENS", "BertWordPiece", "bert_from_gguf", "bert_from_vocab_txt", "vocab_from_phantom_space"]

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
"""The special tokens ``BertWordPieceTokenizer`` adds (matched in the raw text); ``[unusedN]`` are plain pieces."""


class _CharMap(dict):
    """``str.translate`` table: each character's normal form, computed on first use and cached.

    The normal form of one character is :func:`bpe_core.pretokenize.bert_normalize` of it.

    BERT's normalizer maps each character on its own (clean text, CJK spacing,
    accents, case), so normalizing a text character by character gives its
    normal form, and the pieces say where each normalized character came from.
    """

    def __init__(self, lowercase: bool, strip_accents: bool) -> None:
        super().__init__()
        self.lowercase, self.strip_accents = lowercase, strip_accents

    def __missing__(self, code: int) -> str:
        out = self[code] = bert_normalize(chr(code), lowercase=self.lowercase, strip_accents=self.strip_accents)
        return out


_TABLES: dict[tuple[bool, bool], _CharMap] = {}


def _tables(lowercase: bool, strip_accents: bool) -> _CharMap:
    key = (lowercase, strip_accents)
    if key not in _TABLES:
        _TABLES[key] = _CharMap(lowercase, strip_accents)
    return _TABLES[key]


_NORMALIZERS: dict[tuple[bool, bool], CharNormalizer] = {}


def _normalizer(lowercase: bool, strip_accents: bool) -> CharNormalizer:
    """BERT's normalizer as code-point tables (:class:`~bpe_core.wordpiece.batch.CharNormalizer`), one per setting."""
    key = (lowercase, strip_accents)
    if key not in _NORMALIZERS:
        table = _tables(lowercase, strip_accents)
        _NORMALIZERS[key] = CharNormalizer(lambda c: table[ord(c)])
    return _NORMALIZERS[key]


class BertWordPiece:
    """A production WordPiece tokenizer: BERT's normalizer, BERT-style words, greedy longest match.

    Args:
        vocab: the token strings in id order (``vocab.txt``'s lines; ``##`` on continuation pieces).
        name: display name.
        lowercase: BERT uncased (lower-casing and, with it, accent stripping).
        source: where the vocabulary came from.

    Raises:
        ValueError: as :class:`~bpe_core.wordpiece.WordPieceTokenizer` (a repeated or empty token, no ``[UNK]``).

    Attributes:
        name, source: as given.
        is_byte_level: ``False``; ``unknown_id``: ``[UNK]``'s id.
        pattern: :data:`bpe_core.pretokenize.BERT_PATTERN` (the words, after normalization).
        wordpiece: the :class:`~bpe_core.wordpiece.WordPieceTokenizer` that encodes the words.
    """

    algorithm = "wordpiece"
    """The registered algorithm whose encoding this follows (greedy longest match), as a trained one's."""
    algorithm_label = "WordPiece"
    is_byte_level = False
    special_text = True

    def __init__(self, vocab: Sequence[str], name: str, *, lowercase: bool = True, source: str = "") -> None:
        self.name = name
        self.source = source
        self.lowercase = lowercase
        self.wordpiece = WordPieceTokenizer(list(vocab), BERT_SPECIAL_TOKENS, lowercase=False, name=name)
        self._table = _tables(lowercase, lowercase)
        self.pattern = BERT_RX.pattern

    @property
    def vocab_size(self) -> int:
        """Tokens in the vocabulary (``bert-base-uncased``: 30,522)."""
        return self.wordpiece.vocab_size

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{[PAD]: 0, [UNK]: 100, [CLS]: 101, [SEP]: 102, [MASK]: 103}`` for BERT."""
        return self.wordpiece.special_tokens

    @property
    def unknown_id(self) -> int:
        """``[UNK]``'s id."""
        return self.wordpiece.unknown_id

    @property
    def vocab(self) -> list[str]:
        """Every token string, by id."""
        return [self.wordpiece.id_to_token(i) for i in range(self.vocab_size)]

    @property
    def token_ids_by_bytes(self) -> dict[bytes, int]:
        """``{UTF-8 of a token string: id}`` of the ordinary tokens (``##`` kept), for the vocabulary diff."""
        specials = set(self.special_tokens.values())
        return {t.encode("utf-8"): i for i, t in enumerate(self.vocab) if i not in specials}

    def _segments(self, text: str) -> list[tuple[str, bool]]:
        check_text(text)
        return split_special(text, tuple(self.special_tokens))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no ``[CLS]``/``[SEP]`` added).

        Raises:
            TypeError: ``text`` is not a ``str``.
            ValueError: ``text`` holds an unpaired surrogate.
        """
        out: list[int] = []
        specials = self.wordpiece.special_tokens
        encode_word = self.wordpiece.encode_word
        for segment, is_special in self._segments(text):
            if is_special:
                out.append(specials[segment])
            else:
                for word in BERT_RX.findall(segment.translate(self._table)):
                    out.extend(encode_word(word))
        return out

    def fast_encoder(self) -> Callable[[str], list[int]]:
        """:meth:`encode` (normalization is one ``str.translate``; words are cached)."""
        return self.encode

    def decode(self, ids: Sequence[int]) -> str:
        """The words of the ids joined by spaces, ``##`` pieces glued on (Hugging Face's ``WordPiece`` decoder).

        Raises:
            ValueError: an id outside the vocabulary.
        """
        return self.wordpiece.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of a token's vocabulary string (``##`` included)."""
        return self.wordpiece.token_bytes(token_id)

    def describe_token(self, token_id: int) -> str:
        """A token's vocabulary string (``##ing``)."""
        return self.wordpiece.describe_token(token_id)

    def rank_of(self, token_id: int) -> int | None:
        """``None``: BERT's vocabulary order is not a merge order."""
        return None

    def _normalized(self, segment: str) -> tuple[str, list[int]]:
        """``(normalized segment, origin)``: ``origin[j]`` is the index in ``segment`` of normalized character ``j``."""
        table = self._table
        parts = [table[ord(c)] for c in segment]
        origin = [i for i, p in enumerate(parts) for _ in range(len(p))]
        return "".join(parts), origin

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with offsets into ``text`` as typed (accents and case as typed in ``display``).

        A piece that covers part of what one character normalized to (a CJK
        character's spaces aside, accents and ligatures: ``ﬁ`` stays one
        character, Hangul syllables become three jamo) is ``is_partial`` and
        displays its normalized text.  An unknown word is one ``[UNK]`` span.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[TokenSpan] = []
        wp = self.wordpiece
        specials = wp.special_tokens
        unk = wp.unknown_id
        offset = 0
        for segment, is_special in self._segments(text):
            if is_special:
                sid = specials[segment]
                out.append(TokenSpan(sid, segment.encode(), segment, offset, offset + len(segment), True))
            else:
                norm, origin = self._normalized(segment)
                for m in BERT_RX.finditer(norm):
                    out += self._word_spans(m.group(), m.start(), segment, norm, origin, offset, unk)
            offset += len(segment)
        return out

    def _word_spans(self, word, ws, segment, norm, origin, offset, unk) -> list[TokenSpan]:
        """The spans of one normalized word starting at ``ws`` of ``norm``."""
        ids = self.wordpiece.encode_word(word)
        we = ws + len(word)
        if ids == (unk,):
            s, e = origin[ws], origin[we - 1] + 1
            return [TokenSpan(unk, b"[UNK]", segment[s:e], offset + s, offset + e, True)]
        out = []
        pos = ws
        for k, i in enumerate(ids):
            piece = self.wordpiece.id_to_token(i)
            ns, ne = pos, pos + len(piece) - (2 if k else 0)
            pos = ne
            s, e = origin[ns], origin[ne - 1] + 1
            partial = (ns > 0 and origin[ns - 1] == s) or (ne < len(norm) and origin[ne] == e - 1)
            display = norm[ns:ne] if partial else segment[s:e]
            out.append(TokenSpan(i, piece.encode(), display, offset + s, offset + e, False, partial, None, k > 0))
        return out

    def corpus_pieces(self) -> SplitPieces:
        """How corpus figures measure this tokenizer (:class:`bpe_core.interface.CorpusPieces`): by whole units.

        BERT's normalizer maps each character on its own and keeps a space a
        space, so a unit (which starts at a space) is cut off from the text
        before it, and it normalizes and splits into words as it does inside
        the text; each distinct unit is one piece, encoded by :meth:`encode_pieces`
        (equal to :meth:`token_spans` on each).  The key ``("units",)`` is a
        trained WordPiece's too: they share one count.
        """
        return SplitPieces(self, ("units",), encode=self.encode_pieces)

    def encode_pieces(self, pieces: Sequence[str], first: Sequence[bool] | None = None) -> PieceTokens:
        """The tokens of many distinct pieces at once, equal to :meth:`token_spans` on each piece.

        :func:`bpe_core.wordpiece.batch.encode_pieces` with BERT's normalizer as
        per-character tables: normal forms, words and greedy longest-match-first
        in one compiled pass (the textbook path when the kernels are off).

        Args:
            pieces: ``str`` pieces (units of a corpus, or any text).
            first: unused (BERT puts nothing at a document's start).

        Returns:
            A :class:`~bpe_core.pieces.PieceTokens`, character offsets from each piece's start.

        Raises:
            TypeError, ValueError: as :meth:`token_spans`.
        """
        wp = self.wordpiece
        return encode_pieces(
            pieces,
            trie=wp._vocabulary_trie,
            normalizer=_normalizer(self.lowercase, self.lowercase),
            max_chars=wp.max_input_chars_per_word,
            unknown_id=wp.unknown_id,
            unk_token="[UNK]",
            special_tokens=tuple(wp.special_tokens),
            token_spans=self.token_spans,
        )

    def encode_steps(self, text: str) -> list[PieceSteps]:
        """Each word's greedy longest-match decisions, as :func:`bpe_core.wordpiece.wordpiece_encode_steps` shows them.

        The first line says what BERT's normalizer made of the word when it changed it.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        out: list[PieceSteps] = []
        specials = self.wordpiece.special_tokens
        offset = 0
        for segment, is_special in self._segments(text):
            if is_special:
                step = EncodeStep((specials[segment],), (segment,), "special token: one id, never split")
                out.append(PieceSteps(segment, offset, offset + len(segment), True, (step,)))
            else:
                norm, origin = self._normalized(segment)
                for m in BERT_RX.finditer(norm):
                    s, e = origin[m.start()], origin[m.end() - 1] + 1
                    steps = list(wordpiece_encode_steps(self.wordpiece, m.group())[0].steps)
                    if m.group() != segment[s:e]:
                        first = steps[0]
                        note = f"BERT's normalizer made {segment[s:e]!r} {m.group()!r}; " + first.note
                        steps[0] = type(first)(first.ids, first.labels, note)
                    out.append(PieceSteps(segment[s:e], offset + s, offset + e, False, tuple(steps)))
            offset += len(segment)
        return out

    def __repr__(self) -> str:
        return f"BertWordPiece(name={self.name!r}, vocab_size={self.vocab_size}, source={self.source!r})"


def bert_from_vocab_txt(data: bytes, name: str, source: str = "") -> BertWordPiece:
    """A :class:`BertWordPiece` (uncased) from a ``vocab.txt``'s bytes: one token per line, line number = id.

    Raises:
        ValueError: not UTF-8, or as :class:`BertWordPiece`.
    """
    lines = data.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return BertWordPiece([line.rstrip("\r") for line in lines], name, source=source)


def bert_from_gguf(vocab: GGUFVocab, name: str) -> BertWordPiece:
    """A :class:`BertWordPiece` (uncased) from a ``bert``-type GGUF vocabulary (:func:`vocab_from_phantom_space`).

    Raises:
        ValueError: not a ``bert`` model, or as :class:`BertWordPiece`.
    """
    if vocab.model != "bert":
        raise ValueError(f"{vocab.name}: tokenizer model {vocab.model!r} is not WordPiece ('bert')")
    return BertWordPiece(vocab_from_phantom_space(vocab.tokens), name, source=vocab.source)


def vocab_from_phantom_space(tokens: Sequence[str]) -> list[str]:
    """llama.cpp's WordPiece tokens back to ``vocab.txt`` form.

    Its converter writes a word-initial piece with ``▁`` in front (``▁the``)
    and a continuation without ``##`` (``ing``); bracketed tokens (``[CLS]``) as
    they are.  This undoes it: ``▁the`` -> ``the``, ``ing`` -> ``##ing``.
    """
    out = []
    for t in tokens:
        if t.startswith("\u2581"):
            out.append(t[1:])
        elif t.startswith("[") and t.endswith("]") and len(t) > 2:
            out.append(t)
        else:
            out.append("##" + t)
    return out
