"""Deal pipeline definitions: from HubSpot's pipelines API, and as a dataset keeps them.

HubSpot's `GET /crm/v3/pipelines/deals` answers, as sent:

    {"results": [{"id": "default", "label": "Sales Pipeline", "displayOrder": 0,
      "stages": [{"id": "closedwon", "label": "Closed Won", "displayOrder": 5,
                  "metadata": {"isClosed": "true", "probability": "1.0"},
                  "createdAt": ..., "updatedAt": ..., "archived": false}, ...],
      "createdAt": ..., "updatedAt": ..., "archived": false}]}

(metadata values are strings). A closed stage with probability 1.0 is won; a closed
one with any other is lost. pipelines_from_hubspot() reads that (or its bare list, or
one pipeline object); the HubSpot connector calls it too. pipelines_to_data() and
pipelines_from_data() are the form a dataset stores: the native JSON batch's
`pipelines` (docs/input.md), which parse_pipelines() reads, naming each field it cannot."""

from __future__ import annotations

from collections.abc import Iterator

from reviews.engine.batch import Pipeline, Stage
from reviews.engine.ingest.errors import ErrorList, IngestError
from reviews.engine.ingest.records import record_id
from reviews.engine.ingest.values import describe, parse_flag, parse_probability

MAX_PIPELINES = 1000  # HubSpot allows up to 100 per account; far past it is not one
MAX_STAGES = 1000


def is_pipelines_response(top: object) -> bool:
    """A pipelines API answer (or its list of pipelines): objects with `stages`, not
    CRM objects with `properties`."""
    items = top.get("results") if top.__class__ is dict else top
    if items.__class__ is not list or not items:
        return False
    first = items[0]
    return first.__class__ is dict and "stages" in first and "properties" not in first


def pipelines_from_hubspot(data: object, *, name: str = "pipelines") -> list[Pipeline]:
    """The pipelines of a `GET /crm/v3/pipelines/deals` answer, as it is sent. Raises
    IngestError naming each pipeline and stage that cannot be read."""
    errors = ErrorList(100)
    if data.__class__ is dict and "stages" in data:
        items: object = [data]  # one pipeline (GET /crm/v3/pipelines/deals/{id})
    elif data.__class__ is dict:
        items = data.get("results")
    else:
        items = data
    if items.__class__ is not list:
        raise IngestError(
            [f"{name}: not a HubSpot pipelines response: no list of pipelines under "
             f'"results" ({describe(items)})']
        )  # fmt: skip
    if len(items) > MAX_PIPELINES:
        raise IngestError([f"{name}: {len(items):,} pipelines; at most {MAX_PIPELINES}"])
    pipelines: list[Pipeline] = []
    seen: set[str] = set()
    for index, raw in enumerate(items):
        where = f"{name}: results[{index}]"
        if raw.__class__ is not dict:
            errors.add(f"{where}: not an object: {describe(raw)}")
            continue
        pid = _text(raw.get("id"))
        if not pid:
            errors.add(f"{where}.id: missing")
            continue
        if pid in seen:
            errors.add(f"{where}.id: a second pipeline {describe(pid)}")
            continue
        seen.add(pid)
        stages = _stages(raw.get("stages"), where, errors)
        pipelines.append(
            Pipeline(id=pid, stages=stages, label=_text(raw.get("label")), source="export")
        )
    errors.raise_if_any()
    return pipelines


def _stages(value: object, where: str, errors: ErrorList) -> list[Stage]:
    if value.__class__ is not list:
        errors.add(f"{where}.stages: not a list: {describe(value)}")
        return []
    if len(value) > MAX_STAGES:
        errors.add(f"{where}.stages: {len(value):,} stages; at most {MAX_STAGES}")
        return []
    stages: list[Stage] = []
    seen: set[str] = set()
    for index, raw in enumerate(value):
        at = f"{where}.stages[{index}]"
        if raw.__class__ is not dict:
            errors.add(f"{at}: not an object: {describe(raw)}")
            continue
        sid = _text(raw.get("id"))
        if not sid or sid in seen:
            errors.add(f"{at}.id: {'missing' if not sid else 'repeated: ' + describe(sid)}")
            continue
        seen.add(sid)
        metadata = raw.get("metadata")
        metadata = metadata if metadata.__class__ is dict else {}
        closed = parse_flag(metadata.get("isClosed")) or False
        probability = parse_probability(metadata.get("probability"))
        stages.append(
            Stage(
                id=sid,
                label=_text(raw.get("label")),
                closed=closed,
                won=closed and probability == 1,
                probability=probability,
            )
        )
    return stages


def _text(value: object) -> str:
    if value.__class__ is int:
        return str(value)
    return value.strip() if value.__class__ is str else ""


def pipelines_to_data(pipelines: list[Pipeline] | dict[str, Pipeline]) -> list[dict]:
    """The stored form: the JSON batch's `pipelines`, with label and probability."""
    values = pipelines.values() if isinstance(pipelines, dict) else pipelines
    return [
        {
            "id": p.id,
            "label": p.label,
            "stages": [
                {"id": s.id, "label": s.label, "closed": s.closed, "won": s.won}
                | ({"probability": s.probability} if s.probability is not None else {})
                for s in p.stages
            ],
        }
        for p in values
    ]


def pipelines_from_data(data: object, *, source: str = "dataset") -> dict[str, Pipeline]:
    """The stored form back, by id; raises IngestError if it is not one."""
    errors = ErrorList(100)
    pipelines = parse_pipelines(data if data else None, errors, source=source)
    errors.raise_if_any()
    return pipelines


def merge_pipelines(known: list[dict], new: list[Pipeline]) -> list[dict]:
    """`known` (stored form) with each of `new` replacing the pipeline of its id."""
    replaced = {p.id for p in new}
    kept = [p for p in known if p.get("id") not in replaced]
    return kept + pipelines_to_data(new)


def parse_pipelines(
    value: object, errors: ErrorList, source: str = "export"
) -> dict[str, Pipeline]:
    """`pipelines`: [{id, label?, stages: [{id, label?, closed?, won?, probability?}]}],
    by id. `source`: where the definitions come from (batch.STAGE_SOURCES)."""
    if value is None:
        return {}
    if value.__class__ is not list:
        errors.add(f"pipelines: not a list: {describe(value)}")
        return {}
    pipelines: dict[str, Pipeline] = {}
    for where, pid, raw in _with_unique_ids(value, "pipelines", errors):
        label = _check_label(raw, where, errors)
        stages = _native_stages(raw.get("stages"), where, errors)
        pipelines[pid] = Pipeline(id=pid, stages=stages, label=label, source=source)
    return pipelines


def _native_stages(value: object, where: str, errors: ErrorList) -> list[Stage]:
    if value is None:
        errors.add(f"{where}.stages: missing list")
        return []
    if value.__class__ is not list:
        errors.add(f"{where}.stages: not a list: {describe(value)}")
        return []
    stages: list[Stage] = []
    for at, sid, raw in _with_unique_ids(value, f"{where}.stages", errors):
        label = _check_label(raw, at, errors)
        closed = _flag(raw, "closed", at, errors)
        won = _flag(raw, "won", at, errors)
        probability = raw.get("probability")
        if probability is not None and (
            probability.__class__ not in (int, float) or not 0 <= probability <= 1
        ):
            errors.add(f"{at}.probability: not a number from 0 to 1: {describe(probability)}")
            probability = None
        # A won stage is closed whether or not the export says so.
        stages.append(
            Stage(id=sid, label=label, closed=closed or won, won=won, probability=probability)
        )
    return stages


def _with_unique_ids(items: list, where: str, errors: ErrorList) -> Iterator[tuple[str, str, dict]]:
    """(path, id, object) for each item of the list at `where` that is an object with a
    usable id not met earlier in it; an error naming each other item."""
    first_index: dict[str, int] = {}
    for index, raw in enumerate(items):
        at = f"{where}[{index}]"
        if raw.__class__ is not dict:
            errors.add(f"{at}: not an object: {describe(raw)}")
            continue
        rid, problem = record_id(raw.get("id"))
        if problem:
            errors.add(f"{at}.id: {problem}")
            continue
        first = first_index.setdefault(rid, index)
        if first != index:
            errors.add(f"{at}.id: duplicate of {where}[{first}] ({describe(rid)})")
            continue
        yield at, rid, raw


def _check_label(raw: dict, where: str, errors: ErrorList) -> str:
    label = raw.get("label")
    if label is None:
        return ""
    if label.__class__ is not str:
        errors.add(f"{where}.label: not a string: {describe(label)}")
        return ""
    return label


def _flag(raw: dict, key: str, where: str, errors: ErrorList) -> bool:
    value = raw.get(key)
    if value is None:
        return False
    if value.__class__ is not bool:
        errors.add(f"{where}.{key}: not a boolean: {describe(value)}")
        return False
    return value
