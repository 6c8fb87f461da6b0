"""The seed vocabulary of Unigram training: every character and the frequent substrings of the words.

See :func:`seed_pieces`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["seed_pieces"]


def _keep_candidates(level_pos: list, level_gram: list, level_freq: list, level_rmax: list) -> None:
    """Keep, of the last level's positions (not characters'), those of seed candidates (twice or more, branching)."""
    j = len(level_pos) - 1
    if j > 0:
        keep = ((level_freq[j] >= 2) & level_rmax[j])[level_gram[j]]
        level_pos[j] = level_pos[j][keep]
        level_gram[j] = level_gram[j][keep]


def seed_pieces(words: list[str], counts: np.ndarray, max_len: int, seed_size: int):
    """Required characters and frequent right-branching substrings; their arcs in every word.

    Returns ``(pieces, freqs, n_chars, lens, [arc_w, arc_s, arc_len, arc_p])``: the arcs as
    ``int32`` arrays (``arc_len`` ``uint8`` when ``max_len < 256``).
    """
    flat = "".join(words)
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    codes = np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32)
    wstart = np.zeros(len(words), dtype=np.int64)
    np.cumsum(lens[:-1], out=wstart[1:])
    wid = np.repeat(np.arange(len(words), dtype=np.int32), lens)
    rem = (wstart[wid] + lens[wid] - np.arange(len(codes), dtype=np.int64)).astype(np.int32)
    wpos = counts[wid]
    alphabet, cid = np.unique(codes, return_inverse=True)
    cid = cid.astype(np.int32)
    A = len(alphabet)
    n_chars = A
    level_pos = [np.arange(len(codes), dtype=np.int32)]
    level_gram = [cid]
    level_freq = [np.bincount(cid, weights=wpos, minlength=A)]
    level_first = [None]
    level_rmax: list[np.ndarray | None] = [None]
    for k in range(2, max_len + 2):
        P, G, F = level_pos[-1], level_gram[-1], level_freq[-1]
        mask = (rem[P] >= k) & (F[G] >= 2)
        Pk = P[mask]
        if len(Pk) == 0:
            level_rmax[-1] = np.ones(len(F), dtype=bool)
            _keep_candidates(level_pos, level_gram, level_freq, level_rmax)
            break
        key = G[mask].astype(np.int64) * A + cid[Pk + (k - 1)]
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        Fk = np.bincount(inv, weights=wpos[Pk], minlength=len(uniq))
        parent = uniq // A
        starts = np.flatnonzero(np.concatenate(([True], parent[1:] != parent[:-1])))
        maxext = np.zeros(len(F))
        maxext[parent[starts]] = np.maximum.reduceat(Fk, starts)
        level_rmax[-1] = maxext < F  # right-branching: not always followed by one character
        _keep_candidates(level_pos, level_gram, level_freq, level_rmax)
        if k == max_len + 1:
            break
        level_pos.append(Pk)
        level_gram.append(inv.astype(np.int32))
        level_freq.append(Fk)
        level_first.append(Pk[first])
        level_rmax.append(None)
    if level_rmax[-1] is None:
        level_rmax[-1] = np.ones(len(level_freq[-1]), dtype=bool)
    # candidates: levels 2.., frequency >= 2, right-branching; best frequency * length first
    cand_level, cand_gram, cand_score = [], [], []
    for j in range(1, len(level_freq)):
        F = level_freq[j]
        ok = np.flatnonzero((F >= 2) & level_rmax[j])
        cand_level.append(np.full(len(ok), j, dtype=np.int64))
        cand_gram.append(ok)
        cand_score.append(F[ok] * (j + 1))
    if cand_level:
        cl, cg, cs = np.concatenate(cand_level), np.concatenate(cand_gram), np.concatenate(cand_score)
    else:
        cl = cg = np.zeros(0, dtype=np.int64)
        cs = np.zeros(0)
    order = np.argsort(-cs, kind="stable")[: max(0, seed_size - n_chars)]
    cl, cg = cl[order], cg[order]
    pieces = [chr(c) for c in alphabet.tolist()]
    freqs = [level_freq[0]]
    seed_of = [np.arange(A, dtype=np.int32)]
    for j in range(1, len(level_freq)):
        seed_of.append(np.full(len(level_freq[j]), -1, dtype=np.int32))
    for idx, (j, g) in enumerate(zip(cl.tolist(), cg.tolist())):
        seed_of[j][g] = A + idx
        p = int(level_first[j][g])
        pieces.append(flat[p : p + j + 1])
    freqs.append(np.array([level_freq[j][g] for j, g in zip(cl.tolist(), cg.tolist())], dtype=np.float64))
    # arcs: every occurrence of a seed piece
    aw, as_, al, ap = [], [], [], []
    for j in range(len(level_freq)):
        P = level_pos[j]
        sp = seed_of[j][level_gram[j]]
        hit = sp >= 0
        Ph = P[hit]
        aw.append(wid[Ph])
        as_.append((Ph - wstart[wid[Ph]]).astype(np.int32))
        al.append(np.full(len(Ph), j + 1, dtype=np.uint8 if max_len < 256 else np.int32))
        ap.append(sp[hit])
        level_pos[j] = level_gram[j] = None  # free each level once its arcs are out
    arcs = []
    for parts in (aw, as_, al, ap):  # one array at a time, its parts freed as it is made
        arcs.append(np.concatenate(parts))
        parts.clear()
    return pieces, np.concatenate(freqs), n_chars, lens, arcs
