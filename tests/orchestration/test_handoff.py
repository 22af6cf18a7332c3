"""The specialist -> coordinator hand-off (reviews.orchestration.run.handoff): the stored
blob is the authority; the findings kept in-process stand in for it only when they are
exactly what it holds."""

from __future__ import annotations

from decimal import Decimal

from reviews.engine.findings import RawFinding, pack, unpack
from reviews.orchestration.run import handoff


def _findings(title: str = "Company co_1 was last enriched 200 days ago") -> list[RawFinding]:
    return [
        RawFinding("freshness", "stale_enrichment", "warning", title, "detail", ["co_1"]),
        RawFinding(
            "dedup",
            "deal_entered_twice",
            "critical",
            "Deal entered twice",
            "detail",
            ["dl_1", "dl_2"],
            exposure={"dl_2": Decimal("410000.50")},
            deal_currencies={"dl_2": "EUR"},
        ),
    ]


def test_the_coordinator_in_the_same_process_gets_the_findings_the_blob_holds():
    findings = _findings()
    blob = handoff.pack_for_coordinator(1, "freshness", findings, [])

    received = handoff.received_findings(1, "freshness", memoryview(blob))

    assert received == unpack(blob) == findings
    assert received[0] is findings[0]  # not unpacked again
    # Once: a coordinator that runs again reads the stored blob.
    again = handoff.received_findings(1, "freshness", blob)
    assert again == findings and again[0] is not findings[0]


def test_a_blob_stored_by_another_attempt_or_run_is_unpacked():
    handoff.pack_for_coordinator(2, "dedup", _findings(), [])
    other = pack(_findings(title="another attempt's title"))

    assert handoff.received_findings(2, "dedup", other)[0].title == "another attempt's title"
    kept = _findings()
    handoff.pack_for_coordinator(3, "dedup", kept, [])
    other_run = handoff.received_findings(4, "dedup", pack(kept))
    assert other_run == kept and other_run[0] is not kept[0]
    assert handoff.received_findings(3, "dedup", None) == []


def test_findings_whose_text_had_to_be_made_storable_come_from_the_blob():
    findings = _findings(title="Company \ud800 was last enriched")
    blob = handoff.pack_for_coordinator(5, "freshness", findings, [])

    received = handoff.received_findings(5, "freshness", blob)

    assert received[0].title == "Company \\ud800 was last enriched"  # as stored
    assert received == unpack(blob)
