"""What a sync's arrival in its dataset calls for saying (docs/history.md, Late uploads
and unfamiliar records), kept on the batch as warnings beside the review, never instead
of it:

- uploaded_late: an export older (by as-of) than syncs already uploaded is placed by its
  as-of, as every sync is, so those after it move up one number; it says so, and which.
- unfamiliar_records: none of the records sampled from the sync it is compared with is
  in it: likely another CRM's export, the wrong dataset or a part of an export, and then
  everything reads as new and everything before as resolved.

The second needs the earlier sync's record ids without reading its file again: each
sync keeps a small fair sample of them (record_sample), which later syncs look for."""

from __future__ import annotations

import heapq
import zlib
from datetime import UTC, datetime

from reviews.engine import batch as plain
from reviews.models import Batch, ReviewRun

UPLOADED_LATE = "uploaded_late"
UNFAMILIAR_RECORDS = "unfamiliar_records"
LISTS = ("companies", "contacts", "deals")
# Ids kept per list: an upload that shares a twentieth of them misses all 128 once in
# 700 times; one that shares none is what the warning is for.
SAMPLE_PER_LIST = 128
_SAMPLED_ID_CHARS = 64  # a longer id is no CRM's record id: not worth keeping


def note_arrival(batch: Batch, parsed: plain.Batch, baseline: ReviewRun | None) -> None:
    """Keep a dataset sync's record sample and its warnings (a batch without a dataset
    has neither: it is compared with nothing)."""
    if batch.dataset_id is None:
        return
    batch.record_sample = record_sample(parsed)
    found = (late_warning(batch, baseline), unfamiliar_records_warning(parsed, baseline))
    arrival = {"uploaded_late", "unfamiliar_records"}  # the reader's warnings are kept
    kept = [warning for warning in batch.warnings if warning.get("code") not in arrival]
    batch.warnings = kept + [warning for warning in found if warning]
    batch.save(update_fields=["record_sample", "warnings"])


def record_sample(parsed: plain.Batch) -> dict[str, list[str]]:
    """Up to SAMPLE_PER_LIST ids of each list: those whose crc32 is smallest, so the
    same ids whatever the order of the file, and from all over it, not its first rows."""
    return {
        name: heapq.nsmallest(
            SAMPLE_PER_LIST,
            (r.id for r in getattr(parsed, name) if len(r.id) <= _SAMPLED_ID_CHARS),
            key=_crc,
        )
        for name in LISTS
    }


def _crc(record_id: str) -> int:
    return zlib.crc32(record_id.encode("utf-8", "surrogatepass"))


def late_warning(batch: Batch, baseline: ReviewRun | None) -> dict | None:
    """uploaded_late, when syncs of the dataset uploaded before this one have a later
    as-of; numbered as the dataset page numbers syncs (by as-of, then upload)."""
    before_it = Batch.objects.filter(
        dataset_id=batch.dataset_id,
        status=Batch.Status.ACCEPTED,
        created_at__lt=batch.created_at,
    ).exclude(pk=batch.pk)
    later = before_it.filter(as_of__gt=batch.as_of)
    moved = later.count()
    if not moved:
        return None
    latest = later.order_by("-as_of").values_list("as_of", flat=True).first()
    number = before_it.filter(as_of__lte=batch.as_of).count() + 1
    if moved == 1:
        renumbered = f"#{number} is now #{number + 1}); its review does not change."
    else:
        last = number + moved - 1
        renumbered = (
            f"#{number} to #{last} are now #{number + 1} to #{last + 1}); their reviews do "
            "not change."
        )
    compared = (
        f"It is compared with the sync before it by as-of (run #{baseline.pk})."
        if baseline is not None
        else "No earlier sync was reviewed, so everything in it is new."
    )
    message = (
        f"Uploaded late: its as-of, {_when(batch.as_of)}, is older than that of {moved} "
        f"sync{'s' if moved > 1 else ''} of this dataset uploaded before it (the latest as "
        f"of {_when(latest)}). Placed by its as-of, it is sync #{number}, and the {moved} "
        f"after it moved up one number ({renumbered} {compared}"
    )
    return {"code": UPLOADED_LATE, "message": message}


def unfamiliar_records_warning(parsed: plain.Batch, baseline: ReviewRun | None) -> dict | None:
    """unfamiliar_records, when none of the ids sampled from the baseline's sync is in
    this upload: then it shares none of its records (when the sample is all of them) or
    few (an upload sharing a twentieth is caught once in 700). Only lists both hold are
    compared (a deals-only export shares no company with anything); a sync made before
    samples were kept is not judged."""
    if baseline is None:
        return None
    earlier = baseline.batch
    sample = earlier.record_sample or {}
    compared = [name for name in LISTS if sample.get(name) and getattr(parsed, name)]
    if not compared:
        return None
    for name in compared:
        wanted = set(sample[name])
        if any(record.id in wanted for record in getattr(parsed, name)):
            return None
    checked = sum(len(sample[name]) for name in compared)
    total = sum(earlier.counts[name] for name in compared)
    kinds = " and ".join(_SINGULAR[name] for name in compared)
    sync = f"the sync it is compared with (run #{baseline.pk}, as of {_when(baseline.as_of)})"
    if checked == total:  # every id of those lists was in the sample
        found = f"No records in common with {sync}: none of its {checked:,} {kinds} ids"
    else:
        found = (
            f"Few records in common with {sync}, or none: none of {checked:,} {kinds} ids "
            f"sampled from its {total:,}"
        )
    message = (
        f"{found} is in this upload. Is this the right dataset, and a whole export? Against "
        "that sync, every problem here is new and every one of its problems reads as resolved."
    )
    return {"code": UNFAMILIAR_RECORDS, "message": message}


_SINGULAR = {"companies": "company", "contacts": "contact", "deals": "deal"}


def _when(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
