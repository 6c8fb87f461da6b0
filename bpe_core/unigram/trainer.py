r"""Unigram training: SentencePiece's seed and EM, pruning by estimated loss, every state a tokenizer.

The algorithm is the one of the Hugging Face course (chapter 6, "Unigram
tokenization") made efficient the way SentencePiece (``unigram_model_trainer.cc``,
``sentencepiece`` 0.2.3) does it; :func:`train_unigram` runs these steps:

1. **Words** (:func:`count_sentences`).  Special tokens are cut out of the
   text (and never learned); each stretch between them is a *sentence*, cut
   into words -- SentencePiece-style by default (a space becomes ``▁``, one
   ``▁`` is put in front of the text, every word starts at a ``▁``:
   :func:`~bpe_core.unigram.encoder.lattice_words`), or by any other pattern
   of :mod:`bpe_core.pretokenize`, whose words are used as they are.
   Distinct words are counted; everything below works on the table of
   distinct words weighted by their counts (and each sentence's last word).
2. **Seed vocabulary** (:func:`~bpe_core.unigram.seed.seed_pieces`):
   SentencePiece's, the same pieces with the same frequencies -- every
   character (the *required characters*: never removed, so every word can be
   spelt), and the substrings of 2 to ``max_piece_length`` characters that
   its byte suffix array has an interval for, the ``seed_size`` best by
   ``frequency * length``; each piece's initial score is ``log(score / sum)``.
3. **EM** (:meth:`_Training.em`).  ``em_iterations`` times: the expected
   count of every piece over all segmentations of each word (forward-backward
   over the word's lattice, weighted by the word's count), then the new score
   ``digamma(count) - digamma(sum of counts)`` (SentencePiece's Bayesian M-step).
4. **Pruning rounds** (:meth:`_Training.prune_round`), until only the
   required characters are left.  Each round segments every word by Viterbi
   and estimates, for every piece, the corpus loss increase its removal would
   cause: each of its Viterbi occurrences is replaced by the piece's best
   segmentation *without* it (its second-best path), whose pieces take over
   its count -- ``freq * (log p - sum(log p_alt'))`` with ``p_alt' =
   (freq_alt + freq) / (total + freq * (len(alt) - 1))``, SentencePiece's
   estimate (which it multiplies by ``1 / total``; the order is the same).  A
   piece no Viterbi path uses costs 0.  The round removes the
   ``percent_to_remove`` share of the vocabulary with the lowest increase
   (at least one piece, and every unused piece), never a required character;
   then EM re-estimates the scores of what is left.  The *loss* reported per
   state is the course's: the words' Viterbi negative log-likelihood,
   weighted by counts, in nats.
5. **The tokenizer** (:meth:`_Training.tokenizer`).  The schedule does not
   depend on ``vocab_size``: the rounds run down to the required characters
   whatever size was asked for, and the tokenizer returned is the view at
   ``vocab_size`` (the smallest state of at least that size, cut short by the
   removal order of the next round) on its own
   (:meth:`~bpe_core.unigram.UnigramTokenizer.truncated`: ``max_vocab_size``
   is the size asked for, the states above it are dropped), so training to
   any size equals the view of a longer training at that size.

From the same vocabulary and word counts, the EM step, the loss and the pruning costs must equal
:mod:`bpe_core.textbook.unigram_training`'s ``em_step``, ``loss`` and ``removal_costs``
(tests/engine/test_textbook_unigram.py).

The same as SentencePiece given the same sentences (``tests/engine/test_unigram_exact.py``
checks it against the ``sentencepiece`` package): the words; the seed's pieces,
frequencies, order and initial scores; one EM step's scores (to SentencePiece's
float32 rounding); the encoder's ids for the same pieces and scores.

Differences from SentencePiece, on purpose (each shown by
``tests/engine/test_unigram_exact.py::test_documented_differences_from_sentencepiece``):

* **the schedule**: 10 % of the vocabulary per round (the course's
  ``percent_to_remove``; SentencePiece's ``shrinking_factor`` 0.75 removes
  25 %), by estimated loss straight down to the required characters
  (SentencePiece stops at 1.1 x ``vocab_size`` and keeps the best scores):
  every size on the slider is a training state, chosen by the same rule;
* **the M-step keeps every piece**: a piece whose expected count falls below
  0.5 keeps a very low score until the next round removes it at cost 0
  (SentencePiece drops it at once), so that every removal is a recorded
  round; a required character's expected count is taken as at least 0.5
  (SentencePiece drops it too and gives it back at the end with the lowest
  score; here every state must spell every word);
* **sentences and characters**: a sentence is a stretch between special
  tokens, and a newline an ordinary character inside a word (SentencePiece
  reads a line per sentence); U+0000 and U+001F are ordinary characters
  (SentencePiece makes them unknown) and U+2585 too (SentencePiece drops a
  sentence that holds it); no normalisation (no NFKC, no whitespace folding:
  the playground shows text as typed) and every character kept
  (``character_coverage = 1``);
* **no script or digit rule**: SentencePiece's ``split_by_unicode_script`` and
  ``split_by_number`` (on by default) forbid pieces such as ``s,``, ``▁end.``
  or ``1990s``; here, as in Hugging Face's ``UnigramTrainer``, there is no such
  rule (on the 1 MB benchmark corpus SentencePiece's defaults give about 3 %
  more held-out tokens than with the rules off: ``benchmarks/bench_unigram.py``);
* **a text that starts with a special token** gets no ``▁`` in front
  (SentencePiece puts one, which becomes a token of its own);
* **double precision**: the lattices are summed in float64 (SentencePiece
  in float32, whose marginals drift by up to ~2e-4 on long words).

Differences from the Hugging Face course, and why: the course's initial
vocabulary is the most frequent substrings (no suffix-array filter) and it
does no EM (scores stay the initial frequencies, renormalised); it computes
each piece's loss increase by re-encoding the corpus without it (quadratic);
here the seed, the EM and the estimate are SentencePiece's, which the course
names as the efficient version.  The course's numbers are reproduced by the
tests with an exhaustive oracle.

Performance: two implementations of steps 2-4 give the same tokenizer
(:func:`training_engine` picks one; ``tests/engine/test_unigram_kernels.py`` holds
them together).  The numpy one (:func:`~bpe_core.unigram.seed.seed_pieces`,
:class:`~bpe_core.unigram.lattice.Lattices`) processes all lattices of a
state at once, one layer (a character offset within the words) at a time;
the compiled one (:func:`~bpe_core.unigram.seed.seed_pieces_compiled`,
:class:`~bpe_core.unigram.lattice.CompiledLattices`,
:mod:`bpe_core.unigram.kernels`) builds the seed from a suffix array and
runs EM and Viterbi word by word, on two threads: on the 1 MB benchmark
corpus at 8,000 pieces it trains in less time than SentencePiece and within
1.5 times its peak memory (``benchmarks/bench_unigram.py``).  Viterbi ties go
to the arc that starts earliest, as in the encoder; removal and character
order compare float32-rounded values, so the EM's last bits (which differ
between the two) never change a choice.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import regex

from ..interface import TrainingCancelled, VocabSizeTooSmall
from ..pretokenize import (
    PATTERNS,
    check_word_count,
    compile_pattern,
    iter_pretoken_strings,
    resolve_pattern,
    split_special,
    validate_special_tokens,
)
from .encoder import METASPACE, SENTENCEPIECE, SENTENCEPIECE_RX, metaspace_word
from .lattice import CompiledLattices, Lattices, loss_increase
from .model import BYTE_PIECES, DEFAULT_UNK_TOKEN, UnigramTokenizer, UnigramTrainingInfo
from .seed import seed_pieces, seed_pieces_compiled
from .trace import PruneRound

__all__ = [
    "DEFAULT_SEED_SIZE",
    "CountedWords",
    "TrainingCancelled",
    "count_sentences",
    "count_unigram_words",
    "digamma",
    "train_unigram",
    "train_unigram_from_counts",
]

DEFAULT_SEED_SIZE = 1_000_000
"""Substrings of the seed vocabulary at most, characters not counted (SentencePiece's ``seed_sentencepiece_size``)."""

ProgressCallback = Callable[[str, int, int], None]

_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_TINY = 1e-10  # the smallest expected count the M-step uses (digamma(0) is -inf)
_CHAR_FLOOR = 0.5  # a required character's smallest expected count (SentencePiece's kExpectedFrequencyThreshold)


# ---------------------------------------------------------------------------
# input


def _read_text(text) -> str:
    if isinstance(text, CountedWords):
        return ""  # counted already (train_unigram_from_counts): no text to read
    if isinstance(text, bytes | bytearray | memoryview):
        raise TypeError("text must be a str (the text), an os.PathLike (a file) or an iterable of str, got bytes")
    if isinstance(text, str):
        return text
    if isinstance(text, os.PathLike):
        with open(text, "rb") as f:  # bytes: no newline translation, "\r" is kept (as train_bpe reads a file)
            data = f.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{os.fspath(text)}: not UTF-8 text ({exc})") from None
    if isinstance(text, Iterable):
        parts = []
        for i, part in enumerate(text):
            if not isinstance(part, str):
                raise TypeError(f"item #{i + 1} of the text is a {type(part).__name__}, not a str")
            parts.append(part)
        return "".join(parts)
    raise TypeError(
        f"text must be a str (the text), an os.PathLike (a file) or an iterable of str, got {type(text).__name__}"
    )


class CountedWords(NamedTuple):
    """The words of a training text, counted (:func:`count_sentences`; :func:`train_unigram_from_counts`).

    Attributes:
        counts: ``{word: occurrences}`` in order of first appearance (as :func:`count_unigram_words` gives).
        special_occurrences: special-token occurrences cut out when counting.
        ends: one ``(word, next)`` per sentence (stretch of text between special
            tokens), in text order: its last word and the first UTF-8 byte of
            the next sentence (``-1`` for the last).  The seed needs them
            (:func:`bpe_core.unigram.seed.seed_pieces`); empty when unknown
            (words counted elsewhere), and then every word is taken as followed
            by another.
        first_byte: the first UTF-8 byte of the first sentence (``-1``: no
            sentence); what the sentence before it would be followed by
            (count tables of shards, :mod:`bpe_core.counting.table`).
    """

    counts: dict[str, int]
    special_occurrences: int
    ends: tuple[tuple[str, int], ...] = ()
    first_byte: int = -1


def train_unigram_from_counts(
    word_counts: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = SENTENCEPIECE,
    *,
    special_occurrences: int = 0,
    sentence_ends: Sequence[tuple[str, int]] = (),
    **options,
) -> UnigramTokenizer:
    """Train a Unigram tokenizer on word counts instead of a text (a count table's, say).

    The result equals :func:`train_unigram` on any text whose
    :func:`count_unigram_words` (with ``pattern`` and ``special_tokens`` plus the
    unknown token) are ``word_counts`` in the same order of first appearance
    (the order sets the seed's and the lattices' order).

    Args:
        word_counts: ``{word: occurrences}`` (non-empty ``str`` words, counts >= 1),
            iterated in order of first appearance.
        vocab_size: as :func:`train_unigram`.
        special_tokens: as :func:`train_unigram` (those the words were counted with).
        pattern: the pattern the words were counted with (``"sentencepiece"``:
            ``▁``-marked words); the tokenizer encodes with it.
        special_occurrences: special-token occurrences cut out when counting.
        sentence_ends: :attr:`CountedWords.ends` (from :func:`count_sentences`);
            without them every word is taken as followed by another, which
            can change the seed (see :mod:`bpe_core.unigram.seed`).
        options: the keyword options of :func:`train_unigram` (``progress``,
            ``name``, ``unk_token``, ...).

    Returns:
        The trained :class:`UnigramTokenizer`.

    Raises:
        TypeError: a word is not a ``str`` or a count not an ``int``.
        ValueError: an empty word, an unpaired surrogate, a count below 1; the
            errors of :func:`train_unigram`.

    >>> text = "hug pug pun bun hugs " * 20
    >>> c = count_sentences(text, special_tokens=["<unk>"])
    >>> train_unigram_from_counts(c.counts, 20, sentence_ends=c.ends).vocab == train_unigram(text, 20).vocab
    True
    """
    counts: dict[str, int] = {}
    for w, c in word_counts.items():
        check_word_count(w, c)
        if c < 1 or not w:
            raise ValueError(f"word {w!r:.40} has count {c}: words must be non-empty and counted at least once")
        if _SURROGATE.search(w):
            raise ValueError(f"word {w!r:.40} holds an unpaired surrogate, which is not a character")
        counts[w] = c
    if not isinstance(special_occurrences, int) or special_occurrences < 0:
        raise ValueError(f"special_occurrences must be an int >= 0, got {special_occurrences!r}")
    ends = tuple(sentence_ends)
    for w, b in ends:
        if w not in counts or not isinstance(b, int) or not -1 <= b <= 255:
            raise ValueError(f"sentence end {(w, b)!r}: the word must be counted and the byte in -1..255")
    return train_unigram(
        CountedWords(counts, special_occurrences, ends), vocab_size, special_tokens, pattern, **options
    )


def count_unigram_words(
    text: str, pattern: str = SENTENCEPIECE, special_tokens: Sequence[str] = ()
) -> tuple[dict[str, int], int]:
    """Count the lattice words of a text: special tokens cut out, then the pattern's words.

    Args:
        text: the training text.
        pattern: ``"sentencepiece"`` (``"▁"``-marked words as the encoder sees
            them, :func:`~bpe_core.unigram.encoder.lattice_words`) or a pattern
            name / regex of :mod:`bpe_core.pretokenize`.
        special_tokens: special-token strings (removed, counted apart).

    Returns:
        ``({word: count}, special-token occurrences)``, words in order of first appearance.

    Raises:
        TypeError, ValueError: bad pattern or special tokens.

    >>> count_unigram_words("hug pug<s>hug", special_tokens=["<s>"])
    ({'▁hug': 1, '▁pug': 1, 'hug': 1}, 1)
    """
    counted = count_sentences(text, pattern, special_tokens)
    return counted.counts, counted.special_occurrences


def count_sentences(text: str, pattern: str = SENTENCEPIECE, special_tokens: Sequence[str] = ()) -> CountedWords:
    """:func:`count_unigram_words` with the sentence ends the seed needs (:attr:`CountedWords.ends`).

    Each stretch of text between special tokens is one sentence (what
    SentencePiece would be given: see :mod:`bpe_core.unigram.seed`).

    >>> count_sentences("hug pug<s>hug", special_tokens=["<s>"]).ends
    (('▁pug', 104), ('hug', -1))
    """
    specials = validate_special_tokens(special_tokens)
    counts: Counter = Counter()
    n_special = 0
    ends: list[tuple[str, int]] = []
    last: str | None = None  # the last word of the sentence before
    first = -1
    metaspace = pattern == SENTENCEPIECE
    rx = SENTENCEPIECE_RX if metaspace else compile_pattern(resolve_pattern(pattern))
    batch: list[str] = []  # words counted a batch at a time (texts of many short sentences)
    for k, (segment, is_special) in enumerate(split_special(text, specials)):
        if is_special:
            n_special += 1
            continue
        words = _stretch_words(segment, k == 0, rx, metaspace)
        if not words:
            continue
        batch += words
        if len(batch) >= 1 << 16:
            counts.update(batch)
            batch.clear()
        if last is not None:
            ends.append((last, _first_byte(words[0])))
        else:
            first = _first_byte(words[0])
        last = words[-1]
    counts.update(batch)
    if last is not None:
        ends.append((last, -1))
    if metaspace:
        merged: Counter = Counter()
        for w, c in counts.items():
            merged[metaspace_word(w)] += c
        counts = merged
        ends = [(metaspace_word(w), b) for w, b in ends]
    return CountedWords(dict(counts), n_special, tuple(ends), first)


def _first_byte(word: str) -> int:
    """The first UTF-8 byte of a word's lattice form (a leading space is written ``▁``, byte 0xE2)."""
    c = ord(word[0])
    if c == 0x20:
        c = 0x2581
    return c if c < 0x80 else (0xC0 | c >> 6) if c < 0x800 else (0xE0 | c >> 12) if c < 0x10000 else (0xF0 | c >> 18)


def _stretch_words(segment: str, first: bool, rx, metaspace: bool) -> list[str]:
    """The words of one stretch as matched (SentencePiece-style: before :func:`metaspace_word`)."""
    if not metaspace:
        return list(iter_pretoken_strings(segment, rx))
    if first:
        segment = METASPACE + segment  # the "▁" in front of the text (encoder.lattice_words)
    words: list[str] = []
    for part in _chunks(segment):  # a bounded list of words at a time (a 20 MB text has 3.5 M)
        words += rx.findall(part)
    return words


_CHUNK_CHARS = 1 << 20


def _chunks(segment: str):
    """``segment`` in pieces of about :data:`_CHUNK_CHARS` characters, each cut just before a space or ``▁``.

    A SentencePiece-style word starts at a space or ``▁`` (or at the segment's
    start), so cutting there gives the same words as the whole segment.
    """
    n = len(segment)
    a = 0
    while a < n:
        b = a + _CHUNK_CHARS
        if b >= n:
            yield segment[a:]
            return
        cut = min((i for i in (segment.find(" ", b), segment.find("\u2581", b)) if i >= 0), default=n)
        yield segment[a:cut]
        a = cut


# ---------------------------------------------------------------------------
# digamma


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function of positive values (float64, absolute error about 1e-13).

    Values below 10 are moved up by 10 with ``psi(x) = psi(x + 10) - sum(1 / (x + i), i < 10)``,
    then the asymptotic series ``ln x - 1/(2x) - sum B_2k / (2k x^2k)`` to ``x^-10``.

    >>> abs(float(digamma(np.array([1.0]))[0]) + 0.5772156649015329) < 1e-13  # psi(1) = -Euler-Mascheroni
    True
    """
    x = np.array(x, dtype=np.float64)
    acc = np.zeros_like(x)
    small = np.flatnonzero(x < 10.0)
    if len(small):
        xs = x[small]
        shift = np.zeros_like(xs)
        for i in range(10):
            shift += 1.0 / (xs + i)
        acc[small] = -shift
        x[small] = xs + 10.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return acc + np.log(x) - 0.5 / x - series


# ---------------------------------------------------------------------------
# training


def _check(vocab_size, unk_token, percent_to_remove, max_piece_length, em_iterations, seed_size) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if not isinstance(unk_token, str):
        raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
    if unk_token == "":
        raise ValueError("unk_token is empty; the unknown token needs at least one character (e.g. '<unk>')")
    if isinstance(percent_to_remove, bool) or not isinstance(percent_to_remove, int | float):
        raise TypeError(f"percent_to_remove must be a number, got {type(percent_to_remove).__name__}")
    if not 0.0 < percent_to_remove < 1.0:
        raise ValueError(f"percent_to_remove must be between 0 and 1 (a share, e.g. 0.1), got {percent_to_remove}")
    for label, value, lo in (("max_piece_length", max_piece_length, 1), ("em_iterations", em_iterations, 0),
                             ("seed_size", seed_size, 1)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{label} must be an int, got {type(value).__name__}")
        if value < lo:
            raise ValueError(f"{label} must be at least {lo}, got {value}")


def train_unigram(
    text: str | os.PathLike | Iterable[str],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = SENTENCEPIECE,
    *,
    progress: ProgressCallback | None = None,
    name: str | None = None,
    unk_token: str = DEFAULT_UNK_TOKEN,
    percent_to_remove: float = 0.1,
    max_piece_length: int = 16,
    em_iterations: int = 2,
    seed_size: int = DEFAULT_SEED_SIZE,
    byte_fallback: bool = False,
) -> UnigramTokenizer:
    """Train a Unigram tokenizer (see the module docstring for the exact rules).

    Args:
        text: a ``str`` (the text), an ``os.PathLike`` (a UTF-8 file, read
            whole as bytes and decoded: every character kept, carriage returns
            and a byte-order mark included) or an iterable of ``str`` (the text
            ``"".join(text)``); the three give the same tokenizer for the same text.
        vocab_size: the vocabulary size to reach, in tokens: special tokens,
            ``<unk>``, the required characters and the learned pieces.
        special_tokens: cut out of the text, never learned; ids 0, 1, ... in order.
        pattern: ``"sentencepiece"`` (default: ``▁``-marked words, as Hugging
            Face's ``Metaspace``) or a pattern of :mod:`bpe_core.pretokenize`
            (``"gpt2"``, ``"bert"``, ... or a regex), whose words are used as they are.
        progress: ``progress(phase, done, total)``: ``("count", 0|1, 1)``,
            ``("seed", 0|1, 1)``, then ``("prune", pieces removed, pieces to
            remove down to the required characters)`` during EM and pruning;
            raising :class:`TrainingCancelled` in it stops training (it propagates).
        name: display name (default ``"Unigram"`` or ``"Unigram (<pattern>)"``).
        unk_token: the unknown token; appended after ``special_tokens`` unless among them.
        percent_to_remove: the share of the vocabulary each round removes (0 < p < 1).
        max_piece_length: the longest piece, in characters.
        em_iterations: EM iterations after the seed and after each round.
        seed_size: the seed's substrings at most (the characters come on top), SentencePiece's
            ``seed_sentencepiece_size``.
        byte_fallback: add the 256 byte pieces ``<0x00>`` .. ``<0xFF>`` (score
            0, after the special tokens, counted in ``vocab_size``, never
            removed) and encode characters outside the vocabulary as the pieces
            of their UTF-8 bytes instead of ``<unk>`` (SentencePiece's
            ``byte_fallback=True``, Hugging Face ``Unigram``'s ``byte_fallback``).

    Returns:
        The :class:`UnigramTokenizer` at ``vocab_size`` (or at the seed size,
        with ``training.stop_reason`` set, when the text offers fewer pieces),
        which is also its ``max_vocab_size``; every smaller training state is a
        :meth:`~UnigramTokenizer.with_vocab_size` view.

    Raises:
        TypeError: ``text`` is bytes or not a str / path / iterable of str; an
            argument has the wrong type.
        ValueError: the text has no words; ``vocab_size`` is below special tokens
            + ``<unk>`` + the text's characters (the message gives the minimum);
            an unpaired surrogate; bad special tokens, pattern or settings; a
            file that is not UTF-8.
        OSError: a file cannot be read.
        TrainingCancelled: raised by ``progress``.

    >>> tok = train_unigram("hug pug pun bun hugs " * 20, 14)
    >>> tok.vocab_size, [tok.describe_token(i) for i in tok.encode("hugs")]
    (14, ['▁hug', 's'])
    """
    specials = list(validate_special_tokens(special_tokens))
    _check(vocab_size, unk_token, percent_to_remove, max_piece_length, em_iterations, seed_size)
    if not isinstance(byte_fallback, bool):
        raise TypeError(f"byte_fallback must be a bool, got {type(byte_fallback).__name__}")
    if pattern != SENTENCEPIECE:
        resolve_pattern(pattern)
    if unk_token not in specials:
        specials.append(unk_token)
    head = specials + (list(BYTE_PIECES) if byte_fallback else [])  # the ids before the characters
    info = UnigramTrainingInfo(requested_vocab_size=vocab_size)
    counted = _count_words(text, pattern, specials, progress, info)
    word_counts, n_special_occ = counted.counts, counted.special_occurrences
    _check_minimum(word_counts, vocab_size, len(head), specials, unk_token, byte_fallback)
    run = _Training(counted, head, max_piece_length, seed_size, em_iterations, progress, info, vocab_size)
    run.em()
    run.viterbi()
    info.initial_tokens = n_special_occ + run.tokens()
    while run.n_multi() > 0:
        run.prune_round(percent_to_remove, n_special_occ)
    run.report()
    info.rounds = len(run.rounds)
    info.merge_seconds = info.seed_seconds + info.em_seconds + info.prune_seconds
    return run.tokenizer(vocab_size, specials, unk_token, pattern, name, (word_counts, n_special_occ), byte_fallback)


def _count_words(text, pattern: str, specials: list[str], progress, info: UnigramTrainingInfo) -> CountedWords:
    """Step 1: the training words, their counts and the sentence ends (:func:`count_sentences`); fills ``info``."""
    raw = _read_text(text)
    m = _SURROGATE.search(raw)
    if m is not None:
        raise ValueError(
            f"text contains an unpaired surrogate U+{ord(m.group()):04X} at character {m.start()}, which is not a "
            "character and has no UTF-8 form; remove it or replace it with U+FFFD"
        )
    t0 = time.perf_counter()
    if progress:
        progress("count", 0, 1)
    counted = text if isinstance(text, CountedWords) else count_sentences(raw, pattern, specials)
    del raw
    word_counts, n_special_occ = counted.counts, counted.special_occurrences
    if progress:
        progress("count", 1, 1)
    if not word_counts:
        raise ValueError("the text has no words to train on (it is empty or holds only special tokens)")
    info.count_seconds = time.perf_counter() - t0
    _trim_heap()  # counting made and dropped a str per word occurrence
    info.pretokens = sum(word_counts.values())
    info.unique_pretokens = len(word_counts)
    info.special_occurrences = n_special_occ
    return counted


COMPILED_MIN_CHARS = 20_000
"""Training words of fewer characters (their distinct words joined) train on the numpy path: below it the
compiled kernels save less than the few milliseconds their library takes to load."""


def training_engine(n_chars: int, max_piece_length: int) -> str:
    """Which implementation trains: ``"compiled"`` (:mod:`bpe_core.unigram.kernels`) or ``"numpy"``.

    As BPE's merge loop (:func:`bpe_core.bpe.trainer.merge_engine`): the
    compiled kernels when their library is built (or, with
    :data:`bpe_core.counting.KERNELS_ENV` ``compiled``, numba can compile
    them here) for words of :data:`COMPILED_MIN_CHARS` characters or more and
    pieces shorter than 256 characters; else numpy, and a first large
    training starts the library's build in the background (no training waits
    for a compile).  Both give the same pieces; the EM's sums agree to rounding.

    Args:
        n_chars: characters of the distinct words, joined.
        max_piece_length: the longest piece.

    Raises:
        ValueError: :data:`bpe_core.counting.KERNELS_ENV` holds another value.
    """
    from ..counting import kernels_mode, kernels_ready

    mode = kernels_mode()
    if mode == "python" or max_piece_length > 255 or (mode == "auto" and n_chars < COMPILED_MIN_CHARS):
        return "numpy"
    return "compiled" if kernels_ready(mode == "compiled") else "numpy"


def _check_minimum(word_counts, vocab_size: int, n_head: int, specials, unk_token: str, byte_fallback: bool) -> None:
    """``ValueError`` when ``vocab_size`` cannot hold the ids before the characters and every character."""
    n_chars_text = len(set("".join(word_counts)))
    base = n_head + n_chars_text
    if vocab_size < base:
        raise VocabSizeTooSmall(
            f"vocab_size {vocab_size} is below the minimum for this text: Unigram needs at least {base} "
            f"({len(specials)} special tokens with {unk_token!r} + {'256 byte pieces + ' * byte_fallback}"
            f"{n_chars_text} characters of the text, which are kept so that every word can be spelt)",
            base,
        )


def _of_length(pieces, lengths: np.ndarray, k: int) -> set[str]:
    """The pieces of ``k`` characters (made as ``str`` only for them)."""
    return {pieces[int(i)] for i in np.flatnonzero(lengths == k)}


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).malloc_trim(0)


def _rounded(x: np.ndarray) -> np.ndarray:
    """``x`` as float32, for comparisons that must not depend on the last bits of a sum (-inf stays -inf)."""
    return x.astype(np.float32)


class _Training:
    """One training run from the seed to the required characters: the steps :func:`train_unigram` calls in order.

    * ``__init__`` -- step 2, the seed vocabulary and its lattices (:func:`~bpe_core.unigram.seed.seed_pieces`);
    * :meth:`em` -- step 3, EM re-estimation of the scores;
    * :meth:`viterbi` -- the best segmentation of every word under the current scores;
    * :meth:`prune_round` -- step 4, one pruning round (then EM and Viterbi again);
    * :meth:`tokenizer` -- step 5, ids, per-state scores and the tokenizer.

    Pieces keep their seed index throughout (``alive`` marks those left); the
    lattices lose the arcs of removed pieces.
    """

    def __init__(self, counted, head, max_piece_length, seed_size, em_iterations, progress, info, vocab_size):
        t1 = time.perf_counter()
        if progress:
            progress("seed", 0, 1)
        words = list(counted.counts)
        self.counts = np.fromiter(counted.counts.values(), dtype=np.float64, count=len(words))
        compiled = training_engine(sum(map(len, words)), max_piece_length) == "compiled"
        if compiled:
            tick = (lambda: progress("seed", 0, 1)) if progress else None
            seed = seed_pieces_compiled(words, self.counts, max_piece_length, seed_size, counted.ends, tick)
        else:
            seed = seed_pieces(words, self.counts, max_piece_length, seed_size, counted.ends)
        pieces, n_chars, lens, arcs = seed.pieces, seed.n_chars, seed.lens, seed.arcs
        self.piece_len = np.fromiter(map(len, pieces), dtype=np.int64) if isinstance(pieces, list) else pieces.lengths
        collide: set[str] = set()
        joined = "\x00".join(words)
        present = {h[:3] for h in head if h[:3] in joined}  # one search for the 256 byte pieces' "<0x"
        possible = [h for h in head if h[:3] in present and h in joined]  # a piece is a substring of a word
        for k in {len(h) for h in possible}:  # only then the pieces as long are made
            collide |= {h for h in possible if len(h) == k} & _of_length(pieces, self.piece_len, k)
        del joined
        if collide:
            raise ValueError(
                f"special token or byte piece {sorted(collide)[0]!r} is also a piece of the text's words; choose "
                "special tokens that cannot occur inside a word"
            )
        # the lattices empty ``arcs``
        self.lat = CompiledLattices(lens, arcs, len(pieces), grouped=True) if compiled else Lattices(lens, arcs)
        scores = seed.scores
        del seed, arcs
        _trim_heap()  # the seed's temporaries were many arrays under the mmap threshold
        if progress:
            progress("seed", 1, 1)
        info.seed_seconds = time.perf_counter() - t1
        info.characters = n_chars
        info.seed_size = len(pieces)
        self.info = info
        self.progress = progress
        self.em_iterations = em_iterations
        self.head = head
        self.pieces = pieces
        self.n_chars = n_chars
        n_pieces = len(pieces)
        self.is_char = np.zeros(n_pieces, dtype=bool)
        self.is_char[:n_chars] = True
        self.alive = np.ones(n_pieces, dtype=bool)
        self.removal_seq: list[np.ndarray] = []  # per round, the removed pieces in removal order
        self.scores = scores
        self.state_scores: list[np.ndarray] = []  # per state, the scores of the alive pieces (by seed index)
        self.rounds: list[PruneRound] = []
        self.sizes = [len(head) + n_pieces]
        self.loss = 0.0
        self.freq = np.zeros(n_pieces)  # each piece's Viterbi count (weighted by the words' counts)
        self.n_tokens = 0
        self.vocab_size = vocab_size
        self.at_vocab_size: tuple[float, int] | None = None  # (loss, tokens) at vocab_size when inside a round

    def report(self) -> None:
        """``progress("prune", pieces removed, pieces to remove down to the required characters)``."""
        if self.progress:
            n_pieces = len(self.pieces)
            self.progress("prune", int(n_pieces - self.alive.sum()), n_pieces - self.n_chars)

    def n_multi(self) -> int:
        """Pieces left that are not required characters."""
        return int(self.alive.sum()) - self.n_chars

    def em(self) -> None:
        """``em_iterations`` EM iterations: expected counts by forward-backward, then the digamma M-step.

        The scores of this state are recorded (:attr:`state_scores`).
        """
        t = time.perf_counter()
        scores, alive = self.scores, self.alive
        for _ in range(self.em_iterations):
            self.report()
            expected, _obj = self.lat.forward_backward(scores, self.counts)
            expected = np.maximum(expected, _TINY)
            expected[: self.n_chars] = np.maximum(expected[: self.n_chars], _CHAR_FLOOR)
            new = np.full(len(scores), -np.inf)
            idx = np.flatnonzero(alive)
            new[idx] = digamma(expected[idx]) - digamma(np.array([expected[idx].sum()]))[0]
            scores = new
        self.scores = scores
        self.state_scores.append(scores[alive].copy())
        self.info.em_seconds += time.perf_counter() - t

    def viterbi(self) -> None:
        """Every word's best segmentation under the current scores: the loss, the pieces' counts, the tokens."""
        self.loss, self.freq, self.n_tokens = self.lat.best(self.scores, self.counts)

    def tokens(self) -> int:
        """Tokens of the training words (weighted by their counts) in their current best segmentations."""
        return self.n_tokens

    def prune_round(self, percent_to_remove: float, n_special_occ: int) -> None:
        """One round: remove the ``percent_to_remove`` share with the lowest loss increase, then EM and Viterbi."""
        self.report()
        t = time.perf_counter()
        lat, alive, scores, freq = self.lat, self.alive, self.scores, self.freq
        size = len(self.head) + int(alive.sum())
        inc = loss_increase(lat, self.piece_len, alive, self.is_char, scores, freq)
        cand = np.flatnonzero(alive & ~self.is_char)
        # lowest increase, then lowest score first; compared as float32, so that the compiled EM (equal to
        # rounding) makes the same choices
        order = cand[np.lexsort((cand, _rounded(scores[cand]), _rounded(inc[cand])))]
        n_remove = max(1, int(size * percent_to_remove), int((freq[cand] == 0).sum()))
        n_remove = min(n_remove, self.n_multi())  # the schedule does not depend on vocab_size: any size is a view
        gone = order[:n_remove]
        if size > self.vocab_size > size - n_remove:  # the view at vocab_size is this state less the first removed
            cut = scores.copy()
            cut[gone[: size - self.vocab_size]] = -np.inf
            loss, _freq, tokens = lat.best(cut, self.counts)
            self.at_vocab_size = (loss, n_special_occ + tokens)
        alive[gone] = False
        self.removal_seq.append(gone)
        lat.keep(alive)
        self.info.prune_seconds += time.perf_counter() - t
        new_scores = scores.copy()
        new_scores[gone] = -np.inf
        self.scores = new_scores
        loss_before = self.loss
        self.em()
        t = time.perf_counter()
        self.viterbi()
        self.info.prune_seconds += time.perf_counter() - t
        tokens = n_special_occ + self.tokens()
        self.rounds.append(
            PruneRound(
                len(self.rounds) + 1, size, size - n_remove, loss_before, self.loss, tuple(inc[gone].tolist()), tokens
            )
        )
        self.sizes.append(size - n_remove)
        _trim_heap()

    def tokenizer(self, vocab_size, specials, unk_token, pattern, name, train_words, byte_fallback):
        """The trained tokenizer: ids laid out so that every state is a prefix, viewed at ``vocab_size``, truncated.

        Ids: the head (special tokens, byte pieces), the characters by final
        score (highest first), then the pieces, the last removed first.
        """
        n_chars, n_pieces, n_spec = self.n_chars, len(self.pieces), len(self.head)
        final = _rounded(self.scores[:n_chars])
        char_order = np.lexsort((np.arange(n_chars), -final))
        order_ids = np.concatenate([char_order] + [g[::-1] for g in reversed(self.removal_seq)]).astype(np.int64)
        id_of = np.empty(n_pieces, dtype=np.int64)
        id_of[order_ids] = np.arange(n_pieces) + n_spec
        n = min(vocab_size, self.sizes[0])
        k0 = max(k for k, size in enumerate(self.sizes) if size >= n)  # the smallest state of n ids or more
        texts = self.head + [self.pieces[i] for i in order_ids[: self.sizes[k0] - n_spec].tolist()]
        alive_now = np.ones(n_pieces, dtype=bool)
        id_scores = []
        for k, sc in enumerate(self.state_scores):  # the states from k0 on (the view's; the larger ones are dropped)
            if k > 0:
                alive_now[self.removal_seq[k - 1]] = False
            if k >= k0:
                arr = np.zeros(self.sizes[k])
                arr[id_of[np.flatnonzero(alive_now)]] = sc
                id_scores.append(arr)
        info = self.info
        if n < vocab_size:
            info.stop_reason = (
                f"training stopped at {n} tokens instead of {vocab_size}: the seed vocabulary of this text has only "
                f"{n_pieces} pieces ({n_chars} characters and the substrings that occur at least twice, followed by "
                "different characters); a longer or more varied text gives more"
            )
        pname = pattern if pattern == SENTENCEPIECE or pattern in PATTERNS else resolve_pattern(pattern)
        if name is None:
            name = (
                "Unigram" if pattern == SENTENCEPIECE else f"Unigram ({pattern if pattern in PATTERNS else 'custom'})"
            )
        tokens0 = self.rounds[k0 - 1].tokens_after if k0 else info.initial_tokens
        full = UnigramTokenizer.from_states(
            texts, specials, unk_token, base=n_spec + n_chars, sizes=self.sizes[k0:], scores=id_scores,
            rounds=self.rounds[k0:], n=n, name=name, pattern_name=pname, training=info, train_words=train_words,
            initial_tokens=tokens0, byte_fallback=byte_fallback, checked=True,
        )  # fmt: skip
        # max_vocab_size is the trained size; the states above are not offered
        return full.truncated(*(self.at_vocab_size or (None, None)))
