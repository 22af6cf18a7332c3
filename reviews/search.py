"""Search what a person types: a record id (`dl_201`), a company name, a batch id or a
file name. One search for the admin and the dashboard's runs list.

Each word must match (as in Django's admin); a word matches if any lookup below does.
To search one more field, add its lookup to RUN_LOOKUPS or FINDING_LOOKUPS."""

from __future__ import annotations

import json

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.text import smart_split, unescape_string_literal

from reviews.models import Finding, ReviewRun

RUN_LOOKUPS: tuple[str, ...] = (
    "batch__external_id__icontains",
    "batch__file_name__icontains",
    "batch__sha256__startswith",
    "batch__dataset__name__icontains",
)
FINDING_LOOKUPS: tuple[str, ...] = (
    "title__icontains",
    "kind__icontains",
    "run__batch__external_id__icontains",
    "run__batch__file_name__icontains",
    "run__batch__sha256__startswith",
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
    for word in words(text):
        match = _any_of(RUN_LOOKUPS, word)
        match |= Q(Exists(Finding.objects.filter(has_record_id(word), run=OuterRef("pk"))))
        if _is_row_id(word):
            match |= Q(batch_id=int(word))
        runs = runs.filter(match)
    return runs


def search_findings(findings: QuerySet[Finding], text: str) -> QuerySet[Finding]:
    for word in words(text):
        match = _any_of(FINDING_LOOKUPS, word) | has_record_id(word)
        if _is_row_id(word):
            match |= Q(run__batch_id=int(word))
        findings = findings.filter(match)
    return findings
