"""`manage.py rules` as a person runs it (issue 36's contract): real processes in the
embedded mode (SQLite in a folder of the test's own) on a HubSpot CSV export with the
team's custom columns. A hostile file exits 2 with every problem on stderr and no
traceback; the good file is previewed, added, and the next `manage.py review` of the
export flags exactly the records its rules describe, at their severity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.team_rules.exports import AS_OF, export_files
from tests.orchestration.test_team_rules import EXPECTED, RULES
from tests.services import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("rules-cli")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER")
    }
    env |= {"DJANGO_SETTINGS_MODULE": "revreview.settings", "DATA_DIR": str(folder)}
    assert manage(env, "migrate", "--noinput").returncode == 0
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def review(env: dict[str, str], files: list[Path]) -> tuple[int, dict]:
    done = manage(
        env, "review", *map(str, files), "--dataset", "acme", "--as-of", AS_OF.isoformat(),
        "--format", "json", "--no-cache",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)


def test_the_cli_contract_on_a_hubspot_export(env, tmp_path):
    files = []
    for upload in export_files():
        (tmp_path / upload.name).write_bytes(upload.data)
        files.append(tmp_path / upload.name)
    review(env, files)  # the first sync

    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(
        "rules:\n"
        "  - {id: r1, object: deals, severity: warning, title: t, fix: f,\n"
        "     when: \"read_text('/etc/passwd') <> '' OR getenv('HOME') <> ''\"}\n"
        "  - {id: negative_amount, object: tickets, severity: blocker, title: t, fix: f,\n"
        "     when: 'amount < 0; SET threads = 8'}\n"
    )
    refused = manage(env, "rules", "add", "--dataset", "acme", "--file", str(hostile))
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    for line in (
        "rule r1: when: line 1, column 1: function read_text() is not allowed",
        "rule r1: when: line 1, column 35: function getenv() is not allowed",
        "rule negative_amount: id 'negative_amount' is a built-in kind",
        "rule negative_amount: unknown object 'tickets'",
        "rule negative_amount: unknown severity 'blocker'",
        "rule negative_amount: when: line 1, column 11: one expression only, not 2 statements",
    ):
        assert line in refused.stderr, refused.stderr

    good = tmp_path / "rules.yaml"
    good.write_text(RULES)
    preview = manage(env, "rules", "preview", "--dataset", "acme", "--file", str(good), "--format", "json")  # fmt: skip  # noqa: E501
    assert preview.returncode == 0, preview.stderr
    counts = {r["id"]: r["count"] for r in json.loads(preview.stdout)["rules"]}
    assert counts == {kind: len(ids) for (kind, _), ids in EXPECTED.items()}
    # `rules preview ... | head`: the reader leaves before the output is written
    read, write = os.pipe()
    os.close(read)
    gone = subprocess.run(
        [sys.executable, "manage.py", "rules", "preview", "--dataset", "acme", "--file", str(good)],
        cwd=ROOT, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300,
    )  # fmt: skip
    os.close(write)
    assert "Traceback" not in gone.stderr and "BrokenPipe" not in gone.stderr, gone.stderr
    assert manage(env, "rules", "add", "--dataset", "acme", "--file", str(good)).returncode == 0
    listed = manage(env, "rules", "list", "--dataset", "acme", "--format", "json")
    assert [r["id"] for r in json.loads(listed.stdout)["rules"]] == list(counts)

    code, report = review(env, files)
    assert code == 1 and report["verdict"] == "request_changes"
    found: dict[tuple[str, str], list[str]] = {}
    for finding in report["findings"]:
        if finding["category"] == "team_rules":
            found.setdefault((finding["kind"], finding["severity"]), []).extend(
                finding["record_ids"]
            )
    assert {key: sorted(ids) for key, ids in found.items()} == EXPECTED
    assert [r["status"] for r in report["run"]["team_rules"]] == ["ran"] * 4
    removed = manage(env, "rules", "remove", "--dataset", "acme", "--id", "phone_not_e164")
    assert removed.returncode == 0 and "removed phone_not_e164" in removed.stdout
