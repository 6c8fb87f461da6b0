"""BERT's normalizer (:func:`bpe_core.pretokenize.bert_normalize`) against Hugging Face ``tokenizers``' BertNormalizer,
and GPT-2's ordinary encoding (``encode_ordinary``) against tiktoken's."""

from __future__ import annotations

import random
import unicodedata

import pytest
from tokenizers import normalizers

from bpe_core.pretokenize import bert_normalize
from tests.conftest import sample

REAL = [
    "Héllò hów are ü?",  # the course's example
    "Ærøskøbing, Zürich, São Paulo, Đà Nẵng, İstanbul, Łódź, Ångström",
    "ΟΔΥΣΣΕΥΣ ὀδυσσεύς, Москва́, ﬁne ﬂour, Ǆemal",
    "中文字 and 日本語のテキスト, 한국어",
    "tab\there\r\nnew\x0bline\x0c, nul\x00, bell\x07, soft\u00adhyphen, zero\u200bwidth, bom\ufeff, private\ue000",
    "replacement \ufffd, nbsp\u00a0, ideographic\u3000space, line\u2028sep",
    "x\u0301\u0300\u0327 combining marks",
]


@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_normalize_equals_tokenizers_on_real_text(lowercase):
    hf = normalizers.BertNormalizer(lowercase=lowercase)
    for text in [*REAL, sample("multilingual"), sample("english")]:
        assert bert_normalize(text, lowercase=lowercase) == hf.normalize_str(text), text[:40]


SCRIPTS = [(0x20, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF), (0x600, 0x6FF),
           (0x900, 0x97F), (0x1E00, 0x1FFF), (0x2000, 0x206F), (0x3040, 0x30FF), (0x4E00, 0x4FFF), (0xAC00, 0xAD00),
           (0x1F300, 0x1F64F)]  # fmt: skip
"""Latin, combining marks, Greek, Cyrillic, Hebrew, Arabic, Devanagari, Latin/Greek extended, punctuation, kana,
CJK, Hangul, emoji: every assigned character of these blocks is checked alone and in random mixes."""


def test_bert_normalize_equals_tokenizers_on_every_character_of_common_scripts():
    hf = normalizers.BertNormalizer(lowercase=True)
    pool = [chr(c) for a, b in SCRIPTS for c in range(a, b + 1) if unicodedata.category(chr(c)) != "Cn"]
    for c in pool:
        assert bert_normalize(f"a{c}B") == hf.normalize_str(f"a{c}B"), f"U+{ord(c):04X}"
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(12))
        assert bert_normalize(text) == hf.normalize_str(text), ascii(text)


def test_bert_normalize_options_and_errors():
    assert bert_normalize("Héllo", lowercase=False) == "Héllo"  # strip_accents follows lowercase
    assert bert_normalize("Héllo", lowercase=False, strip_accents=True) == "Hello"
    assert bert_normalize("Héllo", strip_accents=False) == "héllo"
    assert bert_normalize("中文", handle_chinese_chars=False) == "中文"
    assert bert_normalize("a\tb\x00", clean_text=False) == "a\tb\x00"
    with pytest.raises(TypeError, match="str"):
        bert_normalize(b"bytes")


def test_encode_ordinary_equals_tiktoken(tiktoken_official):
    from bpe_core.production import load_production

    text = "Hello<|endoftext|>world <|fim_prefix|> " + sample("english")[:500]
    for key, name in (("gpt2", "r50k_base"), ("cl100k_base", "cl100k_base")):
        tok = load_production(key)
        assert tok.encode_ordinary(text) == tiktoken_official(name).encode_ordinary(text)
        assert tok.encode_ordinary(text) != tok.encode(text)  # the special token is read as text
