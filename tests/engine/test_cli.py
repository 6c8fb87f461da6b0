"""The command line, end to end: ``python -m bpe_core train / encode / compare / export`` and its errors.

Independent readers check the outputs: tiktoken (its own registry for GPT-2 and
cl100k, and ``load_tiktoken_bpe`` for the exported ranks) and Hugging Face
``tokenizers`` for the exported ``tokenizer.json``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Tokenizer

from bpe_core import BPETokenizer, train_bpe
from bpe_core.__main__ import build_parser, main
from tests.conftest import ROOT, sample, seed_text

EOT = "<|endoftext|>"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m bpe_core ARGS`` in a fresh process, as a user runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "bpe_core", *args],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    path = d / "corpus.txt"
    path.write_text(seed_text()[:40_000] + f"\n{EOT}\n" + sample("multilingual"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(corpus) -> Path:
    out = corpus.with_name("tok.json")
    res = run("train", str(corpus), "--vocab-size", "600", "--special-token", EOT, "--out", str(out), cwd=out.parent)
    assert res.returncode == 0, res.stderr
    assert "saved to" in res.stderr and "distinct pre-tokens" in res.stderr  # the summary line
    return out


def test_train_saves_the_same_tokenizer_as_the_engine(trained, corpus):
    tok = BPETokenizer.load(trained)
    ref = train_bpe(corpus.read_text(encoding="utf-8"), 600, [EOT])
    assert tok.vocab_size == 600 and tok.special_tokens == {EOT: 256}
    assert tok.merges == ref.merges


def test_encode_prints_ids_that_tiktoken_reads_back(trained, corpus, tmp_path):
    res = run("encode", "--tokenizer", str(trained), str(corpus), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    ids = [int(x) for x in res.stdout.split()]
    # export to tiktoken and let tiktoken encode the same file: same ids
    out = tmp_path / "tok.tiktoken"
    res = run("export", "--tokenizer", str(trained), "--format", "tiktoken", "--out", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    meta = json.loads(out.with_name("tok.tiktoken.json").read_text(encoding="utf-8"))
    enc = tiktoken.Encoding(
        "cli",
        pat_str=meta["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(out)),
        special_tokens=meta["special_tokens"],
    )
    text = corpus.read_text(encoding="utf-8")
    assert ids == enc.encode(text, allowed_special="all")
    assert ids.count(256) == text.count(EOT) >= 1
    # a .tiktoken file with its .json beside it is itself a tokenizer for encode
    again = run("encode", "--tokenizer", str(out), str(corpus), cwd=tmp_path)
    assert [int(x) for x in again.stdout.split()] == ids


def test_export_hf_and_json(trained, corpus, tmp_path):
    text = corpus.read_text(encoding="utf-8")
    tok = BPETokenizer.load(trained)
    hf_path = tmp_path / "tokenizer.json"
    assert main(["export", "--tokenizer", str(trained), "--format", "hf", "--out", str(hf_path)]) == 0
    assert Tokenizer.from_file(str(hf_path)).encode(text).ids == tok.encode(text)
    js = tmp_path / "copy.json"
    assert main(["export", "--tokenizer", str(trained), "--format", "json", "--out", str(js)]) == 0
    assert BPETokenizer.load(js).merges == tok.merges


def test_compare_table_matches_tiktoken(trained, corpus, tmp_path, tiktoken_official):
    res = run("compare", str(corpus), "--tokenizer", str(trained), "--format", "csv", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    text = corpus.read_text(encoding="utf-8")
    rows = {r["Tokenizer"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    n_gpt2 = len(tiktoken_official("r50k_base").encode(text, allowed_special="all"))
    n_cl100k = len(tiktoken_official("cl100k_base").encode(text, allowed_special="all"))
    gpt2 = rows["GPT-2 (r50k_base)"]
    assert (gpt2["Vocab size"], gpt2["Tokens"]) == ("50257", str(n_gpt2))
    assert rows["GPT-4 (cl100k_base)"]["Tokens"] == str(n_cl100k)
    n_bytes = len(text.encode("utf-8"))
    assert float(gpt2["Bytes/token"]) == pytest.approx(n_bytes / n_gpt2, rel=1e-12)
    ours = next(r for name, r in rows.items() if name.startswith("BPE"))
    assert ours["Tokens"] == str(len(BPETokenizer.load(trained).encode(text)))


def test_wordpiece_train_and_vocab_txt_export(corpus, tmp_path):
    out = tmp_path / "wp.json"
    assert (
        main(["train", str(corpus), "--vocab-size", "700", "--algorithm", "wordpiece", "--out", str(out), "--quiet"])
        == 0
    )
    vocab = tmp_path / "vocab.txt"
    assert main(["export", "--tokenizer", str(out), "--format", "vocab.txt", "--out", str(vocab)]) == 0
    lines = vocab.read_text(encoding="utf-8").splitlines()
    assert lines[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and len(lines) == 700


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "missing.txt", "--vocab-size", "300", "--out", "x.json"], "cannot read missing.txt: not found"),
        (["train", "corpus.txt", "--vocab-size", "abc", "--out", "x.json"], "expected a whole number, got 'abc'"),
        (["train", "corpus.txt", "--vocab-size", "0", "--out", "x.json"], "must be at least 1, got 0"),
        (["train", "corpus.txt", "--vocab-size", "100", "--out", "x.json"], "vocab_size 100 is below the base"),
        (["train", "corpus.txt", "--vocab-size", "300", "--pattern", "(", "--out", "x.json"], "invalid pattern"),
        (["train", "corpus.txt", "--vocab-size", "300"], "the following arguments are required: --out"),
        (["train", "latin1.txt", "--vocab-size", "300", "--out", "x.json"], "not valid UTF-8: byte 0xE9"),
        (["encode", "--tokenizer", "corpus.txt", "corpus.txt"], "corpus.txt"),
        (["encode", "--tokenizer", "nothere.json", "corpus.txt"], "cannot read nothere.json"),
        (["export", "--tokenizer", "tok.json", "--format", "xml", "--out", "o"], "invalid choice: 'xml'"),
        (["export", "--tokenizer", "tok.json", "--format", "vocab.txt", "--out", "o"], "needs a WordPiece tokenizer"),
        (["compare", "corpus.txt", "--tokenizers", "nope"], "unknown tokenizer key 'nope'; valid keys: all"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(argv, message, corpus, trained, tmp_path):
    for name in ("corpus.txt", "tok.json"):
        (tmp_path / name).write_bytes((corpus.parent / name).read_bytes())
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    res = run(*argv, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stdout == ""
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("python -m bpe_core") and "error: " in err
    assert message in err


def test_help_documents_every_flag(tmp_path):
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == {"train", "count", "encode", "compare", "export"}
    for cmd, p in sub.choices.items():
        res = run(cmd, "--help", cwd=tmp_path)
        assert res.returncode == 0
        for action in p._actions:
            assert action.help and len(action.help.split()) >= 2, (cmd, action.dest)
            for flag in action.option_strings:
                assert flag in res.stdout, (cmd, flag)
    flags = {f for a in sub.choices["train"]._actions for f in a.option_strings}
    assert {"--vocab-size", "--special-token", "--pattern", "--workers", "--algorithm", "--out"} <= flags


def test_unigram_train_encode_round_trip(corpus, tmp_path, capsys):
    from bpe_core.unigram import UnigramTokenizer, train_unigram

    out = tmp_path / "uni.json"
    argv = ["train", str(corpus), "--vocab-size", "500", "--algorithm", "unigram", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    tok = UnigramTokenizer.load(out)
    text = corpus.read_text(encoding="utf-8")
    ref = train_unigram(text, 500)  # the registry's defaults: <unk>, SentencePiece-style words
    assert tok.vocab_size == tok.max_vocab_size == 500 and tok.pattern_name == "sentencepiece"
    assert tok.pieces == ref.pieces and tok.scores == ref.scores and tok.special_tokens == {"<unk>": 0}
    capsys.readouterr()
    assert main(["encode", "--tokenizer", str(out), str(corpus)]) == 0
    ids = [int(x) for x in capsys.readouterr().out.split()]
    assert ids == ref.encode(text) and tok.decode(ids) == ref.decode(ids)


def test_unigram_export_hf_reads_back_in_hugging_face(corpus, tmp_path):
    out, hf = tmp_path / "uni.json", tmp_path / "tokenizer.json"
    assert (
        main(["train", str(corpus), "--vocab-size", "600", "--algorithm", "unigram", "--out", str(out), "--quiet"]) == 0
    )
    assert main(["export", "--tokenizer", str(out), "--format", "hf", "--out", str(hf)]) == 0
    from bpe_core.unigram import UnigramTokenizer

    ours = UnigramTokenizer.load(out)
    theirs = Tokenizer.from_file(str(hf))  # Hugging Face as the reader
    text = sample("english")
    assert theirs.encode(text).ids == ours.encode(text)
    for fmt in ("tiktoken", "vocab.txt"):
        assert main(["export", "--tokenizer", str(out), "--format", fmt, "--out", str(tmp_path / f"x.{fmt}")]) == 2
