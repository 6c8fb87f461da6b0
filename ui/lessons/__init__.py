"""The Learn page's lessons: one registration per lesson, in reading order, each live on the app's own views.

* :mod:`~ui.lessons.base` -- what a lesson is (:class:`~ui.lessons.base.Lesson`, its
  "Try it on your text" target :class:`~ui.lessons.base.TryIt`) and the small views lessons share
  (figures, chips, the input box that follows typing)
* :mod:`~ui.lessons.catalogue` -- every lesson, in order (:data:`~ui.lessons.catalogue.LESSONS`)
* :mod:`~ui.lessons.page` -- the Learn page: the lesson picker, Previous/Next, the lesson, Try it
* one module per lesson (or a small group): :mod:`~ui.lessons.utf8`, :mod:`~ui.lessons.by_hand`, ...

Every number a lesson shows is computed on the page by the engine (``bpe_core``: the trainers, the
textbook algorithms, the production tokenizers, the pre-tokenizer); the tests check those numbers
against the sources that printed them (the seeds, minbpe, tiktoken, Hugging Face ``tokenizers`` and
the Hugging Face course), never against the page.

This package's ``__init__`` imports nothing, so a lesson module importing :mod:`ui.lessons.base`
makes no import cycle with the catalogue that imports every lesson.
"""
