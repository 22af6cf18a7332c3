"""Where a deal's open/won/lost state comes from (issue 21): a defined pipeline, the
export's state columns, then the default pipeline; unknown only when nothing says."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviews.engine.batch import Batch, Deal, Pipeline, Stage
from reviews.engine.ingest.hubspot_records import _state
from reviews.engine.ingest.values import parse_flag, parse_probability

RENEWALS = Pipeline(
    id="98765432",
    label="Renewals",
    source="dataset",
    stages=[Stage("1234567", "Renewal Due"), Stage("1234568", "Renewal Won", True, True)],
)


def batch(*deals: Deal, pipelines=None, observed=None) -> Batch:
    return Batch(
        id=None, as_of=datetime(2026, 8, 1, tzinfo=UTC), source=None, companies=[],
        contacts=[], deals=list(deals), pipelines=pipelines or {},
        observed_stages=observed or {},
    )  # fmt: skip


def deal(stage: str, pipeline: str | None = None) -> Deal:
    return Deal(id="d", index=0, stage=stage, pipeline=pipeline)


@pytest.mark.parametrize(
    ("stage", "pipeline", "expected"),
    [
        ("Renewal Won", "Renewals", ("1234568", "dataset")),  # labels of both
        ("1234568", "98765432", ("1234568", "dataset")),  # ids of both
        ("renewal won", None, ("1234568", "dataset")),  # the one stage of that label
        ("Closed Won", "Sales Pipeline", ("closedwon", "default")),  # not defined: default
        ("closedwon", "Renewals", (None, None)),  # a defined pipeline without the stage
        ("Renewal Paused", "Renewals", (None, None)),
        ("Renewal Won", "Upsells", (None, None)),  # names a pipeline nothing defines
    ],
)
def test_stage_looked_up_in_the_defined_pipeline_then_the_default(stage, pipeline, expected):
    found, source = batch(pipelines={RENEWALS.id: RENEWALS}).stage_and_source(deal(stage, pipeline))

    assert ((found.id if found else None), source) == expected


def test_state_columns_describe_a_stage_no_pipeline_defines():
    observed = {("upsells", "upsellwon"): Stage("Upsell Won", closed=True, won=True)}
    b = batch(deal("Upsell Won", "Upsells"), observed=observed)

    stage, source = b.stage_and_source(b.deals[0])

    assert (stage.won, source) == (True, "state_columns")
    assert b.stage_source() == "state_columns"


def test_a_defined_pipeline_wins_over_state_columns():
    observed = {("renewals", "renewalwon"): Stage("Renewal Won", closed=False)}
    b = batch(deal("Renewal Won", "Renewals"), pipelines={RENEWALS.id: RENEWALS},
              observed=observed)  # fmt: skip

    assert b.stage_of(b.deals[0]).won is True
    assert b.stage_sources() == {"dataset": 1}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"isClosedWon": "true"}, (True, True)),
        ({"isClosedWon": "false", "isClosed": "true", "probability": "0"}, (True, False)),
        ({"isClosed": "false", "probability": "0.5"}, (False, False)),
        ({"isClosed": True, "probability": 1.0}, (True, True)),  # typed spreadsheet cells
        ({"probability": "1.0"}, (True, True)),
        ({"probability": "0"}, (True, False)),
        ({"probability": "0.4"}, (False, False)),
        ({"probability": "40%"}, (False, False)),
        ({"isClosedWon": "false"}, None),  # not won: open or lost, nothing settles which
        ({"probability": "high"}, None),
        ({}, None),
    ],
)
def test_state_from_hubspot_columns(fields, expected):
    state = _state(fields)

    assert (state[:2] if state else None) == expected


def test_flags_and_probabilities_as_exports_write_them():
    assert [parse_flag(v) for v in ("true", "FALSE", " Yes ", True, 0, "maybe")] == [
        True, False, True, True, False, None,
    ]  # fmt: skip
    assert [parse_probability(v) for v in ("0.2", "20%", "20", 1, "-1", "x", None)] == [
        0.2, 0.2, 0.2, 1.0, None, None, None,
    ]  # fmt: skip
