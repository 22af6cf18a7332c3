"""Records read whole before a merge, and made again from what was read: the snapshot a
merge is undone from (connectors/undo.py). No Django.

A snapshot is taken just before a merge is sent, of both records, fresh from HubSpot:
- every property the portal defines for the type (`GET /crm/v3/properties/{type}`), read
  with `POST /crm/v3/objects/{type}/batch/read`, and which of them HubSpot alone writes
  (`modificationMetadata.readOnlyValue`, or calculated): those cannot be set again;
- every association to the other types, with its labels (v4 batch read, every page).

Undo makes the merged-away record again: `POST /crm/v3/objects/{type}` with the values
that can be set (HubSpot gives it a new id), then its associations with
`POST /crm/v4/associations/{type}/{to type}/batch/create`, to the records' ids now."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from connectors.hubspot import associations
from connectors.hubspot.client import HubSpotClient, HubSpotError
from connectors.hubspot.snapshot import TYPES

# The types a record's associations are read to (and restored from).
LINKED = {t: tuple(o for o in TYPES if o != t) for t in TYPES}
# Set on a contact by HubSpot from its primary company association, which undo restores:
# written back from the snapshot it would name the merged-away company's old id.
DERIVED = {"associatedcompanyid"}
BATCH_CREATE = 100  # associations a request
MERGED = "hs_merged_object_ids"  # on a survivor: the ids merged into it


def property_names(client: HubSpotClient, object_type: str) -> tuple[list[str], list[str]]:
    """(every property name of the type, the ones HubSpot alone writes), sorted."""
    answer = client.request("GET", f"/crm/v3/properties/{object_type}")
    names, read_only = set(), set()
    for prop in answer.get("results") or []:
        name = str(prop.get("name") or "")
        if not name or prop.get("archived"):
            continue
        names.add(name)
        meta = prop.get("modificationMetadata") or {}
        if meta.get("readOnlyValue") or prop.get("calculated"):
            read_only.add(name)
    return sorted(names), sorted(read_only | (DERIVED & names))


def snapshot(client: HubSpotClient, object_type: str, ids: list[str]) -> dict[str, dict]:
    """{id: {"id", "object_type", "read_at", "properties", "read_only", "associations"}}
    for each of `ids`, read now. Raises HubSpotError naming a record HubSpot did not
    return: a merge is not sent without both records' snapshots."""
    names, read_only = property_names(client, object_type)
    answer = client.request(
        "POST",
        f"/crm/v3/objects/{object_type}/batch/read",
        json={"properties": names, "inputs": [{"id": rid} for rid in ids]},
    )
    found = {str(r.get("id")): r for r in answer.get("results") or []}
    for result in answer.get("results") or []:
        # An id a merge replaced (a deal's, merged into a new one) is answered as the
        # record it became, under that record's id: its old ids are in this property.
        merged = str((result.get("properties") or {}).get(MERGED) or "")
        for old in filter(None, merged.split(";")):
            found.setdefault(old, result)
    missing = [rid for rid in ids if rid not in found]
    if missing:
        raise HubSpotError(
            404, f"{object_type} {', '.join(missing)} not found: nothing read, nothing sent"
        )
    read_at = datetime.now(UTC).isoformat(timespec="seconds")
    real = {rid: str(found[rid].get("id") or rid) for rid in ids}  # an alias: its record's
    links = {
        to_type: associations.read_typed(client, object_type, to_type, sorted(set(real.values())))
        for to_type in LINKED[object_type]
    }
    return {
        rid: {
            "id": rid,
            "object_type": object_type,
            "read_at": read_at,
            "properties": found[rid].get("properties") or {},
            "read_only": read_only,
            "associations": {t: links[t].get(real[rid], []) for t in LINKED[object_type]},
        }
        for rid in ids
    }


def writable(record: dict) -> dict[str, str]:
    """The snapshot's values that a create can set again: not blank, not HubSpot's own."""
    read_only = set(record.get("read_only") or ())
    return {
        name: value
        for name, value in (record.get("properties") or {}).items()
        if value not in (None, "") and name not in read_only
    }


def lost_on_undo(record: dict) -> list[str]:
    """The snapshot's non-blank values HubSpot alone writes: undo cannot set them again."""
    read_only = set(record.get("read_only") or ())
    props = record.get("properties") or {}
    return sorted(n for n in read_only if props.get(n) not in (None, ""))


def recreate(client: HubSpotClient, object_type: str, record: dict) -> str:
    """POST /crm/v3/objects/{type} with the snapshot's settable values: the new id.
    Sent once (a timeout may have created it): HubSpotError with no status then."""
    answer = client.request(
        "POST",
        f"/crm/v3/objects/{object_type}",
        json={"properties": writable(record)},
        retry_failures=False,
        floor=False,
    )
    new_id = str(answer.get("id") or "")
    if not new_id:
        raise HubSpotError(None, f"HubSpot created the {object_type} record but named no id")
    return new_id


def associate(
    client: HubSpotClient,
    object_type: str,
    new_id: str,
    record: dict,
    now: Callable[[str, str], str],
) -> tuple[int, list[str]]:
    """The snapshot's associations made again from `new_id`, to each record's id now
    (`now(type, id)`: a record merged away since is its survivor). (associations made,
    HubSpot's messages for those it refused). Creating one that exists changes nothing,
    so a request is retried as any other."""
    made, problems = 0, []
    for to_type, links in (record.get("associations") or {}).items():
        inputs = []
        for link in links:
            to_id = now(to_type, link["id"])
            # A primary label was the pair's: a record merged into another since does not
            # make the new record its survivor's primary.
            types = [
                *link.get("types", []),
                *(link.get("primary_types", []) if to_id == link["id"] else []),
            ]  # noqa: E501
            if types:
                inputs.append({"from": {"id": new_id}, "to": {"id": to_id}, "types": types})
        for start in range(0, len(inputs), BATCH_CREATE):
            chunk = inputs[start : start + BATCH_CREATE]
            try:
                answer = client.request(
                    "POST",
                    f"/crm/v4/associations/{object_type}/{to_type}/batch/create",
                    json={"inputs": chunk},
                    floor=False,
                )
            except HubSpotError as error:
                problems.append(f"{to_type}: {error}")
                continue
            made += len(answer.get("results") or [])
            problems.extend(
                f"{to_type}: {e.get('message') or e.get('category') or 'refused'}"
                for e in answer.get("errors") or []
            )
    return made, problems
