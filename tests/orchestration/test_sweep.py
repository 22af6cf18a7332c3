"""The sweep brings back the work of dead workers and lost messages (tasks eager)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from reviews.models import AgentRun, Finding, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run import coordination, heartbeat, runner, sweep, tasks
from revreview.celery import app
from tests.uploads import upload

pytestmark = pytest.mark.django_db

SPECIALISTS = ("dedup", "attribution", "pipeline", "freshness")


def queued_run() -> ReviewRun:
    return submit([upload("seed-example.json")], dispatch=False, no_cache=True).run


def running_run(*, done=(), running=(), silent_for: int = 0) -> ReviewRun:
    """A claimed run with `done` specialists finished and `running` ones claimed, whose
    last heartbeat was `silent_for` seconds ago (their worker died then)."""
    run = queued_run()
    assert runner.claim_run(run.pk)
    for agent in done:
        runner.run_specialist(run.pk, agent)
    beat = timezone.now() - timedelta(seconds=silent_for)
    for agent in running:
        assert runner.claim_agent(run.pk, agent) == 0
        AgentRun.objects.filter(run=run, agent=agent).update(heartbeat_at=beat)
    return run


def agent(run: ReviewRun, name: str) -> AgentRun:
    return AgentRun.objects.get(run=run, agent=name)


def test_a_specialist_whose_heartbeat_stopped_is_sent_again_and_the_run_finishes(settings):
    run = running_run(done=("dedup", "pipeline", "freshness"), running=("attribution",),
                      silent_for=settings.HEARTBEAT_TIMEOUT_SECONDS + 1)  # fmt: skip
    tasks.sweep()
    run.refresh_from_db()
    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    attribution = agent(run, "attribution")
    assert (attribution.status, attribution.retries) == (AgentRun.Status.DONE, 1)
    assert set(run.agents.values_list("status", flat=True)) == {AgentRun.Status.DONE}
    assert run.findings.exists()


def test_a_live_heartbeat_is_left_alone(settings):
    run = running_run(running=SPECIALISTS, silent_for=settings.HEARTBEAT_TIMEOUT_SECONDS - 5)
    assert sweep.sweep().empty
    assert set(run.agents.filter(agent__in=SPECIALISTS).values_list("status", "retries")) == {
        (AgentRun.Status.RUNNING, 0)
    }


def test_past_the_retry_limit_the_specialist_fails_and_the_run_finishes_degraded(settings):
    run = running_run(done=("dedup", "pipeline", "freshness"), running=("attribution",),
                      silent_for=settings.HEARTBEAT_TIMEOUT_SECONDS + 1)  # fmt: skip
    AgentRun.objects.filter(run=run, agent="attribution").update(retries=settings.RUN_RETRY_LIMIT)
    plan = sweep.sweep()
    assert (plan.specialists, plan.coordinate, plan.failed) == ([], [run.pk], [
        f"run {run.pk}: attribution"
    ])  # fmt: skip
    tasks.coordinate(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, True)
    attribution = agent(run, "attribution")
    assert attribution.status == AgentRun.Status.FAILED
    assert "no heartbeat" in attribution.error and "giving up" in attribution.error


def test_a_silent_coordinator_is_sent_again_then_fails_the_run_past_the_limit(settings):
    run = running_run(done=SPECIALISTS)
    stale = timezone.now() - timedelta(seconds=settings.HEARTBEAT_TIMEOUT_SECONDS + 1)
    AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
        status=AgentRun.Status.RUNNING, heartbeat_at=stale
    )
    assert sweep.sweep().coordinate == [run.pk]
    assert agent(run, AgentRun.COORDINATOR).status == AgentRun.Status.PENDING

    AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
        status=AgentRun.Status.RUNNING, heartbeat_at=stale, retries=settings.RUN_RETRY_LIMIT
    )
    assert sweep.sweep().failed == [f"run {run.pk}: coordinator"]
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.FAILED and "giving up" in run.error


def test_a_worker_taken_back_cannot_overwrite_the_next_attempt(settings):
    run = running_run(done=("dedup", "pipeline", "freshness"), running=("attribution",),
                      silent_for=settings.HEARTBEAT_TIMEOUT_SECONDS + 1)  # fmt: skip
    plan = sweep.sweep()
    assert plan.specialists == [(run.pk, "attribution")]
    # The next attempt claims it; the first worker was only slow and now finishes.
    assert runner.claim_agent(run.pk, "attribution") == 1
    AgentRun.objects.filter(run=run, agent="attribution").update(packed_findings=b"next attempt's")
    saved = AgentRun.objects.filter(
        run=run, agent="attribution", status=AgentRun.Status.RUNNING, retries=0
    ).update(status=AgentRun.Status.DONE)  # what the first worker's save would match
    assert saved == 0
    assert bytes(agent(run, "attribution").packed_findings) == b"next attempt's"


def test_a_lost_specialist_message_is_sent_again(settings):
    run = running_run(done=("dedup", "pipeline", "freshness"))  # attribution never came
    assert sweep.sweep().empty  # it may still be in the queue
    ReviewRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - timedelta(seconds=settings.QUEUED_REDISPATCH_SECONDS + 1)
    )
    tasks.sweep()
    run.refresh_from_db()
    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    assert agent(run, "attribution").retries == 0  # waiting is no failed attempt


def test_a_coordinator_never_sent_is_sent_after_the_grace(settings):
    run = running_run(done=SPECIALISTS)
    assert sweep.sweep().empty
    AgentRun.objects.filter(run=run, agent__in=SPECIALISTS).update(
        finished_at=timezone.now() - timedelta(seconds=settings.DISPATCH_GRACE_SECONDS + 1)
    )
    tasks.sweep()
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE
    assert sweep.sweep().empty


def test_a_queued_run_whose_dispatch_never_reached_the_broker_is_sent(settings):
    lost, waiting = queued_run(), queued_run()
    long_ago = timezone.now() - timedelta(seconds=settings.DISPATCH_GRACE_SECONDS + 1)
    ReviewRun.objects.filter(pk__in=[lost.pk, waiting.pk]).update(created_at=long_ago)
    ReviewRun.objects.filter(pk=waiting.pk).update(dispatched_at=timezone.now())  # in the queue
    tasks.sweep()
    lost.refresh_from_db()
    assert (lost.status, lost.retries) == (ReviewRun.Status.DONE, 1)
    assert lost.dispatched_at is not None
    assert ReviewRun.objects.get(pk=waiting.pk).status == ReviewRun.Status.QUEUED


def test_a_run_whose_dispatch_keeps_failing_is_failed_after_the_retries(settings):
    run = queued_run()
    long_ago = timezone.now() - timedelta(seconds=settings.DISPATCH_GRACE_SECONDS + 1)
    ReviewRun.objects.filter(pk=run.pk).update(
        created_at=long_ago, retries=settings.RUN_RETRY_LIMIT - 1
    )
    assert sweep.sweep().start == [run.pk]  # its send fails again: dispatched_at stays None
    assert sweep.sweep().failed == [f"run {run.pk}"]
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.FAILED and "sent 4 times" in run.error


def test_a_run_long_in_the_queue_is_sent_again_but_never_failed_for_waiting(settings):
    run = queued_run()
    long_ago = timezone.now() - timedelta(seconds=settings.QUEUED_REDISPATCH_SECONDS + 1)
    ReviewRun.objects.filter(pk=run.pk).update(
        created_at=long_ago, dispatched_at=long_ago, retries=settings.RUN_RETRY_LIMIT
    )
    for _ in range(3):  # its message may be lost, or only behind a long queue
        assert sweep.sweep().start == [run.pk]
    assert ReviewRun.objects.get(pk=run.pk).status == ReviewRun.Status.QUEUED
    tasks.sweep()  # sent, for real this time (eager here): it runs
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE and run.dispatched_at > long_ago


def test_a_coordinator_sent_early_waits_for_the_specialists():
    run = running_run(done=("dedup", "pipeline"), running=("attribution", "freshness"))
    coordination.coordinate(run.pk)
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.RUNNING
    assert agent(run, AgentRun.COORDINATOR).status == AgentRun.Status.PENDING
    assert not Finding.objects.filter(run=run).exists()


@pytest.mark.django_db(transaction=True)
def test_a_running_agent_beats_from_its_own_thread():
    run = running_run(running=("dedup",), silent_for=3600)
    before = agent(run, "dedup").heartbeat_at
    with heartbeat.beating(run.pk, "dedup", interval=0.05):
        deadline = timezone.now() + timedelta(seconds=5)
        while agent(run, "dedup").heartbeat_at == before and timezone.now() < deadline:
            connection.close()  # read what the beat thread committed
    assert agent(run, "dedup").heartbeat_at > before
    # A beat never revives an agent that is no longer running.
    AgentRun.objects.filter(run=run, agent="dedup").update(status=AgentRun.Status.PENDING)
    assert not heartbeat.beat(run.pk, "dedup")


def test_the_sweep_has_a_queue_of_its_own_that_every_worker_consumes(settings):
    queues = {q.name for q in app.conf.task_queues}
    assert queues == {"celery", settings.SWEEP_QUEUE, settings.WEBHOOK_QUEUE}
    assert app.amqp.router.route({}, "reviews.sweep")["queue"].name == settings.SWEEP_QUEUE
    assert app.amqp.router.route({}, "reviews.run_specialist")["queue"].name == "celery"
    entry = settings.CELERY_BEAT_SCHEDULE["sweep"]
    assert (entry["task"], entry["schedule"]) == ("reviews.sweep", settings.SWEEP_INTERVAL_SECONDS)
    # Unacknowledged tasks come back only after any task could have finished.
    limits = max(settings.SPECIALIST_TIME_LIMIT, settings.COORDINATOR_TIME_LIMIT)
    assert settings.BROKER_VISIBILITY_TIMEOUT > limits
