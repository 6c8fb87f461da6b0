"""Unigram byte fallback against SentencePiece and Hugging Face: unknown characters as <0xNN> byte pieces.

References: ``sentencepiece`` trained with ``byte_fallback=True`` (its pieces, scores and ids, encoded by
``SentencePieceProcessor``), and Hugging Face ``tokenizers``' ``models.Unigram(byte_fallback=True)`` reading our
``tokenizer.json`` export.
"""

from __future__ import annotations

import io
import json

import pytest

sentencepiece = pytest.importorskip("sentencepiece")
from tokenizers import Tokenizer  # noqa: E402

from bpe_core import unigram_from_hf_json, unigram_to_hf_json  # noqa: E402
from bpe_core.interface import TrainingSpec  # noqa: E402
from bpe_core.unigram import BYTE_PIECES, UnigramTokenizer, train_unigram  # noqa: E402
from tests.conftest import sample  # noqa: E402

# characters outside any vocabulary trained on the English sample: CJK, emoji (4 bytes), Greek, accents, a tab
UNSEEN = [
    "The cat 猫 sat on the mat.",
    "Emoji 🙂 and 🚀🚀 in a row, then text again",
    "Greek λόγος and Café résumé naïve",
    "tab\tinside and ümlaut at the end ß",
    "猫🙂λ",
    "  two leading spaces and a trailing one ",
]


@pytest.fixture(scope="module")
def sp_model():
    lines = [ln for ln in sample("english").splitlines() if ln.strip()]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=600, model_type="unigram",
        byte_fallback=True, character_coverage=1.0, normalization_rule_name="identity",
        remove_extra_whitespaces=False, bos_id=-1, eos_id=-1, minloglevel=2,
    )  # fmt: skip
    return sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())


def test_sentencepiece_byte_fallback_ids_equal(sp_model):
    sp = sp_model
    n = sp.get_piece_size()
    assert sp.is_unknown(0) and all(sp.is_byte(i) for i in range(1, 257))
    assert [sp.id_to_piece(i) for i in range(1, 257)] == list(BYTE_PIECES)
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(257, n)]
    tok = UnigramTokenizer.from_pieces(pieces, unk_token=sp.id_to_piece(0), byte_fallback=True)
    assert tok.vocab_size == n and tok.byte_fallback
    byte_tokens = 0
    # (texts that start with a space too: the "▁" put in front of the text is SentencePiece's, even then)
    for text in UNSEEN + sample("english").splitlines()[:20]:
        ids = tok.encode(text)
        assert ids == sp.encode(text), text
        byte_tokens += sum(1 <= i <= 256 for i in ids)
        assert tok.unknown_id not in ids  # every unknown character became bytes
        assert tok.decode(ids) == sp.decode(ids), text
    assert byte_tokens > 30


def test_trained_with_byte_fallback_equals_hugging_face():
    text = sample("english")
    tok = train_unigram(text, 700, byte_fallback=True)
    assert tok.byte_fallback and tok.vocab_size == 700
    chars = set(text.replace(" ", "▁")) | {"▁"}
    assert tok.pieces[1:257] == list(BYTE_PIECES) and tok.min_vocab_size == 257 + len(chars)
    data = json.loads(unigram_to_hf_json(tok))
    assert data["model"]["byte_fallback"] is True
    hf = Tokenizer.from_str(json.dumps(data))
    for t in UNSEEN:
        ids = tok.encode(t)
        if not t.startswith(" "):  # Hugging Face's Metaspace puts no "▁" in front of a text that starts with a space
            assert ids == hf.encode(t).ids, t
        assert any(1 <= i <= 256 for i in ids) == bool(set(t) - set(text) - {" "})
        # bytes of each unknown character, in order, covering that character
        spans = tok.token_spans(t)
        assert [s.id for s in spans] == ids
        for s in spans:
            if 1 <= s.id <= 256:
                ch = t[s.start : s.end]
                assert len(ch) == 1 and s.token_bytes[0] in ch.encode() and s.display == f"<0x{s.token_bytes[0]:02X}>"
        assert tok.decode(ids) == t  # every text round-trips (bytes for what the vocabulary lacks)
        if not t.startswith(" "):
            assert hf.decode(ids) == t
    # the same tokenizer without byte fallback writes <unk>; imports keep the flag
    back = unigram_from_hf_json(json.dumps(data))
    assert back.byte_fallback and back.encode(UNSEEN[0]) == tok.encode(UNSEEN[0])
    plain = train_unigram(text, 700 - 256)
    assert plain.unknown_id in plain.encode(UNSEEN[0])
    # through the declared interface, and saved and loaded
    via_spec = TrainingSpec("unigram", 700, "sentencepiece", ("<unk>",), byte_fallback=True).train(text)
    assert via_spec.encode(UNSEEN[1]) == ids_of(tok, UNSEEN[1])
    assert UnigramTokenizer.from_dict(json.loads(json.dumps(tok.to_dict()))).encode(UNSEEN[1]) == ids_of(tok, UNSEEN[1])


def ids_of(tok, text):
    return tok.encode(text)


def test_byte_fallback_needs_the_byte_pieces():
    with pytest.raises(ValueError, match="<0x00>"):
        UnigramTokenizer.from_states(["<unk>", "a"], ["<unk>"], "<unk>", base=2, sizes=[2], scores=[[0, -1]],
                                     byte_fallback=True)  # fmt: skip
    with pytest.raises(TypeError, match="byte_fallback"):
        train_unigram("a b c", 20, byte_fallback="yes")
    with pytest.raises(ValueError, match="256 byte pieces"):
        train_unigram("hug pug", 100, byte_fallback=True)
