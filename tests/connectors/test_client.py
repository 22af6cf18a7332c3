"""The HubSpot client against the loopback stand-in: paging, the rate-limit headers, 429
as HubSpot sends it, 5xx and timeouts, the search cap, a refused token. No Django."""

from __future__ import annotations

import time

import pytest

from connectors.hubspot import associations
from connectors.hubspot.client import (
    DailyLimitReached,
    HubSpotClient,
    HubSpotError,
    Limits,
    TokenRefused,
)
from tests.connectors.standin import Portal, StandIn

TOKEN = "pat-na1-good"


def fast_limits(**more) -> Limits:
    return Limits(**{"share": 1.0, "backoff_seconds": 0.01, "timeout_seconds": 5, **more})


def companies(portal: Portal, n: int, *, start: int = 1) -> None:
    for i in range(start, start + n):
        portal.put("companies", str(i), {"name": f"Company {i}", "domain": f"c{i}.example"})


def test_list_pages_with_after_until_the_last_page():
    portal = Portal()
    companies(portal, 250)
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        pages = list(client.list_pages("companies", ["name", "domain"]))
    assert [len(objects) for objects, _ in pages] == [100, 100, 50]
    assert [after for _, after in pages] == ["101", "201", ""]
    assert pages[0][0][0]["properties"]["name"] == "Company 1"
    assert client.requests == 3


def test_list_pages_resume_from_a_cursor():
    portal = Portal()
    companies(portal, 250)
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        pages = list(client.list_pages("companies", ["name"], after="201"))
    assert [len(objects) for objects, _ in pages] == [50]


@pytest.mark.slow
def test_keeps_within_its_share_of_the_interval_limit_and_never_sees_429():
    portal = Portal()
    companies(portal, 1200)
    portal.max_per_interval, portal.interval_ms = 4, 400
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits(share=0.5)) as client:
        started = time.monotonic()
        pages = list(client.list_pages("companies", ["name"]))
        took = time.monotonic() - started
    assert len(pages) == 12
    assert [status for *_, status in portal.log].count(429) == 0
    # 2 requests per 0.4 s once the headers told it the limit (4 per 400 ms, half of it)
    assert took >= 0.4 * 4
    assert client.waited >= 0.4 * 4


def test_slows_down_when_other_integrations_use_the_portal_limit():
    portal = Portal()
    companies(portal, 300)
    portal.max_per_interval, portal.interval_ms = 10, 300
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits(share=0.5)) as client:
        client._pace(False)  # learn nothing yet
        portal.sent.extend([time.monotonic()] * 7)  # another app's 7 requests
        list(client.list_pages("companies", ["name"]))
    assert client.waited > 0


def test_429_with_hubspots_headers_and_body_waits_the_interval_then_goes_on():
    portal = Portal()
    companies(portal, 5)
    portal.interval_ms = 200
    portal.fail_next = [429]
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        (page,) = list(client.list_pages("companies", ["name"]))
    assert len(page[0]) == 5
    assert [s for *_, s in portal.log] == [429, 200]
    assert client.waited == pytest.approx(0.2)


def test_429_waits_retry_after_when_given():
    portal = Portal()
    companies(portal, 1)
    portal.max_per_interval = 1
    portal.retry_after = "0.3"
    slept: list[float] = []
    with StandIn(portal) as api:
        client = HubSpotClient(api.url, TOKEN, fast_limits(max_waits=1), sleep=slept.append)
        client.list_pages("companies", ["name"]).__next__()
        with pytest.raises(DailyLimitReached):  # the limit never clears: slept is a no-op
            client.request("GET", "/crm/v3/objects/companies")
    assert 0.3 == pytest.approx(slept[1], abs=0.01)


def test_the_daily_floor_stops_before_the_next_request_and_names_its_setting():
    """Calls left at or under the floor: nothing more is sent (the answers already
    received are kept), and the error says how many are left and which setting."""
    portal = Portal()
    companies(portal, 700)
    portal.daily, portal.daily_used = 1_000, 895
    with (
        StandIn(portal) as api,
        HubSpotClient(api.url, TOKEN, fast_limits(daily_floor=100)) as client,
    ):
        pages = []
        with pytest.raises(DailyLimitReached) as stopped:
            for objects, _ in client.list_pages("companies", ["name"]):
                pages.append(objects)
    # 104, 103, 102, 101, 100 left after each answer: the sixth is not sent.
    assert len(pages) == 5 and portal.requests == 5
    assert "100 of its 1,000 daily API requests left" in str(stopped.value)
    assert "HUBSPOT_DAILY_FLOOR" in str(stopped.value)
    assert client.daily_left == 100


def test_a_portal_past_half_its_day_is_still_pulled_above_the_floor():
    """The guard counts the calls left, not a share of the day: a busy portal with 80% of
    its day spent by other integrations still has 100,000 calls, far above the floor."""
    portal = Portal()
    companies(portal, 250)
    portal.daily_used = 400_000
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits(share=0.5)) as client:
        pages = list(client.list_pages("companies", ["name"]))
    assert [len(objects) for objects, _ in pages] == [100, 100, 50]
    assert client.daily_left == portal.daily - portal.daily_used == 99_997


def test_a_daily_429_stops_at_once():
    portal = Portal()
    portal.daily_used = portal.daily
    with (
        StandIn(portal) as api,
        HubSpotClient(api.url, TOKEN, fast_limits(daily_floor=0)) as client,
    ):
        with pytest.raises(DailyLimitReached, match="daily limit") as stopped:
            client.account_details()
    assert stopped.value.status == 429 and portal.requests == 1


def test_a_merge_a_person_asked_for_is_sent_under_the_floor():
    """The floor spares the day from pulls; a merge is one call a person asked for."""
    portal = Portal()
    companies(portal, 2)
    portal.daily_used = portal.daily - 50
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        client.account_details()  # learns that 49 calls are left: under the floor
        with pytest.raises(DailyLimitReached):
            client.account_details()
        merged = client.merge("companies", "1", "2")
    assert merged["id"] == "1" and portal.merges == [("companies", "1", "2")]


def test_5xx_retried_with_backoff_then_answers():
    portal = Portal()
    companies(portal, 3)
    portal.fail_next = [500, 502, 503]
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        (page,) = list(client.list_pages("companies", ["name"]))
    assert len(page[0]) == 3
    assert client.waited == pytest.approx(0.01 + 0.02 + 0.04)


def test_5xx_past_the_retries_is_an_error_with_the_status():
    portal = Portal()
    portal.fail_next = [500] * 4
    with (
        StandIn(portal) as api,
        HubSpotClient(api.url, TOKEN, fast_limits(max_retries=3)) as client,
    ):
        with pytest.raises(HubSpotError, match="500"):
            client.account_details()


def test_a_timeout_is_retried():
    import httpx

    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) == 1:
            raise httpx.ReadTimeout("slow", request=request)
        return httpx.Response(200, json={"portalId": 1})

    client = HubSpotClient(
        "http://hubspot.test", TOKEN, fast_limits(), transport=httpx.MockTransport(handler)
    )
    assert client.account_details() == {"portalId": 1}
    assert len(calls) == 2


def test_a_redirect_is_an_error_never_followed_nor_read_as_an_empty_page():
    """A 302 used to read as a page with no results (a pull of nothing); it is refused,
    and nothing is sent where it points, by the request or a retry."""
    import httpx

    sent = []

    def handler(request):
        sent.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://127.0.0.1:9/redirected"})

    client = HubSpotClient(
        "http://hubspot.test", TOKEN, fast_limits(), transport=httpx.MockTransport(handler)
    )
    with pytest.raises(HubSpotError, match="302: a redirect, not followed"):
        list(client.list_pages("companies", ["name"]))
    assert len(sent) == 1 and sent[0].startswith("http://hubspot.test/crm/v3/objects/companies")


def test_a_refused_token_raises_with_hubspots_message_and_never_the_token():
    portal = Portal()
    with StandIn(portal) as api, HubSpotClient(api.url, "pat-na1-wrong", fast_limits()) as client:
        with pytest.raises(TokenRefused) as caught:
            client.account_details()
    assert "Authentication credentials not found" in str(caught.value)
    assert caught.value.category == "INVALID_AUTHENTICATION"
    assert "pat-na1-wrong" not in str(caught.value)


@pytest.mark.slow
def test_search_windows_past_the_10000_result_cap():
    portal = Portal()
    portal.search_per_second = 1000
    base = portal.clock_ms
    for i in range(1, 10_451):
        portal.put("companies", str(i), {"name": f"C{i}"}, stamp=str(base + i // 3))
    with (
        StandIn(portal) as api,
        HubSpotClient(api.url, TOKEN, fast_limits(search_per_second=1000)) as client,
    ):
        seen: dict[str, dict] = {}
        windows = set()
        for objects, window, *_ in client.search_modified(
            "companies", "hs_lastmodifieddate", base, ["name"]
        ):
            seen.update((o["id"], o) for o in objects)
            windows.add(window)
    assert len(seen) == 10_450
    assert len(windows) == 2
    assert not any(status == 400 for *_, status in portal.log)


@pytest.mark.slow
def test_search_is_paced_by_its_own_limit():
    portal = Portal()
    portal.search_per_second = 2
    for i in range(1, 1001):
        portal.put("companies", str(i), {"name": f"C{i}"})
    with (
        StandIn(portal) as api,
        HubSpotClient(api.url, TOKEN, fast_limits(search_per_second=2)) as client,
    ):
        pages = list(client.search_modified("companies", "hs_lastmodifieddate", 0, ["name"]))
    assert len(pages) == 5
    assert [s for *_, s in portal.log].count(429) == 0
    assert client.waited >= 1.0


def test_associations_batch_read_marks_the_primary():
    portal = Portal()
    portal.put("deals", "1", {"dealname": "D"})
    portal.link("deals", "1", "companies", "7")
    portal.link("deals", "1", "companies", "8", primary=True)
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        found = associations.read(client, "deals", "companies", ["1", "2"])
    assert found == {"1": [["7", False], ["8", True]], "2": []}  # 2: none (a 207 says so)


def test_search_cursors_are_opaque_and_resume_where_they_were():
    """HubSpot's search cursor is a string to give back, never a number: the stand-in's
    are not numbers, and the cap is counted from the results received."""
    portal = Portal()
    portal.search_per_second = 1000
    for i in range(1, 451):
        portal.put("companies", str(i), {"name": f"C{i}"})
    limits = fast_limits(search_per_second=1000)
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, limits) as client:
        pages = list(client.search_modified("companies", "hs_lastmodifieddate", 0, ["name"]))
        _, window, cursor, seen = pages[0]
        rest = list(
            client.search_modified(
                "companies", "hs_lastmodifieddate", window, ["name"], after=cursor, seen=seen
            )
        )
    cursors = [after for _, _, after, _ in pages]
    assert [len(objects) for objects, *_ in pages] == [200, 200, 50]
    assert cursors[-1] == "" and all(c and not c.isdigit() for c in cursors[:-1])
    assert [seen for *_, seen in pages] == [200, 400, 450]
    assert {o["id"] for objects, *_ in rest for o in objects} == {str(i) for i in range(201, 451)}


def test_a_record_with_more_associations_than_one_page_keeps_them_all():
    """Each result of the v4 batch read pages by itself: deal 1's seven companies come
    two at a time, asked again with their own cursor; deal 3 has none (a 207 says so)."""
    portal = Portal()
    portal.association_page = 2
    for deal in ("1", "2", "3"):
        portal.put("deals", deal, {"dealname": f"D{deal}"})
    for company in range(11, 18):
        portal.link("deals", "1", "companies", str(company), primary=company == 14)
    portal.link("deals", "2", "companies", "11", primary=True)
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        found = associations.read(client, "deals", "companies", ["1", "2", "3"])
    assert found == {
        "1": [[str(c), c == 14] for c in range(11, 18)],
        "2": [["11", True]],
        "3": [],
    }
    reads = [body for path, body in portal.bodies if path.endswith("/batch/read")]
    assert len(reads) == 4  # deal 1's companies 1-2 (with the others), 3-4, 5-6, 7
    assert [len(body["inputs"]) for body in reads] == [3, 1, 1, 1]
    assert all(item["after"] and not item["after"].isdigit() for item in reads[1]["inputs"])
    assert [status for _, _, status in portal.log] == [207, 200, 200, 200]


def test_an_association_error_is_asked_once_more_then_named():
    portal = Portal()
    for deal in ("1", "2", "3"):
        portal.put("deals", deal, {"dealname": f"D{deal}"})
        portal.link("deals", deal, "companies", "11", primary=True)
    portal.association_errors = {"1": 1}  # once: the second asking answers
    with StandIn(portal) as api, HubSpotClient(api.url, TOKEN, fast_limits()) as client:
        found = associations.read(client, "deals", "companies", ["1", "2", "3"])
        assert found == {rid: [["11", True]] for rid in ("1", "2", "3")}
        portal.association_errors = {"2": 2}  # twice: it stays unknown
        with pytest.raises(associations.AssociationsIncomplete) as incomplete:
            associations.read(client, "deals", "companies", ["1", "2", "3"])
    assert incomplete.value.failed == {"2": "INTERNAL_ERROR: Internal error reading associations"}
    assert "the companies of 1 deal could not be read, asked twice" in str(incomplete.value)
    assert incomplete.value.status == 207
