"""A dataset's own rules (docs/rules.md#a-teams-own-rules): kept in its versioned policy
(each change a new version, with who, when and why), and previewed before they are
saved, on the last sync and replayed over the stored ones. The one code path for the
CLI (`manage.py rules`), the API and the dataset page's rule editor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from reviews.engine.batch import Batch as Records
from reviews.engine.history.policy import PolicyError
from reviews.engine.tables.build import Tables, build_tables
from reviews.engine.team_rules import run as team_run
from reviews.engine.team_rules.rulefile import RuleFileError, TeamRule
from reviews.models import Batch, Dataset, PolicyVersion, ReviewRun, findings_of
from reviews.orchestration.dataset import policies
from reviews.orchestration.store.tables import tables_for


def rules_of(dataset: Dataset) -> list[TeamRule]:
    """The dataset's team rules, in their order, as its newest policy version holds them."""
    return list(policies.current(dataset)[1].team_rules)


ADDED, CHANGED, UNCHANGED = "added", "changed", "unchanged"


@dataclass(frozen=True, slots=True)
class Added:
    """What adding rules did: the new policy version (None when nothing changed) and
    each rule's change, by id, in the file's order (ADDED, CHANGED or UNCHANGED)."""

    version: PolicyVersion | None
    changes: dict[str, str]

    def words(self) -> str:
        """'policy version 3: added a, b; changed c; unchanged d', or 'nothing changed'."""
        said = [
            f"{change} {', '.join(i for i, c in self.changes.items() if c == change)}"
            for change in (ADDED, CHANGED, UNCHANGED)
            if change in self.changes.values()
        ]
        if self.version is None:
            return f"nothing changed: {'; '.join(said)}"
        return f"policy version {self.version.number}: {'; '.join(said)}"


def add(dataset: Dataset, rules: list[TeamRule], *, reason: str, user=None) -> Added:
    """A new policy version with `rules` added (a rule with an id already there replaces
    it, in its place); none when every rule is there already as it is."""
    if not rules:
        raise PolicyError("the file holds no rules")
    check(dataset, rules)
    _, policy = policies.current(dataset)
    by_id = {rule.id: rule for rule in policy.team_rules}
    changes = {
        rule.id: ADDED if rule.id not in by_id else UNCHANGED if by_id[rule.id] == rule else CHANGED
        for rule in rules
    }
    if set(changes.values()) == {UNCHANGED}:
        return Added(None, changes)
    by_id.update({rule.id: rule for rule in rules})
    version = policies.save(
        dataset, policy.with_team_rules(by_id.values()), reason=reason, user=user
    )
    return Added(version, changes)


def check(dataset: Dataset, rules: list[TeamRule]) -> None:
    """RuleFileError listing the rules' own errors (a type, a pattern: team_run.rule_errors)
    on the tables of the dataset's last sync, or on empty tables of the documented
    columns when it has none: a rule that would fail on every sync is refused now."""
    batch = _last_sync(dataset)
    _check_on(batch, tables_for(batch) if batch else None, rules)


def _check_on(batch: Batch | None, tables: Tables | None, rules: list[TeamRule]) -> None:
    """check, on `batch`'s `tables` (or empty ones when there is no batch)."""
    if batch is None or tables is None:
        empty = Records(None, timezone.now(), None, [], [], [], {})
        tables, as_of, absent = build_tables(empty), empty.as_of, team_run.absent_lists([], None)
    else:
        as_of = batch.as_of or batch.created_at
        absent = team_run.absent_lists(batch.partial, batch.source)
    problems = team_run.rule_errors(
        tables, rules, as_of.date(), memory_mb=settings.TEAM_RULE_MEMORY_MB, absent=absent
    )
    if problems:
        raise RuleFileError(problems)


def _last_sync(dataset: Dataset) -> Batch | None:
    return (
        Batch.objects.filter(dataset=dataset, status=Batch.Status.ACCEPTED)
        .order_by("-as_of", "-pk")
        .first()
    )


def remove(dataset: Dataset, rule_id: str, *, reason: str, user=None) -> PolicyVersion:
    """A new policy version without rule `rule_id` (PolicyError if it has none)."""
    _, policy = policies.current(dataset)
    kept = [rule for rule in policy.team_rules if rule.id != rule_id]
    if len(kept) == len(policy.team_rules):
        known = ", ".join(rule.id for rule in policy.team_rules) or "none"
        raise PolicyError(
            f"dataset {dataset.name} has no team rule {rule_id!r} (its rules: {known})"
        )
    return policies.save(dataset, policy.with_team_rules(kept), reason=reason, user=user)


def history(dataset: Dataset, rule_id: str | None = None) -> list[dict[str, Any]]:
    """The policy versions that changed a team rule (`rule_id`'s only, when given),
    newest first, each with its who, when, why and what changed."""
    rows = []
    for version in policies.history(dataset):
        changes = [
            row
            for row in version["diff"]
            if row["what"].startswith("team rule ")
            and (rule_id is None or row["what"] == f"team rule {rule_id}")
        ]
        if changes:
            rows.append(
                {**{k: version[k] for k in ("number", "reason", "by", "at")}, "diff": changes}
            )
    return rows


# --- preview ---------------------------------------------------------------------------


def preview(dataset: Dataset, rules: list[TeamRule], *, replay: bool = True) -> dict[str, Any]:
    """Each rule run on the dataset's last sync and replayed over its stored syncs,
    nothing saved: {"sync", "rules": [{"id", "status", "count", "record_ids", "records"
    (up to 20, with names), "already_flagged", "why", "replay": [{"sync", "as_of",
    "status", "count"}]}]}. Without `replay` (the editor's preview as a person types),
    the last sync alone."""
    batches = list(
        Batch.objects.filter(dataset=dataset, status=Batch.Status.ACCEPTED).order_by(
            "-as_of", "-pk"
        )[: settings.TUNE_REPLAY_SYNCS if replay else 1]
    )
    if not batches:
        raise PolicyError(f"dataset {dataset.name} has no sync to preview the rules on")
    last, replayed = batches[0], batches[::-1]
    last_tables = tables_for(last)  # read once, checked then run (a keystroke's preview)
    _check_on(last, last_tables, rules)
    outcomes = {
        batch.pk: _outcomes(batch, rules, last_tables if batch is last else tables_for(batch))
        for batch in replayed
    }
    flagged = _flagged_by_built_in(last)
    out = []
    for index in range(len(rules)):
        outcome = outcomes[last.pk][index]
        ids = [match.id for match in outcome.matches]
        out.append(
            {
                **outcome.as_dict(),
                "record_ids": ids[: team_run.SAMPLE],
                "records": [
                    {"id": m.id, "name": m.name} for m in outcome.matches[: team_run.SAMPLE]
                ],
                "already_flagged": sum(1 for i in ids if i in flagged)
                if outcome.status == team_run.RAN
                else None,
                "replay": [
                    {
                        "sync": batch.pk,
                        "as_of": batch.as_of.isoformat() if batch.as_of else None,
                        "status": outcomes[batch.pk][index].status,
                        "count": outcomes[batch.pk][index].as_dict()["count"],
                    }
                    for batch in replayed
                ],
            }
        )
    return {"sync": last.pk, "rules": out}


def _outcomes(batch: Batch, rules: list[TeamRule], tables: Tables) -> list[team_run.Outcome]:
    as_of = batch.as_of or batch.created_at
    return team_run.run_rules(
        tables,
        rules,
        as_of.date(),
        seconds=settings.TEAM_RULE_SECONDS,
        memory_mb=settings.TEAM_RULE_MEMORY_MB,
        absent=team_run.absent_lists(batch.partial, batch.source),
    )


def _flagged_by_built_in(batch: Batch) -> set[str]:
    """The record ids the batch's last finished run flagged with a built-in kind."""
    run = (
        ReviewRun.objects.filter(batch=batch, status=ReviewRun.Status.DONE)
        .order_by("-finished_at", "-pk")
        .first()
    )
    if run is None:
        return set()
    ids: set[str] = set()
    rows = (
        findings_of(run)
        .exclude(category=team_run.CATEGORY)
        .values_list("record_ids", flat=True)
        .iterator(chunk_size=5000)
    )
    for record_ids in rows:
        ids.update(record_ids)
    return ids
