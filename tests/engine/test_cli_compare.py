"""``python -m bpe_core compare``: the Compare page's figures table of files and directories, as table, CSV or JSON.

The numbers are checked against :func:`bpe_core.analysis.metrics.compute_metrics` on each file's whole text
(the textbook figures, from ``token_spans``) and GPT-2's token count against tiktoken's own registry.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bpe_core import BPETokenizer, train_bpe
from bpe_core.__main__ import main
from bpe_core.analysis.figures import COMPARE_COLUMNS, format_cell
from bpe_core.analysis.metrics import TextMetrics, compute_metrics
from bpe_core.production.registry import PRODUCTION, load_production
from tests.conftest import sample, seed_text

EOT = "<|endoftext|>"
KEYS = ("gpt2", "bert", "mistral_v1")
"""A byte-level BPE with a special token, a WordPiece with [UNK], a SentencePiece BPE with byte fallback."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A directory of two documents: English seeds with a special token, and the multilingual sample."""
    d = tmp_path_factory.mktemp("compare")
    (d / "sub").mkdir()
    (d / "a.txt").write_text(seed_text()[:30_000] + f"\n{EOT} café 東京 🙂\n", encoding="utf-8")
    (d / "sub" / "b.txt").write_text(sample("multilingual"), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def trained(corpus) -> Path:
    path = corpus.parent / "tok.json"
    train_bpe((corpus / "a.txt").read_text(encoding="utf-8"), 500, special_tokens=[EOT]).save(path)
    return path


def whole_text(tok, texts: list[str]) -> dict:
    """The textbook figures summed over documents: each document encoded whole (``token_spans``)."""
    ms: list[TextMetrics] = [compute_metrics(t, tok.token_spans(t), tok.vocab_size, tok.unknown_id) for t in texts]
    ids = set().union(*({s.id for s in tok.token_spans(t)} for t in texts))
    fields = ("tokens", "characters", "bytes", "words", "words_split", "special_tokens", "unknown_tokens")
    out = {f: sum(getattr(m, f) for m in ms) for f in (*fields, "byte_fallback_tokens")}
    out["distinct_tokens"] = len(ids)
    return out


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_csv_and_json_equal_the_textbook_figures_of_a_directory(corpus, trained, capsys):
    code, out, err = run_main(
        capsys, "compare", str(corpus), "--tokenizers", ",".join(KEYS), "--tokenizer", str(trained), "--format", "csv"
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [c.key for c in COMPARE_COLUMNS]  # the page's columns, in its order
    code, out_json, err = run_main(
        capsys, "compare", str(corpus / "a.txt"), str(corpus / "sub"), "--tokenizers", ",".join(KEYS),
        "--tokenizer", str(trained), "--format", "json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out_json)
    assert [c["key"] for c in doc["columns"]] == [c.key for c in COMPARE_COLUMNS]
    texts = [(corpus / "a.txt").read_text(encoding="utf-8"), (corpus / "sub" / "b.txt").read_text(encoding="utf-8")]
    toks = [load_production(k) for k in KEYS] + [BPETokenizer.load(trained)]
    assert [r["Tokenizer"] for r in doc["rows"]] == [t.name for t in toks]
    for tok, row, js in zip(toks, rows, doc["rows"]):
        want = whole_text(tok, texts)
        assert int(row["Tokens"]) == js["Tokens"] == want["tokens"], tok.name
        assert int(row["Words split"]) == js["Words split"] == want["words_split"], tok.name
        assert int(row["Distinct tokens"]) == js["Distinct tokens"] == want["distinct_tokens"], tok.name
        assert int(row["Special tokens"]) == js["Special tokens"] == want["special_tokens"], tok.name
        assert int(row["Unknown"]) == js["Unknown"] == want["unknown_tokens"], tok.name
        assert int(row["Byte fallback"]) == js["Byte fallback"] == want["byte_fallback_tokens"], tok.name
        assert float(row["Bytes/token"]) == pytest.approx(want["bytes"] / want["tokens"], rel=1e-12)
        assert js["Tokens/word"] == pytest.approx(want["tokens"] / want["words"], rel=1e-12)
        assert js["Vocab size"] == tok.vocab_size
    by_name = {r["Tokenizer"]: r for r in doc["rows"]}
    assert by_name["BERT (bert-base-uncased)"]["Unknown"] > 0  # the emoji is [UNK] to BERT
    assert by_name["Mistral v1 (SentencePiece)"]["Byte fallback"] > 0  # ... and bytes to Mistral v1
    assert by_name["GPT-2 (r50k_base)"]["Special tokens"] == sum(t.count(EOT) for t in texts) > 0


def test_gpt2_tokens_equal_tiktoken(corpus, capsys, tiktoken_official):
    code, out, err = run_main(capsys, "compare", str(corpus / "a.txt"), "--tokenizers", "gpt2", "--format", "json")
    assert code == 0, err
    text = (corpus / "a.txt").read_text(encoding="utf-8")
    want = tiktoken_official("r50k_base").encode(text, allowed_special="all")
    assert json.loads(out)["rows"][0]["Tokens"] == len(want)


def test_table_shows_the_page_headers_and_cells(corpus, capsys):
    code, out, err = run_main(capsys, "compare", str(corpus), "--tokenizers", "gpt2,bert", "--quiet")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("2 files: ") and "characters" in lines[0]
    assert lines[1].split("  ")[0] == "Tokenizer" and "Bytes / token" in lines[1] and "Byte fallback" in lines[1]
    code, out_json, _ = run_main(capsys, "compare", str(corpus), "--tokenizers", "gpt2,bert", "--format", "json")
    for line, row in zip(lines[2:], json.loads(out_json)["rows"]):
        assert line.startswith(row["Tokenizer"])
        cells = line[len(row["Tokenizer"]) :].split()
        assert cells == [format_cell(row[c.key], c.fmt) for c in COMPARE_COLUMNS[1:]]


def test_unknown_key_is_a_clear_error_listing_the_valid_keys(corpus, capsys):
    code, out, err = run_main(capsys, "compare", str(corpus), "--tokenizers", "gpt2,gpt5,llama")
    assert code == 2 and out == ""
    assert "unknown tokenizer keys 'gpt5', 'llama'" in err and "\n" not in err.strip()
    assert all(k in err for k in PRODUCTION)


def test_missing_input_and_bad_utf8_are_one_line_errors(tmp_path, capsys):
    code, out, err = run_main(capsys, "compare", str(tmp_path / "nothere.txt"))
    assert code == 2 and "nothere.txt" in err and out == ""
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    code, out, err = run_main(capsys, "compare", str(tmp_path / "latin1.txt"), "--tokenizers", "gpt2")
    assert code == 2 and "not valid UTF-8" in err and "latin1.txt" in err and out == ""
