"""Helpers every specialist uses: invalid-value findings and pipeline exposure."""

from __future__ import annotations

import re
from collections import defaultdict
from decimal import Decimal

from reviews.engine.batch import Batch, Company, Contact, Deal, Lead, ValueProblem
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.money import format_money
from reviews.engine.tables.columns import columns


def invalid_value_findings(batch: Batch, category: str) -> list[RawFinding]:
    """Malformed values owned by this category (docs/input.md): warnings, never rejections.
    The title names the record as every title does, the field and the bad value; the
    detail keeps where it sits in the file (deals[6].amount; a Salesforce file's row
    and column: Opportunity.csv row 4 (AccountId))."""
    return [
        RawFinding(
            category=category,
            kind="invalid_value",
            severity=Severity.WARNING,
            title=_invalid_value_title(batch, problem),
            detail=f"{where(problem)}: {problem.message}",
            # A batch-level field (its id, source, dataset) names no record.
            record_ids=[problem.record_id] if problem.record_id else [],
            suggested_fix="Correct the value in the CRM; it was treated as missing.",
        )
        for problem in batch.value_problems
        if problem.category == category
    ]


def where(problem: ValueProblem) -> str:
    """Where a malformed value sits: its file, row and column when the reader says."""
    return f"{problem.place} ({problem.column})" if problem.place else problem.path


# A record's field as ingest names it: the list, the record's place in it, the field.
_RECORD_PATH = re.compile(r"(companies|contacts|deals|leads)\[(\d+)\]\.(.+)", re.DOTALL)
_ONE_OF = {"companies": "company", "contacts": "contact", "deals": "deal", "leads": "lead"}
_FIELD_CHARS = 60  # an unknown field's key can be any length; the detail has it whole


def _invalid_value_title(batch: Batch, problem: ValueProblem) -> str:
    """'Invalid amount on deal "Fabrikam renewal" (dl_7): not a number: "41O000"'."""
    match = _RECORD_PATH.fullmatch(problem.path)
    if match is None:  # the batch's own field: its id, source, dataset
        return f"Invalid {_cut(problem.path)} of the batch: {problem.message}"
    list_name, index, field_name = match.groups()
    record = _record_at(getattr(batch, list_name), int(index), problem.record_id)
    who = named(record) if record is not None else problem.record_id
    field_name = problem.column or field_name  # the file's own name for it: AccountId
    return f"Invalid {_cut(field_name)} on {_ONE_OF[list_name]} {who}: {problem.message}"


def _record_at(records: list, index: int, record_id: str) -> Company | Contact | Deal | None:
    """The record a path points at: the one at its place in the list (as ingest numbers
    them), checked by its id; else the first with that id."""
    if index < len(records) and records[index].id == record_id:
        return records[index]
    return next((r for r in records if r.id == record_id), None)


def _cut(text: str) -> str:
    return text if len(text) <= _FIELD_CHARS else text[: _FIELD_CHARS - 1] + "…"


NAMED_IN_TITLE = 3  # a title names this many records of a group, then "and N more"
_NAME_CHARS = 80  # a name longer than this is cut in a title (the detail has it whole)


def named(record: Company | Contact | Deal) -> str:
    """A record as a title names it, by name and id, so a search for the company, the
    person or the deal finds it: 'Owen Price (30117000202)', 'Fabrikam (co_1)',
    '"Vertex — cell automation" (dl_201)'. The id alone when the record has no name.
    Titles only: fingerprints are made of ids, never of names."""
    if isinstance(record, Contact | Lead):
        name = " ".join(p for p in (record.first_name, record.last_name) if p)
    else:
        name = record.name or ""
    name = " ".join(name.split())
    if not name:
        return record.id
    if len(name) > _NAME_CHARS:
        name = name[: _NAME_CHARS - 1] + "…"
    if isinstance(record, Deal):
        name = f'"{name}"'
    return f"{name} ({record.id})"


def named_list(records: list) -> str:
    """': Acme Robotics (co_1), Acme GmbH (co_10) and 2 more', in id order, to end a
    title about a group; '' when none of them has a name (the ids are the finding's)."""
    if not any(named(r) != r.id for r in records):
        return ""
    ordered = sorted(records, key=lambda r: r.id)
    shown = [named(r) for r in ordered[:NAMED_IN_TITLE]]
    rest = len(ordered) - len(shown)
    if rest:
        return ": " + ", ".join(shown) + f" and {rest} more"
    return ": " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1])


def exposure_of(batch: Batch) -> Exposure:
    """The batch's Exposure, shared by every specialist."""
    return batch.derive("exposure", Exposure)


def companies_by_id(batch: Batch) -> dict[str, Company]:
    """The batch's companies by id, shared by every specialist that looks them up."""
    return batch.derive("companies_by_id", lambda b: {c.id: c for c in b.companies})


# The deals a finding's exposure counts: open ones (an unknown stage counts as open, as
# Batch.is_open) with an amount over zero, in the batch's order. Python reads only these.
EXPOSED_DEALS = """
SELECT "row" FROM deals WHERE is_closed IS NOT TRUE AND amount_sign > 0 ORDER BY "row"
"""


class Exposure:
    """Which open deals (and their amounts) each company and contact carries, so a
    finding on a company or contact can say how much pipeline it touches."""

    def __init__(self, batch: Batch) -> None:
        # company or contact id -> its open deals' ids (a list: a dict each took four
        # times the memory, and a million records carry a few hundred thousand)
        self.by_company: dict[str, list[str]] = defaultdict(list)
        self.by_contact: dict[str, list[str]] = defaultdict(list)
        self.by_deal: dict[str, Decimal] = {}
        self.currencies: dict[str, str] = {}  # deal id -> currency of its amount
        rows = columns(batch).arrays(EXPOSED_DEALS, ("deals",))["row"].tolist()
        for deal in map(batch.deals.__getitem__, rows):
            self.by_deal[deal.id] = deal.amount
            self.currencies[deal.id] = batch.currency_of(deal)
            if deal.company_id:
                self.by_company[deal.company_id].append(deal.id)
            for contact_id in deal.contact_ids:
                self.by_contact[contact_id].append(deal.id)

    def of_companies(self, company_ids: list[str]) -> dict[str, Decimal]:
        """Open deal id -> amount, of every deal the companies carry."""
        return self._amounts(self.by_company, company_ids)

    def of_contacts(self, contact_ids: list[str]) -> dict[str, Decimal]:
        return self._amounts(self.by_contact, contact_ids)

    def _amounts(self, deals_of: dict[str, list[str]], ids: list[str]) -> dict[str, Decimal]:
        return {deal: self.by_deal[deal] for key in ids for deal in deals_of.get(key, ())}


def money(amount: Decimal | None, currency: str | None = None) -> str:
    """$410,000 / €1,234.50 for titles and details (reviews.engine.money)."""
    return format_money(amount, currency)
