"""The staff page that sends a run's to-do list to the owners as HubSpot tasks: a dry
run on GET, nothing sent without the confirmation, one task per finding once confirmed,
none on a second approval, and no page for a member who is not staff."""

from __future__ import annotations

import pytest
from django.urls import reverse

from connectors import pulls
from connectors.models import SentTask
from reviews.models import Dataset
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.connectors.test_owner_tasks import TOKEN, pull_and_review

pytestmark = pytest.mark.django_db


def test_staff_dry_run_then_confirm_sends_each_finding_once(client, settings, django_user_model):
    portal = problem_portal(size=6)
    with serving(portal, settings):
        run = pull_and_review(pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN))
        url = reverse("reviews:send_tasks", args=[run.pk])
        client.force_login(django_user_model.objects.create_user("member", password="x" * 12))
        assert client.get(url).status_code == 403

        client.force_login(django_user_model.objects.create_user("ops", is_staff=True))
        page = client.get(url).content.decode()
        assert 'data-outcome="would create"' in page and "Create the tasks in HubSpot" in page
        unconfirmed = client.post(url)
        assert unconfirmed.status_code == 400 and portal.tasks == {}

        sent = client.post(url, {"confirm": "1"}).content.decode()
        made = len(portal.tasks)
        assert made and sent.count('data-outcome="created"') == made == SentTask.objects.count()
        client.post(url, {"confirm": "1"})
        assert len(portal.tasks) == made
