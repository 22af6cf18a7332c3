"""Realistic sample batches (docs/input.md) with a ground truth of what a review must find.

generate(records, seed) returns the batch and its truth:

    {"planted": [{"category", "kind", "severity", "record_ids"}],
     "decoys":  [{"what", "record_ids", "not_kinds"}]}

A planted item is found by a finding of the same kind whose record_ids contain all of
the planted ones. A decoy passes when no warning or critical finding of a kind in its
not_kinds names all of its records.

About 3% of the records belong to planted defects (every kind in docs/rules.md), about 0.5%
to decoys (every "must not flag" case); the rest is clean background. Tiny batches
still get one of every case, so they overshoot the requested size.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

from reviews.samplegen.cases import DEFECTS, plant_stale
from reviews.samplegen.decoys import DECOYS
from reviews.samplegen.records import Builder

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
SHARES = {"companies": 0.3, "contacts": 0.5}  # deals take the rest (~20%)
DEFECT_SHARE = 0.03
DECOY_SHARE = 0.005
LISTS = ("companies", "contacts", "deals")
# Below this many records the sample is written indented, for people to read.
READABLE_MAX_RECORDS = 2_000
_WRITE_CHUNK = 10_000


def targets(records: int) -> dict[str, int]:
    companies = round(records * SHARES["companies"])
    contacts = round(records * SHARES["contacts"])
    return {"companies": companies, "contacts": contacts, "deals": records - companies - contacts}


def generate(
    records: int, seed: int, as_of: datetime = AS_OF, *, stale_share: float = 0.0
) -> tuple[dict, dict]:
    """A batch of about `records` records and its ground truth; same seed, same output.
    `stale_share` (0 to 1) of the background companies get enrichment older than the
    stale threshold, as in a CRM nobody re-enriches: a findings-heavy batch."""
    if not 0 <= stale_share <= 1:
        raise ValueError(f"stale_share must be between 0 and 1, got {stale_share}")
    builder = Builder(random.Random(seed), as_of, records)
    _run_until(builder, DEFECTS, round(records * DEFECT_SHARE))
    _run_until(builder, DECOYS, round(records * DECOY_SHARE))
    _fill_background(builder, targets(records), stale_share)
    batch = {
        "id": f"generated-{records}-{seed}",
        "exportedAt": as_of.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": "hubspot",
        # CRM exports come ordered by record id, which scatters the planted cases.
        "companies": sorted(builder.companies, key=_id),
        "contacts": sorted(builder.contacts, key=_id),
        "deals": sorted(builder.deals, key=_id),
    }
    truth = {
        "batch_id": batch["id"],
        "seed": seed,
        "as_of": batch["exportedAt"],
        "counts": {name: len(batch[name]) for name in LISTS},
        "planted": builder.planted,
        "decoys": builder.decoys,
    }
    return batch, truth


def _id(record: dict) -> str:
    return record["id"]


def _run_until(builder: Builder, makers: tuple, budget: int) -> None:
    """Every maker once, then round after round until the cases hold `budget` records."""
    start = builder.record_count()
    first_round = True
    while first_round or builder.record_count() - start < budget:
        for make in makers:
            make(builder)
            if not first_round and builder.record_count() - start >= budget:
                return
        first_round = False


def _fill_background(builder: Builder, wanted: dict[str, int], stale_share: float = 0.0) -> None:
    """Clean records up to the wanted counts (but `stale_share` of the companies stale).
    Contacts and deals attach only to background companies, so no planted group gains
    a neighbour it did not plan."""
    start = len(builder.companies)
    stale: list[dict] = []
    for _ in range(wanted["companies"] - len(builder.companies)):
        company = builder.new_company(with_domain=not builder.chance(0.03))
        if stale_share and builder.chance(stale_share):
            stale.append(company)
    pool = builder.companies[start:]
    if not pool and (
        wanted["contacts"] > len(builder.contacts) or wanted["deals"] > len(builder.deals)
    ):
        pool = [builder.new_company()]
    for _ in range(wanted["contacts"] - len(builder.contacts)):
        builder.new_contact(builder.pick(pool))
    for _ in range(wanted["deals"] - len(builder.deals)):
        builder.new_deal(builder.pick(pool))
    plant_stale(builder, stale)


def truth_path(path: Path) -> Path:
    """samples/x.json -> samples/x.truth.json"""
    return path.with_name(path.name.removesuffix(".json") + ".truth.json")


def write_sample(
    path: Path | str, records: int, seed: int, *, stale_share: float = 0.0
) -> tuple[Path, Path]:
    """Write the batch to `path` and its truth beside it; return both paths."""
    path = Path(path)
    batch, truth = generate(records, seed, stale_share=stale_share)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        if records <= READABLE_MAX_RECORDS:
            json.dump(batch, out, ensure_ascii=False, indent=2)
            out.write("\n")
        else:
            write_compact(batch, out)
    with truth_path(path).open("w", encoding="utf-8") as out:
        json.dump(truth, out, ensure_ascii=False, indent=1)
        out.write("\n")
    return path, truth_path(path)


def write_compact(batch: dict, out) -> None:
    """Compact JSON, written a chunk of records at a time: json.dump would stream through
    the pure-Python encoder (slow), json.dumps of the whole batch would hold a second
    copy of it in memory; chunked json.dumps keeps the C encoder and little memory.
    Non-ASCII is escaped: these files are for machines, and escaping encodes faster."""
    compact = {"separators": (",", ":")}
    fields = [
        json.dumps(key) + ":" + json.dumps(value, **compact)
        for key, value in batch.items()
        if key not in LISTS
    ]
    out.write("{" + ",".join(fields))
    for position, key in enumerate(name for name in LISTS if name in batch):
        out.write(("," if fields or position else "") + json.dumps(key) + ":[")
        items = batch[key]
        for start in range(0, len(items), _WRITE_CHUNK):
            chunk = json.dumps(items[start : start + _WRITE_CHUNK], **compact)
            out.write(("," if start else "") + chunk[1:-1])
        out.write("]")
    out.write("}\n")
