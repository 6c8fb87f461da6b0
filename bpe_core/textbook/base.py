"""What a tokenizer is: a vocabulary, a way to cut text into words, and a rule to encode one word.

Every tokenizer in this package -- BPE, WordPiece, Unigram -- encodes a text in
the same three steps, and only the last one differs between them:

1. **Special tokens** (``<|endoftext|>``, ``[CLS]``) are cut out of the text
   first, longest match first; each becomes its own id and nothing else
   touches it.
2. The text between them is cut into **words** (pre-tokens): GPT-2's regex for
   BPE, whitespace and punctuation for WordPiece (BERT), the ``▁`` marks of
   spaces for Unigram (SentencePiece).  No token ever crosses a word boundary.
3. Each word is **encoded on its own** by the algorithm's rule: BPE applies its
   learned merges, lowest rank first; WordPiece takes the longest vocabulary
   piece, again and again; Unigram takes the most likely segmentation.

Decoding goes back from ids to text.  Training is the other half of each
algorithm: it reads a text and learns the vocabulary (and, for BPE, the merges)
that step 3 uses.

:class:`TextbookTokenizer` holds steps 1 and 2 and the answers every tokenizer
of the app gives (:class:`bpe_core.interface.Tokenizer`); each algorithm's
module adds :meth:`~TextbookTokenizer.words`, :meth:`~TextbookTokenizer.encode_word`
and :meth:`~TextbookTokenizer.decode`.
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from ..pretokenize import validate_special_tokens
from ..spans import TokenSpan
from ..steps import EncodeStep, PieceSteps

__all__ = ["TextbookTokenizer", "check_text", "split_special_tokens"]

Word = tuple[str, list[int | None]]
"""A word and, for each of its characters, the offset in the text it came from (``None``: stands for none)."""


def check_text(text: object) -> str:
    """``text`` itself, once checked to be a ``str`` with a UTF-8 form.

    Raises:
        TypeError: ``text`` is not a ``str``.
        ValueError: ``text`` holds an unpaired surrogate (no character, no UTF-8 form).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    m = regex.search(r"[\ud800-\udfff]", text)
    if m is not None:
        raise ValueError(f"text holds an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}")
    return text


def split_special_tokens(text: str, special_tokens: Sequence[str]) -> list[tuple[int, int, bool]]:
    """Cut ``text`` around its special tokens, longest match first.

    Returns:
        ``(start, end, is_special)`` character ranges in order, covering ``text``
        (empty ranges between two specials are left out).

    >>> split_special_tokens("a<s>b", ["<s>"])
    [(0, 1, False), (1, 4, True), (4, 5, False)]
    """
    if not special_tokens:
        return [(0, len(text), False)] if text else []
    longest_first = sorted(special_tokens, key=len, reverse=True)
    out, pos = [], 0
    for m in regex.finditer("|".join(regex.escape(s) for s in longest_first), text):
        if m.start() > pos:
            out.append((pos, m.start(), False))
        out.append((m.start(), m.end(), True))
        pos = m.end()
    if pos < len(text):
        out.append((pos, len(text), False))
    return out


class TextbookTokenizer:
    """Steps 1 and 2 of encoding, and the interface answers, for any vocabulary (see the module docstring).

    Attributes:
        name: display name.
        vocab: the token of every id, in id order (``bytes`` for byte-level BPE, ``str`` otherwise).
        special_tokens: ``{special token: id}``.
        unknown_id: the id of text the vocabulary cannot spell, or ``None``.
        pattern: the regex source of step 2.
    """

    is_byte_level = False

    def __init__(self, vocab: Sequence, special_tokens: dict[str, int], *, name: str, pattern: str,
                 unknown_id: int | None = None) -> None:  # fmt: skip
        self.name = name
        self.vocab = list(vocab)
        validate_special_tokens(list(special_tokens))
        self.special_tokens = dict(special_tokens)
        self.unknown_id = unknown_id
        self.pattern = pattern

    # -- what each algorithm adds -------------------------------------------------

    def words(self, text: str, start: int, end: int) -> list[Word]:  # pragma: no cover - abstract
        """Step 2: the words of ``text[start:end]`` (no special token inside)."""
        raise NotImplementedError

    def encode_word(self, word: str) -> list[tuple[int, int, int]]:  # pragma: no cover - abstract
        """Step 3: ``(id, start, end)`` of each token of one word, offsets in the word's characters."""
        raise NotImplementedError

    def decode(self, ids: Sequence[int]) -> str:  # pragma: no cover - abstract
        """The text of a list of ids."""
        raise NotImplementedError

    # -- encoding ------------------------------------------------------------------

    def pieces(self, text: str) -> list[tuple[int, int, str | None, list[int | None]]]:
        """Steps 1 and 2: ``(start, end, word, origin)`` in text order; ``word`` is ``None`` for a special token."""
        out = []
        for start, end, special in split_special_tokens(check_text(text), list(self.special_tokens)):
            if special:
                out.append((start, end, None, []))
            else:
                for word, origin in self.words(text, start, end):
                    chars = [o for o in origin if o is not None]
                    out.append((chars[0] if chars else start, chars[-1] + 1 if chars else start, word, origin))
        return out

    def tokens(self, text: str) -> list[tuple[int, int, int, bool, bool]]:
        """``(id, start, end, is_special, is_partial)`` of every token, character offsets into ``text``.

        ``is_partial``: the token shares a character with its neighbour (what
        lower-casing made of one character, ``İ`` -> ``i̇``, was split).
        """
        out = []
        for start, end, word, origin in self.pieces(text):
            if word is None:
                out.append((self.special_tokens[text[start:end]], start, end, True, False))
                continue
            for i, s, e in self.encode_word(word):
                chars = [o for o in origin[s:e] if o is not None]
                a = chars[0] if chars else next((o for o in origin[e:] if o is not None), start)
                b = chars[-1] + 1 if chars else a
                shared = (s > 0 and origin[s - 1] == origin[s] is not None) or (
                    e < len(origin) and origin[e] == origin[e - 1] is not None
                )
                out.append((i, a, b, False, shared))
        return out

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (``TypeError`` for a non-``str``, ``ValueError`` for an unpaired surrogate)."""
        return [t[0] for t in self.tokens(text)]

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The tokens of ``text`` with character offsets (see :class:`~bpe_core.spans.TokenSpan`)."""
        out = []
        for i, a, b, special, partial in self.tokens(text):
            display = self.describe_token(i) if partial else text[a:b]
            unknown = special or i == self.unknown_id
            out.append(TokenSpan(i, self.token_bytes(i), display, a, b, unknown, partial, self.rank_of(i),
                                 self.is_continuation(i)))  # fmt: skip
        return out

    def word_steps(self, word: str) -> tuple[EncodeStep, ...]:
        """How one word is encoded, line by line (here one line: its tokens; BPE shows each merge)."""
        ids = tuple(i for i, _s, _e in self.encode_word(word))
        return (EncodeStep(ids, tuple(self.describe_token(i) for i in ids), f"{word!r} encoded"),)

    def encode_steps(self, text: str) -> list[PieceSteps]:
        """How ``text`` is encoded, one word (or special token) at a time: ``list[PieceSteps]``."""
        out = []
        for start, end, word, _origin in self.pieces(text):
            if word is None:
                line = EncodeStep((self.special_tokens[text[start:end]],), (text[start:end],), "special token")
                out.append(PieceSteps(text[start:end], start, end, True, (line,)))
            else:
                out.append(PieceSteps(text[start:end], start, end, False, self.word_steps(word)))
        return out

    # -- the vocabulary ------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Token ids this tokenizer can emit (special tokens included)."""
        return len(self.vocab)

    def _check_id(self, token_id: int) -> None:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < len(self.vocab):
            raise ValueError(f"unknown token id {token_id!r} (vocab size {len(self.vocab)})")

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (a string token's UTF-8); ``ValueError`` for an unknown id."""
        self._check_id(token_id)
        t = self.vocab[token_id]
        return t if isinstance(t, bytes) else t.encode("utf-8")

    def describe_token(self, token_id: int) -> str:
        """The printable form of one token (its string)."""
        self._check_id(token_id)
        return str(self.vocab[token_id])

    def rank_of(self, token_id: int) -> int | None:
        """0-based rank of the training step that created a token, or ``None``."""
        return None

    def is_continuation(self, token_id: int) -> bool:
        """The token continues a word (WordPiece's ``##`` pieces)."""
        return False

    def fast_encoder(self) -> None:
        """``None``: a textbook tokenizer is the slow, readable encoder."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, vocab_size={self.vocab_size})"
