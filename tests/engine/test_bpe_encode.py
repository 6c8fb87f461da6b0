"""Encoding: exact parity with tiktoken on GPT-2's ranks, round trips, spans, streaming."""

from __future__ import annotations

from itertools import pairwise

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import BPETokenizer, train_bpe
from bpe_core.production.encodings import ENCODINGS, bpe_from_encoding, load_mergeable_ranks, ranks_to_vocab_merges
from tests.conftest import sample, seed_text, stdlib_code


@pytest.fixture(scope="module")
def gpt2_ours() -> BPETokenizer:
    return bpe_from_encoding("gpt2")


@pytest.fixture(scope="module")
def gpt2_tiktoken() -> tiktoken.Encoding:
    spec = ENCODINGS["gpt2"]
    return tiktoken.Encoding(
        "gpt2-test",
        pat_str=spec.pattern,
        mergeable_ranks=load_mergeable_ranks("gpt2"),
        special_tokens=dict(spec.special_tokens),
    )


REAL_TEXTS = {
    "english": seed_text,
    "code": stdlib_code,
    "multilingual": lambda: sample("multilingual"),
    "numbers": lambda: sample("numbers"),
    "with_endoftext": lambda: sample("english") + "<|endoftext|>" + sample("python") + "\n<|endoftext|>",
}


@pytest.mark.parametrize("kind", list(REAL_TEXTS))
def test_gpt2_ranks_give_tiktoken_ids(gpt2_ours, gpt2_tiktoken, kind):
    text = REAL_TEXTS[kind]()
    expected = gpt2_tiktoken.encode(text, allowed_special="all")
    assert gpt2_ours.encode(text) == expected
    assert gpt2_ours.decode(expected) == text


def test_gpt2_vocab_and_merges_shape(gpt2_ours):
    # GPT-2: 256 byte tokens + 50,000 merges + <|endoftext|> = 50,257, endoftext is 50256
    vocab, merges = ranks_to_vocab_merges(load_mergeable_ranks("gpt2"))
    assert len(vocab) == 50256 and len(merges) == 50000
    assert gpt2_ours.vocab_size == 50257
    assert gpt2_ours.special_tokens == {"<|endoftext|>": 50256}
    assert gpt2_ours.encode("<|endoftext|>") == [50256]


def test_published_seed_examples(gpt2_ours):
    # Seed 002 (notes on Karpathy's lecture) prints, for "   Hello World!!!" (the page collapsed
    # the three leading spaces): gpt2 -> [220, 220, 18435, 2159, 10185].
    assert gpt2_ours.encode("   Hello World!!!") == [220, 220, 18435, 2159, 10185]
    cl100k = bpe_from_encoding("cl100k_base")
    # ... and cl100k_base -> [256, 22691, 4435, 12340] (it merges the spaces).
    assert cl100k.encode("   Hello World!!!") == [256, 22691, 4435, 12340]


def test_long_pretoken_matches_tiktoken(gpt2_ours, gpt2_tiktoken):
    # a 100 KB "word" without spaces is one pre-token: the heap path must agree with tiktoken
    word = ("antidisestablishmentarianism" * 4000)[:100_000]
    assert gpt2_ours.encode(word) == gpt2_tiktoken.encode(word)
    assert gpt2_ours.encode("a" * 301) == gpt2_tiktoken.encode("a" * 301)


def test_heap_and_quadratic_paths_agree(english):
    # pieces longer than 64 bytes take the heap path; both must equal textbook BPE
    tok = train_bpe(english, 700)
    for word in ["the" * 40, "lighthouse" * 12, english.replace(" ", "")[:500], "ab" * 100, "x" * 65]:
        data = word.encode()
        assert len(data) > 64
        assert list(tok._encode_piece(data)) == _quadratic(tok, data)
    for word in ["lighthouse", "keepers", "a", "anemometer"]:
        assert list(tok._encode_piece(word.encode())) == _quadratic(tok, word.encode())


def _quadratic(tok: BPETokenizer, data: bytes) -> list[int]:
    """Textbook BPE (lowest rank first, leftmost first) from the public merge list."""
    ranks = {(a, b): r for r, (a, b, _n) in enumerate(tok.merge_ids)}
    new = [n for _a, _b, n in tok.merge_ids]
    ids = list(data)
    while len(ids) > 1:
        pairs = [(ranks.get((ids[i], ids[i + 1]), 1 << 60), i) for i in range(len(ids) - 1)]
        r, i = min(pairs)
        if r == 1 << 60:
            break
        ids[i : i + 2] = [new[r]]
    return ids


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_arbitrary_unicode_trained(text):
    tok = _trained()
    assert tok.decode(tok.encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_arbitrary_unicode_gpt2(text):
    tok = bpe_from_encoding("gpt2")
    assert tok.decode(tok.encode(text)) == text


_TRAINED: list[BPETokenizer] = []


def _trained() -> BPETokenizer:
    if not _TRAINED:
        _TRAINED.append(train_bpe(sample("english") + sample("multilingual"), 800, special_tokens=["<|endoftext|>"]))
    return _TRAINED[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab  \n\t'sé語😀<|endoftext>1")), max_size=30), max_size=12))
def test_encode_iterable_equals_encode(chunks):
    tok = _trained()
    assert list(tok.encode_iterable(chunks)) == tok.encode("".join(chunks))


def test_encode_iterable_on_file_lines(tmp_path):
    tok = _trained()
    text = sample("python") + "\n\n   \n" + sample("multilingual")
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    with path.open(encoding="utf-8", newline="") as fh:
        assert list(tok.encode_iterable(fh)) == tok.encode(text)


def test_token_spans_cover_text(multilingual):
    tok = _trained()
    spans = tok.token_spans(multilingual)
    assert [s.id for s in spans] == tok.encode(multilingual)
    # whole tokens: their slice of the text is exactly their decoded bytes
    for s in spans:
        if not s.is_partial and not s.is_special:
            assert multilingual[s.start : s.end] == s.token_bytes.decode("utf-8") == s.display
    # spans run left to right without gaps; only partial tokens may share a character
    assert spans[0].start == 0 and spans[-1].end == len(multilingual)
    for a, b in pairwise(spans):
        assert a.start <= b.start and a.end <= b.end
        assert b.start == a.end or (b.start == a.end - 1 and a.is_partial and b.is_partial)
    assert any(s.is_partial for s in spans)  # the sample's emoji and CJK are not all single tokens


def test_partial_utf8_tokens_shown_as_hex():
    # With no merges, the 4-byte emoji is four partial byte tokens, each shown as <0xNN>.
    tok = train_bpe("", 256)
    spans = tok.token_spans("a😁")
    assert [s.display for s in spans] == ["a", "<0xF0>", "<0x9F>", "<0x98>", "<0x81>"]
    assert [s.is_partial for s in spans] == [False, True, True, True, True]
    assert all((s.start, s.end) == (1, 2) for s in spans[1:])


def test_special_token_spans(english):
    tok = train_bpe(english, 400, special_tokens=["<|endoftext|>"])
    spans = tok.token_spans("end<|endoftext|>start")
    special = [s for s in spans if s.is_special]
    assert len(special) == 1 and special[0].id == 256 and (special[0].start, special[0].end) == (3, 16)
    assert special[0].rank is None
    ranked = [s for s in spans if s.rank is not None]
    assert all(s.rank == s.id - 257 for s in ranked)


def test_overlapping_special_tokens_longest_match_first():
    tok = train_bpe("", 259, special_tokens=["<a>", "<a><b>", "<b>"])
    assert tok.encode("<a><b><a>x<b>") == [257, 256, ord("x"), 258]


def test_lone_surrogate_is_a_clear_error():
    tok = _trained()
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        tok.encode("ok \ud800 no")


def test_decode_unknown_id():
    tok = train_bpe("", 256)
    with pytest.raises(ValueError, match="unknown token id 999"):
        tok.decode([1, 999])


def test_save_load_round_trip(tmp_path, english, multilingual):
    tok = train_bpe(english, 500, special_tokens=["<|endoftext|>"]).with_vocab_size(450)
    path = tmp_path / "tok.json"
    tok.save(path)
    back = BPETokenizer.load(path)
    assert back.vocab == tok.vocab and back.merges == tok.merges and back.special_tokens == tok.special_tokens
    assert back.trace == tok.trace
    for t in (english, multilingual):
        assert back.encode(t) == tok.encode(t)


def test_load_rejects_other_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a BPE Playground tokenizer file"):
        BPETokenizer.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON tokenizer file"):
        BPETokenizer.load(path)


def test_constructor_from_bytes_merges_matches_trained(english):
    tok = train_bpe(english, 500, special_tokens=["<|endoftext|>"])
    rebuilt = BPETokenizer(tok.vocab, tok.merges, ["<|endoftext|>"], "gpt2")
    assert rebuilt.encode(english) == tok.encode(english)


def test_constructor_errors():
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="single byte 0x41"):
        BPETokenizer({k: v for k, v in vocab.items() if k != 65}, [])
    with pytest.raises(ValueError, match="is not in vocab"):
        BPETokenizer(vocab, [(b"a", b"b")])
    with pytest.raises(ValueError, match="special token '<s>' is not in vocab"):
        BPETokenizer(vocab, [], ["<s>"])
    with pytest.raises(ValueError, match="invalid pattern"):
        BPETokenizer(vocab, [], pattern="(unclosed")


_BY_PATTERN: dict[str, BPETokenizer] = {}


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["gpt2", "cl100k", "o200k", "none", "bert"]),
    st.lists(st.text(alphabet=st.sampled_from(list("Don't  'LL 've\r\n\t12345é語😀.,/<|endoftext|>")), max_size=12)),
)
def test_encode_iterable_equals_encode_for_every_pattern(pattern, chunks):
    # o200k attaches contractions to the word before ("don't" is one pre-token): a chunk ending in
    # "don'" must not be emitted before the next chunk arrives
    if pattern not in _BY_PATTERN:
        _BY_PATTERN[pattern] = train_bpe(sample("english") + sample("numbers"), 700, ["<|endoftext|>"], pattern)
    tok = _BY_PATTERN[pattern]
    assert list(tok.encode_iterable(chunks)) == tok.encode("".join(chunks))
