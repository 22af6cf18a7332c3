"""Text that cannot be stored, made safe where it enters: NUL and lone surrogates.

Postgres text and JSON cannot hold U+0000, and UTF-8 cannot encode a lone surrogate
(U+D800..U+DFFF, which JSON's "\\udXXX" escapes and non-UTF-8 file names produce).
Either one in a record used to make a specialist's save fail and its findings vanish.
So every such character is replaced by its escape text (NUL -> the six characters
`\\u0000`, U+DC80 -> `\\udc80`): still visible, still distinct (two names differing
only there stay different, two equal ones stay equal), and storable. A record value
that needed it is reported as an `invalid_value` finding naming record and field.

The scan is gated: parse_upload asks `may_hold_unsafe` of the raw bytes, and only a
batch that may hold such text is walked, so a clean million-record batch pays one
byte search, not a check per field."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.findings import Category
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS

_UNSAFE = re.compile("[\x00\ud800-\udfff]")
# In JSON, NUL and surrogates can only arrive escaped (raw control characters are not
# valid JSON and raw surrogates are not valid UTF-8); in CSV, NUL arrives as a byte.
_JSON_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")

UNSAFE_MESSAGE = (
    "holds a character that cannot be stored (NUL or a lone surrogate), shown as its \\u escape"
)
# Owner of an id or an unknown field: ids are what references point at.
ID_CATEGORY = Category.ATTRIBUTION
EXTRA_CATEGORY = Category.DEDUP


def is_safe(text: str) -> bool:
    return _UNSAFE.search(text) is None


def make_safe(text: str) -> str:
    """`text` with each NUL or lone surrogate replaced by its \\u escape text."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def may_hold_unsafe(data: bytes) -> bool:
    """False when these bytes (a JSON or CSV file) surely decode to safe text."""
    return b"\x00" in data or _JSON_ESCAPE.search(data) is not None


def safe_tree(value: Any) -> tuple[Any, bool]:
    """A JSON-like value with every string (dict keys too) made safe, and whether any
    had to change. Unchanged containers are returned as they are."""
    kind = value.__class__
    if kind is str:
        safe = make_safe(value)
        return safe, safe is not value
    if kind is list:
        items = [safe_tree(item) for item in value]
        if any(changed for _, changed in items):
            return [item for item, _ in items], True
        return value, False
    if kind is dict:
        pairs = [(safe_tree(k), safe_tree(v)) for k, v in value.items()]
        if any(kc or vc for (_, kc), (_, vc) in pairs):
            return {k: v for (k, _), (v, _) in pairs}, True
        return value, False
    return value, False


_CLEANED_APART = {
    "companies",
    "contacts",
    "deals",
    "pipelines",
    "value_problems",
    "_stages",
    "_pipeline_keys",
    "observed_stages",
    "uploaded_pipelines",
}


def clean_batch(batch: Batch) -> None:
    """Make every string of a parsed batch safe, in place: the batch's own fields (id,
    source, dataset...), pipelines, records (ids, mapped fields, unknown fields) and
    the value problems' messages. Each record field that changed becomes a problem."""
    problems = batch.value_problems
    for problem in problems:  # found before cleaning: name the record by its safe id
        problem.record_id = make_safe(problem.record_id)
        problem.path = make_safe(problem.path)
        problem.message = make_safe(problem.message)
    for spec in fields(batch):
        if spec.name in _CLEANED_APART:
            continue
        value = getattr(batch, spec.name)
        safe, changed = safe_tree(value)
        if changed:
            setattr(batch, spec.name, safe)
            # The batch's own text (id, source) is a problem of its own; what the reader
            # noted (headers it ignored, names it could not resolve) comes from records
            # and their fields, reported there.
            if value.__class__ is str:
                problems.append(ValueProblem(ID_CATEGORY, "", spec.name, UNSAFE_MESSAGE))
    batch.pipelines = {make_safe(pid): _safe_pipeline(p) for pid, p in batch.pipelines.items()}
    batch.uploaded_pipelines = [_safe_pipeline(p) for p in batch.uploaded_pipelines]
    batch.observed_stages = {
        (make_safe(pipeline), make_safe(stage)): _safe_stage(state)
        for (pipeline, stage), state in batch.observed_stages.items()
    }
    batch._stages.clear()
    batch._pipeline_keys = None
    for kind, records in (
        (COMPANIES, batch.companies),
        (CONTACTS, batch.contacts),
        (DEALS, batch.deals),
    ):
        _clean_records(kind, records, problems)


def _clean_records(kind, records: list, problems: list[ValueProblem]) -> None:
    for record in records:
        where = f"{kind.name}[{record.index}]"
        if not is_safe(record.id):
            record.id = make_safe(record.id)
            problems.append(ValueProblem(ID_CATEGORY, record.id, f"{where}.id", UNSAFE_MESSAGE))
        for field in kind.fields:
            value = getattr(record, field.attr)
            safe, changed = safe_tree(value)
            if changed:
                setattr(record, field.attr, safe)
                path = f"{where}.{field.key}"
                problems.append(ValueProblem(field.category, record.id, path, UNSAFE_MESSAGE))
        for key, value in list(record.extra.items()):
            (safe_key, key_changed), (safe_value, changed) = safe_tree(key), safe_tree(value)
            if key_changed or changed:
                del record.extra[key]
                record.extra[safe_key] = safe_value
                path = f"{where}.{safe_key}"
                problems.append(ValueProblem(EXTRA_CATEGORY, record.id, path, UNSAFE_MESSAGE))


def _safe_pipeline(pipeline: Pipeline) -> Pipeline:
    return Pipeline(
        id=make_safe(pipeline.id),
        stages=[_safe_stage(s) for s in pipeline.stages],
        label=make_safe(pipeline.label),
        source=pipeline.source,
    )


def _safe_stage(stage: Stage) -> Stage:
    return Stage(
        make_safe(stage.id),
        make_safe(stage.label),
        closed=stage.closed,
        won=stage.won,
        aliases=stage.aliases,
        probability=stage.probability,
    )
