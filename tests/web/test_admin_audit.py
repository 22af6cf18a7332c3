"""The admin reads as a person does (verdict labels, the break-glass override spelled
out) and keeps the audit trail: ledger entries and verdicts are append-only, a run with
evidence is purged only on purpose, by a superuser, with a reason."""

import pytest
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from ledger.models import LedgerEntry
from reviews.models import Batch, ReviewRun, Verdict
from tests.uploads import upload
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db


def with_ledger_row(run: ReviewRun) -> LedgerEntry:
    return LedgerEntry.objects.create(
        run=run,
        agent="dedup",
        model_requested="google/gemini-2.5-flash-lite",
        model="google/gemini-2.5-flash-lite",
        input_tokens=1200,
        output_tokens=150,
        cost_micros=180,
        outcome=LedgerEntry.Outcome.OK,
    )


def broken_glass(run: ReviewRun, user) -> Verdict:
    Verdict.objects.filter(run=run).update(
        decision=Verdict.Decision.REQUEST_CHANGES,
        overridden_by=user,
        override_reason="board meeting",
        overridden_at=timezone.now(),
    )
    return Verdict.objects.get(run=run)


@pytest.fixture
def staff_client(client, django_user_model):
    """Staff with every reviews and ledger permission, but not a superuser."""
    user = django_user_model.objects.create_user("sam", password="sam-pass-123", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["reviews", "ledger"])
    )
    client.force_login(user)
    return client


def test_run_list_shows_verdict_labels_not_snake_case(admin_client, admin_user):
    run, overridden = reviewed(), reviewed()
    broken_glass(overridden, admin_user)
    page = admin_client.get(reverse("admin:reviews_reviewrun_changelist")).content.decode()
    assert "Approved with comments" in page
    assert "Approved by break glass (was: Changes requested)" in page
    assert ">approve_with_comments<" not in page
    assert run.created_at.strftime("%Y-%m-%d %H:%M") in page


def test_a_break_glassed_run_page_shows_the_override_and_the_original(admin_client, admin_user):
    run = reviewed()
    broken_glass(run, admin_user)
    page = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[run.pk]))
    text = page.content.decode()
    assert "Approved by break glass (was: Changes requested)" in text
    assert "Changes requested" in text and "board meeting" in text
    assert "approve (run" not in text  # the old "Verdict: approve" beside the decision


def test_ledger_entries_are_view_only(admin_client):
    entry = with_ledger_row(reviewed())
    assert admin_client.get(reverse("admin:ledger_ledgerentry_add")).status_code == 403
    change_url = reverse("admin:ledger_ledgerentry_change", args=[entry.pk])
    view = admin_client.get(change_url)
    assert view.status_code == 200 and view.context["has_change_permission"] is False
    assert admin_client.post(change_url, {"agent": "forged"}).status_code == 403
    delete_url = reverse("admin:ledger_ledgerentry_delete", args=[entry.pk])
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    entry.refresh_from_db()
    assert entry.agent == "dedup"


def test_a_run_without_evidence_can_be_deleted(admin_client):
    run = reviewed()
    url = reverse("admin:reviews_reviewrun_delete", args=[run.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not ReviewRun.objects.filter(pk=run.pk).exists()


@pytest.mark.parametrize("evidence", ["ledger", "break_glass"])
def test_deleting_a_run_or_its_batch_with_evidence_is_refused(admin_client, admin_user, evidence):
    run = reviewed()
    if evidence == "ledger":
        with_ledger_row(run)
    else:
        broken_glass(run, admin_user)
    run_delete = reverse("admin:reviews_reviewrun_delete", args=[run.pk])
    assert admin_client.post(run_delete, {"post": "yes"}).status_code == 403
    batch_delete = reverse("admin:reviews_batch_delete", args=[run.batch_id])
    assert admin_client.post(batch_delete, {"post": "yes"}).status_code == 403
    asked = admin_client.get(batch_delete).content.decode()
    assert "review run" in asked  # "... your account doesn't have permission to delete"
    bulk = admin_client.post(
        reverse("admin:reviews_reviewrun_changelist"),
        {"action": "delete_selected", "_selected_action": [run.pk], "post": "yes"},
    )
    assert bulk.status_code == 403
    assert ReviewRun.objects.filter(pk=run.pk).exists()
    assert Batch.objects.filter(pk=run.batch_id).exists()
    assert Verdict.objects.filter(run=run).exists()
    change = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[run.pk]))
    assert "refused:" in change.content.decode()


def test_a_superuser_purges_a_run_with_a_reason_and_the_ledger_stays(admin_client, admin_user):
    run = reviewed()
    entry = with_ledger_row(run)
    changelist = reverse("admin:reviews_reviewrun_changelist")
    asked = admin_client.post(
        changelist, {"action": "purge_selected", "_selected_action": [run.pk]}
    )
    assert "Reason (required)" in asked.content.decode()
    no_reason = admin_client.post(
        changelist,
        {"action": "purge_selected", "_selected_action": [run.pk], "confirm": "yes"},
    )
    assert "nothing was deleted" in no_reason.content.decode()
    assert ReviewRun.objects.filter(pk=run.pk).exists()

    admin_client.post(
        changelist,
        {
            "action": "purge_selected",
            "_selected_action": [run.pk],
            "confirm": "yes",
            "purge_reason": "test upload with customer data",
        },
    )
    assert not ReviewRun.objects.filter(pk=run.pk).exists()
    entry.refresh_from_db()
    assert (entry.run_id, entry.cost_micros) == (None, 180)
    log = LogEntry.objects.get(object_id=str(run.pk), action_flag=DELETION)
    assert (log.user, log.change_message) == (admin_user, "Purged: test upload with customer data")


def test_staff_who_are_not_superusers_cannot_purge(staff_client):
    run = reviewed()
    with_ledger_row(run)
    changelist = reverse("admin:reviews_reviewrun_changelist")
    page = staff_client.get(changelist).content.decode()
    assert "purge_selected" not in page
    staff_client.post(
        changelist,
        {
            "action": "purge_selected",
            "_selected_action": [run.pk],
            "confirm": "yes",
            "purge_reason": "tidy up",
        },
    )
    assert ReviewRun.objects.filter(pk=run.pk).exists()


def test_rerun_message_counts_in_words(admin_client, django_capture_on_commit_callbacks):
    run = reviewed([upload("seed-example.json")])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:reviews_reviewrun_changelist"),
            {"action": "rerun_selected", "_selected_action": [run.pk]},
            follow=True,
        )
    assert "Started 1 run: #" in response.content.decode()


def test_run_list_filters_by_the_verdict_that_counts(admin_client, admin_user):
    plain, overridden = reviewed(), reviewed()
    broken_glass(overridden, admin_user)
    url = reverse("admin:reviews_reviewrun_changelist")
    page = admin_client.get(url)
    assert "Approved by break glass" in page.content.decode()
    glass = admin_client.get(url, {"verdict": "break_glass"}).context["cl"].result_list
    assert [r.pk for r in glass] == [overridden.pk]
    changes = admin_client.get(url, {"verdict": "request_changes"}).context["cl"].result_list
    assert list(changes) == []
    comments = admin_client.get(url, {"verdict": "approve_with_comments"})
    assert [r.pk for r in comments.context["cl"].result_list] == [plain.pk]
