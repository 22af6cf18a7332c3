"""Tuning from a simulated dataset's weeks (docs/history.md): a team dismissing one rule's
findings for a reason a threshold expresses, a team dismissing criticals, a planted
source of duplicates."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest

from reviews.engine.history.compare import fingerprint_of
from reviews.engine.history.observe import detect, observe
from reviews.engine.history.policy import EMPTY, Policy, critical_kinds, critical_rules
from reviews.engine.history.replay import hides_only_dismissed, replay
from reviews.engine.history.root_causes import root_causes
from reviews.engine.history.tune import MIN_DISMISSALS, propose
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import SPECIALISTS
from reviews.samplegen.sync import generate_syncs

YEARLY = 400  # the team re-enriches yearly: a company enriched up to 400 days ago is fine


def parsed(batch: dict):
    data = orjson.dumps(batch)
    return parse_upload(
        [UploadedFile("sync.json", data)], as_of=None, received_at=datetime.now(UTC)
    )


@pytest.fixture(scope="module")
def weeks():
    """Six syncs of one CRM, parsed; the sixth is 'the next sync' after tuning."""
    return [parsed(batch) for batch, _ in generate_syncs(1_500, seed=26, syncs=6)]


@pytest.fixture(scope="module")
def history(weeks):
    """What the team saw in the first five syncs: every finding, with its measure."""
    return [observe(batch, Rules(), EMPTY) for batch in weeks[:5]]


def yearly_team(history) -> set[str]:
    """Dismisses each stale_enrichment finding at most YEARLY days old when first seen."""
    first: dict[str, object] = {}
    for sync in history:
        for seen in sync:
            first.setdefault(seen.fingerprint, seen)
    return {
        fp
        for fp, seen in first.items()
        if seen.kind == "stale_enrichment" and seen.measure is not None and seen.measure <= YEARLY
    }


def test_a_threshold_explains_the_dismissals_and_replay_proves_it(weeks, history):
    dismissed = yearly_team(history)
    assert len(dismissed) >= MIN_DISMISSALS
    [proposal] = propose(history, dismissed)
    assert proposal.kind == "stale_enrichment"
    value = proposal.policy.rules["stale_enrichment_days"]
    assert Rules().stale_enrichment_days < value <= YEARLY + 10  # aged, rounded
    # the dismissed age a day a sync here: the number leaves the next sync's day too
    assert "plus 1 for the records' ageing until the next sync" in proposal.why
    result = replay(weeks[:5], Rules(), EMPTY, proposal.policy, dismissed)
    assert result["syncs"] == 5 and len(result["per_sync"]) == 5
    assert result["dismissed_hidden"] >= 0.9 * result["dismissed_total"]
    assert result["kept_hidden"] == 0 and result["kept_total"] > 0
    assert result["added"] == 0
    assert hides_only_dismissed(result)
    # The explanation and the replay count the same findings: this kind's, not every
    # finding of its specialist.
    kept = proposal.total - proposal.dismissed
    assert f"of the {kept} kept" in proposal.why and result["kept_total"] == kept
    assert proposal.as_dict()["policy"] == {"stale_enrichment_days": str(value)}

    # Applied: the next sync's stale findings drop; every other finding is unchanged.
    nxt = weeks[5]
    before = detect(nxt, Rules(), EMPTY, SPECIALISTS)
    after = detect(nxt, Rules(), proposal.policy, SPECIALISTS)
    key = {fingerprint_of(f): f.severity for f in before if f.kind != "stale_enrichment"}
    assert {fingerprint_of(f): f.severity for f in after if f.kind != "stale_enrichment"} == key
    stale_before = [f for f in before if f.kind == "stale_enrichment"]
    stale_after = [f for f in after if f.kind == "stale_enrichment"]
    assert 0 < len(stale_after) < len(stale_before)
    ages = {s.fingerprint: s.measure for s in observe(nxt, Rules(), EMPTY)}
    assert all(ages[fingerprint_of(f)] > value for f in stale_after)
    assert {fingerprint_of(f) for f in stale_before if ages[fingerprint_of(f)] > value} == {
        fingerprint_of(f) for f in stale_after
    }


def test_no_proposal_touches_a_critical_kind(history):
    criticals = {s.fingerprint for sync in history for s in sync if s.severity == "critical"}
    kinds = {s.kind for sync in history for s in sync if s.severity == "critical"}
    assert kinds and len(criticals) >= MIN_DISMISSALS
    proposals = propose(history, criticals | yearly_team(history))
    assert [p.kind for p in proposals] == ["stale_enrichment"]
    for proposal in proposals:
        touched = set(proposal.policy.off) | set(proposal.policy.severity)
        assert not touched & critical_kinds()


def test_a_kind_dismissed_every_time_is_proposed_off_and_severity_when_mixed(history):
    never = {s.fingerprint for sync in history for s in sync if s.kind == "never_enriched"}
    assert len(never) >= MIN_DISMISSALS
    [proposal] = propose(history, never)
    assert proposal.policy == Policy(off=frozenset({"never_enriched"}))
    assert proposal.as_dict()["policy"] == {"never_enriched.enabled": False}


def test_a_planted_source_of_duplicates_is_named_first():
    syncs = []
    records: dict[str, dict[str, str]] = {}
    for week in range(8):
        sync = []
        for n in range(5):
            ids = (f"c{week}-{n}a", f"c{week}-{n}b")
            source = "INTEGRATION / ZoomInfo" if n < 4 else "FORM"
            for i in ids:
                records[i] = {"record_source": source, "owner": f"owner{n % 3}"}
            sync.append(("contact_same_email", ids))
        sync.append(("deal_missing_amount", (f"d{week}",)))
        records[f"d{week}"] = {"pipeline": "default", "owner": f"owner{week}"}
        syncs.append(sync)
    for n in range(400):  # the CRM's other contacts: ZoomInfo is a small source overall
        source = "INTEGRATION / ZoomInfo" if n % 10 == 0 else ("FORM" if n % 2 else "IMPORT")
        records[f"other{n}"] = {"record_source": source, "owner": f"owner{n % 3}"}
    records |= {f"deal{n}": {"pipeline": "default"} for n in range(100)}
    causes = root_causes(syncs, records)
    first = causes[0]
    assert (first["kind"], first["field"], first["value"]) == (
        "contact_same_email",
        "record_source",
        "INTEGRATION / ZoomInfo",
    )
    assert first["count"] == 32 and first["share"] == 0.8
    assert "32 of 40 contact_same_email findings in the last 8 syncs" in first["text"]
    assert first["advice"]
    assert not any(c["field"] == "owner" for c in causes)  # spread over owners: not named
    # every deal is in the one pipeline: no cause, however many findings it holds
    assert not any(c["field"] == "pipeline" for c in causes)


def test_an_inclusive_threshold_lands_between_dismissed_and_kept():
    """amount_looks_like_typo is made when amount >= factor x median: the proposed factor
    passes every dismissed ratio and stays under every kept one."""
    from reviews.engine.history.observe import Seen

    def seen(n: int, ratio: str) -> Seen:
        return Seen(f"fp{n}", "amount_looks_like_typo", "suggestion", (f"d{n}",), Decimal(ratio))

    dismissed = [seen(n, r) for n, r in enumerate(["100", "120.5", "130", "150", "180", "199"])]
    kept = [seen(10 + n, r) for n, r in enumerate(["400", "950"])]
    [proposal] = propose([dismissed + kept], {s.fingerprint for s in dismissed})
    factor = proposal.policy.rules["amount_typo_factor"]
    assert Decimal("199") < factor < Decimal("400")
    # the roundest number near the midpoint (299.5) of 199 and 400: a margin both sides
    assert str(factor) == "300"
    assert proposal.why.endswith(
        "300 is the roundest number near the midpoint 299.5 between the largest dismissed "
        "(199) and the smallest kept (400), so both keep a margin"
    )


def test_a_proposal_is_the_roundest_number_that_splits_dismissed_from_kept():
    from reviews.engine.history.thresholds import roundest

    # stale_enrichment_days (a finding past it): from the dismissed 347 to below 475.
    assert roundest(Decimal(347), Decimal(475), past_low=False, whole=True) == 400
    assert roundest(Decimal(347), Decimal(351), past_low=False, whole=True) == 350
    assert roundest(Decimal(347), Decimal(348), past_low=False, whole=True) == 347
    assert roundest(Decimal(347), Decimal(347), past_low=False, whole=True) is None
    # A ratio (a finding at or past it): past the dismissed 0.91, up to the kept 0.93.
    assert str(roundest(Decimal("0.91"), Decimal("0.93"), past_low=True, whole=False)) == "0.92"
    assert roundest(Decimal("0.91"), Decimal("0.91"), past_low=True, whole=False) is None
    assert roundest(Decimal(564), None, past_low=False, whole=True) == 600  # nothing kept


def test_a_proposal_keeps_a_margin_on_both_sides_and_room_for_ageing():
    from reviews.engine.history.thresholds import ageing_per_sync, midpoint

    # the middle half of 347..475 is 379..443: 400 is there; not 350 near the dismissed
    assert midpoint(Decimal(347), Decimal(475), past_low=False, whole=True) == 400
    # 338 dismissed, 900 kept: the midpoint is 619, and 500 the roundest in 478..759
    assert midpoint(Decimal(338), Decimal(900), past_low=False, whole=True) == 500
    # too close for a middle half of whole numbers: the roundest between them at all
    assert midpoint(Decimal(347), Decimal(349), past_low=False, whole=True) == 348
    assert str(midpoint(Decimal("0.91"), Decimal("0.99"), past_low=True, whole=False)) == "0.95"
    # ages measured in several syncs: the largest step per sync (a week here)
    assert ageing_per_sync([[338, 345, 352], [400, 403], [10]]) == 7
    assert ageing_per_sync([[338]]) == 7  # one sync: a week is assumed


def test_record_fields_join_the_source_and_its_detail():
    from reviews.engine.history.root_causes import record_fields

    batch = parsed(
        {
            "exportedAt": "2026-08-01T09:00:00Z",
            "companies": [{"id": "c1", "name": "Acme"}],
            "contacts": [
                {
                    "id": "p1",
                    "email": "a@acme.test",
                    "record_source": "INTEGRATION",
                    "record_source_detail": "ZoomInfo",
                    "owner": "dana",
                }
            ],
            "deals": [{"id": "d1", "name": "Big", "pipeline": "sales"}],
        }
    )
    fields = record_fields(batch)
    assert fields["p1"] == {"record_source": "INTEGRATION / ZoomInfo", "owner": "dana"}
    assert fields["d1"] == {"pipeline": "sales"}


def test_replay_lists_the_findings_a_lower_threshold_would_add(weeks):
    """A policy that lowers stale_enrichment_days raises findings the team never saw."""
    lower = Policy(rules={"stale_enrichment_days": 100})
    result = replay(weeks[:2], Rules(), EMPTY, lower, set())
    assert result["added"] > 0 and result["dismissed_hidden"] == result["kept_hidden"] == 0
    assert 0 < len(result["added_findings"]) <= 20
    assert {f["kind"] for f in result["added_findings"]} == {"stale_enrichment"}
    assert sum(s["added"] for s in result["per_sync"]) >= result["added"]


# --- fuzzy ratios: contact_same_person is tuned, deal_entered_twice (critical) never ----

NEAR = [  # two different people with near-same names (ratio 92-97 under the default 92)
    ("Jon", "Joan", "Baker"),
    ("Ann", "Anne", "Lewis"),
    ("Eric", "Erik", "Sandoval"),
    ("Sara", "Sarah", "Whitfield"),
    ("Katherine", "Catherine", "Osei"),
]
TYPO = [  # one person typed twice (ratio above 98)
    ("Maximilian", "Maximillian", "Featherstonehaugh"),
    ("Alexandra", "Alexandria", "Montgomery-Smythe"),
]


def fuzzy_crm(companies: int) -> dict:
    """Per company: a near-name pair of two people, then an exact-name pair (Dana Kim
    twice; even companies) or a one-letter typo of a long name (odd ones), and a deal
    entered twice with a one-letter typo."""
    batch: dict = {"exportedAt": "2026-08-01T09:00:00Z", "companies": [], "contacts": []}
    batch["deals"] = []
    for k in range(companies):
        co = f"co{k}"
        batch["companies"].append({"id": co, "name": f"Firm {k}", "domain": f"firm{k}.test"})
        near, typo = NEAR[k % len(NEAR)], TYPO[k // 2 % len(TYPO)]
        people = [("near_a", near[0], near[2]), ("near_b", near[1], near[2])]
        if k % 2:
            people += [("typo_a", typo[0], typo[2]), ("typo_b", typo[1], typo[2])]
        else:
            people += [("exact_a", "Dana", "Kim"), ("exact_b", "Dana", "Kim")]
        for tag, first, last in people:
            batch["contacts"].append(
                {
                    "id": f"ct{k}_{tag}",
                    "email": f"{tag}@firm{k}.test",
                    "firstName": first,
                    "lastName": last,
                    "companyId": co,
                }
            )
        for n, name in enumerate(("Platform expansion", "Platform expansions")):
            batch["deals"].append(
                {
                    "id": f"dl{k}_{n}",
                    "name": name,
                    "amount": 50000,
                    "stage": "appointmentscheduled",
                    "closeDate": "2026-09-30",
                    "companyId": co,
                }
            )
    return batch


@pytest.fixture(scope="module")
def fuzzy_weeks():
    return [parsed(fuzzy_crm(8)), parsed(fuzzy_crm(10))]


@pytest.fixture(scope="module")
def fuzzy_history(fuzzy_weeks):
    return [observe(batch, Rules(), EMPTY) for batch in fuzzy_weeks]


def persons(history, tag: str) -> set[str]:
    return {
        s.fingerprint
        for sync in history
        for s in sync
        if s.kind == "contact_same_person" and all(f"_{tag}_" in r for r in s.record_ids)
    }


def test_the_near_name_pairs_a_team_dismisses_get_a_higher_ratio(fuzzy_weeks, fuzzy_history):
    near, exact, typo = (persons(fuzzy_history, t) for t in ("near", "exact", "typo"))
    assert (len(near), len(exact), len(typo)) == (10, 5, 5)
    measured = {s.fingerprint: s.measure for sync in fuzzy_history for s in sync}
    assert all(measured[fp] is None for fp in exact)  # no ratio hides an exact name
    assert all(Decimal(92) <= measured[fp] < Decimal(97) for fp in near)
    assert all(measured[fp] > Decimal(98) for fp in typo)

    [proposal] = propose(fuzzy_history, near)
    assert proposal.kind == "contact_same_person"
    ratio = proposal.policy.rules["person_name_fuzzy_ratio"]
    assert ratio == 97  # between the largest dismissed (96.55) and the smallest kept (98.18)
    assert proposal.why.startswith("10 of 10 dismissed contact_same_person findings")
    result = replay(fuzzy_weeks, Rules(), EMPTY, proposal.policy, near)
    assert result["dismissed_total"] == 10
    assert result["dismissed_hidden"] >= 0.9 * result["dismissed_total"]
    assert result["kept_hidden"] == 0 and result["kept_total"] > 0 and result["added"] == 0
    assert hides_only_dismissed(result)
    # applied: the exact pairs and the typos are still found, the near names are not
    after = detect(fuzzy_weeks[1], Rules(), proposal.policy, SPECIALISTS)
    found = {fingerprint_of(f) for f in after if f.kind == "contact_same_person"}
    assert found == (exact | typo) and not found & near


def test_exact_names_dismissed_are_not_counted_as_hidden(fuzzy_weeks, fuzzy_history):
    """A team dismissing exact-name pairs too: the ratio proposal counts only the near
    names it really hides, and replay agrees."""
    near, exact = persons(fuzzy_history, "near"), persons(fuzzy_history, "exact")
    [proposal] = propose(fuzzy_history, near | exact)
    assert proposal.policy.rules == {"person_name_fuzzy_ratio": 97}
    assert proposal.why.startswith("10 of 15 dismissed contact_same_person findings")
    result = replay(fuzzy_weeks, Rules(), EMPTY, proposal.policy, near | exact)
    assert (result["dismissed_hidden"], result["dismissed_total"]) == (10, 15)
    assert result["kept_hidden"] == 0


def test_a_team_dismissing_fuzzy_deal_pairs_gets_no_proposal(fuzzy_history):
    """deal_entered_twice is critical: its ratio, tolerance and window are never proposed."""
    deals = {
        s.fingerprint for sync in fuzzy_history for s in sync if s.kind == "deal_entered_twice"
    }
    assert len(deals) == 10 >= MIN_DISMISSALS
    assert {"deal_name_fuzzy_ratio", "deal_amount_tolerance_pct"} <= critical_rules()
    assert "deal_close_date_window_days" in critical_rules()
    assert propose(fuzzy_history, deals) == []


def test_no_whole_ratio_between_dismissed_and_kept_is_no_ratio_proposal():
    """person_name_fuzzy_ratio is a whole number: 96.40 dismissed and 96.80 kept leave
    none between them (97 would hide the kept pair), so the proposal is a severity."""
    from reviews.engine.history.observe import Seen

    def seen(n: int, ratio: str) -> Seen:
        ids = (f"a{n}", f"b{n}")
        return Seen(f"fp{n}", "contact_same_person", "warning", ids, Decimal(ratio))

    dismissed = [seen(n, r) for n, r in enumerate(["93.10", "94.00", "95.50", "96", "96.40"])]
    kept = [seen(10, "96.80")]
    [proposal] = propose([dismissed + kept], {s.fingerprint for s in dismissed})
    assert proposal.policy == Policy(severity={"contact_same_person": "suggestion"})
    [proposal] = propose([dismissed + [seen(10, "97.20")]], {s.fingerprint for s in dismissed})
    assert proposal.policy.rules == {"person_name_fuzzy_ratio": 97}
