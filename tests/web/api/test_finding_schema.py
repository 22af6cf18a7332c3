"""Everything the JSON report says about a finding is in the API's OpenAPI schema."""

from __future__ import annotations

import pytest

from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.report import run_report
from reviews.web.api.api import api
from tests.uploads import upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def reviewed(**options):
    submission = submit([upload("seed-example.json")], dispatch=False, **options)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return run_report(submission.run)


def finding_schema() -> dict:
    return api.get_openapi_schema()["components"]["schemas"]["FindingInfo"]


def test_the_report_finding_keys_equal_the_schema_properties(postgres):
    schema = finding_schema()
    synced = reviewed(dataset="acme-hubspot")["findings"]
    assert synced
    assert {key for f in synced for key in f} == set(schema["properties"])
    plain = reviewed(no_cache=True)["findings"]
    assert {key for f in plain for key in f} == set(schema["required"])
    assert {f["currency"] for f in synced} <= {None, "USD"}
