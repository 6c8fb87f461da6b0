"""WordPiece: the course's published example, hand-worked ties, a naive trainer and Hugging Face as references."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

from bpe_core import TrainingCancelled
from bpe_core.textbook.wordpiece import encode_word as naive_encode_word
from bpe_core.textbook.wordpiece import train as naive_train
from bpe_core.wordpiece import DEFAULT_SPECIAL_TOKENS, WordPieceTokenizer, lowercase_text, train_wordpiece

# The Hugging Face NLP course, chapter 6, as printed in ../shared/seeds/004_*.
COURSE_CORPUS = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]
COURSE_TEXT = "\n".join(COURSE_CORPUS)

# The course's printed alphabet (seed 004, "STEP 1"), transcribed by hand.
COURSE_ALPHABET = [
    "##a", "##b", "##c", "##d", "##e", "##f", "##g", "##h", "##i", "##k", "##l", "##m", "##n", "##o", "##p", "##r",
    "##s", "##t", "##u", "##v", "##w", "##y", "##z", ",", ".", "C", "F", "H", "T", "a", "b", "c", "g", "h", "i", "s",
    "t", "u", "w", "y",
]  # fmt: skip

# The course's printed vocabulary after `vocab_size = 70` (seed 004, "THE LOOP"), transcribed by hand.
COURSE_VOCAB_70 = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "##a", "##b", "##c", "##d", "##e", "##f", "##g", "##h", "##i", "##k", "##l", "##m", "##n", "##o", "##p", "##r",
    "##s", "##t", "##u", "##v", "##w", "##y", "##z", ",", ".", "C", "F", "H", "T", "a", "b", "c", "g", "h", "i", "s",
    "t", "u", "w", "y",
    "ab", "##fu", "Fa", "Fac", "##ct", "##ful", "##full", "##fully", "Th", "ch", "##hm", "cha", "chap", "chapt",
    "##thm", "Hu", "Hug", "Hugg", "sh", "th", "is", "##thms", "##za", "##zat", "##ut",
]  # fmt: skip


def vocab_list(tok: WordPieceTokenizer) -> list[str]:
    return [tok.vocab[i] for i in range(tok.vocab_size)]


def pieces(tok: WordPieceTokenizer, text: str) -> list[str]:
    return [tok.vocab[i] for i in tok.encode(text)]


def merged_tokens(tok: WordPieceTokenizer) -> list[str]:
    return [s.merged for s in tok.trace]


def hf_reference(tok: WordPieceTokenizer) -> Tokenizer:
    """Hugging Face's WordPiece model on our vocabulary: an independent encoder and decoder."""
    hf = Tokenizer(
        models.WordPiece(
            {s: i for i, s in tok.vocab.items()},
            unk_token=tok.unk_token,
            max_input_chars_per_word=tok.max_input_chars_per_word,
        )
    )
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if tok.lowercase:
        hf.normalizer = normalizers.Lowercase()
    hf.decoder = decoders.WordPiece(prefix=tok.continuing_subword_prefix, cleanup=False)
    hf.add_special_tokens(list(tok.special_tokens))
    return hf


@pytest.fixture(scope="module")
def course() -> WordPieceTokenizer:
    return train_wordpiece(COURSE_TEXT, 70)


# -- the course's published example ------------------------------------------------


def test_course_vocabulary_at_70_is_exactly_the_printed_one(course):
    assert vocab_list(course) == COURSE_VOCAB_70
    assert course.min_vocab_size == 5 + len(COURSE_ALPHABET) == 45
    assert vocab_list(course)[5:45] == COURSE_ALPHABET
    assert course.training.stop_reason is None


def test_course_first_merge_and_its_score(course):
    # The course prints `('a', '##b') 0.2`: "ab" occurs in "about" and "able" (2), "a" starts
    # "about", "able", "algorithms", "are", "and" (5), "##b" is in "about" and "able" (2): 2/(5*2).
    first = course.trace[0]
    assert (first.left, first.right, first.merged) == ("a", "##b", "ab")
    assert (first.pair_freq, first.left_freq, first.right_freq) == (2, 5, 2)
    assert first.score == 0.2 and first.score_exact == Fraction(1, 5)
    # ... and the course's `splits["about"]` after that merge: ['ab', '##o', '##u', '##t']
    assert pieces(course.with_vocab_size(46), "about") == ["ab", "##o", "##u", "##t"]


def test_course_encode_word_examples(course):
    # printed: ['Hugg', '##i', '##n', '##g'] and ['[UNK]']
    assert pieces(course, "Hugging") == ["Hugg", "##i", "##n", "##g"]
    assert pieces(course, "H0gging") == ["[UNK]"]
    assert course.encode("H0gging") == [course.unknown_id] == [1]


def test_course_example_matches_the_naive_trainer(course):
    vocab, merges = naive_train(COURSE_TEXT, 70)
    assert vocab == COURSE_VOCAB_70
    assert [
        (s.left, s.right, s.merged, s.pair_freq, s.left_freq, s.right_freq, s.tokens_after) for s in course.trace
    ] == merges


# -- hand-worked ties ------------------------------------------------------------


def test_tie_goes_to_the_earlier_word_not_the_smaller_pair():
    # Words "cd", "ab": tokens c, ##d, a, ##b occur once each, so both pairs score 1/(1*1).
    # "cd" is met first, so it is merged first although ("a", "##b") sorts lower.
    tok = train_wordpiece("cd ab", 5 + 4 + 2)
    assert merged_tokens(tok) == ["cd", "ab"]
    tok = train_wordpiece("ab cd", 5 + 4 + 2)
    assert merged_tokens(tok) == ["ab", "cd"]


def test_tie_finishes_the_first_word_before_the_next():
    # Words "dxy", "ab".  All of d, ##x, ##y, a, ##b occur once: every pair scores 1.
    # 1. (d, ##x) is the first pair met -> "dx".
    # 2. (dx, ##y) scores 1/(1*1) = 1 and sits in the first word, before (a, ##b) -> "dxy".
    # 3. (a, ##b) -> "ab".
    tok = train_wordpiece("dxy ab", 5 + 5 + 3)
    assert merged_tokens(tok) == ["dx", "dxy", "ab"]


def test_tie_leftmost_pair_inside_a_word():
    # One word "abcd": a, ##b, ##c, ##d once each; every pair scores 1 at every step, and the
    # leftmost pair is met first: ab, then (ab, ##c), then (abc, ##d).
    tok = train_wordpiece("abcd", 5 + 4 + 3)
    assert merged_tokens(tok) == ["ab", "abc", "abcd"]


def test_a_merge_raises_the_score_of_pairs_that_share_a_part():
    # Words "cab", "ab", "cd".  Frequencies: c 2 (cab, cd), ##a 1, ##b 2 (cab, ab), a 1, ##d 1.
    # Scores: (c,##a) 1/(2*1), (##a,##b) 1/(1*2), (a,##b) 1/(1*2), (c,##d) 1/(2*1): all 1/2,
    #   so the first pair met wins: "ca".
    # Now c occurs once (only in "cd"): (c,##d) = 1/(1*1) = 1 beats (ca,##b) = 1/(1*2) and
    #   (a,##b) = 1/2 -> "cd", although its own count never changed.
    # Then (ca,##b) and (a,##b) tie at 1/2; "cab" is the earlier word -> "cab".
    # Last, ##b occurs once (in "ab"): (a,##b) = 1 -> "ab".
    tok = train_wordpiece("cab ab cd", 5 + 6 + 4)
    assert merged_tokens(tok) == ["ca", "cd", "cab", "ab"]
    assert [s.score_exact for s in tok.trace] == [Fraction(1, 2), 1, Fraction(1, 2), 1]


def test_score_prefers_rare_parts_over_frequent_pairs():
    # "hug" x3 and "pug" x1: h 3, p 1, ##u 4, ##g 4.  (h,##u) has count 3 but scores
    # 3/(3*4) = 1/4; (p,##u) has count 1 and scores 1/(1*4) = 1/4 too; (##u,##g) 4/(4*4) = 1/4.
    # All tie; "hug" is the first word and (h,##u) its first pair -> "hu".
    # Then hu 3, ##u 1: (hu,##g) 3/(3*4) = 1/4, (p,##u) 1/(1*1) = 1 -> "pu" (count 1 beats count 3).
    tok = train_wordpiece("hug hug pug hug", 5 + 4 + 2)
    assert merged_tokens(tok) == ["hu", "pu"]
    assert [(s.pair_freq, s.left_freq, s.right_freq) for s in tok.trace] == [(3, 3, 4), (1, 1, 1)]


# -- against an independent naive trainer ------------------------------------------


@pytest.mark.parametrize("lowercase", [False, True])
def test_matches_naive_trainer_on_real_text(seeds, lowercase):
    text = seeds[:12000]
    tok = train_wordpiece(text, 500, lowercase=lowercase)
    vocab, merges = naive_train(text, 500, lowercase=lowercase)
    assert vocab_list(tok) == vocab
    assert [
        (s.left, s.right, s.merged, s.pair_freq, s.left_freq, s.right_freq, s.tokens_after) for s in tok.trace
    ] == merges


def test_matches_naive_trainer_with_special_tokens_in_the_text(english):
    text = english[:6000].replace("\n\n", " [SEP] ")
    tok = train_wordpiece(text, 300)
    vocab, merges = naive_train(text, 300)
    assert vocab_list(tok) == vocab
    assert [(s.merged, s.tokens_after) for s in tok.trace] == [(m[2], m[6]) for m in merges]
    assert tok.training.special_occurrences == text.count("[SEP]") > 0


@settings(max_examples=80, deadline=None)
@given(
    st.text(alphabet="abcab  AB.,x\nİ", max_size=100),
    st.integers(min_value=0, max_value=40),
    st.booleans(),
)
def test_matches_naive_trainer_on_random_text(text, extra, lowercase):
    # a tiny alphabet makes ties frequent; İ lower-cases to two characters
    specials = ["[UNK]"]
    probe = train_wordpiece(text, 10_000, specials, lowercase=lowercase)
    size = probe.min_vocab_size + extra
    tok = train_wordpiece(text, size, specials, lowercase=lowercase)
    vocab, merges = naive_train(text, size, specials, lowercase=lowercase)
    assert vocab_list(tok) == vocab
    assert [(s.left, s.right, s.pair_freq, s.left_freq, s.right_freq) for s in tok.trace] == [
        m[:2] + m[3:6] for m in merges
    ]


# -- views -----------------------------------------------------------------------


@pytest.mark.parametrize("n", [None, 1, 2, 17, 150, 400])
def test_with_vocab_size_equals_training_directly(english, multilingual, n):
    text = english + multilingual
    full = train_wordpiece(text, 10_000, lowercase=True)
    size = full.min_vocab_size + (n if n is not None else 0)
    direct = train_wordpiece(text, size, lowercase=True)
    view = full.with_vocab_size(size)
    assert view.vocab_size == direct.vocab_size == size
    assert vocab_list(view) == vocab_list(direct)
    assert view.trace == direct.trace
    for t in (english, multilingual, "Unseen words: zyzzyva, ☃, 1234567."):
        assert view.encode(t) == direct.encode(t)
        assert view.token_spans(t) == direct.token_spans(t)


def test_with_vocab_size_range_and_identity(english):
    tok = train_wordpiece(english, 400)
    lo = tok.min_vocab_size
    with pytest.raises(ValueError, match=rf"{lo}\.\.400"):
        tok.with_vocab_size(401)
    with pytest.raises(ValueError, match=rf"{lo}\.\.400"):
        tok.with_vocab_size(lo - 1)
    with pytest.raises(TypeError):
        tok.with_vocab_size(300.0)
    assert tok.with_vocab_size(400) is tok
    assert tok.with_vocab_size(lo + 3).with_vocab_size(400).vocab_size == 400
    # a view never emits ids beyond its size, and knows no merge rank beyond its trace
    small = tok.with_vocab_size(lo + 10)
    assert max(small.encode(english)) < lo + 10
    assert small.rank_of(lo + 20) is None and tok.rank_of(lo + 20) == 20


def test_training_text_tokens_equals_encoding_the_training_text(english, multilingual):
    text = english + " [SEP] " + multilingual
    full = train_wordpiece(text, 900, lowercase=True)
    for n in (full.min_vocab_size, full.min_vocab_size + 50, 600, full.max_vocab_size):
        view = full.with_vocab_size(n)
        assert view.training_text_tokens() == len(view.encode(text))
    assert WordPieceTokenizer.from_dict(full.to_dict()).training_text_tokens() is None


# -- encoding --------------------------------------------------------------------


@pytest.mark.parametrize("lowercase", [False, True])
def test_encoding_matches_hugging_face_wordpiece_on_real_text(seeds, multilingual, code, lowercase):
    # Our vocabulary in Hugging Face's WordPiece model with its BertPreTokenizer (and Lowercase
    # normalizer): an independent implementation of the same greedy longest-match-first rule.
    tok = train_wordpiece(seeds[:40000], 2500, lowercase=lowercase)
    hf = hf_reference(tok)
    for text in (seeds, multilingual, code, "İstanbul ΟΔΟΣ [CLS]x[SEP]y " + "a" * 100 + " " + "b" * 101):
        ids = tok.encode(text)
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


def test_encoding_matches_the_courses_encode_word(english):
    tok = train_wordpiece(english, 600)
    vocab = set(tok.vocab.values())
    for word, _span in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(english + " H0gging Zebra"):
        assert pieces(tok, word) == naive_encode_word(word, vocab)


def test_long_words_become_unknown():
    tok = train_wordpiece("a" * 5 + " ab", 20, max_input_chars_per_word=5)
    assert tok.encode("aaaaa") != [tok.unknown_id]
    assert tok.encode("aaaaaa") == [tok.unknown_id]
    assert train_wordpiece("ab", 20).max_input_chars_per_word == 100


def test_special_tokens_are_split_out_first(course):
    # specials match in the raw text, even glued to a word; the rest is encoded as usual
    assert pieces(course, "[CLS]Hugging[SEP]") == ["[CLS]", "Hugg", "##i", "##n", "##g", "[SEP]"]
    # they never reach the training words: '[' and 'P' are not in the alphabet of this text
    tok = train_wordpiece("ab [PAD] ab", 20)
    assert "[" not in tok.vocab.values() and "P" not in tok.vocab.values()


def test_whitespace_only_and_empty_text(course):
    assert course.encode("") == [] == course.encode(" \n\t ")
    assert course.token_spans("  ") == []


# -- decoding and the whitespace normal form ---------------------------------------------


def test_decode_joins_continuations_and_spaces_words(course):
    ids = course.encode("Hugging Face,\n this.")
    assert course.decode(ids) == "Hugging Face , this ."
    assert course.decode(course.encode("H0gging!")) == "[UNK] [UNK]"  # '!' is not in the course's alphabet
    # a leading continuation keeps its prefix, as in Hugging Face's WordPiece decoder
    assert course.decode(course.encode("Hugging")[1:]) == "##ing"
    with pytest.raises(ValueError, match="unknown token id 70"):
        course.decode([70])


def test_normal_form_is_the_bert_words_joined_by_one_space(english, code):
    tok = train_wordpiece(english, 300)
    hf = pre_tokenizers.BertPreTokenizer()
    for text in (english, code):
        assert tok.normalize(text) == " ".join(w for w, _ in hf.pre_tokenize_str(text))


@pytest.mark.parametrize("lowercase", [False, True])
def test_round_trip_on_real_text(english, multilingual, code, lowercase):
    text = english + multilingual + code
    tok = train_wordpiece(text, 1500, lowercase=lowercase)
    ids = tok.encode(text)
    assert tok.unknown_id not in ids  # every character is in the alphabet, no word is over 100 characters
    assert tok.decode(ids) == tok.normalize(text)
    assert tok.normalize("Hi,  İZMİR\n") == ("hi , i̇zmi̇r" if lowercase else "Hi , İZMİR")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80), st.booleans())
def test_round_trip_property(text, lowercase):
    # Trained on the text itself, every character of every word is in the alphabet (as a first
    # character or a ##-piece where it occurs), so no word becomes [UNK], at any vocabulary size.
    tok = train_wordpiece(text, 200, lowercase=lowercase)
    for view in (tok, tok.with_vocab_size(tok.min_vocab_size)):
        ids = view.encode(text)
        assert view.unknown_id not in ids
        assert view.decode(ids) == view.normalize(text)


# -- spans and offsets --------------------------------------------------------------


def test_token_spans_of_the_course_example(course):
    # "Hugging" -> Hugg ##i ##n ##g as printed; "Face" is not in the vocabulary but "Fac" is
    # (merge 2), so greedy matching gives Fac ##e.  The space belongs to no token.
    spans = course.token_spans("Hugging Face")
    assert [(s.start, s.end, s.display, s.is_continuation) for s in spans] == [
        (0, 4, "Hugg", False),
        (4, 5, "i", True),
        (5, 6, "n", True),
        (6, 7, "g", True),
        (8, 11, "Fac", False),
        (11, 12, "e", True),
    ]
    assert [s.token_bytes for s in spans] == [b"Hugg", b"##i", b"##n", b"##g", b"Fac", b"##e"]
    # merge ranks: "Hugg" is the 18th merged token (rank 17), "Fac" the 3rd; alphabet pieces have none
    assert [s.rank for s in spans] == [17, None, None, None, 3, None]


def test_token_spans_cover_the_original_text_when_lowercasing(multilingual, english):
    text = "İstanbul'da İZMİR ve ΟΔΟΣ. " + english[:2000] + multilingual
    tok = train_wordpiece(text, 800, lowercase=True)
    spans = tok.token_spans(text)
    assert [s.id for s in spans] == tok.encode(text)
    hf = hf_reference(tok).encode(text, add_special_tokens=False)
    assert [(s.start, s.end) for s in spans] == hf.offsets  # Hugging Face maps offsets back too
    for s in spans:
        if not s.is_partial and not s.is_special:
            # the covered original text lower-cases to the piece (without its prefix)
            piece = s.token_bytes.decode()
            assert lowercase_text(text[s.start : s.end]) == (piece[2:] if s.is_continuation else piece)
            assert s.display == text[s.start : s.end]


def test_dotted_capital_i_splits_inside_one_character():
    # 'İ' lower-cases to 'i' + U+0307.  With no merges (vocabulary = the alphabet), "İa" is the
    # pieces 'i', '##\u0307', '##a': the first two both come from character 0 and are partial.
    tok = train_wordpiece("İa", 5 + 3, lowercase=True)
    assert vocab_list(tok)[5:] == ["##a", "##\u0307", "i"]  # sorted by code point: '#' < 'i'
    spans = tok.token_spans("İa")
    assert [(s.start, s.end, s.is_partial, s.display) for s in spans] == [
        (0, 1, True, "i"),
        (0, 1, True, "\u0307"),
        (1, 2, False, "a"),
    ]


def test_unknown_words_are_one_special_span(course):
    spans = course.token_spans("Hi H0gging!")
    unk = [s for s in spans if s.id == course.unknown_id]
    assert [(s.start, s.end, s.display, s.token_bytes, s.is_special) for s in unk] == [
        (3, 10, "H0gging", b"[UNK]", True),
        (10, 11, "!", b"[UNK]", True),  # '!' is not in the course's alphabet either
    ]


# -- persistence -----------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path, english):
    tok = train_wordpiece(english, 500, lowercase=True)
    path = tmp_path / "wp.json"
    tok.save(path)
    back = WordPieceTokenizer.load(path)
    assert vocab_list(back) == vocab_list(tok) and back.trace == tok.trace
    assert back.encode(english) == tok.encode(english) and back.lowercase
    assert back.min_vocab_size == tok.min_vocab_size
    view = tok.with_vocab_size(tok.min_vocab_size + 7)
    view.save(path)
    small = WordPieceTokenizer.load(path)
    assert small.vocab_size == view.vocab_size and small.trace == view.trace
    assert small.to_dict()["format"] == "bpe-playground/wordpiece"
    with pytest.raises(ValueError, match="bpe-playground/wordpiece"):
        WordPieceTokenizer.from_dict({"format": "bpe-playground/bpe"})
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a JSON"):
        WordPieceTokenizer.load(path)


def test_built_from_a_plain_vocabulary():
    vocab = ["[PAD]", "[UNK]", "un", "##aff", "##able", "a", "##a", "##b"]
    tok = WordPieceTokenizer(vocab, ["[PAD]", "[UNK]"])
    assert pieces(tok, "unaffable") == ["un", "##aff", "##able"]
    assert tok.min_vocab_size == 2  # [PAD] [UNK], then "un" is the first multi-character token
    with pytest.raises(ValueError, match="appears twice"):
        WordPieceTokenizer(["[UNK]", "a", "a"], ["[UNK]"])
    with pytest.raises(ValueError, match=r"special token '\[CLS\]' is not in vocab"):
        WordPieceTokenizer(["[UNK]", "a"], ["[UNK]", "[CLS]"])


# -- errors ---------------------------------------------------------------------------


def test_vocab_size_below_the_initial_vocabulary_names_the_minimum():
    with pytest.raises(ValueError, match=r"at least 45 \(5 special tokens \+ 40 alphabet tokens"):
        train_wordpiece(COURSE_TEXT, 44)
    assert train_wordpiece(COURSE_TEXT, 45).vocab_size == 45


def test_bad_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="text must be a str"):
        train_wordpiece(b"abc", 100)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train_wordpiece("abc", 100.0)
    with pytest.raises(ValueError, match="unknown token '\\[UNK\\]' must be one of the special tokens"):
        train_wordpiece("abc", 100, special_tokens=["[PAD]"])
    with pytest.raises(ValueError, match="continuing_subword_prefix"):
        train_wordpiece("abc", 100, continuing_subword_prefix="")
    with pytest.raises(ValueError, match="unpaired surrogate U\\+D800"):
        train_wordpiece("ab\ud800", 100)
    with pytest.raises(ValueError, match="given twice"):
        train_wordpiece("abc", 100, special_tokens=["[UNK]", "[UNK]"])
    tok = train_wordpiece("abc", 100)
    with pytest.raises(TypeError):
        tok.encode(None)
    with pytest.raises(ValueError, match="surrogate"):
        tok.encode("x\udfff")


def test_empty_text_trains_only_the_specials_and_says_why():
    tok = train_wordpiece("", 100)
    assert vocab_list(tok) == list(DEFAULT_SPECIAL_TOKENS)
    assert "no pair is left" in tok.training.stop_reason


def test_a_special_token_may_share_its_string_with_a_piece():
    # "##a" as a special token is cut out of the raw text, yet "banana" still needs the piece
    # "##a": the two are different ids, the special one first.
    tok = train_wordpiece("banana ##a", 30, special_tokens=["[UNK]", "##a"])
    assert tok.special_tokens == {"[UNK]": 0, "##a": 1}
    # the only word is "banana" (the special is cut out): alphabet b, ##a, ##n, sorted by code point
    assert vocab_list(tok)[2:5] == ["##a", "##n", "b"]
    assert tok.encode("##a") == [1]
    assert tok.with_vocab_size(5).encode("banana") == [4, 2, 3, 2, 3, 2]  # b ##a ##n ##a ##n ##a


def test_custom_prefix_and_specials():
    tok = train_wordpiece(
        "hugging hugs", 40, special_tokens=["<unk>"], unk_token="<unk>", continuing_subword_prefix="@@"
    )
    # alphabet: h, @@u, @@g, @@i, @@n, @@s; training runs until both words are single tokens
    assert vocab_list(tok)[:7] == ["<unk>", "@@g", "@@i", "@@n", "@@s", "@@u", "h"]
    assert pieces(tok.with_vocab_size(7), "hugs") == ["h", "@@u", "@@g", "@@s"]
    assert pieces(tok, "hugs") == ["hugs"] and pieces(tok, "hugging") == ["hugging"]
    assert tok.training.stop_reason is not None
    assert tok.decode(tok.encode("hugging hugs")) == "hugging hugs"
    assert tok.encode("xyz") == [tok.special_tokens["<unk>"]]


def test_progress_callback_and_cancel(english):
    seen = []
    tok = train_wordpiece(english, 400, progress=lambda phase, done, total: seen.append((phase, done, total)))
    n = 400 - tok.min_vocab_size
    assert seen[0][:2] == ("count", 0) and seen[-1] == ("merge", n, n)

    def cancel(phase, done, total):
        if phase == "merge" and done >= 10:
            raise TrainingCancelled

    with pytest.raises(TrainingCancelled):
        train_wordpiece(english, 400, progress=cancel)
