"""What the lessons' sources print: the seeds, minbpe, the Hugging Face course, tiktoken, ``tokenizers``, SentencePiece.

The Learn page's tests compare the numbers the page shows with these, never with the
app's own output.  Each value is written here as its source prints it (transcribed by
hand, the source named beside it); where a seed holds the printed output, a test
(``tests/app/test_learn_sources.py``) parses the seed and checks the transcription against it.
Values that a library computes (tiktoken's ids, ``tokenizers``' normalizer and
pre-tokenizers, SentencePiece's pieces) are computed here with that library, not with ``bpe_core``.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from itertools import pairwise
from pathlib import Path

from tests.conftest import SEEDS

# -- bytes: seed 000 (code points), seed 003 ("Hello 😁") -------------------------------------------------------------

HELLO_BYTES = [104, 101, 108, 108, 111]
"""``list("hello".encode("utf-8"))``: the ASCII codes (the issue; seed 000's ``text = "hello"`` example)."""

E_HAT_CODE_POINT = 234
"""Seed 000: "the letter ê (e with circumflex, as in French) has codepoint 234"."""

E_HAT_BYTES = [195, 170]
"""UTF-8 of U+00EA: ``110 00011  10 101010`` (RFC 3629's two-byte form)."""

SMILE_BYTES = [b"H", b"e", b"l", b"l", b"o", b" ", b"\xf0", b"\x9f", b"\x98", b"\x81"]
"""Seed 003 prints ``Hello 😁`` as these bytes: "a total of 10 bytes"."""

# -- pre-tokenization: seed 004 (the course's slides), seed 002 (Karpathy's lecture notes) -----------------------------

NORMALIZED = ("Héllò hów are ü?", "hello how are u?")
"""Seed 004: BERT uncased's ``normalize_str("Héllò hów are ü?")`` prints ``hello how are u?``."""

GPT2_SPLIT = ("Hello's World123 !! ", ["Hello", "'s", " World", "123", " !!", " "])
"""GPT-2's pattern on this text (the issue).  Seed 002 prints one more item, a lone ``" "`` before ``" !!"``,
which needs two spaces after ``123``: its copy of the text has one."""

SEED_GPT2_SPLIT = ["Hello", "'s", " World", "123", " ", " !!", " "]
"""What seed 002 prints for :data:`GPT2_SPLIT`'s text."""

COURSE_SENTENCE = "Hello, how are  you?"
"""The course's pre-tokenizer comparison: two spaces before ``you``, as its offsets show (seed 004 prints one)."""

SEED_BERT_OFFSETS = [("Hello", (0, 5)), (",", (5, 6)), ("how", (7, 10)), ("are", (11, 14)), ("you", (16, 19)),
                     ("?", (19, 20))]  # fmt: skip
"""Seed 004's BERT pre-tokenizer output (its second word is misprinted as ``' '``; the offsets are the course's)."""

SEED_GPT2_OFFSETS = [("Hello", (0, 5)), (",", (5, 6)), ("Ġhow", (6, 10)), ("Ġare", (10, 14)), ("Ġ", (14, 15)),
                     ("Ġyou", (15, 19)), ("?", (19, 20))]  # fmt: skip
"""Seed 004's GPT-2 pre-tokenizer output."""

# -- the course's WordPiece (seed 004) --------------------------------------------------------------------------------

COURSE_CORPUS = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]
"""The course's corpus (seed 004, "EXAMPLE CORPUS")."""

WORDPIECE_VOCAB_70 = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "##a", "##b", "##c", "##d", "##e", "##f", "##g", "##h", "##i", "##k", "##l", "##m", "##n", "##o", "##p", "##r",
    "##s", "##t", "##u", "##v", "##w", "##y", "##z", ",", ".", "C", "F", "H", "T", "a", "b", "c", "g", "h", "i", "s",
    "t", "u", "w", "y",
    "ab", "##fu", "Fa", "Fac", "##ct", "##ful", "##full", "##fully", "Th", "ch", "##hm", "cha", "chap", "chapt",
    "##thm", "Hu", "Hug", "Hugg", "sh", "th", "is", "##thms", "##za", "##zat", "##ut",
]  # fmt: skip
"""Seed 004's ``print(vocab)`` after WordPiece training to 70."""

WORDPIECE_FIRST = (("a", "##b"), 0.2)
"""Seed 004: ``print(best_pair, max_score)`` prints ``('a', '##b') 0.2``."""

WORDPIECE_WORDS = {"Hugging": ["Hugg", "##i", "##n", "##g"], "H0gging": ["[UNK]"]}
"""Seed 004: ``encode_word("Hugging")`` and ``encode_word("H0gging")``."""

# -- efficiency: seed 001 ---------------------------------------------------------------------------------------------

EFFICIENCY_SENTENCE = "The apparent meaning is for the masses, and the inner meaning is for the learned."
SEED_EFFICIENCY_BYTES = 93
"""Seed 001 prints "(93 bytes)"; the sentence as printed is 81 bytes (``len(s.encode())``)."""
SEED_EFFICIENCY_WORDS = 15
"""Seed 001: "It splits the sentence into 15 tokens"."""

# -- GPT-2 vs cl100k: seed 002 ----------------------------------------------------------------------------------------

SPACES = "   Hello World!!!"
"""Three leading spaces (seed 002's copy shows one; its ids 220 220 keep the other two)."""
SPACES_GPT2 = [220, 220, 18435, 2159, 10185]
"""Seed 002: ``tiktoken.get_encoding("gpt2").encode(...)``."""
SPACES_CL100K = [256, 22691, 4435, 12340]
"""Seed 002: ``tiktoken.get_encoding("cl100k_base").encode(...)``."""

ENDOFTEXT_GPT2 = 50256
"""Seed 002: ``encoder['<|endoftext|>'] == 50256``."""
ENDOFTEXT_CL100K = 100257
"""Seed 002: ``ENDOFTEXT: 100257``."""

MAGIKARP = " SolidGoldMagikarp"
MAGIKARP_ID = 43453
"""GPT-2's id of `` SolidGoldMagikarp`` (tiktoken's r50k_base; the 'SolidGoldMagikarp' write-ups)."""


# -- the seeds themselves ---------------------------------------------------------------------------------------------


def seed(prefix: str) -> str | None:
    """The seed whose file name starts with ``prefix`` (``"004"``), or ``None`` when the seeds are not here."""
    found = sorted(Path(SEEDS).glob(f"{prefix}_*.txt")) if Path(SEEDS).is_dir() else []
    return found[0].read_text(encoding="utf-8") if found else None


def _block_after(text: str, marker: str, opening: str) -> str:
    """The bracketed block (``opening`` is ``[`` or ``{``) that starts first after ``marker`` in ``text``."""
    start = text.index(opening, text.index(marker))
    closing = {"[": "]", "{": "}"}[opening]
    depth = 0
    for i in range(start, len(text)):
        depth += {opening: 1, closing: -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    raise ValueError(f"no closing {closing} after {marker!r}")


def parse_printed(block: str):
    """A printed Python literal from a seed: lines joined (the slides break lines inside strings)."""
    return ast.literal_eval("".join(line.strip() for line in block.splitlines()))


@cache
def seed_wordpiece_vocab() -> list[str] | None:
    """Seed 004's printed WordPiece vocabulary at 70."""
    text = seed("004")
    return None if text is None else parse_printed(_block_after(text, "['[PAD]', '[UNK]'", "["))


@cache
def seed_bpe_merges() -> list[tuple[str, str]] | None:
    """Seed 004's printed BPE merges at vocabulary 50, in order."""
    text = seed("004")
    return None if text is None else list(parse_printed(_block_after(text, "print(merges)", "{")))


@cache
def seed_bpe_vocab() -> list[str] | None:
    """Seed 004's printed BPE vocabulary at 50 (its special token's quotes restored: the slide lost them)."""
    text = seed("004")
    if text is None:
        return None
    block = _block_after(text, "print(vocab)", "[")
    return parse_printed(block.replace("[<|endoftext|>,", "['<|endoftext|>',"))


def seed_ints(prefix: str, pattern: str) -> list[int]:
    """The integers of the first match of ``pattern`` in a seed."""
    text = seed(prefix)
    m = re.search(pattern, text or "")
    return [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []


# -- the course's BPE (seed 004; the course's chapter 6 section 5) -----------------------------------------------------

COURSE_TOKENIZED = ["This", "Ġis", "Ġ", "n", "o", "t", "Ġa", "Ġtoken", "."]
"""The course's ``tokenize("This is not a token.")`` (chapter 6, section 5); the seed's slide prints the last
token as ``'Ġ.Ġ'``."""

SEED_TOKENIZED = ["This", "Ġis", "Ġ", "n", "o", "t", "Ġa", "Ġtoken", "Ġ.Ġ"]
"""What seed 004's slide prints for it."""


def gpt2_bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (``encoder.py``'s ``bytes_to_unicode``), written out for the tests."""
    keep = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = keep[:]
    n = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(keep, map(chr, chars)))


def course_bpe(corpus: list[str], vocab_size: int = 50, rule: str = "first") -> list[tuple[str, str]]:
    """The course's BPE training loop (seed 004, "BPE TRAINING ALGORITHM"), with its own pre-tokenizer.

    Words come from Hugging Face ``tokenizers``' GPT-2 pre-tokenizer (``ByteLevel``), sentence by sentence;
    the vocabulary is ``<|endoftext|>`` + the sorted alphabet; each step merges the most frequent pair,
    the first one met (``rule="first"``, the course's loop) or the greatest as bytes (``"lexicographic"``).
    """
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    freqs: dict[str, int] = {}
    for sentence in corpus:
        for word, _offsets in pre.pre_tokenize_str(sentence):
            freqs[word] = freqs.get(word, 0) + 1
    alphabet = sorted({c for w in freqs for c in w})
    to_byte = {c: b for b, c in gpt2_bytes_to_unicode().items()}
    splits = {w: list(w) for w in freqs}
    merges: list[tuple[str, str]] = []
    while 1 + len(alphabet) + len(merges) < vocab_size:
        pairs: dict[tuple[str, str], int] = {}
        for w, n in freqs.items():
            for a, b in pairwise(splits[w]):
                pairs[(a, b)] = pairs.get((a, b), 0) + n
        if not pairs:
            break
        if rule == "first":
            best = max(pairs, key=pairs.get)
        else:
            best = max(pairs, key=lambda p: (pairs[p], bytes(map(to_byte.get, p[0])), bytes(map(to_byte.get, p[1]))))
        merges.append(best)
        for w in freqs:
            s, i = splits[w], 0
            while i < len(s) - 1:
                if (s[i], s[i + 1]) == best:
                    s[i : i + 2] = [s[i] + s[i + 1]]
                else:
                    i += 1
    return merges


# -- minbpe and Wikipedia ---------------------------------------------------------------------------------------------

MINBPE_IDS = [258, 100, 258, 97, 99]
"""minbpe's README: ``BasicTokenizer`` trained on ``aaabdaaabac`` to 256 + 3 encodes it as these ids."""

WIKIPEDIA_STEPS = ["aaabdaaabac", "ZabdZabac", "ZYdZYac", "XdXac"]
"""Wikipedia's "Byte pair encoding" example (Z = aa, Y = ab, X = ZY)."""


def minbpe_train(text: str, num_merges: int) -> list[int]:
    """minbpe's ``BasicTokenizer`` (get_stats, merge, ``max(stats, key=stats.get)``), as seed 002 shows it; the ids."""
    ids = list(text.encode("utf-8"))
    for i in range(num_merges):
        stats: dict[tuple[int, int], int] = {}
        for pair in pairwise(ids):
            stats[pair] = stats.get(pair, 0) + 1
        pair = max(stats, key=stats.get)
        new, j = [], 0
        while j < len(ids):
            if j < len(ids) - 1 and (ids[j], ids[j + 1]) == pair:
                new.append(256 + i)
                j += 2
            else:
                new.append(ids[j])
                j += 1
        ids = new
    return ids


# -- the course's Unigram (chapter 6, section 7) -----------------------------------------------------------------------

UNIGRAM_WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
UNIGRAM_SEED = {"h": 15, "u": 36, "g": 20, "hu": 15, "ug": 20, "p": 17, "pu": 17, "n": 16, "un": 16, "b": 4, "bu": 4,
                "s": 5, "hug": 15, "gs": 5, "ugs": 5}  # fmt: skip
"""The course's initial vocabulary with its frequencies (sum 210)."""
UNIGRAM_BEST = {"hug": 0.071428, "pug": 0.007710, "pun": 0.006168, "bun": 0.001451, "hugs": 0.001701}
"""The course's score of each word's tokenization (printed truncated to six places)."""
UNIGRAM_UNHUG = [("u", 0.171429), ("un", 0.076191), ("un h", 0.005442), ("un hu", 0.005442), ("un hug", 0.005442)]
"""The course's Viterbi on ``unhug``: the best segmentation ending at each character, with its score."""
UNIGRAM_LOSS = 169.8
UNIGRAM_HUG_COST = 23.5
"""The course: removing ``hug`` raises the loss by 23.5; removing ``pu`` leaves it unchanged."""
UNIGRAM_COURSE_PUG = {"p u g": 0.000389, "pu g": 0.0022676}
"""The course's first ``pug`` probabilities, which take P(p) and P(pu) as 5/210."""
