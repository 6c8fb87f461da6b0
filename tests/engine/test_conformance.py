"""One conformance suite over every kind of tokenizer the app shows.

Kinds: a trained BPE and a trained WordPiece; every algorithm registered in
:data:`bpe_core.ALGORITHMS`, trained through its :class:`~bpe_core.TrainingSpec`
(so a new algorithm gets this whole suite by registering); the textbook BPE,
WordPiece and Unigram (:mod:`bpe_core.textbook`), trained on the same text; the production
encodings GPT-2, cl100k and o200k (from ``BPE_PLAYGROUND_ENCODINGS``); and
imported files: a ``tokenizer.json`` round trip of each trained kind, a
``.tiktoken`` + metadata round trip, and GPT-2's own ``r50k_base.tiktoken``.

Each must: answer the declared protocols; round-trip the built-in samples and
odd text; cut a text into spans that cover it exactly; emit ids in range with a
printable form; and, when trained here, give at ``with_vocab_size(k)`` exactly
what training to ``k`` gives, and survive ``save``/``load`` unchanged.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from bpe_core import (
    ALGORITHMS,
    EncodingUnavailable,
    Tokenizer,
    TrainedTokenizer,
    TrainingSpec,
    bpe_to_hf_json,
    bpe_to_tiktoken_files,
    load_encoding,
    load_tokenizer_bytes,
    train_bpe,
    train_wordpiece,
    wordpiece_to_hf_json,
)
from bpe_core.production.encodings import ENCODINGS_DIR_ENV
from bpe_core.textbook import bpe as textbook_bpe
from bpe_core.textbook import unigram_training
from bpe_core.textbook import wordpiece as textbook_wordpiece

ROOT = Path(__file__).resolve().parents[2]
EOT = "<|endoftext|>"
SAMPLES = {p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples").glob("*.txt"))}
TRAIN_TEXT = SAMPLES["english"] + EOT + SAMPLES["python"]
ODD_TEXTS = [
    "",
    " ",
    "\n\n\t  \r\n",
    "a",
    "x" * 500,
    "émoji 🦀🦀 and 中文, naïve café",
    "👩\u200d👩\u200d👧 family, e\u0301 combining, İstanbul ΣΑΣ",
    f"before{EOT}after {EOT}{EOT} end",
    "[UNK] [CLS] ## #hash ##tag",
    "<script>alert(1)</script> & \x00 \x7f",
    "1234567890 3.14159 2,000,000",
]
TRAIN_SIZE = 600
VIEW_SIZES_FROM_TOP = (1, 37, 150)  # views at max - d, checked against training to that size


@cache
def trained_bpe():
    return train_bpe(TRAIN_TEXT, TRAIN_SIZE, [EOT])


@cache
def trained_wordpiece():
    return train_wordpiece(TRAIN_TEXT, TRAIN_SIZE)


def spec_for(name: str, vocab_size: int = TRAIN_SIZE) -> TrainingSpec:
    algo = ALGORITHMS[name]
    return TrainingSpec(name, vocab_size, algo.default_pattern, algo.default_special_tokens)


@cache
def registered(name: str):
    return spec_for(name).train(TRAIN_TEXT)


@cache
def textbook(name: str):
    if name == "bpe":
        return textbook_bpe.BPE.train(TRAIN_TEXT, TRAIN_SIZE, "gpt2", [EOT])
    if name == "wordpiece":
        return textbook_wordpiece.WordPiece.train(TRAIN_TEXT, TRAIN_SIZE)
    return unigram_training.train(TRAIN_TEXT, TRAIN_SIZE)


@cache
def reference(name: str):
    try:
        return load_encoding(name)
    except EncodingUnavailable as exc:
        if os.environ.get("CI") or os.environ.get(ENCODINGS_DIR_ENV):
            raise
        pytest.skip(f"{name} unavailable here: {exc}")


@cache
def hf_round_trip(kind: str):
    tok = trained_bpe() if kind == "bpe" else trained_wordpiece()
    data = (bpe_to_hf_json(tok) if kind == "bpe" else wordpiece_to_hf_json(tok)).encode("utf-8")
    return load_tokenizer_bytes(data, f"{kind}-tokenizer.json")


@cache
def tiktoken_round_trip():
    ranks, meta = bpe_to_tiktoken_files(trained_bpe(), "conformance")
    return load_tokenizer_bytes(ranks, "conformance.tiktoken", meta=meta)


@cache
def r50k_file():
    folder = os.environ.get(ENCODINGS_DIR_ENV)
    path = Path(folder or "/nonexistent") / "r50k_base.tiktoken"
    if not path.is_file():
        if os.environ.get("CI"):
            raise FileNotFoundError(path)
        pytest.skip(f"no r50k_base.tiktoken in {ENCODINGS_DIR_ENV}")
    return load_tokenizer_bytes(path.read_bytes(), "r50k_base.tiktoken")


# kind -> (build, trained here: the text and spec it was trained with, or None)
KINDS = {
    "trained-bpe": (trained_bpe, ("bpe", TRAIN_TEXT)),
    "trained-wordpiece": (trained_wordpiece, ("wordpiece", TRAIN_TEXT)),
    **{f"registered-{n}": ((lambda n=n: registered(n)), (n, TRAIN_TEXT)) for n in ALGORITHMS},
    **{f"textbook-{n}": ((lambda n=n: textbook(n)), None) for n in ("bpe", "wordpiece", "unigram")},
    "reference-gpt2": ((lambda: reference("gpt2")), None),
    "reference-cl100k": ((lambda: reference("cl100k_base")), None),
    "reference-o200k": ((lambda: reference("o200k_base")), None),
    "import-hf-bpe": ((lambda: hf_round_trip("bpe")), None),
    "import-hf-wordpiece": ((lambda: hf_round_trip("wordpiece")), None),
    "import-tiktoken": (tiktoken_round_trip, None),
    "import-r50k-file": (r50k_file, None),
}
TRAINED = [k for k, (_b, t) in KINDS.items() if t is not None]
SAVABLE = [k for k in KINDS if not k.startswith(("reference-", "textbook-"))]


def texts() -> list[str]:
    return [*SAMPLES.values(), *ODD_TEXTS]


@pytest.fixture(params=list(KINDS))
def tok(request):
    return KINDS[request.param][0]()


def test_every_registered_algorithm_is_in_the_suite():
    assert {"bpe", "wordpiece"} <= set(ALGORITHMS)
    assert all(f"registered-{n}" in KINDS for n in ALGORITHMS)


def test_answers_the_declared_protocols(tok):
    assert isinstance(tok, Tokenizer)
    assert isinstance(tok.name, str) and tok.name
    assert isinstance(tok.vocab_size, int) and tok.vocab_size > 0
    assert isinstance(tok.is_byte_level, bool)
    assert tok.unknown_id is None or 0 <= tok.unknown_id < tok.vocab_size
    # vocab_size counts ids; cl100k's and o200k's special ids lie past it (their ids have gaps)
    assert all(isinstance(i, int) and i >= 0 for i in tok.special_tokens.values())
    if tok.is_byte_level:
        assert tok.unknown_id is None  # every text can be spelt in bytes


@pytest.mark.parametrize("kind", TRAINED)
def test_trained_kinds_answer_the_trained_protocol(kind):
    tok = KINDS[kind][0]()
    assert isinstance(tok, TrainedTokenizer)
    assert tok.algorithm == KINDS[kind][1][0]
    assert tok.min_vocab_size <= tok.vocab_size == tok.max_vocab_size
    assert len(tok.learned_tokens()) == len({i for _r, i in tok.learned_tokens()}) > 0
    assert tok.training_text_tokens() == len(tok.encode(TRAIN_TEXT))


def test_round_trips_samples_and_odd_text(tok):
    for text in texts():
        ids = tok.encode(text)
        back = tok.decode(ids)
        if tok.is_byte_level:
            assert back == text, text[:40]
        else:  # a normal form (spacing, case), which encodes to the same ids
            assert tok.encode(back) == ids, text[:40]


def test_spans_cover_the_text_exactly(tok):
    for text in texts():
        spans = tok.token_spans(text)
        assert [s.id for s in spans] == tok.encode(text), text[:40]
        pos = 0  # the text is covered up to here
        start = 0
        for s in spans:
            assert start <= s.start <= s.end <= len(text), text[:40]  # in text order
            if s.start < pos:  # only the pieces of one character share it (partial UTF-8, İ lower-cased)
                assert s.is_partial or spans[spans.index(s) - 1].is_partial, text[:40]
            gap = text[pos : s.start]
            assert gap == "" if tok.is_byte_level else gap.strip() == "", text[:40]  # whitespace only, if any
            start, pos = s.start, max(pos, s.end)
        assert pos == len(text) if tok.is_byte_level else text[pos:].strip() == "", text[:40]
        if tok.is_byte_level:  # the tokens hold exactly the text's UTF-8
            assert b"".join(s.token_bytes for s in spans) == text.encode("utf-8"), text[:40]


def test_ids_in_range_with_a_printable_form(tok):
    seen = set()
    for text in texts():
        seen.update(tok.encode(text))
    assert seen
    specials = set(tok.special_tokens.values())
    for i in sorted(seen):
        assert isinstance(i, int) and i >= 0 and (i < tok.vocab_size or i in specials)
        label = tok.describe_token(i)
        assert isinstance(label, str) and label != ""
        assert tok.token_bytes(i)


def test_bad_text_is_a_precise_error(tok):
    with pytest.raises(TypeError):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="surrogate"):
        tok.encode("a\udc00b")


@pytest.mark.parametrize("kind", TRAINED)
@pytest.mark.parametrize("down", VIEW_SIZES_FROM_TOP)
def test_views_equal_training_to_that_size(kind, down):
    full = KINDS[kind][0]()
    algorithm, text = KINDS[kind][1]
    k = max(full.min_vocab_size, full.max_vocab_size - down)
    view = full.with_vocab_size(k)
    assert view.vocab_size == k
    small = spec_for(algorithm, k).train(text)
    assert small.vocab_size == k
    assert small.vocab == view.vocab
    assert small.trace == view.trace  # every step's record, as values (merges; pruning rounds)
    assert small.learned_tokens() == view.learned_tokens()
    for t in texts():
        assert small.encode(t) == view.encode(t), t[:40]
    assert small.training_text_tokens() == view.training_text_tokens() == len(view.encode(text))


@pytest.mark.parametrize("kind", TRAINED)
def test_the_full_size_of_any_view_is_the_full_tokenizer_however_many_sizes_were_seen(kind):
    """Per-tokenizer memos (the live view's payloads and totals) key on the full tokenizer: it must not change."""
    from bpe_core.persistence import MAX_VIEWS

    full = KINDS[kind][0]()
    sizes = range(full.min_vocab_size, full.max_vocab_size)
    assert len(sizes) > 2 * MAX_VIEWS, "too few sizes to evict views"
    for k in list(sizes)[: 2 * MAX_VIEWS + 1]:
        view = full.with_vocab_size(k)
        assert view.with_vocab_size(full.max_vocab_size) is full
    assert view.with_vocab_size(view.vocab_size) is view and full.with_vocab_size(full.vocab_size) is full


@pytest.mark.parametrize("kind", SAVABLE)
def test_save_load_identity(kind, tmp_path):
    tok = KINDS[kind][0]()
    views = [tok]
    if isinstance(tok, TrainedTokenizer) and tok.max_vocab_size > tok.min_vocab_size:
        views.append(tok.with_vocab_size((tok.min_vocab_size + tok.max_vocab_size) // 2))
    for v in views:
        path = tmp_path / f"{kind}-{v.vocab_size}.json"
        v.save(path)
        loaded = type(v).load(path)
        assert loaded.to_dict() == v.to_dict()
        assert ALGORITHMS[v.algorithm].from_dict(v.to_dict()).to_dict() == v.to_dict()
        for t in texts():
            assert loaded.encode(t) == v.encode(t), t[:40]
        assert load_tokenizer_bytes(path.read_bytes(), path.name).to_dict() == v.to_dict()
