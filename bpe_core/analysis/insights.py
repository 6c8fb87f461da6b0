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

from ..bpe.model import BPETokenizer
from ..interface import TrainedTokenizer
from ..pretokenize import pretokenize


def learned_tokens(tok: TrainedTokenizer) -> list[tuple[int, int]]:
    """``(merge rank, token id)`` of every token training added to the vocabulary, in training order.

    :meth:`~bpe_core.interface.TrainedTokenizer.learned_tokens`: for BPE every merge adds one id; a
    WordPiece merge whose result was already in the vocabulary (``added=False``) adds none and is
    left out; a Unigram piece's rank is its place among the pieces pruning kept.

    Args:
        tok: a trained tokenizer (its current view).

    Returns:
        The list, ranks ascending.
    """
    return tok.learned_tokens()


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


def merge_tree(tok: TrainedTokenizer, token_id: int) -> MergeTree:
    """The merge tree of one token of a trained tokenizer.

    For BPE the leaves are single bytes; for WordPiece they are alphabet
    entries (``h``, ``##u``) and ``display`` is the vocabulary string; a
    Unigram piece was never built from parts, so its tree is the piece alone.

    Args:
        tok: the tokenizer (any view; the token must be in the view).
        token_id: the token to explain.

    Returns:
        A :class:`MergeTree`.

    Raises:
        ValueError: ``token_id`` is not in the view, or is a special token.
    """
    if token_id in tok.special_tokens.values():
        raise ValueError(f"token {token_id} is a special token: it is never built by merges")
    tok.token_bytes(token_id)  # raises ValueError for an id outside the view
    by_new = tok.merged_parts()

    def build(i: int) -> MergeTree:
        b = tok.token_bytes(i)
        parts = by_new.get(i)
        if parts is None:  # a base token (rank None), or a Unigram piece (its rank: the order pruning kept it in)
            return MergeTree(i, b, tok.describe_token(i), tok.rank_of(i))
        return MergeTree(i, b, tok.describe_token(i), tok.rank_of(i), (build(parts[0]), build(parts[1])))

    return build(token_id)


@dataclass(frozen=True)
class TreeRow:
    """One node of a merge tree, flattened for a table or a Plotly icicle/treemap.

    Attributes:
        node: a unique path id (``"0"`` the root, ``"0.1"`` its right child, ...).
        parent: the parent's path id (``""`` for the root).
        depth: 0 for the root.
        id: token id.
        display: readable token.
        rank: merge rank, or ``None`` for a leaf.
        n_bytes: the token's length in bytes.
    """

    node: str
    parent: str
    depth: int
    id: int
    display: str
    rank: int | None
    n_bytes: int


def tree_rows(tree: MergeTree) -> list[TreeRow]:
    """The nodes of a merge tree in pre-order (a node, then its left subtree, then its right)."""
    rows: list[TreeRow] = []

    def walk(t: MergeTree, node: str, parent: str, depth: int) -> None:
        rows.append(TreeRow(node, parent, depth, t.id, t.display, t.rank, len(t.token_bytes)))
        for k, c in enumerate(t.children):
            walk(c, f"{node}.{k}", node, depth + 1)

    walk(tree, "0", "", 0)
    return rows


def token_occurrences(ids: Sequence[int]) -> Counter:
    """How many times each token id occurs in an encoded text (``Counter(ids)``)."""
    return Counter(ids)


def production_ranks_of(token_bytes: bytes, encodings: Mapping[str, Mapping[bytes, int]]) -> dict[str, int | None]:
    """Whether the same bytes are a single token in each production encoding, and at which rank.

    Args:
        token_bytes: the bytes to look up.
        encodings: ``{encoding name: mergeable_ranks}`` (e.g. from
            :func:`bpe_core.production.encodings.load_mergeable_ranks`).

    Returns:
        ``{encoding name: rank or None}``.
    """
    return {name: ranks.get(token_bytes) for name, ranks in encodings.items()}


# ---------------------------------------------------------------------------
# vocabulary overlap


@dataclass(frozen=True)
class VocabDiff:
    """A trained vocabulary against one production tokenizer's.

    Attributes:
        production: the production encoding's name.
        only_ours: ``(merge rank, token bytes)`` of learned tokens the production encoding
            does not have as a single token, in merge order.
        shared: ``(merge rank, token bytes, production rank)`` of learned tokens the
            production encoding has too, in merge order.
        overlap_curve: ``overlap_curve[k]`` = how many of the first ``k + 1``
            learned tokens the production encoding has (for a plot against vocab size).
    """

    production: str
    only_ours: list[tuple[int, bytes]] = field(default_factory=list)
    shared: list[tuple[int, bytes, int]] = field(default_factory=list)
    overlap_curve: list[int] = field(default_factory=list)

    @property
    def learned(self) -> int:
        """Number of learned (merge) tokens compared."""
        return len(self.only_ours) + len(self.shared)

    @property
    def shared_fraction(self) -> float:
        """Share of the learned tokens the production encoding also has (0.0 when none were learned)."""
        return len(self.shared) / self.learned if self.learned else 0.0


def vocab_diff(tok: TrainedTokenizer, production_name: str, production_ranks: Mapping[bytes, int]) -> VocabDiff:
    """Compare the learned tokens of a trained tokenizer with a production tokenizer's tokens.

    The learned tokens are :meth:`~bpe_core.interface.TrainedTokenizer.learned_tokens`
    (BPE's merges, WordPiece's added merges, Unigram's pieces beyond the
    required characters), compared by their bytes: a WordPiece vocabulary
    against BERT's (``##`` pieces as written), a Unigram's against XLM-R's
    (``▁`` as written), a BPE's against any byte-level vocabulary.  Single bytes
    and alphabet entries are left out: they are not learned.

    Args:
        tok: the trained tokenizer (its current view).
        production_name: a label for the production tokenizer.
        production_ranks: its ``{token bytes: id or rank}``
            (:func:`bpe_core.production.registry.production_token_ids`).

    Returns:
        A :class:`VocabDiff`.
    """
    diff = VocabDiff(production_name)
    have = 0
    for rank, new in tok.learned_tokens():
        b = tok.token_bytes(new)
        their_rank = production_ranks.get(b)
        if their_rank is None:
            diff.only_ours.append((rank, b))
        else:
            diff.shared.append((rank, b, their_rank))
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


class TooFewDocuments(ValueError):
    """Whole documents cannot make a held-out part near the share asked for (see :func:`heldout_split`).

    Attributes:
        documents: how many documents the text has.
        closest: the held-out share of characters the documents come closest to (0..1), or ``None``
            when there are fewer than two documents.
    """

    def __init__(self, message: str, documents: int, closest: float | None) -> None:
        super().__init__(message)
        self.documents = documents
        self.closest = closest


HELDOUT_ORDERS = 16
"""Seeded random orders of the documents :func:`_held_documents` tries (it keeps the one that comes nearest)."""

HELDOUT_TOLERANCE = 1.5
"""How far a whole-document held-out part may be from the share asked for: within a factor of this (20 % asked:
13.3 % to 30 % of the characters); further, :func:`heldout_split` refuses."""


def _held_documents(sizes: list[int], fraction: float, seed: int) -> set[int]:
    """Which documents (by index) to hold out so that their characters come nearest ``fraction`` of all.

    In each of :data:`HELDOUT_ORDERS` seeded random orders of the documents, each document is held out
    when that brings the held-out characters nearer the target (``fraction`` of the documents'
    characters) and skipped otherwise; the order that ends nearest wins (the first, on a tie).  At least
    one document is held out and one kept.
    """
    target = fraction * sum(sizes)
    rng = random.Random(seed)
    best: set[int] = set()
    best_gap = float("inf")
    for _ in range(HELDOUT_ORDERS):
        order = list(range(len(sizes)))
        rng.shuffle(order)
        held: set[int] = set()
        total = 0
        for i in order:
            if len(held) < len(sizes) - 1 and abs(total + sizes[i] - target) < abs(total - target):
                held.add(i)
                total += sizes[i]
        if not held:  # every document is larger than twice the target: the smallest one
            i = min(order, key=lambda i: sizes[i])
            held, total = {i}, sizes[i]
        if abs(total - target) < best_gap:
            best, best_gap = held, abs(total - target)
    return best


def heldout_split(
    text: str, fraction: float = 0.2, seed: int = 0, separator: str | None = None, by: str = "document"
) -> tuple[str, str]:
    r"""Split a text into a training part and a held-out part, reproducibly.

    ``by="document"``: whole documents are held out, chosen in a seeded random order so that their
    characters come nearest ``fraction`` of the text's (:func:`_held_documents`); both parts keep the
    documents' original order, joined by a blank line (or the separator).  When whole documents cannot
    come near the share -- fewer than two documents, or a held-out part off by more than a factor of
    :data:`HELDOUT_TOLERANCE` (a text of a few documents of very different lengths) -- it refuses
    with :class:`TooFewDocuments` rather than hold out a share other than the one asked for.
    ``by="fraction"``: the text is cut at the last line boundary before ``1 - fraction`` of its
    characters (or exactly there when no line break comes before): the tail is held out, and the seed
    plays no part.

    Args:
        text: the whole text.
        fraction: share of the characters to hold out, ``0 < fraction < 1``.
        seed: random seed (same seed, same split).
        separator: document separator (see :func:`split_documents`).
        by: ``"document"`` or ``"fraction"``.

    Returns:
        ``(train_text, heldout_text)``.

    Raises:
        TooFewDocuments: ``by="document"`` and the documents cannot make the share (a ``ValueError``).
        ValueError: ``fraction`` outside (0, 1), unknown ``by``, or the text has nothing to split.

    >>> train, held = heldout_split("a" * 60 + "\n\n" + "b" * 20 + "\n\n" + "c" * 20, 0.2)
    >>> len(train), len(held)  # 60 + 2 + 20 characters kept, one document of 20 (20 %) held out
    (82, 20)
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"held-out fraction must be between 0 and 1 (exclusive), got {fraction}")
    if by not in ("document", "fraction"):
        raise ValueError(f"split by must be 'document' or 'fraction', got {by!r}")
    if by == "document":
        docs = split_documents(text, separator)
        joiner = separator if separator and separator in text else "\n\n"
        if len(docs) < 2:
            raise TooFewDocuments(
                f"the text is one document (no blank line{' or separator' if separator else ''} between parts), "
                "so no whole document can be held out",
                len(docs),
                None,
            )
        held = _held_documents([len(d) for d in docs], fraction, seed)
        share = sum(len(docs[i]) for i in held) / sum(len(d) for d in docs)
        if not fraction / HELDOUT_TOLERANCE <= share <= fraction * HELDOUT_TOLERANCE:
            raise TooFewDocuments(
                f"the text has {len(docs)} documents of very different lengths: holding out whole documents "
                f"gives {share:.0%} of its characters, not {fraction:.0%}",
                len(docs),
                share,
            )
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
# unused tokens


def unused_tokens(tok: TrainedTokenizer, text: str, ids: Sequence[int] | None = None) -> list[tuple[int, int, bytes]]:
    """Learned tokens that never occur when ``text`` is encoded (intermediate merge artefacts).

    Args:
        tok: the trained tokenizer (its current view).
        text: the text to encode (training or held-out text).
        ids: ``tok.encode(text)`` when the caller already has it (e.g. from a
            faster exact encoder); ``text`` is then not encoded again.

    Returns:
        ``(merge rank, token id, token bytes)`` of each unused learned token, in
        merge order (WordPiece: the vocabulary string's UTF-8, ``##`` included).
    """
    used = set(tok.encode(text) if ids is None else ids)
    return [(r, i, tok.token_bytes(i)) for r, i in learned_tokens(tok) if i not in used]


# ---------------------------------------------------------------------------
# pre-tokenizer playground


def pretoken_chunks(text: str, pattern: str, special_tokens: Sequence[str] = ()) -> list[tuple[int, int, bool]]:
    """Where a split pattern cuts a text: ``(start, end, is_special)`` character ranges covering it.

    Args:
        text: the text.
        pattern: pattern name or regex source.
        special_tokens: special-token strings, split out first.

    Raises:
        TypeError, ValueError: as :func:`bpe_core.pretokenize.pretokenize` (invalid regex, ...).
    """
    return [(p.start, p.end, p.is_special) for p in pretokenize(text, pattern, special_tokens)]


@dataclass(frozen=True)
class MergeSetDiff:
    """The learned tokens of two trained tokenizers compared as byte strings.

    Attributes:
        only_a: ``(rank in a, bytes)`` of tokens only ``a`` learned, in ``a``'s merge order.
        only_b: ``(rank in b, bytes)`` of tokens only ``b`` learned, in ``b``'s merge order.
        shared: how many learned tokens both have.
        same_prefix: how many first merges are the same pair of byte strings in both.
    """

    only_a: list[tuple[int, bytes]]
    only_b: list[tuple[int, bytes]]
    shared: int
    same_prefix: int


def merge_set_diff(a: BPETokenizer, b: BPETokenizer) -> MergeSetDiff:
    """Compare what two BPE tokenizers learned (e.g. the same text under two split patterns).

    Args:
        a: a trained BPE tokenizer (its current view).
        b: another one.

    Returns:
        A :class:`MergeSetDiff`.
    """
    ta = [a.token_bytes(new) for _l, _r, new in a.merge_ids]
    tb = [b.token_bytes(new) for _l, _r, new in b.merge_ids]
    sa, sb = set(ta), set(tb)
    same = 0
    for pa, pb in zip(a.merges, b.merges):
        if pa != pb:
            break
        same += 1
    return MergeSetDiff(
        [(r, t) for r, t in enumerate(ta) if t not in sb],
        [(r, t) for r, t in enumerate(tb) if t not in sa],
        len(sa & sb),
        same,
    )
