"""Webhooks cannot be aimed inward: every internal range, by address, by a name that
resolves inward, by redirect and with credentials, refused at delivery; the delivery
connects to the address it checked; of an answer only a short excerpt is kept."""

from __future__ import annotations

import ipaddress
import json
import time

import pytest
from django.utils import timezone

from alerts import delivery, destinations
from alerts.destinations import Refused
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.models import Dataset
from tests.alerts.receiver import Receiver
from tests.web.conftest import reviewed

INWARD = {
    "0.0.0.0": "unspecified",
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "192.168.1.1": "private",
    "100.64.0.1": "not a public address",  # shared (carrier-grade NAT)
    "169.254.10.1": "link-local",
    "169.254.169.254": "cloud metadata",
    "100.100.100.200": "cloud metadata",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "",  # broadcast: private and reserved
    "192.0.2.10": "private",  # documentation
    "198.18.0.1": "private",  # benchmarking
    "::": "unspecified",
    "::1": "loopback",
    "fe80::1": "link-local",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "fd00:ec2::254": "cloud metadata",
    "ff02::1": "multicast",
    "2001:db8::1": "private",  # documentation
    "::ffff:127.0.0.1": "embeds 127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254": "embeds 169.254.169.254",
    "::ffff:10.0.0.1": "embeds 10.0.0.1",
    "64:ff9b::7f00:1": "embeds 127.0.0.1",  # NAT64
    "2002:7f00:1::1": "embeds 127.0.0.1",  # 6to4
    "::7f00:1": "reserved",  # IPv4-compatible (deprecated)
}
PUBLIC = ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.215.14"]


@pytest.mark.parametrize("address", INWARD)
def test_every_inward_range_is_refused(address):
    reason = destinations.inward_reason(ipaddress.ip_address(address))
    assert reason is not None and INWARD[address] in reason


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address):
    assert destinations.inward_reason(ipaddress.ip_address(address)) is None


def resolving(table: dict[str, list[str]]):
    """A resolver that answers from `table`, as a DNS server under someone's control."""

    def resolver(host: str, port: int) -> list[str]:
        if host not in table:
            raise destinations.Unresolvable(f"{host} does not resolve")
        return table[host]

    return resolver


def bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


@pytest.mark.parametrize("address", INWARD)
def test_a_literal_inward_address_is_refused_before_any_resolution(address, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []

    def resolver(host, port):
        raise AssertionError("a literal address is not resolved")

    with pytest.raises(Refused, match="internal addresses"):
        destinations.pin(f"https://{bracketed(address)}:6379/x", resolver)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://user:pass@hooks.example.com/x", "credentials"),
        ("https://token@hooks.example.com/x", "credentials"),
        ("ftp://hooks.example.com/x", "only http and https"),
        ("gopher://127.0.0.1:6379/_INFO", "only http and https"),
        ("http://hooks.example.com/x", "only https"),
        ("https:///x", "no host"),
        ("https://hooks.example.com:99999/x", "not a valid URL"),
    ],
)
def test_urls_no_resolution_can_fix_are_refused(url, words, settings):
    settings.WEBHOOK_ALLOW_HTTP = False
    settings.WEBHOOK_ALLOWED_HOSTS = []
    with pytest.raises(Refused, match=words):
        destinations.pin(url, resolving({"hooks.example.com": ["93.184.215.14"]}))


def test_plain_http_is_allowed_with_the_setting_or_for_a_listed_receiver(settings):
    settings.WEBHOOK_ALLOW_HTTP = False
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.internal", "10.20.0.0/16"]
    table = {"hooks.internal": ["10.9.9.9"], "other.internal": ["10.20.3.4"]}
    assert destinations.pin("http://hooks.internal/x", resolving(table))[0].port == 80
    assert destinations.pin("http://other.internal/x", resolving(table))[1] == "10.20.3.4"
    public = resolving({"hooks.example.com": ["93.184.215.14"]})
    with pytest.raises(Refused, match="only https"):
        destinations.pin("http://hooks.example.com/x", public)
    settings.WEBHOOK_ALLOW_HTTP = True
    assert destinations.pin("http://hooks.example.com/x", public)[1] == "93.184.215.14"


def test_a_name_is_refused_when_any_of_its_addresses_is_inward(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    table = {
        "rebind.example.com": ["127.0.0.1"],
        "mixed.example.com": ["93.184.215.14", "10.0.0.7"],
        "v6.example.com": ["::ffff:169.254.169.254"],
        "ok.example.com": ["93.184.215.14"],
    }
    for name in ("rebind.example.com", "mixed.example.com", "v6.example.com"):
        with pytest.raises(Refused, match=f"{name} is "):
            destinations.pin(f"https://{name}/hook", resolving(table))
    destination, address = destinations.pin("https://ok.example.com/hook", resolving(table))
    assert (destination.host, destination.port, address) == ("ok.example.com", 443, "93.184.215.14")


def test_localhost_resolves_inward_through_the_system_resolver(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    with pytest.raises(Refused, match="localhost is 127.0.0.1, a loopback address"):
        destinations.pin("https://localhost:5432/")


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f000001", "127.1", "0177.0.0.1", "localhost.", "LOCALHOST"]
)
def test_other_spellings_of_loopback_are_refused_as_what_they_resolve_to(host, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    with pytest.raises(Refused, match="is 127.0.0.1, a loopback address"):
        destinations.pin(f"https://{host}/hook")


def test_the_allow_list_takes_names_addresses_and_networks(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["Hooks.Internal", "10.20.0.0/16", "::1"]
    table = {"hooks.internal": ["10.9.9.9"], "other.internal": ["10.20.3.4"]}
    assert destinations.pin("https://hooks.internal/x", resolving(table))[1] == "10.9.9.9"
    assert destinations.pin("https://other.internal/x", resolving(table))[1] == "10.20.3.4"
    assert destinations.pin("https://[::1]:8443/x")[1] == "::1"
    with pytest.raises(Refused):
        destinations.pin("https://10.21.0.1/x")


# --- at delivery -------------------------------------------------------------------------


def make_delivery(url: str) -> WebhookDelivery:
    subscription = WebhookSubscription.objects.create(
        dataset=Dataset.objects.create(name="d"), url=url, secret="s"
    )
    return WebhookDelivery.objects.create(
        subscription=subscription,
        run=reviewed(),
        body='{"event":"run.finished"}',
        next_attempt_at=timezone.now(),
    )


REFUSED_AT_DELIVERY = [
    "http://127.0.0.1:{port}/hook",
    "http://localhost:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://0.0.0.0:{port}/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://inward.example.com:{port}/hook",  # resolves to loopback (below)
    "http://user:pass@hooks.example.com/hook",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("template", REFUSED_AT_DELIVERY)
def test_inward_destinations_are_refused_at_delivery(template, settings, redis_url):
    """Saved before the rules (or aimed inward by DNS since): the delivery is refused,
    nothing reaches the receiver listening there, and the delivery ends at once."""
    settings.WEBHOOK_ALLOWED_HOSTS = []
    settings.WEBHOOK_ALLOW_HTTP = True  # what is refused here is the address
    with Receiver() as receiver:
        saved = make_delivery(template.format(port=receiver.port))
        resolver = resolving({"inward.example.com": ["127.0.0.1"], "localhost": ["127.0.0.1"]})
        assert delivery.attempt(saved.pk, resolver=resolver) is None
        assert receiver.received == []
    saved.refresh_from_db()
    assert saved.status == WebhookDelivery.Status.FAILED
    (attempt,) = saved.attempt_log.all()
    assert attempt.error.startswith("refused: ") and not attempt.ok
    assert attempt.response_code is None


@pytest.mark.django_db(transaction=True)
def test_a_name_that_turns_inward_after_saving_is_refused_then(settings, redis_url):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    settings.WEBHOOK_ALLOW_HTTP = True
    table = {"hooks.example.com": ["93.184.215.14"]}
    destinations.validate("https://hooks.example.com/hook", resolving(table))  # saved: fine
    saved = make_delivery("https://hooks.example.com/hook")
    table["hooks.example.com"] = ["10.0.0.5"]  # DNS changed
    delivery.attempt(saved.pk, resolver=resolving(table))
    saved.refresh_from_db()
    assert saved.status == WebhookDelivery.Status.FAILED
    assert "hooks.example.com is 10.0.0.5, a private address" in saved.attempt_log.get().error


@pytest.mark.django_db(transaction=True)
def test_the_delivery_connects_to_the_address_it_checked(settings, redis_url):
    """The name is resolved once, by the check: the receiver, reached at the checked
    address, sees the name in the Host header (the system resolver does not know it)."""
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1/32"]
    with Receiver() as receiver:
        saved = make_delivery(f"http://hooks.pinned.test:{receiver.port}/hook")
        calls = []

        def resolver(host, port):
            calls.append(host)
            return ["127.0.0.1"]

        assert delivery.attempt(saved.pk, resolver=resolver) is None
        (request,) = receiver.received
    assert calls == ["hooks.pinned.test"]
    assert request.headers["Host"] == f"hooks.pinned.test:{receiver.port}"
    saved.refresh_from_db()
    assert saved.status == WebhookDelivery.Status.DELIVERED


@pytest.mark.django_db(transaction=True)
def test_a_redirect_is_not_followed(settings, redis_url):
    """An allow-listed receiver answering 302 to an inward URL: recorded as its answer,
    never followed (the address it points to gets nothing), retried as a failure."""
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    with Receiver() as inside:
        with Receiver([302], headers={"Location": inside.url}, reply=b"") as outside:
            saved = make_delivery(outside.url)
            assert delivery.attempt(saved.pk) is not None  # retried later
            assert len(outside.received) == 1
        assert inside.received == []
    attempt = saved.attempt_log.get()
    assert (attempt.response_code, attempt.ok, attempt.address) == (302, False, "127.0.0.1")
    saved.refresh_from_db()
    assert saved.status == WebhookDelivery.Status.PENDING


@pytest.mark.django_db(transaction=True)
def test_a_redirect_from_an_allow_listed_receiver_to_loopback_reaches_nothing(
    settings, monkeypatch
):
    """The case of the report: only 127.0.0.2 is allowed, and its receiver answers 302 to
    a listener on 127.0.0.1. Neither the attempt nor its retry sends anything there, by
    any method, and each attempt records the address it connected to."""
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.2/32"]
    monkeypatch.setenv("WEBHOOK_ALLOWED_HOSTS", "127.0.0.2/32")
    with Receiver() as inside:
        target = f"http://127.0.0.1:{inside.port}/redirected"
        with Receiver([302], headers={"Location": target}, reply=b"", host="127.0.0.2") as outside:
            saved = make_delivery(outside.url)
            assert delivery.attempt(saved.pk) is not None
            WebhookDelivery.objects.filter(pk=saved.pk).update(next_attempt_at=timezone.now())
            assert delivery.attempt(saved.pk) is not None  # the retry
            assert [(r.method, r.path) for r in outside.received] == [("POST", "/hook")] * 2
        time.sleep(0.2)  # anything sent late would have arrived by now
        assert inside.received == []
    attempts = [(a.number, a.response_code, a.ok, a.address) for a in saved.attempt_log.all()]
    assert attempts == [(1, 302, False, "127.0.0.2"), (2, 302, False, "127.0.0.2")]


@pytest.mark.django_db(transaction=True)
def test_an_attempt_that_connects_nowhere_records_no_address(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    settings.WEBHOOK_ALLOW_HTTP = True
    saved = make_delivery("http://127.0.0.1:9/hook")  # refused before any connection
    delivery.attempt(saved.pk)
    assert saved.attempt_log.get().address == ""


SECRET_REPLY = (
    b"HTTP-ish internal service\x00\x1b[31m says: "
    + b"x" * 300
    + b" INTERNAL-SECRET db_password=hunter2"
)


@pytest.mark.django_db(transaction=True)
def test_only_a_short_printable_excerpt_of_an_answer_is_kept(settings, redis_url):
    with Receiver([500], reply=SECRET_REPLY * 40) as receiver:
        saved = make_delivery(receiver.url)
        delivery.attempt(saved.pk)
    attempt = WebhookAttempt.objects.get(delivery=saved)
    assert len(attempt.excerpt) <= 200
    assert attempt.excerpt.startswith("HTTP-ish internal service [31m says: xxx")
    assert attempt.excerpt.isprintable()
    stored = json.dumps(
        list(WebhookAttempt.objects.values()) + list(WebhookDelivery.objects.values()),
        default=str,
    )
    assert "INTERNAL-SECRET" not in stored and "hunter2" not in stored
