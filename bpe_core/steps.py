"""Step-by-step records shared by every algorithm's trace.

* :class:`EncodeStep` / :class:`PieceSteps` -- how one pre-token (or word) was
  encoded, one line per step; BPE's merges (:mod:`bpe_core.bpe.trace`) and
  WordPiece's greedy matches (:mod:`bpe_core.wordpiece.trace`) both produce them.
* :func:`encode_steps` -- the step-by-step encoding of any tokenizer.
* :func:`merge_pair` -- one training step on one word (replace a pair, left to right).
* :func:`check_top` -- the argument check of the candidate lists.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EncodeStep", "PieceSteps", "check_top", "encode_steps", "merge_pair"]


@dataclass(frozen=True, slots=True)
class EncodeStep:
    """One line of step-by-step encoding of one pre-token.

    Attributes:
        ids: the pre-token's token ids after this step.
        labels: the readable form of each token, same length as ``ids`` (BPE:
            its bytes decoded, ``<0xNN>`` for bytes that are not a whole
            character; WordPiece: its vocabulary string, ``##`` included).
        note: what this step did, in words.
        rank: BPE: the 0-based merge rank applied; ``None`` for the starting
            line and for algorithms without ranks.
        marked: positions in ``ids`` of the tokens this step produced.
    """

    ids: tuple[int, ...]
    labels: tuple[str, ...]
    note: str
    rank: int | None = None
    marked: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PieceSteps:
    """How one pre-token (or special token) of a text was encoded.

    Attributes:
        text: the pre-token's characters.
        start, end: its character offsets in the encoded text.
        is_special: a special token, emitted whole.
        steps: the lines, in order; ``steps[0]`` is the starting state and
            ``steps[-1].ids`` the pre-token's final tokens.
    """

    text: str
    start: int
    end: int
    is_special: bool
    steps: tuple[EncodeStep, ...]

    @property
    def ids(self) -> tuple[int, ...]:
        """The final token ids of this pre-token."""
        return self.steps[-1].ids

    @property
    def merges_applied(self) -> int:
        """Steps after the starting line (BPE: merges applied)."""
        return len(self.steps) - 1


def merge_pair(ids: tuple[int, ...], a: int, b: int, new: int) -> tuple[int, ...]:
    """Replace every (a, b) in ``ids`` by ``new``, left to right (one training step on one word)."""
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == a and ids[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return tuple(out)


def check_top(top: int) -> None:
    """Validate a candidate-list length.

    Raises:
        TypeError: ``top`` is not an int.
        ValueError: ``top < 1``.
    """
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top must be an int, got {type(top).__name__}")
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")


def encode_steps(tokenizer: object, text: str) -> list[PieceSteps]:
    """Step-by-step encoding for any tokenizer of the app: the hook other algorithms plug into.

    Calls the tokenizer's own ``encode_steps(text)`` (part of
    :class:`bpe_core.interface.Tokenizer`):

    * BPE -> :func:`bpe_core.bpe.trace.bpe_encode_steps` (merges in rank order);
    * WordPiece -> :func:`bpe_core.wordpiece.trace.wordpiece_encode_steps`: a
      starting line, then one :class:`~bpe_core.wordpiece.trace.GreedyStep` per
      greedy longest-match decision (``rank=None``, ``marked`` = the piece just
      taken, ``tried`` = the longer candidates that missed);
    * any other tokenizer with a method ``encode_steps(text) -> list[PieceSteps]``
      -> that method.

    Args:
        tokenizer: the tokenizer.
        text: the text to encode (``str``).

    Returns:
        ``list[PieceSteps]``, whose ``ids`` concatenate to ``tokenizer.encode(text)``.

    Raises:
        TypeError: the tokenizer offers no step-by-step encoding, or ``text`` is
            not a ``str``.
        ValueError: as the tokenizer's ``encode``.
    """
    method = getattr(tokenizer, "encode_steps", None)
    if method is None:
        raise TypeError(f"{type(tokenizer).__name__} has no step-by-step encoding (no encode_steps method)")
    return method(text)
