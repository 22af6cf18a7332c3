"""What a parse freezes out of the cyclic collector's view (reviews.engine.gcpause)."""

from __future__ import annotations

import gc
import weakref

from django.utils import timezone

from reviews.engine.ingest import parse_upload
from tests.uploads import upload


class Node:
    pass


def test_garbage_made_before_a_parse_is_not_frozen_with_its_batch():
    was_enabled = gc.isenabled()
    gc.disable()  # no collection of its own comes between the garbage and the parse
    try:
        node = Node()
        node.me = node  # a cycle: only the collector frees it
        gone = weakref.ref(node)
        del node
        batch = parse_upload([upload("seed-example.json")], as_of=None, received_at=timezone.now())
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()
    assert gone() is None  # frozen, it would have stayed for good
    assert batch.companies  # the batch itself is kept, frozen
