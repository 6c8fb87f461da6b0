"""Helpers of the real-browser tests: Chromium's path and flags, waiting for a script run, shadow-root queries,
screenshots.

Chromium is launched from its system path (never `playwright install`, which downloads).
Outside CI the browser tests skip, saying why, when no Chromium is installed; in CI
(environment variable ``CI`` set, as `.ci/run` does) a missing Chromium is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def evaluate_json(pg, js: str, arg=None):
    """``pg.evaluate(js, arg)`` for a large result: the page sends it as one JSON string, Python parses it.

    Playwright's own value protocol unpacks each number and string as a tagged object in Python; for the
    millions of values of a slider pass over every size that took minutes (165 s -> 30 s for the BPE pass).
    """
    return json.loads(pg.evaluate(f"(arg) => JSON.stringify(({js})(arg))", arg))


def screenshot(pg, name: str) -> Path:
    """Save a screenshot under the git-ignored ``artifacts/`` folder and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path
