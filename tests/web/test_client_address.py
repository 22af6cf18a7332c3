"""A web request's rate keys and client address behind proxies
(reviews/web/client_address.py): the limiter itself takes plain keys."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory

from reviews.web.client_address import client_ip, request_rate_keys


def request_from(remote: str, forwarded: str | None = None):
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


def test_client_ip_is_remote_addr_without_trusted_proxies(settings):
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(request_from("10.0.0.5", "6.6.6.6")) == "10.0.0.5"


def test_client_ip_reads_x_forwarded_for_behind_one_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    # The client claims 6.6.6.6; our proxy appended the address it saw.
    assert client_ip(request_from("10.0.0.5", "6.6.6.6, 198.51.100.4")) == "198.51.100.4"


def test_client_ip_counts_trusted_proxies_from_the_right(settings):
    settings.TRUSTED_PROXY_COUNT = 2
    forwarded = "6.6.6.6, 198.51.100.4, 10.0.0.9"
    assert client_ip(request_from("10.0.0.5", forwarded)) == "198.51.100.4"


def test_client_ip_with_fewer_entries_than_proxies_takes_the_leftmost(settings):
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_ip(request_from("10.0.0.5", "198.51.100.4")) == "198.51.100.4"


def test_client_ip_falls_back_to_remote_addr_for_a_bad_header(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_ip(request_from("10.0.0.5", "not-an-address")) == "10.0.0.5"
    assert client_ip(request_from("10.0.0.5", "")) == "10.0.0.5"
    assert client_ip(request_from("10.0.0.5", " 2001:DB8::1 ")) == "2001:db8::1"


@pytest.mark.django_db
def test_a_signed_in_request_is_keyed_by_its_user_an_anonymous_one_by_its_address(
    settings, django_user_model
):
    settings.TRUSTED_PROXY_COUNT = 0
    request = request_from("203.0.113.20")
    request.user = django_user_model.objects.create_user("alice", password="alice-pass-12")
    assert request_rate_keys(request) == [f"user:{request.user.pk}"]
    assert request_rate_keys(request, user_id=42) == ["user:42"]  # an API token's user
    request.user = AnonymousUser()
    assert request_rate_keys(request) == ["ip:203.0.113.20"]
    assert request_rate_keys(request, user_id=42) == ["user:42"]
