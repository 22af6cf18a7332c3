"""Portals for the pull tests, and the CRM API JSON a person would upload for the same
state (written here from the portal, not by the connector's code)."""

from __future__ import annotations

import json
import random
import time

from reviews.engine.ingest import UploadedFile
from tests.connectors.standin import Portal

SINGULAR = {"companies": "company", "contacts": "contact", "deals": "deal"}

CUSTOM_PIPELINE = {
    "id": "87654321",
    "label": "Renewals",
    "displayOrder": 1,
    "archived": False,
    "stages": [
        {"id": "1001", "label": "Up for renewal", "displayOrder": 0,
         "metadata": {"isClosed": "false", "probability": "0.5"}},
        {"id": "1002", "label": "Renewed", "displayOrder": 1,
         "metadata": {"isClosed": "true", "probability": "1.0"}},
        {"id": "1003", "label": "Churned", "displayOrder": 2,
         "metadata": {"isClosed": "true", "probability": "0.0"}},
    ],
}  # fmt: skip


def problem_portal(*, size: int = 0, seed: int = 7) -> Portal:
    """A portal with problems of every specialist: duplicate companies and contacts,
    deals without a company, a stale close date, a custom pipeline with numeric stage
    ids; `size` more clean-ish records around them."""
    portal = Portal()
    portal.pipelines.append(CUSTOM_PIPELINE)
    put = portal.put
    put("companies", "1", {"name": "Vertex Robotics", "domain": "vertexrobotics.example"})
    put("companies", "2", {"name": "Vertex Robotics LLC", "domain": "vertexrobotics.example"})
    put("companies", "3", {"name": "Northwind Traders", "domain": "northwind.example"})
    put("contacts", "11", {"email": "dana@vertexrobotics.example", "firstname": "Dana"})
    put("contacts", "12", {"email": "dana@vertexrobotics.example", "firstname": "Dana"})
    put("contacts", "13", {"email": "li@northwind.example", "firstname": "Li"})
    portal.link("contacts", "11", "companies", "1", primary=True)
    portal.link("contacts", "12", "companies", "2", primary=True)
    portal.link("contacts", "13", "companies", "3", primary=True)
    portal.link("contacts", "13", "companies", "1")
    deal = {"pipeline": "default", "deal_currency_code": "EUR", "hubspot_owner_id": "901"}
    put(
        "deals",
        "21",
        {
            **deal,
            "dealname": "Vertex automation",
            "amount": "410000",
            "dealstage": "contractsent",
            "closedate": "2026-01-31T00:00:00Z",
        },
    )
    put(
        "deals",
        "22",
        {
            **deal,
            "dealname": "Orphan deal",
            "amount": "90000",
            "dealstage": "qualifiedtobuy",
            "closedate": "2027-03-31T00:00:00Z",
        },
    )
    put(
        "deals",
        "23",
        {
            **deal,
            "dealname": "Northwind renewal",
            "amount": "50000",
            "pipeline": "87654321",
            "dealstage": "1001",
            "closedate": "2026-02-28T00:00:00Z",
        },
    )
    put(
        "deals",
        "24",
        {
            **deal,
            "dealname": "Northwind expansion",
            "amount": "12000",
            "dealstage": "appointmentscheduled",
            "closedate": "2027-05-01T00:00:00Z",
        },
    )
    portal.link("deals", "21", "companies", "1", primary=True)
    portal.link("deals", "21", "contacts", "11")
    portal.link("deals", "23", "companies", "3", primary=True)
    portal.link("deals", "24", "companies", "3", primary=True)
    portal.link("deals", "24", "companies", "1")
    rng = random.Random(seed)
    for n in range(size):
        cid, tid, did = str(1000 + n), str(100_000 + n), str(200_000 + n)
        put(
            "companies",
            cid,
            {"name": f"Company {n} {rng.randrange(10**9)}", "domain": f"c{n}.example"},
        )
        put("contacts", tid, {"email": f"p{n}@c{n}.example", "firstname": f"P{n}"})
        portal.link("contacts", tid, "companies", cid, primary=True)
        if n % 2 == 0:
            put(
                "deals",
                did,
                {
                    **deal,
                    "dealname": f"Deal {n}",
                    "amount": str(1000 + n),
                    "dealstage": "qualifiedtobuy",
                    "closedate": "2027-06-30T00:00:00Z",
                },
            )
            portal.link("deals", did, "companies", cid, primary=True)
    return portal


def change(portal: Portal) -> None:
    """A fix, a merge, an archived deal and a new problem, all modified now. The
    duplicate contacts stay (an open finding)."""
    portal.clock_ms = int(time.time() * 1000)
    portal.put("deals", "21", {"closedate": "2027-01-31T00:00:00Z"})  # the fix
    portal.merge("companies", "1", "2")  # the duplicate merged away
    portal.archive("deals", "23")
    portal.put("contacts", "14", {"email": "li@northwind.example", "firstname": "Li"})  # new dup
    portal.link("contacts", "14", "companies", "3", primary=True)


def portal_document(portal: Portal) -> dict:
    """The portal's live state as CRM API JSON, with the properties a person exports."""
    out = {}
    for kind in ("companies", "contacts", "deals"):
        objects = []
        for rid in portal.live(kind):
            obj = portal.objects[kind][rid]
            props = {k: v for k, v in obj["properties"].items() if k != "hs_merged_object_ids"}
            item = {"id": rid, "properties": props, "updatedAt": obj["updatedAt"]}
            associations = {}
            for (from_type, to_type), links in portal.links.items():
                if from_type != kind or not links.get(rid):
                    continue
                base = f"{SINGULAR[from_type]}_to_{SINGULAR[to_type]}"
                ordered = sorted(links[rid], key=lambda pair: (not pair[1], int(pair[0])))
                associations[to_type] = {
                    "results": [
                        {
                            "id": t,
                            "type": base if p or to_type != "companies" else f"{base}_unlabeled",
                        }
                        for t, p in ordered
                    ]
                }
            if associations:
                item["associations"] = associations
            objects.append(item)
        out[kind] = objects
    return out


def document_upload(portal: Portal) -> UploadedFile:
    return UploadedFile(name="hubspot.json", data=json.dumps(portal_document(portal)).encode())
