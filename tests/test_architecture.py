"""The layout is the architecture: the engine is plain Python, imports point one way
(web -> orchestration -> llm -> engine), and no module imports itself in a circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.services import ROOT

PACKAGES = ("reviews", "ledger", "alerts", "revreview", "workspaces", "connectors")

# Lower layers never import higher ones. A module not listed sits at the app level
# (models, admin, management commands) and is only checked for circles.
LAYERS = {
    "reviews.engine": 0,
    # The HubSpot client and the pull's steps: plain Python like the engine (no Django).
    "connectors.hubspot": 0,
    "reviews.samplegen": 1,
    "reviews.llm": 1,
    "reviews.orchestration": 2,
    # API tokens and idempotency keys: the spool import checks a token and claims a key
    # with them (no registry filled at start-up), so they never import the web.
    "reviews.apiauth": 2,
    # A connection's rows and tasks sit beside the orchestration they feed; the
    # connectors' models, admin and commands are app-level, like reviews'.
    "connectors.pulls": 2,
    "connectors.tokens": 2,
    "connectors.tasks": 2,
    "connectors.status": 2,
    "reviews.web": 3,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules that `name` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int | None:
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the list of modules around it, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_circle():
    assert find_cycle(import_graph()) is None


def test_imports_point_one_way():
    wrong = [
        f"{source} imports {target}"
        for source, targets in import_graph().items()
        for target in targets
        if (low := layer_of(source)) is not None
        and (high := layer_of(target)) is not None
        and high > low
    ]
    assert wrong == []


def test_the_engine_imports_nothing_but_itself_from_the_project():
    graph = import_graph()
    leaks = [
        f"{source} imports {target}"
        for source, targets in graph.items()
        if source.startswith("reviews.engine")
        for target in targets
        if not target.startswith("reviews.engine")
    ]
    assert leaks == []


def test_the_engine_runs_without_django():
    """Every engine module imports in a Python where Django cannot be imported."""
    engine = sorted(m for m in project_modules() if m.startswith("reviews.engine"))
    script = (
        "import importlib, sys\n"
        "sys.modules['django'] = None\n"  # any `import django...` now raises ImportError
        f"for name in {engine!r}: importlib.import_module(name)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_hubspot_client_runs_without_django():
    """connectors/hubspot/ (the client, the snapshot, the pull's steps) imports the
    engine and nothing of Django."""
    plain = sorted(m for m in project_modules() if m.startswith("connectors.hubspot"))
    assert "connectors.hubspot.client" in plain
    leaks = [
        f"{source} imports {target}"
        for source, targets in import_graph().items()
        if source.startswith("connectors.hubspot")
        for target in targets
        if not target.startswith(("connectors.hubspot", "reviews.engine"))
    ]
    assert leaks == []
    script = (
        "import importlib, sys\n"
        "sys.modules['django'] = None\n"
        f"for name in {plain!r}: importlib.import_module(name)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


# The tests mirror the packages: tests/<folder>/ holds the tests of the code at <folder>/
# or reviews/<folder>/ (deploy/ included: the deployment's files and `make run`).


def test_the_tests_mirror_the_packages():
    tests = ROOT / "tests"
    folders = [p for p in tests.iterdir() if p.is_dir() and any(p.rglob("test_*.py"))]
    assert {p.name for p in folders} >= {"engine", "llm", "orchestration", "web", "deploy"}
    for folder in folders:
        mirrored = [ROOT / folder.name, ROOT / "reviews" / folder.name]
        assert any(p.is_dir() for p in mirrored), f"tests/{folder.name}/ mirrors no package"
        for sub in [folder, *folder.rglob("*/")]:
            if any(sub.glob("test_*.py")):
                assert (sub / "__init__.py").exists(), f"{sub} is not a package"
    top_level = sorted(path.name for path in tests.glob("test_*.py"))
    assert top_level == ["test_architecture.py", "test_docs.py"]
