"""Pre-tokenization agrees with tiktoken's regex engine on every character; custom patterns are checked.

The oracle is tiktoken itself: its own ``r50k_base``/``cl100k_base``/``o200k_base``
encodings (the verified ranks files) and tiktoken run with each atom of a pattern.
"""

from __future__ import annotations

import random
import threading
import time

import pytest
import regex
import tiktoken

from bpe_core import BPETokenizer, train_bpe
from bpe_core.pretokenize import (
    CL100K_PATTERN,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    TIKTOKEN_SOURCES,
    compile_pattern,
    iter_pretoken_strings,
    pretokenize,
)
from bpe_core.pretokenize.patterns import _probe_backtracking
from bpe_core.pretokenize.tiktoken_compat import ATOM_DIFFS, atoms, disputed_chars, exact_pattern, probe_atoms
from bpe_core.production.encodings import bpe_from_encoding, load_encoding

NAMED = (GPT2_PATTERN, GPT2_ORIGINAL_PATTERN, CL100K_PATTERN, O200K_PATTERN)


def _disputed_code_points() -> list[int]:
    """Every code point some atom of the named patterns classifies differently: range ends and a spread inside."""
    out: set[int] = set()
    for minus, plus in ATOM_DIFFS.values():
        for a, b in (*minus, *plus):
            out.update({a, b, (a + b) // 2})
            out.update(range(a, b + 1, max(1, (b - a) // 8)))
    return sorted(out)


def test_the_table_is_what_tiktoken_and_regex_say_today():
    # if tiktoken or regex is upgraded, this fails and format_table() gives the new table
    found = probe_atoms(list(dict.fromkeys(a for p in NAMED for a in atoms(p))))
    assert found == ATOM_DIFFS
    assert found, "the installed regex module and tiktoken disagree on no character: drop the compat layer"


def test_exact_pattern_splits_every_disputed_character_as_tiktoken_does():
    ranks = {bytes([b]): b for b in range(256)}
    every = "".join(chr(c) for c in _disputed_code_points())
    for atom in dict.fromkeys(a for p in NAMED for a in atoms(p)):
        enc = tiktoken.Encoding("probe", pat_str=atom, mergeable_ranks=ranks, special_tokens={})
        theirs = bytes(enc.encode_ordinary(every)).decode("utf-8")
        import regex

        ours = "".join(regex.findall(exact_pattern(atom), every))
        assert ours == theirs, atom


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_same_ranks_give_tiktokens_ids_on_newly_assigned_characters(name):
    ref = load_encoding(name)  # tiktoken's own encoder
    ours = bpe_from_encoding(name)  # this project's encoder on the same ranks
    rng = random.Random(7)
    cps = _disputed_code_points()
    texts = []
    for c in map(chr, cps):
        texts += [f"a{c}b", f" {c}{c}x", f"1{c}'s {c}\n", f"The{c} {c}Word. {c}!"]
    texts.append(" ".join(chr(c) for c in rng.sample(cps, min(400, len(cps)))))
    bad = [t for t in texts if ours.encode(t) != ref.encode(t)]
    assert not bad, f"{len(bad)} texts differ, e.g. {bad[0]!r}"


def test_a_trained_tokenizer_equals_its_tiktoken_copy_on_new_characters():
    cps = _disputed_code_points()
    text = " ".join(f"word{chr(c)}s {chr(c)}{chr(c)} 12{chr(c)}" for c in cps[:300]) + " plain english text " * 50
    tok = train_bpe(text, 600, ("<|endoftext|>",), "cl100k")
    fast = tok.fast_encoder()
    assert fast is not None
    assert fast(text) == tok.encode(text)


def test_text_without_disputed_characters_keeps_the_fast_pattern():
    rx = compile_pattern(O200K_PATTERN)
    assert disputed_chars(O200K_PATTERN).isdisjoint("Grüße, 世界! 🙂")
    assert not disputed_chars(O200K_PATTERN).isdisjoint("a\U00010940")
    assert iter_pretoken_strings("Grüße, 世界! 🙂", rx) == rx.findall("Grüße, 世界! 🙂")
    assert all(p in TIKTOKEN_SOURCES for p in NAMED)


def test_one_long_text_is_checked_once_per_pattern_whatever_the_order(monkeypatch):
    """Compare asks about one long text under several tiktoken patterns in turn: each pattern checks it once."""
    from bpe_core.pretokenize import patterns

    calls = []
    real = patterns._holds_any
    monkeypatch.setattr(patterns, "_holds_any", lambda text, table: calls.append(1) or real(text, table))
    text = "Grüße, 世界! " * 1000 + "a\U00010940"  # holds a character the two engines classify differently
    plain = "Grüße, 世界! " * 1000
    rxs = [compile_pattern(p) for p in (CL100K_PATTERN, O200K_PATTERN)]
    answers = [[patterns.exact_for(rx, text) is not rx for rx in rxs] for _ in range(5)]
    assert answers == [[True, True]] * 5 and len(calls) == 2
    assert [patterns.exact_for(rx, plain) is rx for rx in rxs] == [True, True]  # another text: asked again
    assert len(calls) == 4


def test_a_reverse_search_pattern_is_refused():
    with pytest.raises(ValueError, match=r"\(\?r\).*reverse order"):
        compile_pattern(r"(?r)\w+|\s+")
    with pytest.raises(ValueError, match="reverse order"):
        BPETokenizer({i: bytes([i]) for i in range(256)}, [], pattern=r"(?r)\S+|\s+")


def test_a_catastrophically_backtracking_pattern_is_refused_up_front():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="backtracks catastrophically"):
        compile_pattern(r"(a|a)+b|[\s\S]")
    assert time.perf_counter() - t0 < 5  # refused by a probe, not after a long run


def test_a_pattern_is_not_refused_while_another_thread_holds_the_gil():
    """The probe judges the pattern, not the server: a thread holding the GIL in one long C call (a sort of
    2 million floats, about 0.5 s) made every probe time out, and the warm-up refused Qwen 3.5's pattern."""
    rx = regex.compile(CL100K_PATTERN)
    rng = random.Random(7)
    numbers = [rng.random() for _ in range(2_000_000)]
    stop = threading.Event()
    hog = threading.Thread(target=lambda: [sorted(numbers) for _ in iter(stop.is_set, True)])
    hog.start()
    try:
        time.sleep(0.2)
        for _ in range(5):
            _probe_backtracking(rx)  # raises ValueError when refused
    finally:
        stop.set()
        hog.join()
    with pytest.raises(ValueError, match="backtracks catastrophically"):
        _probe_backtracking(regex.compile(r"(a|a)+b|[\s\S]"))


def test_a_pattern_slow_only_on_the_users_text_is_stopped_with_a_message():
    slow = r"(x|x)+y|[\s\S]"  # fine on the probes (no x), exponential on a run of x's
    compile_pattern(slow)
    with pytest.raises(ValueError, match=r"took more than .* s on 40 characters"):
        pretokenize("x" * 40, slow)
    with pytest.raises(ValueError, match="took more than"):
        train_bpe("x" * 40, 260, (), slow)


def test_custom_patterns_keep_text_in_order():
    for pattern in (r"(?<=\s)\w+|\w+|\s+|.", r"\w+(?=\s)|\w+|\W", r"[aeiou]+"):
        text = "héllo wörld, the quick brown fox 12 345 ?!"
        assert "".join(p.text for p in pretokenize(text, pattern)) == text
        tok = train_bpe(text * 3, 280, (), pattern)
        assert tok.decode(tok.encode(text)) == text
