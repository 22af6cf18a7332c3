"""HubSpot's pipelines response read as sent (issue 21): every shape it comes in, and
anything else refused with an IngestError naming where, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine.ingest import IngestError
from reviews.engine.ingest.pipelines import (
    is_pipelines_response,
    merge_pipelines,
    pipelines_from_data,
    pipelines_from_hubspot,
    pipelines_to_data,
)
from tests.engine.ingest import renewals_portal as portal


def test_a_bare_list_and_a_single_pipeline_read_like_the_response():
    response = portal.pipelines_response()

    assert pipelines_from_hubspot(response["results"]) == pipelines_from_hubspot(response)
    (single,) = pipelines_from_hubspot(response["results"][1])
    assert single.id == portal.RENEWALS_ID


def test_metadata_as_booleans_and_numbers_reads_too():
    (pipeline,) = pipelines_from_hubspot(
        {"results": [{"id": "7", "stages": [
            {"id": "1", "metadata": {"isClosed": True, "probability": 1}},
            {"id": "2", "metadata": {"isClosed": False, "probability": 0.3}},
            {"id": "3"}]}]}
    )  # fmt: skip

    assert [(s.closed, s.won) for s in pipeline.stages] == [(True, True), (False, False),
                                                             (False, False)]  # fmt: skip


@pytest.mark.parametrize(
    ("response", "error"),
    [
        ({"results": "x"}, 'not a HubSpot pipelines response: no list of pipelines'),
        ({"results": [{"stages": []}]}, "results[0].id: missing"),
        ({"results": [{"id": "1", "stages": {}}]}, "results[0].stages: not a list"),
        ({"results": [{"id": "1", "stages": [{"id": "a"}, {"id": "a"}]}]},
         'results[0].stages[1].id: repeated: "a"'),
        ({"results": [{"id": "1", "stages": []}, {"id": "1", "stages": []}]},
         'results[1].id: a second pipeline "1"'),
    ],
)  # fmt: skip
def test_malformed_responses_name_the_place(response, error):
    with pytest.raises(IngestError) as caught:
        pipelines_from_hubspot(response, name="p.json")

    assert caught.value.errors[0].startswith(f"p.json: {error}"), caught.value.errors


def test_stored_form_round_trips_and_merges_by_id():
    pipelines = pipelines_from_hubspot(portal.pipelines_response())
    stored = pipelines_to_data(pipelines)

    back = pipelines_from_data(stored)
    assert [s.won for s in back[portal.RENEWALS_ID].stages] == [False, True, False]
    assert all(p.source == "dataset" for p in back.values())
    renamed = pipelines_from_hubspot(
        {"results": [{"id": "default", "label": "Sales", "stages": []}]}
    )
    merged = merge_pipelines(stored, renamed)
    assert [(p["id"], p["label"]) for p in merged] == [
        (portal.RENEWALS_ID, "Renewals"), ("default", "Sales"),
    ]  # fmt: skip


def test_crm_objects_are_not_taken_for_pipelines():
    assert is_pipelines_response(portal.pipelines_response())
    assert not is_pipelines_response({"results": [{"id": "1", "properties": {}}]})
    assert not is_pipelines_response({"companies": [], "contacts": [], "deals": []})


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "label", "stages", "metadata", "isClosed", "probability",
                         "results", "x"]), inner, max_size=5),
    max_leaves=30,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_json)
def test_any_json_is_pipelines_or_an_ingest_error(document):
    try:
        pipelines = pipelines_from_hubspot(document)
    except IngestError as error:
        assert error.errors
        return
    for pipeline in pipelines:
        assert pipeline.id
        assert all(stage.id and (stage.closed or not stage.won) for stage in pipeline.stages)
