"""tiktoken's own registry, offline: the verified ranks files placed in a tiktoken cache directory.

``tiktoken.get_encoding`` looks for ``TIKTOKEN_CACHE_DIR/<sha1 of the download URL>`` before
downloading, and checks the file's sha256 itself.  With the verified copies placed there,
``tiktoken.get_encoding("r50k_base")`` (and cl100k_base, o200k_base) works without network and
gives an encoding built entirely by tiktoken -- its own pattern, special tokens and loader --
an independent reference for this project's loader and encoders.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest
import tiktoken

from tests.conftest import SHARED_ENCODINGS

URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
OFFICIAL = ("r50k_base", "cl100k_base", "o200k_base")


@pytest.fixture(scope="session")
def tiktoken_official(tmp_path_factory):
    """A function ``name -> tiktoken.Encoding`` from tiktoken's own registry (names as tiktoken spells them)."""
    if not SHARED_ENCODINGS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but there are no verified encodings in {SHARED_ENCODINGS}")
        pytest.skip(f"no verified encodings in {SHARED_ENCODINGS}")
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in OFFICIAL:
        key = hashlib.sha1(URL.format(name).encode()).hexdigest()
        shutil.copy(SHARED_ENCODINGS / f"{name}.tiktoken", cache / key)
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    # loaded now, kept by tiktoken; o200k_harmony (gpt-oss) is o200k_base's file with its own special tokens
    encodings = {name: tiktoken.get_encoding(name) for name in (*OFFICIAL, "o200k_harmony")}
    if before is None:
        del os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = before
    return encodings.__getitem__
