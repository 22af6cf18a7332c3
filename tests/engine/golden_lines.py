"""A review as canonical lines: issue 35's "the same review, proven". The findings the
engine gives a batch today, written so that a detector rewritten over columns must give
the same bytes. Shared by tests/engine/test_golden.py (the samples) and
bench/golden_findings.py (the big generated batches).

A review is JSON lines (keys sorted, money as exact decimal strings), in five parts:

- `batch`: counts, as-of time and where it came from, risk tier, missing columns;
- `review`: the coordinator's verdict, summary and money (a partial export's verdict
  and sentence included, as the runner gives them);
- `finding`: the fused findings in the coordinator's order, each with its `rank`. The
  order is total (severity, money, specialist, kind, record ids), so it is canonical;
- `detected`: each specialist's own findings before fusion, sorted by specialist, kind
  and record ids (the order a detector emits them in is not part of the review);
- `near_miss`: each specialist's candidates for the model pass, all of them, in the
  order it returns them (the model pass takes the first LLM_NEAR_MISS_LIMIT: the
  order is what that limit cuts, so it is kept).

A finding holds every field of the packed form (findings.PACKED_FIELDS: kind, records,
severity, title, detail, money, currencies, owners, sources, confidence) plus its
`amount_at_risk` and `currency`. A batch that is refused gives one `rejected` line with
every structural error. Plain Python: no Django, no database.
"""

from __future__ import annotations

import gzip
import sys
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import orjson

from reviews.engine.batch import Batch
from reviews.engine.coordinator import fuse
from reviews.engine.coverage import missing_columns, partial_review
from reviews.engine.findings import PACKED_FIELDS, RawFinding
from reviews.engine.history.policy import EMPTY
from reviews.engine.ingest import IngestError, Limits, UploadedFile, parse_upload
from reviews.engine.risk import classify_risk
from reviews.engine.rules import DEFAULT_RULES, Rules
from reviews.engine.specialists import NAMES, SPECIALISTS, detector

# A batch whose as-of time is its upload's (no exportedAt, no Last Modified Date) is
# reviewed as if received at this moment, so its date rules answer the same every day.
RECEIVED = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)
EVERY_NEAR_MISS = sys.maxsize


def _dumps(data: dict) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS, default=_exact)


def _exact(value: object) -> str:
    if isinstance(value, Decimal):  # as the packed form and the database keep it
        return str(value)
    raise TypeError(f"{type(value).__name__} has no place in a golden line")


def finding_data(finding: RawFinding) -> dict:
    data = {name: getattr(finding, name) for name in PACKED_FIELDS}
    data["amount_at_risk"] = finding.amount_at_risk
    data["currency"] = finding.currency
    return data


def review_lines(batch: Batch, rules: Rules = DEFAULT_RULES) -> list[bytes]:
    """The batch's review by the rules (no model), as canonical lines."""
    risk = classify_risk(batch, rules)
    missing = missing_columns(batch)
    lines = [
        _dumps(
            {
                "batch": {
                    "as_of": batch.as_of.isoformat(),
                    "as_of_source": batch.as_of_source,
                    "counts": batch.counts,
                    "missing_columns": missing,
                    "tier": risk.tier,
                    "tier_reason": risk.reason,
                }
            }
        )
    ]
    detected: list[RawFinding] = []
    detected_lines: list[tuple[tuple, bytes]] = []
    for name in NAMES:
        for finding in detector(name)(batch, rules):
            detected.append(finding)
            # Serialised before fusing: the coordinator's clusters are new findings, but
            # a lone one is passed on as it is.
            line = _dumps({"detected": finding_data(finding)})
            detected_lines.append(((finding.category, finding.kind, finding.record_ids), line))
    review = fuse(detected, batch.counts, [])
    if missing:
        partial_review(review, missing, EMPTY, rules)
    lines.append(
        _dumps(
            {
                "review": {
                    "decision": review.decision,
                    "pipeline_at_risk": review.pipeline_at_risk,
                    "pipeline_by_currency": review.pipeline_by_currency,
                    "severity_counts": review.severity_counts,
                    "summary": review.summary,
                }
            }
        )
    )
    lines += [
        _dumps({"finding": finding_data(finding), "rank": rank})
        for rank, finding in enumerate(review.findings)
    ]
    lines += [line for _, line in sorted(detected_lines)]
    for name in NAMES:
        near = SPECIALISTS[name].near_misses(batch, rules, EVERY_NEAR_MISS)
        lines += [
            _dumps({"near_miss": item, "rank": rank, "specialist": name})
            for rank, item in enumerate(near)
        ]
    return lines


def upload_lines(
    files: list[UploadedFile],
    *,
    as_of: datetime | None = None,
    limits: Limits = Limits(),  # noqa: B008 (frozen)
) -> list[bytes]:
    """The lines of an upload: its review, or the one `rejected` line of a batch the
    ingest refuses (its structural errors, in order)."""
    try:
        batch = parse_upload(files, as_of=as_of, received_at=RECEIVED, limits=limits)
    except IngestError as error:
        return [_dumps({"rejected": {"errors": error.errors}})]
    return review_lines(batch)


# --- files and their comparison ---------------------------------------------------------


def write_lines(path: Path, lines: list[bytes]) -> None:
    """One line each; gzip (with no time stamp, so the same lines give the same file)
    when the name ends in .gz."""
    data = b"".join(line + b"\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)


def read_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).splitlines()


def differences(recorded: list[bytes], now: list[bytes], limit: int = 20) -> str:
    """'' when the lines are the same; otherwise what differs, in words: the counts,
    then up to `limit` lines only recorded (-) or only given now (+), a changed
    finding's two lines side by side."""
    if recorded == now:
        return ""
    gone = Counter(recorded) - Counter(now)
    new = Counter(now) - Counter(recorded)
    if not gone and not new:
        at = next(i for i, (a, b) in enumerate(zip(recorded, now, strict=True)) if a != b)
        return (
            f"the same {len(now)} lines in another order; line {at + 1} was\n  "
            f"{recorded[at].decode()}\nand is now\n  {now[at].decode()}"
        )
    # 0 and 1: the recorded form before the new one (a "+" sorts before a "-").
    changed = sorted(
        [(_identity(line), 0, "-", line) for line in gone.elements()]
        + [(_identity(line), 1, "+", line) for line in new.elements()]
    )
    head = (
        f"{len(recorded)} lines recorded, {len(now)} now: {gone.total()} only recorded (-), "
        f"{new.total()} only now (+)"
    )
    shown = []
    for i, (identity, _, sign, line) in enumerate(changed[:limit]):
        shown.append(f"{sign} {line.decode()}")
        before = changed[i - 1] if i else None
        if sign == "+" and before and before[0] == identity and before[2] == "-":
            shown.append(f"  (changed: {', '.join(_changed_fields(before[3], line))})")
    more = [f"... and {len(changed) - limit} more"] if len(changed) > limit else []
    return "\n".join([head, *shown, *more])


def _changed_fields(recorded: bytes, now: bytes) -> list[str]:
    """The fields (of the finding, near miss or review) in which two lines differ."""
    a, b = _flat(orjson.loads(recorded)), _flat(orjson.loads(now))
    return sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def _flat(data: dict) -> dict:
    """A line's part and its rank or specialist side by side: {"rank": 3, "kind": ...}."""
    flat = {key: value for key, value in data.items() if not isinstance(value, dict)}
    for value in data.values():
        if isinstance(value, dict):
            flat.update(value)
    return flat


def _identity(line: bytes) -> tuple:
    """What a line is about (its part, specialist, kind, records), so the recorded and
    the new form of one finding sort next to each other."""
    data = orjson.loads(line)
    part = next(key for key in data if key not in ("rank", "specialist"))
    body = data[part] if isinstance(data[part], dict) else {}
    return (
        part,
        str(body.get("category", data.get("specialist", ""))),
        str(body.get("kind", "")),
        [str(r) for r in body.get("record_ids", [])],
    )
