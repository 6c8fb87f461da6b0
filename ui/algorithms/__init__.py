"""What the screen says, draws and offers per trainable algorithm: the one place ``ui`` differs by algorithm.

:data:`bpe_core.interface.ALGORITHMS` holds what the engine knows about an
algorithm (its label, trainer, default pattern and special tokens, whether
the pattern is fixed, whether it lower-cases, how it counts).  An
:class:`AlgorithmView` adds everything only the screen needs: sentences that
explain the algorithm (captions, the slider's help, the legend), the export
formats it writes, the browser's live-view tables and the Merges player
(:class:`LiveTables`), the Merges page's history, the cost estimate that
decides on a progress bar, its sidebar widgets' session-state keys, and what
Compare and Insights do with it.  Pages and the other ``ui`` modules look a
view up by the tokenizer's :attr:`~bpe_core.interface.TrainedTokenizer.algorithm`
(:func:`view_of`) and never switch on a tokenizer's class or an algorithm's
name themselves; no other ``ui`` module keeps a table keyed by an algorithm's name.

Each algorithm's view is one module of this package named after it
(``ui/algorithms/bpe.py``, ``wordpiece.py``, ``unigram.py``) that calls
:func:`register` when imported; :func:`view_of` imports it the first time the
algorithm is asked for.  A view registered from elsewhere (a test's toy
algorithm) works the same; an algorithm without one gets :func:`generic_view`
(plain wording, this project's JSON export, drawn on the server, no Merges story).
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bpe_core import get_algorithm
from bpe_core.interface import TrainedTokenizer, TrainingSpec
from ui import render
from ui.merges.model import MergeHistory
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


@dataclass(frozen=True)
class LiveTables:
    """What the browser's live view (:mod:`ui.live_view`) needs of an algorithm: exact tables, built once.

    The browser redraws a text at every vocabulary size (and the Merges player at every step) from
    these tables without asking the server again; the server's ``with_vocab_size(k).token_spans``
    stays the truth the tests compare them with.

    Attributes:
        totals: ``totals(full tokenizer, text, trained_on_text) -> list[int]``: the whole text's
            tokens at every size ``min_vocab_size..max_vocab_size``.
        tables: ``tables(full tokenizer, drawn text, min_vocab_size) -> dict``: the payload's
            algorithm part (``"kind"`` names the browser's drawing, see ``live.js``).
        player: ``player(full tokenizer, training text, drawn text) -> dict``: the Merges
            player's payload (:func:`ui.live_view.merges_payload`), or ``None`` when training is
            not played in the browser.
        max_chars: the longest text (characters) the live view draws; longer texts are drawn
            on the server (``None``: no limit).
    """

    totals: Callable[[TrainedTokenizer, str, bool], list[int]]
    tables: Callable[[TrainedTokenizer, str, int], dict[str, Any]]
    player: Callable[[TrainedTokenizer, str, str], dict[str, Any]] | None = None
    max_chars: int | None = None


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
        live: the browser's live view and Merges player (:class:`LiveTables`), or ``None``:
            drawn on the server (every slider move reruns the page).
        history: ``history(tokenizer, training text)``: the Merges page's story of training
            (a :class:`ui.merges.model.MergeHistory`; it raises ``ValueError`` for a tokenizer
            without a training trace), or ``None``: the page says it does not show it.
        chars_per_second: a cautious training speed (characters per second at the default
            vocabulary size, one busy core), for :func:`ui.training.expected_seconds`.
        long_word_chars: a run of non-space characters this long makes training slow by itself
            (:func:`ui.training.expected_seconds`).
        special_tokens_key: the session-state key of its special-tokens widget (each algorithm
            keeps its own choice); default ``"<name>_special_tokens"``.
        lowercase_key: the session-state key of its lower-casing toggle (algorithms that offer
            it; the link's ``lower``); default ``"<name>_lowercase"``.
        variants: Compare offers it with other patterns and sizes, and Insights' pre-tokenizer
            playground trains it (byte-level BPE).
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
    specials_help: str = "Never merged, never split: each is one token wherever it appears. Type to add your own."
    lowercase_help: str = "Train and encode on the lower-cased text."
    compare_vocab_size: int | None = None
    compare_curve: bool = False
    trained_note: Callable[[TrainedTokenizer], str] = lambda tok: f"**{len(tok.trace):,}** merges learned"
    steps_html: Callable[..., str] | None = None
    rank_label: Callable[[TrainedTokenizer, int], str] = lambda tok, i: f"merge #{tok.rank_of(i) + 1:,}"
    stop_phrase: str = "no pair was left to merge"
    live: LiveTables | None = None
    history: Callable[[TrainedTokenizer, str], MergeHistory] | None = None
    chars_per_second: int = 150_000
    long_word_chars: int = 2_000
    special_tokens_key: str = ""
    lowercase_key: str = ""
    variants: bool = False

    def __post_init__(self) -> None:
        if not self.special_tokens_key:
            object.__setattr__(self, "special_tokens_key", f"{self.name}_special_tokens")
        if not self.lowercase_key:
            object.__setattr__(self, "lowercase_key", f"{self.name}_lowercase")

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


VIEWS: dict[str, AlgorithmView] = {}
"""Algorithm name -> :class:`AlgorithmView`."""


def register(view: AlgorithmView) -> AlgorithmView:
    """Add (or replace) an algorithm's :class:`AlgorithmView`; returns it."""
    VIEWS[view.name] = view
    return view


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

    The first time a name is asked for that has not registered its view, its module
    ``ui.algorithms.<name>`` is imported (it registers its view); without one, :func:`generic_view`.

    Raises:
        ValueError: ``algorithm`` is not registered in :data:`bpe_core.interface.ALGORITHMS`.
    """
    get_algorithm(algorithm)  # ValueError for an unknown name
    view = VIEWS.get(algorithm)
    if view is None:
        with _LOOKING:  # one session imports it; the others wait for its registration
            if algorithm not in _LOOKED_FOR:
                _import_view_module(algorithm)
                _LOOKED_FOR.add(algorithm)
        view = VIEWS.get(algorithm)
    return view if view is not None else generic_view(algorithm)


def unregister(name: str) -> None:
    """Forget an algorithm's view (a test's toy algorithm, when the test ends)."""
    VIEWS.pop(name, None)
    _LOOKED_FOR.discard(name)


_LOOKED_FOR: set[str] = set()
"""Algorithm names whose view module :func:`view_of` has looked for (each is imported at most once)."""

_LOOKING = threading.RLock()
"""Held while a view module is imported (the server runs sessions in threads)."""


def _import_view_module(algorithm: str) -> None:
    """Import ``ui.algorithms.<algorithm>`` when it exists (importing it registers its view)."""
    module = f"{__name__}.{algorithm}"
    if not algorithm.isidentifier():
        return
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:  # the module exists and lacks something: a bug to show
            raise
