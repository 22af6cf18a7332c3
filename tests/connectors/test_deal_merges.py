"""HubSpot's merge semantics for deals (issue 38), end to end against the loopback
stand-in: merging deals makes a new deal with a new id, the old ids its aliases
(HubSpot's changelog, "Deals now support merging"). A deal entered three times is
pulled and reviewed; applying the plan's merge sends the second merge into the id the
first one returned, the AppliedMerge rows name the deal that survived, and the next
pull holds that one deal and none of the others."""

from __future__ import annotations

import json
import time

import pytest

from connectors.merge_steps import dry_run
from connectors.merges import apply_merges
from connectors.write_access import configured_client
from reviews.models import AppliedMerge, Dataset
from reviews.orchestration.store.parsed import stored_files
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.connectors.test_apply_merges_pull import pull_and_review
from tests.connectors.test_pulls import connected

pytestmark = pytest.mark.django_db
COPIES = ("31", "32", "33")


def three_copies_portal():
    """problem_portal with one deal of Northwind Traders entered three times."""
    portal = problem_portal()
    for deal in COPIES:
        portal.put(
            "deals",
            deal,
            {
                "dealname": "Northwind platform",
                "amount": "75000",
                "dealstage": "qualifiedtobuy",
                "closedate": "2027-04-30T00:00:00Z",
                "pipeline": "default",
                "deal_currency_code": "EUR",
                "hubspot_owner_id": "901",
            },
        )
        portal.link("deals", deal, "companies", "3", primary=True)
        portal.link("deals", deal, "contacts", "13")
    return portal


def test_a_three_copy_deal_cluster_merges_into_one_deal_with_a_new_id_at_each_step(
    postgres, settings, django_user_model
):
    portal = three_copies_portal()
    with serving(portal, settings):
        connection = connected()
        _, run1 = pull_and_review(connection)
        staff = django_user_model.objects.create_user("ops", is_staff=True)
        deals = [s for s in dry_run(run1, user=staff) if s.object_type == "deals"]
        assert [(s.primary_id, s.merged_id) for s in deals] == [("31", "32"), ("31", "33")]
        plan = deals[0]

        portal.clock_ms = int(time.time() * 1000)  # merged now, after the first pull began
        steps = apply_merges(
            run1, [plan.fingerprint], user=staff, client=configured_client(connection.dataset),
            interval=0,
        )  # fmt: skip
        # A later merge into that deal, or the dry run of one, names its current id.
        again = [s for s in dry_run(run1, user=staff) if s.object_type == "deals"]
        connection.refresh_from_db()
        pull2, run2 = pull_and_review(connection)

    first_new, second_new = "90000001", "90000002"
    merges = [body for path, body in portal.bodies if path == "/crm/v3/objects/deals/merge"]
    # The second merge goes to the id the first one returned, not to the old primary.
    assert merges == [
        {"primaryObjectId": "31", "objectIdToMerge": "32"},
        {"primaryObjectId": first_new, "objectIdToMerge": "33"},
    ]
    assert [(s.outcome, s.primary_id, s.survivor_id) for s in steps] == [
        ("merged", "31", second_new),
        ("merged", first_new, second_new),
    ]
    assert [(s.primary_id, s.outcome) for s in again] == [(second_new, "merged")] * 2
    rows = AppliedMerge.objects.filter(dataset=Dataset.objects.get(name="acme-hubspot"))
    assert sorted(rows.values_list("merged_id", "primary_id", "survivor_id", "status")) == [
        ("32", "31", second_new, "merged"),
        ("33", first_new, second_new, "merged"),
    ]
    # The next pull agrees: the one deal it holds of the cluster is the rows' survivor.
    (stored,) = [f for f in stored_files(pull2.batch) if f.name == "hubspot-snapshot.json"]
    pulled = {str(d["id"]): d for d in json.loads(stored.data)["deals"]}
    assert second_new in pulled and not set(pulled) & {*COPIES, first_new}
    assert pulled[second_new]["properties"]["dealname"] == "Northwind platform"
    assert pull2.removed == 3  # 31, 32 and 33; the first new deal was never pulled
    assert plan.fingerprint in {entry["fingerprint"] for entry in run2.resolved}
    assert not run2.findings.filter(kind="deal_entered_twice").exists()
