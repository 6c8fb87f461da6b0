"""WordPiece, the textbook way: as the Hugging Face course (chapter 6) trains and encodes it.

Google never published BERT's WordPiece trainer; the course's version is the
one people learn, and this module follows it step by step:

1. **Words**: the text is cut at its special tokens, optionally lower-cased,
   and split BERT-style (whitespace separates words, every punctuation
   character is a word of its own).  The splitter is Hugging Face's own
   ``BertPreTokenizer`` (:func:`hf_bert_pretokenizer`), so this oracle does not
   share the engine's splitter.  Distinct words are counted.
2. **Alphabet**: every first character of a word, and every other character
   with the continuing-subword prefix ``##``, sorted; the vocabulary starts
   with the special tokens, then the alphabet.
3. **Scores**: with the words cut into their current tokens, each adjacent
   pair scores ``freq(pair) / (freq(first) * freq(second))`` -- frequent
   pairs of rare parts first.  Scores are exact :class:`~fractions.Fraction`.
4. **Merge** the best pair (ties: the first pair met, scanning words in order
   of first appearance, left to right); the new token is ``first`` plus
   ``second`` without its ``##``.  Repeat until the vocabulary is as large as asked.

Encoding a word is greedy, longest match first: take the longest vocabulary
piece the word starts with, then the longest ``##`` piece the rest starts
with, and so on; a word that cannot be covered is ``[UNK]`` as a whole.

The fast trainer :func:`bpe_core.wordpiece.trainer.train_wordpiece` and the fast
encoder :mod:`bpe_core.wordpiece.encoder` must give exactly :func:`train` and
:func:`encode_word`.

>>> tok = WordPiece.train("hug hugs hug pug", 12, special_tokens=("[UNK]",))
>>> tok.vocab
['[UNK]', '##g', '##s', '##u', 'h', 'p', 'hu', 'pu', 'hug', 'pug', 'hugs']
>>> [tok.describe_token(i) for i in tok.encode("hugs pugs")], tok.decode(tok.encode("hugs mug"))
(['hugs', 'pug', '##s'], 'hugs [UNK]')
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from itertools import pairwise
from typing import Any, NamedTuple

from ..pretokenize import BERT_PATTERN
from .base import TextbookTokenizer, check_text, split_special_tokens

__all__ = ["DEFAULT_SPECIAL_TOKENS", "ScoredMerge", "WordPiece", "count_words", "encode_word",
           "hf_bert_pretokenizer", "merge_pair", "pair_scores", "train"]  # fmt: skip

DEFAULT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
"""BERT's special tokens, in BERT's (and the course's) order."""


@cache
def hf_bert_pretokenizer() -> Any:
    """Hugging Face ``tokenizers``' ``BertPreTokenizer``: the independent word splitter of this module."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.BertPreTokenizer()


class ScoredMerge(NamedTuple):
    """One WordPiece merge and the numbers that chose it.

    Attributes:
        left, right: the two tokens (``right`` starts with the prefix).
        merged: the new token.
        pair_freq, left_freq, right_freq: the counts in the score.
        tokens_after: tokens of the training words (and special tokens) after the merge.
    """

    left: str
    right: str
    merged: str
    pair_freq: int
    left_freq: int
    right_freq: int
    tokens_after: int

    @property
    def score(self) -> Fraction:
        """``pair_freq / (left_freq * right_freq)``, exact."""
        return Fraction(self.pair_freq, self.left_freq * self.right_freq)


def lowercase(text: str) -> str:
    """Lower-case one character at a time (``Σ`` -> ``σ`` everywhere, as Hugging Face's ``Lowercase``)."""
    return "".join(ch.lower() for ch in text)


def count_words(text: str, special_tokens: Sequence[str] = (), lowercase_text: bool = False) -> tuple[dict, int]:
    """Step 1: ``({word: count} in order of first appearance, special-token occurrences cut out)``.

    >>> count_words("Hug, hug!")
    ({'Hug': 1, ',': 1, 'hug': 1, '!': 1}, 0)
    """
    words: dict[str, int] = {}
    n_special = 0
    for start, end, special in split_special_tokens(check_text(text), special_tokens):
        if special:
            n_special += 1
            continue
        part = lowercase(text[start:end]) if lowercase_text else text[start:end]
        for word, _offsets in hf_bert_pretokenizer().pre_tokenize_str(part):
            words[word] = words.get(word, 0) + 1
    return words, n_special


def pair_scores(words: dict[str, int], splits: dict[str, list[str]]) -> dict[tuple[str, str], tuple[Fraction, ...]]:
    """Step 3: every adjacent pair's ``(score, freq(pair), freq(first), freq(second))``, in the order first met.

    >>> pair_scores({"hug": 2, "hu": 1}, {"hug": ["h", "##u", "##g"], "hu": ["h", "##u"]})[("h", "##u")]
    (Fraction(1, 3), 3, 3, 3)
    """
    token_freq: dict[str, int] = {}
    pair_freq: dict[tuple[str, str], int] = {}
    for w, c in words.items():
        for t in splits[w]:
            token_freq[t] = token_freq.get(t, 0) + c
        for pair in pairwise(splits[w]):
            pair_freq[pair] = pair_freq.get(pair, 0) + c
    return {
        (a, b): (Fraction(c, token_freq[a] * token_freq[b]), c, token_freq[a], token_freq[b])
        for (a, b), c in pair_freq.items()
    }


def merge_pair(split: list[str], pair: tuple[str, str], merged: str) -> list[str]:
    """Step 4 on one word: every occurrence of ``pair`` replaced by ``merged``, left to right."""
    out, i = [], 0
    while i < len(split):
        if i + 1 < len(split) and (split[i], split[i + 1]) == pair:
            out.append(merged)
            i += 2
        else:
            out.append(split[i])
            i += 1
    return out


def train(text: str, vocab_size: int, special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
          lowercase: bool = False, prefix: str = "##") -> tuple[list[str], list[ScoredMerge]]:  # fmt: skip
    """WordPiece training as the course describes it: recount, score exactly, merge, repeat.

    Returns:
        ``(vocab, merges)``: the vocabulary in id order, and the merges with their numbers.
        A merge whose token is already in the vocabulary adds no id.

    Every pair scores 1/3 at every step here, so the first pair met wins each time:

    >>> vocab, merges = train("hug hugs hug", 8, special_tokens=("[UNK]",))
    >>> vocab, merges[0].score
    (['[UNK]', '##g', '##s', '##u', 'h', 'hu', 'hug', 'hugs'], Fraction(1, 3))
    """
    words, n_special = count_words(text, special_tokens, lowercase)
    splits = {w: [w[0]] + [prefix + ch for ch in w[1:]] for w in words}
    vocab = list(special_tokens) + sorted({t for split in splits.values() for t in split})
    merges = []
    while len(vocab) < vocab_size:
        scores = pair_scores(words, splits)
        if not scores:
            break
        best = max(scores, key=lambda pair: scores[pair][0])  # the first of equal scores: the first met
        merged = best[0] + best[1][len(prefix) :]
        splits = {w: merge_pair(split, best, merged) for w, split in splits.items()}
        tokens_after = n_special + sum(len(splits[w]) * c for w, c in words.items())
        merges.append(ScoredMerge(*best, merged, *scores[best][1:], tokens_after))
        if merged not in vocab:
            vocab.append(merged)
    return vocab, merges


def encode_word(word: str, vocab: set[str] | dict, unk: str = "[UNK]", prefix: str = "##",
                max_chars: int = 100) -> list[str]:  # fmt: skip
    """Greedy longest-match-first, exactly as the course's ``encode_word`` (plus BERT's cap on a word's length).

    >>> encode_word("hugs", {"hu", "hug", "##s"}), encode_word("mug", {"hu"})
    (['hug', '##s'], ['[UNK]'])
    """
    if len(word) > max_chars:
        return [unk]
    tokens, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return [unk]
        tokens.append(piece)
        start = end
    return tokens


class WordPiece(TextbookTokenizer):
    """A WordPiece tokenizer: an ordered vocabulary (special tokens, alphabet, merged tokens) and greedy encoding.

    Args:
        vocab: the token strings in id order.
        special_tokens: the special tokens among them (``unk`` one of them).
        unk: the unknown token.
        lowercase: lower-case text before splitting it into words.
        prefix: the continuing-subword prefix.
        name: display name.
        merges: the training's merges (for :meth:`rank_of`), if known.
    """

    def __init__(self, vocab: Sequence[str], special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS, *,
                 unk: str = "[UNK]", lowercase: bool = False, prefix: str = "##", name: str = "Textbook WordPiece",
                 merges: Sequence[ScoredMerge] = ()) -> None:  # fmt: skip
        specials = {s: list(vocab).index(s) for s in special_tokens}
        super().__init__(vocab, specials, name=name, pattern=BERT_PATTERN, unknown_id=specials[unk])
        self.unk, self.lowercase, self.prefix, self.merges = unk, lowercase, prefix, list(merges)
        self.ids = {t: i for i, t in enumerate(self.vocab) if i not in specials.values()}
        self.ranks = {self.ids[m.merged]: k for k, m in reversed(list(enumerate(self.merges)))}

    @classmethod
    def train(cls, text: str, vocab_size: int, special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
              lowercase: bool = False) -> WordPiece:  # fmt: skip
        """Train on ``text`` (see :func:`train`) and return the tokenizer."""
        vocab, merges = train(text, vocab_size, special_tokens, lowercase)
        return cls(vocab, special_tokens, lowercase=lowercase, merges=merges)

    def words(self, text: str, start: int, end: int) -> list[tuple[str, list[int | None]]]:
        """BERT-style words of ``text[start:end]``, each character with the offset it came from."""
        part, origin = text[start:end], list(range(start, end))
        if self.lowercase:
            origin = [start + k for k, ch in enumerate(part) for _ in lowercase(ch)]
            part = lowercase(part)
        return [(w, origin[a:b]) for w, (a, b) in hf_bert_pretokenizer().pre_tokenize_str(part)]

    def encode_word(self, word: str) -> list[tuple[int, int, int]]:
        """Greedy longest-match-first pieces of one word with their offsets (``[UNK]`` covers the whole word)."""
        out, start = [], 0
        for piece in encode_word(word, self.ids, self.unk, self.prefix):
            if piece == self.unk and piece not in self.ids:
                return [(self.unknown_id, 0, len(word))]
            length = len(piece) - (len(self.prefix) if start else 0)
            out.append((self.ids[piece], start, start + length))
            start += length
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """Tokens joined: a ``##`` piece to the token before it, every other token after a space."""
        parts = []
        for k, i in enumerate(ids):
            self._check_id(i)
            t = self.vocab[i]
            continues = k > 0 and self.is_continuation(i)
            parts.append(t[len(self.prefix) :] if continues else (" " if k else "") + t)
        return "".join(parts)

    def rank_of(self, token_id: int) -> int | None:
        """The rank of the merge that made the token; ``None`` for special tokens and the alphabet."""
        return self.ranks.get(token_id)

    def is_continuation(self, token_id: int) -> bool:
        """The token continues a word (it starts with the prefix and is no special token)."""
        return token_id not in self.special_tokens.values() and self.vocab[token_id].startswith(self.prefix)
