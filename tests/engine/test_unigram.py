"""Unigram training: the course's numbers by exhaustive enumeration, the trainer's states, trace, views and files."""

from __future__ import annotations

import io
import itertools
import math
from collections import defaultdict
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from bpe_core.interface import ALGORITHMS, TrainedTokenizer, TrainingCancelled, TrainingSpec
from bpe_core.unigram import UnigramTokenizer, count_unigram_words, train_unigram
from tests.conftest import SAMPLES, SEEDS

COURSE_WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
COURSE_FREQS = [("h", 15), ("u", 36), ("g", 20), ("hu", 15), ("ug", 20), ("p", 17), ("pu", 17), ("n", 16),
                ("un", 16), ("b", 4), ("bu", 4), ("s", 5), ("hug", 15), ("gs", 5), ("ugs", 5)]  # fmt: skip
"""The course's printed frequencies of all strict substrings of the toy corpus (chapter 6, section 7)."""

ENGLISH = (SAMPLES / "english.txt").read_text(encoding="utf-8")
PYTHON = (SAMPLES / "python.txt").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# an independent oracle: every segmentation of a word, by brute force


def segmentations(word: str, vocab) -> list[list[str]]:
    """All segmentations of ``word`` into pieces of ``vocab`` (start-position order)."""
    if word == "":
        return [[]]
    out = []
    for e in range(1, len(word) + 1):
        if word[:e] in vocab:
            out.extend([word[:e], *rest] for rest in segmentations(word[e:], vocab))
    return out


def best_segmentation(word: str, logp: dict[str, float]) -> tuple[list[str], float]:
    """Highest log-probability segmentation; ties to the last piece starting earliest (HF's and the course's rule)."""
    segs = segmentations(word, logp)
    scored = [(sum(logp[p] for p in s), s) for s in segs]
    top = max(sc for sc, _ in scored)

    def starts_from_end(s):
        pos, starts = 0, []
        for p in s:
            starts.append(pos)
            pos += len(p)
        return tuple(reversed(starts))

    return min((s for sc, s in scored if sc == top), key=starts_from_end), top


def course_model() -> dict[str, int]:
    """The strict substrings of the words, each with its occurrences as a substring of the corpus (whole words too)."""
    vocab = {w[i:j] for w in COURSE_WORDS for i in range(len(w)) for j in range(i + 1, len(w) + 1) if j - i < len(w)}
    freqs: dict[str, int] = defaultdict(int)
    for w, c in COURSE_WORDS.items():
        for i in range(len(w)):
            for j in range(i + 1, len(w) + 1):
                if w[i:j] in vocab:
                    freqs[w[i:j]] += c
    return freqs


def test_course_toy_corpus_numbers():
    freqs = course_model()
    assert sorted(freqs.items()) == sorted(COURSE_FREQS)
    total = sum(freqs.values())
    assert total == 210
    logp = {p: math.log(f / total) for p, f in freqs.items()}
    printed = {"hug": (["hug"], 0.071428), "pug": (["pu", "g"], 0.007710), "pun": (["pu", "n"], 0.006168),
               "bun": (["bu", "n"], 0.001451), "hugs": (["hug", "s"], 0.001701)}  # fmt: skip
    loss = 0.0
    for w, (course_seg, p) in printed.items():
        seg, score = best_segmentation(w, logp)
        assert math.exp(score) == pytest.approx(p, abs=1e-6)
        assert math.exp(sum(logp[x] for x in course_seg)) == pytest.approx(p, abs=1e-6)  # the course's is a best one
        loss -= COURSE_WORDS[w] * score
    assert round(loss, 1) == 169.8
    # "pug" ties ["p", "ug"] and ["pu", "g"] (17/210 * 20/210); Hugging Face's rule, and ours, take ["p", "ug"]
    assert best_segmentation("pug", logp)[0] == ["p", "ug"]
    # removing "hug": "hug" -> ["hu", "g"] (0.006802), "hugs" -> ["hu", "gs"]; the loss rises by 23.5
    # (each ties with ["h", "ug"] / ["h", "ugs"], which Hugging Face's rule would take)
    without = {p: s for p, s in logp.items() if p != "hug"}
    for w, course_seg, rule_seg in (("hug", ["hu", "g"], ["h", "ug"]), ("hugs", ["hu", "gs"], ["h", "ugs"])):
        seg, score = best_segmentation(w, without)
        assert seg == rule_seg and sum(without[x] for x in course_seg) == score
    assert math.exp(best_segmentation("hug", without)[1]) == pytest.approx(0.006802, abs=1e-6)
    rise = sum(-c * best_segmentation(w, without)[1] for w, c in COURSE_WORDS.items()) - loss
    assert round(rise, 1) == 23.5
    # our encoder with the same pieces and scores: the oracle's segmentations, and Hugging Face's
    tok = UnigramTokenizer.from_pieces(list(logp.items()), pattern="none")
    hf = Tokenizer(models.Unigram([("<unk>", 0.0), *logp.items()], unk_id=0))
    for w in COURSE_WORDS:
        ids = tok.encode(w)
        assert [tok.describe_token(i) for i in ids] == best_segmentation(w, logp)[0]
        assert ids == hf.encode(w).ids
    assert [tok.describe_token(i) for i in tok.encode("unhug")] == ["un", "hug"]  # the course's Viterbi example


COURSE_CORPUS = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]


def test_course_implementation_numbers():
    """The course's code on its four sentences: our words, our encoder and our loss give its printed values."""
    word_freqs: dict[str, int] = defaultdict(int)
    for text in COURSE_CORPUS:
        for w, c in count_unigram_words(text)[0].items():  # xlnet's Metaspace pre-tokenization
            word_freqs[w] += c
    char_freqs: dict[str, int] = defaultdict(int)
    subwords_freqs: dict[str, int] = defaultdict(int)
    for word, freq in word_freqs.items():
        for i in range(len(word)):
            char_freqs[word[i]] += freq
            for j in range(i + 2, len(word) + 1):
                subwords_freqs[word[i:j]] += freq
    sorted_subwords = sorted(subwords_freqs.items(), key=lambda x: x[1], reverse=True)
    assert sorted_subwords[:10] == [("▁t", 7), ("is", 5), ("er", 5), ("▁a", 5), ("▁to", 4), ("to", 4), ("en", 4),
                                    ("▁T", 3), ("▁Th", 3), ("▁Thi", 3)]  # fmt: skip
    token_freqs = dict(list(char_freqs.items()) + sorted_subwords[: 300 - len(char_freqs)])
    total = sum(token_freqs.values())
    model = {t: math.log(f / total) for t, f in token_freqs.items()}  # log-probabilities (the course stores -log)

    def loss_of(m: dict[str, float]) -> float:
        tok = UnigramTokenizer.from_pieces(list(m.items()), pattern="none")
        loss = 0.0
        for w, c in word_freqs.items():
            loss -= c * sum(tok.scores[i] for i in tok.encode(w))
        return loss

    tok = UnigramTokenizer.from_pieces(list(model.items()), pattern="none")
    ids = tok.encode("Hopefully")
    assert [tok.describe_token(i) for i in ids] == ["H", "o", "p", "e", "f", "u", "ll", "y"]
    # the course's Viterbi starts from score 1 instead of 0 (best_segmentations[0]["score"] = 1), so each word's
    # printed score, and each word occurrence in its loss, carries 1 more than the negative log-likelihood
    assert -sum(tok.scores[i] for i in ids) + 1 == pytest.approx(41.5157494601402, rel=1e-12)
    assert [tok.describe_token(i) for i in tok.encode("This")] == ["This"]
    base = loss_of(model)
    assert base + sum(word_freqs.values()) == pytest.approx(413.10377642940875, rel=1e-12)
    assert loss_of({t: s for t, s in model.items() if t != "ll"}) - base == pytest.approx(6.376412403623874, rel=1e-9)
    assert loss_of({t: s for t, s in model.items() if t != "his"}) - base == pytest.approx(0.0, abs=1e-9)


# ---------------------------------------------------------------------------
# the trainer


@pytest.fixture(scope="module")
def trained() -> UnigramTokenizer:
    return train_unigram(ENGLISH + PYTHON, 500, ["<s>", "</s>"])


def test_trained_layout_and_states(trained):
    tok = trained
    assert isinstance(tok, TrainedTokenizer)
    assert tok.vocab_size == 500 and tok.algorithm == "unigram" and not tok.is_byte_level
    assert list(tok.special_tokens) == ["<s>", "</s>", "<unk>"] and tok.unknown_id == 2
    chars = set((ENGLISH + PYTHON).replace(" ", "▁")) | {"▁"}
    assert tok.min_vocab_size == 3 + len(chars)
    assert set(tok.pieces[3 : tok.min_vocab_size]) == chars
    sizes = tok.state_sizes
    assert tok.max_vocab_size == 500 and sizes[0] == 500  # the trained size is the top; the states above are dropped
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == tok.min_vocab_size
    with pytest.raises(ValueError, match="out of range"):
        tok.with_vocab_size(501)
    assert tok.training_states() == sorted(sizes)
    rounds = tok.trace
    assert [r.size_before for r in rounds] == sizes[:-1] and [r.size_after for r in rounds] == sizes[1:]
    for r, nxt in itertools.pairwise(rounds):
        assert r.loss_after == nxt.loss_before
    for r in rounds:
        assert list(r.loss_increase) == sorted(r.loss_increase)  # removed lowest increase first
        assert len(r.removed) == r.n_removed == len(r.loss_increase)
        assert max(r.size_after, r.size_before - 1) == r.removed[0]
    # the losses the trainer reports are the Viterbi losses of the encoder (another implementation) at each state
    words, _ = count_unigram_words(ENGLISH + PYTHON, special_tokens=["<s>", "</s>", "<unk>"])
    for k in (0, len(sizes) // 2, len(sizes) - 1):
        view = tok.with_vocab_size(sizes[k])
        sc = view.scores
        loss = -sum(c * sum(sc[i] for i in view.encode_word(w)) for w, c in words.items())
        expect = rounds[k - 1].loss_after if k else rounds[0].loss_before
        assert loss == pytest.approx(expect, rel=1e-9)


def test_training_to_k_is_the_view_at_k_of_a_longer_training(trained):
    longer = train_unigram(ENGLISH + PYTHON, 700, ["<s>", "</s>"])
    assert longer.max_vocab_size == 700
    for k in (500, 437, trained.min_vocab_size + 3):
        view, small = (
            longer.with_vocab_size(k),
            (trained if k == 500 else train_unigram(ENGLISH + PYTHON, k, ["<s>", "</s>"])),
        )
        assert small.max_vocab_size == k and small.pieces == view.pieces[:k]
        assert small.scores == view.scores and small.state_sizes == view.state_sizes
        assert small.trace == view.trace
        assert {**small.to_dict(), "training": None} == {**view.to_dict(), "training": None}  # info: times, size asked
        assert small.training_text_tokens() == view.training_text_tokens() == len(view.encode(ENGLISH + PYTHON))
    # a size the seed cannot reach: the seed's size, with the reason
    tiny = train_unigram("hug pug pun bun hugs " * 3, 10_000)
    assert tiny.vocab_size == tiny.max_vocab_size < 10_000 and "instead of 10000" in tiny.training.stop_reason


def test_decode_then_encode_gives_the_same_ids(trained):
    """decode is a normal form: unknown characters (mid-word too) and texts starting with spaces re-encode the same."""
    for view in (trained, trained.with_vocab_size(trained.min_vocab_size), train_unigram(ENGLISH, 300, pattern="gpt2")):
        for text in ("Café, naïve ☃x", "  two spaces first", " ", "   ", " <s> after", "☃", "x☃☃y ☃ <unk>z",
                     "tail <s>", "a\n\n  b", " \t x"):  # fmt: skip
            ids = view.encode(text)
            assert view.encode(view.decode(ids)) == ids, (view.pattern_name, text)
    assert trained.decode(trained.encode("☃ x")) == "\u2047 x"  # SentencePiece's unknown surface
    assert trained.decode(trained.encode("  x")) == "  x"  # a leading "▁" word is kept, as its space


def test_views_are_prefixes_and_count_exactly(trained):
    tok = trained
    text = ENGLISH + PYTHON
    for n in (tok.min_vocab_size, tok.min_vocab_size + 7, 300, 499, 500, tok.max_vocab_size):
        view = tok.with_vocab_size(n)
        assert view.vocab_size == n
        ids = view.encode(text)
        assert max(ids) < n
        assert view.training_text_tokens() == len(ids)
        assert view.decode(ids) == text  # no unknown characters in the training text
    small, big = tok.with_vocab_size(300), tok.with_vocab_size(400)
    assert small.pieces[:300] == big.pieces[:300]
    assert tok.learned_tokens()[0] == (0, tok.min_vocab_size)
    assert tok.rank_of(tok.min_vocab_size + 5) == 5 and tok.rank_of(0) is None and tok.rank_of(3) is None
    with pytest.raises(ValueError, match="out of range"):
        tok.with_vocab_size(tok.min_vocab_size - 1)


def test_save_load_round_trip(trained, tmp_path):
    tok = trained.with_vocab_size(450)
    path = tmp_path / "u.json"
    tok.save(path)
    back = UnigramTokenizer.load(path)
    assert back.vocab_size == back.max_vocab_size == 450 and back.min_vocab_size == tok.min_vocab_size
    text = ENGLISH + " ☃ " + PYTHON
    for n in (450, 420, 300, tok.min_vocab_size):
        assert back.with_vocab_size(n).encode(text) == tok.with_vocab_size(n).encode(text)
        assert back.with_vocab_size(n).scores == tok.with_vocab_size(n).scores
    assert back.trace[-1] == tok.trace[-1]
    assert ALGORITHMS["unigram"].from_dict(tok.to_dict()).encode(text) == tok.encode(text)
    with pytest.raises(ValueError, match="not a BPE Playground Unigram file"):
        UnigramTokenizer.from_dict({"format": "other"})


def test_encode_steps_and_replay(trained):
    tok = trained
    text = "Tokenizers split text <s> into pieces."
    steps = tok.encode_steps(text, k=4)
    assert [i for s in steps for i in s.ids] == tok.encode(text)
    for s in steps:
        if s.is_special:
            continue
        segs = [s.best, *s.runners_up]
        assert [seg.score for seg in segs] == sorted((seg.score for seg in segs), reverse=True)
        # the k best equal brute force over the lattice's arcs
        vocab = {a.piece: a.score for a in s.arcs}
        brute = sorted((sum(vocab[p] for p in seg) for seg in segmentations(s.word, vocab)), reverse=True)[:5]
        assert [seg.score for seg in segs] == pytest.approx(brute, rel=1e-12)
        assert "".join(s.best.pieces) == s.word
    replay = tok.replay(text)
    assert len(replay.states) == len(tok.state_sizes)
    last = replay.states[-1]
    assert last.vocab_size == tok.min_vocab_size
    assert [sp.id for sp in replay.spans(5)] == tok.with_vocab_size(tok.state_sizes[5]).encode(text)
    removed = replay.removed(1)
    assert len(removed) == tok.trace[0].n_removed and removed[0][2] <= removed[-1][2]
    assert len(replay.kept(1)) == tok.state_sizes[1] - 3


def test_input_kinds_progress_and_cancel(tmp_path):
    text = ENGLISH
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    calls = []
    a = train_unigram(text, 300, progress=lambda *c: calls.append(c))
    b = train_unigram([text[:1000], text[1000:]], 300)
    c = train_unigram(path, 300)
    assert a.pieces == b.pieces == c.pieces
    assert {c[0] for c in calls} == {"count", "seed", "prune"} and calls[-1][1] == calls[-1][2]

    def cancel(phase, done, total):
        if phase == "prune":
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        train_unigram(text, 300, progress=cancel)


def test_registry_and_spec():
    spec = TrainingSpec("unigram", 300, pattern="sentencepiece", special_tokens=("<unk>",))
    tok = spec.train(ENGLISH)
    assert isinstance(tok, UnigramTokenizer) and tok.vocab_size == 300 and tok.unknown_id == 0
    gpt2 = train_unigram(ENGLISH, 300, pattern="gpt2")
    assert all("▁" not in p for p in gpt2.pieces[: gpt2.vocab_size])
    assert gpt2.decode(gpt2.encode(ENGLISH)) == ENGLISH


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        (("",), {}, ValueError, "no words"),
        (("<s><s>", 10, ["<s>"]), {}, ValueError, "no words"),
        (("abc", 3), {}, ValueError, "needs at least 5"),
        (("a\ud800b", 100), {}, ValueError, "surrogate"),
        ((b"abc", 100), {}, TypeError, "bytes"),
        ((42, 100), {}, TypeError, "str"),
        (("abc", "100"), {}, TypeError, "vocab_size"),
        (("abc", 100), {"percent_to_remove": 1.5}, ValueError, "between 0 and 1"),
        (("abc", 100), {"unk_token": ""}, ValueError, "unk_token"),
        (("abc", 100), {"pattern": "("}, ValueError, "invalid pattern"),
    ],
)
def test_bad_input(args, kwargs, exc, match):
    text, *rest = args
    if len(rest) == 0:
        rest = [100]
    with pytest.raises(exc, match=match):
        train_unigram(text, *rest, **kwargs)


def test_quality_against_sentencepiece_and_hugging_face_trainers():
    """Held-out tokens within 1 % of SentencePiece's and 5 % of Hugging Face's UnigramTrainer, comparable settings.

    The seed is SentencePiece's (tests/engine/test_unigram_exact.py); Hugging Face's
    trainer seeds differently (substring frequencies not weighted by word
    counts) and does 3 % better than both on these seeds.
    """
    import sentencepiece as spm

    seeds = sorted(SEEDS.glob("00*.txt"))
    lines = [ln for p in (seeds[0], seeds[2], seeds[3]) for ln in p.read_text(encoding="utf-8").split("\n") if ln]
    held = [ln for p in (seeds[1], seeds[4]) for ln in Path(p).read_text(encoding="utf-8").split("\n") if ln.strip()]
    ours = train_unigram(" ".join(lines), 1000)
    hf = Tokenizer(models.Unigram())
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=1000, special_tokens=["<unk>"], unk_token="<unk>", max_piece_length=16, show_progress=False
    )
    hf.train_from_iterator(lines, trainer=trainer)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=1000, model_type="unigram",
        character_coverage=1.0, normalization_rule_name="identity", remove_extra_whitespaces=False,
        split_by_unicode_script=False, split_by_number=False, max_sentence_length=1 << 20, minloglevel=2,
        bos_id=-1, eos_id=-1, num_threads=1,
    )  # fmt: skip
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    a = sum(len(ours.encode(ln)) for ln in held)
    b = sum(len(e.ids) for e in hf.encode_batch(held))
    c = sum(len(sp.encode(ln)) for ln in held)
    assert abs(a / c - 1) < 0.01, (a, c)
    assert abs(a / b - 1) < 0.05, (a, b)


@pytest.mark.parametrize("module", ["encoder", "model", "trainer", "trace", "seed", "lattice"])
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"bpe_core.unigram.{module}"))
    assert result.failed == 0


def test_hugging_face_json_export_and_import(trained):
    from bpe_core.formats.huggingface import unigram_from_hf_json, unigram_to_hf_json

    text = ENGLISH + " <s> " + PYTHON + "</s> ☃ Grüße, 東京 <unk> end"
    for view in (trained, trained.with_vocab_size(300), train_unigram(ENGLISH, 300, pattern="gpt2")):
        hf = Tokenizer.from_str(unigram_to_hf_json(view))
        enc = hf.encode(text)
        assert enc.ids == view.encode(text)
        expect = hf.decode(enc.ids, skip_special_tokens=False)
        if view.pattern_name == "sentencepiece":  # the unknown token's surface (see UnigramTokenizer.decode)
            expect = expect.replace("<unk>", "\u2047")
        assert view.decode(enc.ids) == expect
        back = unigram_from_hf_json(unigram_to_hf_json(view))
        assert back.encode(text) == view.encode(text) and back.scores == view.scores
    # a file trained by Hugging Face's own trainer
    hf = Tokenizer(models.Unigram())
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=["<pad>", "<unk>"], unk_token="<unk>")
    hf.train_from_iterator(ENGLISH.split("\n"), trainer=trainer)
    ours = unigram_from_hf_json(hf.to_str())
    assert ours.encode(text) == hf.encode(text).ids
    assert ours.special_tokens == {"<pad>": 0, "<unk>": 1} and ours.unknown_id == 1
    with pytest.raises(ValueError, match="not 'Unigram'"):
        unigram_from_hf_json({"model": {"type": "BPE"}})
    with pytest.raises(ValueError, match="normalizer"):
        unigram_from_hf_json({"model": {"type": "Unigram", "vocab": []}, "normalizer": {"type": "NFKC"}})
