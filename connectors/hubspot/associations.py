"""The v4 associations batch read, every page of every record. No Django.

`POST /crm/v4/associations/{from}/{to}/batch/read` takes at most 1,000 ids and answers a
result per record, each a page of that record's associations: a record with more has
its own `paging.next.after`, and is asked again with that cursor beside its id
(`{"id", "after"}`) until it has no more. The answer is 207 when some inputs were not
answered, listed under `errors`: a record with no association of the type
(`NO_ASSOCIATIONS_FOUND`) has none; another error leaves the record's associations
unknown."""

from __future__ import annotations

from collections.abc import Callable

from connectors.hubspot.client import HubSpotClient, HubSpotError, next_after
from connectors.hubspot.snapshot import SINGULAR

BATCH_READ = 1_000  # ids a request


class AssociationsIncomplete(HubSpotError):
    """A batch read left records unanswered, asked twice: `failed` maps each record's id
    to HubSpot's message ({} when HubSpot did not say which records)."""

    def __init__(self, message: str, failed: dict[str, str]) -> None:
        super().__init__(207, message)
        self.failed = failed


def read(client: HubSpotClient, from_type: str, to_type: str, ids: list[str]) -> dict[str, list]:
    """{from id: [[to id, primary?]]} for at most 1,000 ids, all their pages (read_all)."""
    return read_all(
        client,
        from_type,
        to_type,
        ids,
        lambda to: [str(to["toObjectId"]), _is_primary(to.get("associationTypes") or [])],
    )


def read_typed(
    client: HubSpotClient, from_type: str, to_type: str, ids: list[str]
) -> dict[str, list]:
    """{from id: [{"id": to id, "types": [...], "primary_types": [...]}]}, each type
    {"associationCategory", "associationTypeId"} as the v4 create takes it back: every
    association with its labels (a merge's snapshot, connectors/hubspot/records.py)."""
    return read_all(client, from_type, to_type, ids, _typed)


def _typed(to: dict) -> dict:
    """The primary label apart: it belongs to the pair, not to a record merged since."""
    found = {"id": str(to["toObjectId"]), "types": [], "primary_types": []}
    for t in to.get("associationTypes") or []:
        if t.get("typeId") is not None:
            spec = {"associationCategory": t.get("category"), "associationTypeId": t["typeId"]}
            found["primary_types" if _is_primary([t]) else "types"].append(spec)
    return found


def read_all(
    client: HubSpotClient,
    from_type: str,
    to_type: str,
    ids: list[str],
    entry: Callable[[dict], object],
) -> dict[str, list]:
    """{from id: [entry(to) for each association]} for at most 1,000 ids. An input
    HubSpot answers with an error other than "no associations" is asked once more; one
    still failing raises AssociationsIncomplete naming the records and HubSpot's
    messages: a record whose associations are unknown is not reviewed as if it had none."""
    if len(ids) > BATCH_READ:
        raise ValueError(f"at most {BATCH_READ} ids a request")
    path = f"/crm/v4/associations/{from_type}/{to_type}/batch/read"
    found: dict[str, list] = {}
    pending = [{"id": i} for i in ids]
    cursors: set[tuple[str, str]] = set()  # (id, after) given: one given twice would loop
    retried: set[str] = set()
    failed: dict[str, str] = {}
    while pending:
        page = client.request("POST", path, json={"inputs": pending})
        sent = {item["id"]: item for item in pending}
        pending = []
        for result in page.get("results") or []:
            rid = str(result["from"]["id"])
            found.setdefault(rid, []).extend(entry(to) for to in result.get("to") or [])
            if after := next_after(result):
                if (rid, after) in cursors:
                    raise HubSpotError(
                        None, f"HubSpot gave the same {to_type} cursor of {from_type} {rid} twice"
                    )
                cursors.add((rid, after))
                pending.append({"id": rid, "after": after})
        for error in page.get("errors") or []:
            named = _error_ids(error)
            if _no_associations(error):
                for rid in named:
                    found.setdefault(rid, [])
                continue
            if not named:  # it does not say which records: none of them can be trusted
                raise AssociationsIncomplete(
                    f"the {to_type} of some of {_count(len(ids), from_type)} could not be "
                    f"read: {_error_message(error)}",
                    {},
                )
            for rid in named:
                if rid in sent and rid not in retried:
                    retried.add(rid)
                    pending.append(sent[rid])  # with its cursor, if it had one
                else:
                    failed[rid] = _error_message(error)
    if failed:
        listed = "; ".join(f"{rid}: {message}" for rid, message in sorted(failed.items())[:10])
        more = f" and {len(failed) - 10:,} more" if len(failed) > 10 else ""
        raise AssociationsIncomplete(
            f"the {to_type} of {_count(len(failed), from_type)} could not be read, asked "
            f"twice ({listed}{more})",
            failed,
        )
    return found


def _count(n: int, object_type: str) -> str:
    return f"{n:,} {SINGULAR.get(object_type, object_type) if n == 1 else object_type}"


def _no_associations(error: dict) -> bool:
    """The batch read's way of saying a record has no association of the type."""
    return str(error.get("subCategory") or "").endswith("NO_ASSOCIATIONS_FOUND")


def _error_ids(error: dict) -> list[str]:
    """The records a batch error is about: its context's fromObjectId, else its `id`."""
    context = error.get("context") if isinstance(error.get("context"), dict) else {}
    ids = context.get("fromObjectId") or []
    if isinstance(ids, str | int):
        ids = [ids]
    if not ids and error.get("id") not in (None, ""):
        ids = [error["id"]]
    return [str(i) for i in ids]


def _error_message(error: dict) -> str:
    category = error.get("subCategory") or error.get("category") or "error"
    return f"{category}: {error.get('message') or 'no message'}"[:300]


def _is_primary(types: list[dict]) -> bool:
    return any((t.get("label") or "").lower() == "primary" for t in types)
