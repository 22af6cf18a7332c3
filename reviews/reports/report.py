"""The machine-readable review (docs/output.md) and a readable text form of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import orjson
from django.db.models import TextField
from django.db.models.functions import Cast

from ledger.models import LedgerEntry
from ledger.pricing import analyst_cost_usd, micros_to_usd, run_cost
from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.coverage import column_words, lists_not_run, switched_off_of
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.history.compare import standing_sentence
from reviews.engine.money import format_cost, format_count, format_money
from reviews.engine.vocabulary import HUBSPOT, in_words
from reviews.models import ReviewRun, findings_of


def _number(value: Decimal | None) -> int | float | None:
    """JSON numbers for output only: whole amounts as ints."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _decimal(value: str | None) -> Decimal | None:
    return Decimal(value) if value else None


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def run_report(run: ReviewRun, *, with_findings: bool = True) -> dict:
    batch = run.batch
    verdict = getattr(run, "verdict", None)
    cost = run_cost(run.pk)
    in_dataset = batch.dataset_id is not None
    calls = LedgerEntry.objects.filter(run=run).order_by("created_at", "id")
    report = {
        "batch": {
            # One meaning everywhere (run JSON, API, webhook): our database id, with the
            # batch's own id beside it (docs/output.md).
            "id": batch.pk,
            "external_id": batch.external_id or None,
            "sha256": batch.sha256,
            "counts": batch.counts,
            # Columns of the export that were not read, by file (extra keys).
            "ignored_columns": batch.ignored_columns,
            # Where deals' open/won/lost state came from (docs/input.md): the first of
            # dataset, export, state_columns, default that described a deal, and how
            # many deals each described ("unknown": nothing did).
            "stage_source": batch.stage_source or None,
            "stage_sources": batch.stage_sources,
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
            # The export left out a list or a column a rule reads (docs/output.md): the
            # lists, the columns with the kinds each switched off, and those kinds.
            "partial": batch.is_partial,
            "missing_lists": batch.partial,
            "missing_columns": batch.missing_columns,
            "switched_off": switched_off_of(batch.missing_columns),
            # The checks that looked at nothing: over a list the batch does not have.
            "not_run": lists_not_run(batch.partial, batch.source),
            # What each of the dataset's own rules did: ran (with its count) or could
            # not run, and why (docs/rules.md#a-teams-own-rules).
            "team_rules": run.team_rules,
        },
        "verdict": verdict.effective_decision if verdict else None,
        "summary": verdict.summary if verdict else "",
        "findings": report_findings(run, in_dataset) if with_findings else [],
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
    if batch.warnings:  # a file the reader could not read (a Salesforce extract.csv)
        report["batch"]["warnings"] = batch.warnings
    if in_dataset:  # docs/history.md; a batch without a dataset reads as before
        # What its arrival in the dataset called for saying: late, or no shared records.
        report["batch"]["warnings"] = batch.warnings
        report["run"] |= {
            "dataset": batch.dataset.name,
            "baseline_run": run.baseline_run_id,
            "resolved": run.resolved,
        }
        report["suppressed"] = [_suppressed(item) for item in run.suppressed]
    if in_dataset and run.standing:
        # What still stands in the dataset whatever decided the verdict (docs/history.md).
        report["standing"] = run.standing
    if run.reason:
        report["run"]["reason"] = run.reason
    if run.status == ReviewRun.Status.FAILED:
        report["run"]["error"] = run.error  # why there is no verdict
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


# The keys of a finding, in their order: read as plain rows, not model instances (a
# findings-heavy run has 180k of them). A dataset's sync adds its history keys.
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
    "currency",
    "source",
)
HISTORY_KEYS = ("fingerprint", "status", "first_seen")


def finding_dicts(run: ReviewRun, in_dataset: bool, chunk_size: int) -> Iterator[dict]:
    """The run's findings (or those of the run it reuses) as output dicts, in order."""
    keys = FINDING_KEYS + (HISTORY_KEYS if in_dataset else ())
    # The record ids read as the column's JSON text and decoded by orjson: the JSON
    # field's own decoding (the standard library's, a call per finding) was a third of
    # a findings-heavy report.
    columns = [_IDS_TEXT if key == "record_ids" else key for key in keys]
    rows = (
        findings_of(run)
        .order_by("position")
        .annotate(**{_IDS_TEXT: Cast("record_ids", TextField())})
        .values_list(*columns)
    )
    ids = keys.index("record_ids")
    for row in rows.iterator(chunk_size=chunk_size):
        finding = dict(zip(keys, row, strict=True))
        finding["record_ids"] = _json_list(row[ids])
        amount = finding["amount_at_risk"]
        finding["amount_at_risk"] = _number(amount)
        finding["currency"] = finding["currency"] or (DEFAULT_CURRENCY if amount else None)
        if in_dataset:
            finding["first_seen"] = _iso(finding["first_seen"])
        yield finding


_IDS_TEXT = "record_ids_text"


def _suppressed(item: dict) -> dict:
    """A stored `suppressed` entry as output: its money as a number in its currency. An
    entry kept before entries named their currency reads as a finding's row without one."""
    amount = _decimal(item.get("amount_at_risk"))
    currency = item.get("currency") or (DEFAULT_CURRENCY if amount else None)
    return {**item, "amount_at_risk": _number(amount), "currency": currency}


def _json_list(text: str) -> list:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what orjson refuses and the JSON field read (a big int)
        return json.loads(text)


def report_findings(run: ReviewRun, in_dataset: bool) -> list[dict]:
    with no_cyclic_gc():
        return list(finding_dicts(run, in_dataset, chunk_size=5000))


_EMPTY_FINDINGS = b'"findings":[]'
_STREAM_CHUNK = 2_000


def stream_report_json(run: ReviewRun) -> Iterator[bytes]:
    """The report as compact JSON, streamed: everything but the findings first, then
    the findings a chunk at a time, so a run with 180k findings starts answering at
    once and is never held whole, as dicts or as bytes."""
    head, tail = orjson.dumps(run_report(run, with_findings=False)).split(_EMPTY_FINDINGS)
    yield head + b'"findings":['
    chunk: list[dict] = []
    first = True
    in_dataset = run.batch.dataset_id is not None
    for finding in finding_dicts(run, in_dataset, chunk_size=_STREAM_CHUNK):
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


def text_report(report: dict, file_name: str = "", crm: str = HUBSPOT) -> str:
    """The readable report; `file_name` names a batch that has no id of its own (a CSV
    export carries none); its counts in the words of the batch's `crm` (vocabulary)."""
    run, batch = report["run"], report["batch"]
    counts = batch["counts"]
    name = batch.get("external_id") or file_name or "without an id"
    listed = ", ".join(
        f"{format_count(counts[key])} {key}"
        for key in ("companies", "contacts", "deals", "leads")
        if key in counts
    )
    lines = [
        _header(run),
        f"batch {name}: {in_words(listed, crm)}",
        f"verdict: {report['verdict']}",
    ]
    lines += [f"warning: {warning['message']}" for warning in batch.get("warnings") or ()]
    if run.get("missing_lists"):
        lines.append(f"partial: no {', '.join(run['missing_lists'])} in the upload")
        not_run = [e["kind"] for e in run.get("not_run") or () if e["list"] in run["missing_lists"]]
        if not_run:
            lines.append(f"partial: checks not run: {', '.join(not_run)}")
    for entry in run.get("missing_columns") or ():
        lines.append(
            f"partial: no column for {column_words(entry)} ({entry['list']}); "
            f"switched off: {', '.join(entry['switched_off'])}"
        )
    standing = standing_sentence(report.get("standing") or {}, run["id"])
    if standing and run.get("dataset"):
        lines.append(f"standing: {standing}")
    lines += ["", report["summary"], ""]
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
    degraded += ", PARTIAL" if run.get("partial") else ""
    reason = f": {run['reason']}" if run.get("reason") else ""
    return f"revreview run {run['id']} ({mode}, {run['tier']} tier{degraded}){reason}"
