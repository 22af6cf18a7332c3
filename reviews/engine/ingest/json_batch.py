"""The native JSON batch (spec §1): structure checked, records built, values parsed."""

from __future__ import annotations

import json
from datetime import datetime

import orjson

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.ingest.errors import ErrorList, IngestError, not_utf8
from reviews.engine.ingest.records import (
    COMPANIES,
    CONTACTS,
    DEALS,
    Kind,
    Record,
    build_record,
    record_id,
)
from reviews.engine.ingest.values import Invalid, describe, parse_datetime


def parse_json_batch(
    data: bytes, *, as_of: datetime | None, received_at: datetime, max_errors: int
) -> Batch:
    """A Batch from one JSON document, or IngestError listing every structural problem.
    The as-of time is `as_of` if given, else the batch's exportedAt, else `received_at`."""
    top = _load(data)
    errors = ErrorList(max_errors)
    exported_at = _exported_at(top.get("exportedAt"), errors)
    batch_id = _optional_text(top, "id", errors)
    source = _optional_text(top, "source", errors)
    pipelines = parse_pipelines(top.get("pipelines"), errors)
    problems: list[ValueProblem] = []
    companies = _records(top, COMPANIES, errors, problems)
    contacts = _records(top, CONTACTS, errors, problems)
    deals = _records(top, DEALS, errors, problems)
    errors.raise_if_any()
    return Batch(
        id=batch_id,
        as_of=as_of or exported_at or received_at,
        source=source,
        companies=companies,
        contacts=contacts,
        deals=deals,
        pipelines=pipelines,
        value_problems=problems,
    )


def _load(data: bytes) -> dict:
    try:
        # Decoded here, not by json.loads, so UTF-16 and stray bytes are refused
        # rather than guessed at; utf-8-sig drops the BOM some editors write.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise IngestError([not_utf8(data, error)]) from None
    try:
        top = _fast_loads(data, text)
        if top is None:
            top = json.loads(text)
    except json.JSONDecodeError as error:
        raise IngestError(
            [f"not JSON: {error.msg} at line {error.lineno} column {error.colno}"]
        ) from None
    except (ValueError, RecursionError) as error:  # e.g. a 5,000-digit number
        raise IngestError([f"not JSON: {error}"]) from None
    if top.__class__ is not dict:
        kind = _json_type(top)
        raise IngestError([f"not a batch: the top level is a JSON {kind}, not an object"])
    return top


def _fast_loads(data: bytes, text: str) -> object | None:
    """orjson's parse of `text` (the decoded `data`), or None where it could differ from
    the standard library's: it refuses what json.loads reads (NaN, lone surrogates) and
    rounds integers over 64 bits to floats. The standard library then decides, so errors
    and values are exactly what they always were."""
    if _has_long_digit_run(data):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


# Digits to "0", everything else to "x": a run of 20 digits (an integer over 64 bits,
# in or out of a string) is then a plain substring search. A regex takes 8x as long.
_DIGITS = bytes(48 if 48 <= byte <= 57 else 120 for byte in range(256))
_RUN = b"0" * 20
_SCAN_CHUNK = 16 * 1024 * 1024


def _has_long_digit_run(data: bytes) -> bool:
    for start in range(0, len(data), _SCAN_CHUNK):  # chunks: no second 200 MB copy
        if _RUN in data[start : start + _SCAN_CHUNK + len(_RUN) - 1].translate(_DIGITS):
            return True
    return False


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
    return names.get(value.__class__, "null")


def _exported_at(value: object, errors: ErrorList) -> datetime | None:
    # Structural, not a value problem: every date rule is computed against it.
    parsed = parse_datetime(value)
    if parsed.__class__ is Invalid:
        errors.add(f"exportedAt: {parsed.message}")
        return None
    return parsed


def _optional_text(top: dict, key: str, errors: ErrorList) -> str | None:
    value = top.get(key)
    if value is None or value == "":
        return None
    if value.__class__ is not str:
        errors.add(f"{key}: not a string: {describe(value)}")
        return None
    return value


def _records(
    top: dict, kind: Kind, errors: ErrorList, problems: list[ValueProblem]
) -> list[Record]:
    raws = top.get(kind.name)
    if raws is None:
        errors.add(f"{kind.name}: missing list")
        return []
    if raws.__class__ is not list:
        errors.add(f"{kind.name}: not a list: {describe(raws)}")
        return []
    first_index: dict[str, int] = {}
    records: list[Record] = []
    for index, raw in enumerate(raws):
        if raw.__class__ is not dict:
            errors.add(f"{kind.name}[{index}]: not an object: {describe(raw)}")
            continue
        rid, problem = record_id(raw.pop("id", None))
        if problem:
            errors.add(f"{kind.name}[{index}].id: {problem}")
            continue
        first = first_index.setdefault(rid, index)
        if first != index:
            errors.add(
                f"{kind.name}[{index}].id: duplicate of {kind.name}[{first}] ({describe(rid)})"
            )
            continue
        # The raw dict becomes `extra`: build_record pops the mapped keys off it.
        records.append(build_record(kind, rid, index, raw, raw, problems))
    return records


def parse_pipelines(value: object, errors: ErrorList) -> dict[str, Pipeline]:
    """`pipelines`: [{id, label?, stages: [{id, label?, closed?, won?}]}], by id."""
    if value is None:
        return {}
    if value.__class__ is not list:
        errors.add(f"pipelines: not a list: {describe(value)}")
        return {}
    pipelines: dict[str, Pipeline] = {}
    first_index: dict[str, int] = {}
    for index, raw in enumerate(value):
        where = f"pipelines[{index}]"
        if raw.__class__ is not dict:
            errors.add(f"{where}: not an object: {describe(raw)}")
            continue
        pid, problem = record_id(raw.get("id"))
        if problem:
            errors.add(f"{where}.id: {problem}")
            continue
        first = first_index.setdefault(pid, index)
        if first != index:
            errors.add(f"{where}.id: duplicate of pipelines[{first}] ({describe(pid)})")
            continue
        _check_label(raw, where, errors)
        pipelines[pid] = Pipeline(id=pid, stages=_stages(raw.get("stages"), where, errors))
    return pipelines


def _stages(value: object, where: str, errors: ErrorList) -> list[Stage]:
    if value is None:
        errors.add(f"{where}.stages: missing list")
        return []
    if value.__class__ is not list:
        errors.add(f"{where}.stages: not a list: {describe(value)}")
        return []
    stages: list[Stage] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(value):
        at = f"{where}.stages[{index}]"
        if raw.__class__ is not dict:
            errors.add(f"{at}: not an object: {describe(raw)}")
            continue
        sid, problem = record_id(raw.get("id"))
        if problem:
            errors.add(f"{at}.id: {problem}")
            continue
        first = first_index.setdefault(sid, index)
        if first != index:
            errors.add(f"{at}.id: duplicate of {where}.stages[{first}] ({describe(sid)})")
            continue
        label = _check_label(raw, at, errors)
        closed = _flag(raw, "closed", at, errors)
        won = _flag(raw, "won", at, errors)
        # A won stage is closed whether or not the export says so.
        stages.append(Stage(id=sid, label=label, closed=closed or won, won=won))
    return stages


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
