"""HubSpot behind the Connector protocol (connectors/base.py): the account check, the
pull (connectors/hubspot/pull.py), the deal pipelines, merges and the usage of the
portal's limits, over one HubSpotClient. No Django: `configured` reads the HUBSPOT_*
settings from whatever object it is given (django.conf.settings, in the app)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from connectors.base import (
    Account,
    AccountUnknown,
    Checkpoint,
    ClientConnector,
    CrmTask,
    MergeRefused,
    MergeUnanswered,
    Pulled,
    WriteRefused,
    WriteUnanswered,
)
from connectors.hubspot import records
from connectors.hubspot import snapshot as snap
from connectors.hubspot.client import HubSpotClient, HubSpotError, Limits
from connectors.hubspot.pull import run_pull
from connectors.hubspot.tasks import task_body
from reviews.engine.batch import Pipeline
from reviews.engine.ingest import IngestError
from reviews.engine.ingest.pipelines import pipelines_from_hubspot


class HubSpotConnector(ClientConnector):
    # The Dataset field that names the portal: fix-plan links and the merges' check.
    dataset_account_field = "hubspot_portal_id"
    dataset_url_field = None  # its record links are the portal id and HUBSPOT_APP_URL

    def __init__(self, base_url: str, token: str, limits: Limits | None = None, **options) -> None:
        self.client = HubSpotClient(base_url, token, limits, **options)

    @classmethod
    def configured(cls, settings: object, token: str) -> HubSpotConnector:
        """A connector with the HUBSPOT_* settings: the API's address, the share of the
        portal's interval limit revreview uses, the calls of its day it leaves to the
        other integrations, retries and the timeout."""
        limits = Limits(
            share=settings.HUBSPOT_RATE_SHARE,
            daily_floor=settings.HUBSPOT_DAILY_FLOOR,
            search_per_second=settings.HUBSPOT_SEARCH_PER_SECOND,
            max_retries=settings.HUBSPOT_MAX_RETRIES,
            backoff_seconds=settings.HUBSPOT_BACKOFF_SECONDS,
            timeout_seconds=settings.HUBSPOT_TIMEOUT_SECONDS,
        )
        return cls(settings.HUBSPOT_API_BASE_URL, token, limits)

    def check(self) -> Account:
        """GET /account-info/v3/details: the portal the token opens."""
        details = self.client.account_details()
        portal = str(details.get("portalId") or "")
        if not portal:
            raise AccountUnknown(None, "HubSpot's account details name no portal")
        return Account(
            id=portal,
            currency=str(details.get("companyCurrency") or "")[:8],
            time_zone=str(details.get("timeZone") or "")[:64],
            details=details,
        )

    def pull(
        self, checkpoint: Checkpoint, *, previous: dict | None, since: datetime | None
    ) -> Pulled:
        # The checkpoint's writes happen while HubSpot's limits make the pull wait anyway.
        self.client.while_waiting = checkpoint.flush
        since_ms = int(since.timestamp() * 1000) if since else 0
        last = snap.from_document(previous) if previous is not None else None
        result = run_pull(self.client, checkpoint, previous=last, since_ms=since_ms)
        try:
            pipelines, problem = pipelines_from_hubspot(result.pipelines), ""
        except IngestError as error:
            pipelines, problem = [], str(error)
        # What the portal returned this time, else (an incremental pull that fetched
        # none of a type) what the last pull's document says it returned.
        returned = {**snap.returned_of(previous), **result.returned}
        return Pulled(
            document=snap.document(result.snapshot, returned),
            pipelines=pipelines,
            pipelines_problem=problem,
            records=sum(len(v) for v in result.snapshot.values()),
            changed=result.changed,
            removed=result.removed,
        )

    def pipelines(self) -> list[Pipeline]:
        """GET /crm/v3/pipelines/deals, read as an uploaded pipelines response is. Raises
        IngestError naming what cannot be read."""
        return pipelines_from_hubspot(self.client.deal_pipelines())

    def merge(self, object_type: str, primary_id: str, merged_id: str) -> dict:
        """POST /crm/v3/objects/{type}/merge, sent once: no answer, or a 5xx, is
        MergeUnanswered; a 4xx is MergeRefused."""
        try:
            return self.client.merge(object_type, primary_id, merged_id)
        except HubSpotError as error:
            raise _merge_error(error) from None

    def snapshot(self, object_type: str, ids: list[str]) -> dict[str, dict]:
        """Every property and association of the records, read now
        (connectors/hubspot/records.py)."""
        return records.snapshot(self.client, object_type, ids)

    def recreate(self, object_type: str, record: dict) -> str:
        """POST /crm/v3/objects/{type} from a snapshot, sent once: the new id."""
        try:
            return records.recreate(self.client, object_type, record)
        except HubSpotError as error:
            raise _write_error(error, "the record") from None

    def associate(
        self, object_type: str, new_id: str, record: dict, now: Callable[[str, str], str]
    ) -> tuple[int, list[str]]:
        return records.associate(self.client, object_type, new_id, record, now)

    def create_task(self, task: CrmTask) -> str:
        """The new task's id; HubSpotError (its status) when HubSpot refused or did not
        answer (connectors/owner_tasks.py tells the two apart)."""
        return str(self.client.create_task(task_body(task))["id"])


def _merge_error(error: HubSpotError) -> Exception:
    if error.status is None:
        return MergeUnanswered(f"no answer from HubSpot: {error.message}")
    if error.status >= 500:
        return MergeUnanswered(f"HubSpot answered {error.status}", error.status)
    return MergeRefused(
        error.status, error.body, f"HubSpot refused the merge ({error.status}): {error.message}"
    )


def _write_error(error: HubSpotError, what: str) -> Exception:
    if error.status is None:
        return WriteUnanswered(f"no answer from HubSpot: {error.message}")
    if error.status >= 500:
        return WriteUnanswered(f"HubSpot answered {error.status}", error.status)
    return WriteRefused(
        error.status,
        error.body,
        f"HubSpot refused to create {what} ({error.status}): {error.message}",
    )
