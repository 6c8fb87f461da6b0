"""Every bad input of issue 7, on the page (AppTest): a clear message, nothing lost, the app still usable.

The engine-level counterparts (precise exceptions, correct behaviour) are in
tests/engine/test_bad_input.py.  Expected values here come from the engine called
directly, or are derived by hand in the comments.
"""

from __future__ import annotations

import pytest

from bpe_core import MAX_UPLOAD_BYTES, train_bpe, train_wordpiece
from bpe_core.unigram import train_unigram
from tests.conftest import html_bodies, metric, sample, token_texts, unmark_whitespace

SPECIALS = ("<|endoftext|>",)


def paste(at, text: str):
    """Switch the sidebar to Paste and type ``text``; returns the AppTest after the rerun."""
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="paste_text").input(text).run()
    assert not at.exception, at.exception
    return at


def upload(at, name: str, data: bytes, mime: str = "text/plain"):
    at.radio(key="source").set_value("Upload").run()
    at.file_uploader[0].set_value((name, data, mime)).run()
    assert not at.exception, at.exception
    return at


def errors(at) -> str:
    return "\n".join(e.value for e in at.error)


def infos(at) -> str:
    return "\n".join(i.value for i in at.info)


def stop_line(at) -> str:
    """The one quiet line that says training stopped early (a caption, never a box: issue 17.1), and the
    full reason from the "How this tokenizer was trained" details."""
    assert not at.info, infos(at)
    (line,) = [c.value for c in at.caption if "Training stopped at" in c.value]
    return line + "\n" + "\n".join(m.value for m in at.markdown if "stopped early" in m.value)


def shown_text(at) -> str:
    """The text the coloured view shows, whitespace markers undone."""
    return unmark_whitespace("".join(token_texts(html_bodies(at))))


# --- text that is empty, blank, tiny or has nothing to merge -------------------------------------------


def test_empty_paste_asks_for_text(app):
    app.radio(key="source").set_value("Paste").run()
    assert not app.exception
    assert "Paste some text" in infos(app)
    assert not app.metric  # nothing to count yet, and no crash
    # the app stays usable: going back to a sample tokenizes again
    app.radio(key="source").set_value("Sample").run()
    assert metric(app, "Characters") == f"{len(sample('english')):,}"


def test_whitespace_only_paste_is_tokenized_and_says_so(app):
    text = "   \n\t  \n"
    paste(app, text)
    assert "only whitespace" in infos(app)
    tok = train_bpe(text, 1000, SPECIALS)
    assert metric(app, "Tokens") == f"{len(tok.encode(text)):,}"
    assert shown_text(app) == text
    assert app.text_area(key="paste_text").value == text


def test_single_character_stops_training_and_explains(app):
    paste(app, "x")
    # one byte, no pair at all: no merges, vocabulary 256 + 1 special = 257 of the 1000 asked
    assert "Training stopped at 257 of the 1,000 tokens asked for" in stop_line(app)
    assert "257 tokens instead of 1000" in stop_line(app)
    assert metric(app, "Tokens") == "1"
    assert shown_text(app) == "x"


def test_text_without_repeated_pairs_reports_the_size_reached(app):
    paste(app, "abcdefg")
    # 6 adjacent pairs, each once: 6 merges make the word one token, then nothing is left:
    # 256 bytes + 1 special + 6 merges = 263 tokens.
    assert "263 tokens instead of 1000" in stop_line(app)
    assert metric(app, "Tokens") == "1"
    # the slider spans exactly the sizes that exist
    assert (app.slider[0].min, app.slider[0].max) == (257, 263)


# --- settings the engine refuses -------------------------------------------------------------------------


def test_wordpiece_vocab_below_its_alphabet_names_the_minimum_and_keeps_settings(app):
    app.radio(key="algorithm").set_value("wordpiece").run()
    app.number_input(key="max_vocab").set_value(10).run()
    assert not app.exception
    text = sample("english")
    with pytest.raises(ValueError) as exc:
        train_wordpiece(text, 10)
    assert str(exc.value) in errors(app)
    assert app.number_input(key="max_vocab").value == 10
    assert app.radio(key="algorithm").value == "wordpiece"
    # fixing the number recovers without touching anything else
    app.number_input(key="max_vocab").set_value(1000).run()
    assert not app.error and metric(app, "Tokens")


@pytest.mark.parametrize(
    ("specials", "needle"),
    [([""], "is empty"), (["<|a|>", "<|a|>"], "given twice")],
)
def test_bad_special_tokens_are_reported_and_kept(app, specials, needle):
    # The widget itself refuses empty or repeated entries; a value set programmatically (as a
    # shared link or a future widget could) must still not crash the page.
    app.multiselect(key="special_tokens").set_value(specials).run()
    assert not app.exception
    assert needle in errors(app)
    assert app.multiselect(key="special_tokens").value == specials


def test_overlapping_special_tokens_take_the_longest_match(app):
    text = "a<|x|><|y|>b <|x|> c"
    app.multiselect(key="special_tokens").set_value(["<|x|>", "<|x|><|y|>"]).run()
    paste(app, text)
    assert not app.error
    tok = train_bpe(text, 1000, ["<|x|>", "<|x|><|y|>"])
    ids = tok.encode(text)
    # longest first: "<|x|><|y|>" is one special token (id 257), the lone "<|x|>" the other (256)
    assert ids.count(257) == 1 and ids.count(256) == 1
    assert metric(app, "Tokens") == f"{len(ids):,}"
    assert "<|x|><|y|>" in token_texts(html_bodies(app))


# --- uploads ---------------------------------------------------------------------------------------------


def test_binary_upload_is_refused_and_the_previous_upload_stays(app):
    good = "A good upload, a good upload, a good text.\n"
    upload(app, "good.txt", good.encode())
    assert metric(app, "Characters") == f"{len(good):,}"
    upload(app, "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\xff\xfe")
    assert "looks like a binary file" in errors(app)
    assert "previous upload, good.txt" in "\n".join(c.value for c in app.caption)
    assert metric(app, "Characters") == f"{len(good):,}"


def test_latin1_upload_says_how_to_fix_it(app):
    data = "Café crème, déjà vu.\n".encode("latin-1")
    upload(app, "french.txt", data)
    # "Caf" is 3 bytes, then é is the single byte 0xE9 in Latin-1, which cannot start a UTF-8 character
    # followed by "'" ... (0xE9 wants two continuation bytes; " c" are not)
    assert "not valid UTF-8: byte 0xE9 at offset 3" in errors(app)
    assert "re-save it as UTF-8" in errors(app)
    assert app.radio(key="source").value == "Upload"


def test_empty_file_upload(app):
    upload(app, "empty.txt", b"")
    assert "empty.txt is empty (0 bytes)" in errors(app)


def test_upload_over_the_limit_is_refused_with_the_limit_named(app):
    data = b"a" * (MAX_UPLOAD_BYTES + 1)
    upload(app, "huge.txt", data)
    assert f"over the {MAX_UPLOAD_BYTES // 2**20} MiB upload limit" in errors(app)


def test_utf8_bom_is_dropped(app):
    upload(app, "bom.txt", "\ufeffhello hello".encode())
    assert metric(app, "Characters") == "11"


# --- odd characters pasted -------------------------------------------------------------------------------

ODD_TEXTS = {
    "nul": "before\x00after and\x00again",
    "combining": "e\u0301 vs \u00e9; a\u0308\u0304 stacked; Z\u0351\u0352\u0353a\u0354lgo",
    "rtl": "שלום עולם! مرحبا بالعالم 123 — mixed with English.",
    "zwj": "family 👨\u200d👩\u200d👧\u200d👦, flag 🏳️\u200d🌈, skin 👋🏽 and 🧑🏿\u200d💻 coders",
    "long_word": "x" * 50_000 + "y" * 50_000,
}


@pytest.mark.parametrize("name", list(ODD_TEXTS))
def test_odd_text_is_tokenized_exactly(app, name):
    text = ODD_TEXTS[name]
    paste(app, text)
    assert not app.error
    tok = train_bpe(text, 1000, SPECIALS)
    ids = tok.encode(text)
    assert metric(app, "Tokens") == f"{len(ids):,}"
    assert metric(app, "Characters") == f"{len(text):,}"
    assert metric(app, "Bytes (UTF-8)") == f"{len(text.encode()):,}"
    if name != "long_word":
        assert shown_text(app) == text.replace("\x00", "␀") or shown_text(app) == text
    assert app.text_area(key="paste_text").value == text


def test_long_word_then_text_is_drawn_in_part_with_exact_tokens_and_a_note(app):
    # 100 KB without a space, then ordinary text: the drawing stops after the first pre-token
    # boundary past its cap, so it shows exactly the whole text's first tokens, and says so.
    text = ODD_TEXTS["long_word"] + " and then an ordinary sentence follows." * 1000
    paste(app, text)
    tok = train_bpe(text, 1000, SPECIALS)
    spans = tok.token_spans(text)
    drawn = token_texts(html_bodies(app))
    assert 0 < len(drawn) < len(spans)
    assert drawn == [s.display for s in spans[: len(drawn)]]
    assert f"Showing the first {len(drawn):,} of {len(spans):,} tokens" in html_bodies(app)
    assert metric(app, "Tokens") == f"{len(spans):,}"


def test_replacement_character_from_a_lone_surrogate_is_tokenized(app):
    # A browser cannot send an unpaired surrogate: its UTF-8 encoder turns one into U+FFFD before the
    # text reaches the server (the real-browser test pastes one).  The engine refuses a raw surrogate
    # with the code point named (tests/engine/test_bad_input.py); here is what the page actually receives.
    text = "half an emoji: \ufffd and more"
    paste(app, text)
    assert not app.error
    assert metric(app, "Bytes (UTF-8)") == f"{len(text.encode()):,}"  # U+FFFD is 3 bytes: EF BF BD
    assert shown_text(app) == text


def test_other_pages_say_it_in_one_line(app):
    paste(app, "abcdefg abcdefg")
    # GPT-2 cuts "abcdefg" and " abcdefg": 6 merges make "abcdefg" one token in both, a 7th joins
    # the space to it; then each pre-token is one token: 256 bytes + 1 special + 7 merges = 264 of 1,000
    assert "264 tokens instead of 1000" in stop_line(app)
    for page in ("app_pages/merges.py", "app_pages/insights.py"):
        app.switch_page(page).run()
        assert not app.exception
        captions = "\n".join(c.value for c in app.caption)
        assert "Training stopped at 264 of the 1,000 tokens asked for" in captions
        assert "instead of" not in infos(app)


def test_unigram_stopping_short_names_its_own_reason(app):
    app.radio(key="algorithm").set_value("unigram").run()
    paste(app, "abc abd")
    line = stop_line(app)
    tok = train_unigram("abc abd", 1000)
    assert f"Training stopped at {tok.max_vocab_size:,} of the 1,000 tokens asked for" in line
    assert "seed vocabulary has no more pieces" in line
    assert "no pair" not in line  # BPE's reason, not Unigram's
