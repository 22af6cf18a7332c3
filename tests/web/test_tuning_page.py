"""The dataset page's review policy and tuning partial (docs/history.md)."""

from __future__ import annotations

import pytest

from reviews.engine.history.policy import Policy
from reviews.models import Dataset, PolicyVersion
from reviews.orchestration.dataset import policies

pytestmark = pytest.mark.django_db


def test_policy_history_with_break_glass_diff_and_restore(client, django_user_model):
    staff = django_user_model.objects.create_user("boss", password="pw", is_staff=True)
    client.force_login(staff)
    dataset = Dataset.objects.create(name="acme")
    policies.save(
        dataset, Policy(rules={"stale_enrichment_days": 365}), reason="yearly", user=staff
    )
    glass = Policy(
        rules={"stale_enrichment_days": 365},
        off=frozenset({"won_without_amount"}),
        break_glass="amounts arrive a day late during the migration",
    )
    policies.save(dataset, glass, reason="migration", user=staff)

    page = client.get("/datasets/acme/")
    assert page.status_code == 200 and b"/datasets/acme/tuning/" in page.content
    partial = client.get("/datasets/acme/tuning/", headers={"HX-Request": "true"}).content.decode()
    assert "Review policy (version 2)" in partial and "<html" not in partial  # the section
    alone = client.get("/datasets/acme/tuning/").content.decode()  # its URL opened in a tab
    assert alone.startswith("<!doctype html>") and "Review policy (version 2)" in alone
    assert "Break glass: amounts arrive a day late during the migration" in partial
    assert "rule stale_enrichment_days: default → 365" in partial
    assert "kind won_without_amount: on → off" in partial

    restored = client.post("/datasets/acme/policy/restore/", {"version": "1"})
    assert restored.status_code == 302
    latest = PolicyVersion.objects.filter(dataset=dataset).order_by("-number").first()
    assert latest.number == 3 and latest.source == "restore"
    assert latest.policy["off"] == [] and latest.policy["rules"] == {"stale_enrichment_days": "365"}
    bad = client.post("/datasets/acme/tuning/apply/", {"proposal": "x", "reason": "r"}, follow=True)
    assert b"no proposal" in bad.content


@pytest.mark.own_workspaces
def test_the_tuning_section_is_the_members_and_changing_it_the_reviewers(client, django_user_model):
    from workspaces.models import Membership, Role, default_workspace

    dataset = Dataset.objects.create(name="acme")
    outsider = django_user_model.objects.create_user("out", password="pw")
    viewer = django_user_model.objects.create_user("view", password="pw")
    Membership.objects.create(workspace=default_workspace(), user=viewer, role=Role.VIEWER)

    client.force_login(outsider)
    assert client.get("/datasets/acme/tuning/").status_code == 404
    assert client.post("/datasets/acme/policy/restore/", {"version": "0"}).status_code == 404

    client.force_login(viewer)
    assert client.get("/datasets/acme/tuning/").status_code == 200
    assert client.post("/datasets/acme/policy/restore/", {"version": "0"}).status_code == 403
    assert not PolicyVersion.objects.filter(dataset=dataset).exists()
