"""Unigram against SentencePiece itself: the seed, the EM step, the encoder; what differs on purpose.

The oracle is the ``sentencepiece`` package (0.2.3, pinned), given the
sentences our trainer sees (:func:`sp_sentences`: the stretches of text
between special tokens, the first with the ``▁`` SentencePiece puts in front
of a text) and comparable settings (:data:`SP_SETTINGS`).  SentencePiece does
not print its seed, so the seed is compared in two ways that both go through
SentencePiece's own code:

* the number of seed pieces it logs (``Initialized N seed pieces``);
* SentencePiece trained from its own seed and trained from ours (its
  ``seed_sentencepieces_file``, the same pieces and frequencies) give the same
  model, vocabulary size unbounded and one EM iteration, so that every seed
  piece and every frequency moves the result (a frequency off by one moves
  scores by 0.2, one piece missing by 0.03; equal seeds agree to 1e-6, the
  float order of the two paths' sums).

SentencePiece's Python binding strips a sentence's trailing ``\\r`` and
``\\n``, and the seed file is tab-separated lines, so texts are given to
both trainers with ``\\n``, ``\\r`` and ``\\t`` renamed to ASCII characters
they lack (:func:`_sp_safe`): the seed treats every character alike, and
ASCII for ASCII keeps the first bytes apart.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2 as pb

from bpe_core.pretokenize import split_special
from bpe_core.unigram import UnigramTokenizer, train_unigram
from bpe_core.unigram.lattice import Lattices
from bpe_core.unigram.seed import seed_pieces
from bpe_core.unigram.trainer import count_sentences, digamma
from tests.conftest import SEEDS, sample

SP_SETTINGS = dict(
    model_type="unigram", character_coverage=1.0, normalization_rule_name="identity",
    remove_extra_whitespaces=False, add_dummy_prefix=False, split_by_unicode_script=False, split_by_number=False,
    max_sentencepiece_length=16, max_sentence_length=1 << 30, bos_id=-1, eos_id=-1, unk_id=0, num_threads=1,
    hard_vocab_limit=False, seed_sentencepiece_size=1_000_000,
)  # fmt: skip
"""SentencePiece's settings comparable to ours: every character kept, no normalisation, no script or digit
rule, our words (``add_dummy_prefix`` off: :func:`sp_sentences` puts the ``▁`` in front of the text)."""

BIG = 1_000_000  # a vocabulary size SentencePiece never cuts to


def sp_sentences(text: str, specials: tuple[str, ...] = ()) -> list[str]:
    """The sentences SentencePiece is given for ``text``: its stretches between special tokens, the first
    (when the text starts with one) with the ``▁`` put in front of the text."""
    out = []
    for k, (segment, is_special) in enumerate(split_special(text, specials)):
        if not is_special:
            out.append(("\u2581" if k == 0 else "") + segment)
    return out


def sp_train(sentences: list[str], vocab_size: int = BIG, iters: int = 1, **extra) -> tuple[dict[str, float], str]:
    """``({piece: score}, log)`` of SentencePiece trained on ``sentences`` (the unknown piece left out)."""
    model = io.BytesIO()
    opts = {**SP_SETTINGS, "num_sub_iterations": iters, **extra}
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)  # SentencePiece logs from C++ to the process's stderr
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(sentences), model_writer=model, vocab_size=vocab_size, minloglevel=0, **opts
            )
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        log = err.read().decode("utf-8", "replace")
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    return {sp.id_to_piece(i): sp.get_score(i) for i in range(sp.get_piece_size()) if not sp.is_unknown(i)}, log


def our_seed(text: str, specials: tuple[str, ...] = (), max_len: int = 16, seed_size: int = 1_000_000):
    """Our seed of ``text`` (the trainer's words and sentence ends)."""
    counted = count_sentences(text, special_tokens=(*specials, "<unk>"))
    words = list(counted.counts)
    counts = np.array([counted.counts[w] for w in words], dtype=np.float64)
    return seed_pieces(words, counts, max_len, seed_size, counted.ends), words, counts


def _sp_safe(text: str) -> str:
    """``text`` with ``\\n``, ``\\r`` and ``\\t`` renamed to ASCII characters it lacks (see the module docstring)."""
    spare = [c for c in "\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15" if c not in text]
    return text.replace("\n", spare[0]).replace("\r", spare[1]).replace("\t", spare[2])


def check_seed(text: str, specials: tuple[str, ...] = ()) -> int:
    """Assert that our seed of ``text`` is SentencePiece's (see the module docstring); returns its size."""
    safe = _sp_safe(text)
    seed, _, _ = our_seed(safe, specials)
    sentences = sp_sentences(safe, specials)
    own, log = sp_train(sentences)
    logged = int(re.search(r"Initialized (\d+) seed pieces", log).group(1))
    assert logged == len(seed.pieces)
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8") as f:
        for p, freq in zip(seed.pieces[seed.n_chars :], seed.freqs[seed.n_chars :]):
            f.write(f"{p}\t{int(freq)}\n")
    try:
        ours, _ = sp_train(sentences, seed_sentencepieces_file=f.name)
    finally:
        Path(f.name).unlink()
    assert ours.keys() == own.keys()
    assert max(abs(ours[p] - own[p]) for p in own) < 1e-5
    return len(seed.pieces)


# ---------------------------------------------------------------------------
# the seed


def test_seed_of_the_sentencepiece_rules_on_crafted_sentences():
    """Each rule of the module docstring of bpe_core.unigram.seed on a sentence built for it, and SentencePiece."""
    seed, _, _ = our_seed("hug hug hug pug pug hugs")
    found = {p: int(f) for p, f in zip(seed.pieces, seed.freqs) if len(p) > 1}
    # "▁hug" and "ug" are followed by "s" and by the next word's "▁"; "▁pug" only by "▁": no interval
    assert found == {"▁hug": 4, "hug": 4, "ug": 6}
    check_seed("hug hug hug pug pug hugs")
    # "ab" ends three sentences, two of them followed by "▁" and the last by nothing: the interval "ab" + boundary
    # adds 3 to the 5 occurrences ("ab" is also followed by "▁" and the boundary: an interval of its own)
    text = "xab ab<s> yab<s> zab qq<s> ab"
    seed, _, _ = our_seed(text, ("<s>",))
    assert dict(zip(seed.pieces, seed.freqs.tolist()))["ab"] == 8
    check_seed(text, ("<s>",))
    # "é" and "è" share their first byte (C3): "xé", "xè" and "xa" make "x" + one first byte... "ax" is followed
    # by C3 only, so it is no interval (a character-level suffix tree would have it)
    text = "axé axè axé axè bx by"
    seed, _, _ = our_seed(text)
    assert "ax" not in seed.pieces and "▁ax" not in seed.pieces and "x" in seed.pieces
    check_seed(text)


@pytest.mark.parametrize("name", ["english", "multilingual", "python", "numbers"])
def test_seed_equals_sentencepiece_on_the_samples(name):
    text = sample(name)
    assert check_seed(text) > 300


def test_seed_equals_sentencepiece_on_lines_with_special_tokens():
    """The seed articles, one sentence per line (lines joined by a special token), multilingual lines added."""
    lines = [ln for p in sorted(SEEDS.glob("00*.txt")) for ln in p.read_text(encoding="utf-8").split("\n") if ln]
    lines += [ln for ln in sample("multilingual").split("\n") if ln]
    assert check_seed("<s>".join(lines[:400]), ("<s>",)) > 3000


def test_seed_size_keeps_sentencepiece_s_best():
    """``seed_size`` keeps the best substrings in SentencePiece's order (score, UTF-8 length, bytes)."""
    text = sample("english")
    full, _, _ = our_seed(text)
    for size in (1, 7, 100, 333):
        cut, _, _ = our_seed(text, seed_size=size)
        assert cut.pieces == full.pieces[: full.n_chars + size]
        _, log = sp_train(sp_sentences(text), seed_sentencepiece_size=size)
        assert f"Initialized {full.n_chars + size} seed pieces" in log


_ALPHABET = ["a", "b", "c", "ab", "é", "è", "ü", "日", "本", "🙂", " ", "  ", "\n", "\t", ".", "<s>", "▁"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=60))
def test_seed_equals_sentencepiece_on_random_corpora(parts):
    text = "".join(parts)
    if not sp_sentences(text, ("<s>",)):
        return  # only special tokens: nothing to train on
    check_seed(text, ("<s>",))


# ---------------------------------------------------------------------------
# the first EM step


@pytest.mark.parametrize("name", ["english", "multilingual"])
def test_first_em_step_equals_sentencepiece(name):
    """The seed's initial scores, one forward-backward and the digamma M-step give SentencePiece's scores.

    SentencePiece keeps pieces with expected count >= 0.5 (their expected counts make the M-step's sum), and
    then drops those no Viterbi path uses; every piece it keeps has the score computed here (float32 there),
    and it gives the characters it dropped back at the end with the lowest score (those are left out here).
    """
    text = _sp_safe(sample(name))
    seed, _, counts = our_seed(text)
    expected, _ = Lattices(seed.lens, seed.arcs).forward_backward(seed.scores, counts)
    kept = expected >= 0.5
    scores = digamma(expected) - digamma(np.array([expected[kept].sum()]))[0]
    sp, _ = sp_train(sp_sentences(text))
    index = {p: i for i, p in enumerate(seed.pieces)}
    assert len(sp) > 200 and all(kept[index[p]] or len(p) == 1 for p in sp)
    lowest = min(sp.values())
    compared = [(p, s) for p, s in sp.items() if kept[index[p]] and (len(p) > 1 or s > lowest + 1e-3)]
    assert len(compared) > 0.9 * len(sp)
    diffs = np.array([abs(scores[index[p]] - s) for p, s in compared])
    # SentencePiece sums its lattices in float32: a long word's marginals drift by up to ~2e-4 (in CJK text)
    assert diffs.max() < 1e-3 and np.median(diffs) < 1e-5


# ---------------------------------------------------------------------------
# encoding


def sp_processor(tok: UnigramTokenizer) -> spm.SentencePieceProcessor:
    """SentencePiece's encoder holding ``tok``'s pieces and scores (our words: ``add_dummy_prefix`` on)."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["a b"]), model_writer=model, vocab_size=5, minloglevel=2,
        **{**SP_SETTINGS, "hard_vocab_limit": False},
    )  # fmt: skip
    proto = pb.ModelProto.FromString(model.getvalue())
    del proto.pieces[:]
    for i, (p, s) in enumerate(zip(tok.pieces[: tok.vocab_size], tok.scores)):
        unknown = i == tok.unknown_id
        proto.pieces.add(piece=p, score=s, type=pb.ModelProto.SentencePiece.UNKNOWN if unknown else 1)
    proto.normalizer_spec.add_dummy_prefix = True
    return spm.SentencePieceProcessor(model_proto=proto.SerializeToString())


@pytest.fixture(scope="module")
def trained() -> UnigramTokenizer:
    return train_unigram(sample("english") + "\n" + sample("multilingual"), 900)


_PROBES = ["Hello world", "  two leading spaces", " one", "tail space ", "x", "", "   ", "naïve café déjà vu",
           "日本語のテキスト", "emoji 🙂🙂 here", "line\nbreak\r\nand\ttab",
           "Tokenization of unknown ☃ snowmen"]  # fmt: skip


def test_ids_equal_sentencepiece_encoder_with_our_pieces(trained):
    sp = sp_processor(trained)
    for view in (trained, trained.with_vocab_size(500), trained.with_vocab_size(trained.min_vocab_size)):
        sp = sp_processor(view)
        for text in [*_PROBES, *sample("english").split("\n")[:40], *sample("python").split("\n")[:40]]:
            assert view.encode(text) == sp.encode(text), text
            if view.unknown_id not in view.encode(text):
                assert view.decode(view.encode(text)) == text == sp.decode(sp.encode(text))


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from("abcdeéè日本 \n\t.,▁🙂"), max_size=40))
def test_ids_equal_sentencepiece_encoder_on_random_texts(trained, text):
    sp = sp_processor(trained)
    assert trained.encode(text) == sp.encode(text)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["hug", "pug", " ", "  ", "<sep>", "s", "\n", "é", "日"]), max_size=20))
def test_round_trip_with_special_tokens_anywhere(parts):
    """``decode(encode(t)) == t`` for every text the vocabulary can spell, special tokens anywhere."""
    tok = _ROUND_TRIP
    text = "".join(parts)
    ids = tok.encode(text)
    assert tok.unknown_id not in ids and tok.decode(ids) == text
    spans = tok.token_spans(text)
    assert [s.id for s in spans] == ids and "".join(text[s.start : s.end] for s in spans) == text


_ROUND_TRIP = train_unigram("hug pug hugs pugs<sep> hug\n é 日 s" * 5, 30, special_tokens=["<sep>"])


def test_special_token_does_not_start_a_word():
    tok = train_unigram(sample("english"), 400, special_tokens=["<sep>"])
    a, b = tok.encode("<sep>world"), tok.encode("<sep> world")
    assert a != b and tok.decode(a) == "<sep>world" and tok.decode(b) == "<sep> world"
    assert tok.encode("hello") != tok.encode(" hello") and tok.decode(tok.encode(" hello")) == " hello"


# ---------------------------------------------------------------------------
# the input kinds


def test_file_str_and_iterable_give_the_same_model_carriage_returns_kept(tmp_path):
    text = sample("english").replace("\n", "\r\n") + "\ufeff and a byte-order mark inside"
    path = tmp_path / "crlf.txt"
    path.write_bytes(("\ufeff" + text).encode("utf-8"))
    full = "\ufeff" + text
    a = train_unigram(full, 300)
    b = train_unigram(path, 300)
    c = train_unigram(iter(full.splitlines(keepends=True)), 300)
    assert a.to_dict() | {"training": None} == b.to_dict() | {"training": None} == c.to_dict() | {"training": None}
    assert "\r" in a.pieces and a.unknown_id not in a.encode(full) and a.decode(a.encode(full)) == full


# ---------------------------------------------------------------------------
# what differs from SentencePiece on purpose


def test_documented_differences_from_sentencepiece():
    """The differences the trainer's docstring lists (bpe_core.unigram.trainer), each shown."""
    text = sample("english")
    tok = train_unigram(text, 600)
    # the schedule: 10 % of the vocabulary per round (every unused piece too), down to the characters
    assert tok.state_sizes[-1] == tok.min_vocab_size
    assert all(r.n_removed == max(1, int(0.1 * r.size_before)) for r in tok.trace[1:-1] if min(r.loss_increase) > 0)
    # the M-step keeps every piece: SentencePiece's first EM step drops pieces that ours keeps (with low scores)
    seed, _, _ = our_seed(_sp_safe(text))
    sp, _ = sp_train(sp_sentences(_sp_safe(text)))
    assert len(sp) < len(seed.pieces) and set(sp) <= set(seed.pieces)
    # sentences and characters: a newline is a character inside a word; U+0000 and U+001F are characters
    assert count_sentences("one\ntwo three").counts == {"▁one\ntwo": 1, "▁three": 1}
    seed, _, _ = our_seed("a\x00b a\x00b a\x1fb a\x1fb")
    sp, _ = sp_train(sp_sentences("a\x00b a\x00b a\x1fb a\x1fb"))
    assert {"\x00", "\x1f"} <= set(seed.pieces) and not any(c in p for p in sp for c in "\x00\x1f")
    # no script or digit rule: pieces mixing letters with punctuation or digits (SentencePiece's defaults forbid)
    assert any(p[-1] in ".," and p[:-1].strip("\u2581").isalpha() for p in tok.pieces[: tok.vocab_size])
    # a text that starts with a special token: no "▁" in front of it (SentencePiece's first token is "▁")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text.split("\n")), model_writer=model, vocab_size=300, user_defined_symbols=["<sep>"],
        minloglevel=2, **{**SP_SETTINGS, "add_dummy_prefix": True, "hard_vocab_limit": True},
    )  # fmt: skip
    sep_sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    assert sep_sp.encode("<sep>x", out_type=str)[:2] == ["\u2581", "<sep>"]
    sep = train_unigram(text, 300, special_tokens=["<sep>"])
    assert sep.describe_token(sep.encode("<sep>x")[0]) == "<sep>"
