"""A dataset's weeks through the real review path on Postgres (docs/history.md): the team
dismisses stale_enrichment findings it re-enriches yearly, and criticals; `manage.py tune`
proposes the threshold, replay proves it, applying it changes the next sync's findings of
that kind and nothing else; a revert restores the engine's rules."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from io import StringIO

import orjson
import pytest
from django.core.management import call_command

from reviews.engine.history.observe import observe
from reviews.engine.history.policy import EMPTY, Policy, PolicyError
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.models import Dataset, Finding, PolicyVersion, ReviewRun
from reviews.orchestration.dataset import policies
from reviews.orchestration.dataset.dismissals import dismiss
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import auto_tune, start_review
from reviews.samplegen.sync import generate_syncs
from tests.uploads import json_upload

pytestmark = [pytest.mark.django_db, pytest.mark.integration]
YEARLY = 400


def reviewed(batch: dict, **options) -> ReviewRun:
    submission = submit([json_upload(batch)], dispatch=False, no_cache=True, **options)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def aged(weeks: list[dict], every: int = 15) -> list[dict]:
    """The weeks with one company in `every` enriched long ago (200-699 days before the
    first sync), the same date in every week, as a CRM whose enrichment lapsed."""
    first = datetime.fromisoformat(weeks[0]["exportedAt"].replace("Z", "+00:00"))
    for batch in weeks:
        for company in batch["companies"]:
            number = int(hashlib.sha256(company["id"].encode()).hexdigest()[:8], 16)
            if number % every == 0:
                day = first - timedelta(days=200 + number % 500)
                company["enrichedAt"] = day.date().isoformat()
    return weeks


def seen(run: ReviewRun) -> dict[str, tuple[str, str]]:
    """fingerprint -> (kind, severity) of the run's findings and suppressed findings."""
    rows = Finding.objects.filter(run_id=run.findings_run_id)
    found = {f.fingerprint: (f.kind, f.severity) for f in rows}
    found |= {s["fingerprint"]: (s["kind"], s["severity"]) for s in run.suppressed}
    return found


def test_a_team_s_weeks_tuned_applied_and_reverted(postgres, django_user_model):
    weeks = aged([batch for batch, _ in generate_syncs(1_000, seed=27, syncs=4)])
    user = django_user_model.objects.create_user("dana")
    dismissed_criticals: set[str] = set()
    for batch in weeks[:3]:
        run = reviewed(batch)
        dataset = run.batch.dataset
        plain = parse_upload(
            [UploadedFile("s.json", orjson.dumps(batch))], as_of=None, received_at=datetime.now(UTC)
        )
        for item in observe(plain, Rules(), EMPTY):
            yearly = item.kind == "stale_enrichment" and item.measure <= YEARLY
            if yearly or (item.severity == "critical" and len(dismissed_criticals) < 8):
                if item.severity == "critical":
                    dismissed_criticals.add(item.fingerprint)
                dismiss(dataset, item.fingerprint, reason="we re-enrich yearly", user=user)
    assert len(dismissed_criticals) == 8

    out = StringIO()
    call_command("tune", dataset=dataset.name, format="json", stdout=out)
    result = json.loads(out.getvalue())
    [proposal] = result["proposals"]  # none for the dismissed criticals
    assert proposal["kind"] == "stale_enrichment"
    value = int(proposal["policy"]["stale_enrichment_days"])
    # A dismissed company ages a day a sync (401-403); the proposal is the roundest number
    # from there to below the youngest kept one.
    assert 180 < value <= YEARLY + 10 and value % 5 == 0
    replay = proposal["replay"]
    assert replay["syncs"] == 3
    assert replay["dismissed_hidden"] >= 0.9 * replay["dismissed_total"] > 0
    assert replay["kept_hidden"] == 0 and replay["kept_total"] > 0

    call_command(
        "tune", dataset=dataset.name, apply=proposal["id"], reason="re-enriched yearly", user="dana"
    )
    version = PolicyVersion.objects.get(dataset=dataset)
    assert version.number == 1 and version.source == "proposal"
    assert version.policy["rules"] == {"stale_enrichment_days": str(value)}

    run4 = reviewed(weeks[3])
    assert run4.policy_version == version
    control = reviewed(weeks[3], dataset="control")  # the same sync, no policy
    assert control.policy_version is None
    tuned, plain = seen(run4), seen(control)
    stale = {fp for fp, (kind, _) in plain.items() if kind == "stale_enrichment"}
    assert 0 < len({fp for fp in tuned if fp in stale}) < len(stale)
    others = {fp: v for fp, v in plain.items() if fp not in stale}
    assert {fp: v for fp, v in tuned.items() if fp not in stale} == others
    assert any(sev == "critical" for _, sev in others.values())

    # Revert: a new version with the engine's rules; the key of the next run changes.
    call_command("tune", dataset=dataset.name, revert=0, reason="back", user="dana")
    restored = PolicyVersion.objects.filter(dataset=dataset).order_by("-number").first()
    assert restored.number == 2 and restored.policy == EMPTY.to_data()
    history = policies.history(dataset)
    assert [row["number"] for row in history] == [2, 1]
    assert history[1]["diff"] == [
        {"what": "rule stale_enrichment_days", "before": "", "after": str(value)}
    ]
    run5 = reviewed(weeks[3])
    assert run5.policy_version == restored
    assert run5.config_fingerprint != run4.config_fingerprint

    # Opted in, the dataset applies by itself a proposal hiding only dismissed findings.
    assert auto_tune.apply().get() == 0  # not opted in yet
    Dataset.objects.filter(pk=dataset.pk).update(auto_apply_proposals=True)
    assert auto_tune.apply().get() == 1
    auto = PolicyVersion.objects.filter(dataset=dataset).order_by("-number").first()
    assert auto.number == 3 and auto.source == "auto"
    # sync 4 is stored too now: a dismissed company a day older, and the proposal leaves
    # it the next sync's day of ageing (issue 36: 407 here; at most 406 before)
    assert value <= int(auto.policy["rules"]["stale_enrichment_days"]) <= value + 2
    assert auto.replay["kept_hidden"] == 0 and auto.replay["added"] == 0
    assert auto_tune.apply().get() == 0  # nothing left to propose
    policies.restore(dataset, 2, reason="one click", user=user)  # the revert
    assert policies.current(dataset)[1] == EMPTY


def test_only_staff_may_break_glass_on_a_critical_kind(postgres, django_user_model):
    dataset = Dataset.objects.create(name="glass")
    member = django_user_model.objects.create_user("member")
    staff = django_user_model.objects.create_user("boss", is_staff=True)
    quiet = Policy(off=frozenset({"won_without_amount"}))
    with pytest.raises(PolicyError, match="break-glass"):
        policies.save(dataset, quiet, reason="noise", user=staff)
    glass = Policy(off=frozenset({"won_without_amount"}), break_glass="migration week")
    with pytest.raises(PolicyError, match="staff"):
        policies.save(dataset, glass, reason="noise", user=member)
    version = policies.save(dataset, glass, reason="noise", user=staff)
    assert policies.history(dataset)[0]["break_glass"] == "migration week"
    assert version.number == 1
