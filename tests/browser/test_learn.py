"""The Learn page in Debian's Chromium: every lesson walked with Next and its headline numbers read off the page,
every "Try it on your text" followed to the page it opens, typing followed without Ctrl+Enter, and each lesson
photographed at 1280x720 in presentation mode and at 390x844 (``artifacts/learn-*.png``).

The numbers expected come from the sources (:mod:`tests.learn_sources`, tiktoken's own registry), not from the app.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests import learn_sources as src
from tests.browser.helpers import deep, screenshot, wait_idle
from ui.lessons.catalogue import LESSONS

pytestmark = pytest.mark.browser

TITLES = {lesson.slug: lesson.title for lesson in LESSONS}


@pytest.fixture(scope="module")
def headlines(tiktoken_official) -> dict[str, list[str]]:
    """Lesson -> strings its first screen must show, each from a source."""
    gpt2, cl100k, o200k = (tiktoken_official(n) for n in ("r50k_base", "cl100k_base", "o200k_base"))
    sentence = src.EFFICIENCY_SENTENCE
    n_bytes = len(sentence.encode())
    first, ours = src.course_bpe(src.COURSE_CORPUS), src.course_bpe(src.COURSE_CORPUS, rule="lexicographic")
    differ = next(k for k, (a, b) in enumerate(zip(first, ours)) if a != b)
    spaced = " ".join
    return {
        "bytes": [spaced(map(str, src.HELLO_BYTES)), f"code point {src.E_HAT_CODE_POINT}",
                  spaced(map(str, src.E_HAT_BYTES)), f"{len(src.SMILE_BYTES)} bytes"],
        "bpe-by-hand": [" → ".join(src.WIKIPEDIA_STEPS), spaced(map(str, src.MINBPE_IDS)), "Za 2 = ab 2"],
        "pretokenization": [f"{src.NORMALIZED[0]} → {src.NORMALIZED[1]}", "16–19"],
        "tie-breaking": [f"merge #{differ + 1}", f"{' + '.join(first[differ])} vs {' + '.join(ours[differ])}"],
        "course-bpe": [spaced(src.COURSE_TOKENIZED), "Ġtoken + i"],
        "wordpiece": [spaced(src.WORDPIECE_WORDS["Hugging"]), "[UNK]", "a + ##b → ab", "score 0.2"],
        "unigram": [f"{src.UNIGRAM_LOSS}", f"{src.UNIGRAM_HUG_COST}", "unhug → un hug"],
        "efficiency": [f"{n_bytes}"] + [f"{n_bytes / len(e.encode(sentence)):.2f}" for e in (gpt2, cl100k, o200k)],
        "spaces-and-numbers": [spaced(map(str, src.SPACES_GPT2)), spaced(map(str, src.SPACES_CL100K))],
        "special-tokens": [str(src.ENDOFTEXT_GPT2), str(src.ENDOFTEXT_CL100K),
                           spaced(map(str, gpt2.encode_ordinary("<|endoftext|>")))],
        "glitch-tokens": [str(src.MAGIKARP_ID), f"merge #{src.MAGIKARP_ID - 255:,}"],
        "naive-vs-fast": ["Same merges, every size", "yes"],
        "vocabulary": ["Longest learned token"],
        "sentencepiece": ["▁Hello", "4 byte pieces"],
    }  # fmt: skip


TRY = {
    "bytes": ("BPE Playground", "/", {"algo": "bpe", "size": "257"}),
    "bpe-by-hand": ("Merges", "/merges", {"algo": "bpe", "pattern": "none", "step": "1"}),
    "pretokenization": ("Insights", "/insights", {"view": "pretok", "pbase": "cl100k"}),
    "tie-breaking": ("Merges", "/merges", {"algo": "bpe"}),
    "course-bpe": ("Merges", "/merges", {"algo": "bpe", "pattern": "gpt2", "step": "1"}),
    "wordpiece": ("Merges", "/merges", {"algo": "wordpiece", "step": "1"}),
    "unigram": ("Encode step by step", "/encode", {"algo": "unigram", "word": "unhug"}),
    "efficiency": ("Compare tokenizers", "/compare", {"cmp": "bpe,gpt2,cl100k_base,o200k_base"}),
    "spaces-and-numbers": ("Compare tokenizers", "/compare", {"cmp": "bpe,gpt2,cl100k_base"}),
    "special-tokens": ("BPE Playground", "/", {"algo": "bpe"}),
    "glitch-tokens": ("Insights", "/insights", {"view": "unused"}),
    "naive-vs-fast": ("BPE Playground", "/", {"algo": "bpe"}),
    "vocabulary": ("Insights", "/insights", {"view": "diff"}),
    "sentencepiece": ("Compare tokenizers", "/compare", {"algo": "unigram", "cmp": "unigram,mistral_v1"}),
}
"""Lesson -> (the title of the page Try it opens, its path, parameters its link must carry)."""


def settle(pg, title: str | None = None) -> None:
    """Wait until the page shows ``title`` as its heading, the script run is over (twice: a rerun may follow) and no
    element is still a loading skeleton."""
    if title is not None:
        pg.wait_for_function(
            "t => [...document.querySelectorAll('[data-testid=stMain] h1')].some(h => h.innerText.trim() === t)",
            arg=title,
            timeout=120_000,
        )
    for _ in range(2):
        wait_idle(pg, 120_000)
        pg.wait_for_timeout(400)
    # elements whose code the browser is still fetching are drawn as skeletons (seen on a loaded machine)
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]')", timeout=120_000
    )


def page_text(pg) -> str:
    return pg.evaluate(deep("() => deepText(document.querySelector('[data-testid=stMain]'))"))


def open_page(browser, server, path: str, viewport=(1400, 1000)):
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    pg = ctx.new_page()
    pg.goto(server + path)
    return ctx, pg


def test_next_walks_every_lesson_with_its_numbers(browser, server, headlines):
    ctx, pg = open_page(browser, server, "/learn")
    try:
        for i, lesson in enumerate(LESSONS):
            settle(pg, lesson.title)
            text = page_text(pg)
            missing = [h for h in headlines[lesson.slug] if h not in text]
            assert not missing, (lesson.slug, missing)
            assert parse_qs(urlparse(pg.url).query)["lesson"] == [lesson.slug]
            nxt = pg.get_by_role("button", name="Next")
            if i == len(LESSONS) - 1:
                assert nxt.is_disabled()
            else:
                nxt.click()
    finally:
        ctx.close()


@pytest.mark.parametrize("slug", list(TRY))
def test_try_it_on_your_text_opens_its_page(browser, server, slug):
    title, path, params = TRY[slug]
    ctx, pg = open_page(browser, server, f"/learn?lesson={slug}")
    try:
        settle(pg, TITLES[slug])
        pg.get_by_role("button", name="Try it on your text").click()
        settle(pg, title)
        url = urlparse(pg.url)
        assert url.path == path
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        assert {k: query.get(k) for k in params} == params
        assert query.get("src") == "sample" and query.get("sample") == "english"  # the learner's text, unchanged
        assert "Traceback" not in page_text(pg)
    finally:
        ctx.close()


def test_the_input_box_follows_typing(browser, server):
    ctx, pg = open_page(browser, server, "/learn?lesson=bytes")
    try:
        settle(pg, TITLES["bytes"])
        box = pg.get_by_role("textbox", name="Your own example")
        box.fill("")
        box.press_sequentially("naïve", delay=40)  # no Ctrl+Enter: the page follows the pause
        pg.wait_for_function(
            """() => [...document.querySelectorAll('.lesson-facts .fact')].some(f =>
                 f.querySelector('.l').innerText.startsWith('UTF-8 bytes')
                 && f.querySelector('.v').innerText === '6')""",
            timeout=30_000,
        )
        settle(pg)
        assert "195 175" in page_text(pg)  # ï
    finally:
        ctx.close()


@pytest.mark.parametrize("slug", [lesson.slug for lesson in LESSONS])
def test_lesson_screens(browser, server, slug):
    """1280x720 in presentation mode: sidebar collapsed, the first figures on the first screen; 390x844: no sideways
    scrolling."""
    ctx, pg = open_page(browser, server, f"/learn?lesson={slug}&present=1", (1280, 720))
    try:
        settle(pg, TITLES[slug])
        screenshot(pg, f"learn-{slug}-present-1280x720")
        sidebar = pg.locator("[data-testid=stSidebar]")
        assert sidebar.get_attribute("data-collapsed") == "true"
        first = pg.locator("[data-testid=stMain] .lesson-facts, [data-testid=stMain] .lesson-chips").first
        box = first.bounding_box()
        assert box is not None and box["y"] + min(box["height"], 60) <= 720, (slug, box)
        assert pg.get_by_role("button", name="Next").is_visible() or slug == LESSONS[-1].slug
    finally:
        ctx.close()
    ctx, pg = open_page(browser, server, f"/learn?lesson={slug}", (390, 844))
    try:
        settle(pg, TITLES[slug])
        screenshot(pg, f"learn-{slug}-390x844")
        width = pg.evaluate("() => document.querySelector('[data-testid=stMain]').scrollWidth")
        assert width <= 390, (slug, width)
        title_top = pg.locator("[data-testid=stMain] h1").first.bounding_box()["y"]
        assert title_top < 200, (slug, title_top)
    finally:
        ctx.close()
