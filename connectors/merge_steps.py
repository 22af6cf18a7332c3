"""A run's merge plan as CRM merges (docs/output.md#applying-merges): one step per
record merged into its survivor, what the dataset's AppliedMerge rows already record of
each (merged, on its way, unanswered, refused), the id a record has now after them, and
the dry run that shows all this before anything is sent (connectors/merges.py sends)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from connectors import preflight
from connectors.base import ConnectorError
from connectors.write_access import MergeNotAllowed, applies_merges, staff_dataset
from reviews.engine.fixes.fixplan import Merge
from reviews.models import AppliedMerge, ReviewRun
from reviews.orchestration.fixes.fixplan import plan_for_run

Status = AppliedMerge.Status


@dataclass(frozen=True, slots=True)
class Step:
    """One HubSpot merge: what the dry run shows and what applying it did."""

    object_type: str
    primary_id: str
    merged_id: str
    fingerprint: str
    reason: str
    outcome: str  # dry run: "would merge" or the row's status; applied: the new status
    detail: str = ""
    effects: str = ""  # what the merge moves to the survivor and what it loses (the plan)
    survivor_id: str = ""  # the record HubSpot answered with ("" before an answer)
    # The pre-flight (dry run with a client): what the survivor would not keep, read from
    # the CRM now, one line per property; `read_error` when they could not be read.
    loses: tuple[str, ...] = ()
    read_error: str = ""


def effects_of(merge: Merge, merged_id: str) -> str:
    """'moves contacts ct_2; loses name "Acme Inc" (keeps "Acme")' for one merged record."""
    parts = []
    for move in merge.moves:
        if move["from"] == merged_id:
            moved = ", ".join(f"{k} {' '.join(v)}" for k, v in move.items() if k != "from")
            parts.append(f"moves {moved}")
    for loss in merge.loses:
        if loss["record_id"] == merged_id:
            parts.append(f'loses {loss["property"]} "{loss["value"]}" (keeps "{loss["kept"]}")')
    if merge.check:
        parts.insert(0, merge.check)
    return "; ".join(parts) or "nothing moves or is lost"


def steps_of(merges: Iterable[Merge]) -> list[tuple[Merge, str]]:
    """Each merge of the plan as HubSpot merges: one per record merged into the survivor."""
    return [(merge, merged_id) for merge in merges for merged_id in merge.merge]


def dry_run(
    run: ReviewRun, fingerprints: Iterable[str] | None = None, *, user, client=None
) -> list[Step]:
    """What apply_merges would send, with what is already recorded; writes nothing. With
    a `client`, the pre-flight: both records of each merge still to send are read from
    the CRM now, and `loses` lists, property by property, the values the survivor would
    not keep (its own win where it has one; see preflight.py)."""
    dataset = staff_dataset(run, user)
    if client is not None:
        applies_merges(client)
    recorded = recorded_merges(dataset)
    refused = refused_merges(dataset)
    steps = []
    for merge, merged_id in steps_of(selected(run, fingerprints)):
        key = (merge.object, merged_id)
        outcome = recorded.get(key) or ("refused" if key in refused else "would merge")
        step = Step(
            merge.object,
            current_id(dataset, merge.object, merge.primary),
            merged_id,
            merge.fingerprint,
            merge.reason,
            outcome,
            detail=refusal(refused[key]) if outcome == "refused" else "",
            effects=effects_of(merge, merged_id),
        )
        if client is not None and outcome in ("would merge", "refused"):
            step = _preflight(step, client)
        steps.append(step)
    return steps


def _preflight(step: Step, client) -> Step:
    """The step with what the survivor would lose, read now; or why it could not be."""
    try:
        taken = client.snapshot(step.object_type, [step.primary_id, step.merged_id])
    except ConnectorError as error:
        return replace(step, read_error=f"could not read both records now: {error}")
    loses = preflight.survivor_loses(taken[step.primary_id], taken[step.merged_id])
    return replace(step, loses=tuple(loses))


def refused_merges(dataset) -> dict[tuple[str, str], str]:
    """The latest refusal of each record whose merge was refused and not asked since."""
    rows = (
        AppliedMerge.objects.filter(dataset=dataset, status=Status.FAILED)
        .order_by("requested_at", "id")
        .values_list("object_type", "merged_id", "error")
    )
    return {(kind, merged): error for kind, merged, error in rows}


def refusal(error: str) -> str:
    return f"refused before: {error or 'no message'} (sent again only when named)"


def current_id(dataset, object_type: str, record_id: str) -> str:
    """The id a record has now, after the merges recorded for the dataset: a record
    merged away, or a deal that a merge replaced with a new one, is its survivor's; one
    made again by an undo (connectors/undo.py) is the new record's."""
    now: dict[str, str] = {}
    rows = AppliedMerge.objects.filter(
        dataset=dataset, object_type=object_type, status=Status.MERGED
    ).exclude(survivor_id="")
    for primary, merged, survivor, restored in rows.values_list(
        "primary_id", "merged_id", "survivor_id", "restored_id"
    ):
        # An undone merge's record was made again: its old id names the new record.
        now[merged] = restored or survivor
        if primary != survivor:
            now[primary] = survivor
    seen = set()
    while record_id in now and record_id not in seen:  # a chain of merges, never a loop
        seen.add(record_id)
        record_id = now[record_id]
    return record_id


def selected(run: ReviewRun, fingerprints: Iterable[str] | None) -> list[Merge]:
    merges = plan_for_run(run).merges
    if fingerprints is None:
        return merges
    wanted = set(fingerprints)
    unknown = wanted - {m.fingerprint for m in merges}
    if unknown:
        raise MergeNotAllowed(f"not merges of run {run.pk}'s plan: {', '.join(sorted(unknown))}")
    return [m for m in merges if m.fingerprint in wanted]


def recorded_merges(dataset) -> dict[tuple[str, str], str]:
    rows = AppliedMerge.objects.filter(dataset=dataset).exclude(status=Status.FAILED)
    return {(r.object_type, r.merged_id): r.status for r in rows}
