"""The spend page: a 30-day chart and table, by model and by agent, and its CSV."""

from __future__ import annotations

import csv

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ledger import availability, reports
from revreview.charts import bar_chart
from workspaces.access import workspaces_of

DEFAULT_DAYS = 30
MAX_DAYS = 366


@require_GET
@login_required
def spend(request: HttpRequest) -> HttpResponse:
    """GET /spend/?days=30[&format=csv]"""
    days = _days(request.GET.get("days"))
    # A member sees the spend of their workspaces; a superuser, every workspace's.
    mine = (
        None
        if request.user.is_superuser
        else workspaces_of(request.user).values_list("pk", flat=True)
    )
    report = reports.spend_report(days, workspaces=mine)
    if request.GET.get("format") == "csv":
        return _csv(report, days)
    chart = bar_chart(
        [
            (
                day.first_day.strftime("%d"),
                day.usage.usd,
                f"{day.first_day:%Y-%m-%d}: ${day.usage.usd} for {day.usage.tokens:,} tokens, "
                f"{day.runs} runs; analyst ${day.analyst_usd}",
            )
            for day in report.days
        ],
        max_label=f"${max((d.usage.usd for d in report.days), default=0)}",
    )
    # Days with neither a run nor a call are left out of the table (the chart keeps them):
    # thirty rows of zeros hide the few that say something.
    busy = [day for day in report.days[::-1] if day.runs or day.usage.calls]
    context = {
        "report": report,
        "days": days,
        "rows": busy,
        "idle_days": len(report.days) - len(busy),
        # No gateway: every review is rules only and nothing is ever spent; say so once.
        "model_configured": bool(settings.LLM_BASE_URL),
        "chart": chart,
        "unavailable": availability.unavailable(),
    }
    return render(request, "ledger/spend.html", context)


def _days(value: str | None) -> int:
    try:
        days = int(value) if value else DEFAULT_DAYS
    except ValueError:
        return DEFAULT_DAYS
    return min(max(days, 1), MAX_DAYS)


def _csv(report: reports.SpendReport, days: int) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    last = report.total.last_day
    response["Content-Disposition"] = f'attachment; filename="spend-{last}-{days}d.csv"'
    writer = csv.writer(response)
    writer.writerow(reports.CSV_HEADER)
    writer.writerows(reports.csv_row(day) for day in report.days)
    return response
