"""Figure builders (their data, read straight from the figures) and the Compare page's helpers."""

from __future__ import annotations

import html
import math

import pytest

from bpe_core import TrainingSpec, train_bpe
from bpe_core.spans import spans_from_token_bytes
from tests.conftest import sample, seed_text
from ui import catalogue, charts, compare, view
from ui.inputs import Settings


def settings_for(text: str, max_vocab: int = 600, pattern: str = "gpt2", specials=("<|endoftext|>",)) -> Settings:
    return Settings(text, "test", TrainingSpec("bpe", max_vocab, pattern, tuple(specials)))


# --- figure builders ------------------------------------------------------------------------


def test_token_count_bars_data():
    fig = charts.token_count_bars(["BPE", "GPT-2"], [621, 648], ["trained", "production"])
    (bar,) = fig.data
    assert list(bar.y) == ["BPE", "GPT-2"] and list(bar.x) == [621, 648]
    assert list(bar.text) == ["621", "648"]
    assert list(bar.marker.color) == [charts.TRAINED_COLOUR, charts.PRODUCTION_COLOUR]
    with pytest.raises(ValueError, match="same length"):
        charts.token_count_bars(["a"], [1, 2])


def test_compression_curve_data():
    curve = charts.CompressionCurve("BPE", [256, 300, 400], [1000, 800, 500], 1000, shown=[300])
    point = charts.CompressionPoint("GPT-2 (r50k_base)", 50257, 250, 1000, tag="gpt2")
    other = charts.CompressionPoint("GPT-4 (cl100k_base)", 100261, 200, 1000)
    fig = charts.compression_curve([curve], [point, other])
    line, dot, p1, p2 = fig.data
    # bytes per token = 1000 bytes / tokens
    assert list(line.x) == [256, 300, 400] and list(line.y) == [1.0, 1.25, 2.0]
    assert line.mode == "lines" and list(line.customdata) == [1000, 800, 500]
    assert (list(dot.x), list(dot.y), dot.name) == ([300], [1.25], "BPE (shown)")
    assert (list(p1.x), list(p1.y), p1.mode) == ([50257], [4.0], "markers")
    assert (list(p2.x), list(p2.y), p2.mode) == ([100261], [5.0], "markers")
    # each marker's label is an annotation pointing at it (x in log10 units on a log axis)
    a1, a2 = fig.layout.annotations
    assert (a1.text, a1.x, a1.y) == ("gpt2", pytest.approx(math.log10(50257)), 4.0)
    assert (a2.text, a2.x, a2.y) == ("GPT-4 (cl100k_base)", pytest.approx(math.log10(100261)), 5.0)
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.yaxis.range == (0, 5.0 * 1.25)


def label_boxes(fig, size):
    """Each annotation's text box in pixels, re-derived from the figure's layout data for a plot area of ``size``.

    Independent of the placement code: the box is centred at the annotated point (mapped linearly from the
    axis ranges) plus the annotation's ``ax``/``ay`` pixel offsets, 7.2 px per character wide and 17 px high.
    """
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    w, h = size
    out = []
    for a in fig.layout.annotations:
        assert (a.axref, a.ayref, a.xanchor, a.yanchor) == ("pixel", "pixel", "center", "middle")
        cx = (a.x - x0) / (x1 - x0) * w + a.ax
        cy = (1 - (a.y - y0) / (y1 - y0)) * h + a.ay
        half = (len(html.unescape(a.text)) * 7.2 + 6) / 2
        out.append((a.text, (cx - half, cy - 8.5, cx + half, cy + 8.5)))
    return out


def marker_pixels(fig, size):
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    w, h = size
    return [
        ((math.log10(x) - x0) / (x1 - x0) * w, (1 - (y - y0) / (y1 - y0)) * h)
        for t in fig.data
        if t.mode and "markers" in t.mode and t.mode != "lines+markers"
        for x, y in zip(t.x, t.y)
    ]


def crowded_figure():
    """Compare's chart with every production encoding and WordPiece beside the BPE's dot (the English sample)."""
    n = 2769  # UTF-8 bytes of the English sample; token counts as the page shows them
    points = [charts.CompressionPoint("WordPiece · 1,000", 1000, 609, n)]
    for key, vocab, tokens in [
        ("gpt2", 50257, 648), ("cl100k_base", 100261, 632), ("o200k_base", 200000, 624), ("llama3", 128256, 632),
        ("llama4", 202048, 625), ("mistral_tekken", 131072, 636), ("mistral_v1", 32000, 678),
    ]:  # fmt: skip
        points.append(charts.CompressionPoint(key, vocab, tokens, n, key))
    sizes = list(range(257, 1001))
    tokens = [n - (n - 621) * (s - 257) // 743 for s in sizes]
    curve = charts.CompressionCurve("BPE (gpt2) on this text", sizes, tokens, n, shown=(1000,))
    return charts.compression_curve([curve], points)


@pytest.mark.parametrize("size", [(300, 270), (330, 260), (740, 290), (900, 290), (1380, 290), (1400, 320)])
def test_compression_labels_never_overlap_each_other_or_a_marker(size):
    fig = crowded_figure()
    boxes = label_boxes(fig, size)
    assert [t for t, _b in boxes][:3] == ["WordPiece · 1,000", "gpt2", "cl100k_base"]
    for i, (ta, a) in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= size[0] and a[1] >= 0 and a[3] <= size[1], f"{ta} leaves the plot"
        for tb, b in boxes[i + 1 :]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"{ta!r} overlaps {tb!r} at {size}"
        for mx, my in marker_pixels(fig, size):  # the diamonds and the BPE's dot (12-13 px markers)
            assert not (a[0] - 6 < mx < a[2] + 6 and a[1] - 6 < my < a[3] + 6), f"{ta!r} covers a marker at {size}"


def test_label_placement_by_hand():
    # two markers at the same spot: the second label cannot take the first one's place above it
    offsets = charts.place_labels([(1.0, 1.0), (1.0, 1.0)], ["aaaa", "bbbb"], (), (0, 2), (0, 2), [(200, 200)])
    assert offsets == [(0.0, -20), (0.0, 20)]  # the first above its marker (the first choice), the second below
    with pytest.raises(ValueError):
        charts.place_labels([(1.0, 1.0)], [], ())


def test_compression_curve_sampled_and_empty():
    sampled = charts.CompressionCurve("BPE", [256, 512], [10, 5], 20, exact=False)
    assert charts.compression_curve([sampled]).data[0].mode == "lines+markers"
    assert len(charts.compression_curve([], []).data) == 0


def test_labels_in_hover_text_are_escaped():
    fig = charts.compression_curve([], [charts.CompressionPoint("<b>x</b>", 300, 10, 20)])
    assert "&lt;b&gt;x&lt;/b&gt;" in fig.data[0].hovertemplate


# --- page helpers ----------------------------------------------------------------------------


def test_compression_data_on_the_training_text_comes_from_the_trace(tiktoken_official):
    text = seed_text()
    s = settings_for(text)
    entries = [catalogue.entries()["bpe"], catalogue.entries()["gpt2"]]
    columns = catalogue.build_columns(entries, s, 400)
    metrics = {c.built.cache_key: catalogue.measure(c.built.cache_key, text, c.built) for c in columns}
    curves, points = compare.compression_data(columns, text, True, metrics)
    (curve,) = curves
    full = train_bpe(text, 600, ["<|endoftext|>"])
    assert curve.exact and list(curve.vocab_sizes) == list(range(257, 601)) and list(curve.shown) == [400]
    # exact at every size: check a few against encoding the text at that size
    for n in (257, 300, 400, 599, 600):
        assert curve.tokens[n - 257] == len(full.with_vocab_size(n).encode(text))
    (point,) = points
    assert (point.vocab_size, point.tag) == (50257, "gpt2")
    assert point.tokens == len(tiktoken_official("r50k_base").encode(text, allowed_special="all"))
    assert curve.text_bytes == point.text_bytes == len(text.encode())


def test_compression_data_on_another_text_is_sampled():
    s = settings_for(sample("english"))
    other = sample("python")
    columns = catalogue.build_columns([catalogue.entries()["bpe"]], s, None)
    metrics = {c.built.cache_key: catalogue.measure(c.built.cache_key, other, c.built) for c in columns}
    (curve,), points = compare.compression_data(columns, other, False, metrics)
    assert points == [] and not curve.exact
    full = train_bpe(sample("english"), 600, ["<|endoftext|>"])
    assert curve.vocab_sizes[0] == 257 and curve.vocab_sizes[-1] == full.vocab_size
    assert len(curve.vocab_sizes) <= compare.CURVE_POINTS + 1
    for n, t in zip(curve.vocab_sizes, curve.tokens):
        assert t == len(full.with_vocab_size(n).encode(other))
    assert "measured at" in compare.curve_caption([curve], other, False)


def test_long_text_fast_path_gives_our_ids():
    text = seed_text() * 2 + sample("multilingual") + "<|endoftext|>" + sample("python")
    assert len(text) > catalogue.FAST_ENCODE_CHARS
    s = settings_for(seed_text(), 800)
    (col,) = catalogue.build_columns([catalogue.entries()["bpe"]], s, None)
    tok = col.built.tokenizer
    assert catalogue.encode_fast(col.built, text) == tok.encode(text)


def test_metrics_frame_and_special_note_escape_user_text():
    hostile = '<img src=x onerror="alert(1)">'
    text = f"hello {hostile} world <|endoftext|>"
    s = settings_for(sample("english"), 400, specials=(hostile,))
    columns = catalogue.build_columns([catalogue.entries()["bpe"], catalogue.entries()["gpt2"]], s, None)
    metrics = {c.built.cache_key: catalogue.measure(c.built.cache_key, text, c.built) for c in columns}
    note = compare.special_tokens_note(text, columns)
    assert "<img" not in note and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in note
    assert "occurs 1×: one special token for BPE (gpt2) · 400; ordinary text for GPT-2 (r50k_base)." in note
    assert "<code>&lt;|endoftext|&gt;</code> occurs 1×: one special token for GPT-2 (r50k_base)" in note
    df = compare.metrics_frame(columns, metrics)
    assert list(df["Tokenizer"]) == ["BPE (gpt2) · 400", "GPT-2 (r50k_base)"]
    assert list(df["Special tokens"]) == [1, 1]
    assert df["Tokens vs first"][0] == 1.0


def test_marked_tokens_and_layout_helpers():
    text = "ab cd ef"
    spans = spans_from_token_bytes(text, [1, 2, 3, 4, 5], [b"ab", b" c", b"d", b" ", b"ef"])
    # the word "cd" (3..5) is marked: tokens " c" and "d"; the lone space and the other words are not
    assert compare.marked_tokens(spans, [(3, 5)]) == [False, True, True, False, False]
    assert compare.marked_tokens(spans, [(0, 2), (6, 8)]) == [True, False, False, False, True]
    assert compare.marked_tokens(spans, []) == [False] * 5
    assert [view.per_row(n) for n in range(0, 8)] == [1, 1, 2, 3, 3, 3, 3, 3]


def test_parse_sizes():
    sizes, problems = compare.parse_sizes(["2000", "1,500", "3k", "2000", "abc", "100", "10_000", 700])
    assert sizes == [2000, 1500, 3000, 10000, 700]
    assert problems == ["“abc” is not a whole number of tokens (e.g. 3000 or 3k)", "100 is outside 256..100,000"]


def test_parse_sizes_never_raises_on_hostile_values():
    """``inf``, ``1e400``, huge ints: once an OverflowError traceback (issue 21, class 10)."""
    hostile = ["inf", "-inf", "1e400", "nan", "-1", "abc", "9" * 5000, "1" + "0" * 400, "0x10", "1.5", "", "k"]
    sizes, problems = compare.parse_sizes([*hostile, "2k", "1.5k", "700"])
    assert sizes == [2000, 1500, 700]  # the good ones survive beside the bad
    assert len(problems) == len(hostile)
    assert problems[4] == "-1 is outside 256..100,000"
    assert all(len(p) < 120 for p in problems)  # a huge value is cut, not echoed whole


def test_registry_accepts_one_more_entry():
    built = catalogue.Built(train_bpe("abc", 257), "Extra", "extra|1")
    entry = catalogue.register(catalogue.Entry("extra", "Extra tokenizer", "trained", lambda s, n: built))
    try:
        assert list(catalogue.entries())[-1] == "extra"
        (col,) = catalogue.build_columns([entry], settings_for("abc"), None)
        assert col.built is built and col.error is None
    finally:
        catalogue.unregister("extra")
    assert "extra" not in catalogue.entries()


def test_the_compression_figure_cache_tells_curves_apart_by_every_count():
    """Compare's figure cache hashes a curve by its digest: equal curves share it, one changed count does not."""
    from ui.compare import _curve_digest

    sizes, tokens = list(range(256, 4256)), list(range(9000, 5000, -1))
    curve = charts.CompressionCurve("BPE", sizes, tokens, 20_000, shown=(1000,))
    same = charts.CompressionCurve("BPE", tuple(sizes), tuple(tokens), 20_000, shown=[1000])
    assert _curve_digest(curve) == _curve_digest(same)
    changed = list(tokens)
    changed[2500] += 1
    others = [
        charts.CompressionCurve("BPE", sizes, changed, 20_000, shown=(1000,)),
        charts.CompressionCurve("BPE", sizes, tokens, 20_001, shown=(1000,)),
        charts.CompressionCurve("BPE", sizes, tokens, 20_000, shown=(2000,)),
        charts.CompressionCurve("BPE", sizes, tokens, 20_000, shown=(1000,), exact=False),
        charts.CompressionCurve("WordPiece", sizes, tokens, 20_000, shown=(1000,)),
    ]
    assert len({_curve_digest(c) for c in [curve, *others]}) == 1 + len(others)
