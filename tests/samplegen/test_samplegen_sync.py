"""make_sample --syncs: consecutive syncs of one dataset and their truth (no database)."""

from __future__ import annotations

import io
import json

from django.core.management import call_command

from reviews.samplegen import generate
from reviews.samplegen.sync import FIXES, generate_syncs

LISTS = ("companies", "contacts", "deals")


def test_make_sample_writes_each_sync_with_its_truth(tmp_path):
    out = io.StringIO()
    call_command("make_sample", records=600, seed=5, syncs=3, out=tmp_path / "s.json", stdout=out)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "s.json", "s.sync2.json", "s.sync2.truth.json", "s.sync3.json", "s.sync3.truth.json",
        "s.truth.json",
    ]  # fmt: skip
    batches = [json.loads((tmp_path / n).read_text()) for n in ("s.json", "s.sync2.json")]
    assert {b["dataset"] for b in batches} == {"generated-600-5"}
    assert batches[0]["exportedAt"] < batches[1]["exportedAt"]
    truth = json.loads((tmp_path / "s.sync3.truth.json").read_text())
    assert truth["sync"] == 3 and truth["resolved"]
    assert {p["status"] for p in truth["planted"]} == {"new", "open"}
    assert "batch: " in out.getvalue()


def test_the_next_sync_fixes_some_problems_adds_new_ones_moves_amounts_and_reorders():
    (first, truth1), (second, truth2) = generate_syncs(1_000, seed=9, syncs=2)
    # The first sync is the plain generator's batch.
    plain, _ = generate(1_000, seed=9)
    assert all(first[name] == plain[name] for name in LISTS)
    records1 = {r["id"]: r for name in LISTS for r in first[name]}
    records2 = {r["id"]: r for name in LISTS for r in second[name]}
    fixed = truth2["resolved"]
    assert {p["kind"] for p in fixed} <= set(FIXES)
    assert {"company_same_domain", "won_without_close_date"} <= {p["kind"] for p in fixed}
    for problem in fixed:  # merged away, or its field filled
        ids = problem["record_ids"]
        assert any(i not in records2 or records2[i] != records1[i] for i in ids), problem
    opened = [p for p in truth2["planted"] if p["status"] == "open"]
    new = [p for p in truth2["planted"] if p["status"] == "new"]
    assert len(opened) + len(fixed) == len(truth1["planted"])
    assert {p["kind"] for p in new} >= {"deal_entered_twice", "negative_amount"}
    assert all(i not in records1 for p in new for i in p["record_ids"] if i in records2)
    deals = [i for p in opened for i in p["record_ids"] if i.startswith("dl_") and i in records2]
    moved = [i for i in deals if records2[i].get("amount") != records1[i].get("amount")]
    assert moved
    assert [r["id"] for r in second["deals"]] != sorted(r["id"] for r in second["deals"])
