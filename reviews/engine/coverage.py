"""What an export left out that a rule reads (docs/rules.md#partial-exports): each
missing column, by the names an analyst knows it by, and the kinds it switched off; and
the kinds that could not run for a list the batch does not have (lists_not_run).

The kinds are the registry's (each Kind's `reads`, spec.switched_off); the column names
are the ingest's one table (ingest/columns.py). What is kept with a batch is plain JSON
(`missing_columns`), so the run's verdict, its page, its JSON and its webhook all read
the same list. Plain Python, no Django."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from reviews.engine.batch import Batch
from reviews.engine.coordinator import Review, not_greener_when_partial
from reviews.engine.history.policy import Policy, rules_for
from reviews.engine.ingest.columns import COLUMNS
from reviews.engine.ingest.hubspot_records import FILLS
from reviews.engine.ingest.salesforce.fields import columns_of as salesforce_columns_of
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, switched_off_kinds
from reviews.engine.specialists.spec import OBJECTS, needs_of
from reviews.engine.team_rules.run import absent_lists
from reviews.engine.vocabulary import SALESFORCE, crm_of

_INTERNAL = re.compile(r"^[a-z][a-z0-9_]*$")  # HubSpot's internal property names


def missing_columns(batch: Batch) -> list[dict]:
    """One entry per field the export lacks that switched a kind off, in list order:
    {"list", "field" (docs/input.md name), "columns" (the export headers, in English,
    any one of which fills it), "properties" (HubSpot's internal names), "switched_off"
    (the kinds, sorted)}. [] for a complete export."""
    by_field: dict[str, list[str]] = {}
    for kind, fields in switched_off_kinds(batch).items():
        for name in fields:
            by_field.setdefault(name, []).append(kind)
    entries = []
    for name in sorted(by_field, key=lambda n: (OBJECTS.index(n.partition(".")[0]), n)):
        listed, _, field = name.partition(".")
        if batch.crm == "salesforce":
            headers, properties = salesforce_columns_of(listed, field)
        else:
            headers, properties = columns_of(listed, field)
        entries.append(
            {
                "list": listed,
                "field": field,
                "columns": headers,
                "properties": properties,
                "switched_off": sorted(by_field[name]),
            }
        )
    return entries


def lists_not_run(partial: Iterable[str], source: str | None) -> list[dict[str, str]]:
    """The registry's kinds that could not run for a list the batch does not have, by
    kind: [{"kind", "list", "why"}]. A kind could not run when one of its needs has
    every field in such a list (the lead rules in a Salesforce export without Lead.csv,
    and in every HubSpot batch: HubSpot has no leads): it looked at nothing, so it is
    not "ran, nothing found". The lists are team rules' (team_rules.run.absent_lists).
    The verdict does not count them (docs/output.md#partial-runs: a list left out is a
    choice, not a broken export)."""
    absent = absent_lists(partial, source)
    entries = []
    for name in sorted(KINDS):
        for need in KINDS[name].reads:
            lists = [f.partition(".")[0] for f in needs_of(need)]
            if all(listed in absent for listed in lists):
                entries.append({"kind": name, "list": lists[0], "why": _why(lists[0], source)})
                break
    return entries


def _why(listed: str, source: str | None) -> str:
    if listed == "leads" and crm_of(source) != SALESFORCE:
        return "only Salesforce has leads"
    return f"the export has no {listed}"


def columns_of(listed: str, field: str) -> tuple[list[str], list[str]]:
    """(the English export headers, HubSpot's internal names) of the columns that fill
    `field` of `listed`: its own column first, then those filling it too (FILLS). Other
    languages' labels are left out: each column's first label is HubSpot's English one."""
    if listed not in COLUMNS:  # leads: only Salesforce has them
        return salesforce_columns_of(listed, field)
    table = COLUMNS[listed]
    keys = [field] if field in table else []
    keys += [key for key, fills in FILLS.items() if field in fills and key in table]
    headers = [table[key][0] for key in keys]
    internal = [label for key in keys for label in table[key] if _INTERNAL.match(label)]
    return list(dict.fromkeys(headers)), list(dict.fromkeys(internal))


def switched_off_of(missing: Iterable[Mapping]) -> list[str]:
    """The kinds a batch's stored `missing_columns` switched off, sorted."""
    return sorted({kind for entry in missing for kind in entry.get("switched_off", ())})


def column_words(entry: Mapping) -> str:
    """'"Deal Stage"', or for a field several columns fill, '"Associated Company IDs
    (Primary)", "Associated Company IDs" or "Associated Company"'."""
    names = [f'"{n}"' for n in entry.get("columns") or entry.get("properties") or [entry["field"]]]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" or {names[-1]}"


def kind_words(name: str, rules: Rules | None = None) -> str:
    """A kind as its run-page heading says it: 'deals: won without an amount'."""
    kind = KINDS.get(name)
    if kind is None:
        return name
    _, many, what = kind.label
    return f"{many}: {what.format(**(rules or Rules()).as_dict())}"


def described(missing: list[Mapping], rules: Rules | None = None) -> dict:
    """A stored `missing_columns` for a page: {"columns": ['"Deal Stage" (deals)', ...],
    "checks": ['deals: won without an amount', ...]} (each check once)."""
    return {
        "columns": [f"{column_words(entry)} ({entry['list']})" for entry in missing],
        "checks": [kind_words(name, rules) for name in switched_off_of(missing)],
    }


def partial_sentence(missing: list[Mapping], rules: Rules | None = None) -> str:
    """The summary's sentence on a partial export, '' for a complete one."""
    if not missing:
        return ""
    columns = "; ".join(f"{column_words(entry)} ({entry['list']})" for entry in missing)
    kinds = switched_off_of(missing)
    listed = ", ".join(kind_words(name, rules) for name in kinds)
    checks = "1 check" if len(kinds) == 1 else f"{len(kinds):,} checks"
    them = "it" if len(missing) == 1 else "them"
    return (
        f"Partial: the export has no column for {columns}, so {checks} that need {them} "
        f"were switched off ({listed}). What they would find is unknown, not passed: "
        "the verdict is no more lenient than they could have made it."
    )


def partial_review(review: Review, missing: list[Mapping], policy: Policy, base: Rules) -> None:
    """A partial export's verdict and summary (docs/output.md#partial-runs), in place:
    the kinds its missing columns switched off count as unknown, at the severities the
    run's policy gives them (a kind the policy turns off counts for nothing), and the
    summary says which columns and checks."""
    unknown = {
        severity
        for name in switched_off_of(missing)
        if name in KINDS
        for severity in policy.severities_of(KINDS[name])
    }
    review.decision = not_greener_when_partial(review.decision, unknown)
    sentence = partial_sentence(missing, rules_for(base, policy))
    review.summary = f"{review.summary} {sentence}".strip()
