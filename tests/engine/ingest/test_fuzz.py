"""The ingest fuzzed (hypothesis): any bytes make a batch or a list of errors, never an
exception, and nothing in either holds text that Postgres cannot store.

The engine-level properties run a few thousand examples (parsing is fast); the one
through the database (store, parse, review on Postgres) runs fewer, since each example
is a whole review. The fast loop (`make test-fast`, TEST_SERVICES=none) runs a fifth of
the engine-level examples; `make test` and CI run them all."""

from __future__ import annotations

import json
import re
from dataclasses import fields, is_dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviews.engine.batch import Batch
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.engine.ingest.columns import COLUMNS
from reviews.models import Batch as StoredBatch
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.store.blob_store import file_bytes
from tests.engine.ingest.helpers import RECEIVED, parse, zipped

pytestmark = pytest.mark.slow  # thousands of generated uploads

HOSTILE = ["\x00", "\ud800", "\udfff", "\udc80", "\u202e", "\ufeff", "\\u0000", '"', ","]
hostile_text = st.one_of(
    st.text(max_size=12),
    st.lists(st.sampled_from([*HOSTILE, "a", "é", " ", "😀"]), max_size=8).map("".join),
)
LONG_DIGITS = re.compile(r'"(-?9{4000,})"')
absurd_numbers = st.one_of(
    st.integers(4000, 6000).map(lambda n: "9" * n),  # past Python's int digit limit
    st.sampled_from(["1e999999", "NaN", "0x1F", "1_000", "٣", "2026-13-45", "1" * 20]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
    absurd_numbers,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)
    ),
    max_leaves=8,
)
FIELD_NAMES = sorted(
    {"id", "name", "domain", "email", "firstName", "lastName", "companyId", "contactIds"}
    | {"amount", "stage", "closeDate", "pipeline", "enrichedAt", "updatedAt"}
)
record_ids = st.one_of(st.sampled_from(["co_1", "ct_1", "dl_1", "x"]), hostile_text)
records = st.builds(
    lambda rid, fields: {**fields, "id": rid},
    record_ids,
    st.dictionaries(
        st.one_of(st.sampled_from(FIELD_NAMES), hostile_text),
        st.one_of(json_values, record_ids, st.sampled_from(["closedwon", "2026-01-01"])),
        max_size=6,
    ),
)
record_lists = st.lists(records, max_size=4, unique_by=lambda record: record["id"])
top_level = {
    "id": json_values,
    "source": json_values,
    "dataset": json_values,
    "exportedAt": st.one_of(json_values, absurd_numbers),
    "pipelines": st.one_of(
        json_values,
        st.lists(st.fixed_dictionaries({"id": record_ids, "stages": json_values}), max_size=2),
    ),
}
# Mostly well-formed batches (so hostile values reach the records), sometimes anything.
documents = st.one_of(
    st.fixed_dictionaries(
        {"companies": record_lists, "contacts": record_lists, "deals": record_lists},
        optional=top_level,
    ),
    st.fixed_dictionaries(
        {},
        optional={**top_level, "companies": json_values, "deals": st.lists(records, max_size=3)},
    ),
)
HEADERS = sorted({h for fields in COLUMNS.values() for names in fields.values() for h in names})
csv_cells = st.one_of(hostile_text, absurd_numbers, st.sampled_from(["101", "101;102", ""]))


@st.composite
def csv_files(draw) -> bytes:
    headers = draw(st.lists(st.one_of(st.sampled_from(HEADERS), hostile_text), max_size=6))
    delimiter = draw(st.sampled_from([",", ";", "\t"]))
    rows = draw(st.lists(st.lists(csv_cells, max_size=len(headers) + 1), max_size=4))
    lines = [delimiter.join(headers), *(delimiter.join(row) for row in rows)]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def json_bytes(doc: object) -> bytes:
    # A 5,000-digit number written as a JSON number, not a string, now and then.
    return LONG_DIGITS.sub(r"\1", json.dumps(doc)).encode()


uploads = st.one_of(
    st.tuples(st.sampled_from(["batch.json", "deals.csv", "x.zip", "pipe"]), st.binary()),
    st.tuples(st.just("batch.json"), documents.map(json_bytes)),
    st.tuples(st.sampled_from(["deals.csv", "export\x00.csv", "e\udc80.csv"]), csv_files()),
    st.tuples(st.just("export.zip"), documents.map(lambda d: zipped({"b.json": json_bytes(d)}))),
)


def storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def every_string(value: object):
    """Every str in a parsed batch: dataclass fields, dict keys and values, list items."""
    if isinstance(value, str):
        yield value
    elif is_dataclass(value):
        for spec in fields(value):
            yield from every_string(getattr(value, spec.name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from every_string(key)
            yield from every_string(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from every_string(item)


def parse_or_errors(name: str, data: bytes) -> Batch | list[str]:
    try:
        return parse([UploadedFile(name, data)], as_of=None, received_at=RECEIVED)
    except IngestError as error:
        assert error.errors
        return error.errors


def check_ingest(name: str, data: bytes) -> None:
    result = parse_or_errors(name, data)
    bad = [text for text in every_string(result) if not storable(text)]
    assert not bad


@settings(max_examples=1500, deadline=None)
@given(uploads)
def test_fuzz_any_upload_is_a_batch_or_errors_all_storable(upload):
    check_ingest(*upload)


@settings(max_examples=1000, deadline=None)
@given(documents)
def test_fuzz_any_json_document_is_a_batch_or_errors_all_storable(doc):
    check_ingest("batch.json", json_bytes(doc))


@pytest.mark.django_db
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(uploads)
def test_fuzz_any_upload_is_stored_then_reviewed_or_refused(postgres, upload):
    name, data = upload
    submission = submit([UploadedFile(name, data)], dispatch=False)

    batch = StoredBatch.objects.get(pk=submission.batch.pk)
    assert file_bytes(batch.files.get()) == data
    if submission.accepted:
        start_review.apply(kwargs={"run_id": submission.run.pk})
        run = ReviewRun.objects.get(pk=submission.run.pk)
        assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
        assert run.verdict.decision
    else:
        assert batch.status == StoredBatch.Status.REJECTED and batch.errors
