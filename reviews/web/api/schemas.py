"""The API's request and response shapes. They document the API (its OpenAPI schema)
and ninja checks every response against them. Report documents allow extra keys, so
what a later version adds to the run JSON (docs/output.md) reaches the client unchanged."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field

from connectors.registry import CONNECTORS

# The CRMs a connection may name: the registry's keys ("hubspot"), one enum in the schema.
Provider = Literal[tuple(CONNECTORS)]


class Document(BaseModel):
    # A plain pydantic model: ninja's Schema reads attributes and would drop extra keys.
    model_config = ConfigDict(extra="allow")


class Problem(Schema):
    """An error: `detail` says what went wrong (a list of field errors for 422)."""

    detail: str | list[dict[str, Any]]


class Spooled(Schema):
    """An upload kept on disk while the database is unavailable; reviewed when it is back.
    No spool_id: the spool was full (SPOOL_MAX_BYTES) and the upload was not kept."""

    detail: str
    spool_id: str | None = None


class RunUrls(Schema):
    api: str  # this run in the API: poll it until `run.status` is done or failed
    dashboard_json: str  # the run JSON (docs/output.md) on the dashboard (needs a login)
    dashboard: str  # the run page on the dashboard


class UploadAccepted(Schema):
    batch_id: int
    run_id: int
    status: str  # queued, running, done (a cached run is done at once) or failed
    mode: str  # fresh, cached or failback
    urls: RunUrls


class UploadStored(Schema):
    """An upload stored and read by a worker (a big one, or the database went away
    after it was stored): the batch to follow; its run comes when the worker has read it."""

    batch_id: int
    run_id: None = None
    status: str  # "received": stored, not read yet
    detail: str
    urls: dict[str, str]  # "dashboard": the batch page, which follows it to its run


class RecordError(Schema):
    location: str  # record and field, e.g. "deals[3].amount"; empty when not about one
    message: str


class Rejected(Schema):
    detail: str
    batch_id: int | None  # the upload is kept, as received, under this id
    errors: list[RecordError]


class BatchInfo(Document):
    id: int  # our database id, as in the webhook and `/batches/<id>/`
    external_id: str | None  # the batch's own `id` (a JSON batch's), or null
    sha256: str
    counts: dict[str, int]
    # Where deals' open/won/lost state came from: dataset, export, state_columns,
    # default (docs/input.md), and how many deals each source described.
    stage_source: str | None = None
    stage_sources: dict[str, int] = {}


class MissingColumn(Document):
    """A column a rule reads that the export lacks (docs/output.md#partial-runs)."""

    list: str  # companies, contacts, deals
    field: str  # the batch field, by its docs/input.md name: stage
    columns: list[str]  # the export headers that would fill it: ["Deal Stage"]
    properties: list[str]  # HubSpot's internal names: ["dealstage"]
    switched_off: list[str]  # the kinds it switched off


class KindNotRun(Document):
    """A built-in check that could not run: it reads a list the batch does not have."""

    kind: str
    list: str  # companies, contacts, deals or leads
    why: str  # "the export has no leads", "only Salesforce has leads"


class TeamRuleRan(Document):
    """What one of the dataset's own rules did on the run (docs/rules.md)."""

    id: str
    object: str
    severity: str
    status: str  # ran or could_not_run
    count: int | None  # the records it flagged; null when it could not run
    why: str  # why it could not run; "" when it ran


class RunInfo(Document):
    id: int
    mode: str
    tier: str
    specialists: list[str]
    status: str
    degraded: bool
    started_at: str | None
    finished_at: str | None
    # The upload left out a list or a column a rule reads; the verdict is never more
    # lenient than the same export with them (docs/output.md#partial-runs).
    partial: bool = False
    missing_lists: list[str] = []
    missing_columns: list[MissingColumn] = []
    switched_off: list[str] = []
    not_run: list[KindNotRun] = []
    team_rules: list[TeamRuleRan] = []


class FindingInfo(Document):
    """One finding, with every key the run JSON gives it (docs/output.md#fields;
    tests/web/api/test_finding_schema.py keeps the two equal)."""

    category: str
    kind: str
    severity: str  # critical, warning or suggestion
    title: str
    detail: str
    record_ids: list[str]
    suggested_fix: str
    confidence: float
    amount_at_risk: int | float | None
    currency: str | None = Field(
        description="ISO code of amount_at_risk; 'mixed' when the money at risk is in "
        "several currencies (then amount_at_risk is null); null when none is at risk"
    )
    source: str  # rule or model
    # A dataset's sync only:
    fingerprint: str | None = Field(
        default=None, description="the problem's identity from sync to sync (datasets only)"
    )
    status: str | None = Field(
        default=None, description="new or open, against the dataset's last sync (datasets only)"
    )
    first_seen: str | None = Field(
        default=None, description="when the dataset first had this problem (datasets only)"
    )


class LedgerCall(Document):
    agent: str
    model_requested: str
    model: str | None
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    usd: float
    latency_ms: int | None
    outcome: str


class Ledger(Document):
    tokens: int
    usd: float
    analyst_usd: float
    calls: list[LedgerCall]


class Standing(Document):
    """What still stands in the dataset after the run's sync, whatever decided its
    verdict (docs/history.md, Standing problems). Amounts are decimal strings."""

    state: str  # clean, open_warnings or open_critical
    critical: int
    warning: int
    amount: str | None  # in `currency` when one currency is touched, else null
    currency: str | None  # ISO 4217, "mixed" (see `amounts`), or null
    amounts: dict[str, str]
    since: str | None  # first seen of the longest-standing most severe one
    since_run: int | None  # the run of the sync that first reported it


class RunReport(Document):
    """Spec §5, as `manage.py review --format json` prints it, plus `urls`. While the
    run is queued or running, `verdict` is null and `findings` empty."""

    batch: BatchInfo
    run: RunInfo
    verdict: str | None
    summary: str
    findings: list[FindingInfo]
    ledger: Ledger
    # A dataset's sync also carries `standing` (the Standing shape), `suppressed` and
    # `batch.warnings` ([{code, message}]: uploaded_late, unfamiliar_records, unread_file):
    # extra keys, absent for a batch without a dataset or a file not read (docs/output.md).
    urls: RunUrls


class RunListItem(Schema):
    id: int
    batch_id: int
    dataset: str | None
    status: str
    mode: str
    tier: str
    degraded: bool
    partial: bool = False  # the export left out a list or a column a rule reads
    verdict: str | None  # the effective verdict (approve after a break glass)
    standing: Standing | None = None  # what still stands in the dataset (docs/history.md)
    created_at: datetime
    finished_at: datetime | None
    urls: RunUrls


class RunList(Schema):
    count: int
    items: list[RunListItem]


class DismissalIn(Schema):
    fingerprint: str  # the finding's fingerprint (16 hex digits)
    reason: str


class DismissalOut(Schema):
    fingerprint: str
    category: str
    kind: str
    title: str
    reason: str
    dismissed_by: str | None
    dismissed_at: datetime
    via: str  # where it was dismissed: a Dismissal.Via value ("" before it was kept)
    undone_by: str | None
    undone_at: datetime | None


class DatasetRun(Schema):
    """One sync of the dataset: its run and how its findings compare with the last."""

    id: int
    batch_id: int
    as_of: datetime
    status: str
    mode: str
    verdict: str | None
    new: int
    open: int
    resolved: int
    suppressed: int
    standing: Standing | None = None  # what still stands in the dataset after this sync
    urls: RunUrls


class PullOut(Schema):
    """One pull of a connected CRM account (docs/connectors.md)."""

    id: int
    kind: str  # full | incremental
    status: str  # queued | running | done | failed
    requested_by: str
    started_at: datetime | None
    finished_at: datetime | None
    records: int  # in the snapshot
    changed: int  # fetched by this pull
    removed: int  # archived or merged away since the last snapshot
    requests: int
    waited_seconds: float  # waiting on HubSpot's rate limits
    fetch_seconds: float  # asking HubSpot (waits included), before storing the snapshot
    duration_seconds: float | None
    step: str
    error: str  # why it failed
    batch_id: int | None
    run_id: int | None


class ConnectionOut(Schema):
    """The dataset's CRM connection; never the token."""

    provider: Provider  # the CRM: a key of connectors/registry.py's CONNECTORS
    provider_label: str  # its name: "HubSpot"
    portal_id: str
    company_currency: str
    time_zone: str
    token: str  # a hint of which token: its first and last four characters
    every_hours: int
    full_every_days: int
    active: bool
    next_pull_at: datetime | None
    last_full_at: datetime | None
    last_pull: PullOut | None
    current_pull: PullOut | None


class DatasetOut(Schema):
    name: str
    verdict_scope: str  # new: only new problems decide the verdict; all: every one
    created: datetime
    batches: int
    runs: list[DatasetRun]  # the latest RUNS_SHOWN runs, newest as-of first
    dismissals: list[DismissalOut]  # standing ones, newest first
    connection: ConnectionOut | None = None  # its CRM account, when connected


class MergeOut(Schema):
    """One merge of the plan: `merge` ids go into `primary`, chosen by the rule in
    `reason`. `moves`: per merged record, the associations that move to the survivor;
    `loses`: values that differ from the survivor's (the survivor keeps its own)."""

    object: str  # companies, contacts or deals (the CRM API's object type)
    primary: str
    merge: list[str]
    reason: str
    fingerprint: str
    kind: str
    title: str
    moves: list[dict[str, Any]]
    loses: list[dict[str, str]]
    amount: int | float | None
    currency: str | None
    check: str | None  # what to confirm before merging a duplicate found by likeness


class TaskOut(Schema):
    """A finding as a task on one record, for its owner."""

    object: str
    record_id: str
    owner: str | None  # the record's owner, else its company's
    property: str  # HubSpot internal name (closedate, amount, ...); "" for the whole record
    problem: str
    amount: int | float | None  # money at risk
    currency: str | None
    url: str | None  # the record in HubSpot, when the dataset's portal id is set
    kind: str
    severity: str
    fix: str
    fingerprint: str
    merged_into: str | None  # the merge plan merges this record into that one: fix it there


class FixPlanOut(Schema):
    merges: list[MergeOut]  # empty when kind=tasks
    tasks: list[TaskOut]  # fix-first: severity, money at risk, age; empty when kind=merges


class PipelinesOut(Schema):
    """A dataset's deal pipelines: [{id, label, stages: [{id, label, closed, won,
    probability?}]}] (docs/input.md)."""

    name: str
    pipelines: list[dict]
    updated_at: datetime | None
    updated_by: str  # upload, api, cli, admin, connector; "" if never set
