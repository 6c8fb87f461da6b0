"""Every ``st.session_state`` key of the app, defined once.

Widget keys are session-state keys too (a widget's value lives under its
``key``), and the values below are also what :mod:`ui.links` maps to the
address bar's parameters and what the AppTests address widgets by, so a key
is never renamed lightly.  Keys starting with ``_`` are internal flags no
widget owns.  The keys of an algorithm's own widgets are part of its
registration (:class:`ui.algorithms.AlgorithmView`).
``tests/app/test_ui_architecture.py`` checks that ``ui/`` and ``app_pages/``
use these names instead of string literals.
"""

from __future__ import annotations

# -- app-wide ---------------------------------------------------------------

SETTINGS = "settings"
"""The sidebar's :class:`ui.inputs.Settings` of this run (set by ``app.py``)."""

# -- the sidebar: text ------------------------------------------------------

SOURCE = "source"
SAMPLE = "sample"
PASTE_TEXT = "paste_text"
UPLOAD_FILE = "upload_file"
UPLOAD_GOOD = "upload_good"
"""``(file name, text)`` of the last upload that decoded (kept when a bad one follows)."""

# -- the sidebar: tokenizer -------------------------------------------------

TOKENIZER_SOURCE = "tokenizer_source"
TOKENIZER_UPLOAD = "tokenizer_upload"
TOKENIZER_IMPORT_GOOD = "tokenizer_import_good"
"""The last :class:`ui.imported.Imported` that loaded (kept when a bad file follows)."""
TOKENIZER_IMPORT_SEEN = "_tokenizer_import_seen"
"""``{(file name, sha256)}`` in the import box on the previous run (what is newly chosen is the rest)."""
TOKENIZER_IMPORT_OUTCOME = "_tokenizer_import_outcome"
"""The :class:`ui.imported.Outcome` of the last file(s) chosen."""

ALGORITHM = "algorithm"
PATTERN = "pattern"
PATTERN_BY_ALGORITHM = "pattern_by_algorithm"
"""The pattern last chosen under each algorithm ({algorithm: pattern key}), restored when it is chosen again."""
CUSTOM_PATTERN = "custom_pattern"
CUSTOM_PATTERN_GOOD = "_custom_pattern_good"
"""The last custom regex that compiled (in force while the typed one is invalid)."""

MAX_VOCAB = "max_vocab"
"""The "Vocabulary size to train" number input (a :class:`~bpe_core.interface.TrainingSpec`'s ``vocab_size``)."""


# Each algorithm's special-tokens multiselect and lower-casing toggle have keys of their own (each algorithm
# keeps its own choice): :attr:`ui.algorithms.AlgorithmView.special_tokens_key` and ``lowercase_key``.


# -- the sidebar: display ---------------------------------------------------

COLOUR_MODE = "colour_mode"
PRESENT = "present"
"""The "Presentation mode" toggle (:mod:`ui.present`)."""
SHOW_WS = "show_ws"
"""The "Show whitespace" toggle (shared by the Playground and Compare)."""

# -- training (ui.training, ui.view) ----------------------------------------

TRAINING_CANCELLED_FOR = "training_cancelled_for"
"""The training key whose training this session cancelled, if any."""

TRAINING_LAST = "training_last"
"""``(training key, Settings)`` of the sidebar tokenizer this session last trained or used."""

TRAINING_HELD = "_training_held"
"""``{training key: tokenizer}`` this session shows (strong references: eviction from the shared cache
never takes them)."""

TRAINING_FAILED = "_training_failed"
"""``{training key: (message, smallest size that works or None)}``: trainings that failed in this session (the
newest few), so that no page retries them (:func:`ui.training.failure`)."""

CANCEL_TRAINING = "cancel_training"
RESUME_TRAINING = "resume_training"
TRAIN_AT_MINIMUM = "train_at_minimum"
"""The "Train at N tokens" button a failed training offers (:func:`ui.view.previous_if_failed`)."""

VOCAB_SIZE = "vocab_size"
"""The vocabulary-size slider, shared by every page."""


def owner_key(key: str) -> str:
    """Where a widget keyed ``key`` notes the object it was last reset for (``id`` of a tokenizer or history)."""
    return f"{key}__owner"


# -- links (ui.links) -------------------------------------------------------

LINKS_RESTORED = "_links_restored"
"""The URL has been read for this session."""

LINKS_PAGE = "_links_page"
"""The ``url_path`` of the page this session last ran (the Merges fragment publishes for it)."""

PENDING_STEP = "_links_pending_merge_step"
"""The Merges page's step from the URL, applied when its history is first shown."""

PENDING_SIZE = "_links_pending_vocab_size"
"""A slider size from the URL, applied once the tokenizer exists."""

# -- the Learn page ---------------------------------------------------------

LESSON = "lesson"
"""The lesson on screen (its slug, :mod:`ui.lessons`): the lesson picker's key, the link's ``lesson``."""

LESSON_NAV = "lesson_nav"
"""The row of Previous, the lesson picker and Next (a container's key)."""
LESSON_PREV = "lesson_prev"
LESSON_NEXT = "lesson_next"
LESSON_TRY = "lesson_try"
"""The "Try it on your text" button."""

LESSON_GOTO = "_lesson_goto"
"""The page a "Try it on your text" button asked for: the Learn page switches to it on the next run."""

LINK_HAD_SETTINGS = "_link_had_settings"
"""Whether the session opened from a link carrying settings (:func:`ui.links.restore`); a first visit without
any is offered the Learn page on the Playground."""


def lesson_key(slug: str, name: str) -> str:
    """A widget of one lesson (``"lesson_bytes_text"``: the input box of the lesson ``bytes``)."""
    return "lesson_" + "".join(c if c.isalnum() else "_" for c in slug) + "_" + name


# -- the Playground ---------------------------------------------------------

PLAYGROUND_CLICK = "playground_click"

# -- the Merges page --------------------------------------------------------

MERGE_STEP = "merge_step"
MERGE_PLAYING = "merge_playing"
MERGE_SPEED = "merge_speed"
MERGE_TABLE = "merge_table"
"""Prefix of the merge table's key (one key per step and row set)."""
MERGE_TOUCHED = "_merge_touched"
"""A control changed the step in this run (so this run is not a play tick)."""
MERGE_SHOWN_STEP = "_merge_shown_step"
MERGE_FULL_RERUN = "_merge_full_rerun"
"""The fragment must rerun the whole page (its timer changes)."""
MERGE_FIRST = "merge_first"
MERGE_PREV = "merge_prev"
MERGE_PLAY = "merge_play"
MERGE_NEXT = "merge_next"
MERGE_LAST = "merge_last"
MERGE_QUERY = "merge_query"
MERGE_TABLE_ALL = "merge_table_all"
MERGE_WHY_LARGE = "merge_why_large"
MERGE_FIG_COUNTS = "merge_fig_counts"
MERGE_FIG_TOKENS = "merge_fig_tokens"
MERGE_FIG_LENGTHS = "merge_fig_lengths"

# -- the Compare page -------------------------------------------------------

COMPARE_TOKENIZERS = "compare_tokenizers"
"""The Compare picker's choice (registry keys): the union of the family pills, what the link's ``cmp`` holds."""


def compare_family_key(family: str) -> str:
    """The Compare picker's pills of one family (``"compare_pick_openai"``, ``"compare_pick_your_own"``)."""
    return "compare_pick_" + "".join(c if c.isalnum() else "_" for c in family.lower())


COMPARE_FOR_ALGORITHM = "_compare_for_algorithm"
"""The sidebar's algorithm when Compare's choice was last drawn (the choice follows a change of it)."""
COMPARE_PATTERNS = "compare_patterns"
COMPARE_SIZES = "compare_sizes"
COMPARE_SOURCE = "compare_source"
COMPARE_TEXT = "compare_text"
COMPARE_HIGHLIGHT = "compare_highlight"
COMPARE_LIVE_SLIDER = "compare_live_slider"
"""Compare's vocabulary slider drawn in the browser (:func:`ui.live_view.group_slider`)."""
COMPARE_CANCEL_MEASURE = "compare_cancel_measure"
"""The Cancel button of Compare's measuring panel (:func:`ui.compare.measure_or_previous`)."""
COMPARE_MEASURE_AGAIN = "compare_measure_again"
"""The "Measure now" button shown after a Cancel of Compare's measuring."""
COMPARE_MEASURE_CANCELLED = "_compare_measure_cancelled"
"""The measuring request (text digest, tokenizer cache keys) this session cancelled on Compare."""
COMPARE_LAST_VIEW = "_compare_last_view"
"""Compare's last measured view ``(columns, {cache key: TextMetrics}, text)``: shown again after a Cancel."""


def compare_live_key(column: str) -> str:
    """The live view of one Compare column that follows the slider (``column``: its stable key, such as ``"bpe"``)."""
    return "compare_live_" + "".join(c if c.isalnum() else "_" for c in column)


# -- the Encode step by step page -------------------------------------------

ENCODE_WORD = "encode_word"
ENCODE_TOKENIZERS = "encode_tokenizers"

# -- the Insights page ------------------------------------------------------

INS_TAB = "ins_tab"
INS_TOKEN = "ins_token"
INS_DIFF_PRODUCTION = "ins_diff_production"
"""The vocabulary diff's production encoding (a key of :data:`bpe_core.production.registry.PRODUCTION`)."""
INS_PRODUCTION = "ins_production"
"""The Insights page's production encodings to compare with (keys of :data:`bpe_core.production.registry.PRODUCTION`).

The link calls them ``prod`` (``refs`` before; still read), and the diff's one ``diffwith`` (``ref``)."""
INS_SPLIT = "ins_split"
INS_FRACTION = "ins_fraction"
INS_SEED = "ins_seed"
INS_PATTERN_BASE = "ins_pattern_base"
INS_PATTERN_TEXT = "ins_pattern_text"
INS_PATTERN_GOOD = "_ins_pattern_good"
"""The last playground pattern that compiled."""
INS_UNUSED_ON = "ins_unused_on"

SERVER_VIEW = "server_view"
"""The Playground's "Draw on the server" toggle (AppTest, which runs no JavaScript, sets it)."""
FOLLOW_TYPING = "follow_typing"
"""The component that commits the sidebar's text box as the user types."""


def component_version_key(component_key: str) -> str:
    """Where a live component's last payload version is kept (a late report about an older payload is ignored)."""
    return f"{component_key}__v"
