"""The course's packages import one way: ``tinylm_solutions`` (the reference) imports nothing of ours,
``tinylm_checks`` imports only the reference, ``tinylm_grading`` imports both; and no module takes part in
an import cycle. Every import statement counts, a lazy one inside a function too.

The graph is read from the source with ``ast`` (nothing is imported), so a test fails on an arrow that only a
rarely run branch would follow.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("tinylm_solutions", "tinylm_checks", "tinylm_grading")  # each may import only those before it


def modules(root: Path, packages=LAYERS) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``: dotted name -> file."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that module ``name`` (file ``path``) imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from package import submodule` imports the submodule
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of ours: the deepest module we have
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph(root: Path = ROOT, packages=LAYERS) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imports(name, path, known) for name, path in known.items()}


def upward_arrows(edges: dict[str, set[str]], layers=LAYERS) -> list[str]:
    layer = {name: layers.index(name.split(".")[0]) for name in edges}
    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets if layer[b] > layer[a])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_packages_import_one_way():
    assert upward_arrows(graph()) == []


def test_no_module_is_in_an_import_cycle():
    assert cycles(graph()) == []


def test_the_graph_sees_the_course_s_real_arrows():
    edges = graph()
    assert "tinylm_solutions.multihead" in edges["tinylm_solutions.block"]
    assert "tinylm_checks._core" in edges["tinylm_checks.attention"]
    assert "tinylm_checks.probes" in edges["tinylm_checks.training"]
    assert "tinylm_checks.lab.plots" in edges["tinylm_checks.lab.widgets"]
    assert "tinylm_checks.probes" in edges["tinylm_checks.agent"]  # a fallback import inside try/except


# ---- the walker itself, on small trees with the arrows it must catch

def _tree(tmp_path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in LAYERS:
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    return tmp_path


@pytest.mark.parametrize("files, arrow", [
    ({"tinylm_solutions/model.py": "from tinylm_checks import check_x\n"}, "tinylm_solutions.model -> tinylm_checks"),
    ({"tinylm_checks/a.py": "def f():\n    from tinylm_grading.remote import verdict\n",
      "tinylm_grading/remote.py": ""}, "tinylm_checks.a -> tinylm_grading.remote"),
    ({"tinylm_checks/a.py": "import tinylm_grading.remote as r\n", "tinylm_grading/remote.py": ""},
     "tinylm_checks.a -> tinylm_grading.remote"),
])
def test_an_upward_arrow_is_found_even_when_lazy(tmp_path, files, arrow):
    assert upward_arrows(graph(_tree(tmp_path, files))) == [arrow]


def test_a_cycle_through_a_lazy_relative_import_is_found(tmp_path):
    root = _tree(tmp_path, {"tinylm_solutions/cli.py": "from .train import step\n",
                            "tinylm_solutions/train.py": "if __name__ == '__main__':\n    from . import cli\n",
                            "tinylm_solutions/model.py": "from .train import step\n"})
    assert cycles(graph(root)) == [["tinylm_solutions.cli", "tinylm_solutions.train"]]


def test_a_package_importing_a_module_that_imports_it_back_is_a_cycle(tmp_path):
    root = _tree(tmp_path, {"tinylm_checks/__init__.py": "from . import attention\n",
                            "tinylm_checks/attention.py": "from tinylm_checks import MISTAKES\n"})
    assert cycles(graph(root)) == [["tinylm_checks", "tinylm_checks.attention"]]
