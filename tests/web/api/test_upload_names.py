"""A JSON body keeps the name its client gave it (`?filename=` or Content-Disposition),
and the run's `batch.id` is the database id the upload answered, with the batch's own
id as `external_id` (docs/output.md)."""

from __future__ import annotations

import pytest

from reviews.models import Batch
from tests.uploads import DATA
from tests.web.api.conftest import poll_until_finished

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SEED = DATA / "seed-example.json"
JSON = {"Content-Type": "application/json"}


def stored_name(response) -> str:
    assert response.status_code == 202, response.text
    return Batch.objects.get(pk=response.json()["batch_id"]).files.get().name


@pytest.mark.parametrize(
    ("headers", "params", "expected"),
    [
        ({}, {}, "body.json"),
        ({}, {"filename": "acme-2026-08-08.json"}, "acme-2026-08-08.json"),
        ({"Content-Disposition": 'attachment; filename="nightly.json"'}, {}, "nightly.json"),
        ({"Content-Disposition": "attachment; filename*=UTF-8''S%C3%BCd.json"}, {}, "Süd.json"),
        # Only the last path part; always read as JSON.
        ({}, {"filename": "../../etc/exports/acme.csv"}, "acme.csv.json"),
        ({}, {"filename": "C:\\exports\\acme"}, "acme.json"),
        # The query parameter wins over the header.
        (
            {"Content-Disposition": 'attachment; filename="b.json"'},
            {"filename": "a.json"},
            "a.json",
        ),
    ],
)
def test_a_json_body_keeps_the_name_its_client_gave(http, headers, params, expected):
    response = http.post(
        "/batches", content=SEED.read_bytes(), headers=JSON | headers, params=params
    )
    assert stored_name(response) == expected


@pytest.mark.parametrize(
    ("headers", "params"),
    [
        ({}, {"filename": "x" * 2995 + ".json"}),
        ({}, {"filename": "x" * 3000}),
        ({"Content-Disposition": f'attachment; filename="{"x" * 2995}.json"'}, {}),
    ],
)
def test_a_long_name_is_cut_to_500_characters_keeping_its_extension(http, headers, params):
    # docs/input.md: a file name is cut to 500 characters, keeping its extension.
    response = http.post(
        "/batches", content=SEED.read_bytes(), headers=JSON | headers, params=params
    )
    assert stored_name(response) == "x" * 249 + "…" + "x" * 245 + ".json"


def test_the_run_json_names_the_batch_by_its_database_id(http, worker):
    body = SEED.read_bytes()
    response = http.post("/batches", content=body, headers=JSON, params={"filename": "s.json"})
    answer = response.json()
    report = poll_until_finished(http, answer["urls"]["api"])
    batch = Batch.objects.get(pk=answer["batch_id"])
    assert report["batch"]["id"] == answer["batch_id"] == batch.pk
    assert report["batch"]["external_id"] == (batch.external_id or None)
