"""The scale benchmark scores a review against the samples' ground truth, which plants
every kind a JSON batch can hold: it reports how many kinds the review found."""

from __future__ import annotations

import importlib.util
import json
import sys

from reviews.engine.specialists import KINDS
from reviews.samplegen import generate
from tests.services import ROOT


def review_outcome():
    spec = importlib.util.spec_from_file_location("review_scale", ROOT / "bench/review_scale.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.review_outcome


def report(findings: list[dict]) -> bytes:
    return json.dumps({"verdict": "x", "run": {"mode": "fresh"}, "findings": findings}).encode()


def test_the_bench_counts_every_planted_kind_and_names_those_missed():
    _, truth = generate(2_000, seed=3)
    planted_kinds = {item["kind"] for item in truth["planted"]}
    assert planted_kinds == {name for name, kind in KINDS.items() if not kind.only_from}
    everything = [
        {"kind": i["kind"], "record_ids": i["record_ids"], "severity": i["severity"]}
        for i in truth["planted"]
    ]
    outcome = review_outcome()
    n = len(planted_kinds)
    assert f"({n}/{n} kinds)" in outcome(report(everything), truth)
    without = [f for f in everything if f["kind"] != "never_enriched"]
    assert f"({n - 1}/{n} kinds; missed: never_enriched)" in outcome(report(without), truth)
