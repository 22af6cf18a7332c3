"""One pull of a portal, step by step, resumable from its checkpoint. No Django.

A pull is a list of steps. Each answer HubSpot gives is handed to `checkpoint.record`
with the progress after it (the step and its cursor), so a pull that stops (a crash, a
deploy, a revoked token) starts again from its last answer, not from the beginning:
`run_pull` replays what the checkpoint holds, then carries on.

A full pull lists every company, contact and deal (`GET /crm/v3/objects/{type}`, 100 a
page with `after`). An incremental one searches what was modified since the last pull
(less an overlap, windowed past the 10,000-result cap), lists the archived records, and
rebuilds the whole snapshot from the last one. Both read the deal pipelines and the
associations of the contacts and deals they got (v4 batch read, 1,000 ids a request,
every page of each record: connectors/hubspot/associations.py). The associations read
decide a record's company, over an `associatedcompanyid` the snapshot kept from before
(snapshot.set_associations).

Which properties the portal returned for each object type (HubSpot answers every
property asked for, null when blank, and leaves out one it does not have) is kept
beside the answers ("props:<type>" chunks, only when a page adds a name): the snapshot
keeps non-blank values only, so the review learns from these which fields the pull
lacks (reviews/engine/ingest/api_json.py, a document's "properties")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from connectors.base import Checkpoint
from connectors.hubspot import associations
from connectors.hubspot import snapshot as snap
from connectors.hubspot.associations import BATCH_READ
from connectors.hubspot.client import HubSpotClient


@dataclass(slots=True)
class PullResult:
    snapshot: snap.Snapshot
    pipelines: dict  # GET /crm/v3/pipelines/deals, as answered
    changed: int  # objects fetched (all of them in a full pull)
    removed: int  # archived or merged away since the last snapshot
    steps: list[str] = field(default_factory=list)
    # type -> the property names the portal returned for it in this pull, sorted; a
    # type this pull fetched nothing of is left out (its properties are not known).
    returned: dict[str, list[str]] = field(default_factory=dict)


def steps(full: bool) -> list[str]:
    fetch = [f"list:{t}" for t in snap.TYPES] if full else [f"search:{t}" for t in snap.TYPES]
    archived = [] if full else [f"archived:{t}" for t in snap.TYPES]
    links = [f"assoc:{a}:{b}" for a, b in snap.ASSOCIATIONS]
    return ["pipelines", *fetch, *archived, *links]


def run_pull(
    client: HubSpotClient,
    checkpoint: Checkpoint,
    *,
    previous: snap.Snapshot | None,
    since_ms: int,
    progress_note: Callable[[str], None] | None = None,
) -> PullResult:
    """Pull full (no `previous`) or incremental (objects modified at or after
    `since_ms`, the overlap already taken off), from where the checkpoint stands."""
    full = previous is None
    state = _State()
    for step, data in checkpoint.chunks():
        state.take(step, data)
    progress = checkpoint.progress()
    done = set(progress.get("done", []))
    for step in steps(full):
        if step in done:
            continue
        if progress_note:
            progress_note(step)
        cursor = progress.get("cursor", {}) if progress.get("step") == step else {}

        def keep(data: object, cursor: dict, *, step: str = step, returned=()) -> None:
            after = {"done": sorted(done), "step": step, "cursor": cursor}
            object_type = step.partition(":")[2]
            new = sorted(set(returned) - state.returned.get(object_type, set()))
            if new:  # recorded with the page's own progress: both are kept, or neither
                state.take(f"props:{object_type}", new)
                checkpoint.record(f"props:{object_type}", new, after)
            state.take(step, data)
            checkpoint.record(step, data, after)

        _run_step(client, step, cursor, keep, state, since_ms, previous)
        done.add(step)
        checkpoint.record(step, None, {"done": sorted(done), "step": "", "cursor": {}})
    return state.result(previous)


def _run_step(
    client, step: str, cursor: dict, keep, state: _State, since_ms: int, previous
) -> None:
    kind, _, rest = step.partition(":")
    if kind == "pipelines":
        keep(client.deal_pipelines(), {})
    elif kind in ("list", "archived"):
        props = snap.properties(rest) if kind == "list" else ["hs_object_id"]
        pages = client.list_pages(
            rest, props, archived=kind == "archived", after=cursor.get("after", "")
        )
        for objects, after in pages:
            data = (
                [snap.slim(o) for o in objects]
                if kind == "list"
                else [str(o["id"]) for o in objects]
            )
            keep(data, {"after": after}, returned=snap.returned(objects) if kind == "list" else ())
    elif kind == "search":
        since = cursor.get("window", since_ms)
        pages = client.search_modified(
            rest,
            snap.MODIFIED[rest],
            since,
            snap.properties(rest),
            after=cursor.get("after", ""),
            seen=cursor.get("seen", 0),
        )
        for objects, window, after, seen in pages:
            data = [[snap.slim(o), snap.merged_ids(o)] for o in objects]
            progress = {"window": window, "after": after, "seen": seen}
            keep(data, progress, returned=snap.returned(objects))
    elif kind == "assoc":
        from_type, to_type = rest.split(":")
        ids = state.ids(from_type, previous)
        start = cursor.get("offset", 0)
        for offset in range(start, len(ids), BATCH_READ):
            found = associations.read(client, from_type, to_type, ids[offset : offset + BATCH_READ])
            keep(found, {"offset": offset + BATCH_READ})


class _State:
    """What the pull has got so far, from the checkpoint's chunks and new answers."""

    def __init__(self) -> None:
        self.pipelines: dict = {}
        self.fetched: snap.Snapshot = {t: {} for t in snap.TYPES}
        self.archived: dict[str, set[str]] = {t: set() for t in snap.TYPES}
        self.merged: dict[str, set[str]] = {t: set() for t in snap.TYPES}
        self.links: dict[tuple[str, str], dict[str, list]] = {}
        self.returned: dict[str, set[str]] = {}

    def take(self, step: str, data: object) -> None:
        if data is None:
            return
        kind, _, rest = step.partition(":")
        if kind == "pipelines":
            self.pipelines = data
        elif kind == "list":
            self.fetched[rest].update((o["id"], o) for o in data)
        elif kind == "search":
            for obj, merged in data:
                self.fetched[rest][obj["id"]] = obj
                self.merged[rest].update(merged)
        elif kind == "archived":
            self.archived[rest].update(data)
        elif kind == "assoc":
            pair = tuple(rest.split(":"))
            self.links.setdefault(pair, {}).update(data)
        elif kind == "props":
            self.returned.setdefault(rest, set()).update(data)

    def ids(self, object_type: str, previous: snap.Snapshot | None) -> list[str]:
        """Whose associations to read: what was fetched, and the unchanged records of the
        last snapshot associated with a record now merged away or archived (HubSpot
        moves a merged record's associations to the survivor without modifying them)."""
        wanted = set(self.fetched[object_type])
        gone = {t: self.archived[t] | self.merged[t] for t in snap.TYPES}
        if previous and any(gone.values()):
            for rid, obj in previous.get(object_type, {}).items():
                if rid in gone[object_type]:
                    continue  # itself merged away or archived: it leaves the snapshot
                links = obj.get("associations") or {}
                if any(
                    a["id"] in gone.get(to_type, ())
                    for to_type, v in links.items()
                    for a in v["results"]
                ):
                    wanted.add(rid)
        return sorted(wanted, key=snap._id_key)

    def result(self, previous: snap.Snapshot | None) -> PullResult:
        out: snap.Snapshot = {t: dict((previous or {}).get(t, {})) for t in snap.TYPES}
        relinked: dict[str, set[str]] = {t: set() for t in snap.TYPES}
        for (from_type, _), found in self.links.items():
            relinked[from_type].update(found)
        for t in snap.TYPES:  # unchanged records whose associations were read again
            gone = self.archived[t] | self.merged[t]  # (read before they went: not kept)
            for rid in relinked[t] - set(self.fetched[t]) - gone:
                if rid in out[t]:
                    self.fetched[t][rid] = _copy(out[t][rid])
        for (from_type, to_type), found in self.links.items():
            for rid, obj in self.fetched[from_type].items():
                snap.set_associations(obj, to_type, found.get(rid, []), from_type)
        changed = removed = 0
        for t in snap.TYPES:
            out[t].update(self.fetched[t])
            changed += len(self.fetched[t])
            gone = (self.archived[t] | self.merged[t]) - set(self.fetched[t])
            for rid in gone:
                if out[t].pop(rid, None) is not None:
                    removed += 1
        returned = {t: sorted(names) for t, names in self.returned.items()}
        return PullResult(out, self.pipelines, changed, removed, returned=returned)


def _copy(obj: dict) -> dict:
    """A record of the last snapshot, to be given new associations: its own properties and
    associations (set_associations changes both), not the last snapshot's."""
    return {
        **obj,
        "properties": dict(obj.get("properties") or {}),
        "associations": dict(obj.get("associations") or {}),
    }
