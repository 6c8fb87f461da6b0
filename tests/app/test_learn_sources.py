"""The transcriptions in :mod:`tests.learn_sources` are what the seeds print (each seed parsed where it prints it)."""

from __future__ import annotations

import ast
import re

import pytest

from tests import learn_sources as src


def needs(prefix: str) -> str:
    text = src.seed(prefix)
    if text is None:
        pytest.skip(f"seed {prefix} is not here")
    return text


def test_seeds_000_and_003_bytes_and_code_points():
    assert "ê (e with circumflex, as in French) has codepoint 234" in needs("000")
    text = needs("003")
    printed = re.search(r"# (\[b'H'.*?\])", text).group(1)
    assert ast.literal_eval(printed) == src.SMILE_BYTES == [bytes([b]) for b in "Hello 😁".encode()]
    assert "a total of 10 bytes" in text
    assert list("ê".encode()) == src.E_HAT_BYTES and ord("ê") == src.E_HAT_CODE_POINT
    assert list(b"hello") == src.HELLO_BYTES


def test_seed_002_ids_and_split():
    text = needs("002")
    assert src.seed_ints("002", r"## (\[220[0-9, ]+\])") == src.SPACES_GPT2
    assert src.seed_ints("002", r"## (\[256[0-9, ]+\])") == src.SPACES_CL100K
    assert f"encoder['<|endoftext|>'] == {src.ENDOFTEXT_GPT2}" in text
    assert f"ENDOFTEXT: {src.ENDOFTEXT_CL100K}" in text
    printed = re.search(r"##(\[\'Hello\'.*?\])", text).group(1)
    assert ast.literal_eval(printed) == src.SEED_GPT2_SPLIT
    assert src.GPT2_SPLIT[0] in text  # the text, with one space after 123


def test_seed_001_efficiency_sentence():
    text = needs("001")
    assert src.EFFICIENCY_SENTENCE in text
    assert f"({src.SEED_EFFICIENCY_BYTES} bytes)" in text and f"into {src.SEED_EFFICIENCY_WORDS} tokens" in text
    assert len(src.EFFICIENCY_SENTENCE.split()) == src.SEED_EFFICIENCY_WORDS


def test_seed_004_course_outputs():
    text = needs("004")
    assert src.seed_wordpiece_vocab() == src.WORDPIECE_VOCAB_70
    assert "('a', '##b') 0.2" in text
    assert "['Hugg', '##i', '##n', '##g']" in text and "['[UNK]']" in text
    assert src.NORMALIZED[1] in text and src.NORMALIZED[0] in text
    for word, (a, b) in src.SEED_GPT2_OFFSETS:
        assert f"'{word}', ({a}, {b})" in text
    assert "( 'you', (16, 19))" in text  # BERT's you at 16-19: two spaces before it
    for sentence in src.COURSE_CORPUS:
        assert f'"{sentence}"' in text
