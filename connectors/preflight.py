"""The merge dry run's pre-flight (docs/output.md#applying-merges): from both records of
a merge read from the CRM now (connectors.merge_steps.dry_run with a client), what the
survivor would not keep, property by property.

HubSpot keeps the primary's value of each property where it has one, and takes the
merged record's where the primary's is blank; so the survivor loses the merged record's
value wherever both have one and they differ. Values HubSpot alone writes (ids, dates it
stamps) are left out: they say nothing about the record. What the snapshot is and how it
is read: connectors/hubspot/records.py."""

from __future__ import annotations

SHOWN = 120  # characters of a value shown


def survivor_loses(primary: dict, merged: dict) -> list[str]:
    """'name: "Acme Inc" (keeps "Acme")' for each value of `merged` the survivor drops."""
    read_only = set(merged.get("read_only") or ())
    kept, gone = primary.get("properties") or {}, merged.get("properties") or {}
    lines = []
    for name in sorted(gone):
        theirs, ours = gone[name], kept.get(name)
        if name in read_only or theirs in (None, "") or ours in (None, ""):
            continue
        if str(theirs) != str(ours):
            lines.append(f'{name}: "{_short(theirs)}" (keeps "{_short(ours)}")')
    return lines


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
