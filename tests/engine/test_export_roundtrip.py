"""Every export imports back, here and in the library that defines the format, or is refused with the reason.

Property tests over what a user can type: random special-token strings for
BPE (exported as ``tokenizer.json`` and ``.tiktoken`` + metadata; read back by
this project, by Hugging Face ``tokenizers`` and by tiktoken) and random
WordPiece tokens for ``vocab.txt`` (read back by this project and by
``tokenizers.models.WordPiece.read_file``).
"""

from __future__ import annotations

import base64
import json

import pytest
import tiktoken
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer
from tokenizers.models import WordPiece

from bpe_core import BPETokenizer, WordPieceTokenizer, train_bpe, train_wordpiece
from bpe_core.formats.bert import wordpiece_from_vocab_txt, wordpiece_to_vocab_txt
from bpe_core.formats.huggingface import bpe_to_hf_json
from bpe_core.formats.tiktoken import bpe_to_tiktoken_files
from bpe_core.formats.upload import load_tokenizer_bytes
from tests.conftest import sample

TEXT = sample("english")[:1500]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

SPECIAL = st.text(min_size=1, max_size=12) | st.sampled_from(
    ["<|im start|>", "<s>\t", "<|终|>", "[MASK]", " ", "\u2028", "<|endoftext|>", "é", "a b", "🙂", "<\x00>"]
)


def with_specials(specials: list[str]) -> str:
    """The training text with every special token in it (and some glued to words)."""
    return TEXT[:400] + "".join(f" {s} x{s}y" for s in specials) + TEXT[400:]


def bpe_with(specials: list[str]) -> BPETokenizer:
    return train_bpe(with_specials(specials), 300, specials)


@pytest.mark.parametrize("specials", [["<|im start|>"], ["<s>\t"], ["<|终|>"], ["<|im start|>", "<s>\t", "<|终|>"]])
def test_issue_examples_import_back_from_tokenizer_json(specials, tmp_path):
    """The issue's case: special tokens with a space, a tab or non-ASCII gave "not a byte-level vocabulary"."""
    tok = bpe_with(specials)
    text = with_specials(specials)
    data = bpe_to_hf_json(tok)
    back = load_tokenizer_bytes(data.encode("utf-8"), "tokenizer.json")
    assert back.special_tokens == tok.special_tokens
    assert back.encode(text) == tok.encode(text)
    assert Tokenizer.from_str(data).encode(text).ids == tok.encode(text)


@SETTINGS
@given(specials=st.lists(SPECIAL, min_size=1, max_size=3, unique=True))
def test_bpe_tokenizer_json_round_trip(specials):
    tok = bpe_with(specials)
    text = with_specials(specials)
    try:
        data = bpe_to_hf_json(tok)
    except ValueError as exc:  # refused at export, with the reason
        assert "spelling" in str(exc) or "appear under ids" in str(exc)
        return
    back = load_tokenizer_bytes(data.encode("utf-8"), "tokenizer.json")
    assert back.special_tokens == tok.special_tokens
    ids = tok.encode(text)
    assert back.encode(text) == ids
    assert Tokenizer.from_str(data).encode(text).ids == ids
    assert back.decode(ids) == text


@SETTINGS
@given(specials=st.lists(SPECIAL, min_size=1, max_size=3, unique=True))
def test_bpe_tiktoken_round_trip(specials):
    tok = bpe_with(specials)
    text = with_specials(specials)
    ranks, meta = bpe_to_tiktoken_files(tok)
    back = load_tokenizer_bytes(ranks, "x.tiktoken", meta)
    ids = tok.encode(text)
    assert back.special_tokens == tok.special_tokens
    assert back.encode(text) == ids
    if any(a != b and b.startswith(a) for a in specials for b in specials):
        return  # tiktoken joins its special tokens into one alternation in hash-map order: which it takes is arbitrary
    m = json.loads(meta)
    ranks_map = {base64.b64decode(t): int(r) for t, r in (line.split() for line in ranks.splitlines())}
    enc = tiktoken.Encoding(
        m["name"],
        pat_str=m["pat_str"],
        mergeable_ranks=ranks_map,
        special_tokens=m["special_tokens"],
        explicit_n_vocab=m["explicit_n_vocab"],
    )
    assert enc.encode(text, allowed_special="all") == ids


def test_tiktoken_export_refuses_bytes_held_twice():
    """A trained vocabulary can hold the same bytes under two ids; tiktoken's ranks cannot."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc", 258: b"abc"}
    merges = [(97, 98, 256), (256, 99, 257), (256, 99, 258)]
    tok = BPETokenizer.from_parts(vocab=vocab, merges=merges, special_tokens={}, pattern="gpt2", name="dup")
    with pytest.raises(ValueError, match="b'abc' appear under ids 257 and 258"):
        bpe_to_tiktoken_files(tok)


# ---------------------------------------------------------------------------
# vocab.txt

PIECE = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)


@SETTINGS
@given(tokens=st.lists(PIECE, min_size=1, max_size=20, unique=True), lowercase=st.booleans())
def test_vocab_txt_round_trip(tokens, lowercase, tmp_path):
    assume("[UNK]" not in tokens)
    tok = WordPieceTokenizer(["[UNK]", *tokens], ["[UNK]"], lowercase=lowercase)
    try:
        data = wordpiece_to_vocab_txt(tok)
    except ValueError as exc:
        reasons = ("line break", "ends in whitespace", "bracketed", "upper-case")
        assert any(r in str(exc) for r in reasons), exc
        return
    vocab = ["[UNK]", *tokens]
    back = wordpiece_from_vocab_txt(data, "vocab.txt")
    assert [back.id_to_token(i) for i in range(back.vocab_size)] == vocab
    assert back.special_tokens == {"[UNK]": 0}
    assert back.lowercase == tok.lowercase
    path = tmp_path / "vocab.txt"
    path.write_bytes(data)
    assert WordPiece.read_file(str(path)) == {t: i for i, t in enumerate(vocab)}


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029", "\x0b", "\x0c"])
def test_vocab_txt_tokens_with_unicode_line_breaks(char, tmp_path):
    """The issue's case: splitlines() breaks on these; a token holding one (not at its end) imports back."""
    vocab = ["[UNK]", "A", f"a{char}b", f"{char}c", "##x"]
    tok = WordPieceTokenizer(vocab, ["[UNK]"])
    data = wordpiece_to_vocab_txt(tok)
    back = wordpiece_from_vocab_txt(data)
    assert [back.id_to_token(i) for i in range(5)] == vocab
    path = tmp_path / "vocab.txt"
    path.write_bytes(data)
    assert WordPiece.read_file(str(path)) == {t: i for i, t in enumerate(vocab)}


@pytest.mark.parametrize(
    ("vocab", "specials", "message"),
    [
        (["[UNK]", "A", "a\nb"], ["[UNK]"], "contains a line break"),
        (["[UNK]", "A", "a\u2028"], ["[UNK]"], "ends in whitespace \\(U\\+2028\\)"),
        (["[UNK]", "<s>", "A"], ["[UNK]", "<s>"], "'<s>' is not bracketed"),
        (["[UNK]", "[x]", "A"], ["[UNK]"], "'\\[x\\]' is bracketed"),
        (["[UNK]", "a"], ["[UNK]"], "keeps case but has no upper-case token"),
    ],
)
def test_vocab_txt_refuses_what_it_cannot_hold(vocab, specials, message):
    with pytest.raises(ValueError, match=message) as info:
        wordpiece_to_vocab_txt(WordPieceTokenizer(vocab, specials))
    assert "export it as tokenizer.json" in str(info.value)


def test_trained_wordpiece_vocab_txt_still_exports():
    tok = train_wordpiece(TEXT, 150)
    back = wordpiece_from_vocab_txt(wordpiece_to_vocab_txt(tok))
    assert back.encode(TEXT) == tok.encode(TEXT)
