"""Export and import of trained BPE tokenizers, read back by tiktoken and Hugging Face tokenizers."""

from __future__ import annotations

import json

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Tokenizer

from bpe_core import BPETokenizer, train_bpe
from bpe_core.bpe.ranks import mergeable_ranks
from bpe_core.formats.bert import wordpiece_to_vocab_txt
from bpe_core.formats.huggingface import bpe_to_hf_json, byte_to_unicode, wordpiece_to_hf_json
from bpe_core.formats.tiktoken import bpe_to_tiktoken_files
from bpe_core.formats.upload import load_tokenizer_bytes
from tests.conftest import sample, seed_text, stdlib_code

SPECIALS = ["<|endoftext|>", "<|pad|>"]


def real_texts() -> list[str]:
    return [
        seed_text()[:30000] + "<|endoftext|>",
        stdlib_code()[:20000],
        sample("multilingual") + "<|pad|><|endoftext|>",
    ]


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "o200k", "none", "bert"])
def trained(request):
    text = sample("english") + "<|endoftext|>" + sample("python") + sample("multilingual") + sample("numbers")
    tok = train_bpe(text, 1500, SPECIALS, request.param)
    assert len(set(tok.vocab.values())) == tok.vocab_size  # no duplicate token bytes here
    return tok


def test_byte_to_unicode_is_gpt2s_alphabet():
    m = byte_to_unicode()
    # facts of GPT-2's encoder.json: space is "Ġ" (U+0120), newline "Ċ" (U+010A), "!" is itself,
    # byte 0 is U+0100, and the map is a bijection onto 256 characters
    assert m[0x20] == "Ġ" and m[0x0A] == "Ċ" and m[ord("!")] == "!" and m[0] == "\u0100"
    assert len(set(m.values())) == 256


def test_tiktoken_export_read_by_tiktoken(trained, tmp_path):
    ranks_file, meta_json = bpe_to_tiktoken_files(trained, "mine")
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(ranks_file)
    meta = json.loads(meta_json)
    enc = tiktoken.Encoding(
        meta["name"],
        pat_str=meta["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
        explicit_n_vocab=meta["explicit_n_vocab"],
    )
    for text in real_texts():
        assert enc.encode(text, allowed_special="all") == trained.encode(text)


def test_hf_export_read_by_hugging_face(trained, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(bpe_to_hf_json(trained), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    for text in real_texts():
        ids = trained.encode(text)
        assert hf.encode(text).ids == ids
        assert hf.decode(ids, skip_special_tokens=False) == text


@pytest.mark.parametrize("fmt", ["own", "hf", "tiktoken"])
def test_round_trip_through_each_format(trained, fmt):
    if fmt == "own":
        back = load_tokenizer_bytes(json.dumps(trained.to_dict()).encode(), "t.json")
    elif fmt == "hf":
        back = load_tokenizer_bytes(bpe_to_hf_json(trained).encode(), "tokenizer.json")
    else:
        ranks_file, meta = bpe_to_tiktoken_files(trained)
        back = load_tokenizer_bytes(ranks_file, "t.tiktoken", meta)
    assert back.pattern == trained.pattern
    assert back.special_tokens == trained.special_tokens
    for text in real_texts():
        assert back.encode(text) == trained.encode(text)


def test_mergeable_ranks_shape(trained):
    ranks = mergeable_ranks(trained)
    assert len(ranks) == trained.vocab_size - len(SPECIALS)
    assert all(ranks[bytes([b])] == b for b in range(256))


@pytest.mark.parametrize(
    ("data", "meta", "message"),
    [
        (b"", None, "is empty"),
        (b'{"format": "bpe-playground/bpe", "vocab": {', None, "not valid JSON"),
        (b'{"format": "bpe-playground/bpe"}', None, "malformed"),
        (b'{"model": {"type": "WordLevel", "vocab": {}}}', None, "not a byte-level BPE"),
        (b'{"model": {"type": "Unigram", "vocab": []}}', None, '"model.vocab" is empty'),
        (b'{"format": "bpe-playground/unigram"}', None, "malformed"),
        (b'{"format": "bpe-playground/nope"}', None, "unknown BPE Playground format"),
        (b'{"hello": 1}', None, "unknown JSON tokenizer format"),
        (b"QQ== 0\nnot-base64 1\n", None, "line 2"),
        (b"QQ== 0\nQg==\n", None, "line 2"),
        (b"YWI= 0\n", None, "no token for the single byte 0x00"),
        (b"\x89PNG\r\n\x1a\n", None, "not a tokenizer file"),
    ],
)
def test_malformed_uploads_get_clear_errors(data, meta, message):
    with pytest.raises(ValueError, match=message):
        load_tokenizer_bytes(data, "upload.bin", meta)


def test_truncated_exports_are_rejected(trained):
    own = json.dumps(trained.to_dict()).encode()
    with pytest.raises(ValueError, match="not valid JSON"):
        load_tokenizer_bytes(own[: len(own) // 2], "t.json")
    hf = bpe_to_hf_json(trained).encode()
    with pytest.raises(ValueError, match="not valid JSON"):
        load_tokenizer_bytes(hf[: len(hf) // 2], "tokenizer.json")
    ranks_file, meta = bpe_to_tiktoken_files(trained)
    cut = ranks_file[: len(ranks_file) // 3]
    cut = cut[: cut.rfind(b"\n") + 1]  # whole lines: a valid but smaller ranks file
    with pytest.raises(ValueError, match="truncated or belongs to another encoding"):
        load_tokenizer_bytes(cut, "t.tiktoken", meta)
    with pytest.raises(ValueError, match="malformed"):
        load_tokenizer_bytes(ranks_file, "t.tiktoken", meta[:10])


def test_hf_export_refuses_duplicate_bytes():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab[256] = b"ab"
    vocab[257] = b"ab"
    tok = BPETokenizer.from_parts(
        vocab=vocab, merges=[(97, 98, 256), (97, 98, 257)], special_tokens={}, pattern="gpt2", name="dup"
    )
    with pytest.raises(ValueError, match="appear under ids 256 and 257"):
        bpe_to_hf_json(tok)


# ---------------------------------------------------------------------------
# WordPiece


@pytest.fixture(scope="module", params=[False, True], ids=["cased", "lowercase"])
def trained_wp(request):
    from bpe_core import train_wordpiece

    text = sample("english") + sample("python") + sample("multilingual") + seed_text()[:20000]
    return train_wordpiece(text, 2500, lowercase=request.param)


def wp_texts() -> list[str]:
    # real text; words the vocabulary cannot cover become [UNK] in both readers alike
    return [seed_text()[20000:40000], stdlib_code()[:15000], sample("multilingual") + " [SEP] [CLS]"]


def test_wordpiece_hf_export_read_by_hugging_face(trained_wp, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(wordpiece_to_hf_json(trained_wp), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    for text in wp_texts():
        assert hf.encode(text).ids == trained_wp.encode(text)


def test_wordpiece_vocab_txt_read_by_hugging_face(trained_wp, tmp_path):
    from tokenizers import models, normalizers, pre_tokenizers

    path = tmp_path / "vocab.txt"
    path.write_bytes(wordpiece_to_vocab_txt(trained_wp))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and len(lines) == trained_wp.vocab_size
    hf = Tokenizer(models.WordPiece.from_file(str(path), unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if trained_wp.lowercase:
        hf.normalizer = normalizers.Lowercase()
    for text in wp_texts():
        plain = text.replace("[SEP]", "").replace("[CLS]", "")  # a bare WordPiece model has no added tokens
        assert hf.encode(plain).ids == trained_wp.encode(plain)


@pytest.mark.parametrize("fmt", ["own", "hf", "vocab.txt"])
def test_wordpiece_round_trips(trained_wp, fmt):
    if fmt == "own":
        back = load_tokenizer_bytes(json.dumps(trained_wp.to_dict()).encode(), "wp.json")
    elif fmt == "hf":
        back = load_tokenizer_bytes(wordpiece_to_hf_json(trained_wp).encode(), "tokenizer.json")
    else:
        back = load_tokenizer_bytes(wordpiece_to_vocab_txt(trained_wp), "vocab.txt")
    assert back.lowercase == trained_wp.lowercase
    for text in wp_texts():
        assert back.encode(text) == trained_wp.encode(text)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[PAD]\n\nhello\n", "line 2 is empty"),
        (b"[PAD]\nhello\nworld\n", "no \\[UNK\\] token"),
        (b"[UNK]\nab\nab\n", "ab"),
        (
            b'{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 2}}}',
            r"\"model.vocab\"\[.a.\] must be 0..1, got 2",
        ),
        (
            b'{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}, "normalizer": {"type": "BertNormalizer"}}',
            "BertNormalizer",
        ),
    ],
)
def test_malformed_wordpiece_files(data, message):
    with pytest.raises(ValueError, match=message):
        load_tokenizer_bytes(data, "upload")
