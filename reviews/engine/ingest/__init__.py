"""Turn uploaded files into a validated Batch (reviews.engine.batch), or say exactly why not.

parse_upload() takes the files as received (already stored by
reviews.orchestration.intake.submit) and returns a Batch, or raises IngestError listing
every structural problem (up to a cap), each naming the record and field.

An upload is one .json file, one to three HubSpot .csv/.xlsx/.xls exports or CRM API
.json files, Salesforce's CSV files (any number: its Data Export, Data Loader files,
report exports), or one .zip holding either; any of them may come with a response of
HubSpot's pipelines API (pipelines.py). Readers: json_batch (docs/input.md),
hubspot_csv and spreadsheet (docs/input.md), api_json (HubSpot's CRM v3 objects API);
the last three share hubspot_records; salesforce/ reads Salesforce's."""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

import msgspec

from reviews.engine.batch import Batch, Pipeline
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.ingest.api_json import api_tables, is_api_export
from reviews.engine.ingest.empty import refuse_empty
from reviews.engine.ingest.errors import ErrorList, IngestError, Limits, too_deep
from reviews.engine.ingest.hubspot_csv import parse_csv_batch
from reviews.engine.ingest.hubspot_records import Table, assemble
from reviews.engine.ingest.json_batch import build_json_batch, load_json, load_native
from reviews.engine.ingest.mapped import MAP_OVER_BYTES, TooBig, release_read_pages, unpack_mapped
from reviews.engine.ingest.pipelines import is_pipelines_response, pipelines_from_hubspot
from reviews.engine.ingest.safe_text import clean_batch
from reviews.engine.ingest.salesforce import NOT_READ, is_salesforce_upload, parse_salesforce
from reviews.engine.ingest.spreadsheet import may_hold_unsafe_text, spreadsheet_kind
from reviews.engine.storable import is_storable, may_hold_unstorable

__all__ = ["IngestError", "Limits", "UploadedFile", "parse_upload"]

MAX_CSV_FILES = 3
_EXTENSIONS = {
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".xlsx": "csv",  # spreadsheets are read with the CSV exports (spreadsheet.py)
    ".xlsm": "csv",
    ".xls": "csv",
    ".zip": "zip",
}
_SHAPE = (
    "upload one JSON file, one to three CSV, XLSX or CRM API JSON files, or one ZIP holding them"
)
# A pipelines API response is small; a bigger JSON file is not looked into for one.
_PIPELINES_MAX_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadedFile:
    name: str
    data: bytes  # or, for a big JSON file unpacked from a ZIP, a read-only mmap (mapped.py)


def parse_upload(
    files: list[UploadedFile],
    *,
    as_of: datetime | None,
    received_at: datetime,
    limits: Limits = Limits(),  # noqa: B008 (frozen)
    known_pipelines: dict[str, Pipeline] | None = None,
) -> Batch:
    """The batch the files hold. Its as-of time is `as_of` if given, else the batch's
    own exportedAt (JSON only), else `received_at`; naive times are taken as UTC.
    `known_pipelines`: the deal pipelines a dataset remembers, under the upload's own."""
    if not files:
        raise IngestError(["no file uploaded"])
    refuse_empty(files)
    as_of = _aware(as_of) if as_of else None
    received_at = _aware(received_at)
    if files and all(file_type(f) == "zip" for f in files):
        # Several ZIPs are read as one: a big org's weekly Data Export comes in parts.
        unpacked: list[UploadedFile] = []
        for archive in files:
            budget = limits.max_bytes - sum(len(f.data) for f in unpacked)
            unpacked += unzip(archive, budget)
        files = unpacked
        refuse_empty(files)
    files, uploaded = split_pipelines(files)
    if not files:
        raise IngestError(
            ["the upload holds only deal pipelines and no records: add them to a dataset "
             "(its page, the API or manage.py pipelines), or upload them beside a sync"]
        )  # fmt: skip
    # Asked before parsing: _parse lets go of the files' bytes once they are decoded.
    unsafe = any(_may_hold_unsafe(f) for f in files)
    names = ", ".join(f.name for f in files)
    try:
        batch = _parse(files, as_of=as_of, received_at=received_at, limits=limits)
        for pipeline in uploaded:
            batch.pipelines[pipeline.id] = pipeline
        batch.uploaded_pipelines = [*batch.uploaded_pipelines, *uploaded]
        if known_pipelines:
            batch.use_pipelines(known_pipelines)
        if unsafe:
            # NUL and lone surrogates (in values, or a file name the batch quotes):
            # storable, visible, reported.
            clean_batch(batch)
    except RecursionError:  # a value nested just under the readers' limit, walked deeper
        raise IngestError([too_deep(names)]) from None
    return batch


def _may_hold_unsafe(file: UploadedFile) -> bool:
    if not is_storable(file.name):
        return True
    kind = spreadsheet_kind(file.name, file.data)
    if kind is not None:  # compressed or binary: its bytes say nothing of its text
        return may_hold_unsafe_text(file.data, kind)
    return may_hold_unstorable(file.data)


def split_pipelines(files: list[UploadedFile]) -> tuple[list[UploadedFile], list[Pipeline]]:
    """(the record files, the pipelines of the files that are a pipelines API response)."""
    rest: list[UploadedFile] = []
    pipelines: list[Pipeline] = []
    for file in files:
        if (
            len(file.data) <= _PIPELINES_MAX_BYTES
            and file_type(file) == "json"
            and b'"stages"' in file.data
        ):
            top = load_json(file.data)
            if is_pipelines_response(top):
                pipelines.extend(pipelines_from_hubspot(top, name=file.name))
                continue
        rest.append(file)
    return rest, pipelines


def _parse(
    files: list[UploadedFile], *, as_of: datetime | None, received_at: datetime, limits: Limits
) -> Batch:
    types = [file_type(f) for f in files]
    # Parsing allocates millions of small containers and no reference cycles: with the
    # collector on, it rescanned the growing heap for nothing (a third of the parse time
    # on a million records). The parsed records are then frozen out of its view.
    if types and all(t == "json" for t in types) and len(types) <= MAX_CSV_FILES:
        with no_cyclic_gc(freeze=True):
            native = load_native(files[0].data) if len(files) == 1 else None
            if native is not None:
                file = files.pop()  # the records' text is a view of its bytes
                try:
                    return build_json_batch(
                        native,
                        as_of=as_of,
                        received_at=received_at,
                        max_errors=limits.max_errors,
                        release=partial(release_read_pages, file.data),
                    )
                except msgspec.DecodeError:  # a value msgspec skipped but cannot read
                    files.append(file)  # (an integer past 64 bits): read it all again
            documents = [(f.name, load_json(f.data, f.name)) for f in files]
            # `files` is split_pipelines' own list: clearing it lets a ZIP's unpacked
            # members go before the records are built (2 GB for ten million records).
            files.clear()
            if len(documents) == 1 and not is_api_export(documents[0][1]):
                return build_json_batch(
                    documents[0][1],
                    as_of=as_of,
                    received_at=received_at,
                    max_errors=limits.max_errors,
                )
            return _parse_api_export(documents, as_of, received_at, limits)
    # Salesforce's files, any number of them (a Data Export has dozens, and folders of
    # attachments, listed as not read).
    csvs = [(f.name, f.data) for f, t in zip(files, types, strict=True) if t == "csv"]
    if csvs and is_salesforce_upload(csvs, limits):
        with no_cyclic_gc(freeze=True):
            batch = parse_salesforce(csvs, as_of=as_of, received_at=received_at, limits=limits)
        for file, kind in zip(files, types, strict=True):
            if kind != "csv":
                batch.ignored_columns[file.name] = NOT_READ
        return batch
    if types and all(t == "csv" for t in types) and len(types) <= MAX_CSV_FILES:
        with no_cyclic_gc(freeze=True):
            return parse_csv_batch(
                [(f.name, f.data) for f in files],
                as_of=as_of,
                received_at=received_at,
                max_errors=limits.max_errors,
                date_order=limits.date_order,
                limits=limits,
            )
    raise IngestError([f"{_SHAPE}; got: {', '.join(f.name for f in files) or 'nothing'}"])


def _parse_api_export(
    documents: list[tuple[str, object]],
    as_of: datetime | None,
    received_at: datetime,
    limits: Limits,
) -> Batch:
    """HubSpot CRM API JSON (api_json): one file per object type, or one with all."""
    errors = ErrorList(limits.max_errors)
    tables: dict[str, Table] = {}
    for name, top in documents:
        if not is_api_export(top):
            errors.add(
                f"{name}: several JSON files are read only as HubSpot CRM API JSON "
                "(objects with id and properties); upload a batch JSON on its own"
            )
            continue
        for table in api_tables(name, top, errors):
            if table.kind in tables:
                errors.add(f"{table.name}: a second {table.kind} list ({tables[table.kind].name})")
                continue
            tables[table.kind] = table
    errors.raise_if_any()
    return assemble(
        tables,
        as_of=as_of,
        received_at=received_at,
        date_order=limits.date_order,
        source="hubspot-api",
    )


def _extension(name: str) -> str:
    return posixpath.splitext(name.lower())[1]


def file_type(file: UploadedFile) -> str:
    """json, csv (a spreadsheet too) or zip: by extension, else by the first bytes (a
    CLI pipe has no name)."""
    extension = _extension(file.name)
    if extension in _EXTENSIONS:
        return _EXTENSIONS[extension]
    if spreadsheet_kind("", file.data):
        return "csv"
    if file.data.startswith(b"PK\x03\x04"):
        return "zip"
    head = file.data[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()  # a slice: no 200 MB copy
    if head[:1] in (b"{", b"["):
        return "json"
    return "csv"


def unzip(file: UploadedFile, limit: int) -> list[UploadedFile]:
    """The CSV or JSON files inside a ZIP, skipping directories and macOS/dot-file
    clutter. Refuses one that unpacks to more than `limit` bytes (a zip bomb)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(file.data))
        members = [info for info in archive.infolist() if _is_content(info)]
        declared = sum(info.file_size for info in members)
        if declared > limit:
            raise IngestError([_too_big(file.name, f"{declared:,} bytes", limit)])
        unpacked = []
        budget = limit
        for info in members:
            data = _unpack(archive, info, budget)
            if len(data) > budget:
                raise TooBig
            budget -= len(data)
            unpacked.append(UploadedFile(name=info.filename, data=data))
    # UnicodeDecodeError: a member name flagged UTF-8 that is not.
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
        raise IngestError([f"{file.name}: not a readable ZIP file ({error})"]) from None
    except RuntimeError as error:  # encrypted members
        raise IngestError([f"{file.name}: {error}"]) from None
    except TooBig:
        raise IngestError([_too_big(file.name, "more bytes than it declares", limit)]) from None
    if not unpacked:
        raise IngestError([f"{file.name}: the ZIP holds no files"])
    nested = [f.name for f in unpacked if file_type(f) == "zip"]
    if nested:
        raise IngestError([f"{file.name}: ZIP files inside a ZIP are not read ({nested[0]})"])
    return unpacked


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """A member's bytes, at most `budget` + 1 of them (declared sizes can lie); a big
    JSON file mapped from a temporary file (mapped.py), or read into memory where no
    temporary file can be written (a full or read-only disk)."""
    if info.file_size >= MAP_OVER_BYTES and _extension(info.filename) == ".json":
        try:
            with archive.open(info) as member:
                return unpack_mapped(member, budget)
        except OSError:
            pass
    with archive.open(info) as member:
        return member.read(budget + 1)


def _is_content(info: zipfile.ZipInfo) -> bool:
    base = posixpath.basename(info.filename)
    return not (info.is_dir() or info.filename.startswith("__MACOSX/") or base.startswith("."))


def _too_big(name: str, size: str, limit: int) -> str:
    return f"{name}: unpacks to {size}; the limit is {limit:,} bytes (MAX_UPLOAD_BYTES)"


def _aware(moment: datetime) -> datetime:
    """A naive time is taken as UTC, as naive times in a batch are."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
