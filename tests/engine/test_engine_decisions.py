"""The decisions the pages used to make themselves, now in the engine.

* :func:`bpe_core.analysis.metrics.measure` picks ids (byte-level) or spans (WordPiece)
  and must give exactly the span-based :func:`~bpe_core.analysis.metrics.compute_metrics`;
* :func:`bpe_core.analysis.metrics.compression_curve` must give exactly the token count
  of encoding the text at each size;
* ``BPETokenizer.fast_encoder()`` (tiktoken) must give ``encode()``'s ids
  whenever it is offered, and be refused where tiktoken could differ.
"""

from __future__ import annotations

import pytest

from bpe_core import BPETokenizer, load_encoding, train_bpe, train_wordpiece
from bpe_core.analysis.metrics import compression_curve, compute_metrics, measure
from tests.conftest import sample, stdlib_code

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def bpe():
    return train_bpe(sample("english") + EOT + sample("python"), 700, [EOT])


@pytest.fixture(scope="module")
def wordpiece():
    return train_wordpiece(sample("english"), 500)


def other_texts() -> list[str]:
    return [sample("multilingual"), sample("numbers"), stdlib_code()[:20_000], "x" * 300 + " 🦀 " + EOT + " end"]


def test_measure_equals_span_metrics_for_every_kind(bpe, wordpiece):
    tokenizers = [bpe, bpe.with_vocab_size(400), wordpiece, wordpiece.with_vocab_size(wordpiece.min_vocab_size + 20)]
    tokenizers.append(load_encoding("gpt2"))
    for tok in tokenizers:
        for text in [*other_texts(), sample("english")]:
            expected = compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id)
            assert measure(tok, text) == expected, (tok.name, text[:40])
            assert measure(tok, text, chunk_chars=2_000) == expected, (tok.name, text[:40])


def test_measure_counts_unknown_words_of_a_wordpiece(wordpiece):
    text = sample("multilingual")  # scripts the English-trained vocabulary cannot spell
    m = measure(wordpiece, text)
    unknown = sum(1 for s in wordpiece.token_spans(text) if s.id == wordpiece.unknown_id)
    assert unknown > 0
    assert m == compute_metrics(text, wordpiece.token_spans(text), wordpiece.vocab_size, wordpiece.unknown_id)


def test_measure_byte_level_path_uses_the_fast_encoder(bpe):
    view = bpe.with_vocab_size(bpe.vocab_size - 1)
    real = view.fast_encoder()
    assert real is not None
    calls = []

    def counted(text):
        calls.append(len(text))
        return real(text)

    view.fast_encoder = lambda: counted  # the instance's own answer, for this test only
    text = sample("english")
    assert measure(view, text) == compute_metrics(text, view.token_spans(text), view.vocab_size)
    assert sum(calls) == len(text)


@pytest.mark.parametrize("kind", ["bpe", "wordpiece"])
def test_compression_curve_equals_encoding_at_each_size(kind, bpe, wordpiece):
    tok = bpe if kind == "bpe" else wordpiece
    training_text = sample("english") + EOT + sample("python") if kind == "bpe" else sample("english")
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    sizes = sorted({lo, lo + 1, (lo + hi) // 2, hi - 1, hi})
    on_training = compression_curve(tok, training_text, sizes, on_training_text=True)
    assert on_training == [len(tok.with_vocab_size(n).encode(training_text)) for n in sizes]
    other = sample("multilingual")
    assert compression_curve(tok, other, sizes) == [len(tok.with_vocab_size(n).encode(other)) for n in sizes]
    assert on_training[0] > on_training[-1]  # merges shorten the text


def test_compression_curve_rejects_a_size_out_of_range(bpe):
    with pytest.raises(ValueError, match="out of range"):
        compression_curve(bpe, "text", [bpe.max_vocab_size + 1])


def test_fast_encoder_gives_encode_ids_on_real_text(bpe):
    for tok in (bpe, bpe.with_vocab_size(300), train_bpe(sample("english"), 600, [EOT], "cl100k")):
        fast = tok.fast_encoder()
        assert fast is not None and tok.tiktoken_exact()
        for text in [*other_texts(), sample("english"), sample("python")]:
            assert fast(text) == tok.encode(text)


def test_fast_encoder_is_refused_where_tiktoken_could_differ():
    text = sample("english")
    assert train_bpe(text, 400, [EOT], r"\S+|\s+").fast_encoder() is None  # a custom pattern
    assert train_bpe(text, 400, ["<s>", "<s>x"]).fast_encoder() is None  # a special token prefixes another
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"ab"}
    dup = BPETokenizer.from_parts(
        vocab=vocab, merges=[(97, 98, 256), (97, 98, 257)], special_tokens={}, pattern="gpt2", name="dup"
    )
    assert dup.fast_encoder() is None  # two tokens with the same bytes
    assert train_wordpiece(text, 300).fast_encoder() is None
