"""The ``bpe-playground`` command: start the app (``streamlit run`` on the installed ``app.py``).

Installed by ``pip install .`` next to ``app.py``, ``app_pages/``, ``ui/``,
``samples/`` and ``bpe_core/``; from a checkout it runs the checkout's app.
Extra arguments go to ``streamlit run`` (``bpe-playground --server.port 8600``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"
"""The Streamlit entry point this command runs."""


def command(argv: Sequence[str] = ()) -> list[str]:
    """The ``streamlit run`` command line for the installed app, with ``argv`` appended."""
    return [sys.executable, "-m", "streamlit", "run", str(APP), *argv]


def main(argv: Sequence[str] | None = None) -> int:
    """Replace this process with ``streamlit run app.py`` (so signals reach Streamlit directly).

    Raises:
        FileNotFoundError: ``app.py`` is not installed beside this module.
    """
    if not APP.is_file():
        raise FileNotFoundError(f"{APP} is missing: reinstall bpe-playground")
    cmd = command(sys.argv[1:] if argv is None else argv)
    os.execv(cmd[0], cmd)
    return 1  # not reached: execv does not return


if __name__ == "__main__":
    sys.exit(main())
