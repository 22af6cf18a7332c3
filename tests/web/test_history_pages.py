"""Dataset history on the dashboard: the upload's Dataset field, New / Open badges and
their filter, Dismiss / Undo by htmx, the resolved and suppressed sections, the dataset
page, and the admin's Dismissals (Django's test client; tasks run eagerly)."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from reviews.models import Dataset, Dismissal, ReviewRun
from reviews.orchestration.dataset.dismissals import dismiss
from tests.orchestration.test_dataset_history import reviewed, small_sync
from tests.web.conftest import reviewed as reviewed_seed

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def two_syncs(member) -> tuple[ReviewRun, ReviewRun]:
    """Sync 1: a won deal without close date + a duplicate domain. The team dismisses
    the duplicate; sync 2 fills the close date and adds a negative amount."""
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    duplicate = run1.findings.get(kind="company_same_domain")
    dismiss(run1.batch.dataset, duplicate.fingerprint, reason="two subsidiaries", user=member)
    second = small_sync("2026-08-02T09:00:00Z", 1200)
    second["deals"][0]["closeDate"] = "2026-07-30"
    second["deals"].append(
        {"id": "dl_2", "name": "Acme upsell", "amount": -50, "stage": "appointmentscheduled",
         "companyId": "co_2", "closeDate": "2026-09-01"}
    )  # fmt: skip
    run2 = reviewed(second, created_by=member)
    return run1, run2


def test_the_upload_form_takes_a_dataset_and_suggests_the_users_datasets(member_client, member):
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset="mine"), created_by=member)
    page = member_client.get(reverse("reviews:upload")).content.decode()
    assert '<datalist id="dataset-names"><option value="mine">' in page
    data = (
        b'{"companies": [{"id": "co_1", "name": "Acme"}], "contacts": [], "deals": [],'
        b' "dataset": "from-the-file"}'
    )
    response = member_client.post(
        reverse("reviews:upload"),
        {"files": SimpleUploadedFile("a.json", data), "dataset": "typed-in"},
    )
    run = ReviewRun.objects.get(pk=response.url.rstrip("/").rsplit("/", 1)[1])
    assert run.batch.dataset.name == "typed-in"


def test_run_page_shows_badges_filters_by_status_and_lists_resolved_and_suppressed(
    member_client, member
):
    run1, run2 = two_syncs(member)
    url = reverse("reviews:run", args=[run2.pk])
    page = member_client.get(url).content.decode()
    assert '<span class="badge status-new"' in page
    assert f'href="{reverse("reviews:dataset", args=["acme-hubspot"])}?workspace=' in page
    assert 'id="resolved"' in page and "won_without_close_date" in page.split('id="resolved"')[1]
    suppressed = page.split('id="suppressed"')[1]
    assert "two subsidiaries" in suppressed and "member" in suppressed
    new_only = member_client.get(url, {"status": "new"}, headers=HTMX)
    assert [f.kind for f in new_only.context["findings_page"].object_list] == ["negative_amount"]
    assert member_client.get(url, {"status": "open"}).context["findings_page"].object_list == []
    # The first sync: no baseline, every finding new.
    first = member_client.get(reverse("reviews:run", args=[run1.pk])).content.decode()
    assert "The first sync of" in first and 'class="badge status-open" title' not in first


def test_a_dismissal_from_the_command_line_without_a_user_says_so(member_client, member):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    duplicate = run1.findings.get(kind="company_same_domain")
    reason = ("--reason", "two subsidiaries")
    call_command("dismiss", duplicate.fingerprint, "--dataset", "acme-hubspot", *reason)
    run2 = reviewed(small_sync("2026-08-02T09:00:00Z", 1200), created_by=member)
    page = member_client.get(reverse("reviews:run", args=[run2.pk])).content.decode()
    suppressed = page.split('id="suppressed"')[1]
    assert "Dismissed from the command line: <q>two subsidiaries</q>" in suppressed
    first = member_client.get(reverse("reviews:run", args=[run1.pk])).content.decode()
    assert "Dismissed from the command line\n" in first.split('class="dismissed"')[1]


def test_dismiss_and_undo_swap_the_finding_in_place(member_client, member):
    _, run2 = two_syncs(member)
    finding = run2.findings.get(kind="negative_amount")
    url = reverse("reviews:dismiss", args=[run2.pk, finding.pk])
    refused = member_client.post(url, {"reason": "  "}, headers=HTMX)
    assert refused.status_code == 200 and "A reason is required" in refused.content.decode()
    nul = member_client.post(url, {"reason": "a\x00b"}, headers=HTMX)
    assert nul.status_code == 200 and "Null characters are not allowed" in nul.content.decode()
    assert not Dismissal.objects.filter(fingerprint=finding.fingerprint).exists()

    response = member_client.post(url, {"reason": "test deal, <b>ignore</b>"}, headers=HTMX)
    fragment = response.content.decode()
    assert fragment.startswith('<details class="finding" data-kind="negative_amount"')
    assert f'id="finding-{finding.pk}"' in fragment.split(">")[0]
    assert "Dismissed by <strong>member</strong>" in fragment
    assert "&lt;b&gt;ignore&lt;/b&gt;" in fragment and "<b>ignore" not in fragment
    assert "Undo dismissal" in fragment
    dismissal = Dismissal.objects.get(fingerprint=finding.fingerprint, undone_at__isnull=True)
    assert (dismissal.title, dismissal.created_by) == (finding.title, member)

    undo_url = reverse("reviews:undo_dismissal", args=[run2.pk, finding.pk])
    undo = member_client.post(undo_url, headers=HTMX)
    assert 'class="dismiss-form"' in undo.content.decode()
    dismissal.refresh_from_db()
    assert dismissal.undone_by == member
    # Without JavaScript the form posts and comes back to the run page.
    plain = member_client.post(url, {"reason": "again"})
    assert plain.status_code == 302 and plain.url == reverse("reviews:run", args=[run2.pk])


def test_a_run_without_a_dataset_has_no_dismiss_and_refuses_one(member_client):
    run = reviewed_seed()
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "dismiss-form" not in page and "status-new" not in page and 'id="resolved"' not in page
    finding = run.findings.first()
    url = reverse("reviews:dismiss", args=[run.pk, finding.pk])
    assert member_client.post(url, {"reason": "x"}).status_code == 404


def test_dataset_page_lists_syncs_trend_and_the_share_each_rule_kind_dismissed(
    member_client, member, django_assert_max_num_queries
):
    run1, run2 = two_syncs(member)
    url = reverse("reviews:dataset", args=["acme-hubspot"])
    with django_assert_max_num_queries(12):
        response = member_client.get(url)
    page = response.content.decode()
    syncs = response.context["syncs"]
    assert [s.run.pk for s in syncs] == [run2.pk, run1.pk]  # newest first
    counts = [[s.counts[key] for key in ("new", "open", "resolved", "suppressed")] for s in syncs]
    assert counts == [[1, 0, 1, 1], [2, 0, 0, 0]]
    assert page.count("<polyline") == 3
    # Oldest on the left: warnings fell from 1 to 0 (the duplicate is suppressed).
    lines = {line.severity: line.points for line in response.context["chart"].lines}
    assert lines == {
        "critical": "24.0,24.0 616.0,24.0",
        "warning": "24.0,24.0 616.0,156.0",
        "suggestion": "24.0,156.0 616.0,156.0",
    }
    shares = {s.kind: (s.problems, s.dismissed, s.percent) for s in response.context["shares"]}
    assert shares["company_same_domain"] == (1, 1, 100)
    assert shares["won_without_close_date"] == (1, 0, 0)
    assert "two subsidiaries" in page
    assert member_client.get(reverse("reviews:dataset", args=["nope"])).status_code == 404
    runs = member_client.get(reverse("reviews:runs")).content.decode()
    assert f'href="{url}?workspace=' in runs


def test_the_admin_lists_dismissals_and_undoes_them_as_recorded(admin_client, member):
    run1, _ = two_syncs(member)
    dismissal = Dismissal.objects.get()
    page = admin_client.get(reverse("admin:reviews_dismissal_changelist")).content.decode()
    assert "two subsidiaries" in page and dismissal.fingerprint in page
    admin_client.post(
        reverse("admin:reviews_dismissal_changelist"),
        {"action": "undo_selected", "_selected_action": [dismissal.pk]},
    )
    dismissal.refresh_from_db()
    assert dismissal.undone_at is not None and dismissal.undone_by.username == "admin"
    dataset = Dataset.objects.get()
    change = admin_client.get(reverse("admin:reviews_dataset_change", args=[dataset.pk]))
    assert reverse("reviews:dataset", args=[dataset.name]) in change.content.decode()
    run_admin = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[run1.pk]))
    assert reverse("reviews:dataset", args=[dataset.name]) in run_admin.content.decode()


def test_the_findings_csv_of_a_sync_carries_fingerprint_status_and_first_seen(
    member_client, member
):
    _, run2 = two_syncs(member)
    response = member_client.get(reverse("reviews:findings_csv", args=[run2.pk]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][-5:-2] == ["fingerprint", "status", "first_seen"]
    finding = run2.findings.get()
    assert rows[1][-5:-2] == [finding.fingerprint, "new", "2026-08-02T09:00:00+00:00"]


def test_the_admin_dismisses_selected_findings_with_a_reason(admin_client, member):
    _, run2 = two_syncs(member)
    finding = run2.findings.get(kind="negative_amount")
    url = reverse("admin:reviews_finding_changelist")
    selected = {"action": "dismiss_selected", "_selected_action": [finding.pk]}

    asked = admin_client.post(url, selected)
    assert "Reason (required)" in asked.content.decode()
    no_reason = admin_client.post(url, {**selected, "confirm": "yes", "dismiss_reason": " "})
    assert "nothing was dismissed" in no_reason.content.decode()
    assert not Dismissal.objects.filter(fingerprint=finding.fingerprint).exists()

    admin_client.post(url, {**selected, "confirm": "yes", "dismiss_reason": "a test deal"})
    dismissal = Dismissal.objects.get(fingerprint=finding.fingerprint)
    assert (dismissal.dataset, dismissal.reason) == (run2.batch.dataset, "a test deal")
    assert (dismissal.created_by.username, dismissal.title) == ("admin", finding.title)


def test_the_admin_refuses_to_dismiss_a_finding_outside_a_dataset(admin_client):
    run = reviewed_seed()
    finding = run.findings.first()
    admin_client.post(
        reverse("admin:reviews_finding_changelist"),
        {
            "action": "dismiss_selected",
            "_selected_action": [finding.pk],
            "confirm": "yes",
            "dismiss_reason": "not ours",
        },
    )
    assert not Dismissal.objects.exists()
