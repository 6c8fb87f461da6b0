"""The installable package: what ``pyproject.toml`` declares must exist and import.

(``pip install .`` and ``pip install -e .`` themselves are exercised by hand in a
throwaway virtual environment; see the commit that added the build system.)
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import bpe_playground

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_a_build_system_is_declared():
    build = PYPROJECT["build-system"]
    assert build["build-backend"] == "setuptools.build_meta"
    assert any(r.startswith("setuptools") for r in build["requires"])


def test_console_scripts_point_at_importable_callables():
    scripts = PYPROJECT["project"]["scripts"]
    assert set(scripts) == {"bpe-playground", "bpe-core"}
    for target in scripts.values():
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), target
    assert scripts["bpe-core"] == "bpe_core.__main__:main"  # the same commands as python -m bpe_core


def test_every_package_of_the_checkout_is_declared():
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]

    def declared(name: str) -> bool:
        return any(name == p or (p.endswith(".*") and name.startswith(p[:-1])) for p in include)

    engine = [".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bpe_core").rglob("__init__.py")]
    assert "bpe_core.bpe" in engine and "bpe_core.wordpiece" in engine
    for name in [*engine, "ui", "app_pages", "samples"]:
        assert declared(name), name
    for module in PYPROJECT["tool"]["setuptools"]["py-modules"]:
        assert (ROOT / f"{module}.py").is_file(), module


def test_package_data_is_there():
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    assert (ROOT / "bpe_core" / "py.typed").is_file() and "py.typed" in data["bpe_core"]
    assert sorted(p.name for p in (ROOT / "samples").glob(data["samples"][0])) == [
        "english.txt", "multilingual.txt", "numbers.txt", "python.txt",
    ]  # fmt: skip


def test_the_app_launcher_runs_streamlit_on_the_app_beside_it():
    cmd = bpe_playground.command(["--server.port", "8600"])
    assert cmd[1:4] == ["-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "app.py" and Path(cmd[4]).is_file()
    assert cmd[5:] == ["--server.port", "8600"]


def test_runtime_dependencies_cover_requirements_txt():
    declared = {d.split(">")[0].split("=")[0].strip().lower() for d in PYPROJECT["project"]["dependencies"]}
    pinned = {
        line.split("==")[0].strip().lower()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert declared == pinned
