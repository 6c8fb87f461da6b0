"""Command line: ``python -m bpe_core {train,encode,compare,export} ...``.

* ``train FILE --vocab-size N --out PATH`` -- train a byte-level BPE (streamed,
  counted in parallel, :func:`bpe_core.train_bpe`), a WordPiece or a Unigram (``--algorithm``) on a UTF-8
  file, with a ``tqdm`` progress bar on stderr, and save it as the project's JSON.
* ``encode --tokenizer PATH FILE`` -- token ids of a file, space-separated, on stdout.
* ``compare FILE [--tokenizer PATH ...]`` -- tokens, bytes/token and
  characters/token of a file under GPT-2, cl100k_base and o200k_base (those
  available, see :func:`bpe_core.reference.load_reference`) and the given tokenizers.
* ``export --tokenizer PATH --format {tiktoken,hf,json,vocab.txt} --out PATH`` --
  write a tokenizer in another tool's format with the exporters of :mod:`bpe_core.formats`.

Tokenizer files are read with :func:`bpe_core.formats.upload.load_tokenizer_bytes`, so any
format the app imports works (a ``.tiktoken`` file picks up ``<file>.json``
next to it as its metadata when present).  Errors (bad arguments, unreadable or
malformed files, engine ``ValueError``) are printed as one line on stderr,
``bpe_core: error: ...``, with exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .bpe import BPETokenizer
from .formats.bert import wordpiece_to_vocab_txt
from .formats.huggingface import bpe_to_hf_json, wordpiece_to_hf_json
from .formats.tiktoken import bpe_to_tiktoken_files
from .formats.upload import decode_text_upload, load_tokenizer_bytes
from .interface import TrainingCancelled, TrainingSpec, algorithm_names, get_algorithm
from .pretokenize import PATTERNS
from .wordpiece import DEFAULT_SPECIAL_TOKENS as WORDPIECE_SPECIALS
from .wordpiece import WordPieceTokenizer

PROG = "python -m bpe_core"
REFERENCE_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
"""The reference encodings ``compare`` tries, in table order."""

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
        description="Train, apply, compare and export byte-level BPE and WordPiece tokenizers.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "train",
        help="train a tokenizer on a UTF-8 text file and save it as JSON",
        description="Train a tokenizer on a UTF-8 text file. BPE streams the file in chunks (never read whole) "
        "and counts pre-tokens in worker processes; WordPiece reads the file into memory.",
    )
    p.add_argument("file", metavar="FILE", help="UTF-8 training text")
    p.add_argument(
        "--vocab-size", type=_positive_int, required=True, metavar="N",
        help="vocabulary size to train to, counting byte tokens (BPE: 256), special tokens and merges",
    )  # fmt: skip
    p.add_argument(
        "--special-token", action="append", default=None, metavar="T", dest="special_tokens",
        help="a special token, cut out of the training text and given its own id (repeat for several; default: "
        f"the algorithm's own: <|endoftext|> for BPE, {' '.join(WORDPIECE_SPECIALS)} for WordPiece, <unk> for Unigram)",
    )  # fmt: skip
    p.add_argument(
        "--pattern", default=None, metavar="NAME",
        help=f"pre-tokenization pattern: one of {', '.join(PATTERNS)} or a regex (default: the algorithm's own: "
        "gpt2 for BPE, sentencepiece for Unigram; WordPiece always splits BERT-style)",
    )  # fmt: skip
    p.add_argument(
        "--workers", type=_positive_int, default=None, metavar="K",
        help="BPE: processes counting pre-tokens (default: all cores; files under 4 MiB use one)",
    )  # fmt: skip
    p.add_argument(
        "--algorithm", choices=algorithm_names(), default="bpe",
        help=f"one of {', '.join(algorithm_names())} (default: bpe, byte-level BPE)",
    )  # fmt: skip
    p.add_argument("--lowercase", action="store_true", help="WordPiece: lower-case the text before training")
    p.add_argument("--out", required=True, metavar="PATH", help="where to write the tokenizer (project JSON)")
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
        help="token counts of a file under several tokenizers, as a table",
        description="Tokens, bytes per token and characters per token of a UTF-8 file under GPT-2 (r50k_base), "
        "cl100k_base and o200k_base (those that can be loaded; see BPE_PLAYGROUND_ENCODINGS) and any "
        "tokenizer files given.",
    )
    p.add_argument("file", metavar="FILE", help="UTF-8 text to measure")
    p.add_argument(
        "--tokenizer", action="append", default=[], metavar="PATH", dest="tokenizers",
        help="a tokenizer file to add to the table (repeat for several)",
    )  # fmt: skip
    p.add_argument("--no-reference", action="store_true", help="leave out GPT-2, cl100k_base and o200k_base")

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


def load_tokenizer_file(path: str) -> BPETokenizer | WordPieceTokenizer:
    """Read a tokenizer file in any format :func:`bpe_core.formats.upload.load_tokenizer_bytes` knows.

    A ``.tiktoken`` ranks file takes its pattern and special tokens from
    ``<path>.json`` when that file exists.

    Raises:
        CLIError: the file cannot be read or is not a tokenizer.
    """
    data = _read_bytes(path)
    meta_path = Path(path + ".json")
    meta = meta_path.read_bytes() if not path.endswith(".json") and meta_path.is_file() else None
    try:
        return load_tokenizer_bytes(data, os.path.basename(path), meta)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


_PHASE_LABELS = {"count": "counting pre-tokens (chunks)", "merge": "merging"}


class _Progress:
    """A ``progress(phase, done, total)`` callback: one ``tqdm`` bar per phase on stderr, shown after 0.5 s."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
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
                total=total or None, desc=_PHASE_LABELS.get(phase, phase), unit="", file=sys.stderr, delay=0.5
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


def cmd_train(args: argparse.Namespace) -> int:
    """``train``: train and save; prints a one-line summary on stderr."""
    if not os.path.isfile(args.file):
        what = "a directory, not a file" if os.path.isdir(args.file) else "not found"
        raise CLIError(f"cannot read {args.file}: {what}")
    progress = _Progress(not args.quiet)
    try:
        alg = get_algorithm(args.algorithm)
        specials = alg.default_special_tokens if args.special_tokens is None else tuple(args.special_tokens)
        pattern = alg.default_pattern if alg.fixed_pattern or args.pattern is None else args.pattern
        spec = TrainingSpec(alg.name, args.vocab_size, pattern, specials, args.lowercase and alg.uses_lowercase)
        text = Path(args.file) if alg.reads_files else _read_text(args.file)
        tok = spec.train(text, progress=progress, num_workers=args.workers)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    finally:
        progress.close()
    try:
        tok.save(args.out)
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    info = tok.training
    summary = f"trained {tok.name}: vocab size {tok.max_vocab_size}"
    if info is not None:
        summary += f", {info.unique_pretokens:,} distinct pre-tokens"
        summary += f", counting {info.count_seconds:.2f} s, merging {info.merge_seconds:.2f} s"
        if info.stop_reason:
            summary += f" ({info.stop_reason})"
    print(f"{summary}; saved to {args.out}", file=sys.stderr)
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


def compare_rows(text: str, tokenizers: Sequence) -> list[dict]:
    """One table row per tokenizer: name, vocab size, tokens, bytes/token, characters/token.

    Args:
        text: the text to measure.
        tokenizers: objects with ``encode(text)``, ``name`` and ``vocab_size``.

    Returns:
        ``list[dict]`` with keys ``tokenizer``, ``vocab size``, ``tokens``,
        ``bytes/token``, ``chars/token`` (bytes are UTF-8 bytes).
    """
    n_bytes = len(text.encode("utf-8"))
    rows = []
    for tok in tokenizers:
        n = len(tok.encode(text))
        rows.append(
            {
                "tokenizer": tok.name,
                "vocab size": tok.vocab_size,
                "tokens": n,
                "bytes/token": round(n_bytes / n, 3) if n else float("nan"),
                "chars/token": round(len(text) / n, 3) if n else float("nan"),
            }
        )
    return rows


def cmd_compare(args: argparse.Namespace) -> int:
    """``compare``: a table on stdout; unavailable reference encodings are noted on stderr."""
    import pandas as pd

    from .reference import EncodingUnavailable, load_reference

    text = _read_text(args.file)
    toks = []
    if not args.no_reference:
        for name in REFERENCE_ENCODINGS:
            try:
                toks.append(load_reference(name))
            except (EncodingUnavailable, ValueError) as exc:
                print(f"note: {name} left out: {' '.join(str(exc).split())}", file=sys.stderr)
    for path in args.tokenizers:
        toks.append(load_tokenizer_file(path))
    if not toks:
        raise CLIError("no tokenizer to compare: no reference encoding could be loaded and no --tokenizer given")
    try:
        rows = compare_rows(text, toks)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    n_bytes = len(text.encode("utf-8"))
    print(f"{args.file}: {len(text):,} characters, {n_bytes:,} bytes (UTF-8)")
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``export``: write the tokenizer in the chosen format; tiktoken also writes ``<out>.json``."""
    tok = load_tokenizer_file(args.tokenizer)
    is_bpe = isinstance(tok, BPETokenizer)
    fmt = args.fmt
    files: list[tuple[str, bytes]] = []
    if fmt == "tiktoken":
        if not is_bpe:
            raise CLIError("--format tiktoken needs a BPE tokenizer; this one is WordPiece (use hf or vocab.txt)")
        ranks, meta = bpe_to_tiktoken_files(tok, Path(args.out).name.split(".")[0] or "bpe_playground")
        files = [(args.out, ranks), (args.out + ".json", meta)]
    elif fmt == "hf":
        data = bpe_to_hf_json(tok) if is_bpe else wordpiece_to_hf_json(tok)
        files = [(args.out, data.encode("utf-8"))]
    elif fmt == "vocab.txt":
        if is_bpe:
            raise CLIError("--format vocab.txt needs a WordPiece tokenizer; this one is BPE (use tiktoken or hf)")
        files = [(args.out, wordpiece_to_vocab_txt(tok))]
    else:
        import json

        files = [(args.out, json.dumps(tok.to_dict(), ensure_ascii=False).encode("utf-8"))]
    for path, data in files:
        try:
            Path(path).write_bytes(data)
        except OSError as exc:
            raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {', '.join(p for p, _ in files)}", file=sys.stderr)
    return 0


COMMANDS = {"train": cmd_train, "encode": cmd_encode, "compare": cmd_compare, "export": cmd_export}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 2 on a user error (one line on stderr),
        130 when interrupted (Ctrl+C) during training.
    """
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CLIError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, TrainingCancelled):
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
