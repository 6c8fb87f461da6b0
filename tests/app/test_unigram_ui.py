"""Unigram in the app's pieces: the pruning history against the engine's trace, the lattice drawing against encode."""

from __future__ import annotations

import html
import itertools
import re

import pytest

from bpe_core.unigram import train_unigram
from tests.conftest import sample
from ui.algorithms import view_of
from ui.lattice_view import lattice_html, lattices_html
from ui.merges.history import history_for
from ui.merges.pruning import UnigramPruningHistory, pruning_card_html, pruning_figures

TEXT = sample("english") + "\n" + sample("python")


@pytest.fixture(scope="module")
def tok():
    return train_unigram(TEXT, 400)


def test_pruning_history_follows_the_trace(tok):
    h = history_for(tok.with_vocab_size(350), TEXT)  # any view: the full one is replayed
    assert view_of("unigram").history is UnigramPruningHistory and isinstance(h, UnigramPruningHistory)
    rounds = tok.trace
    assert h.n_steps == len(rounds) > 3 and h.sizes[0] == 400 and h.sizes[-1] == tok.min_vocab_size
    for k in (0, 1, h.n_steps // 2, h.n_steps):
        view = tok.with_vocab_size(h.sizes[k])
        # the text at step k is the view of that size; the token count is the trainer's, equal to encoding
        assert [s.id for s in h.view(k).token_spans(TEXT)] == view.encode(TEXT)
        assert h.tokens_at(k) == len(view.encode(TEXT))
        if k:
            r = rounds[k - 1]
            assert (h.sizes[k - 1], h.sizes[k]) == (r.size_before, r.size_after)
            assert h.loss_at(k) == r.loss_after and h.loss_at(k - 1) == r.loss_before
            removed = h.removed_table(k)
            assert list(removed["id"]) == list(r.removed) and list(removed["loss increase (nats)"]) == list(
                r.loss_increase
            )
            assert list(removed["piece"]) == [tok.pieces[i] for i in r.removed]
            # the removed pieces are in the view before the round, not after it
            assert set(h.highlight(k)) == set(r.removed)
            assert all(i < h.sizes[k - 1] and i >= h.sizes[k] for i in r.removed)
        kept = h.kept_table(k)
        assert len(kept) == h.sizes[k] - len(tok.special_tokens)
        assert list(kept["score"]) == sorted(kept["score"], reverse=True)
    assert list(h.table()["loss after"]) == [r.loss_after for r in rounds]
    # loss rises round after round (pruning removes probability mass the text used)
    losses = [h.loss_at(k) for k in range(h.n_steps + 1)]
    assert all(b >= a for a, b in itertools.pairwise(losses))


def test_pruning_card_and_charts_escape_and_mark_the_step(tok):
    h = UnigramPruningHistory(tok, TEXT)
    k = 2
    body = pruning_card_html(h, k)
    r = tok.trace[k - 1]
    assert f"Pruning round {r.round}" in body and f"{r.size_before:,} → {r.size_after:,}" in body
    for _i, piece, _x in h.removed(k)[:5]:
        assert html.escape(piece).replace(" ", "·") in body or html.escape(piece) in body
    figs = pruning_figures(h, k)
    assert list(figs[0].data[0].y) == [h.loss_at(i) for i in range(h.n_steps + 1)]
    assert list(figs[0].data[1].x) == [k] and list(figs[1].data[1].x) == [h.sizes[k]]
    assert list(figs[2].data[0].y) == list(r.loss_increase)
    evil = train_unigram("<b>x</b> <img src=x onerror=alert(1)> " * 30, 40)
    card = pruning_card_html(UnigramPruningHistory(evil, "<b>x</b>"), 1)
    assert "<img" not in card and "<b>x" not in card


def _arcs(body: str) -> list[tuple[int, int, int, bool]]:
    return [
        (int(s), int(e), int(i), "best" in cls)
        for cls, s, e, i in re.findall(r'<div class="lat-arc([^"]*)" style="[^"]*" data-start="(\d+)" '
                                       r'data-end="(\d+)" data-id="(\d+)"', body)
    ]  # fmt: skip


@pytest.mark.parametrize("text", ["tokenization", "Hugging Face", "naïve ☃ <script>alert(1)</script>", "x"])
def test_lattice_html_draws_every_arc_and_marks_the_best_path(tok, text):
    lattices = tok.encode_steps(text)
    assert [i for w in lattices for i in w.ids] == tok.encode(text)
    for w in lattices:
        body = lattice_html(w)
        drawn = _arcs(body)
        # every arc of the lattice is drawn once, with its span and id
        assert sorted((s, e, i) for s, e, i, _b in drawn) == sorted((a.start, a.end, a.id) for a in w.arcs)
        best = sorted((s, e) for s, e, _i, b in drawn if b)
        assert best == sorted((a.start, a.end) for a in w.best.arcs)
        # the best path's pieces are the encoding's (unknown characters fused into one <unk>, as encode does)
        fused = []
        for a in sorted(w.best.arcs, key=lambda a: a.start):
            if a.is_unknown and fused and fused[-1] == tok.unknown_id:
                continue
            fused.append(a.id)
        assert tuple(fused) == w.ids
        for seg in w.runners_up:  # the runners-up and their totals are listed
            assert f"{seg.score:.3f}" in body
    page = lattices_html(lattices)
    assert "<script>" not in page and ("&lt;script&gt;" in page) == ("<script>" in text)


def test_lattice_html_shows_scores_of_the_runners_up_in_order(tok):
    (w,) = tok.encode_steps("tokenizers")
    body = lattice_html(w)
    totals = [float(x) for x in re.findall(r'<span class="tot">(?:best:|#\d+:) (-?[\d.]+)</span>', body)]
    assert totals == sorted(totals, reverse=True) and len(totals) == 1 + len(w.runners_up) > 1


def test_a_unigram_token_hover_says_piece_and_score_not_merge(tok):
    """The hover and dialog label of a learned piece: its place among the kept pieces and its score.

    The score is checked against Hugging Face's reading of the exported tokenizer.json (its vocab's score).
    """
    import json

    from tokenizers import Tokenizer

    from bpe_core import unigram_to_hf_json
    from ui import render
    from ui.algorithms import view_of

    hf = Tokenizer.from_str(unigram_to_hf_json(tok))
    hf_scores = {p: s for p, s in json.loads(hf.to_str())["model"]["vocab"]}
    label = lambda i: view_of(tok.algorithm).rank_label(tok, i)  # noqa: E731 -- what ui.view passes
    learned = [s for s in tok.token_spans(TEXT) if s.rank is not None]
    assert learned
    for s in learned[:20]:
        tip = render.token_tooltip(s, label)
        first = tip.splitlines()[0]
        piece = tok.id_to_token(s.id)
        assert first == f"id {s.id} · piece #{s.id - tok.min_vocab_size + 1:,}, score {hf_scores[piece]:.2f}"
        assert "merge" not in tip
    # BPE keeps its words: a merge
    assert view_of("bpe").rank_label(train_bpe_small(), 260) == "merge #5"
    html_ = render.tokens_html(learned[:3], rank_label=label)
    assert "piece #" in html_ and "merge #" not in html_


def train_bpe_small():
    from bpe_core import train_bpe

    return train_bpe("hug pug pun bun hugs " * 10, 261)


def test_insights_token_menu_names_a_unigram_piece_not_a_merge(tok):
    """Insights' token menu labels a learned Unigram token by its piece rank and score (HF's reading of the
    export), and a BPE token by its merge."""
    import json

    from tokenizers import Tokenizer

    from bpe_core import unigram_to_hf_json
    from ui.insights_view import token_label

    hf_vocab = json.loads(Tokenizer.from_str(unigram_to_hf_json(tok)).to_str())["model"]["vocab"]
    i = tok.min_vocab_size + 2
    piece, score = hf_vocab[i]
    assert token_label(tok, i).endswith(f"  ·  piece #3, score {score:.2f}  ·  id {i}")
    assert "merge" not in token_label(tok, i) and tok.id_to_token(i) == piece
    assert "  ·  merge #5  ·  id 260" in token_label(train_bpe_small(), 260)


def test_pruning_card_signs_the_loss_change():
    """A round's loss can fall (EM re-estimates the scores after the pruning): the card says -x, never +-x.

    The English sample under GPT-2's pattern at 1,000: round 1 lowers the loss by 48.0 nats (the app's
    Unigram Merges page with that pattern showed "+-48.0 nats" before)."""
    text = sample("english")
    gpt2 = train_unigram(text, 1000, pattern="gpt2")
    h = history_for(gpt2, text)
    signs = set()
    for k in range(1, h.n_steps + 1):
        r = gpt2.trace[k - 1]
        card = html.unescape(pruning_card_html(h, k))
        rise = r.loss_after - r.loss_before
        assert f"{'+' if rise >= 0 else '-'}{abs(rise):,.1f} nats" in card
        assert "+-" not in card
        signs.add(rise >= 0)
    assert signs == {True, False}  # this text has rounds of both kinds
