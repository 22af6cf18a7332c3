"""The code that decides what a review finds, as a hash: part of the cache key
(serving.config_fingerprint), so a review made by older code is never served as
`cached` after an upgrade or an edit, and no constant has to be bumped by hand.

What is hashed (DECIDING_SOURCES, relative to the `reviews` package):
- the whole engine (engine/**/*.py): ingest decides the values and their problems, the
  specialists decide the findings, the coordinator fuses and orders them and decides the
  verdict, history decides new / open / resolved, rules.py holds the defaults;
- the model pass's decision path: what a model is shown (context, boundary), what its
  reply may change and the guards (apply, injection, schemas), and how the judge calls
  are staffed and combined (judge). The transport (client, chain, breaker, errors) and
  the roster lookup are left out: they change how a call is made, not what it may
  decide, and the roster and model tables are in the fingerprint as data;
- the prompt files are hashed by serving itself on every request (an operator may edit
  them in place).
Plus the installed package's version. The hash is computed once per process and
source root: a running worker serves the code it loaded.
"""

from __future__ import annotations

import hashlib
import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REVIEWS_DIR = Path(__file__).resolve().parents[2]
DECIDING_SOURCES: tuple[str, ...] = (
    "engine/**/*.py",
    "llm/apply.py",
    "llm/boundary.py",
    "llm/context.py",
    "llm/injection.py",
    "llm/judge.py",
    "llm/schemas.py",
)


def code_fingerprint() -> str:
    """sha256 of the deciding source files under REVIEWS_DIR and the package version."""
    return _hash(REVIEWS_DIR, DECIDING_SOURCES)


def package_version() -> str:
    """pyproject.toml's version beside the code (the Docker image installs the
    dependencies, not the project), else the installed distribution's."""
    pyproject = REVIEWS_DIR.parent / "pyproject.toml"
    if pyproject.is_file():
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])
    try:
        return version("revreview")
    except PackageNotFoundError:
        return "unknown"


def deciding_files(root: Path, patterns: tuple[str, ...] = DECIDING_SOURCES) -> list[Path]:
    """The files the patterns name under `root`, sorted; a pattern that names none is an
    error (a moved module would otherwise silently leave the key)."""
    found: set[Path] = set()
    for pattern in patterns:
        matched = {p for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts}
        if not matched:
            raise FileNotFoundError(f"{pattern} names no file under {root}")
        found |= matched
    return sorted(found)


@cache
def _hash(root: Path, patterns: tuple[str, ...]) -> str:
    digest = hashlib.sha256(f"revreview {package_version()}\n".encode())
    for path in deciding_files(root, patterns):
        digest.update(f"{path.relative_to(root).as_posix()}\n".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
