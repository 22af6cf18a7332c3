"""The native JSON batch (docs/input.md): structure checked, records built, values parsed."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from itertools import islice
from typing import Any

import msgspec

from reviews.engine.batch import Batch, ValueProblem
from reviews.engine.extra_fields import NO_EXTRA, ExtraFields
from reviews.engine.ingest.api_json import is_api_export
from reviews.engine.ingest.errors import ErrorList, IngestError, not_utf8, too_deep
from reviews.engine.ingest.pipelines import parse_pipelines
from reviews.engine.ingest.records import (
    COMPANIES,
    CONTACTS,
    DEALS,
    LEADS,
    Kind,
    Record,
    build_record,
    field_parsers,
    record_id,
)
from reviews.engine.ingest.values import Invalid, describe, parse_datetime


def parse_json_batch(
    data: bytes, *, as_of: datetime | None, received_at: datetime, max_errors: int
) -> Batch:
    """A Batch from one JSON document, or IngestError listing every structural problem.
    The as-of time is `as_of` if given, else the batch's exportedAt, else `received_at`."""
    return build_json_batch(
        load_json(data), as_of=as_of, received_at=received_at, max_errors=max_errors
    )


def build_json_batch(
    top: object,
    *,
    as_of: datetime | None,
    received_at: datetime,
    max_errors: int,
    release: Callable[[], None] | None = None,
) -> Batch:
    """parse_json_batch on a document already loaded (load_json, or load_native, whose
    text `release` lets go of the part read so far: mapped.release_read_pages)."""
    if top.__class__ is not dict:
        kind = _json_type(top)
        raise IngestError([f"not a batch: the top level is a JSON {kind}, not an object"])
    errors = ErrorList(max_errors)
    exported_at = _exported_at(top.get("exportedAt"), errors)
    batch_id = _optional_text(top, "id", errors)
    source = _optional_text(top, "source", errors)
    dataset = _dataset_name(top, errors)
    pipelines = parse_pipelines(top.get("pipelines"), errors)
    problems: list[ValueProblem] = []
    ignored: dict[str, list[str]] = {}  # list name -> fields kept but read by no rule
    extras: dict[str, ExtraFields] = {}
    companies = _records(top, COMPANIES, errors, problems, ignored, extras, release=release)
    # Contacts and deals name their company by the same text: they share the company's
    # own string (7 million references in 10 million records, 61 bytes each).
    company_ids = {c.id: c.id for c in companies}
    contacts = _records(top, CONTACTS, errors, problems, ignored, extras, company_ids, release)
    deals = _records(top, DEALS, errors, problems, ignored, extras, company_ids, release)
    del company_ids
    # Leads are optional: a HubSpot batch has none (docs/input.md).
    leads = (
        _records(top, LEADS, errors, problems, ignored, extras)
        if top.get("leads") is not None
        else []
    )
    errors.raise_if_any()
    return Batch(
        id=batch_id,
        as_of=as_of or exported_at or received_at,
        as_of_source="given" if as_of else "exportedAt" if exported_at else "upload",
        source=source,
        companies=companies,
        contacts=contacts,
        deals=deals,
        pipelines=pipelines,
        leads=leads,
        value_problems=problems,
        ignored_columns=ignored,
        dataset=dataset,
        extras=extras,
    )


class _Native(msgspec.Struct):
    """A native batch with each record left as its JSON text (msgspec.Raw, a view of
    the upload's bytes): _records decodes one record at a time, so the document is
    never held whole as dicts (4 GB of them for ten million records)."""

    companies: list[msgspec.Raw] | None = None
    contacts: list[msgspec.Raw] | None = None
    deals: list[msgspec.Raw] | None = None
    leads: list[msgspec.Raw] | None = None
    id: Any = None
    exportedAt: Any = None  # noqa: N815 (the JSON key)
    source: Any = None
    dataset: Any = None
    pipelines: Any = None
    results: Any = None  # a HubSpot API page, not a native batch


_NATIVE = msgspec.json.Decoder(_Native)
_decode_record = msgspec.json.Decoder().decode


def load_native(data: bytes) -> dict | None:
    """The top level of a native batch with its records still JSON text, for
    build_json_batch; None where that does not apply (not an object, a record list
    that is not a list, a HubSpot API export, anything msgspec refuses): load_json
    reads it then, with its exact errors."""
    try:
        native = _NATIVE.decode(_without_bom(data))
        top = {name: getattr(native, name) for name in native.__struct_fields__}
        firsts = {name: [_decode_record(top[name][0])] for name in _LISTS if top[name]}
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if native.results is not None or is_api_export(firsts):
        return None
    return top


_LISTS = (COMPANIES.name, CONTACTS.name, DEALS.name, LEADS.name)
# Records read between two releases of the text read so far: 50 MB of it, about.
_RELEASE_EVERY = 250_000


def load_json(data: bytes, name: str = "JSON") -> object:
    """The decoded document, or IngestError saying why it is not JSON (or nested past
    MAX_JSON_DEPTH, naming the file)."""
    try:
        top = _fast_loads(data)
        return top if top is not None else _slow_loads(data)
    except RecursionError:  # the readers' guard against a stack overflow: the limit
        raise IngestError([too_deep(name)]) from None


def _slow_loads(data: bytes) -> object:
    """The standard library's parse, with its exact errors."""
    try:
        # Decoded here, not by json.loads, so UTF-16 and stray bytes are refused
        # rather than guessed at; utf-8-sig drops the BOM some editors write.
        text = str(data, "utf-8-sig")  # bytes, or a mapped file's buffer
    except UnicodeDecodeError as error:
        raise IngestError([not_utf8(data, error)]) from None
    try:
        return _loads(text)
    except json.JSONDecodeError as error:
        # Some of its messages end in "at" already: "Invalid control character at".
        message = error.msg.removesuffix(" at")
        raise IngestError(
            [f"not JSON: {message} at line {error.lineno} column {error.colno}"]
        ) from None
    except RecursionError:
        raise
    except ValueError as error:
        raise IngestError([f"not JSON: {error}"]) from None


def _fast_loads(data: bytes) -> object | None:
    """msgspec's parse of the raw bytes: on a million records 2-3x faster than the
    standard library and with less memory (no decoded copy of the text; orjson, also
    measured, held 430 MB more in its objects). None where msgspec refuses the document
    (not UTF-8, NaN, lone surrogates, numbers past its range, malformed JSON): the
    standard library then reads it, so every error and value is what it always was.
    Integers of any size come back exact from both."""
    try:
        return msgspec.json.decode(_without_bom(data))
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


_BOM = b"\xef\xbb\xbf"


def _without_bom(data: bytes) -> bytes | memoryview:
    """The text after a UTF-8 byte order mark, without copying (data may be an mmap)."""
    return memoryview(data)[len(_BOM) :] if data[: len(_BOM)] == _BOM else data


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # a number past Python's int digit limit: valid JSON all the same
        return json.loads(text, parse_int=_bounded_int)


_INT_DIGITS = 4000  # under sys.get_int_max_str_digits()'s default 4,300, with room for a sign


def _bounded_int(digits: str) -> int | Decimal:
    """An int, or past Python's int digit limit a Decimal (which has none): the field's
    parser then calls it an invalid value instead of the whole batch failing to load.
    Only a document that needs it pays for this hook."""
    if len(digits) <= _INT_DIGITS:
        return int(digits)
    return Decimal(digits)


def _json_type(value: object) -> str:
    names = {
        list: "array",
        str: "string",
        int: "number",
        float: "number",
        Decimal: "number",  # an int past the digit limit (_bounded_int)
        bool: "boolean",
    }
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


DATASET_NAME_MAX = 200


def _dataset_name(top: dict, errors: ErrorList) -> str | None:
    name = _optional_text(top, "dataset", errors)
    if name is None:
        return None
    problem = dataset_name_problem(name)
    if problem:
        errors.add(f"dataset: {problem}")
        return None
    return name.strip()


def dataset_name_problem(name: str) -> str | None:
    """Why `name` cannot name a dataset, or None. Shared with the form and the CLI."""
    stripped = name.strip()
    if not stripped:
        return "empty name"
    if len(stripped) > DATASET_NAME_MAX:
        return f"name is {len(stripped):,} characters; at most {DATASET_NAME_MAX}"
    if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in stripped):
        # ASCII-escaped: a lone surrogate cannot be stored or shown as it is.
        return f"name holds a control character or a lone surrogate: {json.dumps(stripped[:60])}"
    return None


def _records(
    top: dict,
    kind: Kind,
    errors: ErrorList,
    problems: list[ValueProblem],
    ignored: dict[str, list[str]],
    extras: dict[str, ExtraFields],
    company_ids: dict[str, str] | None = None,
    release: Callable[[], None] | None = None,
) -> list[Record]:
    raws = top.get(kind.name)
    if raws is None:
        errors.add(f"{kind.name}: missing list")
        return []
    if raws.__class__ is not list:
        errors.add(f"{kind.name}: not a list: {describe(raws)}")
        return []
    records: list[Record] = []
    unknown: set[str] = set()
    refused: list[tuple[int, str]] = []  # (index, why): the list's structural errors
    plan = field_parsers(kind)
    # load_native's records are JSON text, decoded one at a time and then let go; their
    # unread fields are kept in the batch's ExtraFields. load_json's keep them as dicts:
    # it reads what msgspec refuses, which msgspec could not write back as it was.
    streamed = bool(raws) and raws[0].__class__ is msgspec.Raw
    if streamed:
        kept = extras[kind.name] = ExtraFields()
    for index, raw in enumerate(raws):
        if streamed:
            raws[index] = None
            raw = _decode_record(raw)
            if release is not None and not index % _RELEASE_EVERY:
                release()
        if raw.__class__ is not dict:
            refused.append((index, f"{kind.name}[{index}]: not an object: {describe(raw)}"))
            continue
        rid, problem = record_id(raw.pop("id", None))
        if problem:
            refused.append((index, f"{kind.name}[{index}].id: {problem}"))
            continue
        # build_record pops the mapped keys off the raw dict: what remains is kept.
        extra = NO_EXTRA if streamed else raw
        record = build_record(kind, rid, index, raw, extra, problems, plan)
        if company_ids and record.company_id:
            record.company_id = company_ids.get(record.company_id, record.company_id)
        records.append(record)
        if raw:
            unknown.update(raw)  # the fields no rule reads
            if streamed:
                kept.add(index, raw)
    refused += _duplicates(kind.name, records)
    for _, message in sorted(refused):  # in the list's order, as a reader meets them
        errors.add(message)
    if unknown:
        ignored[kind.name] = sorted(unknown)
    return records


def _duplicates(name: str, records: list[Record]) -> list[tuple[int, str]]:
    """(index, error) for each record whose id an earlier record has. Found after the
    records are built, not by a dict of every id as they come: an export's ids mostly
    ascend, which one ordered pass proves (at ten million records the dict's inserts,
    each a cache miss, took 6.9 s). A batch with any is refused, so a duplicate built
    and kept meanwhile is never reviewed."""
    ids = list(map(operator.attrgetter("id"), records))
    if all(map(operator.lt, ids, islice(ids, 1, None))) or len(set(ids)) == len(ids):
        return []
    first_index: dict[str, int] = {}
    found = []
    for record in records:
        first = first_index.setdefault(record.id, record.index)
        if first != record.index:
            found.append(
                (record.index, f"{name}[{record.index}].id: duplicate of {name}[{first}] "
                 f"({describe(record.id)})")
            )  # fmt: skip
    return found
