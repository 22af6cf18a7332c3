"""Spend reports equal sums computed here, independently, from the ledger rows; and the
same numbers on /spend/, in its CSV, in `manage.py spend` and in the admin."""

import csv
import io
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command

from ledger import reports
from ledger.models import LedgerEntry
from ledger.pricing import analyst_cost_usd
from reviews.engine.money import format_cost
from reviews.models import Batch, ReviewRun
from tests.orchestration.helpers import make_entry, make_run

pytestmark = pytest.mark.django_db

NOW = datetime.now(UTC)
TODAY = NOW.date()
YESTERDAY = TODAY - timedelta(days=1)
LITE, MID = "google/gemini-2.5-flash-lite", "google/gemini-2.5-flash"


def at(day, hour: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


@pytest.fixture
def ledger_rows(postgres):
    """Two days of runs in every mode, with calls by several agents and models."""
    today_hour = min(NOW.hour, 1)  # rows never dated after now
    runs = [
        make_run(created_at=at(TODAY, today_hour), tier="trivial", records=(2, 2, 1)),
        make_run(created_at=at(TODAY, today_hour), tier="lite", records=(5, 4, 3)),
        make_run(created_at=at(TODAY, today_hour), mode="cached", records=(2, 2, 1)),
        make_run(created_at=at(TODAY, today_hour), mode="failback", tier="full",
                 records=(10, 10, 10)),
        make_run(created_at=at(TODAY, today_hour), status="failed", records=(1, 1, 1)),
        make_run(created_at=at(YESTERDAY, 23), tier="full", records=(20, 10, 5)),
    ]  # fmt: skip
    calls = [
        (runs[0], "dedup", LITE, 1200, 200, 150, 180),
        (runs[0], "coordinator", LITE, 900, 0, 300, 210),
        (runs[1], "dedup", LITE, 5000, 1000, 700, 780),
        (runs[1], "pipeline", None, 0, 0, 0, 0),  # a timeout: no model served it
        (runs[1], "coordinator", MID, 4000, 0, 900, 3450),
        (runs[4], "attribution", LITE, 300, 0, 20, 38),
        (None, "freshness", LITE, 100, 0, 10, 14),  # its run was deleted
    ]
    for run, agent, model, inp, cached, out, micros in calls:
        make_entry(
            created_at=at(TODAY, today_hour),
            run=run,
            agent=agent,
            model=model,
            input_tokens=inp,
            cached_tokens=cached,
            output_tokens=out,
            cost_micros=micros,
            outcome=LedgerEntry.Outcome.OK if model else LedgerEntry.Outcome.TIMEOUT,
        )
    make_entry(
        created_at=at(YESTERDAY, 23),
        run=runs[5],
        agent="dedup",
        model=MID,
        input_tokens=20000,
        output_tokens=2000,
        cost_micros=11000,
    )
    make_entry(
        created_at=at(TODAY - timedelta(days=40), 12), input_tokens=10**6, cost_micros=10**6
    )  # outside the 30 days
    return runs


def expected_day(day) -> dict:
    """The day's numbers, summed here from the rows, without ledger.reports."""
    entries = [e for e in LedgerEntry.objects.all() if e.created_at.date() == day]
    runs = [r for r in ReviewRun.objects.select_related("batch") if r.created_at.date() == day]
    costs = sorted(sum(e.cost_micros for e in r.ledger_entries.all()) for r in runs)
    n = len(costs)
    median = Decimal(costs[n // 2]) if n % 2 else Decimal(costs[n // 2 - 1] + costs[n // 2]) / 2
    p95 = costs[-(-95 * n // 100) - 1]
    contents = {r.batch.content_key or r.batch_id: r.batch for r in runs if r.status == "done"}
    records = sum(sum(batch.counts.values()) for batch in contents.values())
    micros = sum(e.cost_micros for e in entries)
    return {
        "calls": len(entries),
        "input": sum(e.input_tokens for e in entries),
        "cached": sum(e.cached_tokens for e in entries),
        "output": sum(e.output_tokens for e in entries),
        "usd": Decimal(micros) / 1_000_000,
        "modes": Counter(r.mode for r in runs),
        "tiers": Counter(r.tier for r in runs),
        "runs": n,
        "median_usd": median / 1_000_000,
        "p95_usd": Decimal(p95) / 1_000_000,
        "records": records,
        "analyst_usd": analyst_cost_usd(records),
    }


def test_spend_report_days_equal_independent_sums(ledger_rows):
    report = reports.spend_report(30)
    assert len(report.days) == 30
    assert report.days[-1].first_day == TODAY
    for spend in report.days[-2:]:
        want = expected_day(spend.first_day)
        assert spend.usage.calls == want["calls"]
        assert spend.usage.input_tokens == want["input"]
        assert spend.usage.cached_tokens == want["cached"]
        assert spend.usage.output_tokens == want["output"]
        assert spend.usage.usd == want["usd"]
        assert spend.runs == want["runs"]
        assert {m: c for m, c in spend.runs_by_mode.items() if c} == dict(want["modes"])
        assert {t: c for t, c in spend.runs_by_tier.items() if c} == dict(want["tiers"])
        assert spend.cache_hit_rate == Decimal(want["modes"]["cached"]) / want["runs"]
        assert spend.cost_per_run_median_usd == want["median_usd"]
        assert spend.cost_per_run_p95_usd == want["p95_usd"]
        assert spend.records == want["records"]
        assert spend.analyst_usd == want["analyst_usd"]
        assert spend.analyst_ratio == want["analyst_usd"] / want["usd"]
    assert sum(d.runs for d in report.days[:-2]) == 0


def test_spend_report_today_in_numbers(ledger_rows):
    today = reports.spend_report(1).days[0]
    # 5 runs: costs 0 (cached), 0 (failback), 38 (failed), 390, 4230 micro-dollars.
    assert today.run_costs_micros == [0, 0, 38, 390, 4230]
    assert today.cost_per_run_median_micros == 38
    assert today.cost_per_run_p95_micros == 4230
    assert today.cache_hit_rate == Decimal("0.2")
    assert today.records == 5 + 12 + 5 + 30  # the failed run reviewed nothing
    assert today.usage.cost_micros == 180 + 210 + 780 + 3450 + 38 + 14


def test_the_analyst_baseline_counts_each_batch_content_once_per_day(postgres):
    runs = [
        make_run(created_at=at(YESTERDAY, 9), records=(10, 5, 5)),
        make_run(created_at=at(YESTERDAY, 10), mode="cached", records=(10, 5, 5)),
        make_run(created_at=at(YESTERDAY, 11), records=(10, 5, 5)),  # a re-run
        make_run(created_at=at(TODAY, 0), mode="cached", records=(10, 5, 5)),
        make_run(created_at=at(YESTERDAY, 12), records=(1, 1, 1)),  # other content
    ]
    for run in runs[:4]:
        Batch.objects.filter(pk=run.batch_id).update(content_key="k" * 64)
    report = reports.spend_report(2)
    yesterday, today = report.days
    assert (yesterday.records, today.records) == (20 + 3, 20)
    assert report.total.records == 43
    assert yesterday.analyst_usd == analyst_cost_usd(23)


def test_spend_report_total_and_breakdowns_equal_independent_sums(ledger_rows):
    report = reports.spend_report(30)
    recent = [e for e in LedgerEntry.objects.all() if e.created_at.date() >= YESTERDAY]
    assert report.total.usage.cost_micros == sum(e.cost_micros for e in recent)
    assert report.total.runs == 6
    by_model = dict(report.by_model)
    for model in (LITE, MID):
        rows = [e for e in recent if e.model == model]
        assert by_model[model].cost_micros == sum(e.cost_micros for e in rows)
        assert by_model[model].input_tokens == sum(e.input_tokens for e in rows)
    assert by_model[reports.NOT_SERVED].calls == 1
    by_agent = dict(report.by_agent)
    assert set(by_agent) == {e.agent for e in recent}
    for agent, usage in by_agent.items():
        assert usage.output_tokens == sum(e.output_tokens for e in recent if e.agent == agent)
    assert [name for name, _ in report.by_model][0] == MID  # dearest first


def test_spend_report_empty_day_has_no_rates(postgres):
    (day,) = reports.spend_report(1).days
    assert (day.runs, day.cache_hit_rate, day.cost_per_run_median_usd) == (0, None, None)
    assert (day.analyst_usd, day.analyst_ratio) == (Decimal("0.00"), None)


def test_spend_command_prints_todays_totals_and_the_analyst_baseline(ledger_rows):
    out = io.StringIO()
    call_command("spend", "--days", "30", stdout=out)
    want = expected_day(TODAY)
    (today_line,) = [line for line in out.getvalue().splitlines() if line.startswith(str(TODAY))]
    cells = today_line.split()
    assert cells[:2] == [str(TODAY), str(want["runs"])]
    assert f"{want['usd']:.6f}" in cells
    assert f"{want['analyst_usd']:.2f}" in cells
    assert str(want["records"]) in cells
    assert f"{want['analyst_usd'] / want['usd']:.1f}x" in cells
    assert "by model" in out.getvalue() and LITE in out.getvalue()


def test_spend_command_orders_days_oldest_first_in_text_and_csv(ledger_rows):
    text, table = io.StringIO(), io.StringIO()
    call_command("spend", "--days", "3", stdout=text)
    call_command("spend", "--days", "3", "--format", "csv", stdout=table)
    text_days = [line.split()[0] for line in text.getvalue().splitlines()[1:4]]
    csv_days = [row["day"] for row in csv.DictReader(io.StringIO(table.getvalue()))]
    assert text_days == csv_days == [str(TODAY - timedelta(days=n)) for n in (2, 1, 0)]


def test_spend_command_csv_matches_the_report(ledger_rows):
    out = io.StringIO()
    call_command("spend", "--days", "2", "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["day"] for r in rows] == [str(YESTERDAY), str(TODAY)]
    assert Decimal(rows[1]["usd"]) == expected_day(TODAY)["usd"]


def test_spend_page_requires_login(client, postgres):
    response = client.get("/spend/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_spend_page_shows_the_table_and_chart(client, django_user_model, ledger_rows):
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    response = client.get("/spend/")
    assert response.status_code == 200
    html = response.content.decode()
    want = expected_day(TODAY)
    assert f'<tr data-day="{TODAY}">' in html
    assert f"{want['usd']:.6f}" in html
    assert f"{want['analyst_usd']:.2f}" in html
    assert html.count("<rect ") == 30
    assert 'id="spend-by-model"' in html and 'id="spend-by-agent"' in html


def test_spend_csv_download_parses_and_matches(client, django_user_model, ledger_rows):
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    response = client.get("/spend/?days=30&format=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 30
    assert list(rows[0]) == reports.CSV_HEADER
    for row in rows[-2:]:
        day = datetime.fromisoformat(row["day"]).date()
        want = expected_day(day)
        assert int(row["input_tokens"]) == want["input"]
        assert int(row["cached_tokens"]) == want["cached"]
        assert int(row["output_tokens"]) == want["output"]
        assert Decimal(row["usd"]) == want["usd"]
        assert int(row["runs"]) == want["runs"]
        assert int(row["cached"]) == want["modes"]["cached"]
        assert Decimal(row["cost_per_run_p95_usd"]) == want["p95_usd"]
        assert Decimal(row["analyst_usd"]) == want["analyst_usd"]


def test_admin_ledger_list_shows_totals_of_the_filtered_rows(admin_client, ledger_rows):
    response = admin_client.get("/admin/ledger/ledgerentry/", {"model": MID})
    assert response.status_code == 200
    total = response.context["spend_total"]
    rows = LedgerEntry.objects.filter(model=MID)
    assert total.cost_micros == sum(e.cost_micros for e in rows)
    assert total.calls == rows.count()
    assert format_cost(total.usd) in response.content.decode()  # the pages' one formatter
    by_mode = admin_client.get("/admin/ledger/ledgerentry/", {"run__mode__exact": "fresh"})
    assert by_mode.status_code == 200
    fresh = LedgerEntry.objects.filter(run__mode="fresh")
    assert by_mode.context["spend_total"].calls == fresh.count()


def test_spend_page_in_rules_only_mode_says_there_was_no_model_spend(admin_client, postgres):
    make_run(created_at=NOW)
    page = admin_client.get("/spend/").content.decode()
    assert "No model spend in this period: its 1 review called no model" in page
    assert 'id="spend-chart"' not in page
    # No gateway configured: said once, and the idle days are not 29 rows of zeros.
    assert 'id="no-model"' in page and "No model is configured" in page
    assert page.count("<tr data-day=") == 1
    assert "29 days without a review or a model call are left out." in page


def test_spend_page_with_a_gateway_does_not_say_no_model(admin_client, settings, postgres):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    page = admin_client.get("/spend/").content.decode()
    assert 'id="no-model"' not in page
    assert 'id="no-busy-days"' in page  # no review at all in the period


def test_spend_page_with_model_spend_draws_the_chart(admin_client, ledger_rows):
    page = admin_client.get("/spend/").content.decode()
    assert 'id="spend-chart"' in page and 'id="no-model-spend"' not in page
