"""One specialist registry (reviews.engine.specialists): every list of categories and
kinds elsewhere is derived from it or equal to it, and a kind missing from the docs,
the samples, a prompt or the roster fails here."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from reviews.engine import risk
from reviews.engine.batch import ValueProblem
from reviews.engine.coordinator import CATEGORY_ORDER
from reviews.engine.findings import Severity
from reviews.engine.ingest import safe_text
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, LEADS
from reviews.engine.rules import Rules
from reviews.engine.specialists import (
    KINDS,
    MODULES,
    NAMES,
    REGISTRY,
    SPECIALISTS,
    detector,
    rules_read,
)
from reviews.engine.specialists.dedup import MERGE_KINDS
from reviews.engine.specialists.spec import (
    ANY_RECORD,
    INVALID_VALUE,
    FixTarget,
    Kind,
    Match,
    Measure,
    Merges,
)
from tests.engine.specialists.factories import company, make_batch
from tests.services import ROOT

SPECIALISTS_DIR = ROOT / "reviews" / "engine" / "specialists"
HELPERS = {
    "__init__",
    "common",
    "deal_copies",
    "dedup_groups",
    "grouping",
    "leads",
    "near_domains",
    "near_names",
    "people",
    "spec",
    "typos",
}  # modules here, not specialists
RULES_TABLE = re.compile(r"^\| ([a-z()']+) \| `([a-z_]+)` \| (.+?) \| ([a-z /]+) \|(.*)\|$")
SETTING = re.compile(r"`([A-Z_]+)` \(([^)]+)\)")


def declared() -> set[tuple[str, str]]:
    return {(spec.category, kind.name) for spec in REGISTRY.values() for kind in spec.kinds}


# --- the registry itself ----------------------------------------------------------------


def test_every_specialist_module_is_registered_under_its_category():
    modules = {path.stem for path in SPECIALISTS_DIR.glob("*.py")} - HELPERS
    assert modules == set(NAMES)
    for name, module in SPECIALISTS.items():
        assert module.SPEC.category == module.CATEGORY == name
        assert module.SPEC.slice is module.SLICE
        assert callable(module.detect) and callable(module.near_misses)
    assert tuple(m.CATEGORY for m in MODULES) == NAMES


def test_kind_names_are_unique_across_specialists_but_the_shared_invalid_value():
    owners: dict[str, list[str]] = {}
    for category, kind in declared():
        owners.setdefault(kind, []).append(category)
    shared = {kind: cats for kind, cats in owners.items() if len(cats) > 1}
    assert set(shared) <= {"invalid_value"}
    assert KINDS["invalid_value"] is INVALID_VALUE


def test_every_kind_reads_only_rules_that_exist_and_every_rule_is_read():
    fields = set(Rules().as_dict())
    for kind in KINDS.values():
        assert set(kind.rules) <= fields, kind.name
        assert kind.severities and set(kind.severities) <= set(Severity), kind.name
        assert re.fullmatch(r"[a-z][a-z_]+", kind.name)
        kind.heading(2, Rules())  # its label formats with the rules' names
    for spec in REGISTRY.values():
        assert set(spec.candidate_rules) <= fields, spec.category
    assert set(rules_read()) | set(risk.RULES_READ) == fields


def test_a_kind_and_a_severity_read_for_people():
    # One finding's kind from the same label as its group's heading (the fix plan page).
    assert KINDS["won_without_amount"].phrase(Rules()) == "deal: won without an amount"
    stale = KINDS["stale_enrichment"].phrase(Rules(stale_enrichment_days=90))
    assert stale == "company: enrichment older than 90 days"
    assert [s.label for s in Severity] == ["Must fix", "Should fix", "Worth a look"]


def test_every_kind_says_where_its_fix_is_what_it_merges_and_what_tuning_measures():
    fields = {
        kind.name: {f.key for f in kind.fields} for kind in (COMPANIES, CONTACTS, DEALS, LEADS)
    }
    batch = make_batch(companies=[company("co_1", enriched_at=datetime(2025, 1, 1, tzinfo=UTC))])
    for kind in KINDS.values():
        assert isinstance(kind.fix, FixTarget), kind.name
        assert kind.finds.strip(), kind.name  # its docs/rules.md row says what it finds
        if kind.fix.object is not None and kind.fix.field:
            # a field the batch has: the fix plan names it as the CRM does
            assert kind.fix.field in fields[kind.fix.object], kind.name
        if kind.merge is not None:
            assert isinstance(kind.merge, Merges), kind.name
            # with nothing left to merge, the task is on the first of its records
            assert kind.fix == ANY_RECORD, kind.name
        if kind.measure is not None:
            assert kind.measure.rule in kind.rules, kind.name
            assert isinstance(kind.measure.values(batch, Rules()), Mapping), kind.name
    assert MERGE_KINDS == {k.name: k.merge.object for k in KINDS.values() if k.merge}


def test_a_kind_cannot_be_declared_without_saying_where_its_fix_is():
    label = ("thing", "things", "odd")
    with pytest.raises(TypeError, match="fix"):
        Kind("no_fix", (Severity.WARNING,), label, finds="a thing")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="fix must be a FixTarget"):
        Kind("none_fix", (Severity.WARNING,), label, finds="a thing", fix=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="finds"):
        Kind("no_words", (Severity.WARNING,), label, fix=ANY_RECORD)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="name the field"):
        FixTarget("deals", None)
    with pytest.raises(ValueError, match="not one of"):
        FixTarget("tickets", "")
    with pytest.raises(ValueError, match="not a rule it reads"):
        Kind(
            "unmeasured",
            (Severity.WARNING,),
            label,
            finds="a thing",
            fix=ANY_RECORD,
            measure=Measure("stale_enrichment_days", lambda batch, rules: {}),
        )
    # Declared at run time (a team's rule), a kind is a value like the built-in ones.
    team = Kind(
        "no_vat", (Severity.WARNING,), label, finds="a thing", fix=FixTarget("companies", "")
    )
    assert team.heading(2, Rules()) == "2 things: odd" and team.merge is team.measure is None


# --- the lists derived from it, or checked against it -----------------------------------


def test_the_ingest_gives_each_field_to_a_registered_specialist_and_the_report_orders_them():
    owners = {f.category for kind in (COMPANIES, CONTACTS, DEALS) for f in kind.fields}
    owners |= {safe_text.ID_CATEGORY, safe_text.EXTRA_CATEGORY}
    assert owners <= set(NAMES)
    # invalid_value is declared by exactly the specialists that own a field to find malformed
    assert {name for name in NAMES if INVALID_VALUE in REGISTRY[name].kinds} == owners
    assert sorted(CATEGORY_ORDER) == sorted(NAMES)
    ranks = [REGISTRY[name].report_rank for name in CATEGORY_ORDER]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_the_model_reply_schema_names_every_category_and_severity():
    from reviews.llm import schemas

    assert set(typing.get_args(schemas.Category)) == set(NAMES)
    assert set(typing.get_args(schemas.Severity)) == {s.value for s in Severity}
    schema = schemas.CoordinatorReply.model_json_schema()
    assert schema["$defs"]["Recategorisation"]["properties"]["category"]["enum"] == list(NAMES)


def test_every_specialist_has_a_roster_entry_an_agent_choice_and_a_prompt():
    from ledger.models import AgentModelOverride
    from reviews.llm.prompts import PROMPTS_DIR
    from reviews.llm.roster import DEFAULT_ROSTER

    for name in NAMES:
        assert DEFAULT_ROSTER.get(name), f"no default model for {name}"
        assert name in AgentModelOverride.Agent.values, f"no agent choice for {name}"
        prompt = PROMPTS_DIR / f"{name}.md"
        assert prompt.is_file() and prompt.read_text().strip(), f"no prompt {prompt}"
    assert set(AgentModelOverride.Agent.values) == set(DEFAULT_ROSTER)


def test_the_agent_choices_have_their_migration():
    """A new specialist changes ledger.AgentModelOverride's choices: its migration must
    be there (makemigrations --check, without a database)."""
    from django.apps import apps
    from django.db.migrations.autodetector import MigrationAutodetector
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.state import ProjectState

    loader = MigrationLoader(None, ignore_no_migrations=True)
    changes = MigrationAutodetector(loader.project_state(), ProjectState.from_apps(apps)).changes(
        graph=loader.graph, trim_to_apps={"ledger"}
    )
    assert changes == {}


def test_the_findings_page_labels_every_kind_from_its_declaration(settings):
    from reviews.web.findings_page import kind_label

    for kind in KINDS.values():
        assert kind_label(kind.name, 3, KINDS) == kind.heading(3, settings.REVIEW_RULES)
    assert kind_label("stale_enrichment", 1, KINDS) == "1 company: enrichment older than 180 days"
    assert kind_label("made_up_by_a_model", 2, KINDS) == "2 × made up by a model"


# --- the documents and the samples --------------------------------------------------------


def rules_table() -> dict[tuple[str, str], tuple[set[str], list[tuple[str, str]]]]:
    """docs/rules.md's table: (category, kind) -> (severities, [(setting, default)])."""
    rows = {}
    for line in (ROOT / "docs" / "rules.md").read_text().splitlines():
        match = RULES_TABLE.match(line)
        if not match:
            continue
        category, kind, _finds, severities, settings_text = match.groups()
        value = ({s.strip() for s in severities.split("/")}, SETTING.findall(settings_text))
        # "(owner's)": every specialist that owns an input field reports its malformed values
        owners = [n for n in NAMES if INVALID_VALUE in REGISTRY[n].kinds]
        categories = owners if category == "(owner's)" else (category,)
        for name in categories:
            rows[(name, kind)] = value
    return rows


def test_docs_rules_table_lists_every_declared_kind_with_its_severity_and_settings():
    table = rules_table()
    assert set(table) == declared()
    defaults = Rules().as_dict()
    for (category, name), (severities, settings_listed) in table.items():
        kind = REGISTRY[category].kind(name)
        assert severities == {s.value for s in kind.severities}, name
        # Numbers are written with thousands separators; a text default (the survivor
        # order) is a comma-separated list: commas are left out on both sides.
        expected = [(Rules.setting_of(f), _plain(defaults[f]).replace(",", "")) for f in kind.rules]
        assert [(s, d.replace(",", "")) for s, d in settings_listed] == expected, name


def test_docs_list_every_rules_field_with_its_setting_and_default():
    text = (ROOT / "docs" / "rules.md").read_text()
    for info in Rules.describe():
        row = f"| `{info.name}` | `{info.setting}` | {_plain(info.default)} | {info.meaning} |"
        assert row in text, row


def test_the_samples_plant_every_kind_a_json_batch_can_hold():
    from reviews.samplegen import generate

    _, truth = generate(3_000, seed=5)
    planted = {(item["category"], item["kind"]) for item in truth["planted"]}
    expected = {(c, k) for c, k in declared() if not KINDS[k].only_from}
    assert planted == expected
    # Leads come only with a batch that has them (samples/salesforce/ plants them).
    assert [k.name for k in KINDS.values() if k.only_from] == [
        "lead_already_contact",
        "lead_same_email",
        "unresolved_company_name",
        "lead_no_owner",
        "lead_inactive_owner",
    ]


# --- the declarations hold for what the detectors really find ----------------------------


def test_detectors_find_only_declared_kinds_at_declared_severities_exact_ones_certain():
    import json

    from reviews.engine.ingest import UploadedFile, parse_upload
    from reviews.samplegen import generate

    batch, _ = generate(3_000, seed=5)
    parsed = parse_upload(
        [UploadedFile("g.json", json.dumps(batch).encode())],
        as_of=None,
        received_at=datetime.now(UTC),
    )
    seen = set()
    for name in NAMES:
        spec = REGISTRY[name]
        for finding in detector(name)(parsed, Rules()):
            kind = spec.kind(finding.kind)
            assert finding.category == name
            assert finding.severity in kind.severities, (finding.kind, finding.severity)
            if kind.match == Match.EXACT:
                assert finding.confidence == 1.0, finding.kind
            seen.add((name, finding.kind))
    assert seen == {(c, k) for c, k in declared() if not KINDS[k].only_from}


def test_every_specialist_reports_the_malformed_values_of_its_own_fields():
    batch = make_batch(companies=[company("co_1")])
    batch.value_problems = [
        ValueProblem(name, "co_1", f"companies[0].{name}_field", "not valid") for name in NAMES
    ]
    for name in NAMES:
        found = [f for f in SPECIALISTS[name].detect(batch, Rules()) if f.kind == "invalid_value"]
        declared_here = INVALID_VALUE in REGISTRY[name].kinds
        expected = [f"companies[0].{name}_field: not valid"] if declared_here else []
        assert [f.detail for f in found] == expected


def _plain(value) -> str:
    return format(value.normalize(), "f") if isinstance(value, Decimal) else str(value)


def test_a_rule_a_prompt_names_is_one_the_model_is_shown():
    from reviews.llm.prompts import PROMPTS_DIR

    rule_like = re.compile(r"`([a-z]+(?:_[a-z]+)*_(?:days|ratio|pct|factor|window|points|deals))`")
    named = {m for p in PROMPTS_DIR.glob("*.md") for m in rule_like.findall(p.read_text())}
    assert named  # the candidate windows are named, not written as numbers
    assert named <= set(rules_read())
