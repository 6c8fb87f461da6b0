"""Every lesson in reading order (:data:`LESSONS`); each module registers its own (:func:`ui.lessons.base.register`)."""

from __future__ import annotations

from ui.lessons import (
    base,
    by_hand,
    course_bpe,
    course_unigram,
    efficiency,
    glitch,
    naive_fast,
    pretokenization,
    sentencepiece,
    spaces,
    special,
    ties,
    utf8,
    vocabulary,
    wordpiece,
)

ORDER = (
    utf8,  # bytes
    by_hand,  # bpe-by-hand
    pretokenization,
    ties,  # tie-breaking
    course_bpe,  # course-bpe
    wordpiece,
    course_unigram,  # unigram
    efficiency,
    spaces,  # spaces-and-numbers
    special,  # special-tokens
    glitch,  # glitch-tokens
    naive_fast,  # naive-vs-fast
    vocabulary,
    sentencepiece,
)
"""The lesson modules in reading order."""

LESSONS: list[base.Lesson] = [module.LESSON for module in ORDER]
"""The lessons in reading order (:class:`ui.lessons.base.Lesson`)."""

if {lesson.slug for lesson in LESSONS} != {lesson.slug for lesson in base.LESSONS}:
    raise RuntimeError("a registered lesson is missing from ui.lessons.catalogue.ORDER")


def slugs() -> list[str]:
    """The lessons' slugs, in order (what the link's ``lesson`` accepts)."""
    return [lesson.slug for lesson in LESSONS]
