"""Corpus figures by distinct pieces equal the whole text's figures, for every registered tokenizer.

The expectation is the textbook: :func:`bpe_core.analysis.metrics.compute_metrics` on
``tok.token_spans(text)`` of the whole text (one call, no units, no pieces, no
counting), with the per-script figures of :func:`bpe_core.analysis.scripts.script_breakdown`.
The tokenizers: every production tokenizer of the registry that loads here, the trained
BPE (each named pattern that splits at spaces), WordPiece (plain and lower-casing) and
Unigram (plain and with byte fallback), and each of them imported back from the files the
export writes (Hugging Face ``tokenizer.json``, tiktoken ranks, BERT ``vocab.txt``).
The texts: real ones (English, multilingual, code, the seeds) and adversarial ones
(whitespace of every kind, combining marks at piece starts, special-token strings glued
to words, ``▁`` written in the text, ZWJ emoji, characters lower-casing expands).
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core.analysis.corpus import (
    _decoded,
    _machine_of,
    _pack,
    compare_corpus,
    count_pieces,
    count_splits,
    count_units,
    measure_corpus,
    text_units,
    unit_cut_table,
)
from bpe_core.analysis.metrics import TextMetrics, compute_metrics
from bpe_core.analysis.scripts import INHERITED, SCRIPT_GROUPS, char_group, char_group_table
from bpe_core.formats.bert import wordpiece_to_vocab_txt
from bpe_core.formats.huggingface import to_hf_json
from bpe_core.formats.tiktoken import bpe_to_tiktoken_files
from bpe_core.formats.upload import load_tokenizer_bytes
from bpe_core.interface import TrainingCancelled, TrainingSpec, algorithm_names, corpus_pieces
from bpe_core.pieces import PackedPieces, pack_utf8
from bpe_core.production.registry import PRODUCTION, load_production
from tests.conftest import sample, seed_text, stdlib_code

EOT = "<|endoftext|>"
WP_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "a",
    " lead and trail  ",
    "  Hello,  world!\n\n  don't DON'T 's' 'll\t\tx\r\n\r\ny "
    "\u00a0z \x0bq \x85r \u3000w é e\u0301 \u0301x \u0301 \u0301\u0302",
    "👩\u200d👩\u200d👧 中文字 日本語のテキスト 한국어 ▁a ▁ ▁▁b ▁▁ x▁y a ▁",
    f"{EOT}x{EOT} {EOT}  {EOT}\n{EOT}word{EOT}. <|endoftext|",
    "≠ İstanbul ΣΑΣ ǅemal ß ﬁn 1234567 3.14 1,000,000 ١٢٣ x²",
    "[CLS] [UNK] [SEP]x [MASK]. <unk> <s> </s> [PAD][PAD]",
    "tab\tseparated\tcolumns\n\tindented\n    spaces\n\n\n\ttrailing \t\n",
    "\x00\x01 control\x7f chars\u200b zero\u200dwidth \ufeffbom \ufffd",
    "words, with, commas. And (parentheses) [brackets] {braces} -- dashes... 'quotes' \"double\"",
    "\U00010940 \U0001fae8 \U000e0041 emoji tags \U0001f1fa\U0001f1f8 flags 🏳️\u200d🌈",
    "a" * 300 + " " + "b" * 5 + "  " * 40 + "c",
]


def real_texts() -> list[str]:
    return [
        sample("english")[:12_000],
        sample("multilingual"),
        stdlib_code()[:8_000],
        seed_text()[:10_000],
        sample("numbers")[:4_000] + f"\n{EOT}\n" + sample("python")[:4_000],
    ]


def trained_tokenizers() -> list:
    text = sample("english") + sample("multilingual") + stdlib_code()[:10_000]
    out = [TrainingSpec("bpe", 700, pattern=p, special_tokens=(EOT,)).train(text) for p in ("gpt2", "cl100k", "o200k")]
    out += [TrainingSpec("bpe", 600, pattern=p).train(text) for p in ("sentencepiece", "bert")]
    out += [
        TrainingSpec("wordpiece", 1200, special_tokens=WP_SPECIALS).train(text),
        TrainingSpec("wordpiece", 1200, special_tokens=WP_SPECIALS, lowercase=True).train(text),
        TrainingSpec("unigram", 900, pattern="sentencepiece", special_tokens=("<unk>",)).train(text),
        TrainingSpec(
            "unigram", 400, pattern="sentencepiece", special_tokens=("<unk>", "<s>"), byte_fallback=True
        ).train(sample("english")),
    ]
    return out


def imported_tokenizers(trained: list) -> list:
    out = []
    for tok in trained:
        out.append(load_tokenizer_bytes(to_hf_json(tok).encode("utf-8"), "tokenizer.json"))
    bpe = trained[0]
    ranks, meta = bpe_to_tiktoken_files(bpe, "mine")
    out.append(load_tokenizer_bytes(ranks, "mine.tiktoken", meta))
    wordpiece = next(t for t in trained if t.algorithm == "wordpiece")
    out.append(load_tokenizer_bytes(wordpiece_to_vocab_txt(wordpiece), "vocab.txt"))
    return out


@pytest.fixture(scope="module")
def tokenizers() -> list:
    """Every production tokenizer of the registry, every registered algorithm trained, each trained one imported."""
    out = [load_production(key) for key in PRODUCTION]
    trained = trained_tokenizers()
    # (a test elsewhere may register its own toy algorithm; every one of the package is trained here)
    assert {t.algorithm for t in trained} >= set(algorithm_names()) - {"toy"}, "an algorithm is not trained here"
    return out + trained + imported_tokenizers(trained)


def assert_same(got: TextMetrics, want: TextMetrics, name: str) -> None:
    """Every figure equal; the per-script token shares up to float rounding (they are sums of fractions)."""
    for f in TextMetrics.__dataclass_fields__:
        a, b = getattr(got, f), getattr(want, f)
        if f == "scripts":
            assert [(r.group, r.characters) for r in a] == [(r.group, r.characters) for r in b], name
            for r, q in zip(a, b, strict=True):
                assert math.isclose(r.tokens, q.tokens, rel_tol=1e-9, abs_tol=1e-9), (name, r, q)
        else:
            assert a == b, (name, f, a, b)


def whole_text(tok, text: str) -> TextMetrics:
    return compute_metrics(text, tok.token_spans(text), tok.vocab_size, tok.unknown_id, scripts=True)


def test_every_tokenizer_declares_its_pieces(tokenizers):
    assert len(tokenizers) >= len(PRODUCTION) + 9 + 11
    for tok in tokenizers:
        assert corpus_pieces(tok) is not None, tok.name


@pytest.mark.parametrize("kind", ["real", "adversarial"])
def test_figures_by_distinct_pieces_equal_the_whole_texts(tokenizers, kind):
    texts = real_texts() if kind == "real" else [*ADVERSARIAL, "\n".join(ADVERSARIAL) * 3]
    for text in texts:
        got = measure_corpus(text, tokenizers)
        for tok, m in zip(tokenizers, got, strict=True):
            assert_same(m, whole_text(tok, text), tok.name)


ALPHABET = (
    "aAzZsStT'’ \t\n\r\x0b\x0c\x85\u00a0\u3000\u2581▁09٣½.,;:!?/\\-_()[]{}<>=+$^`|~\"#%&*@"
    "éÉßǅ\u0301\u0308\u064b中文日本語한국어ابجกขαβΓжЖ😀👩\u200d\ufe0f\x00\x01\x03\x7f\u200b\ufffdﬁİ"
)
PIECES = (EOT, "[CLS]", "[UNK]", "<unk>", "<s>", "</s>", "<|im_start|>", "<bos>", "don't", "  ", "\n\n", "> </")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.text(alphabet=ALPHABET, max_size=12), st.sampled_from(PIECES)), max_size=14))
def test_random_texts_of_hard_characters_and_special_tokens(tokenizers, parts):
    text = "".join(parts)
    for tok, m in zip(tokenizers, measure_corpus(text, tokenizers), strict=True):
        assert_same(m, whole_text(tok, text), tok.name)


def test_files_and_directories_are_documents_measured_alone(tokenizers, tmp_path):
    docs = [sample("english"), " starts with a space\n\n", ADVERSARIAL[5], sample("multilingual"), "", "x"]
    (tmp_path / "sub").mkdir()
    paths = [tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "sub" / "c.txt"]
    paths += [tmp_path / "sub" / "d.txt", tmp_path / "e.txt", tmp_path / "f.txt"]
    for p, d in zip(paths, docs, strict=True):
        p.write_text(d, encoding="utf-8")
    picked = tokenizers[:: max(1, len(tokenizers) // 8)]
    got = measure_corpus([tmp_path], picked, files=True)
    for tok, m in zip(picked, got, strict=True):
        parts = [whole_text(tok, d) for d in sorted(docs, key=lambda d: str(paths[docs.index(d)]))]
        assert m.tokens == sum(p.tokens for p in parts), tok.name
        assert m.words == sum(p.words for p in parts)
        assert m.words_split == sum(p.words_split for p in parts)
        assert m.characters == sum(p.characters for p in parts)
        ids = {s.id for d in docs for s in tok.token_spans(d)}
        assert m.distinct_tokens == len(ids)


def test_a_pattern_not_known_to_split_at_spaces_is_measured_on_the_whole_text():
    text = sample("english")
    custom = TrainingSpec("bpe", 400, pattern=r"\S+\s*").train(text)
    lines = TrainingSpec("bpe", 400, pattern="none").train(text)
    spaced = TrainingSpec("bpe", 300, special_tokens=("end of text",)).train(text)
    assert corpus_pieces(custom) is None and corpus_pieces(lines) is None
    probe = text[:3000] + " end of text " + ADVERSARIAL[5]
    for tok, m in zip((custom, lines, spaced), measure_corpus(probe, [custom, lines, spaced]), strict=True):
        assert_same(m, whole_text(tok, probe), tok.name)


def test_the_compiled_pre_tokenizer_counts_the_pieces_the_textbook_split_counts(tokenizers):
    """Every production split the compiled pre-tokenizer runs: the same distinct pieces, counts and refs.

    Its machines (GPT-2, cl100k, o200k, Llama 3, Tekken, Qwen's normal-form
    units) and its programs (DeepSeek's and Falcon's split sequences, Mistral v1's pattern).
    """
    text = "\n".join(ADVERSARIAL) + " " + sample("multilingual") + stdlib_code()[:5_000] + f" a{EOT}b {EOT}. "
    text += " Ame\u0301lie cafe\u0301 \u212b x\u0301y 가\u1161 한국어 "  # not in NFC: Qwen keeps these units whole
    # Gemma 4's crossing token '>▁</' (no cut inside it) written with a space or a ▁, next to its added tokens
    text += "<p> </p> a>▁</b x>  </y > </ >▁< <bos> </x> <eos>▁</b> a> <eos> >▁</ > </\n</ "
    splits = {p.key: p for p in map(corpus_pieces, tokenizers) if p is not None and _machine_of(p) is not None}
    units = count_units(text, unit_cut_table(splits.values()))
    for key, split in splits.items():
        fast, slow = count_pieces(units, split), count_pieces(units, split, compiled=False)
        got = {(p, bool(f)): int(c) for p, f, c in zip(fast.pieces, fast.first, fast.counts, strict=True)}
        want = {(p, bool(f)): int(c) for p, f, c in zip(slow.pieces, slow.first, slow.counts, strict=True)}
        assert got == want, key[:2]
        assert [fast.pieces[r] for r in fast.refs] == [slow.pieces[r] for r in slow.refs], key[:2]
        assert np.array_equal(fast.unit_offsets, slow.unit_offsets)
        assert_packed_as_strings(fast.pieces)
    kinds = Counter(key[0] for key in splits)
    assert kinds["pre-tokens"] >= 6 and kinds["split-sequence"] >= 4 and kinds["normal pre-tokens"] >= 2, kinds
    assert {type(_machine_of(p)[0]).__name__ for p in splits.values()} == {"Machine", "Program"}
    python = [t.name for t in tokenizers[: len(PRODUCTION)] if _machine_of(corpus_pieces(t)) is None]
    assert sorted(python) == sorted(load_production(k).name for k in ("bert", "xlmr")), python  # WordPiece, Unigram


def assert_packed_as_strings(pieces: PackedPieces) -> None:
    """The UTF-8 the encoders read off the counted pieces (:func:`pack_utf8`) is their strings' own."""
    data, offsets = pack_utf8(list(pieces))  # a plain list: packed from the strings
    carried = pack_utf8(pieces)
    assert isinstance(pieces, PackedPieces) and carried[0] is pieces.data
    assert bytes(carried[0]) == bytes(data) and carried[1].tolist() == offsets.tolist()


def test_pieces_decoded_at_once_equal_each_piece_decoded():
    """:func:`_decoded` (one decode split at NULs) against decoding each piece, NULs in pieces included."""
    for pieces in (["a", " b", "中文", "", "😀x"], ["a\x00", "\x00", " b", "\x00\x00c"], [], [""]):
        data, offsets = _pack(pieces)
        joined = np.frombuffer(b"".join(p.encode() + b"\0" for p in pieces), dtype=np.uint8)
        assert _decoded(data, offsets, joined) == pieces


@pytest.mark.parametrize("with_specials", [False, True])
def test_splits_counted_together_equal_each_split_counted_alone(tokenizers, with_specials):
    """:func:`count_splits` (shared counts, two threads) gives each split the textbook count of its own pieces.

    o200k and gpt-oss (o200k_harmony) share a pattern and differ in special tokens: they share
    one count while the text holds none of them, and are counted apart once it holds ``<|start|>``
    (a gpt-oss special token, plain text to o200k).
    """
    text = sample("multilingual") + " " + sample("english") + " don't  stop\n\n  x "
    if with_specials:
        text += f" a<|start|>b {EOT} <|start|>. "
    splits = [p for p in map(corpus_pieces, tokenizers) if p is not None]
    units = count_units(text, unit_cut_table(splits))
    counted = count_splits(units, splits, num_workers=2)
    assert set(counted) == {p.key for p in splits}
    for split in splits:
        got, want = counted[split.key], count_pieces(units, split, compiled=False)
        assert got.pieces == want.pieces and got.counts.tolist() == want.counts.tolist(), split.key[:2]
        assert [got.pieces[r] for r in got.refs] == [want.pieces[r] for r in want.refs], split.key[:2]
        assert_packed_as_strings(got.pieces)
    o200k, harmony = (corpus_pieces(load_production(k)) for k in ("o200k_base", "o200k_harmony"))
    assert (counted[o200k.key] is counted[harmony.key]) is not with_specials
    assert len({id(c) for c in counted.values()}) < len(counted)  # some splits share their count


def test_a_split_that_keeps_units_whole_counts_the_units_themselves(tokenizers):
    """BERT, XLM-R and the trained WordPiece take each unit as one piece: the short cut equals the textbook count."""
    text = "\n".join(ADVERSARIAL) + " " + sample("multilingual") + " " + sample("english") + f" a{EOT}b {EOT}. "
    splits = {p.key: p for p in map(corpus_pieces, tokenizers) if p is not None and getattr(p, "whole_units", False)}
    assert len(splits) >= 2  # ("units",) and XLM-R's
    for key, split in splits.items():
        units = count_units(text, unit_cut_table([split]))
        fast, slow = count_pieces(units, split), count_pieces(units, split, compiled=False)
        assert fast.pieces == slow.pieces and fast.refs.tolist() == slow.refs.tolist(), key
        assert fast.counts.tolist() == slow.counts.tolist() and fast.first.tolist() == slow.first.tolist(), key
        assert fast.unit_offsets.tolist() == slow.unit_offsets.tolist(), key
        assert bytes(fast.data) == bytes(slow.data) and fast.offsets.tolist() == slow.offsets.tolist(), key


# ---------------------------------------------------------------------------
# units


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_the_compiled_unit_counter_equals_the_textbook_units(chunk):
    text = "\n".join(ADVERSARIAL) + " " + sample("multilingual") + "  tail words " * 50
    table = unit_cut_table([])
    units = count_units(text, table, chunk_bytes=chunk, num_workers=2)
    want = Counter(text_units(text, table))
    first = text_units(text, table)[0]
    want[first] -= 1
    got = Counter({u: int(c) for u, c, f in zip(units.texts, units.counts, units.first, strict=True) if not f})
    assert +got == +want
    assert [u for u, f in zip(units.texts, units.first, strict=True) if f] == [first]
    assert "".join(text_units(text, table)) == text


def test_units_never_cut_inside_a_word_or_after_a_forbidden_character():
    text = "a b  c\td ▁ e\u00a0f"
    assert text_units(text) == ["a", " b", "  c\td", " ▁", " e\u00a0f"]
    table = unit_cut_table([])
    table[ord("▁")] = 0
    assert text_units(text, table) == ["a", " b", "  c\td", " ▁ e\u00a0f"]


def test_not_utf8_and_cancelling(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text \xff\xfe broken")
    tok = load_production("gpt2")
    with pytest.raises(ValueError, match=r"bad\.txt is not valid UTF-8"):
        measure_corpus([bad], [tok], files=True)
    seen = []

    def progress(phase, done, total):
        seen.append(phase)
        if phase == "encode" and done:
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        measure_corpus(sample("english"), [tok, tok], progress=progress)
    assert seen[0] == "count" and "split" in seen


def test_the_group_table_is_char_group_on_every_code_point():
    table = char_group_table()
    for cp in [*range(0, 0x3000), *range(0x3000, 0x110000, 7)]:
        if 0xD800 <= cp < 0xE000:
            continue
        g = char_group(chr(cp), "previous")
        assert table[cp] == (INHERITED if g == "previous" else SCRIPT_GROUPS.index(g)), hex(cp)
    assert np.count_nonzero(table == INHERITED) > 500


def test_compare_corpus_reports_each_phase_and_stops_when_cancelled():
    tok = load_production("gpt2")
    text = sample("english")
    seen = []
    result = compare_corpus(text, [tok, tok], progress=lambda *a: seen.append(a))
    assert result.metrics[0].tokens == len(tok.encode(text)) == result.metrics[1].tokens
    assert [a for a in seen if a[0] == "encode"] == [("encode", 0, 2), ("encode", 1, 2), ("encode", 2, 2)]
    assert seen[0][0] == "count" and result.units > 0 and len(result.tokenizer_seconds) == 2
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(TrainingCancelled, match="cancelled while"):
        compare_corpus(text, [tok], cancelled=cancelled)


def test_cancelling_while_encoding_drops_the_tokenizers_not_started(monkeypatch):
    """Tokenizers are measured two at a time: Cancel after the first one ends leaves at most three started of eight."""
    from bpe_core.analysis import corpus

    started = []
    seen = threading.Event()
    real = corpus.piece_figures

    def figures(*args):
        started.append(1)
        if len(started) > 1:  # the others are slow: still running when Cancel is seen (the first one's end)
            seen.wait(60)
            time.sleep(0.5)
        return real(*args)

    monkeypatch.setattr(corpus, "piece_figures", figures)
    tok = load_production("gpt2")

    def cancelled() -> bool:
        if started:
            seen.set()
        return len(started) > 0

    with pytest.raises(TrainingCancelled, match="cancelled while 'encode'"):
        compare_corpus(sample("english"), [tok] * 8, cancelled=cancelled)
    assert 1 <= len(started) <= 3


def test_tokenizers_start_by_the_bytes_they_encode_most_first(monkeypatch):
    """Longest first: the whole-text one, then BERT (whole units), then GPT-2 (pattern pieces) -- none waits last."""
    from bpe_core.analysis import corpus

    text = sample("english")
    custom = TrainingSpec("bpe", 300, pattern=r"\S+\s*").train(text)  # declares no pieces: the whole text
    gpt2, bert = load_production("gpt2"), load_production("bert")
    submitted = []
    real = corpus._in_threads
    monkeypatch.setattr(corpus, "_in_threads", lambda work, *a: submitted.append(list(work)) or real(work, *a))
    metrics = compare_corpus(text, [gpt2, bert, custom]).metrics
    assert submitted[-1] == [2, 1, 0]  # the encode phase's order: by tokenizer index
    assert [m.tokens for m in metrics] == [len(t.encode(text)) for t in (gpt2, bert, custom)]  # results in place


def test_a_units_cache_counts_a_text_once_per_cut_table(monkeypatch):
    from bpe_core.analysis import corpus

    text = sample("multilingual") + " <|endoftext|> " + sample("english")
    first, later, other = load_production("gpt2"), load_production("cl100k_base"), load_production("xlmr")
    counted = []
    real = corpus.count_units
    monkeypatch.setattr(corpus, "count_units", lambda *a, **k: counted.append(1) or real(*a, **k))
    cache: dict = {}
    a = compare_corpus(text, [first], units_cache=cache)
    b = compare_corpus(text, [later], units_cache=cache)
    assert len(counted) == 1 and b.count_seconds == a.count_seconds  # the second took the first's units
    assert_same(b.metrics[0], whole_text(later, text), "cl100k from cached units")
    c = compare_corpus(text, [other], units_cache=cache)  # XLM-R cuts units after fewer characters: its own count
    assert len(counted) == 2 and len(cache) == 2
    assert_same(c.metrics[0], whole_text(other, text), "xlmr")


def test_special_token_rows_are_split_specials_unit_by_unit():
    """The compiled path's special-token ranges: ``split_special`` on each unit alone (longest first, leftmost)."""
    from bpe_core.analysis.corpus import _pack, _special_rows
    from bpe_core.pretokenize import split_special

    specials = ["<a>", "<a><b>", "<ab", "[X1]", "[X12]", "ø", "é", "  ", " \n", "<|endoftext|>", "<|end", "ab", "b"]
    units = ["x<a><b>y", " <ab>ø", " é[X12][X1]", "  ", "   \n", " <|endoftext|>", " <|end", "ab", " b<a", "> ab"]
    units += [" " + t for t in text_units(sample("multilingual") + " <a><b> <ab [X12] ø é abba")]
    data, offsets = _pack(units)
    want = []
    for u, start in zip(units, offsets[:-1].tolist(), strict=True):
        pos = start
        for seg, is_special in split_special(u, specials):
            n = len(seg.encode("utf-8"))
            if is_special:
                want.append([pos, pos + n])
            pos += n
    assert _special_rows(data, offsets, specials).tolist() == want
    assert _special_rows(data, offsets, []).shape == (0, 2)


def _split_special_rows(units: list[str], specials: list[str]) -> list[list[int]]:
    """The textbook: ``split_special`` on each unit alone, its special segments as byte ranges of the packed units."""
    from bpe_core.pretokenize import split_special

    rows, pos = [], 0
    for unit in units:
        for seg, is_special in split_special(unit, specials):
            n = len(seg.encode("utf-8"))
            if is_special:
                rows.append([pos, pos + n])
            pos += n
    return rows


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(alphabet="ab<> \t\né€", min_size=1, max_size=12), min_size=1, max_size=8, unique=True),
    st.lists(st.text(alphabet="ab<> \t\né€", max_size=40), min_size=1, max_size=12),
)
def test_the_compiled_special_token_search_equals_split_special_on_random_tokens(specials, units):
    """Overlapping tokens, tokens that are prefixes of others, runs of whitespace tokens (MPT's), multi-byte ones."""
    from bpe_core.analysis.corpus import _pack, _special_rows

    data, offsets = _pack(units)
    assert _special_rows(data, offsets, specials).tolist() == _split_special_rows(units, specials)
