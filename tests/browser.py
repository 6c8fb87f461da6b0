"""Real-browser fixtures: `streamlit run app.py` on a free port, driven by Debian's Chromium via Playwright.

Chromium is launched from its system path (never `playwright install`, which downloads).
Outside CI the browser tests skip, saying why, when no Chromium is installed; in CI
(environment variable ``CI`` set, as `.ci/run` does) a missing Chromium is a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """Path of the system Chromium, or skip/fail as the module docstring says."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("CI is set but no Chromium is installed: `apt-get install chromium` (the .ci/run script does)")
    pytest.skip("no Chromium on this machine (apt-get install chromium); the browser tests run in CI")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    """Start `streamlit run app.py` on a free port; yield its base URL; stop it afterwards.

    The server's output goes to a file, never to a pipe nobody reads: a full pipe blocks the thread
    that logs, and with it the server (seen: watchdog's inotify queue overflowed while the suite
    wrote files under the project folder, and its warnings filled the pipe).  No file watcher
    either: tests never edit the sources.
    """
    port = _free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
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


def wait_idle(pg, timeout_ms: int = 60_000) -> None:
    """Wait until the app's script run has finished (Streamlit marks ``stApp`` with its script state)."""
    pg.wait_for_function(
        """() => { const app = document.querySelector('[data-testid="stApp"]');
                   return app && app.getAttribute('data-test-script-state') === 'notRunning'; }""",
        timeout=timeout_ms,
    )


DEEP_PRELUDE = """
const deepAll = (sel, scope) => {
  const out = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.matches(sel)) out.push(e);
      if (e.shadowRoot) walk(e.shadowRoot);
    }
  };
  walk(scope || document);
  return out;
};
const deepOne = (sel, scope) => deepAll(sel, scope)[0] || null;
const deepText = (scope) => {
  // innerText (which leaves shadow roots out), then each shadow root's text, in its host's document order
  const root = scope || document.body;
  const parts = [root.innerText];
  for (const host of deepAll('*', root)) if (host.shadowRoot)
    for (const c of host.shadowRoot.children) if (c.innerText !== undefined) parts.push(c.innerText);
  return parts.join('\\n');
};
"""


def deep(js: str) -> str:
    """``js`` (a JavaScript function expression) with ``deepAll(sel, scope?)`` and ``deepOne(sel, scope?)`` in scope.

    They are ``querySelectorAll`` / ``querySelector`` that also look inside open shadow roots, in document
    order (a shadow root's elements at its host's place): the live view (``ui/live_view``) draws in one
    (``isolate_styles=True``), where ``document.querySelectorAll`` does not reach.  A selector matches within one
    tree (``'.bpe-view .tk'`` inside the component; ``scope`` for an ancestor outside it, such as ``stMain``).
    ``deepText(scope?)``: ``scope.innerText`` (``document.body`` by default) followed by the text of each open
    shadow root inside it.  Playwright's CSS and text locators pierce open shadow roots by themselves.
    Use with ``evaluate`` or ``wait_for_function``: ``pg.evaluate(deep("() => deepAll('.bpe-view .tk').length"))``.
    """
    return f"(...args) => {{ {DEEP_PRELUDE} return ({js})(...args); }}"


def screenshot(pg, name: str) -> Path:
    """Save a screenshot under the git-ignored ``artifacts/`` folder and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path
