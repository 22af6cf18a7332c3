"""Findings as plain data, shared by the specialists and the coordinator."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal
from enum import StrEnum


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    SUGGESTION = "suggestion"

    @property
    def rank(self) -> int:
        return {"critical": 0, "warning": 1, "suggestion": 2}[self.value]


class Category(StrEnum):
    DEDUP = "dedup"
    ATTRIBUTION = "attribution"
    PIPELINE = "pipeline"
    FRESHNESS = "freshness"


@dataclass(slots=True)
class RawFinding:
    """One problem a specialist found. `exposure` maps each deal whose pipeline the
    problem touches to that deal's amount; amount_at_risk is their sum, and the
    coordinator unions exposures so no deal is counted twice in the summary."""

    category: str
    kind: str
    severity: str
    title: str
    detail: str
    record_ids: list[str]
    suggested_fix: str = ""
    confidence: float = 1.0
    exposure: dict[str, Decimal] = field(default_factory=dict)
    source: str = "rule"
    # deal id -> ISO currency of its amount, for the deals in `exposure` (price_findings)
    deal_currencies: dict[str, str] = field(default_factory=dict)

    @property
    def amount_at_risk(self) -> Decimal:
        """The exposure's sum, for ordering; shown only when `currency` is one code."""
        return sum(self.exposure.values(), Decimal(0))

    @property
    def currency(self) -> str:
        """The one currency of the money at risk; MIXED when amounts in several
        currencies are at risk (they are not added up); "" when none is."""
        codes = {self.deal_currencies.get(d, "") for d in self.exposure}
        if len(codes) > 1:
            return MIXED
        return codes.pop() if codes else ""

    def to_json(self) -> dict:
        """JSON-safe form, stored on the AgentRun between specialist and coordinator."""
        data = asdict(self)
        data["exposure"] = {k: str(v) for k, v in self.exposure.items()}
        return data

    @classmethod
    def from_json(cls, data: dict) -> RawFinding:
        data = dict(data)
        data["exposure"] = {k: Decimal(v) for k, v in data.get("exposure", {}).items()}
        return cls(**data)


MIXED = "mixed"


def amounts_by_currency(
    exposure: dict[str, Decimal], currencies: dict[str, str]
) -> dict[str, Decimal]:
    """Totals per currency: amounts in different currencies are never added up."""
    totals: dict[str, Decimal] = {}
    for deal_id, amount in exposure.items():
        code = currencies.get(deal_id, "")
        totals[code] = totals.get(code, Decimal(0)) + amount
    return totals
