"""A sync's arrival in its dataset (docs/history.md, Late uploads and unfamiliar records):
an export older (by as-of) than syncs already uploaded is placed by its as-of, and says
that the syncs after it moved up one number; an upload that shares no record with the
sync it is compared with is warned about. Both warnings are on the run page, in the run
JSON (API and CLI) and its readable report, and marked on the dataset page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import Batch, ReviewRun
from reviews.orchestration.dataset.arrival import SAMPLE_PER_LIST, record_sample
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.report import run_report, text_report
from tests.engine.ingest.helpers import parse_json
from tests.uploads import json_upload

pytestmark = pytest.mark.django_db

DATASET = "contoso-hubspot"


def export(day: str, *, prefix: str = "co", **extra) -> dict:
    """An export as of that day in 2026 (MM-DD), three companies of ids prefix_1.."""
    return {
        "id": f"contoso-{day}-{prefix}",
        "exportedAt": f"2026-{day}T09:00:00Z",
        "companies": [
            {"id": f"{prefix}_{n}", "name": f"Contoso {prefix} {n}", "domain": f"c{n}.example"}
            for n in (1, 2, 3)
        ],
        "contacts": [],
        "deals": [],
        **extra,
    }


def sync(data: dict, dataset: str | None = DATASET) -> ReviewRun:
    submission = submit(
        [json_upload(data, f"{data['id']}.json")], dispatch=False, no_cache=True, dataset=dataset
    )
    assert submission.accepted, submission.errors
    if submission.run.status == ReviewRun.Status.QUEUED:
        start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def codes(run: ReviewRun) -> list[str]:
    return [w["code"] for w in Batch.objects.get(pk=run.batch_id).warnings]


def test_a_late_export_is_placed_by_its_as_of_and_says_who_moved(client, django_user_model):
    first = sync(export("08-01"))
    second = sync(export("08-08"))
    assert codes(first) == codes(second) == []
    late = sync(export("07-25"))  # uploaded last, the oldest by as-of

    (warning,) = Batch.objects.get(pk=late.batch_id).warnings
    assert warning["code"] == "uploaded_late"
    assert warning["message"] == (
        "Uploaded late: its as-of, 2026-07-25 09:00 UTC, is older than that of 2 syncs of "
        "this dataset uploaded before it (the latest as of 2026-08-08 09:00 UTC). Placed by "
        "its as-of, it is sync #1, and the 2 after it moved up one number (#1 to #2 are now "
        "#2 to #3); their reviews do not change. No earlier sync was reviewed, so everything "
        "in it is new."
    )
    assert late.baseline_run_id is None

    between = sync(export("08-04"))
    (warning,) = Batch.objects.get(pk=between.batch_id).warnings
    assert warning["message"] == (
        "Uploaded late: its as-of, 2026-08-04 09:00 UTC, is older than that of 1 sync of "
        "this dataset uploaded before it (the latest as of 2026-08-08 09:00 UTC). Placed by "
        "its as-of, it is sync #3, and the 1 after it moved up one number (#3 is now #4); "
        f"its review does not change. It is compared with the sync before it by as-of (run "
        f"#{first.pk})."
    )
    assert between.baseline_run_id == first.pk

    # In the run JSON (the API's, the CLI's) and the readable report.
    report = run_report(between)
    assert report["batch"]["warnings"] == [warning]
    assert f"warning: {warning['message']}" in text_report(report)
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    api = client.get(
        f"/api/v1/runs/{between.pk}",
        headers={"Authorization": f"Bearer {create_token(user, 'ci').secret}"},
    )
    assert api.status_code == 200 and api.json()["batch"]["warnings"] == [warning]
    # On the run page, and marked on the dataset page's syncs, numbered by as-of.
    client.force_login(user)
    page = client.get(reverse("reviews:run", args=[between.pk])).content.decode()
    assert 'data-code="uploaded_late"' in page and "Uploaded late: its as-of" in page
    dataset_page = client.get(
        reverse("reviews:dataset", args=[DATASET]), {"workspace": between.batch.workspace_id}
    ).content.decode()
    rows = dataset_page.split('id="syncs"', 1)[1].split("</tbody>", 1)[0].split("<tr data-sync=")
    numbers = {row.split('"')[1]: row for row in rows[1:]}
    assert "uploaded late" in numbers["1"] and "uploaded late" in numbers["3"]
    assert "uploaded late" not in numbers["2"] + numbers["4"]
    assert "contoso-08-04" in numbers["3"] and "contoso-07-25" in numbers["1"]


def test_the_same_as_of_again_or_a_rerun_is_not_late():
    first = sync(export("08-01"))
    again = sync(export("08-01", name="again"))  # same as-of, uploaded later: after it
    later = sync(export("08-08"))
    assert codes(first) == codes(again) == codes(later) == []
    from reviews.orchestration.intake.serve import rerun

    rerun(first)  # the syncs uploaded after it do not make it late
    assert codes(first) == []


def test_an_upload_sharing_no_record_with_its_baseline_is_warned_about(client, django_user_model):
    first = sync(export("08-01"))
    stranger = sync(export("08-08", prefix="acct"))  # another CRM's ids
    (warning,) = Batch.objects.get(pk=stranger.batch_id).warnings
    assert warning["code"] == "unfamiliar_records"
    assert warning["message"] == (
        f"No records in common with the sync it is compared with (run #{first.pk}, as of "
        "2026-08-01 09:00 UTC): none of its 3 company ids is in this upload. Is this the "
        "right dataset, and a whole export? Against that sync, every problem here is new "
        "and every one of its problems reads as resolved."
    )
    assert run_report(stranger)["batch"]["warnings"] == [warning]
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    page = client.get(reverse("reviews:run", args=[stranger.pk])).content.decode()
    assert 'data-code="unfamiliar_records"' in page and "Is this the right dataset" in page

    # One record in common is enough; a list the other sync lacks says nothing.
    shared = export("08-15", prefix="acct")
    shared["companies"][0]["id"] = "acct_9"
    assert codes(sync(shared)) == []
    deals_only = {**export("08-22"), "companies": [], "deals": [{"id": "dl_1", "amount": 5}]}
    assert codes(sync(deals_only)) == []


def test_past_the_sample_the_warning_says_few_or_none():
    big = [{"id": f"co_{n}", "name": f"C {n}"} for n in range(SAMPLE_PER_LIST * 2)]
    first = sync({**export("08-01"), "companies": big})
    stranger = sync(export("08-08", prefix="acct"))
    (warning,) = Batch.objects.get(pk=stranger.batch_id).warnings
    assert warning["message"].startswith(
        f"Few records in common with the sync it is compared with (run #{first.pk}, as of "
        f"2026-08-01 09:00 UTC), or none: none of {SAMPLE_PER_LIST} company ids sampled "
        f"from its {SAMPLE_PER_LIST * 2} is in this upload."
    )


def test_a_batch_without_a_dataset_keeps_no_sample_and_no_warnings_key():
    run = sync(export("08-01"), dataset=None)
    batch = Batch.objects.get(pk=run.batch_id)
    assert (batch.record_sample, batch.warnings) == ({}, [])
    assert "warnings" not in run_report(run)["batch"]


def test_the_sample_is_a_fair_deterministic_few_ids_of_each_list():
    companies = [{"id": f"co_{n}", "name": "x"} for n in range(SAMPLE_PER_LIST * 5)]
    contacts = [{"id": "ct_" + "x" * 100}]  # an id too long to keep is not sampled
    parsed = parse_json({"companies": companies, "contacts": contacts, "deals": []})
    sample = record_sample(parsed)
    assert (len(sample["companies"]), sample["contacts"], sample["deals"]) == (
        SAMPLE_PER_LIST,
        [],
        [],
    )
    assert sample == record_sample(parse_json({"companies": companies[::-1], "contacts": contacts,
                                               "deals": []}))  # fmt: skip
    # Not the file's first rows: ids from all over the list.
    indexes = sorted(int(i.removeprefix("co_")) for i in sample["companies"])
    assert indexes[-1] > SAMPLE_PER_LIST * 3 and indexes[0] < SAMPLE_PER_LIST * 2
