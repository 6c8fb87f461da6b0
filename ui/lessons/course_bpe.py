"""Lesson ``course-bpe``: the Hugging Face course's BPE on its four sentences, as printed, then under our rule."""

from __future__ import annotations

from bpe_core.textbook import BPE
from bpe_core.textbook.bpe import count_words, training_steps
from ui import state_keys as sk
from ui.lessons import base, course

SLUG = "course-bpe"


def merge_counts(tok_tie: str) -> list[int]:
    """Each merge's pair count when it was chosen (the textbook's training steps on the course corpus)."""
    words = count_words(course.BPE_TEXT, "gpt2", [course.ENDOFTEXT])
    n = len(course.course_bpe(tok_tie).merges)
    return [step.merge.count for step in training_steps(words, n, tok_tie)]


def merge_chips(tok: BPE, counts: list[int], label: str, other: BPE | None = None) -> None:
    """The merges as chips: the new token, with ``left + right · count`` under it; those ``other`` lacks highlighted."""
    items = [
        (course.glyphs(a + b), f"{course.glyphs(a)} + {course.glyphs(b)} · {n}")
        for (a, b), n in zip(tok.merges, counts)
    ]
    marks = [] if other is None else ["" if m in other.merges else "hl" for m in tok.merges]
    base.chips(items, label, marks=marks)


def example(_settings) -> None:
    """The course's merges, vocabulary and tokenization, computed; then the same corpus under this project's rule."""
    ours, theirs = course.course_bpe("lexicographic"), course.course_bpe("first")
    vocab = course.course_vocab(theirs)
    tokens = course.tokenized(theirs, course.SENTENCE)
    a, b = theirs.merges[0]
    base.facts(
        [
            (
                "Vocabulary",
                f"{len(vocab)}",
                f"1 special + {len(course.alphabet())} characters + {len(theirs.merges)} merges",
            ),
            ("First merge", f"{course.glyphs(a)} + {course.glyphs(b)}", f"occurs {merge_counts('first')[0]} times"),
            ("Last merge", " + ".join(course.glyphs(x) for x in theirs.merges[-1]), ""),
            (f"“{course.SENTENCE}”", " ".join(tokens), f"{len(tokens)} tokens"),
        ]
    )
    merge_chips(theirs, merge_counts("first"), "The course's merges (first pair met)")
    base.chips([(t, str(i)) for i, t in enumerate(vocab)], "Vocabulary in order")
    base.note(
        f"The slide in the seed prints the last token of “{course.SENTENCE}” as “Ġ.Ġ”; the course prints "
        f"“{tokens[-1]}”, as computed here."
    )
    merge_chips(ours, merge_counts("lexicographic"), "This project's rule (greatest pair)", other=theirs)
    mine = course.tokenized(ours, course.SENTENCE)
    base.chips([(t, None) for t in mine], f"“{course.SENTENCE}” under this rule: {len(mine)} tokens")
    shared = sum(m in theirs.merges for m in ours.merges)
    base.note(
        f"{shared} of the {len(ours.merges)} merges are the same; the highlighted ones exist only under this rule, "
        "because ties were broken the other way (next lesson)."
    )


LESSON = base.register(
    base.Lesson(
        slug=SLUG,
        title="The course's BPE",
        text=(
            "The Hugging Face course trains BPE on four sentences to a vocabulary of 50: the special token "
            "`<|endoftext|>`, the characters the text uses (GPT-2 writes a space as `Ġ`) and as many merges as fit. "
            "Below, the textbook trainer runs on the same corpus with the course's tie rule and prints exactly what "
            "the course prints; then the same training with this project's tie rule."
        ),
        example=example,
        try_it=base.TryIt(
            page="merges",
            what="Opens the Merges page on your text with a byte-level BPE (GPT-2's pattern), at its first merge.",
            settings=lambda state: {sk.ALGORITHM: "bpe", sk.PATTERN: "gpt2", sk.MERGE_STEP: 1, sk.PENDING_STEP: 1},
        ),
    )
)
