"""The command line never loses a user's file and never prints a traceback.

Every refusal is checked on the file system: the input's bytes are the same
after the run, and no temporary file is left beside it.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe_core.persistence as persistence
from bpe_core import train_bpe
from bpe_core.__main__ import main
from bpe_core.wordpiece import WordPieceTokenizer
from tests.conftest import ROOT, sample


def run(*args: str, cwd: Path, debug: bool = False) -> subprocess.CompletedProcess:
    """``python -m bpe_core ARGS`` in a fresh process, as a user runs it (without the test's debug switch)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("BPE_CORE_DEBUG", None)
    if debug:
        env["BPE_CORE_DEBUG"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "bpe_core", *args], check=False, cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def one_line_error(res: subprocess.CompletedProcess, message: str) -> None:
    assert res.returncode == 2, res.stderr
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("python -m bpe_core: error: ") and message in err, err


@pytest.fixture
def work(tmp_path) -> Path:
    """A folder with a training text, a trained tokenizer and its tiktoken export."""
    text = sample("english")
    (tmp_path / "victim.txt").write_text(text, encoding="utf-8")
    tok = train_bpe(text, 300, ["<|endoftext|>"])
    tok.save(tmp_path / "mytok.json")
    assert main(["export", "--tokenizer", str(tmp_path / "mytok.json"), "--format", "tiktoken",
                 "--out", str(tmp_path / "r.tiktoken")]) == 0  # fmt: skip
    return tmp_path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize(
    "out",
    ["victim.txt", "./victim.txt", "sub/../victim.txt", "link.txt", "hard.txt"],
)
def test_train_refuses_to_write_over_its_text(work, out):
    (work / "sub").mkdir()
    (work / "link.txt").symlink_to(work / "victim.txt")
    os.link(work / "victim.txt", work / "hard.txt")
    before = snapshot(work)
    res = run("train", "victim.txt", "--vocab-size", "300", "--out", out, "--quiet", cwd=work)
    one_line_error(res, "would overwrite the input victim.txt")
    assert snapshot(work) == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # the case: metadata <out>.json lands on the input tokenizer
        (["--tokenizer", "mytok.json", "--format", "tiktoken", "--out", "mytok"], "the metadata file mytok.json"),
        (["--tokenizer", "mytok.json", "--format", "hf", "--out", "mytok.json"], "--out would overwrite"),
        (["--tokenizer", "mytok.json", "--format", "json", "--out", "./sub/../mytok.json"], "--out would overwrite"),
        # the metadata read beside a .tiktoken input is an input too
        (["--tokenizer", "r.tiktoken", "--format", "json", "--out", "r.tiktoken.json"], "the input r.tiktoken.json"),
        (["--tokenizer", "r.tiktoken", "--format", "tiktoken", "--out", "r.tiktoken"], "the input r.tiktoken"),
    ],
)
def test_export_refuses_to_write_over_its_inputs(work, argv, message):
    (work / "sub").mkdir()
    before = snapshot(work)
    res = run("export", *argv, cwd=work)
    one_line_error(res, message)
    assert snapshot(work) == before


def test_a_failed_export_leaves_existing_outputs_as_they_were(work, monkeypatch):
    """Disk full while writing the second file of a tiktoken export: neither existing file changes."""
    (work / "out.tiktoken").write_bytes(b"old ranks\n")
    (work / "out.tiktoken.json").write_bytes(b"old meta\n")
    before = snapshot(work)
    real_fsync, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(persistence.os, "fsync", full_disk)
    out = str(work / "out.tiktoken")
    argv = ["export", "--tokenizer", str(work / "mytok.json"), "--format", "tiktoken", "--out", out]
    assert main(argv) == 2
    assert len(calls) == 2
    assert snapshot(work) == before  # both old files intact, no temporary file left
    monkeypatch.undo()
    assert main(argv) == 0
    assert (work / "out.tiktoken").read_bytes() != b"old ranks\n"


def test_an_export_refused_half_way_leaves_the_output(work, capsys):
    """A vocab.txt that cannot hold a token is refused before anything is written."""
    tok = WordPieceTokenizer(["[UNK]", "a", "b\u2028c", "##x\ny"], ["[UNK]"])
    tok.save(work / "wp.json")
    (work / "vocab.txt").write_bytes(b"precious\n")
    assert main(["export", "--tokenizer", str(work / "wp.json"), "--format", "vocab.txt",
                 "--out", str(work / "vocab.txt")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "line break" in err and err.count("\n") == 1
    assert (work / "vocab.txt").read_bytes() == b"precious\n"


def test_outputs_keep_the_mode_of_the_file_they_replace(work):
    out = work / "o.json"
    out.write_bytes(b"{}")
    out.chmod(0o640)
    assert main(["export", "--tokenizer", str(work / "mytok.json"), "--format", "json", "--out", str(out)]) == 0
    assert out.stat().st_mode & 0o777 == 0o640
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]


def test_writing_into_a_directory_or_a_missing_folder_is_one_line(work):
    (work / "adir").mkdir()
    res = run("export", "--tokenizer", "mytok.json", "--format", "json", "--out", "adir", cwd=work)
    one_line_error(res, "cannot write adir: it is a directory")
    res = run("export", "--tokenizer", "mytok.json", "--format", "json", "--out", "nowhere/x.json", cwd=work)
    one_line_error(res, "cannot write")


def test_unexpected_exceptions_are_one_line_unless_debugging(work, monkeypatch, capsys):
    import bpe_core.__main__ as cli

    def buggy(args):
        raise KeyError("boom")

    monkeypatch.setitem(cli.COMMANDS, "encode", buggy)
    monkeypatch.delenv("BPE_CORE_DEBUG", raising=False)
    assert main(["encode", "--tokenizer", "x", "y"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: KeyError: 'boom'" in err
    monkeypatch.setenv("BPE_CORE_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["encode", "--tokenizer", "x", "y"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": ' + b"[" * 100_000, "nested 100001 levels deep"),
        (b'{"model": "BPE"}', '"model" must be an object, got a string'),
        (b"\xff\xfe\x00binary", "binary"),
    ],
)
def test_bad_tokenizer_files_never_print_a_traceback(work, content, message):
    (work / "bad.json").write_bytes(content)
    res = run("encode", "--tokenizer", "bad.json", "victim.txt", cwd=work, debug=True)
    one_line_error(res, message)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300) | st.from_regex(rb"\A[A-Za-z0-9+/=]{1,8} [0-9]{1,3}(\n[ -~]{0,12})*\Z"))
def test_random_tokenizer_bytes_give_exit_2_or_a_tokenizer(tmp_path, data, capsys):
    """Whatever the tokenizer file holds, ``encode`` ends in ids or one line and status 2 (bugs raise here)."""
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    (tmp_path / "in.txt").write_text("hello world", encoding="utf-8")
    status = main(["encode", "--tokenizer", str(path), str(tmp_path / "in.txt")])
    out, err = capsys.readouterr()
    if status == 0:
        assert out.strip() and not err
    else:
        assert status == 2 and err.count("\n") == 1 and err.startswith("python -m bpe_core: error: ")
