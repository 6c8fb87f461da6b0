"""Importing a tokenizer file in the sidebar (issue 8): every page uses it, bad files are explained.

Expected token counts come from the engine on the exported object, from
tiktoken (GPT-2's own ranks file) and from Hugging Face ``tokenizers``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from bpe_core import (
    bpe_to_hf_json,
    bpe_to_tiktoken_files,
    train_bpe,
    train_wordpiece,
    wordpiece_to_hf_json,
    wordpiece_to_vocab_txt,
)
from tests.conftest import html_bodies, metric, sample
from ui import render

OTHER = sample("multilingual")  # trained on English + code, shown on another text


@pytest.fixture(scope="module")
def bpe():
    return train_bpe(sample("english") + sample("python"), 800, ["<|endoftext|>"], "cl100k")


@pytest.fixture(scope="module")
def wordpiece():
    return train_wordpiece(sample("english"), 600)


def use_import(at, files: list[tuple[str, bytes]]):
    at.radio(key="tokenizer_source").set_value("import").run()
    assert "Upload a tokenizer file" in "\n".join(i.value for i in at.info)
    at.file_uploader(key="tokenizer_upload").set_value([(n, d, "application/octet-stream") for n, d in files]).run()
    assert not at.exception, at.exception
    return at


def show_text(at, text: str):
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="paste_text").input(text).run()
    assert not at.exception, at.exception


def errors(at) -> str:
    return "\n".join(e.value for e in at.error)


def test_project_json_import_is_used_on_the_playground_and_not_retrained(app, bpe):
    show_text(app, OTHER)
    use_import(app, [("mine.json", json.dumps(bpe.to_dict()).encode())])
    assert not app.error
    assert metric(app, "Tokens") == f"{len(bpe.encode(OTHER)):,}"
    assert "mine.json" in "\n".join(c.value for c in app.caption)
    # the slider spans the imported tokenizer's sizes; moving it gives the prefix view
    assert app.slider[0].max == bpe.vocab_size
    app.slider[0].set_value(300).run()
    assert metric(app, "Tokens") == f"{len(bpe.with_vocab_size(300).encode(OTHER)):,}"
    # the training settings are not used: a vocabulary size the trainer would refuse changes nothing
    app.radio(key="tokenizer_source").set_value("train").run()
    app.number_input(key="max_vocab").set_value(5).run()
    app.radio(key="tokenizer_source").set_value("import").run()
    assert not app.error and metric(app, "Tokens")


@pytest.mark.parametrize("fmt", ["tiktoken", "tiktoken+meta", "hf"])
def test_bpe_exports_import_with_the_same_ids(app, bpe, fmt, tmp_path):
    ranks, meta = bpe_to_tiktoken_files(bpe, "mine")
    if fmt == "tiktoken":
        files = [("mine.tiktoken", ranks)]
        # without metadata GPT-2's pattern and no special tokens are assumed: expected ids from that
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        path = tmp_path / "mine.tiktoken"
        path.write_bytes(ranks)
        from bpe_core.pretokenize import PATTERNS

        enc = tiktoken.Encoding(
            "x", pat_str=PATTERNS["gpt2"], mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={}
        )
        expected = len(enc.encode_ordinary(OTHER))
    elif fmt == "tiktoken+meta":
        files = [("mine.tiktoken", ranks), ("mine.json", meta)]
        expected = len(bpe.encode(OTHER))
    else:
        hf_path = tmp_path / "tokenizer.json"
        hf_path.write_text(bpe_to_hf_json(bpe), encoding="utf-8")
        files = [("tokenizer.json", hf_path.read_bytes())]
        expected = len(Tokenizer.from_file(str(hf_path)).encode(OTHER).ids)  # Hugging Face as the reader
    show_text(app, OTHER)
    use_import(app, files)
    assert not app.error
    assert metric(app, "Tokens") == f"{expected:,}"


@pytest.mark.parametrize("fmt", ["vocab.txt", "hf"])
def test_wordpiece_exports_import(app, wordpiece, fmt, tmp_path):
    if fmt == "vocab.txt":
        files = [("vocab.txt", wordpiece_to_vocab_txt(wordpiece))]
    else:
        files = [("tokenizer.json", wordpiece_to_hf_json(wordpiece).encode())]
    path = tmp_path / "tokenizer.json"
    path.write_text(wordpiece_to_hf_json(wordpiece), encoding="utf-8")
    expected = len(Tokenizer.from_file(str(path)).encode(sample("english"), add_special_tokens=False).ids)
    use_import(app, files)
    assert not app.error
    assert metric(app, "Tokens") == f"{expected:,}"
    assert 'class="tk cont' in html_bodies(app)  # WordPiece colouring: ## pieces joined to their word


ENCODINGS = Path(os.environ.get("BPE_PLAYGROUND_ENCODINGS", ""))


@pytest.mark.skipif(not (ENCODINGS / "r50k_base.tiktoken").is_file(), reason="GPT-2's ranks file is not here")
def test_gpt2s_own_ranks_file_imports_and_matches_tiktoken(app, tiktoken_official):
    text = sample("english")
    use_import(app, [("r50k_base.tiktoken", (ENCODINGS / "r50k_base.tiktoken").read_bytes())])
    assert not app.error
    assert metric(app, "Tokens") == f"{len(tiktoken_official('r50k_base').encode_ordinary(text)):,}"


def test_malformed_file_is_explained_and_the_previous_import_stays(app, bpe):
    show_text(app, OTHER)
    use_import(app, [("mine.json", json.dumps(bpe.to_dict()).encode())])
    good = metric(app, "Tokens")
    truncated = json.dumps(bpe.to_dict()).encode()[:5000]
    app.file_uploader(key="tokenizer_upload").set_value([("cut.json", truncated, "application/json")]).run()
    assert not app.exception
    assert "cut.json is not valid JSON" in errors(app)
    assert "previous import, mine.json" in errors(app)
    assert metric(app, "Tokens") == good


def test_a_newly_chosen_file_replaces_the_previous_one(app, bpe, wordpiece):
    """Issue 17.7: the box keeps earlier files; the newest one is used, and the outcome is said in the main area."""
    show_text(app, OTHER)
    first = ("first.json", json.dumps(bpe.to_dict()).encode())
    use_import(app, [first])
    assert "Imported first.json" in "\n".join(s.value for s in app.main.success)
    assert metric(app, "Tokens") == f"{len(bpe.encode(OTHER)):,}"
    app.run()  # a rerun: the success was said once
    assert not app.main.success

    second = ("second.json", json.dumps(wordpiece.to_dict()).encode())
    app.file_uploader(key="tokenizer_upload").set_value([(*first, "application/json"), (*second, "application/json")])
    app.run()
    assert not app.exception and not app.error, errors(app)
    assert "Imported second.json" in "\n".join(s.value for s in app.main.success)
    assert metric(app, "Tokens") == f"{len(wordpiece.encode(OTHER)):,}"
    assert "second.json" in "\n".join(c.value for c in app.sidebar.caption)

    # a bad third file: why not, at the top of the main area and in the sidebar; the second stays in force
    bad = ("third.json", b'{"nope": 1}')
    app.file_uploader(key="tokenizer_upload").set_value([(*f, "application/json") for f in (first, second, bad)])
    app.run()
    assert not app.exception
    for where in (app.main, app.sidebar):
        (err,) = where.error
        assert "Cannot import third.json" in err.value and "previous import, second.json" in err.value
    assert metric(app, "Tokens") == f"{len(wordpiece.encode(OTHER)):,}"
    app.slider[0].set_value(app.slider[0].max - 1).run()  # the failure is still said on the next rerun
    assert len(app.main.error) == 1 and not app.exception


def test_tiktoken_ranks_then_metadata_chosen_one_after_the_other_are_a_pair(app, bpe):
    ranks, meta = bpe_to_tiktoken_files(bpe, "mine")
    show_text(app, OTHER)
    use_import(app, [("mine.tiktoken", ranks)])
    app.file_uploader(key="tokenizer_upload").set_value(
        [("mine.tiktoken", ranks, "text/plain"), ("mine.tiktoken.json", meta, "application/json")]
    )
    app.run()
    assert not app.error, errors(app)
    assert "Imported mine.tiktoken + mine.tiktoken.json" in "\n".join(s.value for s in app.main.success)
    assert metric(app, "Tokens") == f"{len(bpe.encode(OTHER)):,}"  # the metadata's pattern and specials apply


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([("x.txt", b"\x00\xff\x00binary")], "binary or not UTF-8"),
        ([("meta.json", b'{"pat_str": "x", "special_tokens": {}}')], "metadata only"),
        ([("a.tiktoken", b"YQ== 0\n"), ("b.tiktoken", b"Yg== 0\n")], "expected one .tiktoken ranks file and one .json"),
        ([("bad.tiktoken", b"YQ== 0\nnot-base64!! 1\n")], "bad.tiktoken"),
    ],
)
def test_bad_tokenizer_files_get_a_clear_error(app, files, message):
    use_import(app, files)
    assert message in errors(app)
    assert "Upload a tokenizer file" in "\n".join(i.value for i in app.info)


def test_every_page_uses_the_imported_tokenizer(app, bpe):
    show_text(app, OTHER)
    use_import(app, [("mine.json", json.dumps(bpe.to_dict()).encode())])
    n = len(bpe.encode(OTHER))
    app.switch_page("app_pages/compare.py").run()
    assert not app.exception
    assert f"{n:,} tokens" in "\n".join(c.value for c in app.caption)
    app.switch_page("app_pages/merges.py").run()
    assert not app.exception
    assert "Merge #" in html_bodies(app)
    app.switch_page("app_pages/encode.py").run()
    assert not app.exception


@pytest.mark.parametrize("fmt", ["tiktoken", "tokenizer.json", "vocab.txt"])
def test_merges_page_says_what_an_imported_file_can_show(app, bpe, wordpiece, fmt):
    """A file holds no training: the Merges page says so in a note, never a red error (issue 32.6), and lists
    the first merges of a BPE file in their order (as tiktoken's ranks give them)."""
    if fmt == "tiktoken":
        files = list(zip(("mine.tiktoken", "mine.json"), bpe_to_tiktoken_files(bpe), strict=True))
    elif fmt == "tokenizer.json":
        files = [("tokenizer.json", bpe_to_hf_json(bpe).encode())]
    else:
        files = [("vocab.txt", wordpiece_to_vocab_txt(wordpiece))]
    use_import(app, files)
    app.switch_page("app_pages/merges.py").run()
    assert not app.exception and not app.error, (app.exception, errors(app))
    (note,) = [i.value for i in app.info]
    assert "comes from a file" in note and "no training to step through" in note
    if fmt == "vocab.txt":
        assert not app.dataframe  # a vocab.txt has no merges
        return
    (frame,) = [d.value for d in app.dataframe]
    first = [(s.rank, s.new_id, s.merged) for s in bpe.trace[: len(frame)]]
    assert [(r["Rank"], r["Id"]) for r in frame.to_dict("records")] == [(rank, i) for rank, i, _ in first]
    assert frame["Token"].tolist()[0] == render.readable(first[0][2])
