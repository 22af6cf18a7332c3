"""A dataset's connection as the page and the API show it: never the token."""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

from connectors.base import Usage
from connectors.models import Connection, Pull
from reviews.models import Dataset

logger = logging.getLogger(__name__)

# A connection's HubSpot daily request limit and what was left of it when its last pull
# asked, in the shared cache (Redis, when set) for /metrics (revreview/metrics.py).
_CALLS_LEFT_KEY = "hubspot:calls-left:{}"
_CALLS_LEFT_SECONDS = 2 * 24 * 3600  # HubSpot's count is per day: older says nothing


def remember_calls_left(connection_id: int, usage: Usage) -> None:
    """After a pull: what the CRM answered the account has left today, if it said."""
    if usage.left_today is None:
        return
    value = {"limit": usage.limit_today, "left": usage.left_today, "at": time.time()}
    try:
        cache.set(_CALLS_LEFT_KEY.format(connection_id), value, _CALLS_LEFT_SECONDS)
    except Exception as error:  # Redis away: the pull's own result matters more
        logger.warning("calls left of connection %s not kept: %r", connection_id, error)


def calls_left(connection_ids: list[int]) -> dict[int, dict]:
    """{connection id: {"limit", "left", "at"}} for those whose last pull said."""
    keys = {_CALLS_LEFT_KEY.format(pk): pk for pk in connection_ids}
    return {keys[key]: value for key, value in cache.get_many(list(keys)).items()}


def pull_summary(pull: Pull | None) -> dict | None:
    if pull is None:
        return None
    return {
        "id": pull.pk,
        "kind": pull.kind,
        "status": pull.status,
        "requested_by": pull.requested_by,
        "started_at": pull.started_at,
        "finished_at": pull.finished_at,
        "records": pull.records,
        "changed": pull.changed,
        "removed": pull.removed,
        "requests": pull.requests,
        "waited_seconds": round(pull.waited_seconds, 1),
        "fetch_seconds": round(pull.fetch_seconds, 1),
        "duration_seconds": pull.duration_seconds,
        "step": pull.step,
        "error": pull.error,
        "batch_id": pull.batch_id,
        "run_id": pull.run_id,
    }


def connection_status(dataset: Dataset) -> dict | None:
    """None when the dataset has no connection."""
    connection = Connection.objects.filter(dataset=dataset).first()
    if connection is None:
        return None
    pulls = list(connection.pulls.order_by("-created_at")[:2])
    last = next((p for p in pulls if p.status in (Pull.Status.DONE, Pull.Status.FAILED)), None)
    current = next(
        (p for p in pulls if p.status in (Pull.Status.QUEUED, Pull.Status.RUNNING)), None
    )
    return {
        "provider": connection.provider,  # a key of connectors.registry.CONNECTORS
        "provider_label": connection.provider_label,
        "portal_id": connection.portal_id,
        "company_currency": connection.company_currency,
        "time_zone": connection.time_zone,
        "token": connection.token_hint,  # "pat-…a1b2": which token, not the token
        "every_hours": connection.every_hours,
        "full_every_days": connection.full_every_days,
        "active": connection.active,
        "next_pull_at": connection.next_pull_at,
        "last_full_at": connection.last_full_at,
        "last_pull": pull_summary(last),
        "current_pull": pull_summary(current),
    }
