"""Set-up step: llama.cpp's GGUF vocabularies, extracted from llama-cpp-python's source release and verified.

llama.cpp ships small GGUF files that hold only a tokenizer (``models/ggml-vocab-*.gguf``)
with test strings and the ids Hugging Face ``tokenizers`` gives for them
(``*.gguf.inp`` / ``*.gguf.out``).  No wheel carries them; the source release of
``llama-cpp-python`` 0.3.36 on PyPI does (76.6 MB, ``vendor/llama.cpp/models/``).
This module, run once by the README's set-up command::

    python -m bpe_core.production.install

finds the archive on the package index (the PEP 691 JSON page of
``llama-cpp-python``, as ``pip`` reads it), downloads it, checks its sha256
against :data:`ARCHIVE_SHA256`, extracts only the files of :data:`FILES` into
:func:`cache_dir` and checks each one's sha256.  Nothing is built, and nothing is
fetched at run time: the app only reads the cache folder
(:func:`gguf_path`), and a missing file is one line on the page
(:class:`~bpe_core.production.encodings.EncodingUnavailable`).

Already-verified files are not fetched again, so the command is cheap after the
first run.  ``--archive PATH`` extracts from an archive downloaded elsewhere
(verified the same way), for machines without the index.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

DISTRIBUTION = "llama-cpp-python"
"""The PyPI project whose source release ships the files."""

VERSION = "0.3.36"
"""The release read (its ``vendor/llama.cpp`` is llama.cpp as of that release)."""

ARCHIVE = f"llama_cpp_python-{VERSION}.tar.gz"
"""The source release's file name on PyPI."""

ARCHIVE_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
"""sha256 of :data:`ARCHIVE` (76,589,250 bytes), as PyPI lists it."""

MEMBER_DIR = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/models/"
"""Where the files are inside the archive."""

CACHE_ENV = "BPE_PLAYGROUND_CACHE"
"""Environment variable naming the cache folder (default ``~/.cache/bpe-playground``)."""

INDEX_ENV = "PIP_INDEX_URL"
"""The package index to ask (``pip``'s own variable; default :data:`DEFAULT_INDEX`)."""

DEFAULT_INDEX = "https://pypi.org/simple"

FILES: dict[str, str] = {
    "ggml-vocab-bert-bge.gguf": "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854",
    "ggml-vocab-bert-bge.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-bert-bge.gguf.out": "8f95b1d4e5680634af06ac5a1b19f15ddeb743d3a6240056625e4345a4b06917",
    "ggml-vocab-command-r.gguf": "a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9",
    "ggml-vocab-command-r.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-command-r.gguf.out": "d2a601336e422b60a264858c01b14c5d37575fe1f9adfcafc2f3b3707903903f",
    "ggml-vocab-deepseek-coder.gguf": "91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1",
    "ggml-vocab-deepseek-coder.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-deepseek-coder.gguf.out": "c2cea4584b0487e67fbd81f491bb44f89238722062126120d2c412edb3dbd853",
    "ggml-vocab-deepseek-llm.gguf": "867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76",
    "ggml-vocab-deepseek-llm.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-deepseek-llm.gguf.out": "87cfc1a8a9a7ef25d04d28c26a67b6a620af7be938c9bd0feeb4d319b9302832",
    "ggml-vocab-falcon.gguf": "9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad",
    "ggml-vocab-falcon.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-falcon.gguf.out": "f8c80a0483582ef195c2129b69bb2e4e421b0f31ed7b35d84b63511d7ebae7cd",
    "ggml-vocab-gemma-4.gguf": "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65",
    "ggml-vocab-gemma-4.gguf.inp": "0528aa007b06965f980181d252b5dff7bb170a77af6157bd48bba56885374448",
    "ggml-vocab-gemma-4.gguf.out": "ba8c596bcd05e97e62566fa994b42eeaeffd6a4e4b4a4abe7b5b689aa6b43bf3",
    "ggml-vocab-gpt-2.gguf": "cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac",
    "ggml-vocab-gpt-2.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-gpt-2.gguf.out": "48e8c4cb3ad5c37915b225f872222567c1c4dd4d66951aa53460c8d152ff6d60",
    "ggml-vocab-llama-bpe.gguf": "97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e",
    "ggml-vocab-llama-bpe.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-llama-bpe.gguf.out": "118abf2034a197fc5c9dec5204dfdeee7004c7c70952ae577f66b99e212fab9b",
    "ggml-vocab-mpt.gguf": "59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f",
    "ggml-vocab-mpt.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-mpt.gguf.out": "9d0982a7e7950b81bc2e325fb61bb7e295d2238934ab889737494de2dc4d906b",
    "ggml-vocab-nomic-bert-moe.gguf": "90a6746926454784a98389ad36a36d89bc9cfc81db9cb0f33c941bcc959fe5f9",
    "ggml-vocab-qwen2.gguf": "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c",
    "ggml-vocab-qwen2.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-qwen2.gguf.out": "de785bb305cc6fa9d43908ed5da337f853c0b79e971348fcfb9f0915a39c5363",
    "ggml-vocab-qwen35.gguf": "63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c",
    "ggml-vocab-qwen35.gguf.inp": "0fc6547e7876cd5b2ef64a9d319c6e39040eb53986660bd4227ed7ddef017a94",
    "ggml-vocab-qwen35.gguf.out": "5efe225820325303857d0a087a8d59216f0d1e9a9e31133e7a5b44c3c4e1e9ca",
    "ggml-vocab-refact.gguf": "ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678",
    "ggml-vocab-refact.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-refact.gguf.out": "c7e5c1c5dc1dfd3e0d56576bf699d2aca0b760b80779523ea9d323aad6cd1b88",
    "ggml-vocab-starcoder.gguf": "fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d",
    "ggml-vocab-starcoder.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-starcoder.gguf.out": "3ef12183c57ad076f9defd8e5eb454f509f5f0865cad35646abb4c4b2d2c5764",
}
"""File name -> sha256 of every file extracted (the vocabularies the registry uses, and their test cases)."""

SET_UP_COMMAND = "python -m bpe_core.production.install"
"""What to run (in the project's environment) to get the files: named in every 'not available' message."""


def cache_dir() -> Path:
    """The folder holding the extracted files: ``$BPE_PLAYGROUND_CACHE/llama-cpp-python-0.3.36``.

    ``BPE_PLAYGROUND_CACHE`` defaults to ``$XDG_CACHE_HOME/bpe-playground``, else
    ``~/.cache/bpe-playground``.  Nothing is created here.
    """
    root = os.environ.get(CACHE_ENV)
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = str(Path(base) / "bpe-playground")
    return Path(root) / f"{DISTRIBUTION}-{VERSION}"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verified(name: str) -> Path | None:
    """The cached file ``name`` if it is there and has its recorded sha256, else ``None``.

    Raises:
        ValueError: ``name`` is not one of :data:`FILES`.
    """
    if name not in FILES:
        raise ValueError(f"{name!r} is not a file of {ARCHIVE}; known: {', '.join(FILES)}")
    path = cache_dir() / name
    if path.is_file() and sha256_of(path) == FILES[name]:
        return path
    return None


def missing() -> list[str]:
    """The files of :data:`FILES` not (or not correctly) in the cache, in :data:`FILES` order."""
    return [name for name in FILES if verified(name) is None]


def archive_url(index: str | None = None) -> tuple[str, str]:
    """``(url, sha256)`` of :data:`ARCHIVE` from the index's PEP 691 JSON page of the project.

    Raises:
        OSError: the index cannot be reached.
        ValueError: the page does not list the archive, or lists another sha256 than :data:`ARCHIVE_SHA256`.
    """
    base = (index or os.environ.get(INDEX_ENV) or DEFAULT_INDEX).rstrip("/")
    req = urllib.request.Request(f"{base}/{DISTRIBUTION}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        page = json.load(resp)
    for entry in page.get("files", []):
        if entry.get("filename") == ARCHIVE:
            sha = entry.get("hashes", {}).get("sha256", "")
            if sha != ARCHIVE_SHA256:
                raise ValueError(f"the index lists {ARCHIVE} with sha256 {sha!r}, not {ARCHIVE_SHA256}")
            return entry["url"], sha
    raise ValueError(f"{base}/{DISTRIBUTION}/ does not list {ARCHIVE}")


def download(dest: Path, index: str | None = None) -> Path:
    """Download :data:`ARCHIVE` into the folder ``dest`` and check its sha256.

    Raises:
        OSError: the download failed.
        ValueError: wrong sha256 (the file is deleted).
    """
    url, _ = archive_url(index)
    path = dest / ARCHIVE
    h = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=600) as resp, open(path, "wb") as out:
        for block in iter(lambda: resp.read(1 << 20), b""):
            h.update(block)
            out.write(block)
    if h.hexdigest() != ARCHIVE_SHA256:
        path.unlink()
        raise ValueError(f"downloaded {ARCHIVE} has sha256 {h.hexdigest()}, not {ARCHIVE_SHA256}")
    return path


def extract(archive: Path, names: list[str] | None = None) -> list[Path]:
    """Extract ``names`` (default: every missing file) from ``archive`` into :func:`cache_dir`, each verified.

    The archive's own sha256 is checked first.  Each file is written under a
    temporary name and renamed only once its sha256 matches.

    Raises:
        ValueError: the archive or a file has the wrong sha256, or a file is not in the archive.
    """
    if sha256_of(archive) != ARCHIVE_SHA256:
        raise ValueError(f"{archive} is not {ARCHIVE}: its sha256 differs from {ARCHIVE_SHA256}")
    wanted = set(missing() if names is None else names)
    out_dir = cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            name = member.name.removeprefix(MEMBER_DIR)
            if name not in wanted or not member.isfile() or member.name == name:
                continue
            data = tar.extractfile(member).read()
            digest = hashlib.sha256(data).hexdigest()
            if digest != FILES[name]:
                raise ValueError(f"{member.name} in {ARCHIVE} has sha256 {digest}, not {FILES[name]}")
            tmp = out_dir / f".{name}.part"
            tmp.write_bytes(data)
            tmp.replace(out_dir / name)
            written.append(out_dir / name)
            wanted.discard(name)
    if wanted:
        raise ValueError(f"{ARCHIVE} has no {', '.join(sorted(wanted))} under {MEMBER_DIR}")
    return written


def install(archive: Path | None = None, index: str | None = None, log=print) -> int:
    """Make every file of :data:`FILES` present and verified in :func:`cache_dir`; returns how many were written.

    Does nothing (no network) when all are already there.  ``archive``: use this
    copy of :data:`ARCHIVE` instead of downloading it.

    Raises:
        OSError, ValueError: as :func:`download` and :func:`extract`.
    """
    todo = missing()
    if not todo:
        log(f"{len(FILES)} llama.cpp vocabulary files already in {cache_dir()} (sha256 verified)")
        return 0
    if archive is not None:
        written = extract(Path(archive), todo)
    else:
        with tempfile.TemporaryDirectory(prefix="bpe-playground-") as tmp:
            log(f"downloading {ARCHIVE} (76.6 MB) from the package index to extract {len(todo)} files ...")
            written = extract(download(Path(tmp), index), todo)
    log(f"{len(written)} files written to {cache_dir()} (sha256 verified)")
    return len(written)


def main(argv: list[str] | None = None) -> int:
    """The command line: ``python -m bpe_core.production.install [--archive PATH] [--index URL] [--check]``."""
    parser = argparse.ArgumentParser(prog="python -m bpe_core.production.install", description=__doc__.split("\n")[0])
    parser.add_argument("--archive", type=Path, help=f"a downloaded {ARCHIVE} to extract from (no network)")
    parser.add_argument("--index", help=f"package index URL (default ${INDEX_ENV} or {DEFAULT_INDEX})")
    parser.add_argument("--check", action="store_true", help="only report which files are missing (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        todo = missing()
        for name in todo:
            print(f"missing: {cache_dir() / name}")
        return 1 if todo else 0
    try:
        install(args.archive, args.index)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
