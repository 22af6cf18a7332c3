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
            address="203.0.113.9",
        )
    page = admin_client.get(reverse("admin:alerts_webhookdelivery_change", args=[delivery.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "500" in text and "200" in text
    assert "203.0.113.9" in text  # the address each attempt connected to
    listing = admin_client.get(reverse("admin:alerts_webhookdelivery_changelist"))
    assert listing.status_code == 200


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("127.0.0.1:6379", "127.0.0.1, a loopback address"),
        ("http://localhost:8000/admin/", "localhost is 127.0.0.1, a loopback address"),
        ("https://0.0.0.0/", "0.0.0.0, a unspecified address"),
        ("https://[::1]:5432/", "::1, a loopback address"),
        ("https://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
        ("https://[::ffff:10.0.0.1]/", "it embeds 10.0.0.1, a private address"),
        ("https://user:pass@hooks.example.com/x", "credentials in the URL are not allowed"),
        ("http://hooks.slack.example/x", "only https URLs"),
    ],
)
def test_admin_refuses_a_url_aimed_inward_with_the_reason(admin_client, settings, url, words):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    settings.WEBHOOK_ALLOW_HTTP = False
    dataset = Dataset.objects.create(name="acme-hubspot")
    response = admin_client.post(
        reverse("admin:alerts_webhooksubscription_add"),
        {
            "dataset": dataset.pk,
            "url": url,
            "payload_format": "json",
            "triggers": ["request_changes"],
            "secret": "",
            "active": "on",
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert not WebhookSubscription.objects.exists()
    errors = response.context["adminform"].form.errors["url"]
    assert any(words in error for error in errors), errors
    assert errors[0].startswith("This URL cannot receive webhooks: ")


def test_an_internal_receiver_can_be_saved_once_allow_listed(admin_client, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["10.0.0.0/8"]
    settings.WEBHOOK_ALLOW_HTTP = False
    dataset = Dataset.objects.create(name="acme-hubspot")
    admin_client.post(
        reverse("admin:alerts_webhooksubscription_add"),
        {
            "dataset": dataset.pk,
            "url": "http://10.1.2.3:8080/hooks",
            "payload_format": "json",
            "triggers": ["request_changes"],
            "secret": "",
            "active": "on",
        },
    )
    assert WebhookSubscription.objects.get().url == "http://10.1.2.3:8080/hooks"


def add_subscription(admin_client, url: str):
    return admin_client.post(
        reverse("admin:alerts_webhooksubscription_add"),
        {
            "dataset": Dataset.objects.get_or_create(name="acme-hubspot")[0].pk,
            "url": url,
            "payload_format": "json",
            "triggers": ["request_changes"],
            "secret": "",
            "active": "on",
        },
    )


def test_a_one_word_host_can_be_saved_once_allow_listed(admin_client, settings):
    """A compose service (`hooks`) has no dot: Django's URL check alone refuses it."""
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks"]
    settings.WEBHOOK_ALLOW_HTTP = False
    add_subscription(admin_client, "http://hooks:8080/revreview")
    assert WebhookSubscription.objects.get().url == "http://hooks:8080/revreview"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://intranet:8080/x", "Enter a valid URL"),  # one word, not listed
        ("http://hooks:99999/x", "Port out of range"),  # listed, but no such port
        ("http://hooks:8080/a b", "Enter a valid URL"),
    ],
)
def test_a_one_word_host_is_still_checked_as_a_url(admin_client, settings, url, words):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks"]
    response = add_subscription(admin_client, url)
    assert response.status_code == 200 and not WebhookSubscription.objects.exists()
    errors = response.context["adminform"].form.errors["url"]
    assert any(words in error for error in errors), errors


def test_a_delivery_page_shows_the_excerpt_not_a_body(admin_client):
    run = reviewed()
    subscription = WebhookSubscription.objects.create(
        dataset=Dataset.objects.create(name="d"), url="https://x.example", secret="s"
    )
    delivery = WebhookDelivery.objects.create(subscription=subscription, run=run, body="{}")
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=1,
        started_at=timezone.now(),
        latency_ms=12,
        response_code=500,
        ok=False,
        excerpt="receiver is down",
    )
    page = admin_client.get(reverse("admin:alerts_webhookdelivery_change", args=[delivery.pk]))
    assert "receiver is down" in page.content.decode()
