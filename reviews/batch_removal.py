"""A deleted batch takes its stored objects with it: its upload and its tables in the
store, and this machine's cached copy of its tables (other machines' caches are only
caches: TABLES_DIR may be cleared at any time).

Deleted after the commit: a delete that is rolled back keeps its batch's objects. A
batch goes one at a time or in bulk from the admin (pre_delete is sent for each); its
dataset and workspace cannot be deleted while it exists (PROTECT)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from reviews.models import Batch
from revreview import store

logger = logging.getLogger(__name__)


@receiver(pre_delete, sender=Batch, dispatch_uid="reviews.store.batch_deleted")
def _batch_deleted(sender, instance: Batch, **kwargs) -> None:
    batch_id = instance.pk
    transaction.on_commit(lambda: remove_stored(batch_id))


def remove_stored(batch_id: int) -> None:
    """Delete everything the store and this machine's cache hold of the batch."""
    try:
        removed = store.delete_prefix(store.batch_prefix(batch_id))
    except Exception:  # the batch is gone either way; its objects are only orphans
        logger.exception("batch %s: its stored objects could not be deleted", batch_id)
    else:
        logger.info("batch %s: %d stored objects deleted", batch_id, removed)
    for folder in Path(settings.TABLES_DIR).glob(f"{batch_id}-*"):
        shutil.rmtree(folder, ignore_errors=True)
