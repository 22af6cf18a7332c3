"""A parsed batch is freed, tables and all, once it is let go: the batch a worker process
keeps for the tasks of one run (store/parsed.py), or one a task parsed for itself."""

from __future__ import annotations

import gc
import weakref

from django.conf import settings
from django.utils import timezone

from reviews.engine.ingest import parse_upload
from reviews.engine.specialists import NAMES, detector
from reviews.orchestration.store.parsed import forget_parsed, keep_parsed
from tests.uploads import upload


def parsed_and_reviewed():
    """A batch as a worker has it after its specialists ran: parsed (and so frozen out
    of the cyclic collector's view, reviews.engine.gcpause), its tables built."""
    parsed = parse_upload([upload("seed-example.json")], as_of=None, received_at=timezone.now())
    for name in NAMES:
        detector(name)(parsed, settings.REVIEW_RULES)
    return parsed, weakref.ref(parsed.derived["columns"])


def test_a_batch_let_go_after_its_review_is_freed_with_its_tables():
    parsed, tables = parsed_and_reviewed()
    keep_parsed(1, parsed)
    del parsed
    forget_parsed()
    gc.collect()
    assert tables() is None  # tables referring back to it strongly made a frozen cycle


def test_a_batch_is_freed_when_the_next_batch_is_kept():
    first, tables = parsed_and_reviewed()
    keep_parsed(1, first)
    del first
    second, _ = parsed_and_reviewed()
    keep_parsed(2, second)
    gc.collect()
    assert tables() is None
    forget_parsed()


def test_a_batch_never_kept_is_freed_by_its_last_holder():
    parsed, tables = parsed_and_reviewed()  # as a fix plan reads one (fixes/fixplan.py)
    del parsed
    gc.collect()
    assert tables() is None
