"""WordPiece training reports progress during every phase, so Cancel works however long a step takes.

With the reporting interval set to 0 every cheap checkpoint reports, which
shows where the checkpoints are without timing anything: while counting (per
chunk of text), while seeding the pair counts (per word, and before each long
word) and inside a merge (before each long word it rewrites).  Raising
:class:`TrainingCancelled` at any report stops training; reporting changes nothing.
"""

from __future__ import annotations

import pytest

from bpe_core import train_wordpiece
from bpe_core.interface import TrainingCancelled
from bpe_core.wordpiece import trainer, words
from bpe_core.wordpiece.words import count_words
from tests.conftest import sample

TEXT = sample("english")


@pytest.fixture
def every_checkpoint(monkeypatch):
    monkeypatch.setattr(trainer, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(words, "COUNT_CHUNK", 500)


def test_counting_in_chunks_gives_the_same_counts(monkeypatch):
    whole = count_words(TEXT, ["[SEP]"], lowercase=True)
    monkeypatch.setattr(words, "COUNT_CHUNK", 37)
    calls = []
    assert count_words(TEXT, ["[SEP]"], lowercase=True, progress=lambda *a: calls.append(a)) == whole
    assert list(count_words(TEXT, ["[SEP]"], True)[0]) == list(whole[0])  # order of first appearance too
    assert len(calls) > len(TEXT) // 74 and all(p == "count" for p, _d, _t in calls)
    done = [d for _p, d, _t in calls]
    assert done == sorted(done) and done[-1] == calls[-1][2] == -(-len(TEXT) // 37)


def test_every_phase_reports(every_checkpoint):
    long_word = "ab" * 20_000  # one 40,000-character word: seeding and the merges that rewrite it report before it
    text = TEXT + " " + long_word + " " + long_word
    calls = []
    tok = train_wordpiece(text, 300, progress=lambda *a: calls.append(a))
    phases = [p for p, _d, _t in calls]
    n_count = phases.count("count")
    assert n_count >= len(TEXT) // 1000 and phases[:n_count] == ["count"] * n_count  # counting comes first
    seeding = [c for c in calls[n_count:] if c[0] == "merge" and c[1] == 0]
    assert len(seeding) >= 2  # before the long word, and per 1,024 words
    per_merge = {}
    for _p, done, _t in calls[n_count:]:
        per_merge[done] = per_merge.get(done, 0) + 1
    # merges that rewrote the long word reported inside the merge too
    assert any(v >= 2 for k, v in per_merge.items() if k)
    plain = train_wordpiece(text, 300)
    assert tok.vocab == plain.vocab and [s.score_exact for s in tok.trace] == [s.score_exact for s in plain.trace]


@pytest.mark.parametrize("stop_at", [1, 5, 40, 200])
def test_cancel_at_any_report_stops_training(every_checkpoint, stop_at):
    seen = []

    def progress(phase, done, total):
        seen.append(phase)
        if len(seen) == stop_at:
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        train_wordpiece(TEXT + " " + "ab" * 5000, 300, progress=progress)
    assert len(seen) == stop_at
