"""The machine-readable review (docs/output.md) and a readable text form of it."""

from __future__ import annotations

from decimal import Decimal

from ledger.models import LedgerEntry
from ledger.pricing import analyst_cost_usd, micros_to_usd, run_cost
from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.money import format_cost, format_count, format_money
from reviews.models import ReviewRun


def _number(value: Decimal | None) -> int | float | None:
    """JSON numbers for output only: whole amounts as ints."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _history_fields(finding) -> dict:
    return {
        "fingerprint": finding.fingerprint,
        "status": finding.status,
        "first_seen": _iso(finding.first_seen),
    }


def _decimal(value: str | None) -> Decimal | None:
    return Decimal(value) if value else None


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def run_report(run: ReviewRun) -> dict:
    batch = run.batch
    verdict = getattr(run, "verdict", None)
    cost = run_cost(run.pk)
    in_dataset = batch.dataset_id is not None
    calls = LedgerEntry.objects.filter(run=run).order_by("created_at", "id")
    report = {
        "batch": {
            "id": batch.external_id or None,
            "sha256": batch.sha256,
            "counts": batch.counts,
            # Columns of the export that were not read, by file (extra keys).
            "ignored_columns": batch.ignored_columns,
        },
        "run": {
            "id": run.pk,
            "mode": run.mode,
            "tier": run.tier,
            "specialists": run.specialists,
            "status": run.status,
            "degraded": run.degraded,
            "started_at": _iso(run.started_at),
            "finished_at": _iso(run.finished_at),
            # The time every date rule counts from, and where it came from (given,
            # exportedAt, last_modified: the export's newest Last Modified Date, upload).
            "as_of": _iso(run.as_of),
            "as_of_source": batch.as_of_source or None,
            # Lists the export did not include; the rules that need them were off.
            "partial": batch.partial,
        },
        "verdict": verdict.effective_decision if verdict else None,
        "summary": verdict.summary if verdict else "",
        "findings": [
            {
                "category": f.category,
                "kind": f.kind,
                "severity": f.severity,
                "title": f.title,
                "detail": f.detail,
                "record_ids": f.record_ids,
                "suggested_fix": f.suggested_fix,
                "confidence": f.confidence,
                "amount_at_risk": _number(f.amount_at_risk),
                "currency": f.currency or (DEFAULT_CURRENCY if f.amount_at_risk else None),
                "source": f.source,
                **(_history_fields(f) if in_dataset else {}),
            }
            for f in run.findings.all()
        ],
        "ledger": {
            "tokens": cost.tokens,
            "usd": float(cost.usd),
            "analyst_usd": float(analyst_cost_usd(sum(batch.counts.values()))),
            "calls": [
                {
                    "agent": c.agent,
                    "model_requested": c.model_requested,
                    "model": c.model,
                    "input_tokens": c.input_tokens,
                    "cached_tokens": c.cached_tokens,
                    "output_tokens": c.output_tokens,
                    "usd": float(micros_to_usd(c.cost_micros)),
                    "latency_ms": c.latency_ms,
                    "outcome": c.outcome,
                }
                for c in calls
            ],
        },
    }
    if in_dataset:  # docs/history.md; a batch without a dataset reads as before
        report["run"] |= {
            "dataset": batch.dataset.name,
            "baseline_run": run.baseline_run_id,
            "resolved": run.resolved,
        }
        report["suppressed"] = [
            {**item, "amount_at_risk": _number(_decimal(item.get("amount_at_risk")))}
            for item in run.suppressed
        ]
    if run.reason:
        report["run"]["reason"] = run.reason
    refused = [line for agent in run.agents.all() for line in agent.refused]
    if refused:
        # An extra key: what a model asked and the guards refused (reviews.llm.apply).
        report["run"]["refused"] = refused
    if run.reused_run_id:
        # An extra key: the run whose review a cached or failback run serves.
        report["run"]["reused_run"] = run.reused_run_id
    if verdict and verdict.is_overridden:
        report["override"] = {
            "original_verdict": verdict.decision,
            "by": verdict.overridden_by.get_username() if verdict.overridden_by else None,
            "reason": verdict.override_reason,
            "at": _iso(verdict.overridden_at),
        }
    return report


def text_report(report: dict, file_name: str = "") -> str:
    """The readable report; `file_name` names a batch that has no id of its own (a CSV
    export carries none)."""
    run, batch = report["run"], report["batch"]
    counts = batch["counts"]
    name = batch["id"] or file_name or "without an id"
    lines = [
        _header(run),
        f"batch {name}: {format_count(counts['companies'])} companies, "
        f"{format_count(counts['contacts'])} contacts, {format_count(counts['deals'])} deals",
        f"verdict: {report['verdict']}",
        "",
        report["summary"],
        "",
    ]
    for f in report["findings"]:
        lines += _finding_lines(f)
    if run.get("resolved"):
        lines += ["", f"resolved since the last sync (run {run['baseline_run']}):"]
        for r in run["resolved"]:
            lines.append(f"  {r['severity'].upper():10} {r['category']}/{r['kind']}")
            lines.append(f"    {r['title']}")
    if report.get("suppressed"):
        lines += ["", "suppressed (dismissed by the team; not in the verdict):"]
        for f in report["suppressed"]:
            lines += _finding_lines(f)
            lines.append(f"    dismissed by {f['dismissed_by'] or '-'}: {f['reason']}")
    ledger = report["ledger"]
    lines += [
        "",
        f"model cost: {format_count(ledger['tokens'])} tokens, {format_cost(ledger['usd'])} "
        f"(analyst baseline {format_money(ledger['analyst_usd'])})",
    ]
    return "\n".join(lines)


def _finding_lines(f: dict) -> list[str]:
    amount = ""
    if f["amount_at_risk"]:
        amount = f" [{format_money(Decimal(str(f['amount_at_risk'])), f['currency'])}]"
    status = f" {f['status'].upper()}" if f.get("status") else ""
    lines = [
        f"{f['severity'].upper():10} {f['category']}/{f['kind']}{amount}{status}"
        + (f" #{f['fingerprint']}" if f.get("fingerprint") else ""),
        f"    {f['title']}",
        f"    records: {', '.join(f['record_ids'])}",
    ]
    if f.get("first_seen"):
        lines.append(f"    first seen: {f['first_seen']}")
    if f["suggested_fix"]:
        lines.append(f"    fix: {f['suggested_fix']}")
    return lines


def _header(run: dict) -> str:
    """e.g. `revreview run 9 (failback of run 4, lite tier): daily token budget ...`"""
    mode = run["mode"] + (f" of run {run['reused_run']}" if run.get("reused_run") else "")
    degraded = ", DEGRADED" if run["degraded"] else ""
    reason = f": {run['reason']}" if run.get("reason") else ""
    return f"revreview run {run['id']} ({mode}, {run['tier']} tier{degraded}){reason}"
