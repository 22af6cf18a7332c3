"""Money at risk, defined once (docs/output.md, "Money at risk").

The one money figure of a review, read by the summary, the standing line, the runs list,
the dataset page, the API's `pipeline_at_risk`, the webhook, Slack and the CLI:

- only critical and warning findings count: a suggestion is advice (a suspected typo at
  0.6 confidence among them), and advice is never money in the headline;
- each deal counts once, with the largest amount any counted finding puts at risk on it,
  however many findings touch it;
- amounts in different currencies are never added up.

What a finding puts at risk on a deal is its `exposure`: the deal's amount for most kinds;
for a suspected typo, only the excess over the company's usual amount (the finding's own
figure, never the headline's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.findings import RawFinding, Severity, amounts_by_currency

COUNTED = frozenset({Severity.CRITICAL.value, Severity.WARNING.value})


@dataclass(frozen=True, slots=True)
class AtRisk:
    by_currency: dict[str, Decimal]  # ISO code -> total; empty when nothing is at risk
    deals: int  # the deals counted, each once

    @property
    def single(self) -> Decimal:
        """The total when one currency is at risk, else 0 (the API's pipeline_at_risk)."""
        return next(iter(self.by_currency.values())) if len(self.by_currency) == 1 else Decimal(0)


def counts(finding: RawFinding) -> bool:
    return finding.severity in COUNTED


def money_at_risk(findings: Iterable[RawFinding]) -> AtRisk:
    """The money `findings` put at risk: each deal once, per currency."""
    exposure: dict[str, Decimal] = {}
    currencies: dict[str, str] = {}
    for finding in findings:
        if not finding.exposure or not counts(finding):
            continue
        for deal_id, amount in finding.exposure.items():
            if amount > exposure.get(deal_id, Decimal(0)):
                exposure[deal_id] = amount
        currencies.update(finding.deal_currencies)
    totals = {
        code or DEFAULT_CURRENCY: amount
        for code, amount in amounts_by_currency(exposure, currencies).items()
        if amount
    }
    return AtRisk(by_currency=totals, deals=len(exposure))
