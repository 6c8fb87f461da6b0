"""The shape of the code, computed from its source with ``ast`` (nothing is imported or run).

* ``bpe_core`` never imports Streamlit (it is the engine; ``ui/`` draws);
* no import cycle inside ``bpe_core`` -- function-level imports count, since
  they tie the modules as much as module-level ones;
* no private name (``_x``) imported from another module of ``bpe_core``;
* every module of ``bpe_core`` is reachable from ``bpe_core/__init__.py``'s
  components, and the names ``ui/`` takes from moved modules are exported by
  ``bpe_core`` itself;
* one place per algorithm: no table keyed by an algorithm's name and no switch on one
  outside the algorithm's own package (:func:`name_tables`), and no ``isinstance`` on a
  concrete tokenizer class outside its package except an argument check that raises
  ``TypeError`` (:func:`class_switches`).  ``tests/app/test_ui_architecture.py`` applies
  both to ``ui/`` and ``app_pages/``.

:func:`import_graph` and :func:`cycles` work for any package of the
repository (``ui`` included).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    """``bpe_core/bpe/model.py`` -> ``bpe_core.bpe.model``; ``__init__.py`` names its package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_of(package: str) -> dict[str, Path]:
    """``{module name: path}`` of every ``.py`` file under ``package``."""
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> list[tuple[str, list[str], int]]:
    """Every import in a file, at any depth: ``(target module, names taken, line)``.

    Relative imports are resolved against the file's package; ``from X import y``
    targets the module ``X.y`` when that is a known module, else ``X``.
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend((alias.name, [], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names = [a.name for a in node.names]
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
            if submodules:
                out.extend((m, [], node.lineno) for m in submodules)
                rest = [n for n in names if f"{base}.{n}" not in known]
                if rest:
                    out.append((base, rest, node.lineno))
            else:
                out.append((base, names, node.lineno))
    return out


def import_graph(package: str) -> dict[str, set[str]]:
    """``{module: modules of the same package it imports}`` (module- and function-level alike)."""
    mods = modules_of(package)
    known = set(mods)
    return {m: {t for t, _n, _l in imports_of(p, known) if t in known and t != m} for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_reader_sees_function_level_and_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from ..b import g\n    return g\n")
    (pkg / "b.py").write_text("from .sub import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph("pkg")
    assert graph["pkg.sub.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.a"}
    assert cycles(graph) == [["pkg.b", "pkg.sub.a"]]


def test_bpe_core_imports_no_streamlit():
    mods = modules_of("bpe_core")
    bad = [
        f"{m}:{line}"
        for m, p in mods.items()
        for target, _names, line in imports_of(p, set(mods))
        if target.split(".")[0] == "streamlit"
    ]
    assert bad == []


def test_bpe_core_has_no_import_cycle():
    graph = import_graph("bpe_core")
    assert len(graph) >= 25  # the reader saw the whole package
    assert cycles(graph) == []


def test_bpe_core_imports_no_private_name_across_modules():
    mods = modules_of("bpe_core")
    bad = [
        f"{m}:{line} takes {n} from {target}"
        for m, p in mods.items()
        for target, names, line in imports_of(p, set(mods))
        if target.split(".")[0] == "bpe_core" and target != m
        for n in names
        if n.startswith("_") and not n.startswith("__")
    ]
    assert bad == []


def test_bpe_core_submodules_import_no_package_init():
    """Inside the engine a module imports the module that defines a name, never ``bpe_core`` itself."""
    mods = modules_of("bpe_core")
    bad = [
        f"{m}:{line}"
        for m, p in mods.items()
        if m != "bpe_core"
        for target, _names, line in imports_of(p, set(mods))
        if target == "bpe_core"
    ]
    assert bad == []


@pytest.mark.parametrize(
    "name",
    [
        "WordPieceTokenizer", "train_wordpiece", "DEFAULT_SPECIAL_TOKENS", "CandidateRanking", "TrainingReplay",
        "PieceSteps", "encode_steps", "ScoreRanking", "TrainerView", "WordPieceReplay", "GreedyStep",
        "MAX_UPLOAD_BYTES", "decode_text_upload", "load_tokenizer_bytes", "bpe_to_hf_json", "bpe_to_tiktoken_files",
        "wordpiece_to_hf_json", "wordpiece_to_vocab_txt", "ProgressCallback", "TrainingInfo",
    ],
)  # fmt: skip
def test_bpe_core_exports_what_ui_takes_from_moved_modules(name):
    import bpe_core

    assert name in bpe_core.__all__
    assert getattr(bpe_core, name) is not None


def test_each_component_registers_its_algorithm_in_its_package():
    """``register_algorithm`` is called in an algorithm package's ``__init__``, once each, nowhere else."""
    calls = []
    for m, p in modules_of("bpe_core").items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register_algorithm":
                calls.append((m, p.name))
    assert {"bpe_core.bpe", "bpe_core.wordpiece"} <= {m for m, _f in calls}
    assert all(f == "__init__.py" for _m, f in calls)
    assert len(calls) == len({m for m, _f in calls})


FAST_PACKAGES = ("bpe_core.bpe", "bpe_core.wordpiece", "bpe_core.unigram", "bpe_core.counting")


def test_the_textbook_and_the_fast_packages_do_not_import_each_other():
    """The textbook is the oracle: it uses none of the machinery it checks, and the engine does not run on it."""
    graph = import_graph("bpe_core")
    textbook = {m for m in graph if m.startswith("bpe_core.textbook")}
    assert textbook >= {"bpe_core.textbook.bpe", "bpe_core.textbook.wordpiece", "bpe_core.textbook.unigram"}
    bad = [f"{m} -> {t}" for m in textbook for t in graph[m] if t.startswith(FAST_PACKAGES)]
    bad += [f"{m} -> {t}" for m in graph if m.startswith(FAST_PACKAGES) for t in graph[m] if t in textbook]
    assert bad == []


# fast path (module, or module:function) -> the textbook function its docstring must name
FAST_PATHS = {
    "bpe_core.bpe": "bpe_core.textbook.bpe",
    "bpe_core.wordpiece": "bpe_core.textbook.wordpiece",
    "bpe_core.unigram": "bpe_core.textbook.unigram_training",
    "bpe_core.bpe.trainer": "bpe_core.textbook.bpe.train_merges",
    "bpe_core.bpe.merge_kernel": "bpe_core.textbook.bpe.train_merges",
    "bpe_core.bpe.encoder": "bpe_core.textbook.bpe.encode_word",
    "bpe_core.bpe.ranks": "bpe_core.textbook.ranks.tiktoken_parts",
    "bpe_core.wordpiece.trainer": "bpe_core.textbook.wordpiece.train",
    "bpe_core.wordpiece.encoder": "bpe_core.textbook.wordpiece.encode_word",
    "bpe_core.unigram.encoder:viterbi": "bpe_core.textbook.unigram.viterbi",
    "bpe_core.unigram.trainer": "bpe_core.textbook.unigram_training",
}


@pytest.mark.parametrize("fast", list(FAST_PATHS))
def test_each_fast_path_names_the_textbook_function_it_must_equal(fast):
    import importlib

    module_name, _, function = fast.partition(":")
    module = importlib.import_module(module_name)
    doc = (getattr(module, function) if function else module).__doc__
    target = FAST_PATHS[fast]
    assert target in doc
    owner, _, name = target.rpartition(".")
    assert hasattr(importlib.import_module(owner), name) or importlib.import_module(target)


# ---------------------------------------------------------------------------
# one place per algorithm


def registered_names() -> set[str]:
    """The algorithm names registered in ``bpe_core`` (the ``name=`` of every ``Algorithm(...)`` call)."""
    names = set()
    for p in modules_of("bpe_core").values():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Algorithm":
                names.update(
                    k.value.value for k in node.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)
                )
    return names


def _owner(path: Path, name: str) -> bool:
    """Whether ``path`` is the algorithm ``name``'s own place: ``bpe_core/<name>/`` or ``ui/algorithms/<name>.py``."""
    rel = path.relative_to(ROOT).as_posix()
    return rel.startswith(f"bpe_core/{name}/") or rel == f"ui/algorithms/{name}.py"


def name_tables(path: Path, names: set[str]) -> list[str]:
    """Where ``path`` keys a table on an algorithm's name or switches on one, outside that algorithm's own place.

    Flagged: an algorithm's name (a string constant) as a dict key, inside a tuple/list/set literal, or on
    either side of ``==``, ``!=``, ``in``, ``not in``.  A name as a default value (``algorithm="bpe"``) is not.
    """
    found = []

    def flag(node: ast.AST, context: str) -> None:
        if isinstance(node, ast.Constant) and node.value in names and not _owner(path, node.value):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r} {context}")

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for k in node.keys:
                flag(k, "keys a dict")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for e in node.elts:
                flag(e, "in a collection of names")
        elif isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                flag(side, "compared")
    return found


def test_name_table_detector_sees_each_form(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    probe = tmp_path / "probe.py"
    probe.write_text(
        'A = {"bpe": 1, "other": 2}\n'
        'B = ("wordpiece", "unigram")\n'
        'if algorithm == "bpe": pass\n'
        'C = get(algorithm, "bpe")\n'
        'def f(algorithm="bpe"): pass\n'
    )
    assert [f.split(":")[1] for f in name_tables(probe, {"bpe", "wordpiece", "unigram"})] == ["1", "2", "2", "3"]


def test_no_table_keyed_by_an_algorithm_name_outside_its_own_place():
    """Everything per algorithm hangs off its registration (``bpe_core/<name>/``, ``ui/algorithms/<name>.py``)."""
    names = registered_names()
    assert {"bpe", "wordpiece", "unigram"} <= names
    sources = sorted((ROOT / "bpe_core").rglob("*.py"))  # ui/ and app_pages/: tests/app/test_ui_architecture.py
    assert [f for p in sources for f in name_tables(p, names)] == []


def classes_by_package() -> dict[str, str]:
    """``{concrete tokenizer class: the package directory that defines it}`` (``BPETokenizer`` -> ``bpe_core/bpe``)."""
    out = {}
    for p in modules_of("bpe_core").values():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            protocol = isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "Protocol" for b in node.bases)
            if isinstance(node, ast.ClassDef) and node.name.endswith("Tokenizer") and not protocol:
                out[node.name] = p.parent.relative_to(ROOT).as_posix()
    return out


def _is_guard(node: ast.If) -> bool:
    """``if not isinstance(...): raise TypeError(...)``: checking an argument, not choosing what to do."""
    raises = len(node.body) == 1 and isinstance(node.body[0], ast.Raise) and not node.orelse
    exc = node.body[0].exc if raises else None
    return raises and isinstance(exc, ast.Call) and getattr(exc.func, "id", None) == "TypeError"


def class_switches(path: Path, classes: dict[str, str]) -> list[str]:
    """``isinstance`` on a concrete tokenizer class outside the package that defines it, other than a guard."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guards = {
        id(n.test.operand)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and isinstance(n.test, ast.UnaryOp) and isinstance(n.test.op, ast.Not) and _is_guard(n)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)} & set(classes)
            home = {classes[c] for c in named}
            if (
                named
                and id(node) not in guards
                and not all(path.parent.relative_to(ROOT).as_posix().startswith(h) for h in home)
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: isinstance on {', '.join(sorted(named))}")
    return found


def test_class_switch_detector_sees_a_switch_and_passes_a_guard(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "pkg").mkdir()
    probe = tmp_path / "pkg" / "probe.py"
    probe.write_text(
        "if isinstance(tok, BPETokenizer): pass\n"
        "if not isinstance(tok, BPETokenizer):\n    raise TypeError('a BPETokenizer')\n"
        "x = 1 if isinstance(tok, (BPETokenizer, WordPieceTokenizer)) else 2\n"
    )
    classes = {"BPETokenizer": "elsewhere/bpe", "WordPieceTokenizer": "elsewhere/wordpiece"}
    assert [f.split(":")[1] for f in class_switches(probe, classes)] == ["1", "4"]


def test_no_isinstance_switch_on_a_tokenizer_class():
    """What differs per tokenizer is a method or its algorithm's registration; ``isinstance`` only checks arguments."""
    classes = classes_by_package()
    assert {"BPETokenizer", "WordPieceTokenizer", "UnigramTokenizer"} <= set(classes)
    assert [f for p in sorted((ROOT / "bpe_core").rglob("*.py")) for f in class_switches(p, classes)] == []


def test_counting_and_the_interface_import_no_algorithm():
    """Counting (and the interface it reads registrations from) sits below the algorithms: what it does per
    algorithm comes through the registration, never by importing an algorithm package."""
    mods = modules_of("bpe_core")
    below = [
        m for m in mods if m.startswith(("bpe_core.counting", "bpe_core.pretokenize")) or m == "bpe_core.interface"
    ]
    algorithms = ("bpe_core.bpe", "bpe_core.wordpiece", "bpe_core.unigram")
    bad = [
        f"{m}:{line} imports {target}"
        for m in below
        for target, _names, line in imports_of(mods[m], set(mods))
        if target.startswith(algorithms)
    ]
    assert len(below) > 5 and bad == []


# ---------------------------------------------------------------------------
# short functions


MAX_LINES = 100
MAX_COMPLEXITY = 25


def long_or_complex_functions(package: str = "bpe_core") -> list[str]:
    """Engine functions over :data:`MAX_LINES` lines or above :data:`MAX_COMPLEXITY` (lizard's cyclomatic number).

    The compiled kernels (the modules of :data:`bpe_core.counting.native.KERNEL_MODULES`) are left out: numba
    compiles them whole, and splitting their hot loops costs time (measured: the BPE merge kernel split into
    helpers ran 0.74-0.97 CPU-s against 0.51-0.73 whole on the 20 MB table).
    """
    import lizard

    from bpe_core.counting.native import KERNEL_MODULES

    kernels = {str(ROOT / (m.replace(".", "/") + ".py")) for m in KERNEL_MODULES}
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if str(path) in kernels:
            continue
        for fn in lizard.analyze_file(str(path)).function_list:
            if fn.length > MAX_LINES or fn.cyclomatic_complexity > MAX_COMPLEXITY:
                rel = path.relative_to(ROOT)
                found.append(
                    f"{rel}:{fn.start_line} {fn.name}: {fn.length} lines, complexity {fn.cyclomatic_complexity}"
                )
    return found


def test_the_length_and_complexity_reader_sees_a_long_branchy_function(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "pkg").mkdir()
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(30))
    (tmp_path / "pkg" / "m.py").write_text(f"def f(x):\n{branches}    return -1\n\n\ndef g():\n    return 1\n")
    found = long_or_complex_functions("pkg")
    assert len(found) == 1 and found[0].startswith("pkg/m.py:1 f:") and "complexity 31" in found[0]


def test_engine_functions_are_short_outside_the_compiled_kernels():
    assert long_or_complex_functions() == []
