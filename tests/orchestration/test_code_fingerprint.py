"""The cache key follows the code (reviews.orchestration.serving.code_version): a changed
detector line makes the next review of a cached batch fresh, with no constant to bump."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.serving import code_version
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.serving.code_version import DECIDING_SOURCES, REVIEWS_DIR, deciding_files
from tests.uploads import upload

DETECTOR_LINE = "WHERE age > $threshold\n"  # freshness: the stale rule's comparison


def copy_of_the_code(tmp_path: Path) -> Path:
    """The engine and the model pass copied as they are, to edit without touching ours."""
    root = tmp_path / "reviews"
    for part in ("engine", "llm"):
        shutil.copytree(REVIEWS_DIR / part, root / part, ignore=shutil.ignore_patterns("*.pyc"))
    return root


def edit_a_detector(root: Path) -> None:
    path = root / "engine" / "specialists" / "freshness.py"
    text = path.read_text()
    assert text.count(DETECTOR_LINE) == 1
    path.write_text(text.replace(DETECTOR_LINE, "WHERE age >= $threshold\n"))


def test_the_hash_covers_the_engine_and_the_model_pass_decision_path():
    names = {p.relative_to(REVIEWS_DIR).as_posix() for p in deciding_files(REVIEWS_DIR)}
    assert "engine/specialists/freshness.py" in names
    assert "engine/rules.py" in names and "engine/coordinator.py" in names
    assert "llm/apply.py" in names and "llm/context.py" in names
    assert "llm/client.py" not in names  # transport: how a call is made, not what it decides


def test_a_copied_tree_hashes_the_same_and_one_changed_line_changes_it(tmp_path):
    root = copy_of_the_code(tmp_path)
    ours = code_version._hash(REVIEWS_DIR, DECIDING_SOURCES)
    assert code_version._hash(root, DECIDING_SOURCES) == ours
    client = root / "llm" / "client.py"
    client.write_text(client.read_text() + "\n# a comment in the transport\n")
    code_version._hash.cache_clear()
    assert code_version._hash(root, DECIDING_SOURCES) == ours
    edit_a_detector(root)
    code_version._hash.cache_clear()
    assert code_version._hash(root, DECIDING_SOURCES) != ours


def test_a_pattern_that_names_no_file_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="engine/\\*\\*/\\*.py"):
        deciding_files(tmp_path)


def test_the_package_version_is_part_of_the_hash(tmp_path, monkeypatch):
    root = copy_of_the_code(tmp_path)
    before = code_version._hash(root, DECIDING_SOURCES)
    monkeypatch.setattr(code_version, "package_version", lambda: "99.0")
    code_version._hash.cache_clear()
    assert code_version._hash(root, DECIDING_SOURCES) != before


@pytest.mark.integration
@pytest.mark.django_db
def test_a_changed_detector_makes_the_next_review_of_a_cached_batch_fresh(
    postgres, tmp_path, monkeypatch
):
    first = submit([upload("seed-example.json")], dispatch=False).run
    start_review.apply(kwargs={"run_id": first.pk})
    assert submit([upload("seed-example.json")], dispatch=False).run.mode == "cached"

    # The same code, copied: still the same configuration, still cached.
    root = copy_of_the_code(tmp_path)
    monkeypatch.setattr(code_version, "REVIEWS_DIR", root)
    assert submit([upload("seed-example.json")], dispatch=False).run.mode == "cached"

    # One detector line changed, as an upgrade would: a new process hashes it anew.
    edit_a_detector(root)
    code_version._hash.cache_clear()
    before = serving.config_fingerprint()
    again = submit([upload("seed-example.json")], dispatch=False).run
    assert again.mode == "fresh"
    assert again.config_fingerprint != first.config_fingerprint
    assert serving.config_fingerprint() == before


def test_the_package_version_is_pyprojects():
    import tomllib

    project = tomllib.loads((REVIEWS_DIR.parent / "pyproject.toml").read_text())["project"]
    assert code_version.package_version() == project["version"]
