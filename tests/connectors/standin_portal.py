"""The state of a HubSpot portal that the loopback stand-in (standin.py) serves: its
records, associations, limits and faults, and what changing them does, written from
HubSpot's documented behaviour.

- A record's `associatedcompanyid` (contacts) follows its primary company association,
  as HubSpot keeps it, without changing the record's modified date.
- A merge removes the merged-away record and moves its associations to the survivor,
  which is modified and lists the merged ids in `hs_merged_object_ids`; the records that
  pointed at it are not modified. Merging deals creates a new deal with a new id
  (HubSpot's changelog, "Deals now support merging"); both old ids become aliases of
  it, and a request naming an alias reaches it (`current`). A merged contact's email is
  kept on the survivor (`hs_additional_emails`, when it differs from the survivor's)."""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque

MODIFIED = {
    "companies": "hs_lastmodifieddate",
    "contacts": "lastmodifieddate",
    "deals": "hs_lastmodifieddate",
}
SEARCH_CAP = 10_000
MERGED = "hs_merged_object_ids"  # on a survivor: the ids merged into it
COMPANY_PROPERTY = "associatedcompanyid"  # on contacts: their primary company
NEW_ID_ON_MERGE = {"deals"}  # the types whose merge makes a new record
EMAILS = "hs_additional_emails"  # on a contact: other emails, a merged contact's among them


class Portal:
    def __init__(self, *, portal_id: int = 4242, token: str = "pat-na1-good") -> None:
        self.portal_id = portal_id
        self.tokens = {token}
        self.objects: dict[str, dict[str, dict]] = {"companies": {}, "contacts": {}, "deals": {}}
        self.links: dict[tuple[str, str], dict[str, list[tuple[str, bool]]]] = {}
        self.pipelines: list[dict] = [_default_pipeline()]
        self.clock_ms = int(time.time() * 1000) - 3_600_000
        self._sorted: dict = {}
        self.lock = threading.Lock()
        # limits
        self.max_per_interval = 190
        self.interval_ms = 10_000
        self.daily = 500_000
        self.daily_used = 0
        self.search_per_second = 5
        self.sent: deque[float] = deque()
        self.searches: deque[float] = deque()
        # Associations of one record a batch read answers at a time (its own page).
        self.association_page = 500
        # faults and counts
        self.fail_next: list[int] = []
        self.retry_after: str | None = None
        self.revoke_after: int | None = None
        # Record id -> how many more association reads answer it with an error (in a 207).
        self.association_errors: dict[str, int] = {}
        self.requests = 0
        self.log: list[tuple[str, str, int]] = []  # (method, path, status)
        self.bodies: list[tuple[str, dict]] = []  # (path, JSON body) of every POST
        self.slow_next: list[float] = []
        self.merges: list[tuple[str, str, str]] = []
        self.tasks: dict[str, dict] = {}  # made by POST /crm/v3/objects/tasks
        self.task_failures: list[int] = []  # statuses the next task creations answer
        # Properties this portal does not have, by type: HubSpot leaves a property it
        # does not know out of its answer (no error), as a portal without it would.
        self.lacks: dict[str, set[str]] = {}
        # Ids a merge replaced, by type: old id -> the record it is now.
        self.aliases: dict[str, dict[str, str]] = {t: {} for t in self.objects}
        self._new_ids = itertools.count(90_000_001)

    # --- changing the portal ----------------------------------------------------------

    def tick(self) -> str:
        self.clock_ms += 1
        return str(self.clock_ms)

    def put(self, object_type: str, rid: str, props: dict, *, stamp: str | None = None) -> None:
        stamp = stamp or self.tick()
        self._sorted.clear()
        current = self.objects[object_type].get(rid)
        merged = dict(current["properties"]) if current else {}
        merged.update(props)
        merged[MODIFIED[object_type]] = stamp
        merged["hs_object_id"] = rid
        self.objects[object_type][rid] = {
            "properties": merged,
            "archived": False,
            "createdAt": current["createdAt"] if current else _iso(int(stamp)),
            "updatedAt": _iso(int(stamp)),
        }

    def link(
        self, from_type: str, rid: str, to_type: str, to_id: str, *, primary: bool = False
    ) -> None:
        found = self.links.setdefault((from_type, to_type), {}).setdefault(rid, [])
        found[:] = [pair for pair in found if pair[0] != to_id]
        if primary:
            found[:] = [(t, False) for t, _ in found]
        found.append((to_id, primary))
        self._derive_company(from_type, rid)

    def links_from(self, from_type: str, to_type: str) -> dict[str, list[tuple[str, bool]]]:
        """{id: [(to id, primary?)]} either way round: links are kept one way (contacts
        and deals to companies, deals to contacts) and HubSpot reads them both ways; a
        company's contact is primary where the company is the contact's primary."""
        if (from_type, to_type) in self.links:
            return self.links[(from_type, to_type)]
        found: dict[str, list[tuple[str, bool]]] = {}
        for rid, targets in self.links.get((to_type, from_type), {}).items():
            for to_id, primary in targets:
                found.setdefault(to_id, []).append((rid, primary))
        return found

    def create(self, object_type: str, props: dict) -> str:
        """A new record with a new id (HubSpot's), modified now."""
        rid = str(next(self._new_ids))
        self.put(object_type, rid, props)
        return rid

    def archive(self, object_type: str, rid: str) -> None:
        """Archiving does not change the modified date (so search does not see it)."""
        self.objects[object_type][rid]["archived"] = True
        self._sorted.clear()
        self.objects[object_type][rid]["archivedAt"] = _iso(self.clock_ms)

    def current(self, object_type: str, rid: str) -> str:
        """The record an id reaches now: itself, or what merges made of it."""
        seen = set()
        while rid in self.aliases[object_type] and rid not in seen:
            seen.add(rid)
            rid = self.aliases[object_type][rid]
        return rid

    def merge(self, object_type: str, primary: str, merged: str) -> str:
        """Merge `merged` into `primary`; the survivor's id: the primary's, or a new
        one for the types HubSpot merges into a new record (deals)."""
        objects = self.objects[object_type]
        gone, kept = objects.pop(merged), objects[primary]
        # The ids merged into the survivor, as HubSpot lists them ("id;id").
        listed = [kept["properties"].get(MERGED, ""), merged, gone["properties"].get(MERGED, "")]
        survivor = primary
        if object_type in NEW_ID_ON_MERGE:
            survivor = str(next(self._new_ids))
            objects.pop(primary)
            # The primary's values win; the merged record fills in what it lacks.
            props = {k: v for k, v in gone["properties"].items() if v not in (None, "")}
            props.update({k: v for k, v in kept["properties"].items() if v not in (None, "")})
            objects[survivor] = {
                "properties": props,
                "archived": False,
                "createdAt": _iso(self.clock_ms),
            }
            listed.insert(0, primary)
            self._replace(object_type, primary, survivor)
        self._replace(object_type, merged, survivor)
        changed = {MERGED: ";".join(p for p in listed if p)}
        if object_type == "contacts":  # the merged contact's email stays the survivor's
            held = objects[survivor]["properties"]
            emails = [*(held.get(EMAILS) or "").split(";"), gone["properties"].get("email")]
            extra = [e for e in dict.fromkeys(emails) if e and e != held.get("email")]
            if extra:
                changed[EMAILS] = ";".join(extra)
        self.put(object_type, survivor, changed)
        return survivor

    def _replace(self, object_type: str, old: str, new: str) -> None:
        """`old` is now `new`: its id an alias, its associations (both ways) moved."""
        for alias, target in self.aliases[object_type].items():
            if target == old:
                self.aliases[object_type][alias] = new
        self.aliases[object_type][old] = new
        for (from_type, to_type), links in self.links.items():
            if from_type == object_type and old in links:
                # The survivor keeps its own primary; a new record takes the first's.
                mine = links.setdefault(new, [])
                for to_id, primary in links.pop(old):
                    if all(t != to_id for t, _ in mine):
                        mine.append((to_id, primary and not any(p for _, p in mine)))
            if to_type == object_type:  # what pointed at it points at `new`, unmodified
                for rid, found in links.items():
                    if any(t == old for t, _ in found):
                        was_primary = any(t in (old, new) and p for t, p in found)
                        found[:] = [(t, p) for t, p in found if t not in (old, new)]
                        found.append((new, was_primary))
                        self._derive_company(from_type, rid)

    def _derive_company(self, from_type: str, rid: str) -> None:
        """A contact's associatedcompanyid follows its primary company, as HubSpot keeps
        it; the modified date does not move (the search does not see the change)."""
        record = self.objects.get(from_type, {}).get(rid)
        if from_type != "contacts" or record is None:
            return
        found = self.links.get((from_type, "companies"), {}).get(rid, [])
        primary = next((t for t, p in found if p), None)
        if primary is None:
            record["properties"].pop(COMPANY_PROPERTY, None)
        else:
            record["properties"][COMPANY_PROPERTY] = primary

    def sorted_ids(self, object_type: str, archived: bool) -> tuple[list[str], list[int]]:
        """(ids, their numbers) in id order; kept until the portal changes."""
        key = (object_type, archived)
        if key not in self._sorted:
            objects = self.objects[object_type]
            ids = sorted((i for i, o in objects.items() if o["archived"] == archived), key=int)
            self._sorted[key] = (ids, [int(i) for i in ids])
        return self._sorted[key]

    def live(self, object_type: str) -> list[str]:
        return sorted(
            (i for i, o in self.objects[object_type].items() if not o["archived"]), key=int
        )

    # --- answering ------------------------------------------------------------------------

    def limit_headers(self) -> dict[str, str]:
        return {
            "X-HubSpot-RateLimit-Daily": str(self.daily),
            "X-HubSpot-RateLimit-Daily-Remaining": str(max(self.daily - self.daily_used, 0)),
            "X-HubSpot-RateLimit-Interval-Milliseconds": str(self.interval_ms),
            "X-HubSpot-RateLimit-Max": str(self.max_per_interval),
            "X-HubSpot-RateLimit-Remaining": str(max(self.max_per_interval - len(self.sent), 0)),
        }


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _default_pipeline() -> dict:
    stages = [
        ("appointmentscheduled", "Appointment scheduled", "false", "0.2"),
        ("qualifiedtobuy", "Qualified to buy", "false", "0.4"),
        ("contractsent", "Contract sent", "false", "0.9"),
        ("closedwon", "Closed won", "true", "1.0"),
        ("closedlost", "Closed lost", "true", "0.0"),
    ]
    return {
        "id": "default",
        "label": "Sales Pipeline",
        "displayOrder": 0,
        "archived": False,
        "stages": [
            {
                "id": sid,
                "label": label,
                "displayOrder": n,
                "archived": False,
                "metadata": {"isClosed": closed, "probability": p},
            }
            for n, (sid, label, closed, p) in enumerate(stages)
        ],
    }
