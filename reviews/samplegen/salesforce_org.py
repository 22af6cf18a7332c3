"""A small Salesforce org, written in each shape Salesforce exports it in, and as the
same data in revreview's native JSON (docs/input.md). One definition, four files sets:

- data_export(): the weekly Data Export's CSV files (API names, every value quoted,
  booleans true/false, datetimes in UTC with Z), with a Task.csv revreview does not read;
  samples/salesforce/ holds these (tests/samplegen/test_salesforce_org.py checks);
- data_loader(): Data Loader's "Export All" (API names, the recycle bin included: a
  deleted opportunity and contact, an account merged away; datetimes as the REST API
  writes them, 2026-05-02T10:11:00.000+0000) with the org's OpportunityStage;
- reports(): report exports (labels, 15-character ids, checkboxes 1/0, dates as a US
  user sees them, amounts with their currency code, a Classic report's footer);
- native_json(): the same live records, HubSpot-shaped.

Planted: a duplicate account, a contact on the wrong account, a won opportunity without
a close date, an open one past its close date, a lead that is already a contact, two
leads with one email, a lead without an owner and one owned by an inactive user; the
amounts are in USD and EUR; one stage is the org's own (Pilot Running)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from reviews.engine.ingest.salesforce.ids import to18

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

# fmt: off
# (the org's records are tables: one record a line reads better than the formatter's)


def _id(prefix: str, n: int) -> str:
    """A 15-character id of the object's key prefix, in the shape of a real org's."""
    return f"{prefix}5g0000{'AbC' if n % 2 else 'XyZ'}{n:03d}"


USR = {k: _id("005", n) for n, k in enumerate(("dana", "marco", "priya"), start=1)}
USERS = [  # key, first, last, active
    ("dana", "Dana", "Whitfield", True),
    ("marco", "Marco", "Ferri", True),
    ("priya", "Priya", "Nair", False),  # left the company; still owns a lead
]
ACC = {k: _id("001", n)
       for n, k in enumerate(("vertex", "vertex2", "halvorsen", "bright", "halv_old"), 1)}
ACCOUNTS = [  # key, name, website, owner, source, industry, city, modified
    ("vertex", "Vertex Robotics", "https://www.vertexrobotics.example", "dana", "Web",
     "Machinery", "Pittsburgh", "2026-07-30T10:11:00"),
    ("vertex2", "Vertex Robotics", "vertexrobotics.example", "marco", "Trade Show",
     "Machinery", "Pittsburgh", "2026-07-28T08:00:00"),
    ("halvorsen", "Halvorsen Marine", "http://halvorsen-marine.example", "dana",
     "Partner Referral", "Transportation", "Bergen", "2026-07-20T12:30:00"),
    ("bright", "Brightwater Analytics GmbH", "https://brightwater.example/de", "marco", "Web",
     "Technology", "Hamburg", "2026-08-01T09:00:00"),
]
MERGED_ACCOUNT = ("halv_old", "Halvorsen Marine AS", "halvorsen-marine.example", "dana", "Web",
                  "Transportation", "Bergen", "2026-06-02T07:45:00")
CON = {k: _id("003", n)
       for n, k in enumerate(("dana", "lars", "jonas", "ingrid", "mei", "old"), 1)}
CONTACTS = [  # key, first, last, email, account, owner, source, title, modified
    ("dana", "Dana", "Kim", "dana.kim@vertexrobotics.example", "vertex", "dana", "Web", "COO",
     "2026-07-30T10:11:00"),
    ("lars", "Lars", "Halvorsen", "lars@halvorsen-marine.example", "halvorsen", "dana",
     "Partner Referral", "CEO", "2026-07-15T09:00:00"),
    # works at Brightwater (its email domain), entered on Halvorsen's account
    ("jonas", "Jonas", "Weber", "jonas.weber@brightwater.example", "halvorsen", "marco", "Web",
     "Head of Data", "2026-07-02T14:20:00"),
    ("ingrid", "Ingrid", "Berg", "ingrid@halvorsen-marine.example", "halvorsen", "dana", "Web",
     "CFO", "2026-06-02T07:45:00"),
    ("mei", "Mei", "Tanaka", "mei@brightwater.example", "bright", "marco", "Web", "CTO",
     "2026-07-25T16:05:00"),
]
DELETED_CONTACT = ("old", "Sam", "Old", "sam@vertexrobotics.example", "vertex", "dana", "Web",
                   "Buyer", "2026-05-01T10:00:00")
OPP = {k: _id("006", n)
       for n, k in enumerate(("cell", "fleet", "platform", "pilot", "spares", "gone"), 1)}
OPPORTUNITIES = [  # key, name, account, amount, currency, stage, close, owner, source, modified
    ("cell", "Vertex — cell automation", "vertex", "410000.00", "USD", "Negotiation/Review",
     "2026-12-15", "dana", "Web", "2026-07-30T10:11:00"),
    ("fleet", "Halvorsen — fleet telemetry", "halvorsen", "120000.00", "EUR", "Closed Won", "",
     "dana", "Partner Referral", "2026-07-20T12:30:00"),
    ("platform", "Brightwater — analytics platform", "bright", "85000.00", "EUR",
     "Proposal/Price Quote", "2026-06-30", "marco", "Web", "2026-07-01T11:00:00"),
    ("pilot", "Vertex — service pilot", "vertex2", "30000.00", "USD", "Pilot Running",
     "2026-11-30", "marco", "Trade Show", "2026-07-28T08:00:00"),
    ("spares", "Halvorsen — spares", "halvorsen", "15000.00", "EUR", "Closed Lost",
     "2026-03-01", "dana", "Web", "2026-03-02T08:00:00"),
]
DELETED_OPPORTUNITY = ("gone", "Vertex — old quote", "vertex", "9000.00", "USD", "Prospecting",
                       "2026-02-01", "dana", "Web", "2026-02-02T08:00:00")
STAGES = [  # api name (= label), closed, won, default probability, sort order, active
    ("Prospecting", False, False, 10), ("Qualification", False, False, 10),
    ("Needs Analysis", False, False, 20), ("Value Proposition", False, False, 50),
    ("Id. Decision Makers", False, False, 60), ("Perception Analysis", False, False, 70),
    ("Proposal/Price Quote", False, False, 75), ("Negotiation/Review", False, False, 90),
    ("Pilot Running", False, False, 60),  # the org's own stage
    ("Closed Won", True, True, 100), ("Closed Lost", True, False, 0),
]
_STAGE = {name: (closed, won, p) for name, closed, won, p in STAGES}
LEA = {k: _id("00Q", n) for n, k in enumerate(("lars", "ana", "ana2", "tom", "mei"), 1)}
LEADS = [  # key, first, last, email, company, owner, source, converted, status
    ("lars", "Lars", "Halvorsen", "lars@halvorsen-marine.example", "Halvorsen Marine", "dana",
     "Web", False, "Working - Contacted"),
    ("ana", "Ana", "Souza", "ana@souza-freight.example", "Souza Freight", "priya",
     "Purchased List", False, "Open - Not Contacted"),
    ("ana2", "Ana", "Souza", "Ana@Souza-Freight.example", "Souza Freight Ltda", "marco", "Web",
     False, "Open - Not Contacted"),
    ("tom", "Tom", "Reed", "tom@reed-logistics.example", "Reed Logistics", None, "Trade Show",
     False, "Open - Not Contacted"),
    ("mei", "Mei", "Tanaka", "mei@brightwater.example", "Brightwater Analytics", "marco", "Web",
     True, "Closed - Converted"),
]
ROLES = [  # opportunity, contact, role, primary
    ("cell", "dana", "Decision Maker", True),
    ("fleet", "lars", "Economic Buyer", True),
    ("fleet", "ingrid", "Evaluator", False),
    ("platform", "mei", "Technical Buyer", True),
    ("pilot", "dana", "Influencer", True),
]
_ROLE_IDS = [_id("00K", n) for n in range(1, len(ROLES) + 1)]
_PRIMARY_FIRST = sorted(ROLES, key=lambda role: not role[3])
_NAMES = {key: f"{first} {last}" for key, first, last, _ in USERS}


def _csv(header: list[str], rows: list[list[str]], quote_all: bool = True) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _flag(value: bool, report: bool = False) -> str:
    return ("1" if value else "0") if report else ("true" if value else "false")


def _stamp(text: str, loader: bool) -> str:
    return f"{text}.000+0000" if loader else f"{text}.000Z"


def _us(day: str) -> str:
    """A date as a US report writes it: 7/30/2026."""
    if not day:
        return ""
    year, month, date = day[:10].split("-")
    return f"{int(month)}/{int(date)}/{year}"


def data_export(loader: bool = False) -> dict[str, bytes]:
    """The weekly Data Export's files (loader: Data Loader's Export All, see above)."""
    accounts = [(a, False, "") for a in ACCOUNTS]
    contacts = [(c, False) for c in CONTACTS]
    deals = [(o, False) for o in OPPORTUNITIES]
    if loader:
        accounts.append((MERGED_ACCOUNT, True, to18(ACC["halvorsen"])))
        contacts.append((DELETED_CONTACT, True))
        deals.append((DELETED_OPPORTUNITY, True))
    files = {
        "User.csv": _csv(
            ["Id", "Username", "LastName", "FirstName", "Name", "Email", "IsActive"],
            [
                [to18(USR[k]), f"{k}@org.example", last, first, f"{first} {last}",
                 f"{k}@org.example", _flag(active)]
                for k, first, last, active in USERS
            ],
        ),
        "Account.csv": _csv(
            ["Id", "IsDeleted", "MasterRecordId", "Name", "Type", "BillingCity", "Website",
             "Industry", "OwnerId", "CreatedDate", "LastModifiedDate", "AccountSource"],
            [
                [to18(ACC[k]), _flag(deleted), master, name, "Customer", city, site, industry,
                 to18(USR[owner]), _stamp("2025-01-10T09:00:00", loader), _stamp(modified, loader),
                 source]
                for (k, name, site, owner, source, industry, city, modified), deleted, master
                in accounts
            ],
        ),
        "Contact.csv": _csv(
            ["Id", "IsDeleted", "MasterRecordId", "AccountId", "LastName", "FirstName", "Title",
             "Email", "LeadSource", "OwnerId", "LastModifiedDate"],
            [
                [to18(CON[k]), _flag(deleted), "", to18(ACC[account]), last, first, title, email,
                 source, to18(USR[owner]), _stamp(modified, loader)]
                for (k, first, last, email, account, owner, source, title, modified), deleted
                in contacts
            ],
        ),
        "Opportunity.csv": _csv(
            ["Id", "IsDeleted", "AccountId", "Name", "StageName", "Amount", "Probability",
             "CloseDate", "Type", "LeadSource", "IsClosed", "IsWon", "ForecastCategory",
             "CurrencyIsoCode", "OwnerId", "LastModifiedDate"],
            [
                [to18(OPP[k]), _flag(deleted), to18(ACC[account]), name, stage, amount,
                 str(_STAGE[stage][2]), close, "New Business", source, _flag(_STAGE[stage][0]),
                 _flag(_STAGE[stage][1]), "Pipeline", currency, to18(USR[owner]),
                 _stamp(modified, loader)]
                for (k, name, account, amount, currency, stage, close, owner, source, modified),
                deleted in deals
            ],
        ),
        "Lead.csv": _csv(
            ["Id", "IsDeleted", "MasterRecordId", "LastName", "FirstName", "Company", "Email",
             "LeadSource", "Status", "OwnerId", "IsConverted", "LastModifiedDate"],
            [
                [to18(LEA[k]), "false", "", last, first, company, email, source, status,
                 to18(USR[owner]) if owner else "", _flag(converted),
                 _stamp("2026-07-29T15:00:00", loader)]
                for k, first, last, email, company, owner, source, converted, status in LEADS
            ],
        ),
        "OpportunityContactRole.csv": _csv(
            ["Id", "OpportunityId", "ContactId", "Role", "IsPrimary", "IsDeleted"],
            [
                [to18(role_id), to18(OPP[deal]), to18(CON[contact]), role, _flag(primary), "false"]
                for role_id, (deal, contact, role, primary) in zip(_ROLE_IDS, ROLES, strict=True)
            ],
        ),
    }
    if loader:
        files["OpportunityStage.csv"] = _csv(
            ["Id", "ApiName", "MasterLabel", "IsActive", "IsClosed", "IsWon",
             "DefaultProbability", "SortOrder"],
            [
                [to18(_id("01J", n)), name, name, "true", _flag(closed), _flag(won), str(p),
                 str(n)]
                for n, (name, closed, won, p) in enumerate(STAGES, start=1)
            ],
        )
    else:  # the weekly export holds every object; revreview reads six of them
        files["Task.csv"] = _csv(
            ["Id", "WhoId", "WhatId", "Subject", "ActivityDate", "Status", "OwnerId"],
            [[to18(_id("00T", 1)), to18(CON["lars"]), to18(OPP["fleet"]), "Send contract",
              "2026-07-22", "Completed", to18(USR["dana"])]],
        )
    return files


_FOOTER = [
    [],
    ["Opportunities report"],
    ["Copyright (c) 2000-2026 salesforce.com, inc. All rights reserved."],
    ["Confidential Information - Do Not Distribute"],
    ["Generated By:  Dana Whitfield  8/1/2026 9:00 AM"],
    ["Northwind Demo Org"],
]


def reports() -> dict[str, bytes]:
    """The same live records as report exports (file names as Lightning gives them)."""
    owner = {k: _NAMES[k] for k in _NAMES}
    names = {a[0]: a[1] for a in ACCOUNTS}
    return {
        "report1722502800001.csv": _csv(
            ["Account Owner", "Account Name", "Account ID", "Website", "Account Source",
             "Industry", "Billing City", "Last Modified Date"],
            [
                [owner[o], name, ACC[k], site, source, industry, city, _us(modified)]
                for k, name, site, o, source, industry, city, modified in ACCOUNTS
            ],
            quote_all=False,
        ),
        "report1722502800002.csv": _csv(
            ["Contact Owner", "First Name", "Last Name", "Title", "Email", "Account Name",
             "Account ID", "Contact ID", "Lead Source", "Last Modified Date"],
            [
                [owner[o], first, last, title, email, names[account], ACC[account], CON[k], source,
                 _us(modified)]
                for k, first, last, email, account, o, source, title, modified in CONTACTS
            ],
            quote_all=False,
        ),
        "report1722502800003.csv": _csv(
            ["Opportunity Owner", "Account Name", "Account ID", "Opportunity Name",
             "Opportunity ID", "Stage", "Fiscal Period", "Amount", "Opportunity Currency",
             "Probability (%)", "Close Date", "Closed", "Won", "Lead Source",
             "Last Modified Date"],
            [
                [owner[o], names[account], ACC[account], name, OPP[k], stage, "Q3-2026",
                 f"{currency} {float(amount):,.2f}", currency, f"{_STAGE[stage][2]}%",
                 _us(close), _flag(_STAGE[stage][0], True), _flag(_STAGE[stage][1], True),
                 source, _us(modified)]
                for k, name, account, amount, currency, stage, close, o, source, modified
                in OPPORTUNITIES
            ]
            + _FOOTER,
            quote_all=False,
        ),
        "report1722502800004.csv": _csv(
            ["Lead Owner", "First Name", "Last Name", "Title", "Company / Account", "Email",
             "Lead Source", "Lead Status", "Converted", "Lead ID"],
            [
                [owner[o] if o else "", first, last, "", company, email, source, status,
                 _flag(converted, True), LEA[k]]
                for k, first, last, email, company, o, source, converted, status in LEADS
            ],
            quote_all=False,
        ),
        "report1722502800005.csv": _csv(
            ["Opportunity Name", "Opportunity ID", "Contact ID", "Contact Role", "Primary"],
            [
                [_deal_name(deal), OPP[deal], CON[contact], role, _flag(primary, True)]
                for deal, contact, role, primary in ROLES
            ],
            quote_all=False,
        ),
        "report1722502800006.csv": _csv(
            ["Full Name", "User ID", "Active", "Email", "Role", "Profile"],
            [
                [f"{first} {last}", USR[k], _flag(active, True), f"{k}@org.example", "Sales",
                 "Standard User"]
                for k, first, last, active in USERS
            ],
            quote_all=False,
        ),
    }


def _deal_name(key: str) -> str:
    return next(o[1] for o in OPPORTUNITIES if o[0] == key)


def native_json() -> dict:
    """The org's live records as a native JSON batch, HubSpot-shaped."""
    active = {k: a for k, _, _, a in USERS}
    return {
        "id": "northwind-salesforce",
        "exportedAt": AS_OF.isoformat(),
        "source": "hubspot",
        "companies": [
            {"id": to18(ACC[k]), "name": name, "domain": site, "owner": _NAMES[o],
             "recordSource": source, "updatedAt": f"{modified}Z", "industry": industry}
            for k, name, site, o, source, industry, _, modified in ACCOUNTS
        ],
        "contacts": [
            {"id": to18(CON[k]), "firstName": first, "lastName": last, "email": email,
             "companyId": to18(ACC[account]), "owner": _NAMES[o], "recordSource": source}
            for k, first, last, email, account, o, source, _, _ in CONTACTS
        ],
        "deals": [
            {"id": to18(OPP[k]), "name": name, "amount": amount, "currency": currency,
             "stage": stage, "closeDate": close or None, "companyId": to18(ACC[account]),
             "contactIds": [to18(CON[c]) for d, c, _, _ in _PRIMARY_FIRST if d == k],
             "owner": _NAMES[o], "recordSource": source}
            for k, name, account, amount, currency, stage, close, o, source, _ in OPPORTUNITIES
        ],
        "leads": [
            {"id": to18(LEA[k]), "firstName": first, "lastName": last, "email": email,
             "company": company, "owner": _NAMES[o] if o else None,
             "ownerActive": active[o] if o else None, "recordSource": source,
             "isConverted": converted}
            for k, first, last, email, company, o, source, converted, _ in LEADS
        ],
        "pipelines": [
            {"id": "default", "stages": [
                {"id": name, "label": name, "closed": closed, "won": won,
                 "probability": p / 100} for name, closed, won, p in STAGES
            ]}
        ],
    }
# fmt: on
