"""JSON nested past the readers' limit is refused by name (MAX_JSON_DEPTH), never a
crash: the top level, a value of a record, CRM API JSON, inside a ZIP, with a NUL that
makes the batch be cleaned (a walk of its values)."""

from __future__ import annotations

import pytest

from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.engine.ingest.errors import MAX_JSON_DEPTH
from tests.engine.ingest.helpers import RECEIVED, zipped


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def shapes(depth: int) -> dict[str, bytes]:
    inner = nested(depth)
    return {
        "top": inner.encode(),
        "object-top": ('{"a":' * depth + "1" + "}" * depth).encode(),
        "record-value": (
            '{"companies":[],"contacts":[],"deals":[{"id":"d","notes":INNER}]}'.replace(
                "INNER", inner
            )
        ).encode(),
        "record-value-nul": (
            '{"companies":[],"contacts":[],"deals":[{"id":"d\\u0000","notes":INNER}]}'.replace(
                "INNER", inner
            )
        ).encode(),
        "crm-api": (
            '{"results":[{"id":"1","properties":{"dealname":"x"},"associations":INNER}]}'.replace(
                "INNER", inner
            )
        ).encode(),
    }


def parse(name: str, data: bytes):
    return parse_upload([UploadedFile(name, data)], as_of=None, received_at=RECEIVED)


@pytest.mark.parametrize("shape", list(shapes(1)))
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH, 5 * MAX_JSON_DEPTH, 100_000])
def test_json_nested_past_the_limit_is_refused_naming_the_limit(shape, depth):
    with pytest.raises(IngestError) as caught:
        parse("deep.json", shapes(depth)[shape])

    (error,) = caught.value.errors
    assert error.startswith("deep.json: nested too deeply")
    assert "MAX_JSON_DEPTH" in error


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 100, 5 * MAX_JSON_DEPTH])
def test_a_nul_in_a_value_nested_just_under_the_limit_is_refused_or_read(depth):
    """Cleaning walks the values: deep ones end in the same named refusal, not a crash."""
    data = shapes(depth)["record-value-nul"]
    try:
        batch = parse("deep.json", data)
    except IngestError as error:
        assert "MAX_JSON_DEPTH" in error.errors[0]
    else:
        assert batch.deals[0].id == "d\\u0000"


def test_json_nested_past_the_limit_inside_a_zip_names_the_member():
    data = zipped({"export/deep.json": shapes(MAX_JSON_DEPTH * 2)["record-value"]})

    with pytest.raises(IngestError) as caught:
        parse("upload.zip", data)

    assert caught.value.errors[0].startswith("export/deep.json: nested too deeply")


def test_crm_api_json_across_files_nested_past_the_limit_names_the_file():
    deals = b'{"results":[{"id":"1","properties":{"dealname":"x"}}]}'
    files = [
        UploadedFile("deals.json", deals),
        UploadedFile("companies.json", shapes(MAX_JSON_DEPTH * 3)["crm-api"]),
    ]
    with pytest.raises(IngestError) as caught:
        parse_upload(files, as_of=None, received_at=RECEIVED)

    assert caught.value.errors[0].startswith("companies.json: nested too deeply")


def test_ordinary_nesting_is_read():
    batch = parse("ok.json", shapes(50)["record-value"])

    assert [deal.id for deal in batch.deals] == ["d"]
