"""JSON records to dataclasses: field mapping, extra, missing values, ValueProblems."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

from reviews.engine.batch import Company, Contact, Deal, Pipeline, Stage, ValueProblem
from tests.engine.ingest.helpers import RECEIVED, batch_doc, parse_files, parse_json


def test_json_spec_example_maps_every_field():
    doc = {
        "id": "full",
        "exportedAt": "2026-08-01T09:00:00Z",
        "source": "hubspot",
        "companies": [
            {
                "id": "co_201",
                "name": "Vertex Robotics",
                "domain": "vertexrobotics.example",
                "industry": "MACHINERY",
                "numberOfEmployees": 240,
                "country": "US",
                "enrichedAt": "2026-05-02",
                "updatedAt": "2026-07-30T10:11:00Z",
            }
        ],
        "contacts": [
            {
                "id": "ct_201",
                "email": "dana@vertexrobotics.example",
                "firstName": "Dana",
                "lastName": "Kim",
                "companyId": "co_201",
                "jobTitle": "COO",
                "phone": "+1 415 555 0100",
            }
        ],
        "deals": [
            {
                "id": "dl_201",
                "name": "Vertex — cell automation",
                "amount": 410000,
                "stage": "decisionmakerboughtin",
                "closeDate": "2026-07-31",
                "companyId": "co_201",
                "contactIds": ["ct_201"],
                "pipeline": "default",
            }
        ],
    }

    batch = parse_json(doc)

    assert (batch.id, batch.source, batch.as_of) == (
        "full",
        "hubspot",
        datetime(2026, 8, 1, 9, 0, tzinfo=UTC),
    )
    assert with_extra(batch, batch.companies) == [
        Company(
            id="co_201",
            index=0,
            name="Vertex Robotics",
            domain="vertexrobotics.example",
            enriched_at=datetime(2026, 5, 2, tzinfo=UTC),
            updated_at=datetime(2026, 7, 30, 10, 11, tzinfo=UTC),
            extra={"industry": "MACHINERY", "numberOfEmployees": 240, "country": "US"},
        )
    ]
    assert with_extra(batch, batch.contacts) == [
        Contact(
            id="ct_201",
            index=0,
            email="dana@vertexrobotics.example",
            first_name="Dana",
            last_name="Kim",
            company_id="co_201",
            extra={"jobTitle": "COO", "phone": "+1 415 555 0100"},
        )
    ]
    assert batch.deals == [
        Deal(
            id="dl_201",
            index=0,
            name="Vertex — cell automation",
            amount=Decimal(410000),
            stage="decisionmakerboughtin",
            close_date=date(2026, 7, 31),
            company_id="co_201",
            contact_ids=["ct_201"],
            pipeline="default",
        )
    ]
    assert batch.pipelines == {}
    assert batch.value_problems == []


def with_extra(batch, records):
    """The records with the fields the batch keeps for them (Batch.extra_of) in `extra`."""
    return [replace(r, extra=batch.extra_of(r)) for r in records]


def test_json_index_is_position_in_list():
    batch = parse_json(batch_doc(contacts=[{"id": "a"}, {"id": "b"}, {"id": "c"}]))

    assert [(c.id, c.index) for c in batch.contacts] == [("a", 0), ("b", 1), ("c", 2)]


def test_json_unknown_fields_kept_unchanged_in_extra():
    company = {
        "id": "co_1",
        "name": "Acme",
        "hs_custom": {"tier": [1, 2]},
        "isPublic": False,
        "notes": None,
        "NAME": "shouting",
    }

    batch = parse_json(batch_doc(companies=[company]))

    assert batch.extra_of(batch.companies[0]) == {
        "hs_custom": {"tier": [1, 2]},
        "isPublic": False,
        "notes": None,
        "NAME": "shouting",
    }


def test_json_empty_string_and_null_both_missing():
    blank = {"name": "", "domain": None, "enrichedAt": "", "updatedAt": None}
    contact = {"email": "", "firstName": None, "lastName": "  ", "companyId": ""}
    deal = {
        "name": None,
        "amount": "",
        "stage": None,
        "closeDate": "",
        "companyId": None,
        "contactIds": None,
        "pipeline": "",
    }
    doc = batch_doc(
        companies=[{"id": "co_1", **blank}],
        contacts=[{"id": "ct_1", **contact}],
        deals=[{"id": "dl_1", **deal}, {"id": "dl_2", "contactIds": ["", None, "ct_1"]}],
    )

    batch = parse_json(doc)

    assert batch.companies == [Company(id="co_1", index=0)]
    assert batch.contacts == [Contact(id="ct_1", index=0)]
    assert batch.deals == [
        Deal(id="dl_1", index=0),
        Deal(id="dl_2", index=1, contact_ids=["ct_1"]),
    ]
    assert batch.value_problems == []


def test_json_malformed_values_become_problems_and_fields_missing():
    doc = batch_doc(
        companies=[
            {
                "id": "co_1",
                "name": 42,
                "domain": "n/a",
                "enrichedAt": "last week",
                "updatedAt": True,
            }
        ],
        contacts=[
            {
                "id": "ct_1",
                "email": "dana(at)vertex.example",
                "firstName": ["Dana"],
                "companyId": 17,
            }
        ],
        deals=[
            {"id": "dl_0"},
            {
                "id": "dl_1",
                "name": {"en": "x"},
                "amount": "41O000",
                "stage": 5,
                "closeDate": "2026-13-45",
                "companyId": False,
                "contactIds": "ct_1",
                "pipeline": 3,
            },
        ],
    )

    batch = parse_json(doc)

    assert batch.companies == [Company(id="co_1", index=0)]
    assert batch.contacts == [Contact(id="ct_1", index=0)]
    assert batch.deals[1] == Deal(id="dl_1", index=1)
    assert batch.value_problems == [
        ValueProblem("dedup", "co_1", "companies[0].name", "not a string: 42"),
        ValueProblem("dedup", "co_1", "companies[0].domain", 'not a domain: "n/a"'),
        ValueProblem("freshness", "co_1", "companies[0].enrichedAt", 'not a date: "last week"'),
        ValueProblem("freshness", "co_1", "companies[0].updatedAt", "not a date: true"),
        ValueProblem(
            "attribution", "ct_1", "contacts[0].email", 'not an email: "dana(at)vertex.example"'
        ),
        ValueProblem("dedup", "ct_1", "contacts[0].firstName", 'not a string: ["Dana"]'),
        ValueProblem("attribution", "ct_1", "contacts[0].companyId", "not a string: 17"),
        ValueProblem("dedup", "dl_1", "deals[1].name", 'not a string: {"en": "x"}'),
        ValueProblem("pipeline", "dl_1", "deals[1].amount", 'not a number: "41O000"'),
        ValueProblem("pipeline", "dl_1", "deals[1].stage", "not a string: 5"),
        ValueProblem("pipeline", "dl_1", "deals[1].closeDate", 'not a date: "2026-13-45"'),
        ValueProblem("attribution", "dl_1", "deals[1].companyId", "not a string: false"),
        ValueProblem("attribution", "dl_1", "deals[1].contactIds", 'not a list of ids: "ct_1"'),
        ValueProblem("pipeline", "dl_1", "deals[1].pipeline", "not a string: 3"),
    ]


def test_json_contact_ids_with_a_non_string_entry_is_one_problem():
    batch = parse_json(batch_doc(deals=[{"id": "dl_1", "contactIds": ["ct_1", 2]}]))

    assert batch.deals[0].contact_ids == []
    assert batch.value_problems == [
        ValueProblem("attribution", "dl_1", "deals[0].contactIds", 'not a list of ids: ["ct_1", 2]')
    ]


def test_json_amounts_numbers_and_numeric_strings():
    amounts = [410000, "410000", "410000.50", " 410000 ", 12.5, 0.1, -500, "-1.25", 0]
    deals = [{"id": f"dl_{i}", "amount": a} for i, a in enumerate(amounts)]

    batch = parse_json(batch_doc(deals=deals))

    assert [d.amount for d in batch.deals] == [
        Decimal("410000"),
        Decimal("410000"),
        Decimal("410000.50"),
        Decimal("410000"),
        Decimal("12.5"),
        Decimal("0.1"),
        Decimal("-500"),
        Decimal("-1.25"),
        Decimal("0"),
    ]
    assert batch.value_problems == []


def test_json_amounts_nan_infinity_booleans_rejected():
    data = (
        b'{"companies": [], "contacts": [], "deals": ['
        b'{"id": "a", "amount": "NaN"}, {"id": "b", "amount": "Infinity"},'
        b'{"id": "c", "amount": true}, {"id": "d", "amount": NaN},'
        b'{"id": "e", "amount": "1e5"}, {"id": "f", "amount": "410,000"}]}'
    )
    batch = parse_files(("batch.json", data))

    assert [d.amount for d in batch.deals] == [None] * 6
    assert [p.message for p in batch.value_problems] == [
        'not a number: "NaN"',
        'not a number: "Infinity"',
        "not a number: true",
        "not a number: NaN",
        'not a number: "1e5"',
        'not a number: "410,000"',
    ]


def test_json_epoch_milliseconds_as_number_or_digit_string():
    moment = datetime(2026, 7, 30, 10, 11, tzinfo=UTC)
    millis = int(moment.timestamp() * 1000)
    doc = batch_doc(
        companies=[{"id": "co_1", "enrichedAt": millis, "updatedAt": str(millis)}],
        deals=[{"id": "dl_1", "closeDate": str(millis)}],
    )

    batch = parse_json(doc)

    assert (batch.companies[0].enriched_at, batch.companies[0].updated_at) == (moment, moment)
    assert batch.deals[0].close_date == date(2026, 7, 30)


def test_json_dates_and_date_times_to_utc():
    stamps = {
        "2026-05-02": datetime(2026, 5, 2, tzinfo=UTC),
        "2026-05-02T10:11:00": datetime(2026, 5, 2, 10, 11, tzinfo=UTC),
        "2026-05-02T10:11:00.123Z": datetime(2026, 5, 2, 10, 11, 0, 123000, tzinfo=UTC),
        "2026-05-02T22:30:00-07:00": datetime(2026, 5, 3, 5, 30, tzinfo=UTC),
        "2026-05-02 10:11": datetime(2026, 5, 2, 10, 11, tzinfo=UTC),
    }
    companies = [{"id": str(i), "updatedAt": s} for i, s in enumerate(stamps)]

    batch = parse_json(batch_doc(companies=companies))

    assert [c.updated_at for c in batch.companies] == list(stamps.values())
    assert all(c.updated_at.tzinfo is UTC for c in batch.companies)


def test_json_close_date_is_the_utc_date_of_a_date_time():
    close = ["2026-07-31", "2026-07-31T10:11:00Z", "2026-07-31T22:00:00-07:00", "2026-07-31 23:59"]
    deals = [{"id": str(i), "closeDate": c} for i, c in enumerate(close)]

    batch = parse_json(batch_doc(deals=deals))

    assert [d.close_date for d in batch.deals] == [
        date(2026, 7, 31),
        date(2026, 7, 31),
        date(2026, 8, 1),
        date(2026, 7, 31),
    ]


def test_json_as_of_argument_overrides_exported_at():
    given = datetime(2026, 9, 1, tzinfo=UTC)

    batch = parse_json(batch_doc(exportedAt="2026-08-01T09:00:00Z"), as_of=given)

    assert batch.as_of == given


def test_json_exported_at_is_as_of_without_argument():
    batch = parse_json(batch_doc(exportedAt="2026-08-01T11:00:00+02:00"))

    assert batch.as_of == datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def test_json_received_at_is_as_of_without_either():
    assert parse_json(batch_doc()).as_of == RECEIVED


def test_json_naive_as_of_argument_is_utc():
    batch = parse_json(batch_doc(), as_of=datetime(2026, 9, 1, 8, 0))

    assert batch.as_of == datetime(2026, 9, 1, 8, 0, tzinfo=UTC)


def test_json_aware_as_of_argument_kept_in_its_zone():
    given = datetime(2026, 9, 1, 8, 0, tzinfo=timezone(timedelta(hours=2)))

    assert parse_json(batch_doc(), as_of=given).as_of == given


def test_json_pipelines_parsed_by_id():
    pipelines = [
        {
            "id": "default",
            "label": "Sales",
            "stages": [
                {"id": "appointmentscheduled", "label": "Appointment"},
                {"id": "closedwon", "closed": True, "won": True},
                {"id": "closedlost", "closed": True, "won": False},
            ],
        },
        {
            "id": "renewals",
            "stages": [{"id": "renewed", "won": True}, {"id": "open", "closed": None}],
        },
    ]

    batch = parse_json(batch_doc(pipelines=pipelines))

    assert batch.pipelines == {
        "default": Pipeline(
            id="default",
            stages=[
                Stage("appointmentscheduled", "Appointment"),
                Stage("closedwon", closed=True, won=True),
                Stage("closedlost", closed=True, won=False),
            ],
            label="Sales",
        ),
        # A won stage is closed even when the export leaves `closed` out.
        "renewals": Pipeline(
            id="renewals",
            stages=[Stage("renewed", closed=True, won=True), Stage("open")],
        ),
    }


def test_json_empty_or_null_pipelines_mean_default():
    assert parse_json(batch_doc(pipelines=[])).pipelines == {}
    assert parse_json(batch_doc(pipelines=None)).pipelines == {}


def test_json_stage_kept_as_given():
    batch = parse_json(batch_doc(deals=[{"id": "dl_1", "stage": "Closed Won"}]))

    assert batch.deals[0].stage == "Closed Won"
    assert batch.is_open(batch.deals[0]) is False


def test_json_international_and_reserved_domain_emails_are_valid():
    emails = ["josé@exämple.com", "a.b+c@mail.test", " dana@vertex.example "]
    contacts = [{"id": str(i), "email": e} for i, e in enumerate(emails)]

    batch = parse_json(batch_doc(contacts=contacts))

    assert [c.email for c in batch.contacts] == emails
    assert batch.value_problems == []


def test_json_syntactically_invalid_emails():
    emails = [
        "dana",
        "dana@",
        "@vertex.example",
        "a@b@c.example",
        "a..b@x.example",
        "da na@x.example",
        "dana@localhost",
        "dana@x.123",
    ]
    contacts = [{"id": str(i), "email": e} for i, e in enumerate(emails)]

    batch = parse_json(batch_doc(contacts=contacts))

    assert [c.email for c in batch.contacts] == [None] * len(emails)
    assert [p.path for p in batch.value_problems] == [
        f"contacts[{i}].email" for i in range(len(emails))
    ]


def test_json_integers_over_64_bits_and_lone_surrogates_read_as_the_standard_library_does():
    # msgspec (the fast path) refuses the lone surrogate; the standard library reads it.
    data = (
        b'{"companies": [{"id": "co\\ud800", "name": "Acme \\ud800"}], "contacts": [],'
        b' "deals": [{"id": "a", "amount": 123456789012345678901234},'
        b' {"id": "b", "amount": 410000.5, "note": "' + b"9" * 5000 + b'"}]}'
    )
    batch = parse_files(("batch.json", data))
    # Read exactly, then judged: an amount past a trillion is not plausible.
    assert [d.amount for d in batch.deals] == [None, Decimal("410000.5")]
    assert "deals[0].amount" in {p.path for p in batch.value_problems}
    # Read as the standard library does, then made storable and visible.
    assert (batch.companies[0].id, batch.companies[0].name) == ("co\\ud800", "Acme \\ud800")


def test_json_fast_path_reads_a_realistic_export_exactly_as_the_standard_library(monkeypatch):
    import json

    import reviews.engine.ingest
    from reviews.engine.ingest import json_batch
    from reviews.samplegen import generate

    document, _ = generate(3_000, seed=8, stale_share=0.3)
    data = json.dumps(document).encode()
    fast = parse_files(("batch.json", data))
    assert set(fast.extras) == {"companies", "contacts", "deals"}  # read record by record
    monkeypatch.setattr(reviews.engine.ingest, "load_native", lambda data: None)
    monkeypatch.setattr(json_batch, "_fast_loads", lambda data: None)
    slow = parse_files(("batch.json", data))
    assert slow.extras == {}
    assert with_extras(slow) == with_extras(fast)


def with_extras(batch):
    """The batch with every record's unread fields in its own `extra`."""
    return replace(
        batch,
        companies=with_extra(batch, batch.companies),
        contacts=with_extra(batch, batch.contacts),
        deals=with_extra(batch, batch.deals),
        extras={},
    )


def test_json_an_integer_msgspec_cannot_read_past_the_first_record_reads_it_all_again():
    # The record-by-record read skips the number whole, then cannot decode deals[1].
    data = (
        b'{"companies": [], "contacts": [], "deals": [{"id": "a", "amount": 5},'
        b' {"id": "b", "amount": 123456789012345678901234, "note": 123456789012345678901234}]}'
    )
    batch = parse_files(("batch.json", data))

    assert [d.amount for d in batch.deals] == [Decimal(5), None]
    assert "deals[1].amount" in {p.path for p in batch.value_problems}
    assert batch.extra_of(batch.deals[1]) == {"note": 123456789012345678901234}
