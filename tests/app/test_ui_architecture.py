"""The shape of ``ui/`` and ``app_pages/``, computed from the source with ``ast``.

* no import cycle among the ``ui`` modules (imports at module level and inside functions);
* kind switches -- ``isinstance`` on a tokenizer class, ``.algorithm ==`` / ``!=``,
  ``getattr``/``hasattr`` probes on a tokenizer -- stay at the handful left, each
  marked with a ``# kind switch:`` comment saying why the page shows different things;
* one place per algorithm: each algorithm's screen side is ``ui/algorithms/<name>.py``, which
  registers its :class:`ui.algorithms.AlgorithmView`; no other module keeps a table keyed by an
  algorithm's name or compares with one (the engine's detectors, ``tests/engine/test_architecture.py``);
* session-state keys are the constants of :mod:`ui.state_keys`, never string literals.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"])

MAX_KIND_SWITCHES = 1
"""ui/catalogue.py's is_sidebars: which column is the sidebar's own tokenizer."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def ui_imports(path: Path) -> set[str]:
    """The ``ui`` modules ``path`` imports anywhere in it (``from ui import x``: ``ui.x`` when that is a module)."""
    modules = {module_name(p) for p in SOURCES}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ui"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ui":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in modules else node.module)
    return {m for m in out if m in modules}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_in_ui():
    graph = {module_name(p): ui_imports(p) for p in SOURCES if module_name(p).startswith("ui")}
    for name, imports in graph.items():  # a package's parent is imported with each of its modules
        parent = name.rsplit(".", 1)[0]
        if parent != name and parent in graph and parent != "ui":
            imports.add(parent)
    assert len(graph) > 20
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def _mentions_tokenizer(node: ast.AST) -> bool:
    return "tok" in ast.unparse(node).lower()


def kind_switches(path: Path) -> list[int]:
    """Line numbers of kind switches in ``path``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2:
            if (node.func.id == "isinstance" and "Tokenizer" in ast.unparse(node.args[1])) or (
                node.func.id in ("getattr", "hasattr") and _mentions_tokenizer(node.args[0])
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "algorithm" for s in sides):
                lines.append(node.lineno)
    return sorted(lines)


def test_kind_switch_detector_sees_each_form(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "if isinstance(tok, WordPieceTokenizer): pass\n"
        "if settings.algorithm == 'bpe': pass\n"
        "x = getattr(tok, 'unk_id', None)\n"
        "y = getattr(result, 'clicked', None)\n"
    )
    assert kind_switches(probe) == [1, 2, 3]


def test_kind_switches_are_few_and_each_says_why():
    found = []
    for path in SOURCES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for n in kind_switches(path):
            nearby = "\n".join(lines[max(0, n - 3) : n])
            assert "# kind switch:" in nearby, f"{path.relative_to(ROOT)}:{n} switches on a kind without saying why"
            found.append(f"{path.relative_to(ROOT)}:{n}")
    assert len(found) <= MAX_KIND_SWITCHES, found


def test_each_algorithm_has_one_ui_module_that_registers_its_view():
    from tests.engine.test_architecture import registered_names

    made = {}  # module -> the AlgorithmView names it constructs
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "AlgorithmView":
                names = [k.value.value for k in node.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)]
                made.setdefault(module_name(path), []).extend(names)
    for name in registered_names():
        assert made.get(f"ui.algorithms.{name}") == [name], made
    others = {m: n for m, n in made.items() if not m.startswith("ui.algorithms.")}
    assert all(not names for names in others.values()), others  # the generic view builds one without a literal name


def test_no_table_keyed_by_an_algorithm_name_in_ui():
    from tests.engine.test_architecture import name_tables, registered_names

    names = registered_names()
    assert [f for p in SOURCES for f in name_tables(p, names)] == []


def test_no_isinstance_switch_on_a_tokenizer_class_in_ui():
    from tests.engine.test_architecture import class_switches, classes_by_package

    classes = classes_by_package()
    assert [f for p in SOURCES for f in class_switches(p, classes)] == []


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def test_session_state_keys_come_from_state_keys():
    literal_keys = []
    for path in SOURCES:
        if path.name == "state_keys.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call):
                if any(k.arg == "key" and _literal(k.value) for k in node.keywords):
                    literal_keys.append(where)
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("get", "pop", "setdefault")
                    and "session_state" in ast.unparse(func.value)
                    and node.args
                    and _literal(node.args[0])
                ):
                    literal_keys.append(where)
            elif (
                isinstance(node, ast.Subscript) and "session_state" in ast.unparse(node.value) and _literal(node.slice)
            ):
                literal_keys.append(where)
    assert literal_keys == []
