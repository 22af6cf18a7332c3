"""One rate limit for the dashboard and the API: a signed-in review request counts
against its user and its workspace on either path, so past the API's 429 the same user
is refused on the dashboard too (and the other way round), from wherever they connect;
never against its address, so colleagues behind one office address each keep their own
limit."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import ReviewRun
from tests.uploads import DATA
from tests.web.conftest import reviewed
from workspaces.models import Membership, Role, Workspace, default_workspace

pytestmark = pytest.mark.django_db

SEED = (DATA / "seed-example.json").read_bytes()
HOME, OFFICE, CAFE = "198.51.100.7", "203.0.113.20", "192.0.2.44"


@pytest.fixture
def limit_1(settings, redis_url):
    settings.RATE_LIMIT_PER_HOUR = 1  # 1 fresh, 2 served by failback or cache, 3 refused


def api_upload(token: str, address: str, capture) -> int:
    with capture(execute=True):
        response = Client(REMOTE_ADDR=address).post(
            reverse("api:batches"),
            data=SEED,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
    return response.status_code


def page_upload(user, address: str, capture, workspace: int | None = None) -> int:
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    chosen = {} if workspace is None else {"workspace": workspace}
    with capture(execute=True):
        response = client.post(
            reverse("reviews:upload"),
            {"files": SimpleUploadedFile("seed-example.json", SEED), **chosen},
        )
    return response.status_code


def test_past_the_apis_429_the_same_user_is_refused_on_the_dashboard(
    limit_1, django_user_model, django_capture_on_commit_callbacks
):
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    token = create_token(user, "nightly").secret
    capture = django_capture_on_commit_callbacks
    assert [api_upload(token, HOME, capture) for _ in range(3)] == [202, 202, 429]
    # The same user, signed in on the dashboard from another address: the same count.
    assert page_upload(user, OFFICE, capture) == 429


def test_past_the_dashboards_429_the_same_user_is_refused_by_the_api(
    limit_1, django_user_model, django_capture_on_commit_callbacks
):
    user = django_user_model.objects.create_user("member", password="member-pass-1")
    capture = django_capture_on_commit_callbacks
    assert [page_upload(user, HOME, capture) for _ in range(2)] == [302, 302]
    token = create_token(user, "script").secret
    assert api_upload(token, CAFE, capture) == 429
    # and the re-run button of either path
    run = ReviewRun.objects.earliest("id")
    client = Client(REMOTE_ADDR=OFFICE)
    client.force_login(user)
    assert client.post(reverse("reviews:rerun", args=[run.pk])).status_code == 429
    rerun = Client(REMOTE_ADDR=OFFICE).post(
        reverse("api:rerun", kwargs={"run_id": run.pk}),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert rerun.status_code == 429


def test_two_users_behind_one_address_each_keep_their_own_limit(
    limit_1, django_user_model, django_capture_on_commit_callbacks
):
    """The office NAT of the report: one colleague past the limit does not refuse the
    other's first upload, API call or re-run from the same address."""
    capture = django_capture_on_commit_callbacks
    first = django_user_model.objects.create_user("first", password="first-pass-12")
    second = django_user_model.objects.create_user("second", password="second-pass-1")
    assert [page_upload(first, OFFICE, capture) for _ in range(3)] == [302, 302, 429]
    assert page_upload(second, OFFICE, capture) == 302
    client = Client(REMOTE_ADDR=OFFICE)
    client.force_login(second)
    run = ReviewRun.objects.earliest("id")
    assert client.post(reverse("reviews:rerun", args=[run.pk])).status_code == 302
    third = django_user_model.objects.create_user("third", password="third-pass-12")
    assert api_upload(create_token(third, "other").secret, OFFICE, capture) == 202
    # The first is still refused, from the office or from home.
    assert page_upload(first, HOME, capture) == 429


def test_an_unlimited_setting_limits_neither_path(settings, redis_url, django_user_model):
    settings.RATE_LIMIT_PER_HOUR = 0
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    token = create_token(user, "nightly").secret
    run = reviewed()
    codes = {
        Client(REMOTE_ADDR=HOME)
        .post(
            reverse("api:rerun", kwargs={"run_id": run.pk}),
            headers={"Authorization": f"Bearer {token}"},
        )
        .status_code
        for _ in range(4)
    }
    assert codes == {202}


def test_the_members_of_a_workspace_share_its_limit_across_paths(
    settings, redis_url, django_user_model, django_capture_on_commit_callbacks
):
    settings.RATE_LIMIT_PER_HOUR = 100  # the users and addresses stay well within theirs
    settings.RATE_LIMIT_PER_WORKSPACE_PER_HOUR = 1  # 1 fresh, 2 by failback or cache, 3 refused
    capture = django_capture_on_commit_callbacks
    alice = django_user_model.objects.create_user("alice", password="alice-pass-12")
    bob = django_user_model.objects.create_user("bob", password="bob-pass-1234")
    sales = Workspace.objects.create(name="sales")
    Membership.objects.create(workspace=sales, user=bob, role=Role.REVIEWER)
    token = create_token(alice, "nightly", workspace=default_workspace()).secret
    assert api_upload(token, HOME, capture) == 202
    # Bob's uploads in another workspace are not counted against the first one.
    assert [page_upload(bob, OFFICE, capture, sales.pk) for _ in range(2)] == [302, 302]
    assert page_upload(bob, OFFICE, capture, default_workspace().pk) == 302
    assert set(ReviewRun.objects.values_list("batch__workspace", flat=True)) == {
        sales.pk,
        default_workspace().pk,
    }
    # Alice's API and Bob's dashboard: the workspace's third request of the hour.
    assert api_upload(token, CAFE, capture) == 429
    assert page_upload(bob, OFFICE, capture, default_workspace().pk) == 429
    assert page_upload(bob, OFFICE, capture, sales.pk) == 429  # sales' own third
