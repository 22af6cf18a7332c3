"""One pull of a Salesforce org, step by step, resumable from its checkpoint. No Django.

For each object (export.OBJECTS) a pull describes it (which fields the integration user
can read) and queries them all through queryAll, so records deleted or merged away since
arrive too, with IsDeleted true and, for a merged-away Account, Contact or Lead, the
MasterRecordId of the record it went into. A full pull queries every record; an
incremental one the records whose SystemModstamp is after `since`, laid over the last
pull's rows by Id: the files it stores are the ones a full pull of the org would. An
object with more fields than one query's URL holds is queried in groups of fields
(export.field_groups), joined by Id.

Each page Salesforce answers is handed to `checkpoint.record` with the progress after it
(the step, the group and the last Id kept). A pull that stops starts again from there:
the describe it kept, and a new query for the records past that Id (a query locator
expires after 15 minutes idle, so an old nextRecordsUrl is never relied on)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from connectors.base import Checkpoint
from connectors.salesforce import export
from connectors.salesforce.client import SalesforceClient

Rows = dict[str, dict[str, str]]  # Id -> field -> cell


@dataclass(slots=True)
class PullResult:
    files: dict[str, bytes]  # Account.csv -> its bytes, one per object
    records: int  # rows in the files
    changed: int  # fetched by this pull (every record in a full pull)
    removed: int  # deleted or merged away since the last pull (IsDeleted became true)
    steps: list[str] = field(default_factory=list)


def steps() -> list[str]:
    return [f"{kind}:{name}" for name in export.OBJECTS for kind in ("describe", "query")]


def soql_datetime(moment: datetime) -> str:
    """A SOQL datetime literal (unquoted, UTC): 2026-05-02T10:11:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_pull(
    client: SalesforceClient,
    checkpoint: Checkpoint,
    *,
    previous: dict[str, bytes] | None,
    since: datetime | None,
) -> PullResult:
    """Pull full (no `previous`: the last pull's files by name) or incremental (records
    modified after `since`), from where the checkpoint stands."""
    state = _State()
    for step, data in checkpoint.chunks():
        state.take(step, data)
    progress = checkpoint.progress()
    done = set(progress.get("done", []))
    names = {export.file_name(o) for o in export.OBJECTS}
    last = {n: export.read_csv(data) for n, data in (previous or {}).items() if n in names}
    for step in steps():
        if step in done:
            continue
        kind, _, sobject = step.partition(":")
        cursor = progress.get("cursor", {}) if progress.get("step") == step else {}
        if kind == "describe":
            fields = export.fields_of(sobject, client.describe(sobject))
            state.take(step, fields)
            checkpoint.record(step, fields, {"done": sorted(done), "step": step, "cursor": {}})
        else:
            fields = state.fields[sobject]
            # Every record of an object the last pull did not store, or stored with other
            # fields (one added since has values in records that did not change).
            header = last.get(export.file_name(sobject), ([], {}))[0]
            known = header == fields and export.MODSTAMP in fields
            where = soql_datetime(since) if since and known else ""
            groups = export.field_groups(sobject, fields)
            for number, group in enumerate(groups):
                if number < cursor.get("group", 0):
                    continue
                after_id = cursor.get("last_id", "") if number == cursor.get("group", 0) else ""
                query = export.soql(sobject, group, since=where, after_id=after_id)
                for records, _ in client.query_pages(query, deleted=True):
                    rows = [export.row_of(r, group) for r in records]
                    if not rows:
                        continue
                    data = {"fields": group, "rows": rows}
                    state.take(step, data)
                    at = {"group": number, "last_id": rows[-1][0]}
                    checkpoint.record(
                        step, data, {"done": sorted(done), "step": step, "cursor": at}
                    )
        done.add(step)
        checkpoint.record(step, None, {"done": sorted(done), "step": "", "cursor": {}})
    return state.result({n: rows for n, (_, rows) in last.items()})


class _State:
    """What the pull has got so far, from the checkpoint's chunks and new answers."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}
        self.rows: dict[str, Rows] = {name: {} for name in export.OBJECTS}

    def take(self, step: str, data: object) -> None:
        if data is None:
            return
        kind, _, sobject = step.partition(":")
        if kind == "describe":
            self.fields[sobject] = list(data)
        elif kind == "query":
            rows = self.rows[sobject]
            for values in data["rows"]:
                rows.setdefault(values[0], {}).update(zip(data["fields"], values, strict=True))

    def result(self, last: dict[str, Rows]) -> PullResult:
        files, records, changed, removed = {}, 0, 0, 0
        for sobject in export.OBJECTS:
            fields, fetched = self.fields[sobject], self.rows[sobject]
            name = export.file_name(sobject)
            before = last.get(name, {})
            rows = dict(before)  # the last pull's rows, then what changed laid over them
            for rid, values in fetched.items():
                old = before.get(rid, {})
                gone_now = values.get("IsDeleted") == "true" and old.get("IsDeleted") != "true"
                removed += bool(before) and gone_now
                rows[rid] = {**old, **values}
            table = ([values.get(f, "") for f in fields] for values in rows.values())
            files[name] = export.write_csv(fields, table)
            records += len(rows)
            changed += len(fetched)
        return PullResult(
            files=files, records=records, changed=changed, removed=removed, steps=steps()
        )
