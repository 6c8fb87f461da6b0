"""The Learn page in AppTest: every lesson at its link, its headline numbers against their sources, Previous/Next,
presentation links, and "Try it on your text" landing on the right page with the right settings.

The expected numbers come from :mod:`tests.learn_sources` (the seeds' printed outputs) or from the
libraries that define them (tiktoken's own registry, Hugging Face ``tokenizers``, the
``sentencepiece`` package), never from the page or from ``bpe_core``.
"""

from __future__ import annotations

import pytest
from tokenizers import normalizers, pre_tokenizers

from tests import learn_sources as src
from tests.app.learn_helpers import chip_row, chip_rows, fact, offsets, open_lesson, page_text
from ui import links
from ui import state_keys as sk
from ui.algorithms import view_of
from ui.lessons.catalogue import LESSONS, slugs
from ui.lessons.spaces import CODE  # the lesson's input (its outputs are what is checked)

SLUGS = slugs()


def spaced(ids) -> str:
    return " ".join(str(i) for i in ids)


# -- the page and its lessons ---------------------------------------------------------------------------------------


def test_the_lessons_are_the_issues_and_in_its_order():
    wanted = ["bytes", "bpe-by-hand", "pretokenization", "tie-breaking", "course-bpe", "wordpiece", "unigram",
              "efficiency", "spaces-and-numbers", "special-tokens", "glitch-tokens", "naive-vs-fast", "vocabulary",
              "sentencepiece"]  # fmt: skip
    assert [s for s in wanted if s in SLUGS] == SLUGS  # in the issue's order (the textbook ones join later)
    assert len(set(SLUGS)) == len(SLUGS)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_lesson_renders_at_its_link(slug):
    at = open_lesson(slug)
    lesson = next(x for x in LESSONS if x.slug == slug)
    assert [t.value for t in at.title] == [lesson.title]
    assert at.session_state[sk.LESSON] == slug
    assert at.query_params["lesson"] == slug  # the link reopens it
    assert at.button(key=sk.LESSON_TRY).label == "Try it on your text"
    assert not at.error


def test_an_unknown_lesson_in_the_link_opens_the_first():
    assert links.parse_query({"lesson": "no-such-lesson"}) == {}
    assert links.parse_query({"lesson": "wordpiece"}) == {sk.LESSON: "wordpiece"}
    at = open_lesson("no-such-lesson")
    assert at.session_state[sk.LESSON] == SLUGS[0]


def test_next_walks_every_lesson_and_previous_comes_back():
    at = open_lesson(None)
    assert at.session_state[sk.LESSON] == SLUGS[0]
    assert at.button(key=sk.LESSON_PREV).disabled
    seen = [at.title[0].value]
    for slug in SLUGS[1:]:
        at.button(key=sk.LESSON_NEXT).click().run()
        assert not at.exception, at.exception
        assert at.session_state[sk.LESSON] == slug and at.query_params["lesson"] == slug
        seen.append(at.title[0].value)
    assert seen == [x.title for x in LESSONS]
    assert at.button(key=sk.LESSON_NEXT).disabled
    at.button(key=sk.LESSON_PREV).click().run()
    assert at.session_state[sk.LESSON] == SLUGS[-2]
    at.selectbox(key=sk.LESSON).set_value(SLUGS[0]).run()  # the picker jumps anywhere
    assert at.title[0].value == LESSONS[0].title


def test_present_link_opens_the_lesson_in_presentation_mode():
    at = open_lesson("wordpiece", {"present": "1"})
    assert at.session_state[sk.PRESENT] is True
    assert at.title[0].value == next(x.title for x in LESSONS if x.slug == "wordpiece")
    assert at.query_params["present"] == "1" and at.query_params["lesson"] == "wordpiece"


# -- each lesson's numbers, against their sources --------------------------------------------------------------------


def test_bytes_lesson():
    at = open_lesson("bytes")
    text = page_text(at)
    assert spaced(src.HELLO_BYTES) in text
    assert f"code point {src.E_HAT_CODE_POINT}" in text and spaced(src.E_HAT_BYTES) in text
    assert f"{len(src.SMILE_BYTES)} bytes" in text
    # the box follows typing: a typed text's bytes (UTF-8 of "naïve": ï is 195 175)
    at.text_area(key=sk.lesson_key("bytes", "text")).set_value("naïve").run()
    table = at.table[0].value
    assert table.loc["ï", "UTF-8 (decimal)"] == "195 175" and table.loc["n", "Code point"] == "U+006E = 110"
    assert fact(at, "UTF-8 bytes")[0] == "6" and fact(at, "Characters")[0] == "5"


def test_pretokenization_lesson():
    at = open_lesson("pretokenization")
    text = page_text(at)
    raw, normalized = src.NORMALIZED
    assert normalizers.BertNormalizer(lowercase=True).normalize_str(raw) == normalized  # the course's output
    assert f"{raw} → {normalized}" in text
    rows = dict(chip_rows(at))
    _text, split = src.GPT2_SPLIT
    assert chip_row(at, "GPT-2 (r50k_base)") == split
    assert "lone space" in text  # the seed's extra pre-token is explained
    course = src.COURSE_SENTENCE
    bert = [(w, o) for w, o in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(course)]
    gpt2 = pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(course)
    spm = pre_tokenizers.Metaspace().pre_tokenize_str(course)
    assert bert == src.SEED_BERT_OFFSETS[:1] + bert[1:] and gpt2 == src.SEED_GPT2_OFFSETS  # tokenizers = the seed
    assert rows["BERT-style"] == offsets(bert)
    assert rows["GPT-2 byte-level (Ġ)"] == offsets(gpt2)
    assert rows["SentencePiece-style (▁)"] == offsets(spm)
    assert "two" in text and "16–19" in text  # the seed's lost space is named


def test_wordpiece_lesson():
    at = open_lesson("wordpiece")
    text = page_text(at)
    vocab = src.seed_wordpiece_vocab() or src.WORDPIECE_VOCAB_70
    assert chip_row(at, "Vocabulary in order") == vocab
    (left, right), score = src.WORDPIECE_FIRST
    assert f"{left} + {right} → {left + right[2:]}" in text and f"score {score:g}" in text
    for word, pieces in src.WORDPIECE_WORDS.items():
        assert " ".join(pieces) in text, word
    table = at.table[0].value
    assert table.loc["#1", "Score"] == "2/(5×2) = 0.2"  # freq(ab) 2 (about, able), freq(a) 5, freq(##b) 2
    at.text_area(key=sk.lesson_key("wordpiece", "text")).set_value("Hugs").run()
    assert chip_row(at, "Hugs →") == ["Hug", "##s"]  # course vocabulary: Hug, then ##s


def test_efficiency_lesson(tiktoken_official):
    at = open_lesson("efficiency")
    text = page_text(at)
    sentence = src.EFFICIENCY_SENTENCE
    n_bytes = len(sentence.encode())
    assert n_bytes == 81 != src.SEED_EFFICIENCY_BYTES
    table = at.table[0].value
    assert table.loc["One token per word (split on spaces)", "Tokens"] == str(src.SEED_EFFICIENCY_WORDS)
    assert table.loc["One token per byte", "Tokens"] == str(n_bytes)
    for label, name in [("GPT-2 (r50k_base)", "r50k_base"), ("GPT-4 (cl100k_base)", "cl100k_base"),
                        ("GPT-4o (o200k_base)", "o200k_base")]:  # fmt: skip
        n = len(tiktoken_official(name).encode(sentence))
        assert table.loc[label, "Tokens"] == str(n)
        assert table.loc[label, "Bytes per token"] == f"{n_bytes / n:.2f}"
    assert any(i.startswith("Yours:") for i in table.index)  # the learner's tokenizer
    assert f"prints {src.SEED_EFFICIENCY_BYTES} bytes" in text and "81 bytes" in text


def test_spaces_and_numbers_lesson(tiktoken_official):
    at = open_lesson("spaces-and-numbers")
    text = page_text(at)
    assert tiktoken_official("r50k_base").encode(src.SPACES) == src.SPACES_GPT2
    assert tiktoken_official("cl100k_base").encode(src.SPACES) == src.SPACES_CL100K
    assert src.seed_ints("002", r"## (\[220[0-9, ]+\])") in ([], src.SPACES_GPT2)
    assert spaced(src.SPACES_GPT2) in text and spaced(src.SPACES_CL100K) in text
    table = at.table[0].value
    for label, name in [("GPT-2 (r50k_base)", "r50k_base"), ("GPT-4 (cl100k_base)", "cl100k_base")]:
        assert table.loc["Indented code", label] == len(tiktoken_official(name).encode(CODE))


def test_special_tokens_lesson(tiktoken_official):
    at = open_lesson("special-tokens")
    text = page_text(at)
    eot = "<|endoftext|>"
    assert tiktoken_official("r50k_base").encode(eot, allowed_special="all") == [src.ENDOFTEXT_GPT2]
    assert tiktoken_official("cl100k_base").encode(eot, allowed_special="all") == [src.ENDOFTEXT_CL100K]
    assert str(src.ENDOFTEXT_GPT2) in text and str(src.ENDOFTEXT_CL100K) in text
    assert spaced(tiktoken_official("r50k_base").encode_ordinary(eot)) in text
    assert "3 occurrences cut out" in text  # the three separators of the box's documents
    with_special, without = [[t for t, _ in chips] for label, chips in chip_rows(at) if label == "Pre-tokens"]
    assert with_special.count(eot) == 3 and eot not in without and without.count("endoftext") == 3


def test_glitch_tokens_lesson(tiktoken_official):
    at = open_lesson("glitch-tokens")
    text = page_text(at)
    gpt2 = tiktoken_official("r50k_base")
    assert gpt2.encode(src.MAGIKARP) == [src.MAGIKARP_ID]
    # tiktoken's rank is the id; the first 256 ranks are the bytes, so the merge is #(id - 255)
    assert gpt2._mergeable_ranks[src.MAGIKARP.encode()] == src.MAGIKARP_ID
    assert str(src.MAGIKARP_ID) in text and f"merge #{src.MAGIKARP_ID - 255:,}" in text
    assert spaced(tiktoken_official("cl100k_base").encode(src.MAGIKARP)) in text
    assert "never appear" in text


def test_sentencepiece_lesson():
    import importlib.resources

    import sentencepiece as spm

    at = open_lesson("sentencepiece")
    text = page_text(at)
    path = importlib.resources.files("mistral_common") / "data" / "tokenizer.model.v1"  # the file Mistral ships
    sp = spm.SentencePieceProcessor(model_file=str(path))
    pieces = sp.encode("Hello 世界 🦙", out_type=str)
    assert pieces[0] == "▁Hello"  # the dummy prefix
    assert " ".join(pieces) in text
    fallback = [p for p in pieces if p.startswith("<0x")]
    assert fallback == ["<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"]  # 🦙's four UTF-8 bytes
    assert f"{len(fallback)} byte pieces" in text
    assert "Your Unigram" in text


def test_vocabulary_lesson():
    at = open_lesson("vocabulary")
    text = page_text(at)
    assert "Longest learned token" in text and "The same training on the sample" in text


# -- "Try it on your text" --------------------------------------------------------------------------------------------

TRY = {
    "bytes": ("BPE Playground", {sk.ALGORITHM: "bpe", sk.VOCAB_SIZE: 257}),  # 256 bytes + <|endoftext|>: no merge
    "bpe-by-hand": ("Merges", {sk.ALGORITHM: "bpe", sk.PATTERN: "none", sk.MERGE_STEP: 1}),
    "tie-breaking": ("Merges", {sk.ALGORITHM: "bpe", sk.MERGE_STEP: 1}),  # not trained yet: the first merge
    "course-bpe": ("Merges", {sk.ALGORITHM: "bpe", sk.PATTERN: "gpt2", sk.MERGE_STEP: 1}),
    "unigram": ("Encode step by step", {sk.ALGORITHM: "unigram", sk.ENCODE_WORD: "unhug"}),
    "naive-vs-fast": ("BPE Playground", {sk.ALGORITHM: "bpe"}),
    "pretokenization": ("Insights", {sk.INS_TAB: "Pre-tokenizer playground", sk.INS_PATTERN_BASE: "cl100k"}),
    "wordpiece": ("Merges", {sk.ALGORITHM: "wordpiece", sk.MERGE_STEP: 1}),
    "efficiency": ("Compare tokenizers", {sk.COMPARE_TOKENIZERS: ["bpe", "gpt2", "cl100k_base", "o200k_base"]}),
    "spaces-and-numbers": ("Compare tokenizers", {sk.COMPARE_TOKENIZERS: ["bpe", "gpt2", "cl100k_base"]}),
    "special-tokens": ("BPE Playground", {view_of("bpe").special_tokens_key: ["<|endoftext|>"]}),
    "glitch-tokens": ("Insights", {sk.INS_TAB: "Under-used tokens"}),
    "vocabulary": ("Insights", {sk.INS_TAB: "Vocabulary diff"}),
    "sentencepiece": (
        "Compare tokenizers",
        {sk.ALGORITHM: "unigram", sk.COMPARE_TOKENIZERS: ["unigram", "mistral_v1"]},
    ),
}
"""Lesson -> (title of the page "Try it on your text" opens, session values it must have there)."""


@pytest.mark.parametrize("slug", SLUGS)
def test_try_it_on_your_text_opens_the_page_with_the_settings(slug):
    title, wanted = TRY[slug]
    pasted = "Tokenizers cut text into pieces; learners paste their own text here. " * 3
    at = open_lesson(slug, {"src": "paste", "text": pasted}, **{sk.SERVER_VIEW: True})
    at.button(key=sk.LESSON_TRY).click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [title]
    for key, value in wanted.items():
        assert at.session_state[key] == value, key
    assert at.session_state[sk.SOURCE] == "Paste" and at.session_state[sk.PASTE_TEXT] == pasted  # the learner's text
    assert "lesson" not in at.query_params  # the new page's link


def test_tie_breaking_opens_merges_at_the_learners_first_tie():
    from bpe_core.textbook.bpe import count_words, training_steps

    pasted = "the cat and the hat sat on the mat with a bat and a rat " * 4
    at = open_lesson(None, {"src": "paste", "text": pasted}, **{sk.SERVER_VIEW: True})
    at.switch_page("app_pages/playground.py").run()  # the Playground trains the learner's BPE
    at.session_state[sk.LESSON] = "tie-breaking"
    at.switch_page("app_pages/learn.py").run()
    at.button(key=sk.LESSON_TRY).click().run()
    assert not at.exception, at.exception
    words = count_words(pasted, "gpt2", ["<|endoftext|>"])
    first_tie = next(
        s.rank + 1
        for s in training_steps(words, 300)
        if sum(n == max(s.pair_counts.values()) for n in s.pair_counts.values()) > 1
    )
    assert at.title[0].value == "Merges" and at.session_state[sk.MERGE_STEP] == first_tie > 1


def test_a_first_visit_is_offered_the_learn_page_on_the_playground(app):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP

    first = AppTest.from_file(str(APP), default_timeout=60)
    first.session_state[sk.SERVER_VIEW] = True
    first.run()
    assert any(p.proto.page == "learn" for p in first.get("page_link"))
    # the app fixture opens from a link with a setting (size): no pointer then; nor in presentation mode
    assert not any(p.proto.page == "learn" for p in app.get("page_link"))


HOSTILE = 'x <img src=x onerror="window.__pwned=1"> </span><b>bold</b> <script>1</script>'


NO_INPUT_BOX = ("course-bpe", "naive-vs-fast", "vocabulary")
"""The lessons whose example is fixed (the course's corpus, the sample's sizes, the learner's tokenizer)."""


@pytest.mark.parametrize("slug", NO_INPUT_BOX)
def test_the_lessons_without_an_input_box_have_none(slug):
    at = open_lesson(slug)
    assert not any(t.key == sk.lesson_key(slug, "text") for t in at.text_area)


@pytest.mark.parametrize("slug", [s for s in SLUGS if s not in NO_INPUT_BOX])
def test_typed_markup_is_shown_as_text(slug):
    at = open_lesson(slug)
    key = sk.lesson_key(slug, "text")
    at.text_area(key=key).set_value(HOSTILE).run()
    assert not at.exception, at.exception
    bodies = "\n".join(h.proto.body for h in at.get("html"))
    assert "<img" not in bodies and "<script>1" not in bodies and "<b>bold" not in bodies
    assert at.text_area(key=key).value == HOSTILE  # the learner's text is kept
