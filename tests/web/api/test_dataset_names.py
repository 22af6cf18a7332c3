"""Dataset names are reachable through the API whatever they hold: a `/` (sent as is or
as %2F), spaces, dots, non-ASCII; the dismissal routes too."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from reviews.models import Dataset

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

NAMES = ["acme/hubspot", "eu/prod/crm", "a b.c", "Müller & Söhne", "x/dismissals-not"]


@pytest.mark.parametrize("name", NAMES)
def test_a_dataset_name_with_any_characters_is_reachable(http, name):
    Dataset.objects.create(name=name)

    for path in (name, quote(name, safe="")):
        response = http.get(f"/datasets/{path}")
        assert response.status_code == 200, (path, response.text)
        assert response.json()["name"] == name


def test_dismissal_routes_take_a_name_with_a_slash(http):
    Dataset.objects.create(name="acme/hubspot")

    made = http.post("/datasets/acme/hubspot/dismissals", json={"fingerprint": "f" * 64,
                                                                "reason": "r"})  # fmt: skip
    undone = http.delete(f"/datasets/acme/hubspot/dismissals/{'f' * 64}")

    assert made.status_code in (201, 400), made.text  # a fingerprint it never saw: 400
    assert made.status_code != 404 and undone.status_code != 404, undone.text
