"""The layout is the architecture: the engine is plain Python, every package has a rank
and imports point down the ranks (web -> commands and admin -> connectors -> the
orchestration's rooms -> llm -> rows -> engine), no module imports itself in a circle,
and no app reaches into another app's private names."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.registry import CONNECTORS
from tests.services import ROOT

PACKAGES = ("reviews", "ledger", "alerts", "revreview", "workspaces", "connectors")

# Every package has a rank; a module imports only from its own rank or lower (the
# longest matching prefix decides). Within a rank, only circles are refused.
LAYERS = {
    # Plain Python, no Django: the review itself, the connector protocol and each CRM's
    # folder behind it.
    "reviews.engine": 0,
    "connectors.base": 0,
    "revreview": 0,  # settings, the Celery app, caches, logging: read by everything
    "reviews.samplegen": 1,
    "workspaces.models": 1,
    # Rows and what concerns one row: each app's models and the small services over
    # them (the ledger's budget and prices, webhook delivery, workspace access).
    "workspaces": 2,
    "reviews": 2,
    "reviews.models": 2,
    "reviews.apps": 2,
    "reviews.audit": 2,
    "reviews.search": 2,
    "reviews.templatetags": 2,
    "ledger": 2,
    "alerts": 2,
    "connectors.models": 2,
    "connectors.registry": 2,  # the CRMs' list, read by the connection's model
    "connectors.tokens": 2,
    "connectors.apps": 2,
    "reviews.llm": 3,  # the model pass writes the ledger
    # The orchestration, room by room (docs/architecture.md).
    "reviews.orchestration": 4,
    "reviews.orchestration.store": 4,
    "reviews.orchestration.serving": 4,
    # API tokens and idempotency keys: the spool import checks a token and claims a key
    # with them (no registry filled at start-up), so they never import the web.
    "reviews.apiauth": 4,
    "reviews.orchestration.dataset": 5,
    "reviews.orchestration.run": 6,
    "reviews.orchestration.intake": 7,
    "reviews.orchestration.fixes": 7,
    # A CRM connection's pulls, schedule and writes feed the intake; reports read runs.
    "connectors": 8,
    # Undoing applied merges: over connectors.merge_steps (the survivor's id now) and
    # connectors.write_access (who may write to which CRM).
    "connectors.undo": 8,
    "connectors.preflight": 8,  # the merge dry run's fresh read (connectors.merge_steps)
    "reviews.reports": 8,
    # Commands and admin: app-level entry points.
    "reviews.cli": 9,
    "reviews.management": 9,
    "connectors.management": 9,
    "ledger.management": 9,
    "workspaces.management": 9,
    "reviews.admin": 9,
    "reviews.apiauth.admin": 9,
    "ledger.admin": 9,
    "alerts.admin": 9,
    "connectors.admin": 9,
    "workspaces.admin": 9,
    # The web: pages, the token API, the spend pages, and the URLconf over them.
    "reviews.web": 10,
    "ledger.views": 10,
    "ledger.urls": 10,
    "revreview.metrics": 10,  # the /metrics view reads every app's rows
    "revreview.urls": 11,
}
# Each CRM's folder (connectors/<crm>/, its connector named in connectors/registry.py)
# is plain Python beside the engine: a CRM added there is ranked with no line here.
CRM_PACKAGES = sorted({path.rsplit(".", 2)[0] for _, path in CONNECTORS.values()})
LAYERS.update(dict.fromkeys(CRM_PACKAGES, 0))


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


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's tree, parsed once per process: the checks below read every module's,
    several times over (read only)."""
    return ast.parse(path.read_text())


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules that `name` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(parsed(path)):
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


@functools.cache  # read only: the tests below share one graph
def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int | None:
    """The rank of the longest prefix of `module` in LAYERS."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:end])) in LAYERS:
            return LAYERS[prefix]
    return None


def owner_of(module: str) -> str:
    """The app a module belongs to: reviews' rooms (engine, orchestration, web, ...) are
    apps of their own; elsewhere the top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "reviews" and len(parts) > 1 else parts[0]


def private_names_used(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """`_names` that `name` takes from a module of another app: imported by name, or read
    as an attribute of an imported module or class."""
    found: set[str] = set()
    bound: dict[str, str] = {}  # local name -> the project module it came from
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ImportFrom) and node.module in modules:
            for alias in node.names:
                bound[alias.asname or alias.name] = node.module
                if alias.name.startswith("_"):
                    found.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    bound[alias.asname] = alias.name
    for node in ast.walk(parsed(path)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr != "_meta"  # Django's public model API
        ):
            found.add(f"{bound[node.value.id]}.{node.attr}")
    return {used for used in found if owner_of(used) != owner_of(name)}


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


def test_every_module_has_a_rank():
    assert [name for name in project_modules() if layer_of(name) is None] == []


def test_no_module_uses_another_apps_private_names():
    modules = project_modules()
    used = [
        f"{name} uses {private}"
        for name, path in modules.items()
        for private in sorted(private_names_used(name, path, modules))
    ]
    assert used == []


def test_the_rank_checks_can_fail():
    assert layer_of("reviews.orchestration.run.runner") == 6
    assert layer_of("reviews.web.api.batches") == 10
    assert layer_of("reviews.engine.health") == 0  # the health score: plain Python
    assert layer_of("reviews.web.home") == 10
    assert layer_of("reviews.apiauth.admin") == 9 > layer_of("reviews.apiauth.models") == 4
    assert layer_of("reviews.admin.runs") == 9 > layer_of("reviews.models.runs") == 2
    assert owner_of("reviews.management.commands.review") == "reviews.management"
    assert owner_of("connectors.management.commands.hubspot_pull") == "connectors"


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_hubspot_client_runs_without_django():
    """connectors/hubspot/ (the client, the snapshot, the pull's steps, the connector),
    like every CRM's folder of the registry, imports the engine, the connector protocol
    (connectors/base.py), its own folder and nothing of Django."""
    assert "connectors.hubspot" in CRM_PACKAGES
    plain = sorted(m for m in project_modules() if m.startswith(("connectors.base", *CRM_PACKAGES)))
    assert {"connectors.hubspot.client", "connectors.hubspot.connector"} <= set(plain)
    leaks = [
        f"{source} imports {target}"
        for crm in ["connectors.base", *CRM_PACKAGES]
        for source, targets in import_graph().items()
        if source == crm or source.startswith(crm + ".")
        for target in targets
        if not target.startswith((crm, "connectors.base", "reviews.engine"))
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


# One module, one job, under ~400 lines (STYLE). Those still longer, each to be split in
# its own change; no other module may grow past the limit.
MAX_LINES = 400
LONG_MODULES = {
    "revreview.settings",  # one settings module driven by the environment, on purpose
}


def test_no_module_grows_past_the_line_limit():
    modules = project_modules()
    lines = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    assert {name for name, n in lines.items() if n > MAX_LINES} <= LONG_MODULES, {
        name: n for name, n in lines.items() if n > MAX_LINES and name not in LONG_MODULES
    }


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
