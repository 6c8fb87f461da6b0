"""Count tables: ``python -m bpe_core count``, shards adding up, ``train --from-counts``, validation on load.

Expectations come from independent paths: ``count_pretokens`` over the whole
text (one regex pass, no chunking, no file format) and training on the text
itself; the CLI runs in a fresh process as a user runs it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bpe_core import PATTERNS, BPETokenizer, count_pretokens, train_bpe
from bpe_core.counting.table import (
    CountTable,
    CountTableError,
    load_count_table,
    load_count_tables,
    merge_count_tables,
    save_count_table,
)
from tests.conftest import ROOT, sample, seed_text, stdlib_code

EOT = "<|endoftext|>"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m bpe_core ARGS`` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "bpe_core", *args],
        check=False,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )


def as_bytes_counts(counter) -> dict[bytes, int]:
    return {s.encode("utf-8"): c for s, c in counter.items()}


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Two shards of real text and their concatenation (each shard ends at a document boundary)."""
    d = tmp_path_factory.mktemp("tables")
    a = f"{seed_text()[:30_000]}\n{EOT}\n{sample('multilingual')}\n{EOT}\n"
    b = f"{stdlib_code()}\n{EOT}\n{sample('python')}"
    paths = d / "a.txt", d / "b.txt", d / "ab.txt"
    for p, t in zip(paths, (a, b, a + b), strict=True):
        p.write_text(t, encoding="utf-8")
    return paths


def test_shard_tables_add_up_to_the_whole(shards):
    a, b, ab = shards
    d = a.parent
    for name, inputs in (("a.npz", [a]), ("b.npz", [b]), ("ab.npz", [ab])):
        res = run("count", *map(str, inputs), "--special-token", EOT, "--out", name, "--quiet", cwd=d)
        assert res.returncode == 0, res.stderr
        assert "saved to" in res.stderr
    res = run("count", "--from-counts", "a.npz", "b.npz", "--out", "a+b.npz", cwd=d)
    assert res.returncode == 0, res.stderr
    whole, n_special = count_pretokens(ab.read_text(encoding="utf-8"), "gpt2", [EOT])
    summed = load_count_table(d / "a+b.npz", pattern="gpt2", special_tokens=[EOT])
    direct = load_count_table(d / "ab.npz")
    assert summed.word_counts == direct.word_counts == as_bytes_counts(whole)
    assert summed.special_occurrences == direct.special_occurrences == n_special == ab.read_text().count(EOT) >= 3
    assert summed.pretokens == direct.pretokens == sum(whole.values())
    assert summed.special_tokens == (EOT,) and summed.pattern_name == "gpt2"
    # the stored arrays are canonical: the same counts give the same bytes whatever the counting order
    with np.load(d / "a+b.npz") as x, np.load(d / "ab.npz") as y:
        for m in ("lengths", "counts", "data"):
            assert np.array_equal(x[m], y[m])
    # in Python too: loading several tables adds them up
    assert load_count_tables([d / "a.npz", d / "b.npz"]).word_counts == direct.word_counts


def test_train_from_counts_equals_train_on_the_text(shards):
    a, b, ab = shards
    d = a.parent
    assert run("count", str(a), "--special-token", EOT, "--out", "ta.npz", "--quiet", cwd=d).returncode == 0
    assert run("count", str(b), "--special-token", EOT, "--out", "tb.npz", "--quiet", cwd=d).returncode == 0
    res = run("train", "--from-counts", "ta.npz", "tb.npz", "--vocab-size", "800", "--out", "t.json", "--quiet", cwd=d)
    assert res.returncode == 0, res.stderr
    from_text = run("train", str(a), str(b), "--vocab-size", "800", "--special-token", EOT, "--out", "f.json",
                    "--quiet", cwd=d)  # fmt: skip
    assert from_text.returncode == 0, from_text.stderr
    tok = BPETokenizer.load(d / "t.json")
    ref = train_bpe(ab.read_text(encoding="utf-8"), 800, [EOT])
    assert tok.merges == ref.merges and len(tok.merges) == 800 - 257
    assert [(s.count, s.replaced, s.tokens_after) for s in tok.trace] == [
        (s.count, s.replaced, s.tokens_after) for s in ref.trace
    ]
    assert tok.special_tokens == {EOT: 256} and tok.pattern_name == "gpt2"
    assert BPETokenizer.load(d / "f.json").merges == ref.merges
    text = sample("english")
    assert tok.encode(text) == ref.encode(text)


def _rewrite(src: Path, dst: Path, **changes) -> None:
    """Copy a table, replacing some arrays (raw bytes), to fake corrupt or foreign files."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(changes)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    dst.write_bytes(buf.getvalue())


def test_a_bad_table_is_one_clear_line_with_exit_code_2(shards):
    a, _, _ = shards
    d = a.parent
    assert run("count", str(a), "--special-token", EOT, "--out", "good.npz", "--quiet", cwd=d).returncode == 0
    good = d / "good.npz"
    with np.load(good) as z:
        meta = json.loads(z["meta"].tobytes())
        counts = z["counts"].copy()
    counts[0] += 1
    _rewrite(good, d / "tampered.npz", counts=counts)
    meta_v9 = np.frombuffer(json.dumps(meta | {"version": 9}).encode(), dtype=np.uint8)
    _rewrite(good, d / "v9.npz", meta=meta_v9)
    raw = bytearray(good.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # a flipped byte inside the compressed data
    (d / "flipped.npz").write_bytes(bytes(raw))
    (d / "half.npz").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (d / "text.npz").write_text("just text", encoding="utf-8")
    cases = [
        (["train", "--from-counts", "good.npz", "--pattern", "cl100k"], "counted with the gpt2 pattern, not cl100k"),
        (["train", "--from-counts", "good.npz", "--special-token", "<s>"], "counted with special tokens"),
        (["train", "--from-counts", "tampered.npz"], "checksum does not match"),
        (["train", "--from-counts", "v9.npz"], "format version 9"),
        (["train", "--from-counts", "flipped.npz"], "flipped.npz"),
        (["train", "--from-counts", "half.npz"], "not a readable count table"),
        (["train", "--from-counts", "text.npz"], "not a readable count table"),
        (["train", "--from-counts", "missing.npz"], "cannot read missing.npz"),
        (
            ["train", "--from-counts", "good.npz", "--algorithm", "wordpiece"],
            "counted for bpe with the gpt2 pattern, not for wordpiece",
        ),
        (["train", str(a), "--from-counts", "good.npz"], "not both"),
        (["train"], "needs FILE arguments or --from-counts"),
        (["count", "nothing*.txt"], "no file matches"),
    ]
    for argv, message in cases:
        out = ["--out", "x.json"] if argv[0] == "train" else ["--out", "x.npz"]
        vocab = ["--vocab-size", "300"] if argv[0] == "train" else []
        res = run(*argv, *vocab, *out, cwd=d)
        err = res.stderr.strip()
        assert res.returncode == 2, (argv, err)
        assert "\n" not in err and "Traceback" not in err, err
        assert err.startswith("python -m bpe_core: error: ") and message in err, (argv, err)
    assert not (d / "x.json").exists()


def test_tables_in_python_validate_and_merge(tmp_path):
    t1 = CountTable.from_counts({b"low": 2, b" lower": 1}, "gpt2", [EOT], special_occurrences=1)
    save_count_table(t1, tmp_path / "t1")  # any name: no extension added
    back = load_count_table(tmp_path / "t1", pattern=PATTERNS["gpt2"], special_tokens=[EOT])
    assert (back.word_counts, back.pretokens, back.special_occurrences) == (t1.word_counts, 3, 1)
    t2 = CountTable.from_counts({b"low": 1, "é".encode(): 4}, "gpt2", [EOT])
    m = merge_count_tables([t1, t2])
    assert m.word_counts == {b"low": 3, b" lower": 1, "é".encode(): 4}
    assert (m.pretokens, m.special_occurrences) == (8, 1)
    other = CountTable.from_counts({b"x": 1}, "cl100k", [EOT])
    with pytest.raises(CountTableError, match="counted with the cl100k pattern, not the regex"):
        merge_count_tables([t1, other])
    with pytest.raises(CountTableError, match="no count table"):
        merge_count_tables([])
    assert issubclass(CountTableError, ValueError)


def test_dask_cli_counts_on_a_cluster(shards):
    distributed = pytest.importorskip("distributed")
    a, b, ab = shards
    d = a.parent
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        res = run("count", str(a), str(b), "--special-token", EOT, "--dask", cluster.scheduler_address,
                  "--out", "dask.npz", "--quiet", cwd=d)  # fmt: skip
        assert res.returncode == 0, res.stderr
        res = run("train", str(d / "[ab].txt"), "--special-token", EOT, "--dask", cluster.scheduler_address,
                  "--vocab-size", "700", "--out", "dask.json", "--quiet", cwd=d)  # fmt: skip
        assert res.returncode == 0, res.stderr
    whole, _ = count_pretokens(ab.read_text(encoding="utf-8"), "gpt2", [EOT])
    assert load_count_table(d / "dask.npz").word_counts == as_bytes_counts(whole)
    assert BPETokenizer.load(d / "dask.json").merges == train_bpe(ab.read_text(encoding="utf-8"), 700, [EOT]).merges
    res = run("count", str(a), "--dask", "tcp://127.0.0.1:1", "--out", "x.npz", cwd=d)
    assert res.returncode == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in res.stderr


def test_the_docstring_examples_run():
    import doctest

    from bpe_core.counting import stream as counting
    from bpe_core.counting import table as count_table

    for module in (count_table, counting):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted >= 1, module.__name__
