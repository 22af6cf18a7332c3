"""An export missing what a rule reads is partial and never greener (issue 37).

A HubSpot export without its "Deal Stage" column used to be reviewed as if every deal
had no stage: "has no stage" on each, the critical "won without amount" gone, and the
verdict went from request_changes to approve_with_comments. Now the kinds that read a
missing column are switched off (their findings would describe the export, not the CRM),
the run names the column and the kinds, and its verdict counts them as unknown."""

from __future__ import annotations

import csv
import io
import json

import pytest

from reviews.engine import coordinator, coverage
from reviews.engine.batch import Batch
from reviews.engine.findings import Severity
from reviews.engine.history.policy import EMPTY, Policy
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.ingest.columns import COLUMNS
from reviews.engine.ingest.hubspot_records import FILLS
from reviews.engine.ingest.salesforce.fields import BY_LIST, FILLED_ELSEWHERE
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, NAMES, detector, switched_off_kinds
from reviews.engine.specialists.spec import FixTarget, Kind, needs_of, switched_off
from tests.engine.ingest.helpers import RECEIVED
from tests.engine.partial_exports import AS_OF, blank, export
from tests.engine.partial_exports import COLUMNS as EXPORT_COLUMNS

LENIENCY = {"request_changes": 0, "approve_with_comments": 1, "approve": 2}
STAGE = (("deals.csv", "Deal Stage"),)
STAGE_KINDS = [
    "deal_entered_twice", "missing_stage", "open_past_close_date", "unknown_stage",
    "won_without_amount", "won_without_close_date",
]  # fmt: skip


def parsed(files: list[tuple[str, bytes]]) -> Batch:
    uploads = [UploadedFile(name, data) for name, data in files]
    return parse_upload(uploads, as_of=AS_OF, received_at=RECEIVED)


def reviewed(files: list[tuple[str, bytes]], policy: Policy = EMPTY):
    """(batch, review) as the run's coordinator decides it: every detector, the fused
    verdict, then the partial export's (coordination._coordinate does the same)."""
    batch = parsed(files)
    found = [f for name in NAMES for f in detector(name)(batch, Rules())]
    review = coordinator.fuse(found, batch.counts, [])
    coverage.partial_review(review, coverage.missing_columns(batch), policy, Rules())
    return batch, review


def kinds(review) -> set[str]:
    return {f.kind for f in review.findings}


def test_an_export_without_deal_stage_is_partial_and_never_better_than_the_full_one():
    full_batch, full = reviewed(export(won=True))
    batch, partial = reviewed(export(won=True, drop=STAGE))

    assert full.decision == "request_changes"
    assert "won_without_amount" in kinds(full)
    assert coverage.missing_columns(full_batch) == []
    # Named: the column, as the export and the API call it, and the kinds it switched off.
    assert coverage.missing_columns(batch) == [
        {
            "list": "deals",
            "field": "stage",
            "columns": ["Deal Stage"],
            "properties": ["dealstage"],
            "switched_off": STAGE_KINDS,
        }
    ]
    # Never greener: won_without_amount is critical and unknown, so changes are requested.
    assert partial.decision == "request_changes"
    assert LENIENCY[partial.decision] <= LENIENCY[full.decision]
    # No misleading finding: not "has no stage" on every deal.
    assert not kinds(partial) & set(STAGE_KINDS)
    assert 'Partial: the export has no column for "Deal Stage" (deals)' in partial.summary
    assert "deals: won without an amount" in partial.summary


def test_before_the_fix_the_same_export_was_approved_with_comments():
    """What the issue saw, kept as the reason for the cap: without it, the detectors
    alone (the stage kinds switched off, nothing else) approve with comments."""
    batch = parsed(export(won=True, drop=STAGE))
    found = [f for name in NAMES for f in detector(name)(batch, Rules())]

    assert coordinator.fuse(found, batch.counts, []).decision != "request_changes"


@pytest.mark.parametrize("variant", ["clean", "won", "late"])
@pytest.mark.parametrize("column", EXPORT_COLUMNS, ids=lambda c: f"{c[0]}:{c[1]}")
def test_no_column_left_out_makes_the_verdict_greener(variant, column):
    """Every column of the export, left out of three exports (approved, approved with
    comments, changes requested): the verdict is never more lenient than the whole
    export's, and a column a kind needs (with no other column to fill it) is named."""
    options = {"won": variant == "won", "late": variant == "late"}
    _, full = reviewed(export(**options))
    batch, partial = reviewed(export(**options, drop=(column,)))

    assert full.decision == {
        "clean": "approve", "won": "request_changes", "late": "approve_with_comments",
    }[variant]  # fmt: skip
    assert LENIENCY[partial.decision] <= LENIENCY[full.decision], (column, partial.summary)
    named = [header for entry in coverage.missing_columns(batch) for header in entry["columns"]]
    # First Name and Last Name stand in for each other; Pipeline is read by no kind.
    optional = {"First Name", "Last Name", "Pipeline"}
    assert (column[1] in named) == (column[1] not in optional), named
    assert not kinds(partial) & set(switched_off_kinds(batch))


def as_xlsx(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The same exports saved as XLSX workbooks, one sheet each."""
    from openpyxl import Workbook

    out = []
    for name, data in files:
        book = Workbook()
        for row in csv.reader(io.StringIO(data.decode())):
            book.active.append(row)
        buffer = io.BytesIO()
        book.save(buffer)
        out.append((name.replace(".csv", ".xlsx"), buffer.getvalue()))
    return out


def test_an_xlsx_export_without_deal_stage_is_partial_too():
    _, full = reviewed(as_xlsx(export(won=True)))
    batch, partial = reviewed(as_xlsx(export(won=True, drop=STAGE)))

    assert [m["columns"] for m in coverage.missing_columns(batch)] == [["Deal Stage"]]
    assert full.decision == partial.decision == "request_changes"
    assert "missing_stage" not in kinds(partial)


def test_a_blank_column_is_not_a_missing_one():
    """The header is there and every cell empty: the deals have no stage, and say so."""
    batch, review = reviewed(blank(export(), "deals.csv", "Deal Stage"))

    assert coverage.missing_columns(batch) == []
    assert {f.record_ids[0] for f in review.findings if f.kind == "missing_stage"} == {
        "5002",
        "5004",
    }


def test_a_policy_that_turns_the_critical_kinds_off_counts_them_for_nothing():
    """The dataset's policy already switched the critical stage kinds off (with break
    glass): the unknown ones left are warnings, so the verdict is approve with comments."""
    criticals = {k for k in STAGE_KINDS if Severity.CRITICAL in KINDS[k].severities}
    policy = Policy(off=frozenset(criticals), break_glass="amounts arrive late")

    _, review = reviewed(export(drop=STAGE), policy)

    assert review.decision == "approve_with_comments"


def test_the_rule_for_the_verdict():
    partial = coordinator.not_greener_when_partial
    assert partial("approve", []) == "approve"
    assert partial("approve", ["suggestion"]) == "approve_with_comments"
    assert partial("approve", ["warning"]) == "approve_with_comments"
    assert partial("approve_with_comments", ["critical", "warning"]) == "request_changes"
    assert partial("request_changes", ["suggestion"]) == "request_changes"


# --- CRM API JSON ---------------------------------------------------------------------


def deals_api(*properties: dict) -> bytes:
    objects = [
        {"id": str(5000 + i), "properties": props, "updatedAt": "2026-07-30T10:00:00Z"}
        for i, props in enumerate(properties, start=1)
    ]
    return json.dumps({"results": objects}).encode()


def test_an_api_export_whose_objects_lack_a_property_is_partial():
    won = {"dealname": "Harbor renewal", "closedate": "2026-07-15", "amount": None}
    without = parsed([("deals.json", deals_api(won))])
    null_stage = parsed([("deals.json", deals_api({**won, "dealstage": None}))])

    assert switched_off_kinds(without).keys() >= {"missing_stage", "won_without_amount"}
    # The API answers a blank property as null: there, but blank.
    assert "missing_stage" not in switched_off_kinds(null_stage)
    assert "stage" in null_stage.exported_fields["deals"]


def test_a_pulled_document_says_which_properties_the_portal_returned():
    """A pull keeps only non-blank values; its document's "properties" tell what the
    portal returned. A list it does not name is not judged."""
    deal = {"id": "5001", "properties": {"dealname": "Harbor renewal", "amount": "100"}}

    def document(properties: dict) -> bytes:
        doc = {"companies": [], "contacts": [], "deals": [deal], "properties": properties}
        return json.dumps(doc).encode()

    returned = parsed([("pull.json", document({"deals": ["amount", "dealname", "dealstage"]}))])
    lacking = parsed([("pull.json", document({"deals": ["amount", "dealname"]}))])
    unnamed = parsed([("pull.json", document({"companies": ["name"]}))])

    assert "missing_stage" not in switched_off_kinds(returned)  # blank on this deal
    assert "missing_stage" in switched_off_kinds(lacking)
    assert "deals" not in unnamed.exported_fields
    assert coverage.missing_columns(lacking)[0]["properties"][0] == "closedate"


# --- the declaration ------------------------------------------------------------------


def test_every_field_a_kind_reads_is_one_an_export_can_have():
    """Each `reads` field is a column of the ingest's table (columns.COLUMNS, or for
    leads Salesforce's), or one that another column or file fills (FILLS,
    FILLED_ELSEWHERE): else no export could ever switch it on."""
    filled = {field for fills in FILLS.values() for field in fills}
    elsewhere = {(listed, key) for listed, (key, _) in FILLED_ELSEWHERE.items()}
    for kind in KINDS.values():
        for need in kind.reads:
            for name in needs_of(need):
                listed, _, field = name.partition(".")
                columns = COLUMNS.get(listed) or BY_LIST[listed].fields
                known = field in columns or field in filled or (listed, field) in elsewhere
                assert known, (kind.name, name)


def test_a_kind_is_judged_only_on_the_lists_the_export_describes():
    kind = Kind(
        "x", (Severity.WARNING,), ("x", "x", "x"), finds="x", fix=FixTarget("deals", "stage"),
        reads=("deals.stage", ("companies.enrichedAt", "companies.updatedAt")),
    )  # fmt: skip
    assert switched_off([kind], {}) == {}
    assert switched_off([kind], {"deals": frozenset({"stage"})}) == {}
    assert switched_off([kind], {"deals": frozenset()}) == {"x": ("deals.stage",)}
    assert switched_off([kind], {"companies": frozenset({"updatedAt"})}) == {}
    assert switched_off([kind], {"companies": frozenset({"name"})}) == {
        "x": ("companies.enrichedAt", "companies.updatedAt")
    }


def test_a_read_field_must_name_its_list():
    with pytest.raises(ValueError, match="LIST.FIELD"):
        Kind("x", (), ("x", "x", "x"), finds="x", fix=FixTarget(None, ""), reads=("stage",))
