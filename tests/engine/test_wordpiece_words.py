"""WordPiece's fast word split equals BERT's pattern and Hugging Face's ``BertPreTokenizer``, word for word.

:func:`bpe_core.wordpiece.words.bert_words` pads punctuation with spaces and
splits with ``str.split``; the references are the regex it replaces
(``BERT_RX.findall``) and Hugging Face's own pre-tokenizer.  Texts: the seeds,
multilingual and code samples, and random strings drawn from letters, digits,
ASCII and Unicode punctuation and symbols, combining marks, every kind of
Unicode whitespace and the four separators U+001C..U+001F that ``str.split``
treats as whitespace and BERT does not.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.textbook.wordpiece import hf_bert_pretokenizer
from bpe_core.wordpiece.words import BERT_RX, bert_words, count_words

ALPHABET = (
    "abcXYZ019éßΣσ日本語" + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" + "¿¡«»—–…·§¶€£¥©®°±×÷"
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2003\u200a\u2028\u2029\u202f\u205f\u3000"
    "\x1c\x1d\x1e\x1f\x00\x7f\u0301\u200b\u200d\ufeff"
)


def _hf_words(text: str) -> list[str]:
    return [w for w, _span in hf_bert_pretokenizer().pre_tokenize_str(text)]


def test_real_text_splits_as_the_regex_and_hugging_face(seeds, multilingual, code):
    for text in (seeds, multilingual, code):
        words = bert_words(text)
        assert words == BERT_RX.findall(text) == _hf_words(text)
        assert count_words(text) == (dict(Counter(words)), 0)
        assert list(count_words(text)[0]) == list(dict.fromkeys(words))  # order of first appearance


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_random_text_splits_as_the_regex(text):
    assert bert_words(text) == BERT_RX.findall(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_random_text_splits_as_hugging_face(text):
    # Hugging Face splits on char::is_whitespace (Unicode's White_Space, without U+001C..U+001F)
    # and on Unicode punctuation plus ASCII symbols, as BERT's pattern does
    assert bert_words(text) == _hf_words(text)


def test_information_separators_are_not_whitespace():
    text = "a\x1cb c\x1fd"
    assert bert_words(text) == BERT_RX.findall(text) == _hf_words(text) == ["a\x1cb", "c\x1fd"]
