"""Running a team's rules over a batch's tables: one query per rule, its SQL generated
from the checked tree, on a connection locked first (no file or network access, the
configuration fixed, a memory ceiling) and each under a deadline. Python touches only the
rows that match.

A rule that cannot run on this batch (a property the export lacks, a value its types
cannot compare, the deadline) is reported as such in its outcome, never as a crash and
never as "nothing found"."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.findings import RawFinding
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.tables.build import Tables, json_names, quote
from reviews.engine.tables.sandbox import RuleTimeout, deadline, lock
from reviews.engine.team_rules import language
from reviews.engine.team_rules.rulefile import ONE, TeamRule
from reviews.engine.vocabulary import SALESFORCE, crm_of

CATEGORY = "team_rules"  # the findings' category: the team's, beside the specialists'
RAN = "ran"
COULD_NOT_RUN = "could_not_run"
SAMPLE = 20  # record ids a preview shows per rule
# The sandbox's limits where no setting gives them (tuning's replay, the bench): the
# defaults of settings.TEAM_RULE_SECONDS and TEAM_RULE_MEMORY_MB.
SECONDS = 20
MEMORY_MB = 1024
THREADS = 2  # DuckDB's threads for the rules' queries (a worker has a core or two)

# A record's name, per object, as SQL over its documented columns.
_NAME_SQL = {
    "companies": '"name"',
    "contacts": "coalesce(nullif(trim(concat_ws(' ', \"first_name\", \"last_name\")), ''), "
    '"email")',
    "deals": '"name"',
}
_NAME_SQL["leads"] = _NAME_SQL["contacts"]


@dataclass(slots=True)
class Match:
    id: str
    name: str | None
    owner: str | None
    source: str | None
    amount: Decimal | None = None
    currency: str | None = None


@dataclass(slots=True)
class Outcome:
    """What one rule did on one batch: RAN with its matches, or COULD_NOT_RUN and why."""

    rule: TeamRule
    status: str
    matches: list[Match] = field(default_factory=list)
    why: str = ""

    def as_dict(self) -> dict:
        return {
            "id": self.rule.id,
            "object": self.rule.object,
            "severity": self.rule.severity,
            "status": self.status,
            "count": len(self.matches) if self.status == RAN else None,
            "why": self.why,
        }


# Helper columns a rule may read to see a record's associated deals (a rule is one
# record's condition, so joins are made here, once, in SQL): name -> what it counts.
HELPERS: dict[str, dict[str, str]] = {
    "companies": {
        "deals": "the company's deals (by `company_id` or `company_ids`)",
        "won_deals": "the company's closed-won deals",
    },
    "contacts": {
        "deals": "deals listing the contact, or of its company (`company_id`)",
        "won_deals": "of those, the closed-won ones",
    },
}
_DEAL_COMPANIES = """
    SELECT DISTINCT "id" AS deal, company, "is_won" AS won FROM (
        SELECT "id", "is_won",
               unnest(list_append(coalesce("company_ids", []), "company_id")) AS company
        FROM deals) WHERE company IS NOT NULL"""
# Fixed SQL, no name or value from a rule or the batch in it.
_LINKS = {
    "companies": f"SELECT deal, company AS record, won FROM ({_DEAL_COMPANIES})",  # noqa: S608
    "contacts": f"""
        SELECT DISTINCT "id" AS deal, unnest("contact_ids") AS record, "is_won" AS won
        FROM deals
        UNION
        SELECT dc.deal, c."id", dc.won FROM ({_DEAL_COMPANIES}) dc
        JOIN contacts c ON c."company_id" = dc.company""",  # noqa: S608
}


def absent_lists(partial: Iterable[str], source: str | None) -> frozenset[str]:
    """The lists a batch has no file of: its `partial` ones (Batch.partial), and leads
    unless it comes from Salesforce (a HubSpot batch has no leads list at all). Their
    tables are empty, so a rule over one could only say "nothing found"."""
    leads = () if crm_of(source) == SALESFORCE else ("leads",)
    return frozenset(partial) | frozenset(leads)


def add_helpers(tables: Tables, rules: Iterable[TeamRule], absent: Collection[str] = ()) -> None:
    """The helper columns (HELPERS) the rules name, on the tables that lack a column of
    that name (a property of the batch's own keeps its name); none when the batch has no
    deals list (every count would read 0: run_rule says the rule could not run)."""
    if "deals" in absent:
        return
    for name, helpers in HELPERS.items():
        columns = {c.casefold() for c in tables.columns(name)}
        wanted = {
            n.casefold()
            for rule in rules
            if rule.object == name
            for n in language.column_names(rule.tree)
        }
        if not (wanted & set(helpers)) or set(helpers) & columns:
            continue
        # Fixed SQL: no name or value in it comes from a rule or the batch.
        tables.connection.execute(
            f"""CREATE OR REPLACE TABLE {name} AS
            SELECT t.*, coalesce(n.deals, 0) AS deals, coalesce(n.won_deals, 0) AS won_deals
            FROM {name} t LEFT JOIN (
                SELECT record, count(*) AS deals, count(*) FILTER (WHERE won) AS won_deals
                FROM ({_LINKS[name]}) GROUP BY record
            ) n ON n.record = t."id" """  # noqa: S608
        )


def lock_tables(tables: Tables, *, memory_mb: int, threads: int = THREADS) -> None:
    """The tables' connection, from here on reading only what it holds. Once: a locked
    connection refuses every setting, so tables checked then run are locked once."""
    if not tables.locked:
        lock(tables.connection, memory_mb=memory_mb, threads=threads)
        tables.locked = True


def run_rule(
    tables: Tables,
    rule: TeamRule,
    as_of: dt.date,
    *,
    seconds: float,
    absent: Collection[str] = (),
) -> Outcome:
    """One rule over `tables` (already locked by lock_tables); `absent`: the lists the
    batch has no file of (absent_lists)."""
    query = _query(tables, rule, as_of, absent)
    if isinstance(query, Outcome):
        return query
    try:
        with deadline(tables.connection, seconds):
            rows = tables.connection.execute(query).fetchall()
    except RuleTimeout as error:
        return Outcome(rule, COULD_NOT_RUN, why=f"the rule {error}")
    except duckdb.Error as error:
        return Outcome(rule, COULD_NOT_RUN, why=_duckdb_reason(error))
    return Outcome(rule, RAN, [Match(*row) for row in rows])


def _query(
    tables: Tables, rule: TeamRule, as_of: dt.date, absent: Collection[str], *, dry: bool = False
) -> str | Outcome:
    """The rule's query over `tables`, or why it cannot run on them (an Outcome). `dry`:
    over one record of NULLs instead of the table's (rule_errors)."""
    if rule.object in absent:
        why = f"the batch has no {rule.object} list (no file of them)"
        return Outcome(rule, COULD_NOT_RUN, why=why)
    tree = rule.tree
    columns = tables.columns(rule.object)
    aliases = tables.aliases.get(rule.object, {})
    names = language.column_names(tree)
    owner = [rule.owner_from] if rule.owner_from else []
    found, missing = language.resolve(names + owner, columns, aliases)
    helpers = [n for n in missing if n.casefold() in HELPERS.get(rule.object, {})]
    if helpers and "deals" in absent:
        counts = ", ".join(f"`{name}`" for name in helpers)
        why = f"the batch has no deals list (no file of them), which {counts} counts"
        return Outcome(rule, COULD_NOT_RUN, why=why)
    if missing:
        lacks = ", ".join(quote(name) for name in missing)  # as in SQL: "Job"" Title"
        return Outcome(rule, COULD_NOT_RUN, why=f"the batch's {rule.object} have no {lacks}")
    unexported = _not_exported(tables, rule.object, list(found.values()))
    if unexported:
        lacks = ", ".join(f"`{column}`" for column in unexported)
        why = f"the export's {rule.object} have no column for {lacks}"
        return Outcome(rule, COULD_NOT_RUN, why=why)
    condition = language.to_sql(tree, found, as_of)
    owner_sql = quote(found[rule.owner_from]) if rule.owner_from else '"owner"'
    money = '"amount", "currency"' if rule.object == "deals" else "NULL, NULL"
    # Every name below is quoted (quote) or fixed; `condition` is generated from the
    # checked tree (language.to_sql), never the rule's own text.
    return (
        f'SELECT "id", {_NAME_SQL[rule.object]}, CAST({owner_sql} AS VARCHAR), '  # noqa: S608
        "nullif(concat_ws(' / ', \"record_source\", \"record_source_detail\"), ''), "
        f"{money} FROM {_DRY.format(quote(rule.object)) if dry else quote(rule.object)} "
        f'WHERE ({condition}) ORDER BY "id"'
    )


# A record of NULLs with the table's columns and types: a rule's query over it meets its
# own errors (a pattern is compiled on a value), and none of a sync's values.
_DRY = '(SELECT * FROM {0} WHERE false UNION ALL BY NAME SELECT NULL AS "id") AS {0}'


def rule_errors(
    tables: Tables,
    rules: Iterable[TeamRule],
    as_of: dt.date,
    *,
    memory_mb: int,
    absent: Collection[str] = (),
) -> list[str]:
    """The rules' own errors on `tables` ("rule ID: why"): a type their columns cannot
    take, an invalid pattern, a function given the wrong arguments. Each query runs over
    one record of NULLs, so a value of this sync is not one; nor is a property or a list
    these tables lack (another sync may have it). Locks the tables."""
    rules = list(rules)
    add_helpers(tables, rules, absent)
    lock_tables(tables, memory_mb=memory_mb)
    problems = []
    for rule in rules:
        query = _query(tables, rule, as_of, absent, dry=True)
        if isinstance(query, Outcome):
            continue
        try:
            with deadline(tables.connection, SECONDS):
                tables.connection.execute(query).fetchall()
        except RuleTimeout:
            continue
        except duckdb.Error as error:
            problems.append(f"rule {rule.id}: {_duckdb_reason(error)}")
    return problems


def _not_exported(tables: Tables, name: str, columns: list[str]) -> list[str]:
    """The documented columns among `columns` the export had no column (or API property)
    for, and so NULL on every record: a rule reading one would be silently true or false
    (`currency IS NULL` on a single-currency export). Only where the tables know what
    filled their fields (Tables.headers); a JSON batch names its fields record by record."""
    headers = tables.headers.get(name)
    if not headers:
        return []
    filled = set(headers.values())
    candidates = [c for c in dict.fromkeys(columns) if c in json_names(name) and c not in filled]
    if not candidates:
        return []
    # Quoted names of the table's own columns.
    counts = tables.connection.execute(
        f"SELECT {', '.join(f'count({quote(c)})' for c in candidates)} FROM {quote(name)}"  # noqa: S608
    ).fetchone()
    return [column for column, count in zip(candidates, counts, strict=True) if count == 0]


def _duckdb_reason(error: duckdb.Error) -> str:
    """DuckDB's message, first line, without its internal context."""
    return str(error).split("\n", 1)[0].strip()[:300]


def run_rules(
    tables: Tables,
    rules: Iterable[TeamRule],
    as_of: dt.date,
    *,
    seconds: float,
    memory_mb: int,
    total_seconds: float | None = None,
    absent: Collection[str] = (),
) -> list[Outcome]:
    """Every rule over `tables`, which are locked first (irreversibly): each within
    `seconds`, and all within `total_seconds` (a rule left when it is spent could not
    run, and says so). `absent`: the lists the batch has no file of (absent_lists)."""
    rules = list(rules)
    if not rules:
        return []
    began = time.monotonic()
    add_helpers(tables, rules, absent)
    lock_tables(tables, memory_mb=memory_mb)
    outcomes = []
    # The matches make no reference cycles: the collector's passes over them are cost.
    with no_cyclic_gc():
        for rule in rules:
            left = seconds
            if total_seconds is not None:
                left = min(seconds, total_seconds - (time.monotonic() - began))
            if left <= 0:
                why = f"the run's time for team rules ({total_seconds:g} s) was spent before it"
                outcomes.append(Outcome(rule, COULD_NOT_RUN, why=why))
            else:
                outcomes.append(run_rule(tables, rule, as_of, seconds=left, absent=absent))
    return outcomes


def findings_of(outcome: Outcome, currency: str | None) -> list[RawFinding]:
    """A finding per matching record, like any other kind's: its kind the rule's id,
    its severity, title and fix the rule's; a deal's amount is what it puts at risk."""
    rule = outcome.rule
    one = ONE[rule.object]
    found = []
    for match in outcome.matches:
        exposure, currencies = {}, {}
        if match.amount is not None and match.amount > 0:
            exposure = {match.id: Decimal(match.amount)}
            currencies = {match.id: match.currency or currency or DEFAULT_CURRENCY}
        label = f'"{match.name}"' if match.name else "(no name)"
        found.append(
            RawFinding(
                category=CATEGORY,
                kind=rule.id,
                severity=rule.severity,
                title=f"{rule.title}: {match.name or match.id}",
                detail=f"{one.capitalize()} {match.id} {label} matches the team's rule "
                f"{rule.id}: {rule.when}",
                record_ids=[match.id],
                suggested_fix=rule.fix,
                exposure=exposure,
                deal_currencies=currencies,
                owners=[match.owner] if match.owner else [],
                record_sources=[match.source] if match.source else [],
            )
        )
    return found


def team_findings(
    tables: Tables,
    rules: Iterable[TeamRule],
    as_of: dt.date,
    *,
    seconds: float,
    memory_mb: int,
    total_seconds: float | None = None,
    absent: Collection[str] = (),
) -> tuple[list[RawFinding], list[dict]]:
    """The findings of every rule that ran, and each rule's outcome (ran, with its
    count, or could not run, with why) for the run's report."""
    outcomes = run_rules(
        tables,
        rules,
        as_of,
        seconds=seconds,
        memory_mb=memory_mb,
        total_seconds=total_seconds,
        absent=absent,
    )
    with no_cyclic_gc():
        findings = [f for o in outcomes for f in findings_of(o, tables.currency)]
    return findings, [outcome.as_dict() for outcome in outcomes]
