"""One batch written the ways HubSpot users send it, for the ingest tests.

BATCH is a native JSON batch (docs/input.md) with planted problems. The writers below give
the same records as HubSpot produces them, following HubSpot's documentation:

- a CSV export (knowledge.hubspot.com, "Export your records"): columns labelled with
  the property labels (Record ID, Company name, Company Domain Name, Deal Stage, ...),
  associations as "Associated Company IDs (Primary)" / "Associated Company IDs" /
  "Associated Company" (names) with several ids joined by ";", stage and pipeline
  labels, dates as "2026-07-30 10:11";
- that export saved again by Excel in a US or a German locale ("$410,000.50",
  "07/31/2026"; "410.000,50 €", "31.07.2026", ";" delimited, German labels);
- the same export with internal property names (hs_object_id, dealname, dealstage,
  closedate, amount, associatedcompanyid, hs_lastmodifieddate, ...);
- the JSON of GET /crm/v3/objects/{type}?associations=...: {"results": [{"id",
  "properties" (all strings), "createdAt", "updatedAt", "archived", "associations":
  {"companies": {"results": [{"id", "type": "deal_to_company"}, ...]}}}], "paging"}.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from datetime import UTC, datetime
from decimal import Decimal

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

BATCH: dict = {
    "id": "acme-sync",
    "exportedAt": "2026-08-01T09:00:00Z",
    "source": "hubspot",
    "companies": [
        {"id": "9001", "name": "Vertex Robotics", "domain": "vertexrobotics.example",
         "enrichedAt": "2026-05-02", "updatedAt": "2026-07-30T10:11:00Z"},
        {"id": "9002", "name": "Vertex Robotics GmbH", "domain": "www.vertexrobotics.example",
         "updatedAt": "2026-07-12T08:00:00Z"},
        {"id": "9003", "name": "Granite Packaging", "domain": "granitepackaging.example",
         "enrichedAt": "2025-11-01", "updatedAt": "2025-11-01T00:00:00Z"},
        {"id": "9004", "name": "Harbor Analytics", "domain": "harbor.example",
         "updatedAt": "2026-07-20T16:45:00Z"},
    ],
    "contacts": [
        {"id": "7001", "email": "dana.kim@vertexrobotics.example", "firstName": "Dana",
         "lastName": "Kim", "companyId": "9001"},
        {"id": "7002", "email": "owen@granitepackaging.example", "firstName": "Owen",
         "lastName": "Price", "companyId": "9004"},
        {"id": "7003", "email": "maya@harbor.example", "firstName": "Maya",
         "lastName": "Singh", "companyId": "9004", "companyIds": ["9004", "9003"]},
        {"id": "7004", "email": "DANA.KIM@vertexrobotics.example", "firstName": "Dana",
         "lastName": "Kim", "companyId": "9001"},
        {"id": "7005", "email": "lee@gmail.com", "firstName": "Lee", "lastName": "Wong",
         "companyId": "9999"},
    ],
    "deals": [
        {"id": "5001", "name": "Vertex — cell automation", "amount": "410000.50",
         "stage": "decisionmakerboughtin", "closeDate": "2026-09-30", "companyId": "9001",
         "contactIds": ["7001"]},
        {"id": "5002", "name": "Vertex - Cell Automation", "amount": "410000.50",
         "stage": "decisionmakerboughtin", "closeDate": "2026-10-02", "companyId": "9001",
         "contactIds": ["7001"]},
        {"id": "5003", "name": "Granite — packaging line", "amount": "250000",
         "stage": "closedwon", "closeDate": "2026-06-30", "companyId": "9003",
         "contactIds": ["7002"]},
        {"id": "5004", "name": "Harbor — renewal", "amount": "-5000",
         "stage": "appointmentscheduled", "closeDate": "2026-07-15", "companyId": "9004",
         "contactIds": ["7003"]},
        {"id": "5005", "name": "Harbor — analytics", "stage": "closedwon",
         "closeDate": "2026-07-31", "companyId": "9004", "contactIds": ["7003"]},
        {"id": "5006", "name": "Granite — expansion", "amount": "1250000",
         "stage": "qualifiedtobuy", "closeDate": "2026-12-31", "companyId": "9003",
         "contactIds": []},
    ],
}  # fmt: skip

STAGE_LABELS = {
    "en": {
        "appointmentscheduled": "Appointment Scheduled",
        "qualifiedtobuy": "Qualified To Buy",
        "decisionmakerboughtin": "Decision Maker Bought-In",
        "closedwon": "Closed Won",
    },
    "de": {
        "appointmentscheduled": "Termin vereinbart",
        "qualifiedtobuy": "Qualifiziert zum Kauf",
        "decisionmakerboughtin": "Entscheidungsträger an Bord",
        "closedwon": "Abgeschlossen und gewonnen",
    },
}

HEADERS = {
    "en": {
        "id": "Record ID", "name": "Company name", "domain": "Company Domain Name",
        "industry": "Industry", "modified": "Last Modified Date", "enriched": "Enriched At",
        "email": "Email", "first": "First Name", "last": "Last Name",
        "primary": "Associated Company IDs (Primary)", "companies": "Associated Company IDs",
        "company_name": "Associated Company", "deal": "Deal Name", "stage": "Deal Stage",
        "pipeline": "Pipeline", "amount": "Amount", "home": "Amount in company currency",
        "currency": "Currency", "close": "Close Date", "contacts": "Associated Contact IDs",
        "owner": "Deal owner",
    },
    "de": {
        "id": "Datensatz-ID", "name": "Unternehmensname", "domain": "Domain-Name des Unternehmens",
        "industry": "Branche", "modified": "Zuletzt geändert am", "enriched": "Enriched At",
        "email": "E-Mail", "first": "Vorname", "last": "Nachname",
        "primary": "Zugeordnete Unternehmens-IDs (primär)",
        "companies": "Zugeordnete Unternehmens-IDs", "company_name": "Zugeordnetes Unternehmen",
        "deal": "Name des Deals", "stage": "Dealphase", "pipeline": "Pipeline",
        "amount": "Betrag", "home": "Betrag in Firmenwährung", "currency": "Währung",
        "close": "Abschlussdatum", "contacts": "Zugeordnete Kontakt-IDs", "owner": "Dealinhaber",
    },
    "internal": {
        "id": "hs_object_id", "name": "name", "domain": "domain", "industry": "industry",
        "modified": "hs_lastmodifieddate", "enriched": "Enriched At", "email": "email",
        "first": "firstname", "last": "lastname", "primary": "associatedcompanyid",
        "companies": "Associated Company IDs", "company_name": "Associated Company",
        "deal": "dealname", "stage": "dealstage", "pipeline": "pipeline", "amount": "amount",
        "home": "amount_in_home_currency", "currency": "deal_currency_code",
        "close": "closedate", "contacts": "Associated Contact IDs", "owner": "hubspot_owner_id",
    },
}  # fmt: skip


def _stamp(value: str, style: str) -> str:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if style == "excel_us":
        return moment.strftime("%m/%d/%Y %H:%M") if "T" in value else moment.strftime("%m/%d/%Y")
    if style == "excel_de":
        return moment.strftime("%d.%m.%Y %H:%M") if "T" in value else moment.strftime("%d.%m.%Y")
    return moment.strftime("%Y-%m-%d %H:%M") if "T" in value else value


def _money(amount: str | None, style: str) -> str:
    if amount is None:
        return ""
    value = Decimal(amount)
    sign = "-" if value < 0 else ""
    if style == "excel_us":
        return f"{sign}${abs(value):,.2f}"
    if style == "excel_de":
        text = f"{abs(value):,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")
        return f"{sign}{text} €"
    return amount


def csv_files(
    batch: dict = BATCH,
    *,
    style: str = "hubspot",
    language: str = "en",
    names_only: bool = False,
) -> list[tuple[str, bytes]]:
    """companies.csv, contacts.csv, deals.csv as HubSpot (style "hubspot") or Excel
    ("excel_us", "excel_de") writes them. `names_only`: the contacts' company
    association is the company name only (an "Associated Company" column)."""
    h = HEADERS[language]
    delimiter = ";" if style == "excel_de" else ","
    names = {c["id"]: c["name"] for c in batch["companies"]}
    companies = [[h["id"], h["name"], h["domain"], h["industry"], h["enriched"], h["modified"]]]
    for c in batch["companies"]:
        companies.append(
            [c["id"], c["name"], c.get("domain", ""), "MACHINERY",
             _stamp(c["enrichedAt"], style) if c.get("enrichedAt") else "",
             _stamp(c["updatedAt"], style) if c.get("updatedAt") else ""]
        )  # fmt: skip
    if names_only:
        contacts = [[h["id"], h["first"], h["last"], h["email"], h["company_name"]]]
    else:
        contacts = [[h["id"], h["first"], h["last"], h["email"], h["primary"], h["companies"]]]
    for c in batch["contacts"]:
        row = [c["id"], c.get("firstName", ""), c.get("lastName", ""), c.get("email", "")]
        if names_only:
            row.append(names.get(c.get("companyId"), ""))
        else:
            listed = c.get("companyIds") or ([c["companyId"]] if c.get("companyId") else [])
            row += [c.get("companyId", ""), ";".join(listed)]
        contacts.append(row)
    deals = [[
        h["id"], h["deal"], h["stage"], h["pipeline"], h["amount"], h["home"], h["currency"],
        h["close"], h["primary"], h["companies"], h["contacts"], h["owner"],
    ]]  # fmt: skip
    for d in batch["deals"]:
        stage = d["stage"] if language == "internal" else STAGE_LABELS[language][d["stage"]]
        pipeline = "default" if language == "internal" else "Sales Pipeline"
        amount = _money(d.get("amount"), style)
        deals.append([
            d["id"], d["name"], stage, pipeline, amount, amount, "USD" if amount else "",
            _stamp(d["closeDate"], style) if d.get("closeDate") else "",
            d.get("companyId", ""), d.get("companyId", ""), ";".join(d.get("contactIds", [])),
            "Jordan Lee",
        ])  # fmt: skip
    return [
        (f"{kind}.csv", _write(rows, delimiter, bom=style.startswith("excel")))
        for kind, rows in (("companies", companies), ("contacts", contacts), ("deals", deals))
    ]


def _write(rows: list[list[str]], delimiter: str, *, bom: bool) -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return ("\ufeff" if bom else "").encode() + out.getvalue().encode()


def _api_object(record: dict, properties: dict, associations: dict) -> dict:
    stamp = properties.get("hs_lastmodifieddate") or "2026-07-01T00:00:00Z"
    if record.get("owner"):  # BATCH has none; a copy with owners gets HubSpot's property
        properties = {**properties, "hubspot_owner_id": record["owner"]}
    obj = {
        "id": record["id"],
        "properties": {k: v for k, v in properties.items() if v is not None},
        "createdAt": "2026-01-05T10:00:00.000Z",
        "updatedAt": stamp,
        "archived": False,
    }
    if associations:
        obj["associations"] = associations
    return obj


def _to_company(kind: str, primary: str | None, listed: list[str]) -> dict:
    results = []
    for company_id in listed or ([primary] if primary else []):
        if company_id == primary:
            results.append({"id": company_id, "type": f"{kind}_to_company"})
        results.append({"id": company_id, "type": f"{kind}_to_company_unlabeled"})
    return {"companies": {"results": results}} if results else {}


def api_objects(batch: dict = BATCH) -> dict[str, list[dict]]:
    """The objects of each type as /crm/v3/objects returns them."""
    companies = [
        _api_object(
            c,
            {"name": c["name"], "domain": c.get("domain"), "hs_object_id": c["id"],
             "hs_lastmodifieddate": c.get("updatedAt"), "industry": "MACHINERY"},
            {},
        )
        for c in batch["companies"]
    ]  # fmt: skip
    contacts = [
        _api_object(
            c,
            {"email": c.get("email"), "firstname": c.get("firstName"),
             "lastname": c.get("lastName"), "hs_object_id": c["id"]},
            _to_company("contact", c.get("companyId"), c.get("companyIds", [])),
        )
        for c in batch["contacts"]
    ]  # fmt: skip
    deals = []
    for d in batch["deals"]:
        associations = _to_company("deal", d.get("companyId"), [])
        if d.get("contactIds"):
            associations["contacts"] = {
                "results": [{"id": i, "type": "deal_to_contact"} for i in d["contactIds"]]
            }
        close = f"{d['closeDate']}T00:00:00Z" if d.get("closeDate") else None
        deals.append(
            _api_object(
                d,
                {"dealname": d["name"], "amount": d.get("amount"), "dealstage": d["stage"],
                 "pipeline": "default", "closedate": close, "hs_object_id": d["id"],
                 "deal_currency_code": "USD"},
                associations,
            )
        )  # fmt: skip
    return {"companies": companies, "contacts": contacts, "deals": deals}


def api_files(batch: dict = BATCH, *, combined: bool = False) -> list[tuple[str, bytes]]:
    objects = api_objects(batch)
    if combined:
        return [("hubspot.json", json.dumps(objects).encode())]
    return [
        (f"{kind}.json", json.dumps({"results": items, "paging": {}}).encode())
        for kind, items in objects.items()
    ]


def native_file(batch: dict = BATCH) -> list[tuple[str, bytes]]:
    return [("batch.json", json.dumps(copy.deepcopy(batch)).encode())]
