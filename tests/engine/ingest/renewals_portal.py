"""A HubSpot portal set up as most are: the default sales pipeline and a second deal
pipeline for renewals, with numeric ids (HubSpot gives custom pipelines and stages
numeric ids), written the ways such a portal reaches revreview:

- a CSV export with every property (knowledge.hubspot.com, "Export your records"):
  labelled columns, stage and pipeline *labels*, HubSpot's state columns `Is Closed
  Won`, `Is Deal Closed?`, `Deal probability`, owners (`Deal owner`, ...) and sources
  (`Record source`, `Record source detail 1`, `Original Source`);
- the same export without the state columns, beside the portal's `GET
  /crm/v3/pipelines/deals` response ({"results": [{"id", "label", "displayOrder",
  "stages": [{"id", "label", "displayOrder", "metadata": {"isClosed": "true",
  "probability": "1.0"}, ...}]}]}, metadata values as strings);
- CRM API JSON (`GET /crm/v3/objects/deals?properties=...&associations=...`) with
  stage and pipeline *ids*, `hubspot_owner_id`, `hs_object_source_label`, beside
  the same pipelines response;
- the export saved as XLSX, cells typed (numbers, dates, booleans), and as XLS.

Planted problems (as of 2026-08-01): renewal 40001 won without a close date
(critical), renewal 40002 open past its close date (warning), sales deal 40005 won
with amount 0 (critical). Everything else is well-formed.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

RENEWALS_ID = "98765432"
STAGES = {  # id -> (label, pipeline id, closed, probability)
    "appointmentscheduled": ("Appointment Scheduled", "default", False, "0.2"),
    "contractsent": ("Contract Sent", "default", False, "0.9"),
    "closedwon": ("Closed Won", "default", True, "1.0"),
    "closedlost": ("Closed Lost", "default", True, "0.0"),
    "1234567": ("Renewal Due", RENEWALS_ID, False, "0.5"),
    "1234568": ("Renewal Won", RENEWALS_ID, True, "1.0"),
    "1234569": ("Renewal Lost", RENEWALS_ID, True, "0.0"),
}
PIPELINE_LABELS = {"default": "Sales Pipeline", RENEWALS_ID: "Renewals"}

COMPANIES = [
    {"id": "30117000101", "name": "Northwind Traders", "domain": "northwind.example",
     "updatedAt": "2026-07-28T10:00:00Z", "owner": "Avery Chen",
     "source": "CRM UI", "detail": "sales@northwind.example"},
    {"id": "30117000102", "name": "Contoso", "domain": "contoso.example",
     "updatedAt": "2026-07-25T10:00:00Z", "owner": "Jordan Lee",
     "source": "Import", "detail": "Q2 trade show list"},
    {"id": "30117000103", "name": "Fabrikam", "domain": "fabrikam.example",
     "updatedAt": "2026-07-20T10:00:00Z", "owner": "Avery Chen",
     "source": "Integration", "detail": "Salesforce"},
]  # fmt: skip
CONTACTS = [
    # "Company Name" is a free-text property: Contoso, but the association is Northwind.
    {"id": "30117000201", "first": "Owen", "last": "Price", "email": "owen@northwind.example",
     "company": "30117000101", "companyName": "Contoso", "owner": "Avery Chen",
     "source": "Forms", "detail": "Demo request"},
    {"id": "30117000202", "first": "Maya", "last": "Singh", "email": "maya@contoso.example",
     "company": "30117000102", "companyName": "Contoso", "owner": "Jordan Lee",
     "source": "Import", "detail": "Q2 trade show list"},
    {"id": "30117000203", "first": "Lee", "last": "Wong", "email": "lee@fabrikam.example",
     "company": "30117000103", "companyName": "Fabrikam", "owner": "Avery Chen",
     "source": "CRM UI", "detail": ""},
]  # fmt: skip
DEALS = [
    {"id": "40001", "name": "Northwind — renewal 2026", "stage": "1234568", "amount": "120000",
     "close": None, "company": "30117000101", "contacts": ["30117000201"],
     "owner": "Avery Chen", "source": "CRM UI"},
    {"id": "40002", "name": "Contoso — renewal 2026", "stage": "1234567", "amount": "64000.5",
     "close": "2026-06-30", "company": "30117000102", "contacts": ["30117000202"],
     "owner": "Jordan Lee", "source": "Automation"},
    {"id": "40003", "name": "Fabrikam — renewal 2026", "stage": "1234569", "amount": "30000",
     "close": "2026-05-01", "company": "30117000103", "contacts": ["30117000203"],
     "owner": "Avery Chen", "source": "CRM UI"},
    {"id": "40004", "name": "Northwind — expansion", "stage": "contractsent", "amount": "50000",
     "close": "2026-09-30", "company": "30117000101", "contacts": ["30117000201"],
     "owner": "Jordan Lee", "source": "CRM UI"},
    {"id": "40005", "name": "Contoso — platform", "stage": "closedwon", "amount": "0",
     "close": "2026-07-15", "company": "30117000102", "contacts": ["30117000202"],
     "owner": "Jordan Lee", "source": "Sales extension"},
    {"id": "40006", "name": "Fabrikam — renewal 2027", "stage": "1234567", "amount": "80000",
     "close": "2027-01-31", "company": "30117000103", "contacts": ["30117000203"],
     "owner": "Avery Chen", "source": "CRM UI"},
]  # fmt: skip

# (kind, record ids, severity) the review must report, and nothing else of pipeline.
PLANTED = {
    ("won_without_close_date", ("40001",), "critical"),
    ("open_past_close_date", ("40002",), "warning"),
    ("won_without_amount", ("40005",), "critical"),
}


def pipelines_response() -> dict:
    """What GET /crm/v3/pipelines/deals answers for this portal."""
    results = []
    for order, pid in enumerate(("default", RENEWALS_ID)):
        stages = [
            {"id": sid, "label": label, "displayOrder": i,
             "metadata": {"isClosed": "true" if closed else "false", "probability": p},
             "createdAt": "2024-03-01T10:00:00.000Z", "updatedAt": "2024-03-01T10:00:00.000Z",
             "archived": False}
            for i, (sid, (label, owner, closed, p)) in enumerate(STAGES.items())
            if owner == pid
        ]  # fmt: skip
        results.append(
            {"id": pid, "label": PIPELINE_LABELS[pid], "displayOrder": order, "stages": stages,
             "createdAt": "2024-03-01T10:00:00.000Z", "updatedAt": "2024-03-01T10:00:00.000Z",
             "archived": False}
        )  # fmt: skip
    return {"results": results}


def pipelines_file() -> tuple[str, bytes]:
    return ("pipelines.json", json.dumps(pipelines_response()).encode())


def _state(stage: str) -> tuple[bool, bool, float]:
    _, _, closed, probability = STAGES[stage]
    return closed, closed and probability == "1.0", float(probability)


def tables(*, state_columns: bool) -> dict[str, list[list]]:
    """The three exports as rows of typed values (headers first), as HubSpot labels them."""
    companies = [["Record ID", "Company name", "Company Domain Name", "Last Modified Date",
                  "Company owner", "Record source", "Record source detail 1"]]  # fmt: skip
    for c in COMPANIES:
        modified = datetime.fromisoformat(c["updatedAt"].replace("Z", "+00:00"))
        companies.append([int(c["id"]), c["name"], c["domain"], modified.replace(tzinfo=None),
                          c["owner"], c["source"], c["detail"]])  # fmt: skip
    contacts = [["Record ID", "First Name", "Last Name", "Email", "Company Name",
                 "Associated Company IDs (Primary)", "Contact owner", "Original Source",
                 "Original Source Drill-Down 1"]]  # fmt: skip
    for c in CONTACTS:
        contacts.append([int(c["id"]), c["first"], c["last"], c["email"], c["companyName"],
                         int(c["company"]), c["owner"], c["source"], c["detail"]])  # fmt: skip
    head = ["Record ID", "Deal Name", "Pipeline", "Deal Stage", "Amount", "Close Date",
            "Associated Company IDs (Primary)", "Associated Contact IDs", "Deal owner",
            "Record source"]  # fmt: skip
    if state_columns:
        head += ["Is Closed Won", "Is Deal Closed?", "Deal probability"]
    deals = [head]
    for d in DEALS:
        label, pipeline, _, _ = STAGES[d["stage"]]
        row = [int(d["id"]), d["name"], PIPELINE_LABELS[pipeline], label,
               float(d["amount"]) if "." in d["amount"] else int(d["amount"]),
               date.fromisoformat(d["close"]) if d["close"] else None,
               int(d["company"]), ";".join(d["contacts"]), d["owner"], d["source"]]  # fmt: skip
        if state_columns:
            closed, won, probability = _state(d["stage"])
            row += [won, closed, probability]
        deals.append(row)
    return {"companies": companies, "contacts": contacts, "deals": deals}


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def csv_files(*, state_columns: bool = True) -> list[tuple[str, bytes]]:
    files = []
    for kind, rows in tables(state_columns=state_columns).items():
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerows([[_cell_text(v) for v in row] for row in rows])
        files.append((f"{kind}.csv", out.getvalue().encode()))
    return files


def xlsx_files(*, state_columns: bool = True) -> list[tuple[str, bytes]]:
    """One workbook per export, one sheet each, cells typed, as Excel saves them."""
    from openpyxl import Workbook

    files = []
    for kind, rows in tables(state_columns=state_columns).items():
        book = Workbook()
        sheet = book.active
        sheet.title = f"hubspot-crm-exports-{kind}"[:31]
        for row in rows:
            sheet.append(row)
        out = io.BytesIO()
        book.save(out)
        files.append((f"{kind}.xlsx", out.getvalue()))
    return files


def xls_files(*, state_columns: bool = True) -> list[tuple[str, bytes]]:
    """The same as legacy XLS (BIFF8), dates as formatted date cells."""
    import xlwt

    files = []
    date_style = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    for kind, rows in tables(state_columns=state_columns).items():
        book = xlwt.Workbook()
        sheet = book.add_sheet(kind)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if isinstance(value, datetime | date):
                    sheet.write(r, c, value, date_style)
                elif value is not None:
                    sheet.write(r, c, value)
        out = io.BytesIO()
        book.save(out)
        files.append((f"{kind}.xls", out.getvalue()))
    return files


def api_files() -> list[tuple[str, bytes]]:
    """GET /crm/v3/objects/{type} pages: stage and pipeline ids, owner ids."""
    owner_ids = {"Avery Chen": "71000001", "Jordan Lee": "71000002"}

    def obj(rid: str, properties: dict, associations: dict | None = None) -> dict:
        found = {
            "id": rid,
            "properties": {k: v for k, v in properties.items() if v not in (None, "")},
            "createdAt": "2026-01-05T10:00:00.000Z",
            "updatedAt": "2026-07-01T00:00:00.000Z",
            "archived": False,
        }
        if associations:
            found["associations"] = associations
        return found

    companies = [
        obj(c["id"], {"name": c["name"], "domain": c["domain"], "hs_object_id": c["id"],
                      "hs_lastmodifieddate": c["updatedAt"],
                      "hubspot_owner_id": owner_ids[c["owner"]],
                      "hs_object_source_label": c["source"],
                      "hs_object_source_detail_1": c["detail"]})
        for c in COMPANIES
    ]  # fmt: skip
    contacts = [
        obj(c["id"], {"firstname": c["first"], "lastname": c["last"], "email": c["email"],
                      "company": c["companyName"], "hubspot_owner_id": owner_ids[c["owner"]],
                      "hs_analytics_source": c["source"],
                      "hs_analytics_source_data_1": c["detail"]},
            {"companies": {"results": [{"id": c["company"], "type": "contact_to_company"}]}})
        for c in CONTACTS
    ]  # fmt: skip
    deals = []
    for d in DEALS:
        _, pipeline, _, _ = STAGES[d["stage"]]
        deals.append(obj(
            d["id"],
            {"dealname": d["name"], "dealstage": d["stage"], "pipeline": pipeline,
             "amount": d["amount"], "closedate": f"{d['close']}T00:00:00Z" if d["close"] else None,
             "hubspot_owner_id": owner_ids[d["owner"]], "hs_object_source_label": d["source"]},
            {"companies": {"results": [{"id": d["company"], "type": "deal_to_company"}]},
             "contacts": {"results": [{"id": i, "type": "deal_to_contact"}
                                      for i in d["contacts"]]}},
        ))  # fmt: skip
    return [
        (f"{kind}.json", json.dumps({"results": items, "paging": {}}).encode())
        for kind, items in (("companies", companies), ("contacts", contacts), ("deals", deals))
    ]
