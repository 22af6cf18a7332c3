"""bench/dedup_peers.py compares revreview's dedup with peers written for comparison; the
comparison only means something if every tool finds what revreview finds, scored alike."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from reviews.samplegen import write_sample
from tests.services import ROOT

pytestmark = pytest.mark.slow  # the bench's peers, run


def driver():
    sys.path.insert(0, str(ROOT / "bench"))  # it imports review_scale beside it
    try:
        spec = importlib.util.spec_from_file_location("dedup_peers", ROOT / "bench/dedup_peers.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.fixture(scope="module")
def kinds() -> tuple[str, ...]:
    """The duplicate kinds the bench races (its batch has no leads): the driver's."""
    return driver().KINDS


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    path, truth = write_sample(tmp_path_factory.mktemp("peers") / "b.json", 3_000, seed=5)
    return path, json.loads(truth.read_text())


def groups_of(script: str, path, tmp_path) -> dict[str, list[list[str]]]:
    out = tmp_path / f"{script}.groups.json"
    command = [sys.executable, str(ROOT / "bench/peers" / script), str(path), "--groups", str(out)]
    completed = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["load_s"] >= 0 and summary["match_s"] > 0 and summary["peak_mb"] > 0
    return json.loads(out.read_text())


def canonical(groups: dict, kinds: tuple[str, ...]) -> dict[str, set[tuple[str, ...]]]:
    return {kind: {tuple(sorted(g)) for g in groups.get(kind, [])} for kind in kinds}


@pytest.mark.parametrize("peer", ["rapidfuzz_blocking.py", "splink_duckdb.py"])
def test_each_peer_finds_the_groups_revreview_finds(peer, batch, kinds, tmp_path):
    if peer == "splink_duckdb.py":
        pytest.importorskip("splink", reason="the bench extra is not installed")
    path, _ = batch
    ours = canonical(groups_of("revreview_dedup.py", path, tmp_path), kinds)
    assert all(ours[kind] for kind in kinds)
    assert canonical(groups_of(peer, path, tmp_path), kinds) == ours


def test_scoring_counts_planted_groups_found_and_decoys_flagged(batch, kinds):
    module = driver()
    _, truth = batch
    planted = [p for p in truth["planted"] if p["kind"] in kinds]
    everything = {kind: [p["record_ids"] for p in planted if p["kind"] == kind] for kind in kinds}
    result = module.Run("all")
    module.score(result, everything, truth)
    assert all(found == total > 0 for found, total in result.recall.values())
    assert result.decoys[0] == 0 and result.unplanted == 0

    # One planted pair missed, one decoy flagged, one group of chance duplicates.
    n = len(everything["deal_entered_twice"])
    everything["deal_entered_twice"].pop()
    decoy = next(d for d in truth["decoys"] if "deal_entered_twice" in d["not_kinds"])
    everything["deal_entered_twice"].append(decoy["record_ids"])
    result = module.Run("some")
    module.score(result, everything, truth)
    assert result.recall["deal_entered_twice"] == (n - 1, n)
    assert result.decoys[0] == 1 and result.unplanted == 1


def test_the_driver_prints_the_ratio_then_the_floor_beside_its_budget(batch, capfd):
    path, _ = batch
    assert driver().main(["--file", str(path), "--repeat", "1"]) == 0
    out = capfd.readouterr().out
    ratio = re.search(r"the fastest peer's \(.+?, ([0-9.]+) s\)", out)
    assert ratio, out
    # load_floor.py, given that peer's time: the budget is half of it
    budget = re.search(r"budget \(half the fastest peer's ([0-9.]+) s\): ([0-9.]+) s", out)
    assert budget, out
    assert budget[1] == ratio[1]
    assert abs(float(budget[2]) - float(ratio[1]) / 2) < 0.01
    assert "| floor: the three above |" in out
