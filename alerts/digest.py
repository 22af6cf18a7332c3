"""The weekly digest webhook (docs/history.md): for each active subscription watching
`weekly_digest`, one delivery a week with its dataset's tuning proposals and the root
causes of recurring problems. Made once per (subscription, ISO week); sent and retried
by the same delivery code as a run's alert (destination checks, signing, attempts).
What a digest says is composed by the caller (reviews.orchestration.dataset.digests): the
alerts only wrap and deliver it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from alerts.models import Trigger, WebhookDelivery, WebhookSubscription
from alerts.payloads import site_url, slack_escape, slack_link


def week_of(moment: datetime) -> str:
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def message(dataset, found: dict, week: str) -> dict:
    return {
        "event": "weekly_digest",
        "triggers": [Trigger.WEEKLY_DIGEST],
        "dataset": dataset.name,
        "week": week,
        "url": site_url(reverse("reviews:dataset", args=[dataset.name])),
        "proposals": found["proposals"],
        "root_causes": found["root_causes"],
    }


def slack_text(data: dict) -> str:
    e = slack_escape
    lines = [f"revreview weekly digest for *{e(data['dataset'])}* ({e(data['week'])})"]
    for cause in data["root_causes"][:5]:
        lines.append(f"• {e(cause['text'])}: {e(cause['advice'])}")
    for proposal in data["proposals"][:5]:
        replay = proposal["replay"]
        lines.append(
            f"• proposal {e(proposal['id'])}: hides {replay['dismissed_hidden']} of "
            f"{replay['dismissed_total']} dismissed, {replay['kept_hidden']} kept"
        )
    if len(lines) == 1:
        lines.append("Nothing to tune and no recurring root cause.")
    return "\n".join(lines) + "\n" + slack_link(data["url"], "Open the dataset")


def create_digests(contents: Callable[[object], dict], now: datetime | None = None) -> list[int]:
    """This week's digest deliveries not made yet, each saying what `contents(dataset)`
    returns ({"proposals": [...], "root_causes": [...]}). Safe to call twice."""
    week = week_of(now or timezone.now())
    made = []
    subscriptions = WebhookSubscription.objects.filter(active=True).select_related("dataset")
    found_by_dataset: dict[int, dict] = {}
    for subscription in subscriptions:
        if Trigger.WEEKLY_DIGEST not in subscription.triggers:
            continue
        if WebhookDelivery.objects.filter(subscription=subscription, digest=week).exists():
            continue
        dataset = subscription.dataset
        if dataset.pk not in found_by_dataset:
            found_by_dataset[dataset.pk] = contents(dataset)
        data = message(dataset, found_by_dataset[dataset.pk], week)
        if subscription.payload_format == WebhookSubscription.Format.SLACK:
            data = {"text": slack_text(data)}
        try:
            with transaction.atomic():
                delivery = WebhookDelivery.objects.create(
                    subscription=subscription,
                    digest=week,
                    triggers=[Trigger.WEEKLY_DIGEST],
                    body=json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str),
                    next_attempt_at=timezone.now(),
                )
        except IntegrityError:  # made meanwhile by another call
            continue
        made.append(delivery.pk)
    return made
