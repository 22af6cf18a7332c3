"""Deliveries run on their own queue: routed there, consumed by a worker of their own in
docker-compose (and not by the review worker), and by `make run`'s one worker."""

from __future__ import annotations

import yaml
from django.conf import settings

from alerts.tasks import deliver_webhook, notify_run_finished, sweep_webhook_deliveries
from revreview.celery import app
from tests.services import ROOT


def queue_of(task) -> str:
    route = app.amqp.router.route({}, task.name, args=(), kwargs={})
    return route["queue"].name


def test_deliveries_are_routed_to_the_webhooks_queue():
    assert settings.WEBHOOK_QUEUE == "webhooks"
    assert queue_of(deliver_webhook) == queue_of(notify_run_finished) == "webhooks"
    assert queue_of(sweep_webhook_deliveries) == settings.SWEEP_QUEUE
    assert "webhooks" in {q.name for q in settings.CELERY_TASK_QUEUES}


def queues(command: str) -> set[str] | None:
    """What a `celery worker` command consumes: its -Q, or None for every queue."""
    words = command.split()
    return set(words[words.index("-Q") + 1].split(",")) if "-Q" in words else None


def test_compose_runs_the_webhooks_on_a_worker_of_their_own():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert queues(services["worker"]["command"]) == {"celery", settings.SWEEP_QUEUE}
    hooks = services["webhooks"]
    assert queues(hooks["command"]) == {"webhooks"}
    assert "webhooks@$$HOSTNAME" in " ".join(hooks["healthcheck"]["test"])
    assert hooks["restart"] == "unless-stopped"
    assert "WEBHOOK_ALLOWED_HOSTS" in hooks["environment"]


def test_make_runs_worker_consumes_the_webhooks_queue_too():
    (worker,) = [
        line.split(":", 1)[1]
        for line in (ROOT / "Procfile").read_text().splitlines()
        if line.startswith("worker:")
    ]
    consumed = queues(worker)
    assert consumed is None or "webhooks" in consumed
