"""Small builders for plain-data batches in specialist tests (no database).

Each builder fills sensible defaults and takes any field as a keyword, so a test
states only what it is about. Indexes increase per list, like a parsed batch."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime
from decimal import Decimal

from reviews.engine.batch import Batch, Company, Contact, Deal, Pipeline, Stage

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

_counter = itertools.count()


def _index(kwargs: dict) -> int:
    return kwargs.pop("index", next(_counter))


def company(id: str = "co_1", **kwargs) -> Company:
    index = _index(kwargs)
    kwargs.setdefault("name", f"Company {id}")
    return Company(id=id, index=index, **kwargs)


def contact(id: str = "ct_1", **kwargs) -> Contact:
    index = _index(kwargs)
    return Contact(id=id, index=index, **kwargs)


def deal(id: str = "dl_1", **kwargs) -> Deal:
    index = _index(kwargs)
    amount = kwargs.get("amount")
    if amount is not None and not isinstance(amount, Decimal):
        kwargs["amount"] = Decimal(str(amount))
    kwargs.setdefault("name", f"Deal {id}")
    return Deal(id=id, index=index, **kwargs)


def pipeline(id: str = "default", stages: list[Stage] | None = None) -> Pipeline:
    return Pipeline(id=id, stages=stages or [])


def stage(id: str, label: str = "", *, closed: bool = False, won: bool = False) -> Stage:
    return Stage(id=id, label=label, closed=closed, won=won)


def make_batch(
    companies: list[Company] | None = None,
    contacts: list[Contact] | None = None,
    deals: list[Deal] | None = None,
    *,
    pipelines: list[Pipeline] | None = None,
    as_of: datetime = AS_OF,
    **kwargs,
) -> Batch:
    """A batch whose list indexes match positions (companies[0].index == 0, ...)."""
    companies = _reindexed(companies or [])
    contacts = _reindexed(contacts or [])
    deals = _reindexed(deals or [])
    return Batch(
        id=kwargs.pop("id", "test"),
        as_of=as_of,
        source=kwargs.pop("source", "hubspot"),
        companies=companies,
        contacts=contacts,
        deals=deals,
        pipelines={p.id: p for p in pipelines or []},
        **kwargs,
    )


def _reindexed(records: list) -> list:
    for position, record in enumerate(records):
        record.index = position
    return records


def day(text: str) -> date:
    return date.fromisoformat(text)


def moment(text: str) -> datetime:
    """An aware datetime from ISO text; a bare date means midnight UTC."""
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
