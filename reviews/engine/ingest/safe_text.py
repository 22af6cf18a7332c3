"""A parsed batch made storable where it enters (reviews.engine.storable, the one
sanitiser, says how: NUL and lone surrogates become their visible \\u escape text).

Either character in a record used to make a specialist's save fail and its findings
vanish. A record value that needed escaping is reported as an `invalid_value` finding
naming record and field.

The scan is gated: parse_upload asks `may_hold_unstorable` of the raw bytes, and only a
batch that may hold such text is walked, so a clean million-record batch pays one
byte search, not a check per field."""

from __future__ import annotations

from dataclasses import fields

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, LEADS
from reviews.engine.storable import is_storable, storable, storable_tree

UNSAFE_MESSAGE = (
    "holds a character that cannot be stored (NUL or a lone surrogate), shown as its \\u escape"
)
# Owner of an id or an unknown field: ids are what references point at.
ID_CATEGORY = "attribution"
EXTRA_CATEGORY = "dedup"


_CLEANED_APART = {
    "companies",
    "contacts",
    "deals",
    "leads",
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
        problem.record_id = storable(problem.record_id)
        problem.path = storable(problem.path)
        problem.message = storable(problem.message)
        problem.place, problem.column = storable(problem.place), storable(problem.column)
    for spec in fields(batch):
        if spec.name in _CLEANED_APART:
            continue
        value = getattr(batch, spec.name)
        safe, changed = storable_tree(value)
        if changed:
            setattr(batch, spec.name, safe)
            # The batch's own text (id, source) is a problem of its own; what the reader
            # noted (headers it ignored, names it could not resolve) comes from records
            # and their fields, reported there.
            if value.__class__ is str:
                problems.append(ValueProblem(ID_CATEGORY, "", spec.name, UNSAFE_MESSAGE))
    batch.pipelines = {storable(pid): _safe_pipeline(p) for pid, p in batch.pipelines.items()}
    batch.uploaded_pipelines = [_safe_pipeline(p) for p in batch.uploaded_pipelines]
    batch.observed_stages = {
        (storable(pipeline), storable(stage)): _safe_stage(state)
        for (pipeline, stage), state in batch.observed_stages.items()
    }
    batch._stages.clear()
    batch._pipeline_keys = None
    for kind, records in (
        (COMPANIES, batch.companies),
        (CONTACTS, batch.contacts),
        (DEALS, batch.deals),
        (LEADS, batch.leads),
    ):
        _clean_records(batch, kind, records, problems)


def _clean_records(batch: Batch, kind, records: list, problems: list[ValueProblem]) -> None:
    for record in records:
        where = f"{kind.name}[{record.index}]"
        if not is_storable(record.id):
            record.id = storable(record.id)
            problems.append(ValueProblem(ID_CATEGORY, record.id, f"{where}.id", UNSAFE_MESSAGE))
        for field in kind.fields:
            value = getattr(record, field.attr)
            safe, changed = storable_tree(value)
            if changed:
                setattr(record, field.attr, safe)
                path = f"{where}.{field.key}"
                problems.append(ValueProblem(field.category, record.id, path, UNSAFE_MESSAGE))
        extra = batch.extra_of(record)
        safe_extra = {}
        for key, value in extra.items():
            (safe_key, key_changed), (safe_value, changed) = (
                storable_tree(key),
                storable_tree(value),
            )
            safe_extra[safe_key] = safe_value
            if key_changed or changed:
                path = f"{where}.{safe_key}"
                problems.append(ValueProblem(EXTRA_CATEGORY, record.id, path, UNSAFE_MESSAGE))
        if safe_extra != extra:
            if record.extra:
                record.extra = safe_extra
            else:  # kept by the batch (extra_fields.py)
                batch.extras[kind.name].replace(record.index, safe_extra)


def _safe_pipeline(pipeline: Pipeline) -> Pipeline:
    return Pipeline(
        id=storable(pipeline.id),
        stages=[_safe_stage(s) for s in pipeline.stages],
        label=storable(pipeline.label),
        source=pipeline.source,
    )


def _safe_stage(stage: Stage) -> Stage:
    return Stage(
        storable(stage.id),
        storable(stage.label),
        closed=stage.closed,
        won=stage.won,
        aliases=stage.aliases,
        probability=stage.probability,
    )
