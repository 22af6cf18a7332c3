"""The weekly digest webhook (docs/history.md): a signed delivery with the dataset's root
causes and proposals, made once per week per subscription, to a loopback receiver."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from alerts import signing
from alerts.models import WebhookDelivery, WebhookSubscription
from alerts.tasks import deliver_webhook
from reviews.models import Dataset
from reviews.orchestration.dataset import digests
from tests.alerts.receiver import Receiver

pytestmark = [pytest.mark.django_db(transaction=True)]

SECRET = "whsec_digest"


def test_a_weekly_digest_is_signed_made_once_a_week_and_only_when_watched(redis_url):
    dataset = Dataset.objects.create(name="acme-hubspot")
    with Receiver() as receiver:
        WebhookSubscription.objects.create(
            dataset=dataset, url=receiver.url, secret=SECRET, triggers=["weekly_digest"]
        )
        WebhookSubscription.objects.create(  # watches verdicts only: no digest
            dataset=dataset, url=receiver.url, secret=SECRET, triggers=["request_changes"]
        )
        monday = datetime(2026, 11, 23, 7, tzinfo=UTC)
        [made] = digests.create_digests(monday)
        assert digests.create_digests(monday.replace(day=26)) == []  # the same week
        deliver_webhook.apply(kwargs={"delivery_id": made})
        (request,) = receiver.wait_for(1)
    assert signing.verify(SECRET, request.headers[signing.HEADER], request.body)
    assert request.headers["X-Revreview-Event"] == "weekly_digest"
    body = json.loads(request.body)
    assert body["event"] == "weekly_digest" and body["week"] == "2026-W48"
    assert body["dataset"] == "acme-hubspot"
    assert body["proposals"] == [] and body["root_causes"] == []
    delivery = WebhookDelivery.objects.get(pk=made)
    assert delivery.run is None and delivery.status == "delivered"
    assert len(digests.create_digests(datetime(2026, 11, 30, 7, tzinfo=UTC))) == 1  # next week
