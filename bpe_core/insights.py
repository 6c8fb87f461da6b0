"""Insight views' numbers: token genealogy, vocabulary overlap, held-out splits, scripts, unused tokens.

Every function here is pure data over a tokenizer's public methods; the pages
only lay the results out.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import regex

from .bpe import BPETokenizer
from .spans import TokenSpan, display_bytes, utf8_len

# ---------------------------------------------------------------------------
# token genealogy


@dataclass(frozen=True)
class MergeTree:
    """How a BPE token was built, down to single bytes.

    Attributes:
        id: the token id.
        token_bytes: its bytes.
        display: readable form (``<0xNN>`` for bytes that are not whole characters).
        rank: the merge rank that created it, or ``None`` for a byte token.
        children: ``()`` for a byte token, else ``(left, right)`` subtrees.
    """

    id: int
    token_bytes: bytes
    display: str
    rank: int | None
    children: tuple[MergeTree, ...] = ()

    def depth(self) -> int:
        """Number of merge levels above the bytes (0 for a byte token)."""
        return 0 if not self.children else 1 + max(c.depth() for c in self.children)

    def leaves(self) -> list[MergeTree]:
        """The byte tokens at the bottom, left to right."""
        if not self.children:
            return [self]
        return [leaf for c in self.children for leaf in c.leaves()]


def merge_tree(tok: BPETokenizer, token_id: int) -> MergeTree:
    """The merge tree of one token of a BPE tokenizer.

    Args:
        tok: the tokenizer (any view; the token must be in the view).
        token_id: the token to explain.

    Returns:
        A :class:`MergeTree` whose leaves are single-byte tokens.

    Raises:
        ValueError: ``token_id`` is not in the view, or is a special token.
    """
    if token_id in tok.special_tokens.values():
        raise ValueError(f"token {token_id} is a special token: it is never built by merges")
    tok.token_bytes(token_id)  # raises ValueError for an id outside the view
    by_new = {new: (left, right) for left, right, new in tok.merge_ids}

    def build(i: int) -> MergeTree:
        b = tok.token_bytes(i)
        parts = by_new.get(i)
        if parts is None:
            return MergeTree(i, b, display_bytes(b), None)
        return MergeTree(i, b, display_bytes(b), tok.rank_of(i), (build(parts[0]), build(parts[1])))

    return build(token_id)


def reference_ranks_of(token_bytes: bytes, references: Mapping[str, Mapping[bytes, int]]) -> dict[str, int | None]:
    """Whether the same bytes are a single token in each reference encoding, and at which rank.

    Args:
        token_bytes: the bytes to look up.
        references: ``{encoding name: mergeable_ranks}`` (e.g. from
            :func:`bpe_core.reference.load_mergeable_ranks`).

    Returns:
        ``{encoding name: rank or None}``.
    """
    return {name: ranks.get(token_bytes) for name, ranks in references.items()}


# ---------------------------------------------------------------------------
# vocabulary overlap


@dataclass(frozen=True)
class VocabDiff:
    """A trained BPE vocabulary against one reference encoding.

    Attributes:
        reference: the reference's name.
        only_ours: ``(merge rank, token bytes)`` of learned tokens the reference
            does not have as a single token, in merge order.
        shared: ``(merge rank, token bytes, reference rank)`` of learned tokens the
            reference has too, in merge order.
        overlap_curve: ``overlap_curve[k]`` = how many of the first ``k + 1``
            learned tokens the reference has (for a plot against vocab size).
    """

    reference: str
    only_ours: list[tuple[int, bytes]] = field(default_factory=list)
    shared: list[tuple[int, bytes, int]] = field(default_factory=list)
    overlap_curve: list[int] = field(default_factory=list)

    @property
    def learned(self) -> int:
        """Number of learned (merge) tokens compared."""
        return len(self.only_ours) + len(self.shared)

    @property
    def shared_fraction(self) -> float:
        """Share of the learned tokens the reference also has (0.0 when none were learned)."""
        return len(self.shared) / self.learned if self.learned else 0.0


def vocab_diff(tok: BPETokenizer, reference_name: str, reference_ranks: Mapping[bytes, int]) -> VocabDiff:
    """Compare the learned tokens of a BPE tokenizer (its merges) with a reference's tokens.

    Single bytes are left out: every byte-level vocabulary has all 256.

    Args:
        tok: the trained tokenizer (its current view).
        reference_name: a label for the reference.
        reference_ranks: the reference's ``mergeable_ranks`` (bytes -> rank).

    Returns:
        A :class:`VocabDiff`.
    """
    diff = VocabDiff(reference_name)
    have = 0
    for rank, (_left, _right, new) in enumerate(tok.merge_ids):
        b = tok.token_bytes(new)
        ref_rank = reference_ranks.get(b)
        if ref_rank is None:
            diff.only_ours.append((rank, b))
        else:
            diff.shared.append((rank, b, ref_rank))
            have += 1
        diff.overlap_curve.append(have)
    return diff


# ---------------------------------------------------------------------------
# held-out evaluation


def split_documents(text: str, separator: str | None = None) -> list[str]:
    """Cut a text into documents.

    Args:
        text: the text.
        separator: a document separator such as ``"<|endoftext|>"``; when ``None``
            or absent from the text, documents are paragraphs (blank-line separated).

    Returns:
        The non-blank documents, in order, without the separators.
    """
    docs = text.split(separator) if separator and separator in text else regex.split(r"\n[ \t]*\n", text)
    return [d for d in docs if d.strip()]


def heldout_split(text: str, fraction: float = 0.2, seed: int = 0, separator: str | None = None) -> tuple[str, str]:
    """Split a text into a training part and a held-out part, by document, reproducibly.

    A seeded random choice of ``round(fraction * n)`` of the ``n`` documents (at
    least one, and at least one left for training) is held out; both parts keep
    the documents' original order, joined by a blank line (or the separator).
    With a single document, the text is cut at the line boundary nearest to
    ``1 - fraction`` of its characters.

    Args:
        text: the whole text.
        fraction: share of documents to hold out, ``0 < fraction < 1``.
        seed: random seed (same seed, same split).
        separator: document separator (see :func:`split_documents`).

    Returns:
        ``(train_text, heldout_text)``.

    Raises:
        ValueError: ``fraction`` outside (0, 1), or the text has nothing to split.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"held-out fraction must be between 0 and 1 (exclusive), got {fraction}")
    docs = split_documents(text, separator)
    joiner = separator if separator and separator in text else "\n\n"
    if len(docs) >= 2:
        k = min(max(1, round(fraction * len(docs))), len(docs) - 1)
        held = set(random.Random(seed).sample(range(len(docs)), k))
        train = [d for i, d in enumerate(docs) if i not in held]
        test = [d for i, d in enumerate(docs) if i in held]
        return joiner.join(train), joiner.join(test)
    if len(text.strip()) < 2:
        raise ValueError("the text is too short to split into a training part and a held-out part")
    cut = round(len(text) * (1 - fraction))
    nl = text.rfind("\n", 0, cut)
    if nl > 0:
        cut = nl + 1
    cut = min(max(cut, 1), len(text) - 1)
    return text[:cut], text[cut:]


# ---------------------------------------------------------------------------
# scripts


SCRIPT_GROUPS: tuple[str, ...] = (
    "Latin",
    "Cyrillic",
    "Greek",
    "Han",
    "Kana",
    "Hangul",
    "Arabic",
    "Hebrew",
    "Devanagari",
    "Thai",
    "Other scripts",
    "Emoji",
    "Digits",
    "Punctuation & symbols",
    "Whitespace",
    "Other",
)
"""The groups :func:`char_group` returns, in display order."""

_SCRIPT_RX = [
    (name, regex.compile(rf"\p{{Script={script}}}"))
    for name, script in [
        ("Latin", "Latin"),
        ("Cyrillic", "Cyrillic"),
        ("Greek", "Greek"),
        ("Han", "Han"),
        ("Kana", "Hiragana"),
        ("Kana", "Katakana"),
        ("Hangul", "Hangul"),
        ("Arabic", "Arabic"),
        ("Hebrew", "Hebrew"),
        ("Devanagari", "Devanagari"),
        ("Thai", "Thai"),
    ]
]
_EMOJI_RX = regex.compile(r"[\p{Emoji_Presentation}\p{Emoji_Modifier}\p{Regional_Indicator}\u200d\ufe0f\u20e3]")
_PICTO_RX = regex.compile(r"\p{Extended_Pictographic}")
_TAG_RANGE = range(0xE0020, 0xE0080)
_DIGIT_RX = regex.compile(r"\p{Nd}")
_PUNCT_RX = regex.compile(r"[\p{P}\p{S}]")
_INHERITED_RX = regex.compile(r"\p{Script=Inherited}")
_ANY_SCRIPT_RX = regex.compile(r"[^\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]")


def char_group(ch: str, previous: str | None = None) -> str:
    """The display group of one character (see :data:`SCRIPT_GROUPS`).

    Whitespace, decimal digits and emoji (emoji-presentation and pictographic
    characters from U+2300 on, skin-tone modifiers, flags' regional indicators,
    the zero-width joiner, variation selector 16, keycap and tag characters)
    come first; then the Unicode Script property (Hiragana and Katakana form
    "Kana"); combining marks (Script=Inherited) join ``previous``'s group;
    remaining punctuation and symbols; anything else is "Other".

    Args:
        ch: one character.
        previous: the group of the character before it, if any.

    Returns:
        A member of :data:`SCRIPT_GROUPS`.
    """
    if ch.isspace():
        return "Whitespace"
    if _DIGIT_RX.match(ch):
        return "Digits"
    cp = ord(ch)
    if _EMOJI_RX.match(ch) or (cp >= 0x2300 and _PICTO_RX.match(ch)) or cp in _TAG_RANGE:
        return "Emoji"
    for name, rx in _SCRIPT_RX:
        if rx.match(ch):
            return name
    if _INHERITED_RX.match(ch):
        return previous or "Other"
    if _ANY_SCRIPT_RX.match(ch):
        return "Other scripts"
    if _PUNCT_RX.match(ch):
        return "Punctuation & symbols"
    return "Other"


def char_groups(text: str) -> list[str]:
    """:func:`char_group` of every character of ``text`` (combining marks follow their base)."""
    out: list[str] = []
    prev = None
    for ch in text:
        g = char_group(ch, prev)
        out.append(g)
        prev = g
    return out


@dataclass(frozen=True)
class ScriptRow:
    """One group of a per-script breakdown.

    Attributes:
        group: the group name.
        characters: characters of the text in this group.
        tokens: tokens attributed to the group (fractional, see :func:`script_breakdown`).
        tokens_per_char: ``tokens / characters``.
    """

    group: str
    characters: int
    tokens: float
    tokens_per_char: float


def script_breakdown(text: str, spans: Sequence[TokenSpan]) -> list[ScriptRow]:
    """Tokens per character for each character group of a text, under one tokenizer.

    Each token counts one, shared among the characters it touches in
    proportion to their UTF-8 lengths, so the groups' token counts add up to
    the text's token count exactly (up to float rounding).

    Args:
        text: the text.
        spans: ``tokenizer.token_spans(text)``.

    Returns:
        One :class:`ScriptRow` per group present in the text, in
        :data:`SCRIPT_GROUPS` order.
    """
    groups = char_groups(text)
    chars = Counter(groups)
    tokens: dict[str, float] = dict.fromkeys(chars, 0.0)
    for s in spans:
        if s.end <= s.start:
            continue
        weights = [utf8_len(text[i]) for i in range(s.start, s.end)]
        total = sum(weights)
        for i, w in zip(range(s.start, s.end), weights):
            tokens[groups[i]] += w / total
    return [ScriptRow(g, chars[g], tokens[g], tokens[g] / chars[g]) for g in SCRIPT_GROUPS if g in chars]


# ---------------------------------------------------------------------------
# unused tokens


def unused_tokens(tok: BPETokenizer, text: str) -> list[tuple[int, int, bytes]]:
    """Learned tokens that never occur when ``text`` is encoded (intermediate merge artefacts).

    Args:
        tok: the trained tokenizer (its current view).
        text: the text to encode (training or held-out text).

    Returns:
        ``(merge rank, token id, token bytes)`` of each unused merge token, in merge order.
    """
    used = set(tok.encode(text))
    return [(r, new, tok.token_bytes(new)) for r, (_a, _b, new) in enumerate(tok.merge_ids) if new not in used]
