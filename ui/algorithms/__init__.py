"""What the screen says and offers per trainable algorithm: the one place ``ui`` differs by algorithm.

:data:`bpe_core.interface.ALGORITHMS` holds what the engine knows about an
algorithm (its label, trainer, default pattern and special tokens, whether
the pattern is fixed, whether it lower-cases).  This registry adds what only
the screen needs: sentences that explain the algorithm (captions, the
slider's help, the legend), the export formats it writes, and the
tokenizer the Compare page trains when the sidebar trains another algorithm.
Pages look an entry up by the tokenizer's
:attr:`~bpe_core.interface.TrainedTokenizer.algorithm` (:func:`view_of`) and
never switch on a tokenizer's class or algorithm name themselves.

A new algorithm registers its :class:`AlgorithmView` with :func:`register`;
until it does, :func:`view_of` gives it :func:`generic_view` (plain wording,
this project's JSON export).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from bpe_core import (
    bpe_to_hf_json,
    bpe_to_tiktoken_files,
    get_algorithm,
    unigram_to_hf_json,
    wordpiece_to_hf_json,
    wordpiece_to_vocab_txt,
)
from bpe_core.interface import TrainedTokenizer, TrainingSpec
from ui import render
from ui.safe_text import md


@dataclass(frozen=True)
class Export:
    """One download button: a file format the tokenizer on screen can be written in.

    Attributes:
        label: the button's text.
        data: builds the file's content when the button is clicked (``str`` or ``bytes``).
        file_name: the downloaded file's name.
        mime: its MIME type.
        help: the button's tooltip.
        icon: a Material icon name (``":material/hub:"``).
        disabled: the format cannot hold this tokenizer (``help`` says why).
    """

    label: str
    data: Callable[[], str | bytes]
    file_name: str
    mime: str
    help: str
    icon: str
    disabled: bool = False


def project_json(tok: TrainedTokenizer, base: str) -> Export:
    """The project's own JSON (every trained tokenizer has it: :meth:`~bpe_core.interface.TrainedTokenizer.to_dict`)."""
    return Export(
        "Project JSON",
        lambda: json.dumps(tok.to_dict(), ensure_ascii=False),
        f"{base}.json",
        "application/json",
        "Everything: vocab, merges, special tokens, pattern and the training trace. Load it back here.",
        ":material/data_object:",
    )


def _bpe_exports(tok, base: str) -> list[Export]:
    unique = len(set(tok.vocab.values())) == tok.vocab_size
    return [
        project_json(tok, base),
        Export(
            "tiktoken ranks",
            lambda: bpe_to_tiktoken_files(tok, base)[0],
            f"{base}.tiktoken",
            "text/plain",
            "Read with tiktoken.load.load_tiktoken_bpe; pair it with the metadata file.",
            ":material/format_list_numbered:",
        ),
        Export(
            "tiktoken metadata",
            lambda: bpe_to_tiktoken_files(tok, base)[1],
            f"{base}.tiktoken.json",
            "application/json",
            "pat_str, special_tokens and explicit_n_vocab for tiktoken.Encoding(...).",
            ":material/settings:",
        ),
        Export(
            "Hugging Face tokenizer.json",
            lambda: bpe_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "Load with tokenizers.Tokenizer.from_file: same ids as here."
            if unique
            else "Unavailable: two merges produced the same bytes, which tokenizer.json cannot hold.",
            ":material/hub:",
            disabled=not unique,
        ),
    ]


def _wordpiece_exports(tok, base: str) -> list[Export]:
    return [
        project_json(tok, base),
        Export(
            "BERT vocab.txt",
            lambda: wordpiece_to_vocab_txt(tok),
            f"{base}.vocab.txt",
            "text/plain",
            "One token per line, line number = id; BERT's [UNK] and ## conventions.",
            ":material/format_list_numbered:",
        ),
        Export(
            "Hugging Face tokenizer.json",
            lambda: wordpiece_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "WordPiece model with the BERT pre-tokenizer: same ids as here.",
            ":material/hub:",
        ),
    ]


def _unigram_exports(tok, base: str) -> list[Export]:
    return [
        project_json(tok, base),
        Export(
            "Hugging Face tokenizer.json",
            lambda: unigram_to_hf_json(tok),
            f"{base}.tokenizer.json",
            "application/json",
            "Unigram model (pieces and scores) with SentencePiece-style Metaspace words: same ids as here.",
            ":material/hub:",
        ),
    ]


@dataclass(frozen=True)
class AlgorithmView:
    """How the screen presents one algorithm (a key of :data:`bpe_core.interface.ALGORITHMS`).

    Attributes:
        name: the algorithm's key (``"bpe"``).
        short: its name in running text after "the" (``"BPE"``).
        kind: what an imported file of it is called (``"byte-level BPE"``).
        piece_noun: what encoding splits a text into first (``"pre-token"``, ``"word"``).
        legend_html: the key under the coloured view (:mod:`ui.render`).
        sizes_help: ``sizes_help(tok)``: what the slider's two ends mean.
        split_note: ``split_note(tok)``: how it pre-tokenized, for "How this tokenizer was trained" (Markdown).
        import_note: ``import_note(tok)``: more facts for an imported file's caption (``", 1,234 merges"``).
        exports: ``exports(tok, base file name)``: the download buttons.
        merges_caption: the Merges page's introduction.
        encode_caption: a second caption for the Encode page, when its encoding is not BPE's, else ``None``.
        pattern_note: a caption under the algorithm choice when its pattern is fixed, else ``None``.
        fixed_pattern_phrase: how it always pre-tokenizes, after "always pre-tokenizes" (``"BERT-style"``).
        specials_help: the special-tokens widget's help.
        lowercase_help: the lower-casing toggle's help (algorithms that offer it).
        compare_vocab_size: the vocabulary size the Compare page trains it to while the
            sidebar trains another algorithm (``None``: the sidebar's size).
        compare_curve: the Compare page draws its compression curve from the
            training trace (the trace counts are the encoding's); else one point.
        trained_note: ``trained_note(tok)``: what training learned, for "How this tokenizer was
            trained" (Markdown, ``"**1,000** merges learned"``).
        steps_html: ``steps_html(tok.encode_steps(text), colour)``: the Encode page's drawing of
            the steps, when they are not :class:`~bpe_core.steps.PieceSteps` (Unigram's lattices);
            ``None`` for the page's own step lines.
        rank_label: ``rank_label(tok, token_id)``: what a learned token's
            :meth:`~bpe_core.interface.Tokenizer.rank_of` means, for the token's hover and dialog
            (``"merge #12"``; Unigram: ``"piece #12, score -7.31"``).
        stop_phrase: why training can stop short of the size asked for, in the
            Playground's one-line notice (``"no pair was left to merge"``; Unigram: its
            seed vocabulary ran out); the engine's ``stop_reason`` gives the full text.
    """

    name: str
    short: str
    kind: str
    piece_noun: str
    legend_html: str
    sizes_help: Callable[[TrainedTokenizer], str]
    split_note: Callable[[TrainedTokenizer], str]
    import_note: Callable[[TrainedTokenizer], str] = lambda _tok: ""
    exports: Callable[[TrainedTokenizer, str], list[Export]] = field(
        default=lambda tok, base: [project_json(tok, base)]
    )
    merges_caption: str = ""
    encode_caption: str | None = None
    pattern_note: str | None = None
    fixed_pattern_phrase: str = "its own way"
    specials_help: str = "Never merged, never split: each is one token wherever it appears. Type to add your own."
    lowercase_help: str = "Train and encode on the lower-cased text."
    compare_vocab_size: int | None = None
    compare_curve: bool = False
    trained_note: Callable[[TrainedTokenizer], str] = lambda tok: f"**{len(tok.trace):,}** merges learned"
    steps_html: Callable[..., str] | None = None
    rank_label: Callable[[TrainedTokenizer, int], str] = lambda tok, i: f"merge #{tok.rank_of(i) + 1:,}"
    stop_phrase: str = "no pair was left to merge"

    @property
    def label(self) -> str:
        """The engine's label (:attr:`bpe_core.interface.Algorithm.label`), e.g. ``"Byte-level BPE"``."""
        return get_algorithm(self.name).label

    def compare_spec(self, sidebar: TrainingSpec) -> TrainingSpec:
        """The spec the Compare page trains this algorithm with while the sidebar trains another.

        The algorithm's default pattern and special tokens, :attr:`compare_vocab_size`
        (or the sidebar's size), no lower-casing.
        """
        alg = get_algorithm(self.name)
        return TrainingSpec(
            self.name,
            self.compare_vocab_size or sidebar.vocab_size,
            alg.default_pattern,
            alg.default_special_tokens,
            False,
        )


def _bpe_sizes_help(tok) -> str:
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return f"{lo} = the 256 byte tokens plus {lo - 256} special tokens, no merges; {hi} = all {hi - lo} merges."


def _wordpiece_sizes_help(tok) -> str:
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return (
        f"{lo} = {len(tok.special_tokens)} special tokens plus the {tok.alphabet_size} characters of the "
        f"alphabet (word-initial, and ##-prefixed inside words), no merges; {hi} = all {hi - lo} merged tokens."
    )


VIEWS: dict[str, AlgorithmView] = {}
"""Algorithm name -> :class:`AlgorithmView`."""


def register(view: AlgorithmView) -> AlgorithmView:
    """Add (or replace) an algorithm's :class:`AlgorithmView`; returns it."""
    VIEWS[view.name] = view
    return view


register(
    AlgorithmView(
        name="bpe",
        short="BPE",
        kind="byte-level BPE",
        piece_noun="pre-token",
        legend_html=render.LEGEND_HTML,
        sizes_help=_bpe_sizes_help,
        split_note=lambda tok: f"pattern: {md(tok.pattern_name or 'custom')}",
        import_note=lambda tok: f", {len(tok.merges):,} merges",
        exports=_bpe_exports,
        merges_caption=(
            "Training repeats one move: find the most frequent pair of neighbouring tokens and merge it into a new "
            "token. Step through the merges, or press Play, and watch the text shrink into fewer, longer tokens."
        ),
        compare_vocab_size=1000,
        compare_curve=True,
    )
)

register(
    AlgorithmView(
        name="wordpiece",
        short="WordPiece",
        kind="WordPiece",
        piece_noun="word",
        legend_html=render.WORDPIECE_LEGEND_HTML,
        sizes_help=_wordpiece_sizes_help,
        split_note=lambda tok: (
            "pre-tokenization: BERT-style (whitespace and punctuation); lower-cased: "
            + ("yes" if tok.lowercase else "no")
        ),
        exports=_wordpiece_exports,
        merges_caption=(
            "WordPiece training repeats one move: score every pair of neighbouring pieces inside a word by "
            "freq(pair) / (freq(left) × freq(right)) and merge the best-scoring pair into a new piece. "
            "Step through the merges, or press Play, and watch the words join up."
        ),
        encode_caption=(
            "WordPiece (the tokenizer trained on your text) works differently: it cuts the text into words, then "
            "reads each word from the left, taking the longest piece its vocabulary has (trying the longest "
            "candidate first, then shorter ones), and continues with the rest marked ##. A word it cannot spell, "
            "or longer than 100 characters, becomes [UNK]. One line per piece taken."
        ),
        pattern_note=(
            "WordPiece pre-tokenizes BERT-style: whitespace separates words and every punctuation "
            "character is a word of its own. Pieces after the first in a word are marked ##."
        ),
        fixed_pattern_phrase="BERT-style",
        specials_help="BERT's by default. [UNK] stands for any word the vocabulary cannot spell, so keep it.",
        lowercase_help="As BERT's uncased models: train and encode on the lower-cased text (accents are kept).",
    )
)


def _unigram_sizes_help(tok) -> str:
    lo, hi = tok.min_vocab_size, tok.max_vocab_size
    return (
        f"{lo} = {len(tok.special_tokens)} special tokens (<unk> among them) plus every character of the "
        f"training text, no longer piece; {hi} = the trained vocabulary. Training runs the other way round from "
        "BPE: it starts from a large vocabulary and prunes it. Each position is the vocabulary after a pruning "
        "round, with that round's scores; sizes between rounds stop the next round early (its pieces with the "
        "smallest loss increase go first)."
    )


def _unigram_trained_note(tok) -> str:
    info = tok.training
    seed = getattr(info, "seed_size", 0)
    rounds = tok.trace
    return (
        f"**{seed:,}** pieces in the seed vocabulary, pruned 10 % a round by the loss each removal would cause; "
        f"**{len(rounds):,}** rounds from {tok.max_vocab_size:,} down to the characters"
    )


UNIGRAM_LEGEND_HTML = (
    '<div class="bpe-legend">Each coloured box is one piece; <code>▁</code> marks a space (SentencePiece-style: '
    "a piece may start with it). Hover a token for its id and piece; a dark box is a special token, or characters "
    "the vocabulary cannot spell (<code>&lt;unk&gt;</code>). <code>·</code> space, <code>→</code> tab, "
    "<code>↵</code> newline.</div>"
)
"""The key to the coloured view of a Unigram tokenizer."""


def _unigram_steps_html(pieces, colour=None) -> str:
    from ui.lattice_view import lattices_html  # the lattice drawing (imports ui.render only)

    return lattices_html(pieces)


register(
    AlgorithmView(
        name="unigram",
        stop_phrase="the text's seed vocabulary has no more pieces",
        short="Unigram",
        kind="Unigram",
        piece_noun="word",
        legend_html=UNIGRAM_LEGEND_HTML,
        sizes_help=_unigram_sizes_help,
        split_note=lambda tok: (
            "pre-tokenization: SentencePiece-style (a space becomes ▁ and starts a word)"
            if tok.pattern_name == "sentencepiece"
            else f"pattern: {md(tok.pattern_name or 'custom')}"
        ),
        exports=_unigram_exports,
        merges_caption=(
            "Unigram training runs the other way round from BPE: it starts from a large vocabulary of frequent "
            "substrings, gives every piece a probability (EM), and each round removes the 10 % of pieces whose "
            "removal would raise the loss (the text's negative log-likelihood) least, until only the characters "
            "are left. Step through the rounds: each shows the loss, the pieces removed with the loss increase "
            "each would have caused, the pieces kept, and the text re-segmented."
        ),
        encode_caption=(
            "Unigram (the tokenizer trained on your text) works differently: it cuts the text into words (a space "
            "becomes ▁ and starts a word), and for each word considers every way of spelling it with pieces of "
            "its vocabulary: the lattice. Each piece has a score (its log-probability); the segmentation with the "
            "highest total wins (Viterbi). Below: every candidate piece as an arc with its score, the best path "
            "highlighted, and the runners-up with their totals."
        ),
        specials_help="<unk> stands for characters the vocabulary cannot spell, so keep it. Type to add your own.",
        trained_note=_unigram_trained_note,
        steps_html=_unigram_steps_html,
        # a learned piece's rank is its place among the pieces training kept (kept longest first), not a merge
        rank_label=lambda tok, i: f"piece #{tok.rank_of(i) + 1:,}, score {tok.scores[i]:.2f}",
    )
)


def generic_view(name: str) -> AlgorithmView:
    """The presentation of an algorithm that registered none: its engine label, plain wording."""
    return AlgorithmView(
        name=name,
        short=get_algorithm(name).label,
        kind=get_algorithm(name).label,
        piece_noun="pre-token",
        legend_html=render.LEGEND_HTML,
        sizes_help=lambda tok: f"{tok.min_vocab_size} = no merges; {tok.max_vocab_size} = the full vocabulary.",
        split_note=lambda tok: f"pattern: {md(tok.pattern)}",
        merges_caption="Step through training one step at a time.",
    )


def view_of(algorithm: str) -> AlgorithmView:
    """The :class:`AlgorithmView` of an algorithm name (a tokenizer's ``algorithm``, a spec's ``algorithm``).

    Raises:
        ValueError: ``algorithm`` is not registered in :data:`bpe_core.interface.ALGORITHMS`.
    """
    view = VIEWS.get(algorithm)
    return view if view is not None else generic_view(algorithm)
