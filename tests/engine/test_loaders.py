"""Every loader validates what it loads: a precise ``ValueError`` (file, field, fix) or a tokenizer that decodes right.

Hand-made damaged files for each check the issue found, and property tests that
damage real files at random (any field replaced by any JSON value, or removed):
the result is either a ``ValueError``/``TypeError`` or a tokenizer whose
``decode(encode(text))`` gives the text back and whose byte ids decode to their bytes.
"""

from __future__ import annotations

import base64
import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_core import BPETokenizer, WordPieceTokenizer, train_bpe, train_wordpiece
from bpe_core.bpe.ranks import ranks_to_vocab_merges
from bpe_core.formats.bert import wordpiece_from_vocab_txt
from bpe_core.formats.huggingface import bpe_to_hf_json, wordpiece_to_hf_json
from bpe_core.formats.tiktoken import bpe_to_tiktoken_files, parse_tiktoken_file
from bpe_core.formats.upload import decode_text_upload, load_tokenizer_bytes
from tests.conftest import sample

TEXT = sample("english")[:3000]
CHECK = "Hello, wörld! 東京 <|endoftext|> \x00\xff A"


@pytest.fixture(scope="module")
def bpe() -> BPETokenizer:
    return train_bpe(TEXT, 300, ["<|endoftext|>"])


@pytest.fixture(scope="module")
def wordpiece() -> WordPieceTokenizer:
    return train_wordpiece(TEXT, 120)


def load(obj, name="tok.json", meta=None):
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode("utf-8")
    return load_tokenizer_bytes(data, name, meta)


# ---------------------------------------------------------------------------
# the project's BPE JSON


def test_a_missing_byte_is_refused(bpe):
    d = bpe.to_dict()
    del d["vocab"]["65"]
    d["merges"] = [m for m in d["merges"] if 65 not in m]
    with pytest.raises(ValueError, match=r"tok.json: .*no token for the single byte 0x41.*save or export"):
        load(d)


def test_a_special_token_on_a_bytes_id_is_refused(bpe):
    d = bpe.to_dict()
    d["vocab"]["65"] = base64.b64encode(b"<s>").decode()
    d["special_tokens"] = {"<s>": 65}
    d["merges"] = [m for m in d["merges"] if 65 not in m]
    with pytest.raises(ValueError, match="no token for the single byte 0x41"):
        load(d)
    d = bpe.to_dict()
    d["special_tokens"] = {"A": 65}  # the byte's only id, taken by a special token
    d["merges"] = [m for m in d["merges"] if 65 not in m]
    with pytest.raises(ValueError, match="0x41 other than special token 'A' \\(id 65\\)"):
        load(d)


def test_a_special_id_outside_the_vocabulary_is_refused(bpe):
    d = bpe.to_dict()
    d["special_tokens"] = {"<|endoftext|>": 99999}
    with pytest.raises(ValueError, match="id 99999, which is not in the vocabulary"):
        load(d)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(vocab="x"), '"vocab" must be an object'),
        (lambda d: d.update(vocab=[1, 2]), '"vocab" must be an object'),
        (lambda d: d["vocab"].update({"1.5": "QQ=="}), "must be a token id written as digits"),
        (lambda d: d["vocab"].update({"0": 7}), r'"vocab"\["0"\] must be a base64 string, got a whole number'),
        (lambda d: d["vocab"].update({"0": "!!"}), "not valid base64"),
        (lambda d: d.update(merges={}), '"merges" must be a list'),
        (lambda d: d["merges"].append("ab"), r'"merges"\[\d+\] must be a list'),
        (lambda d: d["merges"].append([1, 2]), "must hold 3 ids"),
        (lambda d: d["merges"].append([1, 2, 3.0]), "must be a whole number, got a number"),
        (lambda d: d["merges"].append([1, 2, True]), "must be a whole number, got true/false"),
        (lambda d: d["merges"].append([1, 2, -3]), "must be at least 0"),
        (lambda d: d["merges"].append([66, 67, 65]), "not those of ids 66 \\+ 67"),
        (lambda d: d["merges"].append(list(d["merges"][0])), "already created"),
        (lambda d: d.update(special_tokens=["<|endoftext|>"]), '"special_tokens" must be an object'),
        (lambda d: d.update(pattern=None), '"pattern" must be a regex string'),
        (lambda d: d.update(pattern_name="gpt5"), '"pattern_name" .* is not one of'),
        (lambda d: d.update(name=["x"]), '"name" must be a string'),
        (lambda d: d.update(trace="x"), '"trace" must be a list'),
        (lambda d: d["trace"].__setitem__(0, [1, 2]), "must hold 7 numbers"),
        (lambda d: d.update(training=[1]), '"training" must be an object'),
        (lambda d: d["training"].update(count_seconds="fast"), '"training.count_seconds" must be a number'),
        (lambda d: d["training"].update(color=1), "unknown field 'color'"),
        (lambda d: d.pop("vocab"), 'the field "vocab" is missing'),
        (lambda d: d["vocab"].update({str(10**40): "QQ=="}), "far beyond the vocabulary"),
    ],
)
def test_malformed_bpe_fields_are_named(bpe, change, message):
    d = copy.deepcopy(bpe.to_dict())
    change(d)
    with pytest.raises(ValueError, match=message) as info:
        load(d)
    assert str(info.value).startswith("tok.json: ")


# ---------------------------------------------------------------------------
# the project's WordPiece JSON


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(vocab="abc"), '"vocab" must be a list'),
        (lambda d: d["vocab"].append(7), r'"vocab"\[\d+\] must be a token string'),
        (lambda d: d.update(special_tokens={"[UNK]": 1}), '"special_tokens" must be a list'),
        (lambda d: d.update(unk_token=1), '"unk_token" must be a string'),
        (lambda d: d.update(lowercase="no"), '"lowercase" must be true or false'),
        (lambda d: d.update(max_input_chars_per_word=0), "must be at least 1"),
        (lambda d: d.update(min_vocab_size=10**9), '"min_vocab_size" must be 0..'),
        (lambda d: d["trace"].__setitem__(0, "x"), r'"trace"\[0\] must be a list'),
        (lambda d: d["trace"][0].__setitem__(3, 10**9), r'"trace"\[0\] must be 0\.\.'),
        (lambda d: d.pop("unk_token"), 'the field "unk_token" is missing'),
    ],
)
def test_malformed_wordpiece_fields_are_named(wordpiece, change, message):
    d = copy.deepcopy(wordpiece.to_dict())
    change(d)
    with pytest.raises(ValueError, match=message) as info:
        load(d)
    assert str(info.value).startswith("tok.json: ")


# ---------------------------------------------------------------------------
# Hugging Face tokenizer.json


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(pre_tokenizer="ByteLevel"), '"pre_tokenizer" must be an object'),
        (lambda d: d.update(pre_tokenizer=["Split"]), '"pre_tokenizer" must be an object'),
        (lambda d: d["pre_tokenizer"].update(pretokenizers="x"), '"pre_tokenizer.pretokenizers" must be a list'),
        (lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(pattern="x"), '"pattern" must be an object'),
        (lambda d: d.update(added_tokens="<|endoftext|>"), '"added_tokens" must be a list'),
        (lambda d: d["added_tokens"][0].pop("id"), r'"added_tokens"\[0\] needs both "id" and "content"'),
        (lambda d: d["added_tokens"][0].update(id="256"), r'"added_tokens"\[0\].id must be a whole number'),
        (lambda d: d["added_tokens"][0].update(content=None), r"content must be a string"),
        (lambda d: d["model"].update(vocab=["a"]), '"model.vocab" must be an object'),
        (lambda d: d["model"].update(merges="a b"), '"model.merges" must be a list'),
        (lambda d: d["model"]["merges"].append("a b c"), "must be two tokens"),
        (lambda d: d["model"]["merges"].append(7), "must be a string or a list"),
        (lambda d: d["model"]["vocab"].update(x=1.5), "must be a whole number"),
        (lambda d: d["model"]["vocab"].update({"a b": 9000}), "outside GPT-2's byte alphabet"),
        (lambda d: d["model"]["vocab"].update(xyz=0), "id 0 is given to two tokens"),
        (lambda d: d.update(model="BPE"), '"model" must be an object, got a string'),
    ],
)
def test_malformed_hf_bpe_fields_are_named(bpe, change, message):
    d = json.loads(bpe_to_hf_json(bpe))
    change(d)
    with pytest.raises(ValueError, match=message) as info:
        load(d, "tokenizer.json")
    assert str(info.value).startswith("tokenizer.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(normalizer="Lowercase"), '"normalizer" must be an object'),
        (lambda d: d.update(normalizer={"type": "Sequence", "normalizers": "x"}), 'normalizers" must be a list'),
        (lambda d: d.update(pre_tokenizer=["Bert"]), '"pre_tokenizer" must be an object'),
        (
            lambda d: d["added_tokens"][0].update(id=3),
            r'"added_tokens"\[0\].id is 3 for .\[PAD\]., which has the id 0 in "model.vocab"',
        ),
        (lambda d: d["model"].update(max_input_chars_per_word="100"), "must be a whole number"),
    ],
)
def test_malformed_hf_wordpiece_fields_are_named(wordpiece, change, message):
    d = json.loads(wordpiece_to_hf_json(wordpiece))
    change(d)
    with pytest.raises(ValueError, match=message):
        load(d, "tokenizer.json")


def test_deeply_nested_json_is_a_message_not_a_recursion_error():
    for data in (b'{"model": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", b"{" + b'"a":{' * 10_000 + b"}" * 10_001):
        with pytest.raises(ValueError, match="levels deep"):
            load(data)


# ---------------------------------------------------------------------------
# .tiktoken and its metadata


def ranks_file(ranks: dict[bytes, int]) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items())


BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize(
    ("extra", "meta", "message"),
    [
        ({b"ab": 10**40}, None, f"rank {10**40}, outside 0..65792"),
        ({b"ab": 257}, {"pat_str": "x", "special_tokens": {}}, "rank 257, outside 0..256: the ranks must number"),
        ({b"ab": 300}, {"pat_str": "x", "special_tokens": {"<s>": 256}}, "rank 300, outside 0..257"),
        ({b"ab": 256}, {"pat_str": "x", "special_tokens": {"<s>": 256}}, "the id of special token '<s>'"),
        ({b"ab": 256}, {"pat_str": "x", "special_tokens": {"<s>": 10**9}}, "has id 1000000000, beyond"),
        ({b"ab": 256}, {"pat_str": "x", "special_tokens": {"<s>": 257, "</s>": 257}}, "share id 257"),
        ({b"ab": 256}, {"pat_str": "x", "special_tokens": ["<s>"]}, '"special_tokens" must be an object'),
        ({b"ab": 256}, {"pat_str": 3, "special_tokens": {}}, '"pat_str" must be a regex string'),
        ({b"ab": 256}, {"pat_str": "x", "special_tokens": {"<s>": "257"}}, "must be a whole number"),
        ({b"ab": 256}, {"special_tokens": {}}, 'the field "pat_str" is missing'),
        ({b"ab": 256}, [1], "the metadata must be a JSON object"),
    ],
)
def test_bad_ranks_and_metadata_are_refused(extra, meta, message):
    data = ranks_file({**BYTES, **extra})
    meta_bytes = None if meta is None else json.dumps(meta).encode()
    with pytest.raises(ValueError, match=message):
        load(data, "x.tiktoken", meta_bytes)


def test_a_duplicate_rank_is_refused():
    with pytest.raises(ValueError, match="rank 5 appears twice"):
        load(ranks_file(BYTES) + base64.b64encode(b"ab") + b" 5\n", "x.tiktoken")


def test_cl100k_specials_beyond_the_ranks_are_fine(bpe):
    ranks, meta = bpe_to_tiktoken_files(bpe)
    m = json.loads(meta)
    m["special_tokens"] = {"<|endoftext|>": len(json.loads(meta)["special_tokens"]) + 10_000}
    m.pop("explicit_n_vocab")
    # a gap after the last rank (as cl100k's 100,257..100,276) is allowed only where a special is ...
    with pytest.raises(ValueError, match=r"outside 0\.\.298"):
        load(ranks, "x.tiktoken", json.dumps(m).encode())


def test_str_where_bytes_belong_is_a_type_error(bpe):
    ranks, meta = bpe_to_tiktoken_files(bpe)
    with pytest.raises(TypeError, match="bytes"):
        load_tokenizer_bytes(ranks.decode(), "x")
    with pytest.raises(TypeError, match="bytes"):
        load_tokenizer_bytes(ranks, "x", meta.decode())
    with pytest.raises(TypeError, match="bytes"):
        parse_tiktoken_file(ranks.decode())
    with pytest.raises(TypeError, match="bytes"):
        wordpiece_from_vocab_txt("[UNK]\na\n")
    with pytest.raises(TypeError, match="bytes"):
        decode_text_upload("text")
    with pytest.raises(TypeError, match="bytes"):
        ranks_to_vocab_merges({"a": 0})
    with pytest.raises(TypeError, match="bytes"):
        BPETokenizer({i: chr(i) for i in range(256)}, [])
    with pytest.raises(TypeError, match="bytes"):
        BPETokenizer.from_parts(
            vocab={i: chr(i) for i in range(256)}, merges=[], special_tokens={}, pattern="gpt2", name="x"
        )


# ---------------------------------------------------------------------------
# random damage to real files


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k in list(node)[:40]:
            yield from _paths(node[k], (*prefix, k))
    elif isinstance(node, list):
        for i in range(min(len(node), 3)):
            yield from _paths(node[i], (*prefix, i))
        if node:
            yield from _paths(node[-1], (*prefix, len(node) - 1))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def damage(obj, data) -> object:
    obj = copy.deepcopy(obj)
    paths = list(_paths(obj))
    path = data.draw(st.sampled_from(paths[1:]))
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(JSON_VALUES)
    return obj


def assert_loads_right_or_refuses(data: bytes, name: str, meta: bytes | None = None) -> None:
    try:
        tok = load_tokenizer_bytes(data, name, meta)
    except ValueError as exc:
        assert str(exc).startswith(name) or name in str(exc)
        return
    ids = tok.encode(CHECK)
    if tok.is_byte_level:
        assert tok.decode(ids) == CHECK
        for i, b in tok.vocab.items():  # every id decodes to its own bytes
            assert tok.decode_bytes([i]) == b
    else:
        assert all(0 <= i < tok.vocab_size for i in ids)


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(data=st.data())
def test_random_damage_to_project_bpe_json(bpe, data):
    assert_loads_right_or_refuses(json.dumps(damage(bpe.to_dict(), data)).encode(), "tok.json")


@SETTINGS
@given(data=st.data())
def test_random_damage_to_project_wordpiece_json(wordpiece, data):
    assert_loads_right_or_refuses(json.dumps(damage(wordpiece.to_dict(), data)).encode(), "wp.json")


@SETTINGS
@given(data=st.data())
def test_random_damage_to_hf_bpe_json(bpe, data):
    assert_loads_right_or_refuses(json.dumps(damage(json.loads(bpe_to_hf_json(bpe)), data)).encode(), "tokenizer.json")


@SETTINGS
@given(data=st.data())
def test_random_damage_to_hf_wordpiece_json(wordpiece, data):
    obj = damage(json.loads(wordpiece_to_hf_json(wordpiece)), data)
    assert_loads_right_or_refuses(json.dumps(obj).encode(), "tokenizer.json")


@SETTINGS
@given(data=st.data())
def test_random_damage_to_tiktoken_metadata(bpe, data):
    ranks, meta = bpe_to_tiktoken_files(bpe)
    assert_loads_right_or_refuses(ranks, "x.tiktoken", json.dumps(damage(json.loads(meta), data)).encode())


@SETTINGS
@given(lines=st.data())
def test_random_damage_to_tiktoken_ranks(bpe, lines):
    ranks, meta = bpe_to_tiktoken_files(bpe)
    rows = ranks.split(b"\n")
    k = lines.draw(st.integers(0, len(rows) - 1))
    rows[k] = lines.draw(st.from_regex(rb"\A[A-Za-z0-9+/=]{0,8} ?[0-9]{0,45}\Z") | st.binary(max_size=10))
    assert_loads_right_or_refuses(b"\n".join(rows), "x.tiktoken", meta)


UNIGRAM_MUTATIONS = [
    ("nan score", lambda m: m["vocab"][1].__setitem__(1, float("nan")), '"model.vocab"[1][1] must be a finite number'),
    ("infinite score", lambda m: m["vocab"][2].__setitem__(1, float("-inf")), '"model.vocab"[2][1] must be a finite'),
    ("score as text", lambda m: m["vocab"][2].__setitem__(1, "-2"), '"model.vocab"[2][1] must be a number'),
    ("boolean unk_id", lambda m: m.__setitem__("unk_id", True), '"model.unk_id" must be a whole number'),
    ("unk_id out of range", lambda m: m.__setitem__("unk_id", 99), '"model.unk_id" must be 0..3, got 99'),
    ("no unk_id", lambda m: m.pop("unk_id"), '"model.unk_id" is missing'),
    ("short pair", lambda m: m["vocab"].__setitem__(0, ["x"]), '"model.vocab"[0] must be a [piece, score] pair'),
    ("piece not text", lambda m: m["vocab"][3].__setitem__(0, 7), '"model.vocab"[3][0] must be a string'),
]


@pytest.mark.parametrize(("what", "mutate", "message"), UNIGRAM_MUTATIONS, ids=[m[0] for m in UNIGRAM_MUTATIONS])
def test_unigram_tokenizer_json_is_checked_to_the_last_field(what, mutate, message):
    """NaN/Infinity scores (Python's json reads them) and a boolean unk_id used to load silently."""
    from bpe_core import unigram_from_hf_json, unigram_to_hf_json
    from bpe_core.unigram import UnigramTokenizer

    tok = UnigramTokenizer.from_pieces([("▁a", -1.0), ("a", -2.0), ("▁", -2.0)])
    data = json.loads(unigram_to_hf_json(tok))
    mutate(data["model"])
    with pytest.raises(ValueError) as err:
        unigram_from_hf_json(json.dumps(data), "x.json")
    assert str(err.value).startswith("x.json: ") and message in str(err.value)
