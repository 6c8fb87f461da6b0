"""Real-browser fixtures: `streamlit run app.py` on a free port (one server per test module), driven by
Debian's Chromium via Playwright (one browser per session).

Every test in this folder is marked ``browser`` (``pytest -m "not browser"`` leaves them out).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from tests.browser.helpers import CHROMIUM_ARGS, ROOT, chromium_path, wait_idle


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """Start `streamlit run app.py` on a free port; yield its base URL; stop it afterwards.

    The server's output goes to a file, never to a pipe nobody reads: a full pipe blocks the thread
    that logs, and with it the server (seen: watchdog's inotify queue overflowed while the suite
    wrote files under the project folder, and its warnings filled the pipe).  No file watcher
    either: tests never edit the sources.  No background warm-up (``ui.warmup``: a minute of loading
    every production tokenizer and building their Compare columns while the module's first tests run, in
    every module's server); ``tests/app/test_serving.py`` tests the warm-up itself.
    """
    port = _free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", BPE_PLAYGROUND_WARMUP="0")
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port)]
    cmd += ["--server.headless", "true", "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError("streamlit exited early:\n" + log.read().decode(errors="replace"))
        else:
            proc.kill()
            raise RuntimeError("streamlit did not become healthy within 60 s")
        yield url
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (system binary) driven by Playwright."""
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """A fresh browser page (1400x1000) on the app's landing page, tokens drawn.

    Opened from a link with ``?size=100000`` (clamped: the tokenizer's full size), as the tests look at
    the full tokenizer; a plain first visit opens at :data:`ui.links.FIRST_VIEW_SIZE`.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.goto(server + "/?size=100000")
    pg.wait_for_selector(".bpe-view .tk", timeout=60_000)
    wait_idle(pg)
    yield pg
    context.close()
