"""The normalised keys the rules match records by (reviews.engine.normalize), one per
record in batch order, made once per batch: dedup groups by them, attribution matches
email domains to company domains, and the detectors' tables (columns.py) carry them as
columns. normalize.py makes them: DuckDB's string functions were 4-5x slower at it
(bench/README.md, detectors over columns). The contacts' email domains are made in
columns.py, by normalize.py too, once per distinct domain."""

from __future__ import annotations

from operator import attrgetter

from reviews.engine import normalize
from reviews.engine.batch import Batch
from reviews.engine.tables.build import once_each


def company_domains(batch: Batch) -> list[str | None]:
    """Each company's normalised domain, in batch order (dedup groups by it, attribution
    matches email domains against it)."""
    return batch.derive(
        "company_domains", lambda b: [normalize.domain(c.domain) for c in b.companies]
    )


def company_names(batch: Batch) -> list[str | None]:
    """Each company's normalised name, in batch order (dedup groups by it, and pairs
    near ones for the model pass). Made for its table alone (columns.KEY_TABLES), which
    is made once per batch: not kept beside it."""
    return [normalize.company_name(company.name) for company in batch.companies]


def contact_emails(batch: Batch) -> list[str | None]:
    """Each contact's normalised email, in batch order (dedup groups by it, attribution
    reads its domain): normalised once per batch, whichever specialist asks first."""
    return batch.derive("contact_emails", lambda b: [normalize.email(c.email) for c in b.contacts])


def lead_emails(batch: Batch) -> list[str | None]:
    """Each lead's normalised email, in batch order (compared with each other's and the
    contacts')."""
    return [normalize.email(lead.email) for lead in batch.leads]


def person_names(batch: Batch) -> list[str | None]:
    """Each contact's full name as the fuzzy rules compare it: its folded words in
    alphabetical order (normalize.word_set_key), so "Kim Dana" is "Dana Kim"; None
    without a name. Made for its table alone (columns.KEY_TABLES), which is made once
    per batch: not kept beside it (40 MB for the 1M bench batch). Made once per distinct
    (first, last) pair: names repeat (the 1M bench batch's 500k contacts have 11k)."""
    pairs = map(attrgetter("first_name", "last_name"), batch.contacts)
    return once_each(_person_name, pairs)


def _person_name(pair: tuple[str | None, str | None]) -> str | None:
    first, last = pair
    return normalize.word_set_key(f"{first or ''} {last or ''}")
