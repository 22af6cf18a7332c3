"""Search what a person types: a record id (`dl_201`), a company, person or deal name
(finding titles name their records), a batch id or a file name. One search for the
admin and the dashboard's runs list.

Each word must match (as in Django's admin); a word matches if any lookup below does.
To search one more field, add its lookup to RUN_LOOKUPS or FINDING_LOOKUPS."""

from __future__ import annotations

import json

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils.text import smart_split, unescape_string_literal

from reviews.engine.specialists import KINDS
from reviews.models import Finding, PolicyVersion, ReviewRun

RUN_LOOKUPS: tuple[str, ...] = (
    "batch__external_id__icontains",
    "batch__file_name__icontains",
    "batch__sha256__startswith",
    "batch__dataset__name__icontains",
)
# A finding's own fields. Each has an index on Postgres (finding_title_trgm, and
# finding_record_ids_gin for the ids), so their OR is answered from the indexes. A kind
# is matched among the known kinds first (kind_matches): no index holds kinds.
FINDING_LOOKUPS: tuple[str, ...] = ("title__icontains",)
# The finding's batch: matched among the (few) batches first, then by run id.
FINDING_BATCH_LOOKUPS: tuple[str, ...] = (
    "batch__external_id__icontains",
    "batch__file_name__icontains",
    "batch__sha256__startswith",
)
# Our batch numbers. Longer digit strings are not row ids: they would overflow the integer column.
_MAX_ID_DIGITS = 18


def words(text: str) -> list[str]:
    """'acme "Vertex Robotics"' -> ['acme', 'Vertex Robotics'], as the admin splits."""
    found = []
    for word in smart_split(text.replace("\x00", "")):
        if word[:1] in "\"'" and word[-1:] == word[:1] and len(word) > 1:
            word = unescape_string_literal(word)
        if word.strip():
            found.append(word)
    return found


def has_record_id(record_id: str) -> Q:
    """Findings naming this record id (exactly). On Postgres a jsonb containment that
    the GIN index on `record_ids` answers; SQLite has no containment, so it matches the
    id as a JSON string inside the stored text."""
    if connection.vendor == "postgresql":
        return Q(record_ids__contains=[record_id])
    return Q(record_ids__icontains=json.dumps(record_id))


def _any_of(lookups: tuple[str, ...], word: str) -> Q:
    match = Q()
    for lookup in lookups:
        match |= Q(**{lookup: word})
    return match


def _is_row_id(word: str) -> bool:
    return word.isascii() and word.isdigit() and len(word) <= _MAX_ID_DIGITS


def search_runs(runs: QuerySet[ReviewRun], text: str) -> QuerySet[ReviewRun]:
    """Runs by their batch, dataset, batch number, or a record id or a name in their
    findings (titles name companies, people and deals). The findings are matched once,
    not per run (an uncorrelated subquery the indexes answer); a cached or failback run
    has no findings of its own and is found through the run it reuses."""
    for word in words(text):
        match = _any_of(RUN_LOOKUPS, word)
        named = has_record_id(word)
        if not word.isdigit():  # a number is an id (a record's or a batch's), not a name
            named |= Q(title__icontains=word)
        in_findings = Finding.objects.filter(named).values("run_id")
        match |= Q(pk__in=in_findings) | Q(reused_run__in=in_findings)
        if _is_row_id(word):
            match |= Q(batch_id=int(word))
        runs = runs.filter(match)
    return runs


def kind_matches(word: str) -> Q | None:
    """Findings of the kinds whose name holds the word ("same_email"), or None: the
    declared kinds are searched, not the findings (no index holds kinds, and a record id
    such as co_77000 must stay an index look-up): the specialists' and the teams' own
    rules' (their ids, in the policy versions)."""
    kinds = [kind for kind in [*KINDS, *team_kinds()] if word.lower() in kind]
    return Q(kind__in=kinds) if kinds else None


def team_kinds() -> set[str]:
    """Every team rule id any dataset's policy has held (a few rows: policy versions)."""
    return {
        rule["id"]
        for policy in PolicyVersion.objects.values_list("policy", flat=True)
        for rule in (policy or {}).get("team_rules", ())
    }


def search_findings(findings: QuerySet[Finding], text: str) -> QuerySet[Finding]:
    """Findings by title (record names and ids), kind, record id, or their batch's id,
    file name, sha256 or number. The batch's matches become a list of run ids first, so
    every branch of the OR is on the finding's own indexed columns."""
    for word in words(text):
        match = _any_of(FINDING_LOOKUPS, word) | has_record_id(word)
        kinds = kind_matches(word)
        if kinds is not None:
            match |= kinds
        batches = _any_of(FINDING_BATCH_LOOKUPS, word)
        if _is_row_id(word):
            batches |= Q(batch_id=int(word))
        run_ids = list(ReviewRun.objects.filter(batches).values_list("pk", flat=True))
        if run_ids:
            match |= Q(run_id__in=run_ids)
        findings = findings.filter(match)
    return findings
