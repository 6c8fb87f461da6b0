"""Count tables for every algorithm: training from a table equals training on the text.

A table is counted *for* an algorithm (BPE: byte-level pre-tokens of a
pattern; WordPiece: BERT-style words, optionally lower-cased, in order of first
appearance; Unigram: SentencePiece ``▁`` words or a pattern's words, in order of
first appearance).  Checked here, for all three: a text's table written to disk
and read back trains exactly what the trainer learns from the text itself (the
full trace / vocabulary and scores); tables of shards cut at a space add up to
the whole text's training, through Python and the command line; the order of
first appearance survives saving and adding (WordPiece's ties depend on it);
a table counted for another algorithm, pattern, special tokens or lower-casing
is refused with a message naming both.
"""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bpe_core import train_bpe
from bpe_core.counting.table import (
    CountTable,
    CountTableError,
    count_text_table,
    load_count_table,
    load_count_tables,
    merge_count_tables,
    save_count_table,
    train_from_table,
)
from bpe_core.unigram import train_unigram
from bpe_core.wordpiece import train_wordpiece
from tests.conftest import sample

ROOT = Path(__file__).resolve().parents[2]
TEXT = sample("english") + "\n" + sample("multilingual") + "\n" + sample("python")


def _shards(text: str, n: int) -> list[str]:
    """``text`` cut into ``n`` pieces, each cut just before a space that follows a letter and precedes one."""
    cuts = [0]
    for k in range(1, n):
        i = len(text) * k // n
        while not (text[i] == " " and text[i - 1].isalpha() and text[i + 1].isalpha()):
            i += 1
        cuts.append(i)
    cuts.append(len(text))
    return [text[a:b] for a, b in itertools.pairwise(cuts)]


def _document_shards(text: str, n: int) -> list[str]:
    """``text`` in ``n`` shards as :func:`_shards` cuts it, each shard after the first starting with ``<unk>``.

    Unigram shards add up only when each starts at a special token: a text's first word gets the ``▁`` that
    SentencePiece puts in front of a text, and a text's last word ends a sentence (which its seed sees).
    """
    shards = _shards(text, n)
    return [shards[0], *("<unk>" + s for s in shards[1:])]


def _roundtrip(table: CountTable, tmp_path: Path, name: str = "t.npz") -> CountTable:
    save_count_table(table, tmp_path / name)
    return load_count_table(tmp_path / name)


def _bpe_key(tok):
    return [(s.left, s.right, s.count, s.tokens_after) for s in tok.trace], tok.vocab


def _wordpiece_key(tok):
    trace = [(s.left, s.right, s.merged, s.pair_freq, s.left_freq, s.right_freq, s.tokens_after) for s in tok.trace]
    return trace, tok.vocab, tok.lowercase


def _unigram_key(tok):
    return tok.vocab, tok.scores, [tok.with_vocab_size(n).vocab for n in tok.training_states()[-5:]]


CASES = {
    "bpe": (lambda text: train_bpe(text, 400, ["<|endoftext|>"], "gpt2"), dict(special_tokens=["<|endoftext|>"]),
            400, _bpe_key),
    "bpe, cl100k": (lambda text: train_bpe(text, 380, [], "cl100k"), dict(pattern="cl100k"), 380, _bpe_key),
    "wordpiece": (lambda text: train_wordpiece(text, 700), dict(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                  "[MASK]"]), 700, _wordpiece_key),
    "wordpiece, lower-cased": (lambda text: train_wordpiece(text, 650, lowercase=True),
                               dict(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], lowercase=True),
                               650, _wordpiece_key),
    "unigram": (lambda text: train_unigram(text, 520, ["<unk>"]), dict(special_tokens=["<unk>"]), 520, _unigram_key),
    "unigram, gpt2 words": (lambda text: train_unigram(text, 520, ["<unk>"], "gpt2"),
                            dict(special_tokens=["<unk>"], pattern="gpt2"), 520, _unigram_key),
}  # fmt: skip


def _algorithm(case: str) -> str:
    return case.split(",", maxsplit=1)[0]


@pytest.mark.parametrize("case", list(CASES))
def test_training_from_the_text_s_table_equals_training_on_the_text(case, tmp_path):
    train, options, size, key = CASES[case]
    text = TEXT.replace("\n\n", "\n<|endoftext|>\n", 2) if case == "bpe" else TEXT
    table = _roundtrip(count_text_table(text, _algorithm(case), **options), tmp_path)
    assert table.algorithm == _algorithm(case)
    assert key(train_from_table(table, size)) == key(train(text))


@pytest.mark.parametrize("case", list(CASES))
def test_tables_of_shards_add_up_to_training_on_the_whole_text(case, tmp_path):
    train, options, size, key = CASES[case]
    if _algorithm(case) == "unigram":
        shards = _document_shards(TEXT, 3)
        text = "".join(shards)
    else:
        shards = _shards(TEXT, 3)
        text = TEXT
        assert "".join(shards) == TEXT and all(s.startswith(" ") for s in shards[1:])
    paths = []
    for i, shard in enumerate(shards):
        paths.append(tmp_path / f"{i}.npz")
        save_count_table(count_text_table(shard, _algorithm(case), **options), paths[-1])
    summed = load_count_tables(paths)
    whole = count_text_table(text, _algorithm(case), **options)
    assert summed.word_counts == whole.word_counts and summed.pretokens == whole.pretokens
    assert summed.sentence_ends == whole.sentence_ends
    if _algorithm(case) != "bpe":  # the order of first appearance too
        assert list(summed.word_counts) == list(whole.word_counts)
    assert key(train_from_table(summed, size)) == key(train(text))


def test_wordpiece_tables_keep_the_order_of_first_appearance(tmp_path):
    # every pair scores 1/3 here: the first pair met wins, so the order of the words decides the merges
    a, b = "pug pugs pug", "hug hugs hug"
    ta, tb = (count_text_table(t, "wordpiece", special_tokens=["[UNK]"]) for t in (a, b))
    save_count_table(ta, tmp_path / "a.npz")
    save_count_table(tb, tmp_path / "b.npz")
    ab = load_count_tables([tmp_path / "a.npz", tmp_path / "b.npz"])
    ba = load_count_tables([tmp_path / "b.npz", tmp_path / "a.npz"])
    assert list(ab.words()) == ["pug", "pugs", "hug", "hugs"] and list(ba.words()) == ["hug", "hugs", "pug", "pugs"]
    tok_ab, tok_ba = train_from_table(ab, 12), train_from_table(ba, 12)
    assert tok_ab.vocab == train_wordpiece(a + " " + b, 12, ["[UNK]"]).vocab
    assert tok_ba.vocab == train_wordpiece(b + " " + a, 12, ["[UNK]"]).vocab
    assert tok_ab.trace[0].merged == "pu" and tok_ba.trace[0].merged == "hu"


def test_unigram_tables_hold_the_unknown_token_and_the_words_the_trainer_counts():
    table = count_text_table("Hello world,  hello <unk> x", "unigram")
    assert table.special_tokens == ("<unk>",) and table.special_occurrences == 1
    # the double space and the space before the special token are words of their own: "▁"
    assert table.words() == {"▁Hello": 1, "▁world,": 1, "▁": 2, "▁hello": 1, "▁x": 1}
    assert table.pattern_name == "sentencepiece"
    # the unknown token is added to given special tokens, as train_unigram adds it
    assert count_text_table("a <s> b", "unigram", special_tokens=["<s>"]).special_tokens == ("<s>", "<unk>")


def test_a_table_counted_for_another_algorithm_or_setting_is_refused(tmp_path):
    text = sample("english")
    bpe = count_text_table(text, "bpe", pattern="bert")
    wp = count_text_table(text, "wordpiece", special_tokens=["[UNK]"], lowercase=True)
    uni = count_text_table(text, "unigram")
    with pytest.raises(CountTableError, match=r"counted for bpe with the bert pattern, not for wordpiece"):
        train_from_table(bpe, 500, algorithm="wordpiece")
    with pytest.raises(CountTableError, match=r"counted for wordpiece \(BERT-style words, lower-cased\), not for bpe"):
        train_from_table(wp, 500, algorithm="bpe")
    with pytest.raises(CountTableError, match=r"counted for unigram with the sentencepiece pattern, not for wordpiece"):
        train_from_table(uni, 500, algorithm="wordpiece")
    with pytest.raises(CountTableError, match="counted with lower-casing, not without"):
        train_from_table(wp, 500, lowercase=False)
    with pytest.raises(CountTableError, match="counted with special tokens"):
        train_from_table(wp, 500, special_tokens=["[UNK]", "[SEP]"])
    with pytest.raises(CountTableError, match=r"count table 2 was counted for unigram .*, not for bpe"):
        merge_count_tables([bpe, uni])
    with pytest.raises(CountTableError, match="count table 2 was counted with lower-casing, not without"):
        merge_count_tables([count_text_table(text, "wordpiece", special_tokens=["[UNK]"]), wp])
    save_count_table(uni, tmp_path / "u.npz")
    with pytest.raises(CountTableError, match=r"u\.npz was counted with the sentencepiece pattern, not gpt2"):
        load_count_table(tmp_path / "u.npz", pattern="gpt2")
    with pytest.raises(ValueError, match="WordPiece pre-tokenizes BERT-style; its pattern is bert, not 'gpt2'"):
        count_text_table(text, "wordpiece", pattern="gpt2")
    with pytest.raises(ValueError, match="lower-casing is a WordPiece option"):
        count_text_table(text, "unigram", lowercase=True)
    with pytest.raises(ValueError, match="algorithm must be one of bpe, wordpiece, unigram"):
        count_text_table(text, "wordpeace")


def test_a_version_1_table_still_loads_as_bpe(tmp_path):
    text = sample("english")
    save_count_table(count_text_table(text, "bpe"), tmp_path / "v2.npz")
    with np.load(tmp_path / "v2.npz") as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    assert meta["version"] == 2 and meta["algorithm"] == "bpe" and meta["order"] == "bytes"
    old = {k: v for k, v in meta.items() if k not in ("algorithm", "lowercase", "order")} | {"version": 1}
    arrays["meta"] = np.frombuffer(json.dumps(old).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    (tmp_path / "v1.npz").write_bytes(buf.getvalue())
    table = load_count_table(tmp_path / "v1.npz", pattern="gpt2")
    assert table.algorithm == "bpe" and not table.lowercase
    assert _bpe_key(train_from_table(table, 300)) == _bpe_key(train_bpe(text, 300, [], "gpt2"))


def test_train_from_counts_is_refused_for_words_no_trainer_could_have_counted():
    from bpe_core.unigram.trainer import train_unigram_from_counts
    from bpe_core.wordpiece import train_wordpiece_from_counts

    with pytest.raises(ValueError, match="hold no whitespace"):
        train_wordpiece_from_counts({"two words": 1}, 50, ["[UNK]"])
    with pytest.raises(TypeError, match="keys must be str words"):
        train_wordpiece_from_counts({b"bytes": 1}, 50, ["[UNK]"])
    with pytest.raises(ValueError, match="counts must be at least 1"):
        train_wordpiece_from_counts({"w": 0}, 50, ["[UNK]"])
    with pytest.raises(ValueError, match="unpaired surrogate"):
        train_unigram_from_counts({"a\ud800": 2}, 50)
    with pytest.raises(TypeError, match="must be an int"):
        train_unigram_from_counts({"▁a": 2.0}, 50)


def _run(*args, cwd):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "bpe_core", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("algorithm", "flags", "size"),
    [("wordpiece", ["--lowercase"], 650), ("unigram", [], 520), ("bpe", ["--pattern", "bert"], 420)],
)
def test_cli_count_shards_then_train_from_counts_equals_training_on_the_text(tmp_path, algorithm, flags, size):
    shards = _document_shards(TEXT, 2) if algorithm == "unigram" else _shards(TEXT, 2)
    for i, shard in enumerate(shards):
        (tmp_path / f"s{i}.txt").write_text(shard, encoding="utf-8")
        res = _run(
            "count", f"s{i}.txt", "--algorithm", algorithm, *flags, "--out", f"s{i}.npz", "--quiet", cwd=tmp_path
        )
        assert res.returncode == 0, res.stderr
        assert f"for {algorithm}" in res.stderr
    res = _run("train", "--from-counts", "s0.npz", "s1.npz", "--vocab-size", str(size), "--out", "tok.json",
               "--quiet", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (tmp_path / "whole.txt").write_text("".join(shards), encoding="utf-8")
    res = _run("train", "whole.txt", "--algorithm", algorithm, *flags, "--vocab-size", str(size), "--out",
               "direct.json", "--quiet", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    from_counts = json.loads((tmp_path / "tok.json").read_text(encoding="utf-8"))
    direct = json.loads((tmp_path / "direct.json").read_text(encoding="utf-8"))
    for d in (from_counts, direct):
        d.pop("training", None)  # seconds differ
    assert from_counts == direct
    # a table for another algorithm: one line, status 2, both named
    other = "unigram" if algorithm != "unigram" else "wordpiece"
    res = _run("train", "--from-counts", "s0.npz", "--algorithm", other, "--vocab-size", "900", "--out", "x.json",
               cwd=tmp_path)  # fmt: skip
    assert res.returncode == 2 and "\n" not in res.stderr.strip()
    assert f"s0.npz was counted for {algorithm}" in res.stderr and f"not for {other}" in res.stderr
    assert not (tmp_path / "x.json").exists()
