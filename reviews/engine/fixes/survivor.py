"""Which of a group of duplicates survives a merge, and why: one rule, read by the dedup
specialist (its suggested fix names the survivor) and by the fix plan (which writes the
reason beside each merge).

The rule is an order of criteria (Rules.merge_survivor_order, RULE_MERGE_SURVIVOR_ORDER); each
narrows the candidates to those best on it, and the first that leaves one decides:

- won: a deal booked as closed won over one that is not (deals only);
- associations: the record with the most associations in the batch (a company's
  contacts and deals, a contact's deals and companies, a deal's company and contacts),
  so a merge moves as little as possible;
- oldest: the earliest created date (createdate / Create Date / createdAt, when every
  record has one), else the earliest last-modified date;
- lowest_id: the lowest id, HubSpot's numeric ids compared as numbers (by length, then
  text: never through int(), so a 5,000-digit id is compared like any other).

A criterion that cannot tell the candidates apart (no deal is won, no dates) is passed
over. When the order leaves a tie, the lowest id breaks it, and the reason says so."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.ingest.values import parse_datetime
from reviews.engine.tables.columns import columns

Record = Company | Contact | Deal

CRITERIA: tuple[str, ...] = ("won", "associations", "oldest", "lowest_id")
DEFAULT_ORDER: tuple[str, ...] = CRITERIA

# Where an export or an API pull keeps a record's created date (kept in `extra`).
CREATED_KEYS: tuple[str, ...] = (
    "createdAt",
    "createdate",
    "hs_createdate",
    "Create Date",
    "Create date",
    "Created At",
    "Erstellungsdatum",  # de
    "Date de création",  # fr
    "Fecha de creación",  # es
    "Data de criação",  # pt
    "CreatedDate",  # Salesforce's
)
# Last-modified dates of contacts and deals (companies have updated_at).
UPDATED_KEYS: tuple[str, ...] = ("updatedAt", "hs_lastmodifieddate", "lastmodifieddate")


def parse_order(value: str | Sequence[str]) -> tuple[str, ...]:
    """'won,associations,oldest,lowest_id' (or a list of names) as a checked order."""
    names = value.split(",") if isinstance(value, str) else list(value)
    order = tuple(name.strip() for name in names if name.strip())
    unknown = [name for name in order if name not in CRITERIA]
    if unknown:
        raise ValueError(
            f"unknown survivor criteria {', '.join(unknown)}: choose from {', '.join(CRITERIA)}"
        )
    if len(set(order)) != len(order):
        raise ValueError("a survivor criterion is named twice")
    return order


@dataclass(frozen=True, slots=True)
class Choice:
    survivor: Record
    reason: str


def choose(records: Sequence[Record], batch: Batch, order: Sequence[str] = DEFAULT_ORDER) -> Choice:
    """The survivor of `records` (duplicates of one kind) and the reason, in words."""
    candidates = list(records)
    reasons: list[str] = []
    for name in order:
        if len(candidates) == 1:
            break
        narrowed, reason = _CRITERIA[name](candidates, batch)
        if reason:
            reasons.append(reason)  # what decided, or that it tied: an analyst reads both
        candidates = narrowed
    if len(candidates) > 1:
        candidates.sort(key=lambda r: id_key(r.id))
        if "lowest_id" not in order:
            reasons.append(f"still tied: the lowest id, {candidates[0].id}")
    survivor = candidates[0]
    return Choice(survivor, "; ".join(reasons) or "the only candidate")


def id_key(record_id: str) -> tuple[int, int, str, str]:
    """HubSpot ids compare as numbers (9 before 10); other ids as text, after them.

    A number is compared by its count of digits, then as text, leading zeros set aside
    (then the id as written tells 007 from 7): the order of the numbers without int(),
    whose limit of 4,300 digits a hostile id passes."""
    if record_id.isdigit() and record_id.isascii():
        digits = record_id.lstrip("0")
        return (0, len(digits), digits, record_id)
    return (1, 0, record_id, "")


# --- the criteria: each returns (the best candidates, why), or (the candidates, why it
# could not tell them apart: "" when it does not apply) ----------------------------------


def _won(candidates: list[Record], batch: Batch) -> tuple[list[Record], str]:
    if not isinstance(candidates[0], Deal):
        return candidates, ""
    won = [d for d in candidates if (stage := batch.stage_of(d)) is not None and stage.won]
    if not won or len(won) == len(candidates):
        return candidates, "none closed won" if not won else "all closed won"
    others = [d.id for d in candidates if d not in won]
    ids = ", ".join(d.id for d in won)
    return won, f"{ids} {'is' if len(won) == 1 else 'are'} closed won ({', '.join(others)} not)"


def _associations(candidates: list[Record], batch: Batch) -> tuple[list[Record], str]:
    counts = association_counts(batch)
    value = {r.id: counts.of(r) for r in candidates}
    best = max(value.values())
    top = [r for r in candidates if value[r.id] == best]
    if len(top) == len(candidates):
        return candidates, f"tied on associations ({best} each)"
    rest = ", ".join(f"{r.id} {value[r.id]}" for r in candidates if r not in top)
    ids = ", ".join(r.id for r in top)
    return top, f"{ids} has the most associations ({best}; {rest})"


def _oldest(candidates: list[Record], batch: Batch) -> tuple[list[Record], str]:
    for label, stamp in (("created", created_at), ("last modified", updated_at)):
        stamps = {r.id: stamp(r, batch) for r in candidates}
        if any(s is None for s in stamps.values()):
            continue  # a missing date says nothing about which is older
        first = min(stamps.values())
        top = [r for r in candidates if stamps[r.id] == first]
        if len(top) == len(candidates):
            return candidates, f"tied on age ({label} {first.date().isoformat()})"
        rest = ", ".join(
            f"{r.id} {stamps[r.id].date().isoformat()}" for r in candidates if r not in top
        )
        ids = ", ".join(r.id for r in top)
        return top, f"{ids} is the oldest ({label} {first.date().isoformat()}; {rest})"
    return candidates, "no dates to tell the oldest"


def _lowest_id(candidates: list[Record], batch: Batch) -> tuple[list[Record], str]:
    first = min(candidates, key=lambda r: id_key(r.id))
    return [first], f"{first.id} has the lowest id"


_CRITERIA: dict[str, Callable[[list[Record], Batch], tuple[list[Record], str]]] = {
    "won": _won,
    "associations": _associations,
    "oldest": _oldest,
    "lowest_id": _lowest_id,
}


# --- what the criteria read ------------------------------------------------------------


# How many contacts and deals name each company (its primary, or one more of theirs), by
# the company's row; how many deals name each contact, once per deal, by the contact's
# row. Over the detector tables: the dedup specialist has them loaded already, and a
# Counter over every contact and deal took 8 s of ten million records (bench/README.md).
COMPANY_ASSOCIATIONS = """
WITH named AS (
    SELECT company_id AS id FROM contacts WHERE company_id <> ''
    UNION ALL SELECT company_id FROM deals WHERE company_id <> ''
    UNION ALL SELECT l.id FROM contacts_company_ids AS l JOIN contacts AS c USING ("row")
        WHERE l.id IS DISTINCT FROM c.company_id
    UNION ALL SELECT l.id FROM deals_company_ids AS l JOIN deals AS d USING ("row")
        WHERE l.id IS DISTINCT FROM d.company_id
)
SELECT co."row", count(*) AS n FROM named JOIN companies AS co ON co.id = named.id
GROUP BY co."row"
"""
CONTACT_ASSOCIATIONS = """
SELECT c."row", count(DISTINCT l."row") AS n
FROM deals_contact_ids AS l JOIN contacts AS c ON c.id = l.id GROUP BY c."row"
"""


class Associations:
    """How many records each company and contact is associated with, counted once per
    batch over its detector tables; a deal's own associations are read from the deal."""

    def __init__(self, batch: Batch) -> None:
        tables = columns(batch)
        objects = ("companies", "contacts", "deals")
        self._companies = _Counts(batch.companies, tables.arrays(COMPANY_ASSOCIATIONS, objects))
        self._contacts = _Counts(batch.contacts, tables.arrays(CONTACT_ASSOCIATIONS, objects))

    def of(self, record: Record) -> int:
        if isinstance(record, Company):
            return self._companies.of(record)
        if isinstance(record, Contact):
            return self._contacts.of(record) + len(companies_of(record))
        if isinstance(record, Deal):
            return len(companies_of(record)) + len(set(record.contact_ids))
        return 0  # a lead is associated with nothing


class _Counts:
    """A count per record of one list, held by row (an array, not a dict of ids: ten
    million records' dicts would hold hundreds of MB for the survivors of a few
    thousand groups)."""

    def __init__(self, records: list, found: dict[str, np.ndarray]) -> None:
        self._records = records  # the batch's list, not the batch: no cycle through it
        self._counts = np.zeros(len(records), dtype=np.int64)
        self._counts[found["row"]] = found["n"]
        self._rows: dict[str, int] | None = None

    def of(self, record: Record) -> int:
        row = record.index
        if not (0 <= row < len(self._records) and self._records[row] is record):
            # A reader whose indices are not positions (a file's line numbers): by id.
            if self._rows is None:
                self._rows = {r.id: i for i, r in enumerate(self._records)}
            row = self._rows.get(record.id)
            if row is None:
                return 0
        return int(self._counts[row])


def association_counts(batch: Batch) -> Associations:
    return batch.derive("associations", Associations)


def companies_of(record: Contact | Deal) -> list[str]:
    """Every company a contact or deal is associated with, the primary first."""
    ids = [record.company_id] if record.company_id else []
    ids.extend(i for i in record.company_ids if i != record.company_id)
    return ids


def created_at(record: Record, batch: Batch) -> datetime | None:
    return _stamp(batch.extra_of(record), CREATED_KEYS)


def updated_at(record: Record, batch: Batch) -> datetime | None:
    if isinstance(record, Company):
        return record.updated_at
    return _stamp(batch.extra_of(record), UPDATED_KEYS)


def _stamp(extra: Mapping[str, object], keys: tuple[str, ...]) -> datetime | None:
    for key in keys:
        value = extra.get(key)
        if value in (None, ""):
            continue
        if isinstance(value, datetime):
            return value
        parsed = parse_datetime(value)
        return parsed if isinstance(parsed, datetime) else None
    return None
