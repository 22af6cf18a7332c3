"""Celery beat's part: due pulls queued and run, one at a time, a silent pull resumed;
a failed pull told to the dataset's webhooks, signed."""

from __future__ import annotations

import json
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from alerts import signing
from alerts.models import WebhookSubscription
from connectors import pulls, tasks
from connectors.models import Connection, Pull
from reviews.models import Dataset, ReviewRun
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.loopback import serving_thread

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"


@pytest.fixture
def hubspot(settings):
    portal = problem_portal(size=3)
    with serving(portal, settings) as api:
        yield api


def connected(name: str) -> Connection:
    return pulls.connect(Dataset.objects.create(name=name), TOKEN)


def test_beat_runs_the_due_pulls_and_schedules_the_next(
    postgres, hubspot, django_capture_on_commit_callbacks
):
    due = connected("due")
    later = connected("later")
    Connection.objects.filter(pk=later.pk).update(next_pull_at=timezone.now() + timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        tasks.start_due_pulls.apply()
    pull = Pull.objects.get()
    assert pull.connection == due and pull.status == Pull.Status.DONE
    assert ReviewRun.objects.get().status == ReviewRun.Status.DONE  # reviewed by the tasks
    due.refresh_from_db()
    assert due.next_pull_at == pull.started_at + timedelta(hours=24)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.start_due_pulls.apply()  # nothing is due now
    assert Pull.objects.count() == 1


def test_beat_resumes_a_pull_whose_worker_went_silent(
    postgres, hubspot, django_capture_on_commit_callbacks
):
    connection = connected("acme")
    pull = pulls.request_pull(connection)
    Pull.objects.filter(pk=pull.pk).update(
        status=Pull.Status.RUNNING, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    Connection.objects.filter(pk=connection.pk).update(next_pull_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.start_due_pulls.apply()
    pull.refresh_from_db()
    assert pull.status == Pull.Status.DONE


class Receiver:
    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        serving_thread(self.server).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_failed_pull_is_sent_to_the_webhooks_that_watch_failures(
    postgres, hubspot, django_capture_on_commit_callbacks, settings
):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]  # an operator's internal receiver
    receiver = Receiver()
    try:
        connection = connected("acme")
        WebhookSubscription.objects.create(
            dataset=connection.dataset, url=receiver.url, secret="s3cret", triggers=["failed"]
        )
        WebhookSubscription.objects.create(
            dataset=connection.dataset, url=receiver.url, secret="x", triggers=["request_changes"]
        )
        hubspot.portal.tokens.clear()
        with django_capture_on_commit_callbacks(execute=True):
            pull = pulls.request_pull(connection)
            pulls.execute_pull(pull.pk)
    finally:
        receiver.close()
    ((headers, body),) = receiver.received
    assert headers["X-Revreview-Event"] == "pull.failed"
    assert signing.verify("s3cret", headers[signing.HEADER], body)
    message = json.loads(body)
    assert message["dataset"] == "acme"
    assert "HubSpot refused the token" in message["pull"]["error"]
    assert TOKEN not in body.decode()


def test_a_failed_pull_is_retried_later_from_its_checkpoint(
    postgres, hubspot, settings, django_capture_on_commit_callbacks
):
    connection = connected("acme")
    settings.HUBSPOT_MAX_RETRIES = 0
    hubspot.portal.fail_next = [503]
    with django_capture_on_commit_callbacks(execute=True):
        tasks.start_due_pulls.apply()
    failed = Pull.objects.get()
    assert failed.status == Pull.Status.FAILED and "503" in failed.error
    connection.refresh_from_db()
    retry_in = connection.next_pull_at - timezone.now()
    assert timedelta(minutes=29) < retry_in <= timedelta(minutes=30)
    Connection.objects.filter(pk=connection.pk).update(next_pull_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        tasks.start_due_pulls.apply()
    retried = Pull.objects.get()  # the same pull, resumed
    assert retried.pk == failed.pk and retried.status == Pull.Status.DONE
    assert retried.attempts == 2
