"""What a parse freezes out of the cyclic collector's view (reviews.engine.gcpause)."""

from __future__ import annotations

import gc
import weakref

from django.utils import timezone

from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.ingest import parse_upload
from tests.uploads import upload


class Node:
    pass


def test_garbage_made_before_a_parse_is_not_frozen_with_its_batch():
    # Paused: no collection of its own comes between the garbage and the parse.
    with no_cyclic_gc():
        node = Node()
        node.me = node  # a cycle: only the collector frees it
        gone = weakref.ref(node)
        del node
        batch = parse_upload([upload("seed-example.json")], as_of=None, received_at=timezone.now())
    gc.collect()
    assert gone() is None  # frozen, it would have stayed for good
    assert batch.companies  # the batch itself is kept, frozen
