"""The machine-readable review (spec §5) and a readable text form of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import orjson

from ledger.models import LedgerEntry
from ledger.pricing import analyst_cost_usd, micros_to_usd, run_cost
from reviews.engine.gcpause import no_cyclic_gc
from reviews.models import ReviewRun, findings_of


def _number(value: Decimal | None) -> int | float | None:
    """JSON numbers for output only: whole amounts as ints."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def run_report(run: ReviewRun, *, with_findings: bool = True) -> dict:
    batch = run.batch
    verdict = getattr(run, "verdict", None)
    cost = run_cost(run.pk)
    calls = LedgerEntry.objects.filter(run=run).order_by("created_at", "id")
    report = {
        "batch": {
            "id": batch.external_id or None,
            "sha256": batch.sha256,
            "counts": batch.counts,
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
        },
        "verdict": verdict.effective_decision if verdict else None,
        "summary": verdict.summary if verdict else "",
        "findings": report_findings(run) if with_findings else [],
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
    if run.reason:
        report["run"]["reason"] = run.reason
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


# Spec §5's keys of a finding, in its order: read as plain rows, not model instances
# (a findings-heavy run has 180k of them).
FINDING_KEYS = (
    "category",
    "kind",
    "severity",
    "title",
    "detail",
    "record_ids",
    "suggested_fix",
    "confidence",
    "amount_at_risk",
    "source",
)
_AMOUNT = FINDING_KEYS.index("amount_at_risk")


def report_findings(run: ReviewRun) -> list[dict]:
    rows = findings_of(run).order_by("position").values_list(*FINDING_KEYS)
    findings = []
    with no_cyclic_gc():
        for row in rows.iterator(chunk_size=5000):
            finding = dict(zip(FINDING_KEYS, row, strict=True))
            if row[_AMOUNT] is not None:
                finding["amount_at_risk"] = _number(row[_AMOUNT])
            findings.append(finding)
    return findings


def report_json(report: dict[str, Any]) -> bytes:
    """The report as indented UTF-8 JSON. orjson: the standard library's indenting
    encoder is pure Python, 10+ s for 180k findings."""
    try:
        return orjson.dumps(report, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # text orjson refuses (a lone surrogate): be exact
        return json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8", "replace")


_EMPTY_FINDINGS = b'"findings":[]'
_STREAM_CHUNK = 2_000


def stream_report_json(run: ReviewRun) -> Iterator[bytes]:
    """The report as compact JSON, streamed: everything but the findings first, then
    the findings a chunk at a time, so a run with 180k findings starts answering at
    once and is never held whole, as dicts or as bytes."""
    head, tail = orjson.dumps(run_report(run, with_findings=False)).split(_EMPTY_FINDINGS)
    yield head + b'"findings":['
    rows = findings_of(run).order_by("position").values_list(*FINDING_KEYS)
    chunk: list[dict] = []
    first = True
    for row in rows.iterator(chunk_size=_STREAM_CHUNK):
        finding = dict(zip(FINDING_KEYS, row, strict=True))
        if row[_AMOUNT] is not None:
            finding["amount_at_risk"] = _number(row[_AMOUNT])
        chunk.append(finding)
        if len(chunk) == _STREAM_CHUNK:
            yield (b"" if first else b",") + _dumps_list(chunk)
            chunk, first = [], False
    if chunk:
        yield (b"" if first else b",") + _dumps_list(chunk)
    yield b"]" + tail


def _dumps_list(findings: list[dict]) -> bytes:
    """The findings comma-separated, without the brackets."""
    try:
        return orjson.dumps(findings)[1:-1]
    except orjson.JSONEncodeError:
        return json.dumps(findings, ensure_ascii=False).encode("utf-8", "replace")[1:-1]


def text_report(report: dict) -> str:
    run, batch = report["run"], report["batch"]
    counts = batch["counts"]
    lines = [
        _header(run),
        f"batch {batch['id'] or '-'}: {counts['companies']} companies, "
        f"{counts['contacts']} contacts, {counts['deals']} deals",
        f"verdict: {report['verdict']}",
        "",
        report["summary"],
        "",
    ]
    for f in report["findings"]:
        amount = f" [${f['amount_at_risk']:,}]" if f["amount_at_risk"] else ""
        lines.append(f"{f['severity'].upper():10} {f['category']}/{f['kind']}{amount}")
        lines.append(f"    {f['title']}")
        lines.append(f"    records: {', '.join(f['record_ids'])}")
        if f["suggested_fix"]:
            lines.append(f"    fix: {f['suggested_fix']}")
    ledger = report["ledger"]
    lines += [
        "",
        f"model cost: {ledger['tokens']} tokens, ${ledger['usd']:.6f} "
        f"(analyst baseline ${ledger['analyst_usd']:,.2f})",
    ]
    return "\n".join(lines)


def _header(run: dict) -> str:
    """e.g. `revreview run 9 (failback of run 4, lite tier): daily token budget ...`"""
    mode = run["mode"] + (f" of run {run['reused_run']}" if run.get("reused_run") else "")
    degraded = ", DEGRADED" if run["degraded"] else ""
    reason = f": {run['reason']}" if run.get("reason") else ""
    return f"revreview run {run['id']} ({mode}, {run['tier']} tier{degraded}){reason}"
