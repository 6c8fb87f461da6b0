"""What the browser benchmarks share: Debian's Chromium flags and a Streamlit server on a free port.

``bench_app.py``, ``bench_class.py``, ``bench_live.py`` and ``bench_compare_live.py`` start the app with
:func:`start_server` and Chromium with :data:`CHROMIUM_ARGS` (the flags the browser tests use too:
``tests/browser/helpers.py``).  Never ``playwright install``: the browser is ``/usr/bin/chromium``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = "/usr/bin/chromium"
"""Debian's Chromium (``apt-get install chromium``)."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
"""Chromium's flags for a headless run that asks nothing of the network."""

SERVER_ARGS = ["--server.headless", "true", "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
"""``streamlit run`` options: no browser opened, local only, no file watcher."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    log=subprocess.DEVNULL, env: dict | None = None, command: list[str] | None = None, limit: float = 150.0
) -> tuple[subprocess.Popen, str]:
    """Start the app on a free port and wait until its health check answers.

    Args:
        log: where the server's output goes (a file; never a pipe nobody reads).
        env: extra environment variables for the server.
        command: the command before the port and :data:`SERVER_ARGS` (default ``streamlit run app.py``);
            it must accept ``--server.port``.
        limit: seconds to wait for the health check.

    Returns:
        ``(process, base URL)``.

    Raises:
        SystemExit: the server exited early or did not answer within ``limit``.
    """
    port = free_port()
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **(env or {}))
    command = command or [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")]
    proc = subprocess.Popen(
        [*command, "--server.port", str(port), *SERVER_ARGS], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the server exited early") from None
            time.sleep(0.25)
    proc.kill()
    raise SystemExit("the server did not start")
