"""What the OpenAPI document says the API reads (reviews.web.api.bodies, the times of
reviews.web.api.common, the fix plan's parameters), checked against the readers
themselves: a body or parameter the document calls valid is one the server takes.
tests/web/api/test_openapi.py sends generated requests to a live server."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.engine.ingest.json_batch import dataset_name_problem
from reviews.web.api.api import api
from reviews.web.api.bodies import (
    DATASET_NAME_PATTERN,
    DATASET_PARAM_SCHEMA,
    JSON_BATCH,
    PIPELINES_BODY,
)
from reviews.web.api.common import MOMENT_SCHEMA, json_int, parse_moment, utc
from tests.services import ROOT
from tests.uploads import DATA

FORMATS = FormatChecker()
SAMPLES = [*sorted((ROOT / "samples").glob("*.json")), DATA / "seed-example.json"]


def valid(schema: dict, value: object) -> bool:
    return Draft202012Validator(schema, format_checker=FORMATS).is_valid(value)


def reads(document: dict) -> bool:
    """Whether the upload reader takes this JSON body as a batch."""
    upload = UploadedFile(name="body.json", data=json.dumps(document).encode())
    try:
        parse_upload([upload], as_of=None, received_at=datetime.now(UTC))
    except IngestError:
        return False
    return True


@pytest.mark.parametrize(
    "text",
    ["0.5", "1785456000", "yesterday", "2026-08-01T09:00:00Z junk", "2026-02-30", "", "T09:00"],
)
def test_a_time_parameter_is_an_iso_date_or_date_time_only(text):
    with pytest.raises(ValueError):
        parse_moment(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-08-01T09:00:00Z", datetime(2026, 8, 1, 9, tzinfo=UTC)),
        ("2026-08-01t09:00:00.5z", datetime(2026, 8, 1, 9, 0, 0, 500000, tzinfo=UTC)),
        ("2026-08-01 11:00+02:00", datetime(2026, 8, 1, 9, tzinfo=UTC)),
        ("2026-08-01T09:00:00", datetime(2026, 8, 1, 9, tzinfo=UTC)),  # no zone: UTC
        ("2026-08-01", datetime(2026, 8, 1, tzinfo=UTC)),  # its midnight UTC
    ],
)
def test_a_time_parameter_is_read_as_utc(text, expected):
    assert utc(parse_moment(text)) == expected


def test_a_time_past_what_python_holds_once_in_utc_is_its_end():
    assert utc(parse_moment("0001-01-01T00:00:00+01:00")) == datetime.min.replace(tzinfo=UTC)
    assert utc(parse_moment("9999-12-31T23:59:59-01:00")) == datetime.max.replace(tzinfo=UTC)


def _offset(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


# RFC 3339 date-times (any offset under a day, "Z" too), and dates: what the schema allows.
RFC3339 = st.builds(
    lambda day, time, zone: f"{day.isoformat()}T{time.isoformat()}{zone}",
    st.dates(),
    st.times(),
    st.just("Z") | st.integers(-1439, 1439).map(_offset),
) | st.dates().map(str)


@given(RFC3339)
@settings(max_examples=300)
def test_every_time_the_schema_allows_is_read(text):
    assert valid(MOMENT_SCHEMA, text)
    assert utc(parse_moment(text)).tzinfo is UTC


NAMES = st.text(st.characters(codec="utf-8"), max_size=210) | st.text(
    " \t\x1c\x1fab\x00", max_size=5
)


@given(NAMES)
@settings(max_examples=500)
def test_the_dataset_name_pattern_is_the_readers_rule(name):
    assert (re.search(DATASET_NAME_PATTERN, name) is not None) == (
        dataset_name_problem(name) is None
    )


@pytest.mark.parametrize("name", ["", "  ", "acme", " acme ", "a" * 200, "\tacme\x1f"])
def test_a_blank_or_good_dataset_parameter_is_valid(name):
    assert valid(DATASET_PARAM_SCHEMA, name)


@pytest.mark.parametrize("name", ["a" * 201, "ac\x01me", "ac\nme"])
def test_a_dataset_parameter_the_reader_refuses_is_invalid(name):
    assert not valid(DATASET_PARAM_SCHEMA, name)
    assert dataset_name_problem(name)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_sample_batches_fit_the_json_batch_schema(path):
    document = json.loads(path.read_bytes())
    assert valid(JSON_BATCH, document) == reads(document)


@pytest.mark.parametrize(
    "document",
    [
        {},  # was answered 400 while the schema said any object
        {"companies": [], "contacts": []},
        {"companies": [], "contacts": [], "deals": [{"name": "no id"}]},
        {"companies": [], "contacts": [], "deals": [{"id": " "}]},
        {"companies": [], "contacts": [], "deals": [], "exportedAt": "soon"},
        {"companies": [], "contacts": [], "deals": [], "dataset": " "},
        {"companies": [], "contacts": [], "deals": [], "pipelines": [{"id": "p"}]},
        {"companies": None, "contacts": [], "deals": []},
    ],
)
def test_a_json_body_the_reader_refuses_is_invalid_by_the_schema(document):
    assert not reads(document)
    assert not valid(JSON_BATCH, document)


@pytest.mark.parametrize(
    "document",
    [
        {"companies": [], "contacts": [], "deals": []},
        {"companies": [{"id": "c", "amount": {"odd": 1}}], "contacts": [], "deals": []},
        {"companies": [], "contacts": [], "deals": [], "exportedAt": 1785456000000},
        {"companies": [], "contacts": [], "deals": [], "exportedAt": "2026-08-01"},
        {"companies": [], "contacts": [], "deals": [], "dataset": ""},
    ],
)
def test_a_json_body_the_schema_allows_is_read(document):
    assert valid(JSON_BATCH, document)
    assert reads(document)


def pipelines_schema() -> dict:
    return PIPELINES_BODY["content"]["application/json"]["schema"]


@pytest.mark.parametrize(
    ("document", "ok"),
    [
        ({}, False),  # was answered 400 while the schema said any object
        ({"results": []}, False),  # "the response lists no pipeline"
        ({"results": [{"id": "default", "stages": [{"id": "won"}]}]}, True),
        ([{"id": 7, "stages": []}], True),
        ({"id": "default", "stages": [{"id": 1, "metadata": {"isClosed": "true"}}]}, True),
        ({"id": "default"}, False),
    ],
)
def test_the_pipelines_body_schema(document, ok):
    assert valid(pipelines_schema(), document) == ok


def fix_plan_query() -> dict:
    operation = api.get_openapi_schema()["paths"]["/api/v1/runs/{run_id}/fix-plan"]["get"]
    [plan] = [p for p in operation["parameters"] if p["in"] == "query"]
    return plan


def test_the_fix_plan_parameters_say_a_csv_needs_kind():
    plan = fix_plan_query()
    assert (plan["style"], plan["explode"]) == ("form", True)  # ?format=csv&kind=merges
    assert not valid(plan["schema"], {"format": "csv"})
    assert not valid(plan["schema"], {"format": "csv", "owner": "ana"})
    for query in ({}, {"format": "json"}, {"kind": "tasks"}, {"format": "csv", "kind": "merges"}):
        assert valid(plan["schema"], query), query


@pytest.mark.parametrize(("value", "expected"), [(3, 3), (3.0, 3), (0, 0)])
def test_a_json_whole_number_is_read_as_json_schema_reads_it(value, expected):
    assert json_int(value) == expected


@pytest.mark.parametrize("value", [False, True, "3", 3.5, -1, 2**31, None])
def test_a_json_whole_number_is_not_a_boolean_text_or_out_of_range(value):
    with pytest.raises(ValueError):
        json_int(value)
