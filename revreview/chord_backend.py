"""The embedded mode's result backend: kombu's file backend, with a chord that is
looked at as soon as it can finish.

Without native chord support, Celery sends celery.chord_unlock with a fixed one-second
countdown (backends.base.fallback_chord_unlock) and then retries it every
result_chord_retry_interval. A small batch's four specialists finish in milliseconds,
so that second was most of a review's time; here the first look comes after
settings.CHORD_UNLOCK_SECONDS."""

from __future__ import annotations

from celery.backends.filesystem import FilesystemBackend
from django.conf import settings


class QuickChordFilesystemBackend(FilesystemBackend):
    def fallback_chord_unlock(self, header_result, body, countdown=1, **kwargs):
        return super().fallback_chord_unlock(
            header_result, body, countdown=settings.CHORD_UNLOCK_SECONDS, **kwargs
        )
