"""Every tokenizer file is checked to the last field (issue 32.8).

Each supported format is written from a real tokenizer trained on the English sample (the project's own
JSON for BPE, WordPiece and Unigram; Hugging Face ``tokenizer.json`` for the same three; tiktoken's ranks
file and its metadata; BERT's ``vocab.txt``).  Then every field of the file -- every key of every object,
the first, second, sixth and last element of every list, the first and last two entries of every large map
-- is replaced, one at a time, by values of the wrong kind: a boolean or a fraction or a digit string where
a whole number belongs, ``NaN``/``Infinity`` where a score belongs, a number where a string belongs, a
negative or far-out id, null where a value is required.  Each mutated file must be refused by
:func:`bpe_core.load_tokenizer_bytes` with a ``ValueError`` whose one-line message names the field
(its innermost key, quoted or after a dot: ``"model.unk_id"``, ``"trace"[3]``), never load quietly, never
raise anything else.

The few mutations a format allows are listed with why (:data:`ALLOWED`): an optional field set to null
(the writer's own way of saying "absent"), and counts that have no upper bound.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator

import pytest

import bpe_core
from bpe_core import load_tokenizer_bytes
from bpe_core.formats.bert import wordpiece_to_vocab_txt
from bpe_core.formats.huggingface import to_hf_json
from bpe_core.formats.tiktoken import bpe_to_tiktoken_files
from tests.conftest import sample

WP_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FAR = 10**9
"""An id far beyond any vocabulary here."""

WRONG: dict[type, tuple] = {
    int: (True, False, 1.5, "7", None, -1, FAR),
    float: (math.nan, math.inf, -math.inf, "0.5", True, None),
    str: (5, True, None, ["x"]),
    bool: (1, "true", None),
    list: ({}, 5, "x", None),
    dict: ([], 5, "x", None),
}
"""Values of the wrong kind for a field holding a value of each kind (a bool is its own kind)."""

OPTIONAL = {"version", "added_tokens", "explicit_n_vocab", "name", "pattern_name", "trace", "training",
            "normalizer", "pre_tokenizer", "post_processor", "decoder", "truncation", "padding", "dropout",
            "unk_token", "continuing_subword_prefix", "end_of_word_suffix"}  # fmt: skip
"""Fields a writer sets to null to say "absent" (null is then allowed; any other wrong value is not)."""

COUNTS = {"requested_vocab_size", "pretokens", "unique_pretokens", "special_occurrences", "initial_tokens",
          "count_seconds", "merge_seconds", "words", "unique_words", "em_rounds", "seed_pieces",
          "max_input_chars_per_word", "characters", "seed_size", "rounds", "seed_seconds", "em_seconds",
          "prune_seconds"}  # fmt: skip
"""Fields holding counts (or durations): any size is a count; :data:`FAR` there is no error."""

ALLOWED = {(key, None) for key in OPTIONAL} | {(key, FAR) for key in COUNTS}
"""``(innermost key, value)`` mutations that may load."""


def _kind(value: object) -> type | None:
    if isinstance(value, bool):
        return bool
    return next((k for k in (int, float, str, list, dict) if isinstance(value, k)), None)


def _fields(obj: object, path: tuple = ()) -> Iterator[tuple[tuple, object]]:
    """``(path, value)`` of every field below ``obj`` (lists and large maps sampled, see the module's docstring)."""
    if isinstance(obj, dict):
        items = list(obj.items())
        for key, value in items if len(items) <= 40 else items[:2] + items[-2:]:
            yield (*path, key), value
            yield from _fields(value, (*path, key))
    elif isinstance(obj, list):
        for i in sorted({0, 1, 5, len(obj) - 1} & set(range(len(obj)))):
            yield (*path, i), obj[i]
            yield from _fields(obj[i], (*path, i))


MAPS = {"vocab", "special_tokens"}
"""Fields holding maps (``{"token": id}``): their keys are tokens, not field names."""


def _named(path: tuple) -> str:
    """The innermost key of ``path`` that is a field name (not a list index, not a token in a map)."""
    names = [p for k, p in enumerate(path) if isinstance(p, str) and not (k and path[k - 1] in MAPS)]
    return names[-1] if names else ""


def _in_map(path: tuple) -> bool:
    """Whether the last key of ``path`` is a token in a map (``{"token": id}``), not a field name."""
    return len(path) > 1 and path[-2] in MAPS


def _set(obj: dict, path: tuple, value: object) -> dict:
    out = copy.deepcopy(obj)
    target = out
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return out


UNIGRAM_ROUND_TOKENS = ("trace", 6)
"""The project's Unigram file: a round's row ``[..., tokens after]`` ends in a count (the tokens a round leaves
may rise or fall, and the file holds no bound on them)."""


def _refusals(data: dict, load, counts_at: tuple = ()) -> list[str]:
    """Every mutation of ``data`` that ``load`` does not refuse as it must (empty when all are refused).

    ``counts_at``: ``(first key, last index)`` of a list row's field that holds a count (:data:`FAR` loads).
    """
    load(data)  # the file itself loads
    wrong = []
    for path, value in _fields(data):
        kind = _kind(value)
        if kind is None:
            continue
        name = _named(path) if not _in_map(path) else _named(path[:-1])
        for bad in WRONG[kind]:
            if not isinstance(bad, list | dict) and (name, bad) in ALLOWED and not _in_map(path):
                continue
            if bad == FAR and counts_at and (path[0], path[-1]) == counts_at:
                continue
            where = "".join(f"[{p!r}]" for p in path) + f" = {bad!r}"
            try:
                load(_set(data, path, bad))
            except ValueError as exc:
                msg = str(exc)
                if name and not re.search(rf'["\.]{name}\b', msg):
                    wrong.append(f"{where}: the message does not name {name!r}: {msg[:160]}")
                elif "\n" in msg:
                    wrong.append(f"{where}: the message is more than one line")
                continue
            except Exception as exc:  # anything but ValueError is the defect reported
                wrong.append(f"{where}: {type(exc).__name__}: {str(exc)[:160]}")
                continue
            wrong.append(f"{where}: loaded")
    return wrong


@pytest.fixture(scope="module")
def trained() -> dict:
    text = sample("english")[:4000]
    return {
        "bpe": bpe_core.train_bpe(text, 300, ["<|endoftext|>"]),
        "wordpiece": bpe_core.train_wordpiece(text, 140, WP_SPECIALS),
        "unigram": bpe_core.train_unigram(text, 120),
    }


def _json_loader(filename: str):
    return lambda obj: load_tokenizer_bytes(json.dumps(obj).encode("utf-8"), filename)


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_own_json_refuses_every_wrong_field(trained, algorithm):
    counts_at = UNIGRAM_ROUND_TOKENS if algorithm == "unigram" else ()
    problems = _refusals(trained[algorithm].to_dict(), _json_loader("mine.json"), counts_at)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("algorithm", ["bpe", "wordpiece", "unigram"])
def test_hugging_face_json_refuses_every_wrong_field(trained, algorithm):
    problems = _refusals(json.loads(to_hf_json(trained[algorithm])), _json_loader("tokenizer.json"))
    assert problems == [], "\n".join(problems)


def test_tiktoken_metadata_refuses_every_wrong_field(trained):
    ranks, meta = bpe_to_tiktoken_files(trained["bpe"])
    problems = _refusals(
        json.loads(meta), lambda m: load_tokenizer_bytes(ranks, "mine.tiktoken", json.dumps(m).encode())
    )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"IQ== 1 2", "line 34"),  # three fields
        (b"IQ== +33", "rank"),  # int() would read these
        (b"IQ== 3_3", "rank"),
        (b"IQ== -1", "rank"),
        (b"IQ== \xd9\xa3", "rank"),  # an Arabic-Indic digit three
        (b"IQ==== 33", "line 34"),  # not base64
        (b"IQ== 99999999999", "rank"),
    ],
)
def test_tiktoken_ranks_refuse_a_wrong_line(trained, line, says):
    ranks, _meta = bpe_to_tiktoken_files(trained["bpe"])
    lines = ranks.splitlines()
    assert lines[33].startswith(b"IQ== ")  # byte 0x21 "!", rank 33
    lines[33] = line
    with pytest.raises(ValueError, match=says):
        load_tokenizer_bytes(b"\n".join(lines) + b"\n", "mine.tiktoken")


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda lines: [*lines[:10], "", *lines[10:]], "line 11 is empty"),
        (lambda lines: [*lines, lines[40]], "appears twice"),
        (lambda lines: [t for t in lines if t != "[UNK]"], r"no \[UNK\]"),
        (lambda lines: [*lines[:50], "abc ", *lines[50:]], "line 51 .* ends in whitespace"),  # BERT's reader drops
        (lambda lines: [*lines[:50], "\t", *lines[50:]], "line 51 .* ends in whitespace"),  # it: 'abc', ''
        (lambda lines: [*lines[:60], lines[3], *lines[60:]], "line 61: .* appears twice"),
    ],
)
def test_vocab_txt_refuses_a_wrong_line(trained, edit, says):
    lines = wordpiece_to_vocab_txt(trained["wordpiece"]).decode("utf-8").split("\n")[:-1]
    load_tokenizer_bytes(("\n".join(lines) + "\n").encode(), "vocab.txt")
    with pytest.raises(ValueError, match=says):
        load_tokenizer_bytes(("\n".join(edit(lines)) + "\n").encode(), "vocab.txt")


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("unk_id", True, '"model.unk_id" must be a whole number, got true/false'),
        ("unk_id", 1.0, '"model.unk_id" must be a whole number, got a number'),
        ("score", math.nan, r'"model.vocab"\[3\]\[1\] must be a finite number, got nan'),
        ("score", math.inf, r'"model.vocab"\[3\]\[1\] must be a finite number, got inf'),
    ],
)
def test_issue_examples_unigram_tokenizer_json(trained, field, value, says):
    """The issue's own examples: ``"unk_id": true`` made id 1 the unknown token; a NaN score loaded."""
    obj = json.loads(to_hf_json(trained["unigram"]))
    if field == "unk_id":
        obj["model"]["unk_id"] = value
    else:
        obj["model"]["vocab"][3][1] = value
    with pytest.raises(ValueError, match=says):
        load_tokenizer_bytes(json.dumps(obj).encode(), "tokenizer.json")
