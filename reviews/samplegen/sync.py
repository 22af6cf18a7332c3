"""The next sync of a generated batch, with its truth (docs/history.md): what a RevOps
team's CRM looks like a day later. Some planted problems are fixed (duplicates merged,
missing fields filled), a new round of problems appears, amounts move on open problems
and the export lists its records in another order.

The truth of a next sync adds, per planted item, `status` ("new" or "open"), and lists
the problems fixed since the previous sync under `resolved`. A finding matches a truth
item as in the first sync's truth: same kind, its record ids containing the item's.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

from reviews.samplegen import (
    AS_OF,
    DECOY_SHARE,
    DEFECT_SHARE,
    LISTS,
    _fill_background,
    _run_until,
    truth_path,
    write_compact,
)
from reviews.samplegen import targets as record_targets
from reviews.samplegen.cases import DEFECTS
from reviews.samplegen.decoys import DECOYS
from reviews.samplegen.records import Builder

SYNC_INTERVAL = timedelta(days=1)  # a nightly sync


def generate_syncs(
    records: int, seed: int, syncs: int = 2, as_of: datetime = AS_OF
) -> Iterator[tuple[dict, dict]]:
    """`syncs` consecutive syncs of one CRM, each (batch, truth); the first has the
    records and planted problems of samplegen.generate(records, seed)."""
    builder = Builder(random.Random(seed), as_of, records)
    _run_until(builder, DEFECTS, round(records * DEFECT_SHARE))
    _run_until(builder, DECOYS, round(records * DECOY_SHARE))
    _fill_background(builder, record_targets(records))
    name = f"generated-{records}-{seed}"
    for planted in builder.planted:
        planted["status"] = "new"
    yield _snapshot(builder, name, 1, as_of, resolved=[], order=None)
    shuffle = random.Random(f"{seed}-order")
    for number in range(2, syncs + 1):
        resolved = advance(builder)
        yield _snapshot(
            builder,
            name,
            number,
            as_of + SYNC_INTERVAL * (number - 1),
            resolved=resolved,
            order=shuffle,
        )


def advance(b: Builder) -> list[dict]:
    """Turn the builder's CRM into its next sync; returns the problems fixed."""
    fixable = [p for p in b.planted if p["kind"] in FIXES]
    fixed = fixable[::2]  # every other one of each run of fixable problems
    fixed_ids = {id(p) for p in fixed}
    records = {r["id"]: (name, r) for name in LISTS for r in getattr(b, name)}
    removed: set[str] = set()
    for problem in fixed:
        removed |= FIXES[problem["kind"]](b, [records[i][1] for i in problem["record_ids"]])
    for name in LISTS:
        setattr(b, name, [r for r in getattr(b, name) if r["id"] not in removed])
    still_open = [p for p in b.planted if id(p) not in fixed_ids]
    for problem in still_open:
        problem["status"] = "open"
        _move_amounts(b, [records[i][1] for i in problem["record_ids"] if i in records])
    start = len(still_open)
    b.planted = still_open
    for make in DEFECTS:  # a new round: one new problem of every kind
        make(b)
    for problem in b.planted[start:]:
        problem["status"] = "new"
    return [{k: p[k] for k in ("category", "kind", "severity", "record_ids")} for p in fixed]


def _move_amounts(b: Builder, records: list[dict]) -> None:
    """A rep updates the amounts: every deal of the problem moves by the same share, so
    a duplicate pair stays within 1% of each other."""
    percent = b.rng.choice((110, 125, 90))
    for record in records:
        amount = record.get("amount")
        if isinstance(amount, int) and amount > 0:
            record["amount"] = amount * percent // 100


# --- fixes: what the team did about a problem ------------------------------------------
# Each takes the problem's records (in the planted order) and returns the ids it removed.


def _merge(b: Builder, records: list[dict]) -> set[str]:
    """Merge duplicates into the first record: the others are deleted (nothing in a
    planted duplicate group is referenced from outside it)."""
    return {r["id"] for r in records[1:]}


def _fill(field: str, value: Callable[[Builder, dict], object]) -> Callable:
    def fix(b: Builder, records: list[dict]) -> set[str]:
        for record in records:
            record[field] = value(b, record)
        return set()

    return fix


FIXES: dict[str, Callable[[Builder, list[dict]], set[str]]] = {
    "company_same_domain": _merge,
    "contact_same_email": _merge,
    "deal_entered_twice": _merge,
    "won_without_close_date": _fill("closeDate", lambda b, r: b.day(-3)),
    "won_without_amount": _fill("amount", lambda b, r: 25_000),
    "negative_amount": _fill("amount", lambda b, r: abs(int(r["amount"]))),
    "open_past_close_date": _fill("closeDate", lambda b, r: b.day(45)),
    "unknown_stage": _fill("stage", lambda b, r: "qualifiedtobuy"),
    "stale_enrichment": _fill("enrichedAt", lambda b, r: b.day(-1)),
}


def _snapshot(
    b: Builder,
    name: str,
    number: int,
    as_of: datetime,
    *,
    resolved: list[dict],
    order: random.Random | None,
) -> tuple[dict, dict]:
    lists = {key: copy.deepcopy(getattr(b, key)) for key in LISTS}
    if order is None:  # the first sync is ordered by id, as generate() writes it
        for records in lists.values():
            records.sort(key=lambda r: r["id"])
    else:  # a later export lists the same records in another order
        for records in lists.values():
            order.shuffle(records)
    batch = {
        "id": name if number == 1 else f"{name}-sync{number}",
        "dataset": name,
        "exportedAt": as_of.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": "hubspot",
        **lists,
    }
    truth = {
        "batch_id": batch["id"],
        "dataset": name,
        "sync": number,
        "as_of": batch["exportedAt"],
        "counts": {key: len(lists[key]) for key in LISTS},
        "planted": copy.deepcopy(b.planted),
        "decoys": copy.deepcopy(b.decoys),
        "resolved": resolved,
    }
    return batch, truth


def write_syncs(path: Path | str, records: int, seed: int, syncs: int) -> list[tuple[Path, Path]]:
    """Write each sync beside `path` (x.json, x.sync2.json, ...) with its truth."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for number, (batch, truth) in enumerate(generate_syncs(records, seed, syncs), start=1):
        target = path if number == 1 else path.with_name(f"{path.stem}.sync{number}.json")
        with target.open("w", encoding="utf-8") as out:
            write_compact(batch, out)
        with truth_path(target).open("w", encoding="utf-8") as out:
            json.dump(truth, out, ensure_ascii=False, indent=1)
            out.write("\n")
        written.append((target, truth_path(target)))
    return written
