"""Insight numbers: genealogy, vocabulary overlap, held-out split, scripts, unused tokens."""

from __future__ import annotations

import pytest
import tiktoken

from bpe_core import train_bpe
from bpe_core.analysis.insights import (
    TooFewDocuments,
    heldout_split,
    merge_tree,
    production_ranks_of,
    split_documents,
    unused_tokens,
    vocab_diff,
)
from bpe_core.analysis.scripts import char_group, script_breakdown
from bpe_core.production.encodings import ENCODINGS, load_mergeable_ranks

# The CS336 handout corpus; with whitespace splitting its merges are (see test_bpe_train):
# 0 s+t=st(256)  1 e+st=est(257)  2 o+w=ow(258)  3 l+ow=low(259)  4 w+est=west(260)  5 n+e=ne(261)
CS336 = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


@pytest.fixture(scope="module")
def cs336():
    return train_bpe(CS336, 262, pattern=r"\S+")


def test_merge_tree_down_to_bytes(cs336):
    tree = merge_tree(cs336, 260)  # "west" = w + est, est = e + st, st = s + t
    assert (tree.token_bytes, tree.rank) == (b"west", 4)
    left, right = tree.children
    assert (left.token_bytes, left.rank, left.children) == (b"w", None, ())
    assert (right.token_bytes, right.rank) == (b"est", 1)
    assert [c.token_bytes for c in right.children] == [b"e", b"st"]
    assert right.children[1].rank == 0
    assert [leaf.token_bytes for leaf in tree.leaves()] == [b"w", b"e", b"s", b"t"]
    assert tree.depth() == 3
    assert merge_tree(cs336, ord("w")).children == ()


def test_merge_tree_rejects_specials_and_unknown_ids():
    tok = train_bpe("aa aa", 258, special_tokens=["<s>"])
    with pytest.raises(ValueError, match="special token"):
        merge_tree(tok, 256)
    with pytest.raises(ValueError, match="not in this tokenizer's vocabulary"):
        merge_tree(tok, 999)


def test_production_ranks_agree_with_tiktoken():
    refs = {"gpt2": load_mergeable_ranks("gpt2"), "cl100k_base": load_mergeable_ranks("cl100k_base")}
    got = production_ranks_of(b" the", refs)
    for name, ranks in refs.items():
        spec = ENCODINGS[name]
        enc = tiktoken.Encoding(name, pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens={})
        assert enc.encode(" the") == [got[name]]  # a single token in both, at that rank
    assert production_ranks_of(b" zyzzyvaqq", refs) == {"gpt2": None, "cl100k_base": None}


def test_vocab_diff_by_hand(cs336):
    # a made-up reference that has "st" and "low" but none of the other learned tokens
    diff = vocab_diff(cs336, "toy", {b"st": 0, b"low": 5, b"s": 1})
    assert diff.shared == [(0, b"st", 0), (3, b"low", 5)]
    assert diff.only_ours == [(1, b"est"), (2, b"ow"), (4, b"west"), (5, b"ne")]
    assert diff.overlap_curve == [1, 1, 1, 2, 2, 2]
    assert diff.shared_fraction == pytest.approx(2 / 6)


def test_heldout_split_by_document_is_seeded_and_complete():
    text = "\n\n".join(f"document {i} text" for i in range(10))
    train, held = heldout_split(text, 0.3, seed=7)
    assert len(split_documents(held)) == 3 and len(split_documents(train)) == 7
    assert sorted(split_documents(train) + split_documents(held)) == sorted(split_documents(text))
    assert heldout_split(text, 0.3, seed=7) == (train, held)
    splits = {heldout_split(text, 0.3, seed=s)[1] for s in range(6)}
    assert len(splits) > 1  # the seed matters


def test_heldout_split_on_special_separator_and_single_document():
    text = "a b c<|endoftext|>d e f<|endoftext|>g h i"
    train, held = heldout_split(text, 0.34, seed=1, separator="<|endoftext|>")
    assert len(held.split("<|endoftext|>")) == 1 and len(train.split("<|endoftext|>")) == 2
    one = "line one\nline two\nline three\nline four\n"  # 39 chars; 75% -> char 29; the newline before it is at 28
    assert heldout_split(one, 0.25, by="fraction") == ("line one\nline two\nline three\n", "line four\n")
    with pytest.raises(TooFewDocuments, match="one document"):  # no whole document to hold out
        heldout_split(one, 0.25)
    with pytest.raises(ValueError, match="between 0 and 1"):
        heldout_split(one, 1.0)


@pytest.mark.parametrize(
    ("ch", "group"),
    [
        ("a", "Latin"),
        ("ж", "Cyrillic"),
        ("α", "Greek"),
        ("語", "Han"),
        ("ひ", "Kana"),
        ("カ", "Kana"),
        ("한", "Hangul"),
        ("ع", "Arabic"),
        ("ע", "Hebrew"),
        ("ह", "Devanagari"),
        ("7", "Digits"),
        ("٣", "Digits"),  # Arabic-Indic digit three is a decimal digit too
        (" ", "Whitespace"),
        ("\u3000", "Whitespace"),
        ("😀", "Emoji"),
        ("\u200d", "Emoji"),
        ("🇫", "Emoji"),
        (".", "Punctuation & symbols"),
        ("©", "Punctuation & symbols"),  # pictographic, but long predates emoji
        ("€", "Punctuation & symbols"),
    ],
)
def test_char_group(ch, group):
    assert char_group(ch) == group


def test_combining_mark_joins_its_base():
    assert char_group("\u0301", previous="Latin") == "Latin"


def test_script_breakdown_by_hand():
    # No merges: one token per byte.  "ab 語": a, b -> Latin 2 chars 2 tokens; " " 1/1;
    # 語 is 3 UTF-8 bytes -> 3 tokens for 1 Han character.
    tok = train_bpe("", 256)
    text = "ab 語"
    rows = {r.group: r for r in script_breakdown(text, tok.token_spans(text))}
    assert (rows["Latin"].characters, rows["Latin"].tokens) == (2, pytest.approx(2.0))
    assert (rows["Whitespace"].characters, rows["Whitespace"].tokens) == (1, pytest.approx(1.0))
    assert (rows["Han"].characters, rows["Han"].tokens_per_char) == (1, pytest.approx(3.0))


def test_script_breakdown_sums_to_token_count(multilingual):
    tok = train_bpe(multilingual, 600)
    spans = tok.token_spans(multilingual)
    rows = script_breakdown(multilingual, spans)
    assert sum(r.tokens for r in rows) == pytest.approx(len(spans))
    assert sum(r.characters for r in rows) == len(multilingual)
    assert {"Latin", "Han", "Emoji", "Cyrillic", "Arabic"} <= {r.group for r in rows}


def test_unused_tokens_by_hand(cs336):
    # Encoding the training text: low -> [low]; lower -> [low, e, r]; widest -> [w, i, d, est];
    # newest -> [ne, west].  "st" (rank 0) and "ow" (rank 2) only ever live inside bigger tokens.
    assert unused_tokens(cs336, CS336) == [(0, 256, b"st"), (2, 258, b"ow")]


# ---------------------------------------------------------------------------
# issue 9 extensions: WordPiece trees, tree rows, fraction splits, chunks, merge-set diff

# "hug hug hug": alphabet h, ##u, ##g (each 3 times).  Scores: (h,##u) = 3/(3*3), (##u,##g) = 3/(3*3):
# a tie, and h##u occurs first -> merge 0 makes "hu"; then (hu,##g) = 3/(3*3) -> merge 1 makes "hug".
# Ids: 5 specials (0-4), alphabet sorted by code point: "##g" 5, "##u" 6, "h" 7; then hu 8, hug 9.
HUG = "hug hug hug"


@pytest.fixture(scope="module")
def hug():
    from bpe_core.wordpiece import train_wordpiece

    return train_wordpiece(HUG, 10)


def test_wordpiece_merge_tree_by_hand(hug):
    from bpe_core.analysis.insights import learned_tokens

    assert learned_tokens(hug) == [(0, 8), (1, 9)]
    tree = merge_tree(hug, 9)
    assert (tree.display, tree.rank, tree.depth()) == ("hug", 1, 2)
    assert [c.display for c in tree.children] == ["hu", "##g"]
    assert [leaf.display for leaf in tree.leaves()] == ["h", "##u", "##g"]
    with pytest.raises(ValueError, match="special token"):
        merge_tree(hug, hug.unknown_id)


def test_wordpiece_unused_tokens_by_hand(hug):
    # every word encodes as the one token "hug"; "hu" only exists on the way there
    assert unused_tokens(hug, HUG) == [(0, 8, b"hu")]
    # "hu" alone is a word the vocabulary spells as [hu]: then nothing is unused but "hug"
    assert unused_tokens(hug, "hu") == [(1, 9, b"hug")]


def test_tree_rows_preorder(cs336):
    from bpe_core.analysis.insights import tree_rows

    rows = tree_rows(merge_tree(cs336, 260))  # west = w + (e + (s + t))
    assert [(r.node, r.parent, r.display, r.rank) for r in rows] == [
        ("0", "", "west", 4),
        ("0.0", "0", "w", None),
        ("0.1", "0", "est", 1),
        ("0.1.0", "0.1", "e", None),
        ("0.1.1", "0.1", "st", 0),
        ("0.1.1.0", "0.1.1", "s", None),
        ("0.1.1.1", "0.1.1", "t", None),
    ]
    assert [r.n_bytes for r in rows] == [4, 1, 3, 1, 2, 1, 1]


def test_heldout_split_by_document_holds_out_the_share_of_characters_asked_for():
    """Issue 32.5: the held-out part is about the share of characters asked for, whatever the documents' sizes;
    documents that cannot make it are refused instead (the app then splits by fraction)."""
    sizes = [30, 438, 417, 471, 591, 269, 416, 122, 25, 452, 103, 30, 312]  # the English sample's paragraphs
    text = "\n\n".join(chr(ord("a") + i) * n for i, n in enumerate(sizes))
    for fraction in (0.05, 0.1, 0.2, 0.3, 0.5):
        for seed in range(20):
            train, held = heldout_split(text, fraction, seed)
            docs = split_documents(held)
            assert sorted(split_documents(train) + docs) == sorted(split_documents(text))
            share = sum(map(len, docs)) / sum(sizes)
            assert fraction / 1.25 <= share <= fraction * 1.25, (fraction, seed, share)
    # three documents, one of them two thirds of the text (the multilingual sample's 81, 898, 334 characters):
    # 20 % asked, the nearest is the 334 (25 %); 10 % asked, the 81 (6 %) is too far, so it refuses
    three = "\n\n".join(("x" * 81, "y" * 898, "z" * 334))
    assert [heldout_split(three, 0.2, seed=s)[1] for s in range(5)] == ["z" * 334] * 5
    with pytest.raises(TooFewDocuments, match="gives 6% of its characters, not 10%") as info:
        heldout_split(three, 0.1, seed=0)
    assert info.value.documents == 3 and info.value.closest == pytest.approx(81 / 1313)


def test_heldout_split_by_fraction_ignores_documents_and_seed():
    text = "one\n\ntwo\n\nthree\n\nfour\n"  # 22 chars; 75% -> char 16.5 -> 16; last newline before it is at 15
    a = heldout_split(text, 0.25, seed=1, by="fraction")
    assert a == ("one\n\ntwo\n\nthree\n", "\nfour\n")
    assert heldout_split(text, 0.25, seed=99, by="fraction") == a
    with pytest.raises(ValueError, match="split by"):
        heldout_split(text, 0.25, by="word")


def test_pretoken_chunks_by_hand():
    from bpe_core.analysis.insights import pretoken_chunks

    text = "Hi, it's 2024!"
    cut = [text[s:e] for s, e, _ in pretoken_chunks(text, "gpt2")]
    assert cut == ["Hi", ",", " it", "'s", " 2024", "!"]
    cut = [text[s:e] for s, e, _ in pretoken_chunks(text, "cl100k")]
    assert cut == ["Hi", ",", " it", "'s", " ", "202", "4", "!"]  # digits in runs of at most three
    special = pretoken_chunks("a<|endoftext|>b", "gpt2", ["<|endoftext|>"])
    assert special == [(0, 1, False), (1, 14, True), (14, 15, False)]
    with pytest.raises(ValueError, match="invalid pattern"):
        pretoken_chunks(text, "(")


def test_merge_set_diff_by_hand():
    from bpe_core.analysis.insights import merge_set_diff

    # \S+ : words "ab" x2 -> merge 0 a+b; then every word is one token, training stops at 257.
    # none (one pre-token per line) on "ab ab": (a,b) x2 -> ab; then (ab,' ') and (' ',ab) once each,
    # the tie goes to the greater (b"ab", b" ") -> "ab ".
    a = train_bpe("ab ab", 258, pattern=r"\S+")
    b = train_bpe("ab ab", 258, pattern="none")
    assert a.merges == [(b"a", b"b")] and b.merges == [(b"a", b"b"), (b"ab", b" ")]
    d = merge_set_diff(a, b)
    assert (d.only_a, d.only_b, d.shared, d.same_prefix) == ([], [(1, b"ab ")], 1, 1)


def test_unused_tokens_on_real_text_are_never_encoded(english):
    # independent check through tiktoken's encoder built from the same merges
    tok = train_bpe(english, 800, ["<|endoftext|>"])
    ids = set(tok.to_tiktoken().encode(english, allowed_special="all"))
    unused = unused_tokens(tok, english)
    assert unused and all(i not in ids for _r, i, _b in unused)
    learned = {new for _a, _b, new in tok.merge_ids}
    assert {i for _r, i, _b in unused} == learned - ids
