"""A finished run's fix plan (docs/output.md): its stored batch parsed again, its
findings less the ones the team has dismissed, handed to the engine's plain functions
(reviews.engine.fixes.fixplan). The page, the API and the CLI all ask here."""

from __future__ import annotations

from django.conf import settings

from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.fixes import fixplan, survivor
from reviews.engine.fixes.links import RecordLinks
from reviews.engine.ingest import IngestError
from reviews.engine.vocabulary import SALESFORCE, crm_of
from reviews.models import ReviewRun, findings_of
from reviews.orchestration.dataset.dismissals import active_dismissals
from reviews.orchestration.dataset.policies import kinds_of_run
from reviews.orchestration.store.parsed import read_stored

_COLUMNS = (
    "category",
    "kind",
    "severity",
    "title",
    "record_ids",
    "fingerprint",
    "amount_at_risk",
    "currency",
    "suggested_fix",
    "detail",
    "first_seen",
)


class PlanUnavailable(Exception):
    """No plan for this run (not finished, or its batch no longer parses), and why."""


def plan_for_run(run: ReviewRun) -> fixplan.FixPlan:
    if run.status != ReviewRun.Status.DONE:
        raise PlanUnavailable(f"run {run.pk} is {run.status}: a plan needs a finished review")
    batch = run.batch
    try:
        # Read here, not kept (reviews.orchestration.store.parsed.load_parsed keeps one per
        # worker): a web process holds no batch between requests.
        parsed = read_stored(batch)
    except IngestError as error:
        raise PlanUnavailable(f"batch {batch.pk} no longer parses: {error}") from None
    dataset = batch.dataset
    # Suppressed findings have no rows; a dismissal made after the run leaves the plan too.
    dismissed = set(active_dismissals(dataset.pk)) if dataset else set()
    rows = findings_of(run).order_by("position").values(*_COLUMNS)
    findings = [
        _plan_finding(row)
        for row in rows.iterator(chunk_size=2000)
        if row["fingerprint"] not in dismissed
    ]
    return fixplan.build(
        parsed,
        findings,
        order=survivor.parse_order(settings.REVIEW_RULES.merge_survivor_order),
        links=links_of(run),
        kinds=kinds_of_run(run),
    )


def links_of(run: ReviewRun) -> RecordLinks:
    """Where the run's records live, for their links: its dataset's HubSpot portal or
    Salesforce org, by the CRM the batch came from (set in the admin, or by connecting
    the dataset); none for a one-off upload or a dataset that names none (an export does
    not say which account it is from)."""
    dataset = run.batch.dataset
    crm = crm_of(run.batch.source)
    if dataset is None:
        return RecordLinks(crm)
    if crm == SALESFORCE:
        return RecordLinks(crm, dataset.salesforce_url)
    return RecordLinks(crm, dataset.hubspot_portal_id, settings.HUBSPOT_APP_URL)


def _plan_finding(row: dict) -> fixplan.PlanFinding:
    amount = row.pop("amount_at_risk")
    currency = row.pop("currency") or (DEFAULT_CURRENCY if amount else "")
    return fixplan.PlanFinding(**row, amount=amount, currency=currency)
