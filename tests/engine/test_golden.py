"""The same review, proven (issue 35): every shipped sample, and the batches the engine
tests build, reviewed by the engine (rules only) and compared byte for byte with the
review recorded in tests/engine/golden/<sample>.jsonl (tests/engine/golden_lines.py
says what a line holds). A detector rewritten, say over columns, must give the same
findings, records, severities, money, titles, details and near misses.

Re-recording is a deliberate act, for a difference that is a documented fix:

    RECORD_GOLDEN=1 .venv/bin/pytest tests/engine/test_golden.py

writes every recording anew (the tests are then skipped, saying so). Read `git diff
tests/engine/golden/`, and list what changed, and why, in CHANGELOG.md. The big
generated batches have the same check as a bench script: bench/golden_findings.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime

import pytest

from reviews.engine.ingest import UploadedFile
from reviews.samplegen import generate
from tests.engine import partial_exports
from tests.engine.golden_lines import differences, read_lines, upload_lines, write_lines
from tests.engine.ingest import hubspot_exports, renewals_portal
from tests.services import ROOT

GOLDEN = ROOT / "tests" / "engine" / "golden"
RECORDING = bool(os.environ.get("RECORD_GOLDEN"))
HOW = (
    "If the difference is a fix, re-record with `RECORD_GOLDEN=1 .venv/bin/pytest "
    "tests/engine/test_golden.py` and list it in CHANGELOG.md."
)

Files = list[tuple[str, bytes]]
Sample = Callable[[], tuple[Files, datetime | None]]


def shipped(*paths: str) -> Sample:
    """Files of the repository, uploaded as the CLI uploads them (by file name, the
    as-of time the batch's own)."""
    return lambda: ([((ROOT / p).name, (ROOT / p).read_bytes()) for p in paths], None)


def generated(records: int, seed: int) -> Sample:
    return lambda: ([("generated.json", json.dumps(generate(records, seed)[0]).encode())], None)


def written(batch: dict) -> Sample:
    return lambda: ([("batch.json", json.dumps(batch).encode())], None)


portal = renewals_portal
NO_STAGE = (("deals.csv", "Deal Stage"),)
# The near misses of tests/engine/specialists (the samples hold only dedup's), in one
# batch: a subsidiary's, a subdomain's and near-spelled email domains (attribution),
# companies about to turn stale (freshness), open deals closing soon without an amount
# (pipeline), near-same company names (dedup).
NEAR_MISSES = {
    "exportedAt": "2026-08-01T09:00:00Z",
    "companies": [
        {"id": "co_1", "name": "Acme Corp", "domain": "acme.example"},
        {"id": "co_2", "name": "Vertex Robotics", "domain": "vertexrobotics.example"},
        {"id": "co_3", "name": "Acme Group", "domain": "group.acme.example"},
        {"id": "co_4", "name": "Starling Pharma", "enrichedAt": "2026-02-15"},
        {"id": "co_5", "name": "Sterling Pharma Ltd", "enrichedAt": "2026-02-02"},
        {"id": "co_6", "name": "Granite Packaging", "enrichedAt": "2026-02-01"},
    ],
    "contacts": [
        {"id": "ct_1", "email": "a@eu.acme.example", "companyId": "co_2"},
        {"id": "ct_2", "email": "b@vertexrobotiics.example", "companyId": "co_1"},
        {"id": "ct_3", "email": "c@vertex-robotics.example"},
        {"id": "ct_4", "email": "d@eu.acme.example", "companyId": "co_1"},
        {"id": "ct_5", "email": "e@unrelated.example", "companyId": "co_1"},
        {"id": "ct_6", "email": "dana@acme.example", "companyId": "co_3"},
    ],
    "deals": [
        {"id": "dl_1", "name": "Acme — pilot", "stage": "contractsent", "closeDate": "2026-08-05",
         "companyId": "co_1"},
        {"id": "dl_2", "name": "Acme — rollout", "stage": "contractsent", "amount": 0,
         "closeDate": "2026-08-08", "companyId": "co_1"},
        {"id": "dl_3", "name": "Vertex — arms", "stage": "contractsent", "amount": 10,
         "closeDate": "2026-08-05", "companyId": "co_2"},
        {"id": "dl_4", "name": "Vertex — cells", "stage": "closedlost", "closeDate": "2026-08-05",
         "companyId": "co_2"},
    ],
}  # fmt: skip

# Salesforce's Data Export, one file per object.
SALESFORCE_OBJECTS = (
    "Account",
    "Contact",
    "Lead",
    "Opportunity",
    "OpportunityContactRole",
    "Task",
    "User",
)
SAMPLES: dict[str, Sample] = {
    "trivial": shipped("samples/trivial.json"),
    "clean": shipped("samples/clean.json"),
    "lite": shipped("samples/lite.json"),
    "full": shipped("samples/full.json"),
    "broken": shipped("samples/broken.json"),
    "hubspot": shipped(*(f"samples/hubspot/{n}.csv" for n in ("companies", "contacts", "deals"))),
    "seed-example": shipped("tests/data/seed-example.json"),
    "near-misses": written(NEAR_MISSES),
    # tests/engine/ingest/hubspot_exports.py: one batch, the ways HubSpot users send it
    "exports-native": lambda: (hubspot_exports.native_file(), hubspot_exports.AS_OF),
    "exports-csv": lambda: (hubspot_exports.csv_files(), hubspot_exports.AS_OF),
    "exports-excel-us": lambda: (
        hubspot_exports.csv_files(style="excel_us"),
        hubspot_exports.AS_OF,
    ),
    "exports-excel-de": lambda: (
        hubspot_exports.csv_files(style="excel_de", language="de"),
        hubspot_exports.AS_OF,
    ),
    "exports-internal-names": lambda: (
        hubspot_exports.csv_files(language="internal"),
        hubspot_exports.AS_OF,
    ),
    "exports-api": lambda: (hubspot_exports.api_files(), hubspot_exports.AS_OF),
    # tests/engine/ingest/renewals_portal.py: a second pipeline, numeric stage ids
    "renewals-csv": lambda: (portal.csv_files(), portal.AS_OF),
    "renewals-csv-pipelines": lambda: (
        [*portal.csv_files(state_columns=False), portal.pipelines_file()],
        portal.AS_OF,
    ),
    "renewals-api-pipelines": lambda: (
        [*portal.api_files(), portal.pipelines_file()],
        portal.AS_OF,
    ),
    "renewals-xlsx": lambda: (portal.xlsx_files(), portal.AS_OF),
    "renewals-xls": lambda: (portal.xls_files(), portal.AS_OF),
    # tests/engine/partial_exports.py: whole, and without the stage column (partial)
    "partial-whole": lambda: (
        partial_exports.export(won=True, late=True),
        partial_exports.AS_OF,
    ),
    "partial-no-stage": lambda: (
        partial_exports.export(won=True, late=True, drop=NO_STAGE),
        partial_exports.AS_OF,
    ),
    # reviews.samplegen, as tests/samplegen uses it: every kind planted, with decoys
    # (the findings-heavy stale batches are bench/golden_findings.py's: 600 lines here)
    "generated-2000-3": generated(2_000, 3),
    # Salesforce's Data Export: the only sample with leads (their rules, in dedup and
    # attribution) and an org's own words.
    "salesforce": shipped(*(f"samples/salesforce/{n}.csv" for n in SALESFORCE_OBJECTS)),
}


def reviewed(name: str) -> list[bytes]:
    files, as_of = SAMPLES[name]()
    return upload_lines([UploadedFile(n, data) for n, data in files], as_of=as_of)


@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_is_reviewed_as_recorded(name):
    now = reviewed(name)
    path = GOLDEN / f"{name}.jsonl"
    if RECORDING:
        write_lines(path, now)
        pytest.skip(f"recorded {len(now)} lines to {path.relative_to(ROOT)}")
    assert path.exists(), f"{path.relative_to(ROOT)} is missing. {HOW}"
    difference = differences(read_lines(path), now)
    if difference:
        pytest.fail(
            f"{name}: the review differs from {path.relative_to(ROOT)}:\n{difference}\n{HOW}",
            pytrace=False,
        )


def test_every_recording_has_its_sample():
    assert sorted(p.stem for p in GOLDEN.glob("*.jsonl")) == sorted(SAMPLES)


def test_the_recordings_hold_every_part_of_a_review():
    """Between them the recordings hold a rejected batch, a partial export, findings of
    every specialist before and after fusion, and near misses of every specialist that
    has candidates (near-misses: each of them)."""
    lines = [json.loads(line) for name in SAMPLES for line in read_lines(GOLDEN / f"{name}.jsonl")]
    parts = {next(iter(line)) for line in lines}
    assert parts == {"batch", "review", "finding", "detected", "near_miss", "rejected"}
    assert any(line["batch"]["missing_columns"] for line in lines if "batch" in line)
    categories = {line["detected"]["category"] for line in lines if "detected" in line}
    assert categories == {"dedup", "attribution", "pipeline", "freshness"}
    near = {line["specialist"] for line in lines if "near_miss" in line}
    assert near == {"dedup", "attribution", "pipeline", "freshness"}


def test_a_changed_finding_is_shown_recorded_and_now_side_by_side():
    recorded = reviewed("full")
    rank = next(i for i, line in enumerate(recorded) if b'"negative_amount"' in line)
    now = list(recorded)
    now[rank] = now[rank].replace(b'"severity":"critical"', b'"severity":"warning"')
    difference = differences(recorded, now)
    assert difference.splitlines()[:4] == [
        f"{len(recorded)} lines recorded, {len(now)} now: 1 only recorded (-), 1 only now (+)",
        f"- {recorded[rank].decode()}",
        f"+ {now[rank].decode()}",
        "  (changed: severity)",
    ]


def test_findings_in_another_order_are_a_difference_too():
    recorded = reviewed("full")
    ranks = [i for i, line in enumerate(recorded) if line.startswith(b'{"finding"')]
    now = list(recorded)
    now[ranks[0]], now[ranks[1]] = now[ranks[1]], now[ranks[0]]
    assert differences(recorded, now).startswith(
        f"the same {len(now)} lines in another order; line {ranks[0] + 1} was"
    )
    assert differences(recorded, list(recorded)) == ""
