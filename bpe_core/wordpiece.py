"""WordPiece: trainer (likelihood score) and greedy longest-match-first encoder.

The algorithm is WordPiece as the Hugging Face NLP course, chapter 6, describes
and prints it (Google never published BERT's trainer; the course's version is
the one learners meet, and ``../shared/seeds/004_*`` reproduces it):

* text is split on special tokens first (they are removed from training and
  encoded as their ids), optionally lower-cased (per character, so offsets can
  be mapped back), and pre-tokenized BERT-style: whitespace separates words and
  every punctuation character is a word of its own
  (:data:`bpe_core.pretokenize.BERT_PATTERN`, as Hugging Face ``BertPreTokenizer``);
* the initial vocabulary is the special tokens in the order given, then the
  alphabet sorted by code point: every first character of a word, and every
  non-first character with the continuing-subword prefix (``"##"``);
* each step merges the adjacent pair with the highest score
  ``freq(pair) / (freq(first) * freq(second))``, where frequencies count
  occurrences in the current segmentation of the training words, weighted by
  word counts; the merged token is ``first + second`` without the ``##`` of
  ``second``.  Ties go to the pair whose first occurrence comes earliest when
  scanning the words in order of first appearance, left to right (the order in
  which the course's code meets the pairs).  Scores are compared exactly;
* encoding is greedy longest-match-first inside each word, with ``##`` on every
  piece but the first; a word that cannot be covered, or that is longer than
  ``max_input_chars_per_word`` characters (100, as in BERT), becomes the
  unknown token.

Training keeps incremental pair counts, token frequencies, a pair -> words
index, a token -> pairs index and a priority queue with lazy invalidation: a
merge updates only the pairs whose count, first occurrence or score changes.
"""

from __future__ import annotations

import copy
import heapq
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import regex

from .bpe import TrainingInfo
from .interface import Algorithm, TrainingCancelled, register_algorithm
from .pretokenize import BERT_PATTERN, compile_pattern, split_special, validate_special_tokens
from .spans import TokenSpan

__all__ = [
    "DEFAULT_MAX_INPUT_CHARS_PER_WORD",
    "DEFAULT_SPECIAL_TOKENS",
    "TrainingCancelled",
    "WordPieceMerge",
    "WordPieceTokenizer",
    "count_words",
    "lowercase_text",
    "train_wordpiece",
]

DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
"""BERT's special tokens, in BERT's order (the course uses the same list)."""

DEFAULT_MAX_INPUT_CHARS_PER_WORD = 100
"""Words longer than this many characters encode as the unknown token (BERT's and Hugging Face's default)."""

ProgressCallback = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; ``phase`` is ``"count"`` or ``"merge"``; may raise :class:`TrainingCancelled`."""

_BERT_RX = compile_pattern(BERT_PATTERN)
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_FIRST_SHIFT = 40  # a first occurrence is stored as word_index << 40 | character offset


@dataclass(frozen=True, slots=True)
class WordPieceMerge:
    """One merge of the WordPiece training trace.

    Attributes:
        rank: 0-based merge rank (order of learning).
        left_id, right_id: ids of the merged pair; ``right`` is always a
            continuation (``##``) token.
        new_id: id of the resulting token.
        left, right: the two tokens' vocabulary strings (``"Hu"``, ``"##g"``).
        merged: the resulting token's string (``"Hug"``): ``left`` plus ``right``
            without its continuing-subword prefix.
        pair_freq: adjacent occurrences of the pair over the training words,
            weighted by word counts, when it was chosen.
        left_freq, right_freq: occurrences of each part in the segmentation at
            that moment (weighted the same way), the score's denominators.
        replaced: occurrences actually replaced (left to right, non-overlapping;
            less than ``pair_freq`` only when ``left == right`` overlaps itself).
        tokens_after: tokens in the training segmentation after this merge
            (special-token occurrences count one each).  This is the trainer's
            segmentation, not greedy encoding, which may differ.
        added: ``False`` when ``merged`` was already in the vocabulary (reached
            earlier by another pair): the merge still applies but adds no id.
    """

    rank: int
    left_id: int
    right_id: int
    new_id: int
    left: str
    right: str
    merged: str
    pair_freq: int
    left_freq: int
    right_freq: int
    replaced: int
    tokens_after: int
    added: bool = True

    @property
    def score(self) -> float:
        """``pair_freq / (left_freq * right_freq)`` as a float (for display; training compares exactly)."""
        return self.pair_freq / (self.left_freq * self.right_freq)

    @property
    def score_exact(self) -> Fraction:
        """The score as an exact :class:`fractions.Fraction`."""
        return Fraction(self.pair_freq, self.left_freq * self.right_freq)

    @property
    def count(self) -> int:
        """Alias of ``pair_freq``, the name :class:`bpe_core.bpe.MergeStep` uses."""
        return self.pair_freq


# ---------------------------------------------------------------------------
# normalization


def lowercase_text(text: str) -> str:
    """Lower-case ``text`` one character at a time.

    Equal to ``"".join(c.lower() for c in text)``: unlike ``str.lower`` it maps
    a capital sigma to ``σ`` wherever it stands (no word-final ``ς``), as
    Hugging Face's ``Lowercase`` normalizer does, so that every output character
    comes from exactly one input character.  Only ``İ`` (U+0130) lower-cases to
    two characters (``i`` + U+0307).

    Args:
        text: any ``str``.

    Returns:
        The lower-cased ``str``.
    """
    return text.replace("\u03a3", "\u03c3").lower()


def _normalize(segment: str, lowercase: bool) -> tuple[str, list[int] | None]:
    """``(normalized, origin)``; ``origin[j]`` is the index in ``segment`` of normalized char ``j``.

    ``origin`` is ``None`` when the mapping is the identity (no lower-casing, or
    no character changed length).
    """
    if not lowercase:
        return segment, None
    norm = lowercase_text(segment)
    if len(norm) == len(segment):
        return norm, None
    origin: list[int] = []
    for i, ch in enumerate(segment):
        origin.extend([i] * len(lowercase_text(ch)))
    return norm, origin


# ---------------------------------------------------------------------------
# training


def _check_args(
    vocab_size: int,
    specials: tuple[str, ...],
    unk_token: str,
    prefix: str,
    max_input_chars_per_word: int,
) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if not isinstance(unk_token, str):
        raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
    if unk_token not in specials:
        raise ValueError(
            f"the unknown token {unk_token!r} must be one of the special tokens {list(specials)}: WordPiece "
            "encodes a word it cannot match as that token"
        )
    if not isinstance(prefix, str):
        raise TypeError(f"continuing_subword_prefix must be a str, got {type(prefix).__name__}")
    if prefix == "" or any(c.isspace() for c in prefix):
        raise ValueError(
            f"continuing_subword_prefix {prefix!r} must be a non-empty string without whitespace (BERT uses '##')"
        )
    if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int):
        raise TypeError(f"max_input_chars_per_word must be an int, got {type(max_input_chars_per_word).__name__}")
    if max_input_chars_per_word < 1:
        raise ValueError(f"max_input_chars_per_word must be at least 1, got {max_input_chars_per_word}")


def _surrogate_error(text: str) -> ValueError | None:
    m = _SURROGATE.search(text)
    if m is None:
        return None
    return ValueError(
        f"text contains an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}, which is not a "
        "character and has no UTF-8 form; remove it or replace it with U+FFFD"
    )


def count_words(text: str, special_tokens: Sequence[str] = (), lowercase: bool = False) -> tuple[dict[str, int], int]:
    """Count the BERT-style words of a text, in order of first appearance.

    Args:
        text: the training text.
        special_tokens: special-token strings; their occurrences are cut out
            (longest match first) before anything else and never counted.
        lowercase: lower-case each segment with :func:`lowercase_text` first.

    Returns:
        ``(counts, n_special)``: ``{word: occurrences}`` whose iteration order is
        the order of first appearance, and the number of special-token
        occurrences removed.

    Raises:
        TypeError, ValueError: bad special tokens (see
            :func:`bpe_core.pretokenize.validate_special_tokens`).
    """
    specials = validate_special_tokens(special_tokens)
    counts: Counter = Counter()
    n_special = 0
    for segment, is_special in split_special(text, specials):
        if is_special:
            n_special += 1
        else:
            counts.update(_BERT_RX.findall(lowercase_text(segment) if lowercase else segment))
    return dict(counts), n_special


def train_wordpiece(
    text: str,
    vocab_size: int,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
    lowercase: bool = False,
    continuing_subword_prefix: str = "##",
    *,
    unk_token: str = "[UNK]",
    max_input_chars_per_word: int = DEFAULT_MAX_INPUT_CHARS_PER_WORD,
    progress: ProgressCallback | None = None,
    name: str | None = None,
) -> WordPieceTokenizer:
    """Train a WordPiece tokenizer on a text (see the module docstring for the exact rules).

    Args:
        text: the training text (``str``).
        vocab_size: target vocabulary size in tokens, counting the special
            tokens, the alphabet and the merged tokens.  Training stops earlier,
            with ``tokenizer.training.stop_reason`` set, when every word is a
            single token.
        special_tokens: special-token strings, ids 0, 1, ... in the order given;
            cut out of the text before training and never merged.
        lowercase: lower-case the text (per character, :func:`lowercase_text`)
            before pre-tokenization, in training and in encoding.
        continuing_subword_prefix: the mark of a non-first piece of a word.
        unk_token: the token for words that cannot be encoded; must be one of
            ``special_tokens``.
        max_input_chars_per_word: longer words encode as ``unk_token`` (characters).
        progress: optional ``progress(phase, done, total)`` callback; it may raise
            :class:`TrainingCancelled` to stop.
        name: display name (default ``"WordPiece"``, ``"WordPiece (lower-cased)"``).

    Returns:
        The trained :class:`WordPieceTokenizer`; its ``trace`` records every merge.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: ``vocab_size`` is below the initial vocabulary (the message
            gives the minimum for this text); ``unk_token`` is not a special
            token; bad special tokens or prefix; ``text`` holds an unpaired
            surrogate.
        TrainingCancelled: raised by ``progress``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    specials = validate_special_tokens(special_tokens)
    _check_args(vocab_size, specials, unk_token, continuing_subword_prefix, max_input_chars_per_word)
    err = _surrogate_error(text)
    if err is not None:
        raise err
    prefix = continuing_subword_prefix
    t0 = time.perf_counter()
    if progress:
        progress("count", 0, 1)
    counts, n_special = count_words(text, specials, lowercase)
    if progress:
        progress("count", 1, 1)
    count_seconds = time.perf_counter() - t0

    t1 = time.perf_counter()
    firsts: set[str] = set()
    inners: set[str] = set()
    for w in counts:
        firsts.add(w[0])
        if len(w) > 1:
            inners.update(w[1:])
    alphabet = sorted(firsts | {prefix + c for c in inners})
    n_base = len(specials) + len(alphabet)
    if vocab_size < n_base:
        raise ValueError(
            f"vocab_size {vocab_size} is below the initial vocabulary: WordPiece on this text needs at least "
            f"{n_base} ({len(specials)} special tokens + {len(alphabet)} alphabet tokens: {len(firsts)} "
            f"word-initial characters and {len(inners)} {prefix}-prefixed inner characters)"
        )
    strs: list[str] = list(specials) + alphabet
    piece_ids: dict[str, int] = {s: len(specials) + i for i, s in enumerate(alphabet)}
    tlen = [len(s) for s in specials] + [1] * len(alphabet)

    words: list[list[int]] = []
    freqs: list[int] = []
    tf = [0] * len(strs)
    initial_tokens = n_special
    for w, c in counts.items():
        ids = [piece_ids[w[0]]] + [piece_ids[prefix + ch] for ch in w[1:]]
        for t in ids:
            tf[t] += c
        initial_tokens += len(ids) * c
        if len(ids) > 1:
            words.append(ids)
            freqs.append(c)

    steps = _merge_loop(words, freqs, strs, tlen, tf, piece_ids, prefix, vocab_size, initial_tokens, progress)
    info = TrainingInfo(
        requested_vocab_size=vocab_size,
        pretokens=sum(counts.values()),
        unique_pretokens=len(counts),
        special_occurrences=n_special,
        initial_tokens=initial_tokens,
        count_seconds=count_seconds,
        merge_seconds=time.perf_counter() - t1,
    )
    if len(strs) < vocab_size:
        info.stop_reason = (
            f"training stopped at {len(strs)} tokens instead of {vocab_size}: after {len(steps)} merges every "
            "word of the training text is a single token, so no pair is left to merge (a longer or more varied "
            "text gives more merges)"
        )
    tok = WordPieceTokenizer._from_parts(
        tokens=strs,
        special_tokens=specials,
        unk_token=unk_token,
        prefix=prefix,
        lowercase=lowercase,
        max_input_chars_per_word=max_input_chars_per_word,
        name=name or ("WordPiece (lower-cased)" if lowercase else "WordPiece"),
        base_size=n_base,
        trace=steps,
        training=info,
    )
    tok._train_words = (counts, n_special)
    return tok


def _merge_loop(
    words: list[list[int]],
    freqs: list[int],
    strs: list[str],
    tlen: list[int],
    tf: list[int],
    piece_ids: dict[str, int],
    prefix: str,
    vocab_size: int,
    initial_tokens: int,
    progress: ProgressCallback | None,
) -> list[WordPieceMerge]:
    """The incremental merge loop; appends new tokens to ``strs``/``tlen``/``tf`` in place.

    Exact scores: with ``T`` the total token count (an upper bound of every
    frequency), two different scores ``p/q`` differ by more than ``1/T**4``, so
    ``(p << K) // q`` with ``K = 4 * bitlen(T) + 1`` is an integer with the same
    order as the exact scores.  Heap entries are ``(-score_key, first, pair)``
    where ``first`` (word index << 40 | character offset) is the pair's first
    occurrence; an entry is acted on only when both still hold (lazy
    invalidation), and a pair gets a new entry whenever its true key improves.
    """
    plen = len(prefix)
    shift = max(vocab_size, 2).bit_length()
    mask = (1 << shift) - 1
    big_k = 4 * max(initial_tokens, 1).bit_length() + 1
    fs = _FIRST_SHIFT

    pf: dict[int, int] = {}  # pair -> weighted adjacent count
    where: dict[int, set[int]] = {}  # pair -> words that hold it (exact)
    first: dict[int, int] = {}  # pair -> first occurrence
    by_tok: dict[int, set[int]] = {}  # token -> live pairs it is part of
    for wi, w in enumerate(words):
        c = freqs[wi]
        prev = w[0]
        off = 0
        for t in w[1:]:
            q = prev << shift | t
            if q in pf:
                pf[q] += c
                where[q].add(wi)
            else:
                pf[q] = c
                where[q] = {wi}
                first[q] = wi << fs | off
                by_tok.setdefault(prev, set()).add(q)
                by_tok.setdefault(t, set()).add(q)
            off += tlen[prev]
            prev = t

    heap = [(-((c << big_k) // (tf[q >> shift] * tf[q & mask])), first[q], q) for q, c in pf.items()]
    pushed: dict[int, tuple[int, int]] = {e[2]: (e[0], e[1]) for e in heap}
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop

    steps: list[WordPieceMerge] = []
    tokens = initial_tokens
    n_wanted = vocab_size - len(strs)
    report_every = max(1, n_wanted // 200)
    rank = 0
    while len(strs) < vocab_size:
        # the best pair: the smallest entry whose key is still its pair's true key
        while heap:
            negn, fk, q = heappop(heap)
            c = pf.get(q)
            if c is None:
                continue
            a, b = q >> shift, q & mask
            true_n = -((c << big_k) // (tf[a] * tf[b]))
            true_f = first[q]
            if true_n == negn and true_f == fk:
                break
            if pushed.get(q) == (negn, fk):  # its newest entry is gone: queue the true key
                heappush(heap, (true_n, true_f, q))
                pushed[q] = (true_n, true_f)
        else:
            break  # no pair left
        best = q
        pair_count = c
        left_freq, right_freq = tf[a], tf[b]
        merged = strs[a] + strs[b][plen:]
        m = piece_ids.get(merged)
        added = m is None
        if m is None:
            m = len(strs)
            strs.append(merged)
            tlen.append(tlen[a] + tlen[b])
            tf.append(0)
            piece_ids[merged] = m
        del pf[best]
        del pushed[best]
        del first[best]
        affected = where.pop(best)
        by_tok[a].discard(best)
        by_tok[b].discard(best)

        delta: dict[int, int] = {}
        touched: set[int] = set()  # pairs whose first occurrence moved
        dirty: set[int] = set()  # pairs that left the word of their first occurrence
        replaced = 0
        for wi in affected:
            w = words[wi]
            c = freqs[wi]
            n = len(w)
            # the pairs of the word before the merge: count and first offset
            old_n: dict[int, int] = {}
            old_f: dict[int, int] = {}
            prev = w[0]
            off = 0
            for t in w[1:]:
                q = prev << shift | t
                if q in old_n:
                    old_n[q] += 1
                else:
                    old_n[q] = 1
                    old_f[q] = off
                off += tlen[prev]
                prev = t
            # merge left to right, without overlaps
            new: list[int] = []
            i = 0
            k = 0
            while i < n:
                if w[i] == a and i + 1 < n and w[i + 1] == b:
                    new.append(m)
                    i += 2
                    k += 1
                else:
                    new.append(w[i])
                    i += 1
            words[wi] = new
            replaced += c * k
            new_n: dict[int, int] = {}
            new_f: dict[int, int] = {}
            if len(new) > 1:
                prev = new[0]
                off = 0
                for t in new[1:]:
                    q = prev << shift | t
                    if q in new_n:
                        new_n[q] += 1
                    else:
                        new_n[q] = 1
                        new_f[q] = off
                    off += tlen[prev]
                    prev = t
            wkey = wi << fs
            for q, oc in old_n.items():
                if q == best:
                    continue
                nc = new_n.get(q)
                if nc is None:
                    delta[q] = delta.get(q, 0) - c * oc
                    where[q].discard(wi)
                    if first[q] >> fs == wi:
                        dirty.add(q)
                else:
                    if nc != oc:
                        delta[q] = delta.get(q, 0) + c * (nc - oc)
                    if new_f[q] != old_f[q] and first[q] >> fs == wi:
                        first[q] = wkey | new_f[q]
                        touched.add(q)
            for q, nc in new_n.items():
                if q in old_n:
                    continue
                delta[q] = delta.get(q, 0) + c * nc
                fk = wkey | new_f[q]
                s = where.get(q)
                if s is None:
                    where[q] = {wi}
                    first[q] = fk
                    by_tok.setdefault(q >> shift, set()).add(q)
                    by_tok.setdefault(q & mask, set()).add(q)
                else:
                    s.add(wi)
                    if q not in dirty and fk < first[q]:
                        first[q] = fk
                        touched.add(q)

        for q, d in delta.items():
            if d == 0:
                continue
            nc = pf.get(q, 0) + d
            if nc > 0:
                pf[q] = nc
            else:  # the pair is gone from every word
                pf.pop(q, None)
                where.pop(q, None)
                first.pop(q, None)
                pushed.pop(q, None)
                dirty.discard(q)
                by_tok[q >> shift].discard(q)
                by_tok[q & mask].discard(q)
        for q in dirty:
            wmin = min(where[q])
            w = words[wmin]
            x, y = q >> shift, q & mask
            off = 0
            for j in range(len(w) - 1):
                if w[j] == x and w[j + 1] == y:
                    break
                off += tlen[w[j]]
            first[q] = wmin << fs | off

        if a == b:
            tf[a] -= 2 * replaced
        else:
            tf[a] -= replaced
            tf[b] -= replaced
        tf[m] += replaced
        tokens -= replaced

        # re-key every pair whose count, first occurrence or part frequencies changed
        candidates = set(delta)
        candidates |= touched
        candidates |= dirty
        for t in (a, b, m):
            s = by_tok.get(t)
            if s:
                candidates |= s
        for q in candidates:
            c = pf.get(q)
            if c is None:
                continue
            key = (-((c << big_k) // (tf[q >> shift] * tf[q & mask])), first[q])
            old = pushed.get(q)
            if old is None or key < old:
                pushed[q] = key
                heappush(heap, (key[0], key[1], q))

        steps.append(
            WordPieceMerge(
                rank, a, b, m, strs[a], strs[b], merged, pair_count, left_freq, right_freq, replaced, tokens, added
            )
        )
        rank += 1
        if len(heap) > 4 * len(pf) + 100_000:  # drop stale entries now and then
            heap = [(k[0], k[1], q) for q, k in pushed.items()]
            heapq.heapify(heap)
        if progress is not None and rank % report_every == 0:
            progress("merge", min(len(strs) - (vocab_size - n_wanted), n_wanted), n_wanted)
    if progress is not None:
        progress("merge", len(strs) - (vocab_size - n_wanted), n_wanted)
    return steps


# ---------------------------------------------------------------------------
# the tokenizer


class WordPieceTokenizer:
    """A WordPiece tokenizer: an ordered vocabulary, special tokens and the encoding rules.

    Build it from any ordered vocabulary (for example BERT's ``vocab.txt``
    lines), or get one from :func:`train_wordpiece`.  Encoding splits out the
    special tokens (longest match first), lower-cases if asked, pre-tokenizes
    BERT-style and encodes each word greedily, longest match first; it gives
    exactly Hugging Face ``tokenizers``' ids for a ``WordPiece`` model with the
    same vocabulary and a ``BertPreTokenizer`` (and a ``Lowercase`` normalizer).

    Args:
        vocab: the token strings in id order (id = position); continuation
            pieces carry the prefix (``"##ing"``).  Strings must be non-empty and
            distinct, except that a piece may repeat a special token's string
            (the first entry is the special token; specials are matched in the
            raw text, pieces inside words).
        special_tokens: strings of ``vocab`` that are special tokens: matched in
            the raw text before anything else, never split.
        unk_token: the token for unencodable words; one of ``special_tokens``.
        continuing_subword_prefix: the prefix of non-first pieces.
        lowercase: lower-case text (per character) before pre-tokenization.
        max_input_chars_per_word: longer words become ``unk_token`` (characters).
        name: display name.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: an empty or repeated vocabulary string; a special token not in
            ``vocab``; ``unk_token`` not a special token; a bad prefix or maximum.

    The smallest vocabulary size a view can have (:attr:`min_vocab_size`) is
    the length of the leading run of special tokens and one-character pieces
    (``"a"``, ``"##a"``), and at least one more than the largest special id:
    for a trained tokenizer, the special tokens plus the alphabet.
    """

    def __init__(
        self,
        vocab: Sequence[str],
        special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        lowercase: bool = False,
        max_input_chars_per_word: int = DEFAULT_MAX_INPUT_CHARS_PER_WORD,
        name: str = "WordPiece",
    ) -> None:
        if isinstance(vocab, str | bytes) or not isinstance(vocab, Sequence):
            raise TypeError(f"vocab must be a list of token strings in id order, got {type(vocab).__name__}")
        tokens = list(vocab)
        for i, s in enumerate(tokens):
            if not isinstance(s, str):
                raise TypeError(f"vocab entry {i} must be a str, got {type(s).__name__}")
        specials = validate_special_tokens(special_tokens)
        _check_args(0, specials, unk_token, continuing_subword_prefix, max_input_chars_per_word)
        self._setup(
            tokens, specials, unk_token, continuing_subword_prefix, bool(lowercase), max_input_chars_per_word,
            str(name), None, None, None,
        )  # fmt: skip

    @classmethod
    def _from_parts(
        cls,
        *,
        tokens: list[str],
        special_tokens: Sequence[str],
        unk_token: str,
        prefix: str,
        lowercase: bool,
        max_input_chars_per_word: int,
        name: str,
        base_size: int | None,
        trace: list[WordPieceMerge] | None,
        training: TrainingInfo | None,
    ) -> WordPieceTokenizer:
        self = cls.__new__(cls)
        self._setup(
            tokens, tuple(special_tokens), unk_token, prefix, lowercase, max_input_chars_per_word, name,
            base_size, trace, training,
        )  # fmt: skip
        return self

    def _setup(
        self,
        tokens: list[str],
        specials: tuple[str, ...],
        unk_token: str,
        prefix: str,
        lowercase: bool,
        max_chars: int,
        name: str,
        base_size: int | None,
        trace: list[WordPieceMerge] | None,
        training: TrainingInfo | None,
    ) -> None:
        special_set = set(specials)
        special_ids: dict[str, int] = {}
        piece_ids: dict[str, int] = {}
        for i, s in enumerate(tokens):
            if s == "":
                raise ValueError(f"vocab entry {i} is empty; every token needs at least one character")
            if s in special_set and s not in special_ids:
                special_ids[s] = i
            else:  # a later entry with a special token's string is an ordinary piece
                if s in piece_ids:
                    raise ValueError(f"token {s!r} appears twice in vocab (ids {piece_ids[s]} and {i})")
                piece_ids[s] = i
        for s in specials:
            if s not in special_ids:
                raise ValueError(f"special token {s!r} is not in vocab")
        plen = len(prefix)
        run = 0
        for s in tokens:
            if s in special_set or len(s) == 1 or (len(s) == plen + 1 and s.startswith(prefix)):
                run += 1
            else:
                break
        floor = max(special_ids.values(), default=-1) + 1
        if base_size is None:
            base_size = max(run, floor)
        elif not floor <= base_size <= len(tokens):
            raise ValueError(f"min_vocab_size {base_size} must be in {floor}..{len(tokens)}")
        self.name = name
        self._tokens = tokens
        self._specials = {s: special_ids[s] for s in specials}
        self._special_ids = frozenset(self._specials.values())
        self._piece_ids = piece_ids
        self._unk_token = unk_token
        self._unk_id = special_ids[unk_token]
        self._prefix = prefix
        self._lowercase = lowercase
        self._max_chars = max_chars
        self._max_piece = max((len(s) for s in piece_ids), default=1)
        self._base = base_size
        self._trace_full = trace
        self.training = training
        # merge rank that created each id (the first merge that produced its string)
        if trace is not None:
            self._rank_of_id = {}
            for st in trace:
                if st.added:
                    self._rank_of_id[st.new_id] = st.rank
        else:
            self._rank_of_id = {i: i - base_size for i in range(base_size, len(tokens)) if i not in self._special_ids}
        self._n = len(tokens)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._views: dict[int, WordPieceTokenizer] = {}
        self._train_words: tuple[dict[str, int], int] | None = None  # set by train_wordpiece
        self._train_tokens: int | None = None

    # -- views and tables ------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Ids this view can emit (special tokens, alphabet and merged tokens)."""
        return self._n

    @property
    def max_vocab_size(self) -> int:
        """Size of the full vocabulary (what :meth:`with_vocab_size` can reach)."""
        return len(self._tokens)

    @property
    def min_vocab_size(self) -> int:
        """The smallest view: the special tokens plus the alphabet (see the class docstring)."""
        return self._base

    def with_vocab_size(self, n: int) -> WordPieceTokenizer:
        """A view of this tokenizer restricted to its first ``n`` ids, built in O(1).

        Because training only appends to the vocabulary, the view equals the
        tokenizer trained on the same text to size ``n``.

        Args:
            n: vocabulary size, ``min_vocab_size <= n <= max_vocab_size``.

        Returns:
            A :class:`WordPieceTokenizer` sharing this one's tables; ids are unchanged.

        Raises:
            TypeError: ``n`` is not an ``int``.
            ValueError: ``n`` is out of range (the message gives the range).
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"vocab size must be an int, got {type(n).__name__}")
        lo, hi = self.min_vocab_size, self.max_vocab_size
        if not lo <= n <= hi:
            raise ValueError(f"vocab size {n} is out of range: this tokenizer can be viewed at {lo}..{hi}")
        if n == self._n:
            return self
        view = self._views.get(n)
        if view is None:
            view = copy.copy(self)
            view._n = n
            view._cache = {}
            view._train_tokens = None
            if len(self._views) >= 16:  # views share this memo; keep the newest 16
                self._views.pop(next(iter(self._views)))
            self._views[n] = view
        return view

    @property
    def vocab(self) -> dict[int, str]:
        """``{id: token string}`` of this view (continuation pieces with their prefix)."""
        return dict(enumerate(self._tokens[: self._n]))

    @property
    def special_tokens(self) -> dict[str, int]:
        """``{special token string: id}``."""
        return dict(self._specials)

    @property
    def unk_token(self) -> str:
        """The unknown token's string (``"[UNK]"``)."""
        return self._unk_token

    @property
    def unk_id(self) -> int:
        """The unknown token's id."""
        return self._unk_id

    @property
    def continuing_subword_prefix(self) -> str:
        """The prefix of non-first pieces of a word (``"##"``)."""
        return self._prefix

    @property
    def lowercase(self) -> bool:
        """Whether text is lower-cased before pre-tokenization."""
        return self._lowercase

    @property
    def max_input_chars_per_word(self) -> int:
        """Words longer than this many characters encode as the unknown token."""
        return self._max_chars

    @property
    def pattern(self) -> str:
        """The regex source of the (fixed, BERT-style) pre-tokenization."""
        return BERT_PATTERN

    @property
    def pattern_name(self) -> str:
        """Always ``"bert"``: WordPiece pre-tokenizes BERT-style."""
        return "bert"

    @property
    def alphabet_size(self) -> int:
        """Non-special tokens of the smallest view (the initial alphabet for a trained tokenizer)."""
        return self._base - sum(1 for i in self._special_ids if i < self._base)

    @property
    def trace(self) -> list[WordPieceMerge]:
        """The merges that built this view, in rank order (empty when not trained here)."""
        if self._trace_full is None:
            return []
        if self._n == len(self._tokens):
            return list(self._trace_full)
        if self._n <= self._base:
            return []
        return self._trace_full[: self._rank_of_id[self._n - 1] + 1]

    @property
    def merges(self) -> list[tuple[str, str]]:
        """``(left, right)`` token strings of this view's merges, in rank order."""
        return [(s.left, s.right) for s in self.trace]

    def id_to_token(self, token_id: int) -> str:
        """The vocabulary string of an id.

        Raises:
            ValueError: the id is not in this view.
        """
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < self._n:
            raise ValueError(f"unknown token id {token_id!r} (vocab size {self._n})")
        return self._tokens[token_id]

    def token_to_id(self, token: str) -> int | None:
        """The id of a vocabulary string in this view, or ``None``."""
        i = self._specials.get(token)
        if i is None:
            i = self._piece_ids.get(token)
        return i if i is not None and i < self._n else None

    def token_bytes(self, token_id: int) -> bytes:
        """UTF-8 of a token's vocabulary string (``b"##ing"``).

        Raises:
            ValueError: the id is not in this view.
        """
        return self.id_to_token(token_id).encode("utf-8")

    def describe_token(self, token_id: int) -> str:
        """Readable form of a token: its vocabulary string."""
        return self.id_to_token(token_id)

    # -- the declared interface (bpe_core.interface) ---------------------------

    algorithm = "wordpiece"
    """The key of :data:`bpe_core.interface.ALGORITHMS` that trains this kind of tokenizer."""

    is_byte_level = False
    """Tokens are vocabulary strings (``##`` continuations), not bytes."""

    @property
    def unknown_id(self) -> int:
        """The id of the unknown token (``[UNK]``), which stands for a word the vocabulary cannot spell."""
        return self._unk_id

    def fast_encoder(self):
        """``None``: WordPiece has no faster encoder than :meth:`encode`."""
        return None

    def learned_tokens(self) -> list[tuple[int, int]]:
        """``(merge rank, new id)`` of every merge of this view that added a token, in rank order."""
        return [(m.rank, m.new_id) for m in self.trace if m.added]

    def replay(self, text: str):
        """A :class:`bpe_core.wordpiece_trace.WordPieceReplay` of training on ``text`` (its own training text)."""
        from .wordpiece_trace import WordPieceReplay

        return WordPieceReplay.from_text(self, text)

    def rank_of(self, token_id: int) -> int | None:
        """Merge rank that created ``token_id`` (0-based), or ``None`` for specials and the alphabet."""
        r = self._rank_of_id.get(token_id)
        return r if r is not None and token_id < self._n else None

    # -- encoding ------------------------------------------------------------

    def _encode_word(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first pieces of one word (``(unk_id,)`` when it cannot be matched)."""
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        n = len(word)
        if n > self._max_chars:
            ids = (self._unk_id,)
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
                    out = [self._unk_id]
                    break
                out.append(i)
                start = end
            ids = tuple(out)
        if len(self._cache) >= 1 << 18:
            self._cache.clear()
        self._cache[word] = ids
        return ids

    def training_text_tokens(self) -> int | None:
        """Tokens the training text takes under this view, or ``None`` when not trained in this process.

        Equal to ``len(self.encode(training_text))``, but computed from the
        training word counts (each distinct word encoded once) and remembered
        per view, so a vocabulary-size slider over a large text stays quick.
        Not kept by :meth:`save`.

        Returns:
            ``int`` tokens (special-token occurrences count one each), or ``None``.
        """
        if self._train_words is None:
            return None
        if self._train_tokens is None:
            counts, n_special = self._train_words
            encode_word = self._encode_word
            self._train_tokens = n_special + sum(c * len(encode_word(w)) for w, c in counts.items())
        return self._train_tokens

    def _check_text(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.isascii():
            err = _surrogate_error(text)
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
        encode_word = self._encode_word
        for segment, is_special in split_special(text, tuple(specials)):
            if is_special:
                out.append(specials[segment])
                continue
            norm = lowercase_text(segment) if self._lowercase else segment
            for word in _BERT_RX.findall(norm):
                out.extend(encode_word(word))
        return out

    def encode_steps(self, text: str) -> list:
        """Greedy longest-match-first encoding of ``text``, one line per decision (for the Encode page).

        See :func:`bpe_core.wordpiece_trace.wordpiece_encode_steps`, which this
        calls; the final ids equal :meth:`encode`.

        Args:
            text: any ``str`` without unpaired surrogates.

        Returns:
            ``list[bpe_core.trace.PieceSteps]``, one per word or special token.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        from .wordpiece_trace import wordpiece_encode_steps  # imported here: it imports this module

        return wordpiece_encode_steps(self, text)

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
                out.extend(_BERT_RX.findall(lowercase_text(segment) if self._lowercase else segment))
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
        return self.token_spans_with(text, self._encode_word)

    def token_spans_with(self, text: str, pieces_of: Callable[[str], Sequence[int] | None]) -> list[TokenSpan]:
        """Token spans of ``text`` with each word cut by ``pieces_of`` instead of greedy matching.

        The Merges page draws the trainer's own segmentation at step *k* with it
        (see :mod:`bpe_core.wordpiece_trace`); :meth:`token_spans` passes the
        greedy encoder.  Special tokens, normalisation and offsets are as in
        :meth:`token_spans`.

        Args:
            text: any ``str`` without unpaired surrogates.
            pieces_of: ``word -> ids`` (the word as normalised and split, e.g.
                lower-cased); ``None`` or ``(unk_id,)`` draws the word as ``[UNK]``.

        Returns:
            ``list[TokenSpan]`` in text order.

        Raises:
            TypeError, ValueError: as :meth:`encode`.
        """
        self._check_text(text)
        out: list[TokenSpan] = []
        toks = self._tokens
        plen = len(self._prefix)
        unk = self._unk_id
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
            norm, origin = _normalize(segment, self._lowercase)
            for m in _BERT_RX.finditer(norm):
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

    # -- persistence -----------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-ready ``dict`` of this view (``"format": "bpe-playground/wordpiece"``).

        Keys: ``vocab`` (token strings in id order), ``special_tokens`` (in
        the order given at training), ``unk_token``, ``continuing_subword_prefix``,
        ``lowercase``, ``max_input_chars_per_word``, ``min_vocab_size``, ``name``,
        ``trace`` (rows ``[rank, left_id, right_id, new_id, pair_freq, left_freq,
        right_freq, replaced, tokens_after, added]`` or ``None``), ``training``.
        """
        return {
            "format": "bpe-playground/wordpiece",
            "version": 1,
            "name": self.name,
            "pattern_name": "bert",
            "vocab": self._tokens[: self._n],
            "special_tokens": list(self._specials),
            "unk_token": self._unk_token,
            "continuing_subword_prefix": self._prefix,
            "lowercase": self._lowercase,
            "max_input_chars_per_word": self._max_chars,
            "min_vocab_size": self._base,
            "trace": [_merge_to_json(s) for s in self.trace] if self._trace_full is not None else None,
            "training": asdict(self.training) if self.training is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> WordPieceTokenizer:
        """Rebuild a tokenizer from :meth:`to_dict` output.

        Raises:
            ValueError: the data is not this format or is inconsistent; the
                message names the field at fault.
        """
        if not isinstance(data, Mapping) or data.get("format") != "bpe-playground/wordpiece":
            raise ValueError('not a BPE Playground WordPiece file (missing "format": "bpe-playground/wordpiece")')
        try:
            tokens = [str(s) for s in data["vocab"]]
            specials = tuple(str(s) for s in data["special_tokens"])
            unk = str(data["unk_token"])
            prefix = str(data["continuing_subword_prefix"])
            lowercase = bool(data["lowercase"])
            max_chars = int(data["max_input_chars_per_word"])
            base = int(data["min_vocab_size"])
            name = str(data.get("name") or "WordPiece")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"tokenizer file is malformed: {type(exc).__name__}: {exc}") from None
        specials = validate_special_tokens(specials)
        _check_args(0, specials, unk, prefix, max_chars)
        trace = None
        if data.get("trace") is not None:
            try:
                trace = [_merge_from_json(row, tokens, prefix) for row in data["trace"]]
            except (TypeError, ValueError, IndexError) as exc:
                raise ValueError(f"tokenizer file is malformed: trace: {exc}") from None
        training = None
        if data.get("training") is not None:
            try:
                training = TrainingInfo(**data["training"])
            except TypeError as exc:
                raise ValueError(f"tokenizer file is malformed: training: {exc}") from None
        return cls._from_parts(
            tokens=tokens, special_tokens=specials, unk_token=unk, prefix=prefix, lowercase=lowercase,
            max_input_chars_per_word=max_chars, name=name, base_size=base, trace=trace, training=training,
        )  # fmt: skip

    def save(self, path: str | os.PathLike) -> None:
        """Write this view as JSON (see :meth:`to_dict`) to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> WordPieceTokenizer:
        """Read a tokenizer written by :meth:`save`.

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is not valid JSON or not this format.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a JSON tokenizer file: {exc}") from None
        return cls.from_dict(data)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(name={self.name!r}, vocab_size={self.vocab_size}, lowercase={self._lowercase})"


def _merge_to_json(s: WordPieceMerge) -> list:
    return [
        s.rank, s.left_id, s.right_id, s.new_id, s.pair_freq, s.left_freq, s.right_freq, s.replaced,
        s.tokens_after, s.added,
    ]  # fmt: skip


def _merge_from_json(row: Sequence, tokens: Sequence[str], prefix: str) -> WordPieceMerge:
    if len(row) != 10:
        raise ValueError(f"a trace row needs 10 fields, got {len(row)}")
    rank, left, right, new, pair_freq, left_freq, right_freq, replaced, tokens_after = (int(x) for x in row[:9])
    merged = tokens[left] + tokens[right][len(prefix) :]
    if tokens[new] != merged:
        raise ValueError(f"merge #{rank}: {tokens[left]!r} + {tokens[right]!r} does not give {tokens[new]!r}")
    return WordPieceMerge(
        rank, left, right, new, tokens[left], tokens[right], merged, pair_freq, left_freq, right_freq, replaced,
        tokens_after, bool(row[9]),
    )  # fmt: skip


def _train_spec(text, spec, *, progress=None, num_workers=None) -> WordPieceTokenizer:
    """:data:`bpe_core.interface.ALGORITHMS`' trainer for ``"wordpiece"`` (``num_workers`` is not used)."""
    del num_workers  # WordPiece counts words in this process
    return train_wordpiece(text, spec.vocab_size, spec.special_tokens, lowercase=spec.lowercase, progress=progress)


register_algorithm(
    Algorithm(
        name="wordpiece",
        label="WordPiece",
        train=_train_spec,
        from_dict=WordPieceTokenizer.from_dict,
        default_pattern="bert",
        fixed_pattern=True,
        default_special_tokens=DEFAULT_SPECIAL_TOKENS,
        uses_lowercase=True,
    )
)
