"""Webhooks in admin: a subscription gets a signing secret shown once; deliveries show
every attempt."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.models import Dataset
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db


def test_a_subscription_made_in_admin_gets_a_secret_shown_once(admin_client):
    dataset = Dataset.objects.create(name="acme-hubspot")
    response = admin_client.post(
        reverse("admin:alerts_webhooksubscription_add"),
        {
            "dataset": dataset.pk,
            "url": "https://hooks.slack.example/services/T0/B0/x",
            "payload_format": "slack",
            "triggers": ["request_changes", "failed"],
            "secret": "",
            "active": "on",
        },
        follow=True,
    )
    subscription = WebhookSubscription.objects.get()
    assert subscription.triggers == ["request_changes", "failed"]
    assert re.fullmatch(r"whsec_[\w-]{32}", subscription.secret)
    assert subscription.secret in response.content.decode()

    # Saving it again without a secret keeps the one it has, and never shows it.
    page = admin_client.get(
        reverse("admin:alerts_webhooksubscription_change", args=[subscription.pk])
    )
    assert subscription.secret not in page.content.decode()
    admin_client.post(
        reverse("admin:alerts_webhooksubscription_change", args=[subscription.pk]),
        {
            "dataset": dataset.pk,
            "url": subscription.url,
            "payload_format": "json",
            "triggers": ["request_changes"],
            "secret": "",
            "active": "on",
        },
    )
    kept = WebhookSubscription.objects.get()
    assert (kept.secret, kept.payload_format) == (subscription.secret, "json")


def test_a_delivery_page_lists_its_attempts(admin_client):
    run = reviewed()
    dataset = Dataset.objects.create(name="d")
    subscription = WebhookSubscription.objects.create(
        dataset=dataset, url="https://x.example", secret="s"
    )
    delivery = WebhookDelivery.objects.create(subscription=subscription, run=run, body="{}")
    for number, code in ((1, 500), (2, 200)):
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=timezone.now(),
            latency_ms=12,
            response_code=code,
            ok=code == 200,
        )
    page = admin_client.get(reverse("admin:alerts_webhookdelivery_change", args=[delivery.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "500" in text and "200" in text
    listing = admin_client.get(reverse("admin:alerts_webhookdelivery_changelist"))
    assert listing.status_code == 200
