"""The dataset page's rule editor (docs/rules.md#a-teams-own-rules): the section, the
form's rows and the expression box previewed, saved, switched on from the library and
removed, each change a policy version; who may see and who may change."""

from __future__ import annotations

import pytest

from reviews.models import Dataset, PolicyVersion
from reviews.orchestration.dataset import team_rules
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.web import team_rules_views
from tests.engine.team_rules.exports import AS_OF, export_files

pytestmark = pytest.mark.django_db

FORM = {
    "id": "contract_sent_no_next_step",
    "object": "deals",
    "severity": "critical",
    "title": "Contract sent with no next step",
    "fix": "Write the next step",
    "prop_1": "Deal Stage",
    "op_1": "equals",
    "value_1": "Contract Sent",
    "prop_2": "Next Step",
    "op_2": "is_empty",
    "value_2": "",
    "prop_3": "",
    "op_3": "equals",
    "value_3": "",
    "when": "",
}


def synced() -> Dataset:
    submission = submit(export_files(), as_of=AS_OF, dataset="acme", dispatch=False)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    return Dataset.objects.get(name="acme")


@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_user("boss", password="pw", is_staff=True)
    client.force_login(user)
    return user


def test_the_rows_previewed_saved_and_removed(client, staff):
    dataset = synced()
    page = client.get("/datasets/acme/").content.decode()
    assert "/datasets/acme/rules/" in page
    section = client.get("/datasets/acme/rules/", headers={"HX-Request": "true"}).content
    assert b"No team rule yet" in section and b"<html" not in section
    assert b"customer_without_won_deal.yaml" in section  # the library

    preview = client.post("/datasets/acme/rules/preview/", FORM).content.decode()
    assert 'data-count="1"' in preview and "<code>5001</code> Vertex — cell automation" in preview
    assert "</strong> deal in the last sync" in preview  # one deal, not "1 deals"
    assert "replay-count" not in preview  # as the form is typed: the last sync alone
    replayed = client.post("/datasets/acme/rules/preview/", {**FORM, "replay": "1"})
    assert '<span class="replay-count"' in replayed.content.decode()
    assert not PolicyVersion.objects.exists()

    bad = client.post("/datasets/acme/rules/preview/", {**FORM, "when": "getenv('HOME') = 1"})
    assert b"function getenv() is not allowed" in bad.content
    lacking = client.post("/datasets/acme/rules/preview/", {**FORM, "prop_2": "Forecast"})
    assert b"Could not run on the last sync" in lacking.content
    assert b"have no &quot;Forecast&quot;" in lacking.content
    quoted = client.post("/datasets/acme/rules/preview/", {**FORM, "prop_2": 'Job" Title'})
    assert b"have no &quot;Job&quot;&quot; Title&quot;" in quoted.content

    saved = client.post("/datasets/acme/rules/add/", {**FORM, "reason": "our stage rule"})
    assert saved.status_code == 302
    [rule] = team_rules.rules_of(dataset)
    assert rule.when == (
        "CAST(\"Deal Stage\" AS VARCHAR) = 'Contract Sent' AND "
        "coalesce(trim(CAST(\"Next Step\" AS VARCHAR)), '') = ''"
    )
    section = client.get("/datasets/acme/rules/").content.decode()
    assert 'data-rule="contract_sent_no_next_step"' in section
    assert "our stage rule" in section and "team rule contract_sent_no_next_step" in section

    client.post("/datasets/acme/rules/add/", {"library": "company_without_domain.yaml"})
    assert [r.id for r in team_rules.rules_of(dataset)] == [
        "contract_sent_no_next_step",
        "company_without_domain",
    ]
    version = PolicyVersion.objects.order_by("-number").first()
    assert version.reason == "library rules switched on: company_without_domain.yaml"
    assert version.created_by == staff

    client.post("/datasets/acme/rules/remove/", {"id": "company_without_domain", "reason": "no"})
    assert [r.id for r in team_rules.rules_of(dataset)] == ["contract_sent_no_next_step"]
    refused = client.post(
        "/datasets/acme/rules/add/", {**FORM, "id": "negative_amount"}, follow=True
    )
    assert b"is a built-in kind" in refused.content
    assert PolicyVersion.objects.count() == 3


@pytest.mark.own_workspaces
def test_the_editor_is_the_members_and_changing_rules_the_reviewers(client, django_user_model):
    from workspaces.models import Membership, Role, default_workspace

    Dataset.objects.create(name="acme")
    outsider = django_user_model.objects.create_user("out", password="pw")
    viewer = django_user_model.objects.create_user("view", password="pw")
    Membership.objects.create(workspace=default_workspace(), user=viewer, role=Role.VIEWER)

    client.force_login(outsider)
    assert client.get("/datasets/acme/rules/").status_code == 404
    assert client.post("/datasets/acme/rules/preview/", FORM).status_code == 404
    client.force_login(viewer)
    assert client.get("/datasets/acme/rules/").status_code == 200
    assert client.post("/datasets/acme/rules/add/", FORM).status_code == 403
    assert client.post("/datasets/acme/rules/remove/", {"id": "x"}).status_code == 403
    assert not PolicyVersion.objects.exists()


def test_a_library_file_switched_on_keeps_the_reason_typed_beside_it(client, staff):
    dataset = synced()
    section = client.get("/datasets/acme/rules/").content.decode()
    row = section.split('data-file="company_without_domain.yaml"')[1].split("</tr>")[0]
    assert 'name="reason"' in row  # the library's form asks why, as the others do
    client.post(
        "/datasets/acme/rules/add/",
        {"library": "company_without_domain.yaml", "reason": "sales asked for domains"},
    )
    assert [r.id for r in team_rules.rules_of(dataset)] == ["company_without_domain"]
    version = PolicyVersion.objects.order_by("-number").first()
    assert version.reason == "sales asked for domains"
    assert "sales asked for domains" in client.get("/datasets/acme/rules/").content.decode()


def test_the_library_is_read_once_and_each_caller_gets_lists_of_its_own(monkeypatch, tmp_path):
    first = team_rules_views.library()
    files = sorted(path.name for path in team_rules_views.LIBRARY.glob("*.yaml"))
    monkeypatch.setattr(team_rules_views, "LIBRARY", tmp_path)  # no file here
    second = team_rules_views.library()

    assert [item["file"] for item in second] == files  # not read again
    assert second == first and all(item["rules"] for item in second)
    first[0]["rules"].clear()
    first.pop()
    assert team_rules_views.library() == second
