"""Command line: ``python -m bpe_core {train,count,encode,compare,export} ...``.

* ``train FILE... --vocab-size N --out PATH`` -- train a byte-level BPE (streamed,
  counted in parallel, :func:`bpe_core.train_bpe`) a WordPiece or a Unigram (``--algorithm``) on UTF-8
  files (names, directories or glob patterns), with a ``tqdm`` progress bar on
  stderr, and save it as the project's JSON.  ``--dask ADDRESS`` counts on a Dask
  cluster; ``--from-counts TABLE...`` trains any algorithm from count tables
  counted for it instead of text (:func:`bpe_core.counting.table.train_from_table`).
* ``count FILE... --out TABLE [--algorithm A]`` -- count pre-tokens into a count table
  for algorithm ``A`` (:mod:`bpe_core.counting.table`); ``--from-counts`` adds existing tables in.
* ``encode --tokenizer PATH FILE`` -- token ids of a file, space-separated, on stdout.
* ``compare CORPUS... [--tokenizers all|KEY,KEY] [--tokenizer PATH ...] [--format table|csv|json]`` -- the
  Compare page's figures table (:mod:`bpe_core.analysis.figures`: same columns, same numbers) of files,
  directories or globs (each file a document) under production tokenizers (default GPT-2, cl100k_base and
  o200k_base; those that cannot be loaded offline are noted and left out) and the given tokenizer files,
  measured by counted distinct pieces (:func:`bpe_core.analysis.corpus.measure_corpus`), with a progress bar.
* ``export --tokenizer PATH --format {tiktoken,hf,json,vocab.txt} --out PATH`` --
  write a tokenizer in another tool's format with the exporters of :mod:`bpe_core.formats`.

Tokenizer files are read with :func:`bpe_core.formats.upload.load_tokenizer_bytes`, so any
format the app imports works (a ``.tiktoken`` file picks up ``<file>.json``
next to it as its metadata when present).  Errors (bad arguments, unreadable or
malformed files, engine ``ValueError``) are printed as one line on stderr,
``bpe_core: error: ...``, with exit code 2.

Outputs are written atomically (:func:`bpe_core.persistence.write_atomic_many`:
a temporary file beside each, renamed into place), so a failed run leaves
existing files as they were, and never over one of the run's own inputs (the
text, the tokenizer, or the metadata file ``<out>.json`` a tiktoken export adds).
No input makes the command print a traceback: an unexpected exception is one
line too (``internal error``); set ``BPE_CORE_DEBUG=1`` to see its traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .bpe import BPETokenizer
from .counting.stream import count_files, expand_inputs
from .counting.table import (
    CountTable,
    CountTableError,
    count_text_table,
    load_count_tables,
    merge_count_tables,
    save_count_table,
    train_from_table,
)
from .formats.bert import wordpiece_to_vocab_txt
from .formats.huggingface import to_hf_json
from .formats.tiktoken import bpe_to_tiktoken_files
from .formats.upload import decode_text_upload, load_tokenizer_bytes
from .interface import TrainingCancelled, TrainingSpec, algorithm_names, get_algorithm
from .persistence import write_atomic_many
from .pretokenize import PATTERNS
from .wordpiece import DEFAULT_SPECIAL_TOKENS as WORDPIECE_SPECIALS
from .wordpiece import WordPieceTokenizer

PROG = "python -m bpe_core"
REFERENCE_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
"""The production tokenizers ``compare`` measures by default, in table order."""

COMPARE_FORMATS = ("table", "csv", "json")

EXPORT_FORMATS = ("tiktoken", "hf", "json", "vocab.txt")


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block) and exit with code 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message>`` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m bpe_core`` (all subcommands).

    Returns:
        An ``argparse.ArgumentParser``; ``parse_args`` exits with status 2 and a
        one-line message on bad arguments.
    """
    parser = _Parser(
        prog=PROG,
        description="Train, apply, compare and export byte-level BPE, WordPiece and Unigram tokenizers.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "train",
        help="train a tokenizer on UTF-8 text files (or BPE on count tables) and save it as JSON",
        description="Train a tokenizer on UTF-8 text files: names, directories (every file under them) or glob "
        "patterns, read as one text. BPE streams the files in chunks (never read whole) and counts pre-tokens "
        "in worker processes or on a Dask cluster (--dask); WordPiece and Unigram read one file into memory. "
        "Any algorithm trains from count tables counted for it (--from-counts) without reading any text.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 training text: files, directories or globs")
    p.add_argument(
        "--vocab-size", type=_positive_int, required=True, metavar="N",
        help="vocabulary size to train to, counting byte tokens (BPE: 256), special tokens and merges",
    )  # fmt: skip
    _counting_arguments(p)
    _algorithm_arguments(p, "training")
    p.add_argument("--out", required=True, metavar="PATH", help="where to write the tokenizer (project JSON)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser(
        "count",
        help="count the pre-tokens of UTF-8 files into a count table (for train --from-counts)",
        description="Count the pre-tokens of UTF-8 text files (names, directories or globs, read as one text) "
        "and write a count table for an algorithm (--algorithm; each pre-tokenizes in its own way): the counts, "
        "the algorithm, pattern and special tokens used, a format version and a checksum (a .npz file; see "
        "bpe_core.counting.table). Tables of shards counted separately add up: --from-counts sums existing "
        "tables, with or without new files.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text: files, directories or globs")
    _counting_arguments(p)
    _algorithm_arguments(p, "counting")
    p.add_argument("--out", required=True, metavar="PATH", help="where to write the count table (.npz)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser(
        "encode",
        help="print the token ids of a file",
        description="Encode a UTF-8 text file and print its token ids, separated by spaces, on stdout.",
    )
    p.add_argument(
        "--tokenizer", required=True, metavar="PATH",
        help="tokenizer file: project JSON, Hugging Face tokenizer.json, .tiktoken (+ .tiktoken.json) or vocab.txt",
    )  # fmt: skip
    p.add_argument("file", metavar="FILE", help="UTF-8 text to encode")

    p = sub.add_parser(
        "compare",
        help="the Compare page's figures table of a corpus under production and trained tokenizers",
        description="The Compare page's figures table (the same columns and numbers: tokens, bytes, characters and "
        "tokens per word, words split, distinct tokens, vocabulary used, special, unknown and byte-fallback tokens) "
        "of UTF-8 text files -- names, directories (every file under them) or glob patterns, each file its own "
        "document -- under production tokenizers (--tokenizers; offline, see BPE_PLAYGROUND_ENCODINGS) and any "
        "tokenizer files given. Measured by counted distinct pieces (bpe_core.analysis.corpus): the files are read "
        "in chunks, never a whole directory at once.",
    )
    p.add_argument("corpus", nargs="+", metavar="CORPUS", help="UTF-8 text: files, directories or globs")
    p.add_argument(
        "--tokenizers", default=",".join(REFERENCE_ENCODINGS), metavar="all|KEY,KEY",
        help="production tokenizers: 'all', 'none', or keys separated by commas (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--tokenizer", action="append", default=[], metavar="PATH", dest="tokenizer_files",
        help="a tokenizer file to add to the table (repeat for several)",
    )  # fmt: skip
    p.add_argument(
        "--no-production", "--no-reference", action="store_true", help="no production tokenizers (as --tokenizers none)"
    )
    p.add_argument(
        "--format", choices=COMPARE_FORMATS, default="table", dest="fmt",
        help="table (aligned text, as the page shows it), csv or json (exact values, keyed as the page's columns)",
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser(
        "export",
        help="write a tokenizer in another tool's format",
        description="Export a tokenizer: tiktoken (BPE: ranks file at PATH plus PATH.json with pattern and "
        "special tokens), hf (Hugging Face tokenizer.json), json (this project's format), vocab.txt "
        "(WordPiece: BERT vocabulary).",
    )
    p.add_argument("--tokenizer", required=True, metavar="PATH", help="tokenizer file to read (any supported format)")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt", help="output format")
    p.add_argument("--out", required=True, metavar="PATH", help="output file")
    return parser


def _algorithm_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """``--algorithm`` and ``--lowercase`` (``train`` and ``count``)."""
    p.add_argument(
        "--algorithm", choices=algorithm_names(), default=None,
        help=f"one of {', '.join(algorithm_names())} (default: bpe, byte-level BPE; with --from-counts the "
        "algorithm the tables were counted for, which a given one must match)",
    )  # fmt: skip
    p.add_argument(
        "--lowercase", action="store_true",
        help=f"WordPiece: lower-case the text before {what} (with --from-counts: the tables must be lower-cased)",
    )  # fmt: skip


def _counting_arguments(p: argparse.ArgumentParser) -> None:
    """The options ``train`` and ``count`` share: pattern, special tokens, workers, Dask, count tables."""
    p.add_argument(
        "--special-token", action="append", default=None, metavar="T", dest="special_tokens",
        help="a special token, cut out of the text and given its own id (repeat for several; "
        f"WordPiece default: {' '.join(WORDPIECE_SPECIALS)}; Unigram: <unk>, always added; with --from-counts: "
        "the tables' own)",
    )  # fmt: skip
    p.add_argument(
        "--pattern", default=None, metavar="NAME",
        help=f"pre-tokenization pattern: one of {', '.join(PATTERNS)} or a regex (default: gpt2 for BPE, "
        "sentencepiece for Unigram; WordPiece: bert only; with --from-counts the tables' own, which a given "
        "pattern must match)",
    )  # fmt: skip
    p.add_argument(
        "--workers", type=_positive_int, default=None, metavar="K",
        help="BPE: processes counting pre-tokens (default: all cores; inputs under 4 MiB use one)",
    )  # fmt: skip
    p.add_argument(
        "--dask", default=None, metavar="ADDRESS",
        help="BPE: count on the Dask cluster whose scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786); each "
        "task reads its own byte range of a file, so the workers must see the files at the same paths "
        "(needs the distributed package)",
    )  # fmt: skip
    p.add_argument(
        "--from-counts", nargs="+", default=None, metavar="TABLE", dest="from_counts",
        help="count tables (written by count) to add up and use instead of, or with (count only), text files",
    )  # fmt: skip


# ---------------------------------------------------------------------------
# helpers


def _read_text(path: str) -> str:
    """A UTF-8 file's text (BOM dropped), or a :class:`CLIError` naming the problem."""
    data = _read_bytes(path)
    try:
        return decode_text_upload(data, path, max_bytes=1 << 62)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise CLIError(f"{path} is a directory, not a file") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None


def metadata_path(path: str) -> str | None:
    """The tiktoken metadata file read with tokenizer file ``path`` (``<path>.json``), or ``None``.

    ``None`` when ``path`` is itself JSON or no such file exists.
    """
    meta_path = path + ".json"
    if path.endswith(".json") or not os.path.isfile(meta_path):
        return None
    return meta_path


def load_tokenizer_file(path: str) -> BPETokenizer | WordPieceTokenizer:
    """Read a tokenizer file in any format :func:`bpe_core.formats.upload.load_tokenizer_bytes` knows.

    A ``.tiktoken`` ranks file takes its pattern and special tokens from
    ``<path>.json`` when that file exists (:func:`metadata_path`).

    Raises:
        CLIError: the file cannot be read or is not a tokenizer.
    """
    data = _read_bytes(path)
    meta_path = metadata_path(path)
    meta = _read_bytes(meta_path) if meta_path is not None else None
    try:
        return load_tokenizer_bytes(data, os.path.basename(path), meta)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file: equal after resolving symlinks and ``..``, or hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_outputs(outputs: Sequence[str], inputs: Sequence[str]) -> None:
    """Refuse to run when an output would replace one of the run's inputs, or two outputs coincide.

    Args:
        outputs: the paths the command will write.
        inputs: every file the command reads (text, tokenizer, its metadata).

    Raises:
        CLIError: naming both paths and the fix (another ``--out``).
    """
    for k, out in enumerate(outputs):
        for src in inputs:
            if _same_file(out, src):
                what = "--out" if k == 0 else f"the metadata file {out} written beside --out"
                raise CLIError(
                    f"{what} would overwrite the input {src}; choose another --out (the input is left as it is)"
                )
        for other in outputs[:k]:
            if _same_file(out, other):
                raise CLIError(f"--out {other} and {out} are the same file; choose another --out")


def write_outputs(files: Sequence[tuple[str, bytes]]) -> None:
    """Write each ``(path, bytes)`` atomically, all staged before any is replaced.

    Raises:
        CLIError: a file cannot be written; every existing file is left as it was.
    """
    for path, _data in files:
        if os.path.isdir(path):
            raise CLIError(f"cannot write {path}: it is a directory")
    try:
        write_atomic_many(files)
    except OSError as exc:
        failed = exc.filename or ", ".join(p for p, _ in files)
        raise CLIError(f"cannot write {failed}: {exc.strerror or exc} (existing files are left as they were)") from None


_PHASE_LABELS = {"count": "counting pre-tokens (chunks)", "merge": "merging"}
_COMPARE_LABELS = {
    "count": "counting distinct units (chunks)",
    "split": "cutting units into pieces (splits)",
    "encode": "encoding distinct pieces (tokenizers)",
}
"""The progress bar's phases of ``compare`` (:func:`bpe_core.analysis.corpus.measure_corpus`'s)."""


class _Progress:
    """A ``progress(phase, done, total)`` callback: one ``tqdm`` bar per phase on stderr, shown after 0.5 s."""

    def __init__(self, enabled: bool, labels: dict[str, str] | None = None) -> None:
        self.enabled = enabled
        self.labels = _PHASE_LABELS if labels is None else labels
        self.bar = None
        self.phase = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if phase != self.phase:
            self.close()
            self.phase = phase
            self.bar = tqdm(
                total=total or None, desc=self.labels.get(phase, phase), unit="", file=sys.stderr, delay=0.5
            )
        if total and self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# ---------------------------------------------------------------------------
# commands


class _DaskExecutor:
    """``with _DaskExecutor(address) as ex``: a ``concurrent.futures.Executor`` on a Dask cluster, or ``None``."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self.client = None

    def __enter__(self):
        if self.address is None:
            return None
        try:
            from distributed import Client
        except ImportError:
            raise CLIError(
                "--dask needs the distributed package (pip install -r requirements.txt installs it)"
            ) from None
        try:
            self.client = Client(self.address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise CLIError(f"cannot reach the Dask scheduler at {self.address}: {exc}") from None
        return self.client.get_executor()

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.close()


def _count_inputs(args: argparse.Namespace, progress: _Progress) -> tuple[CountTable, float]:
    """What ``train``/``count`` work from: ``(count table, seconds spent counting text)``.

    Text files are counted for the algorithm (``--algorithm``, default the
    tables' or ``bpe``), count tables loaded and checked against it, and all of
    them added up.
    """
    specials = args.special_tokens
    algorithm = args.algorithm
    lowercase = True if args.lowercase else None
    tables: list[CountTable] = []
    seconds = 0.0
    try:
        if args.from_counts:
            tables.append(
                load_count_tables(
                    args.from_counts,
                    pattern=args.pattern,
                    special_tokens=specials,
                    algorithm=algorithm,
                    lowercase=lowercase,
                )
            )
            first = tables[0]
            algorithm, pattern, lowercase = first.algorithm, first.pattern, first.lowercase
            specials = first.special_tokens if specials is None else specials
        else:
            algorithm = algorithm or "bpe"
            alg = get_algorithm(algorithm)
            pattern = args.pattern or alg.default_pattern
            specials = alg.default_special_tokens if specials is None else specials
            lowercase = bool(args.lowercase) and alg.uses_lowercase
        if args.files and not get_algorithm(algorithm).streams_counts:
            if args.dask:
                raise CLIError(f"--dask counts BPE pre-tokens only; {algorithm} counts its words in this process")
            for name in expand_inputs(args.files):
                t0 = time.perf_counter()
                tables.append(
                    count_text_table(
                        _read_text(name),
                        algorithm,
                        pattern,
                        specials,
                        lowercase=lowercase,
                        sources=[name],
                        progress=progress,
                    )
                )
                seconds += time.perf_counter() - t0
        elif args.files:
            with _DaskExecutor(args.dask) as executor:
                counted = count_files(
                    args.files,
                    pattern,
                    specials or (),
                    num_workers=args.workers,
                    progress=progress,
                    executor=executor,
                )
            table = CountTable.from_counts(
                counted.word_counts,
                pattern,
                specials or (),
                special_occurrences=counted.special_occurrences,
                sources=counted.sources,
            )
            seconds = counted.seconds
            tables.append(table)
        return merge_count_tables(tables), seconds
    except CountTableError as exc:
        raise CLIError(str(exc)) from None
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        name = getattr(exc, "filename", None)
        raise CLIError(f"cannot read {name}: {exc.strerror}" if name and exc.strerror else str(exc)) from None


def _input_files(args: argparse.Namespace) -> list[str]:
    """Every file a ``train``/``count`` run reads: its text files (directories and globs expanded) and count tables."""
    names = [str(n) for n in (*(args.files or ()), *(getattr(args, "from_counts", None) or ()))]
    try:
        expanded = expand_inputs(names) if names else []
    except (FileNotFoundError, TypeError):
        expanded = []  # counting reports the missing file itself
    return names + expanded  # the names as typed first, so a refusal quotes them


def cmd_train(args: argparse.Namespace) -> int:
    """``train``: train and save; prints a one-line summary on stderr."""
    if not args.files and not args.from_counts:
        raise CLIError("train needs FILE arguments or --from-counts TABLE")
    if args.from_counts and args.files:
        raise CLIError("train takes FILE arguments or --from-counts, not both (add files to a table with count)")
    reads_text = args.algorithm is not None and not get_algorithm(args.algorithm).streams_counts
    if args.dask and reads_text:
        raise CLIError(f"--dask counts BPE pre-tokens only; {args.algorithm} counts its words in this process")
    check_outputs([args.out], _input_files(args))
    progress = _Progress(not args.quiet)
    try:
        if args.files and reads_text:  # a file its trainer reads (no streamed counting)
            alg = get_algorithm(args.algorithm)
            if len(args.files) != 1 or not os.path.isfile(args.files[0]):
                what = "one file" if len(args.files) != 1 else f"a file ({args.files[0]} is not one)"
                raise CLIError(f"{alg.label} trains on {what} (or on count tables: count, then --from-counts)")
            specials = alg.default_special_tokens if args.special_tokens is None else tuple(args.special_tokens)
            pattern = alg.default_pattern if alg.fixed_pattern or args.pattern is None else args.pattern
            spec = TrainingSpec(alg.name, args.vocab_size, pattern, specials, args.lowercase and alg.uses_lowercase)
            text = Path(args.files[0]) if alg.reads_files else _read_text(args.files[0])
            tok = spec.train(text, progress=progress, num_workers=args.workers)
        else:  # counted from streamed files (BPE), or any algorithm from count tables
            table, count_seconds = _count_inputs(args, progress)
            try:
                tok = train_from_table(
                    table,
                    args.vocab_size,
                    special_tokens=args.special_tokens,
                    lowercase=True if args.lowercase else None,
                    progress=progress,
                )
            except CountTableError as exc:
                raise CLIError(f"{', '.join(args.from_counts or args.files)}: {exc}") from None
            tok.training.count_seconds = count_seconds
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    finally:
        progress.close()

    write_outputs([(args.out, json.dumps(tok.to_dict(), ensure_ascii=False).encode("utf-8"))])
    info = tok.training
    summary = f"trained {tok.name}: vocab size {tok.max_vocab_size}"
    if info is not None:
        summary += f", {info.unique_pretokens:,} distinct pre-tokens"
        summary += f", counting {info.count_seconds:.2f} s, merging {info.merge_seconds:.2f} s"
        if info.stop_reason:
            summary += f" ({info.stop_reason})"
    print(f"{summary}; saved to {args.out}", file=sys.stderr)
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    """``count``: write a count table; prints a one-line summary on stderr."""
    if not args.files and not args.from_counts:
        raise CLIError("count needs FILE arguments or --from-counts TABLE")
    check_outputs([args.out], _input_files(args))
    progress = _Progress(not args.quiet)
    try:
        table, _ = _count_inputs(args, progress)
    finally:
        progress.close()
    try:
        save_count_table(table, args.out)
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(
        f"counted {table.pretokens:,} pre-tokens ({len(table.word_counts):,} distinct, "
        f"{table.special_occurrences:,} special tokens) {table.describe()} from {len(table.sources)} file(s); "
        f"saved to {args.out}",
        file=sys.stderr,
    )
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    """``encode``: ids separated by spaces, one line, on stdout."""
    tok = load_tokenizer_file(args.tokenizer)
    text = _read_text(args.file)
    try:
        ids = tok.encode(text)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    sys.stdout.write(" ".join(map(str, ids)) + "\n")
    return 0


def compare_keys(spec: str) -> list[str]:
    """The production keys ``--tokenizers`` names: ``all``, ``none``, or keys separated by commas.

    Raises:
        CLIError: an unknown key (the message lists the valid ones).
    """
    from .production.registry import PRODUCTION

    spec = spec.strip()
    if spec == "all":
        return list(PRODUCTION)
    if spec in ("", "none"):
        return []
    keys = [k.strip() for k in spec.split(",") if k.strip()]
    unknown = [k for k in keys if k not in PRODUCTION]
    if unknown:
        raise CLIError(
            f"unknown tokenizer key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"valid keys: all, none, {', '.join(PRODUCTION)}"
        )
    return list(dict.fromkeys(keys))


def _compare_tokenizers(args: argparse.Namespace) -> list:
    """The tokenizers ``compare`` measures: production ones (unavailable ones noted on stderr), then files."""
    from .production.encodings import EncodingUnavailable
    from .production.registry import load_production

    toks = []
    for key in [] if args.no_production else compare_keys(args.tokenizers):
        try:
            toks.append(load_production(key))
        except (EncodingUnavailable, ValueError) as exc:
            print(f"note: {key} left out: {' '.join(str(exc).split())}", file=sys.stderr)
    toks += [load_tokenizer_file(path) for path in args.tokenizer_files]
    if not toks:
        raise CLIError("no tokenizer to compare: none of --tokenizers could be loaded and no --tokenizer given")
    return toks


def format_figures(rows: Sequence[dict], fmt: str, header: str = "") -> str:
    """The figures table as text: aligned as the page shows it (``table``), ``csv`` or ``json``.

    Args:
        rows: :func:`bpe_core.analysis.figures.figure_rows`.
        fmt: ``"table"`` (headers and cells as :data:`~bpe_core.analysis.figures.COMPARE_COLUMNS` show them),
            ``"csv"`` (a header of the column keys, exact values) or ``"json"`` (an object: ``columns``, each
            column's key, header, format and help, and ``rows``, each ``{key: exact value}``).
        header: a line printed above the table (``table`` only).

    Returns:
        The text, ending with a newline.
    """
    import csv
    import io

    from .analysis.figures import COMPARE_COLUMNS, format_cell

    keys = [c.key for c in COMPARE_COLUMNS]
    if fmt == "json":
        columns = [{"key": c.key, "header": c.header, "format": c.fmt, "help": c.help} for c in COMPARE_COLUMNS]
        return json.dumps({"columns": columns, "rows": [{k: r[k] for k in keys} for r in rows]}, indent=1) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(keys)
        writer.writerows([[r[k] for k in keys] for r in rows])
        return out.getvalue()
    cells = [[c.header for c in COMPARE_COLUMNS]]
    cells += [[format_cell(r[c.key], c.fmt) for c in COMPARE_COLUMNS] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(keys))]
    lines = [
        "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths))).rstrip()
        for line in cells
    ]
    return (header + "\n" if header else "") + "\n".join(lines) + "\n"


def cmd_compare(args: argparse.Namespace) -> int:
    """``compare``: the figures table on stdout (table, CSV or JSON); notes and the progress bar on stderr."""
    from .analysis.corpus import measure_corpus
    from .analysis.figures import figure_rows

    paths = expand_inputs(args.corpus)
    toks = _compare_tokenizers(args)
    progress = _Progress(not args.quiet, _COMPARE_LABELS)
    try:
        figures = measure_corpus(paths, toks, files=True, progress=progress)
    finally:
        progress.close()
    m = figures[0]
    header = (
        f"{len(paths):,} file{'s' if len(paths) != 1 else ''}: {m.characters:,} characters, {m.bytes:,} bytes "
        f"(UTF-8), {m.words:,} words"
    )
    sys.stdout.write(format_figures(figure_rows([(t.name, f) for t, f in zip(toks, figures)]), args.fmt, header))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``export``: write the tokenizer in the chosen format; tiktoken also writes ``<out>.json``."""
    inputs = [args.tokenizer]
    meta_path = metadata_path(args.tokenizer)
    if meta_path is not None:
        inputs.append(meta_path)
    outputs = [args.out, args.out + ".json"] if args.fmt == "tiktoken" else [args.out]
    check_outputs(outputs, inputs)
    tok = load_tokenizer_file(args.tokenizer)
    algorithm = tok.algorithm
    fmt = args.fmt
    files: list[tuple[str, bytes]] = []
    if fmt == "tiktoken":
        if not tok.is_byte_level:  # tiktoken's ranks are byte-level BPE's
            raise CLIError(f"--format tiktoken needs a BPE tokenizer; this one is {algorithm} (use hf or json)")
        ranks, meta = bpe_to_tiktoken_files(tok, Path(args.out).name.split(".")[0] or "bpe_playground")
        files = [(args.out, ranks), (args.out + ".json", meta)]
    elif fmt == "hf":
        files = [(args.out, to_hf_json(tok).encode("utf-8"))]
    elif fmt == "vocab.txt":
        if get_algorithm(algorithm).hf_model != "WordPiece":  # BERT's vocab.txt holds a WordPiece model
            raise CLIError(f"--format vocab.txt needs a WordPiece tokenizer; this one is {algorithm} (use hf or json)")
        files = [(args.out, wordpiece_to_vocab_txt(tok))]
    else:
        files = [(args.out, json.dumps(tok.to_dict(), ensure_ascii=False).encode("utf-8"))]
    write_outputs(files)
    print(f"wrote {', '.join(p for p, _ in files)}", file=sys.stderr)
    return 0


COMMANDS = {"train": cmd_train, "count": cmd_count, "encode": cmd_encode, "compare": cmd_compare, "export": cmd_export}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 2 on any error (one line on stderr, never
        a traceback), 130 when interrupted (Ctrl+C) during training.

    With the environment variable ``BPE_CORE_DEBUG`` set (the test suite sets
    it), an unexpected exception -- a bug, not bad input -- is raised with its
    traceback instead of being reported as ``internal error``.
    """
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (KeyboardInterrupt, TrainingCancelled):
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (CLIError, ValueError) as exc:
        return _error(str(exc))
    except MemoryError:
        return _error("out of memory (try a smaller file or vocabulary)")
    except OSError as exc:
        return _error(f"{exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}")
    except Exception as exc:
        if os.environ.get("BPE_CORE_DEBUG"):
            raise
        return _error(f"internal error: {type(exc).__name__}: {exc} (a bug; BPE_CORE_DEBUG=1 shows the traceback)")


def _error(message: str) -> int:
    """Print ``<prog>: error: <message>`` as one line on stderr; the exit status 2."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
