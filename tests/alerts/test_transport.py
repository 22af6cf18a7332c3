"""One attempt's POST: to the pinned address with the name's Host, SNI and certificate,
within one deadline however slowly the answer trickles."""

from __future__ import annotations

import ssl
import time

import pytest
import trustme

from alerts import destinations, transport
from tests.alerts.receiver import Receiver, TrickleReceiver


def pinned(url: str) -> destinations.Destination:
    return destinations.split(url)


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


def server_context(ca, name: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(name).configure_cert(context)
    return context


def client_context(ca) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def test_https_to_the_pinned_address_checks_the_names_certificate(ca):
    """The URL's name is never resolved by the transport: it connects to the address it
    is given and does TLS for the name (SNI, certificate, Host)."""
    with Receiver(tls=server_context(ca, "hooks.pinned.test")) as receiver:
        url = f"https://hooks.pinned.test:{receiver.port}/hook"
        answer = transport.post(
            pinned(url),
            "127.0.0.1",
            b"{}",
            {"Content-Type": "application/json"},
            deadline_seconds=5,
            ssl_context=client_context(ca),
        )
        assert answer.ok, answer
        (request,) = receiver.received
    assert request.headers["Host"] == f"hooks.pinned.test:{receiver.port}"


def test_a_certificate_for_another_name_fails(ca):
    with Receiver(tls=server_context(ca, "someone-else.test")) as receiver:
        url = f"https://hooks.pinned.test:{receiver.port}/hook"
        answer = transport.post(
            pinned(url), "127.0.0.1", b"{}", {}, deadline_seconds=5, ssl_context=client_context(ca)
        )
        assert receiver.received == []
    assert not answer.ok and answer.code is None
    assert "certificate" in answer.error.lower()


def test_a_trickling_answer_is_cut_at_the_deadline():
    # The attempt began 1.5 s before its POST (`started`: a name resolved slowly, say), so
    # 0.5 s of its 2 s is left for the answer: the cut is the same, without waiting out
    # the whole deadline. A byte every 0.1 s keeps every read within any read timeout.
    with TrickleReceiver(interval=0.1) as receiver:
        began = time.monotonic() - 1.5
        answer = transport.post(
            pinned(receiver.url), "127.0.0.1", b"{}", {}, deadline_seconds=2, started=began
        )
        took = time.monotonic() - began
        assert len(receiver.arrivals) == 1
    assert 1.9 <= took < 3.0, took
    assert (answer.code, answer.ok) == (None, False)
    assert answer.error == "no complete answer within the deadline of 2 s"


def test_an_excerpt_is_short_and_printable():
    assert transport.excerpt(b"a\x00b\r\n\tc \xff\xfe" + b"d" * 500) == "a b c " + "d" * 194
    assert transport.excerpt("é ok <b>".encode()) == "é ok <b>"
