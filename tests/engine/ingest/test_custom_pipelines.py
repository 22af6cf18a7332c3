"""A portal with a custom renewals pipeline (issue 21) reviewed from every form it
reaches revreview in: the planted problems found with their severities and verdict,
no unknown_stage / invalid_value / dangling_reference on well-formed deals, and the
same findings in every form."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from reviews.engine.batch import Batch
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.engine.ingest.pipelines import pipelines_from_data, pipelines_from_hubspot
from reviews.orchestration.store.parsed import parse
from tests.engine.ingest import renewals_portal as portal
from tests.engine.ingest.helpers import RECEIVED
from tests.engine.ingest.test_real_exports import keys, money, review

FORMS = {
    "csv with state columns": lambda: portal.csv_files(state_columns=True),
    "csv + pipelines response": lambda: [
        *portal.csv_files(state_columns=False),
        portal.pipelines_file(),
    ],
    "crm api json + pipelines response": lambda: [*portal.api_files(), portal.pipelines_file()],
    "xlsx with state columns": lambda: portal.xlsx_files(state_columns=True),
    "xlsx + pipelines response": lambda: [
        *portal.xlsx_files(state_columns=False),
        portal.pipelines_file(),
    ],
    "xls with state columns": lambda: portal.xls_files(state_columns=True),
}
STAGE_SOURCE = {
    "csv with state columns": "state_columns",
    "csv + pipelines response": "export",
    "crm api json + pipelines response": "export",
    "xlsx with state columns": "state_columns",
    "xlsx + pipelines response": "export",
    "xls with state columns": "state_columns",
}
NEVER_ON_WELL_FORMED = {"unknown_stage", "invalid_value", "dangling_reference"}


def read(files, **kwargs) -> Batch:
    uploads = [UploadedFile(name, data) for name, data in files]
    return parse(uploads, as_of=portal.AS_OF, received_at=RECEIVED, **kwargs)


@pytest.fixture(scope="module")
def reference():
    return review(read(FORMS["csv with state columns"]()))


@pytest.mark.parametrize("form", FORMS)
def test_every_form_finds_the_planted_problems_and_nothing_else(form, reference):
    batch = read(FORMS[form]())
    result = review(batch)

    found = {(f.kind, tuple(sorted(f.record_ids)), f.severity) for f in result.findings}
    assert {f for f in found if f[0] in {k for k, _, _ in portal.PLANTED}} == portal.PLANTED
    assert not {f for f in found if f[0] in NEVER_ON_WELL_FORMED}
    assert result.decision == "request_changes"
    assert batch.value_problems == []
    assert keys(result) == keys(reference)
    assert money(result) == money(reference)
    assert batch.stage_source() == STAGE_SOURCE[form]
    assert "unknown" not in batch.stage_sources()


def test_without_state_columns_or_pipelines_renewals_are_unknown_stages():
    batch = read(portal.csv_files(state_columns=False))
    result = review(batch)

    unknown = {f.record_ids[0] for f in result.findings if f.kind == "unknown_stage"}
    assert unknown == {"40001", "40002", "40003", "40006"}  # the renewals: nothing describes them
    assert batch.stage_sources() == {"default": 2, "unknown": 4}


def test_dataset_pipelines_describe_a_later_csv_sync():
    known = pipelines_from_data(
        [
            {"id": p.id, "label": p.label, "stages": [
                {"id": s.id, "label": s.label, "closed": s.closed, "won": s.won}
                for s in p.stages]}
            for p in pipelines_from_hubspot(portal.pipelines_response())
        ]
    )  # fmt: skip
    batch = read(portal.csv_files(state_columns=False), pipelines=None)
    batch.use_pipelines(known)
    result = review(batch)

    assert not any(f.kind == "unknown_stage" for f in result.findings)
    assert batch.stage_sources() == {"dataset": 6}
    assert keys(result) == keys(review(read(portal.csv_files(state_columns=True))))


def test_owner_and_source_kept_from_every_form():
    for form in ("csv with state columns", "crm api json + pipelines response",
                 "xlsx with state columns"):  # fmt: skip
        batch = read(FORMS[form]())
        deal = next(d for d in batch.deals if d.id == "40001")
        company = next(c for c in batch.companies if c.id == "30117000102")
        contact = next(c for c in batch.contacts if c.id == "30117000201")
        assert deal.owner in ("Avery Chen", "71000001"), form
        assert deal.record_source == "CRM UI", form
        assert (company.record_source, company.record_source_detail) == (
            "Import",
            "Q2 trade show list",
        ), form
        assert contact.record_source == "Forms", form
        # "Company Name" is a property, not an association: Northwind stays the company.
        assert contact.company_id == "30117000101", form


def test_pipelines_from_hubspot_reads_the_v3_response():
    pipelines = {p.id: p for p in pipelines_from_hubspot(portal.pipelines_response())}

    renewals = pipelines[portal.RENEWALS_ID]
    assert renewals.label == "Renewals"
    won = renewals.find_stage("Renewal Won")
    assert (won.id, won.closed, won.won, won.probability) == ("1234568", True, True, 1.0)
    lost = renewals.find_stage("1234569")
    assert (lost.closed, lost.won, lost.probability) == (True, False, 0.0)
    due = renewals.find_stage("renewal due")
    assert (due.closed, due.won) == (False, False)


def test_crm_api_state_properties_describe_custom_stages():
    files = []
    for name, data in portal.api_files():
        if name == "deals.json":
            page = json.loads(data)
            for obj in page["results"]:
                closed, won, probability = portal._state(obj["properties"]["dealstage"])
                obj["properties"] |= {
                    "hs_is_closed_won": "true" if won else "false",
                    "hs_is_closed": "true" if closed else "false",
                    "hs_deal_stage_probability": str(probability),
                }
            data = json.dumps(page).encode()
        files.append((name, data))

    batch = read(files)

    assert batch.stage_sources() == {"state_columns": 6}  # asked before the default
    assert keys(review(batch)) == keys(review(read(portal.csv_files())))


def test_xlsx_exports_and_pipelines_inside_one_zip():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in [*portal.xlsx_files(state_columns=False), portal.pipelines_file()]:
            archive.writestr(f"hubspot-export/{name}", data)

    batch = read([("export.zip", out.getvalue())])

    assert batch.stage_sources() == {"export": 6}
    assert {p.id for p in batch.uploaded_pipelines} == {"default", portal.RENEWALS_ID}


def test_native_json_keeps_owner_and_record_source():
    doc = {
        "companies": [{"id": "c1", "name": "Acme", "owner": "Avery Chen",
                       "recordSource": "Import", "recordSourceDetail": "Q2 list"}],
        "contacts": [{"id": "p1", "email": "a@acme.example", "companyId": "c1",
                      "owner": 71000001}],
        "deals": [{"id": "d1", "stage": "closedwon", "companyId": "c1", "owner": ["x"]}],
    }  # fmt: skip

    batch = read([("batch.json", json.dumps(doc).encode())])

    company, contact, deal = batch.companies[0], batch.contacts[0], batch.deals[0]
    assert (company.owner, company.record_source, company.record_source_detail) == (
        "Avery Chen", "Import", "Q2 list",
    )  # fmt: skip
    assert contact.owner == "71000001"  # HubSpot's owner id, as a number
    assert deal.owner is None
    assert [(p.path, p.category) for p in batch.value_problems] == [
        ("deals[0].owner", "attribution")
    ]


def test_an_upload_of_only_pipelines_is_refused():
    with pytest.raises(IngestError) as caught:
        read([portal.pipelines_file()])

    assert "holds only deal pipelines" in caught.value.errors[0]
