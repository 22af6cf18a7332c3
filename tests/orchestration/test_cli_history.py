"""manage.py review --dataset and manage.py dismiss: two syncs from the terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.engine.history.compare import fingerprint
from reviews.models import Dismissal
from tests.orchestration.test_cli import review_json

pytestmark = pytest.mark.django_db


def write(tmp_path: Path, name: str, as_of: str, amount: int) -> Path:
    batch = {
        "exportedAt": as_of,
        "dataset": "from-the-file",
        "companies": [{"id": "co_1", "name": "Acme"}],
        "contacts": [],
        "deals": [
            {"id": "dl_1", "name": "Acme renewal", "amount": amount, "stage": "closedwon",
             "companyId": "co_1"},
        ],
    }  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps(batch))
    return path


def sync(tmp_path: Path, name: str, as_of: str, amount: int) -> tuple[int, dict]:
    return review_json(write(tmp_path, name, as_of, amount), "--dataset", "acme")


def dismiss(*args: str) -> str:
    out = io.StringIO()
    call_command("dismiss", *args, stdout=out)
    return out.getvalue()


def test_review_dataset_then_dismiss_then_the_next_sync_suppresses_it(
    postgres, tmp_path, django_user_model
):
    django_user_model.objects.create_user("ops")
    code, first = sync(tmp_path, "a.json", "2026-08-01T09:00:00Z", 500)
    assert code == 1 and first["run"]["dataset"] == "acme"
    [critical] = first["findings"]
    key = critical["fingerprint"]
    out = dismiss(key, "--dataset", "acme", "--reason", "booked in the old CRM", "--user", "ops")
    assert out.startswith(f"dismissed: {key}")
    assert Dismissal.objects.get().created_by.username == "ops"

    code, second = sync(tmp_path, "b.json", "2026-08-02T09:00:00Z", 900)
    assert code == 0 and second["verdict"] == "approve"
    assert second["findings"] == []
    assert [s["fingerprint"] for s in second["suppressed"]] == [key]
    assert second["suppressed"][0]["reason"] == "booked in the old CRM"
    assert second["run"]["baseline_run"] == first["run"]["id"]

    assert dismiss(key, "--dataset", "acme", "--undo").startswith(f"undone: {key}")
    code, third = sync(tmp_path, "c.json", "2026-08-03T09:00:00Z", 900)
    assert third["suppressed"] == [] and third["findings"][0]["status"] == "open"


def test_dismiss_refuses_bad_input_with_exit_code_2(postgres, tmp_path):
    review_json(write(tmp_path, "a.json", "2026-08-01T09:00:00Z", 500))
    cases = [
        (("0123456789abcdef", "--dataset", "nope", "--reason", "x"), "no dataset named 'nope'"),
        (("0123456789abcdef", "--dataset", "from-the-file"), "a reason is required"),
        (("zz", "--dataset", "from-the-file", "--reason", "x"), "not a fingerprint"),
        (("0123456789abcdef", "--dataset", "from-the-file", "--undo"), "is not dismissed"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message) as error:
            dismiss(*args)
        assert error.value.returncode == 2


def review_text(path: Path) -> str:
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("review", str(path), "--dataset", "acme", stdout=out)
    return out.getvalue()


def test_the_text_report_shows_status_resolved_and_suppressed(postgres, tmp_path):
    sync(tmp_path, "a.json", "2026-08-01T09:00:00Z", 500)
    path = write(tmp_path, "b.json", "2026-08-02T09:00:00Z", 500)
    batch = json.loads(path.read_text())
    batch["deals"][0]["closeDate"] = "2026-07-30"  # fixed: resolved
    batch["deals"].append(
        {"id": "dl_2", "name": "Acme upsell", "amount": -5, "stage": "qualifiedtobuy",
         "companyId": "co_1", "closeDate": "2026-09-01"}
    )  # fmt: skip
    batch["companies"].append({"id": "co_2", "name": "Acme", "domain": "acme.example"})
    path.write_text(json.dumps(batch))
    second = review_text(path)
    assert "CRITICAL   pipeline/negative_amount NEW #" in second
    resolved = second.split("resolved since the last sync (run ")[1]
    assert "pipeline/won_without_close_date" in resolved

    duplicate = fingerprint("dedup", "company_same_name", ["co_1", "co_2"])
    dismiss(duplicate, "--dataset", "acme", "--reason", "two subsidiaries")
    batch["exportedAt"] = "2026-08-03T09:00:00Z"
    path.write_text(json.dumps(batch))
    third = review_text(path)
    assert "CRITICAL   pipeline/negative_amount OPEN #" in third
    assert "first seen: 2026-08-02T09:00:00Z" in third
    suppressed = third.split("suppressed (dismissed by the team; not in the verdict):")[1]
    assert f"dedup/company_same_name OPEN #{duplicate}" in suppressed
    assert "dismissed by -: two subsidiaries" in suppressed


def test_a_suppressed_finding_with_money_at_risk_shows_it_in_its_currency(postgres, tmp_path):
    """A dismissed duplicate whose open deal is at risk: the JSON entry names the money's
    currency, and the readable report prints it (it once failed on the missing key)."""
    path = write(tmp_path, "a.json", "2026-08-01T09:00:00Z", 500)
    batch = json.loads(path.read_text())
    batch["companies"].append({"id": "co_2", "name": "Acme", "domain": "acme.example"})
    batch["deals"] = [
        {"id": "dl_2", "name": "Acme upsell", "amount": 1200, "currency": "EUR",
         "stage": "qualifiedtobuy", "companyId": "co_2", "closeDate": "2026-09-01"}
    ]  # fmt: skip
    path.write_text(json.dumps(batch))
    review_json(path, "--dataset", "acme")
    duplicate = fingerprint("dedup", "company_same_name", ["co_1", "co_2"])
    dismiss(duplicate, "--dataset", "acme", "--reason", "two subsidiaries")

    code, second = review_json(path, "--dataset", "acme")
    [entry] = second["suppressed"]
    assert (entry["amount_at_risk"], entry["currency"]) == (1200, "EUR")
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("review", str(path), "--dataset", "acme", stdout=out, stderr=err)
    assert (exit_.value.code, err.getvalue()) == (code, "")
    suppressed = out.getvalue().split("suppressed (dismissed by the team; not in the verdict):")[1]
    assert f"dedup/company_same_name [€1,200] OPEN #{duplicate}" in suppressed


def test_a_three_decimal_currency_keeps_its_third_digit_and_the_finding_rounds_to_cents(
    postgres, tmp_path
):
    """BHD has three minor digits: titles, the summary and the standing say 12.345; a
    finding's own amount is kept to cents (docs/output.md), rounded half to even, the
    same in the JSON and the readable report."""
    path = write(tmp_path, "a.json", "2026-08-01T09:00:00Z", 500)
    batch = json.loads(path.read_text())
    batch["deals"] = [
        {"id": "dl_2", "name": "Manama", "amount": "12.345", "currency": "BHD",
         "stage": "qualifiedtobuy", "companyId": "co_1", "closeDate": "2026-07-01"}
    ]  # fmt: skip
    path.write_text(json.dumps(batch))
    _, report = review_json(path, "--dataset", "acme")
    [late] = report["findings"]
    assert (late["amount_at_risk"], late["currency"]) == (12.34, "BHD")
    assert report["standing"]["amounts"] == {"BHD": "12.345"}
    assert "BHD12.345 at risk" in report["summary"]
    text = review_text(path)
    assert "pipeline/open_past_close_date [BHD12.34]" in text
