"""The embedded mode's Celery parts (no Redis): kombu's filesystem broker and file result
backend, each with one fix that fast polling needs.

- The broker writes a message file in place (open, then write), so a worker listing the
  folder between the two reads an empty message and dies ("Unrecoverable error:
  JSONDecodeError"). Polling every 50 ms made that race common. Here a message is
  written under a name the reader skips, then renamed into place: the rename is atomic.
- Without native chord support, Celery sends celery.chord_unlock with a fixed one-second
  countdown (backends.base.fallback_chord_unlock). A small batch's four specialists
  finish in milliseconds, so that second was most of a review's time; here the first
  look comes after settings.CHORD_UNLOCK_SECONDS.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic

from celery.backends.filesystem import FilesystemBackend
from django.conf import settings
from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class AtomicFilesystemChannel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".partial"  # _get reads only names ending in "<queue>.msg"
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as error:
            raise ChannelError(f"Cannot add file {final!r} to directory") from error


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicFilesystemChannel


class QuickChordFilesystemBackend(FilesystemBackend):
    def fallback_chord_unlock(self, header_result, body, countdown=1, **kwargs):
        return super().fallback_chord_unlock(
            header_result, body, countdown=settings.CHORD_UNLOCK_SECONDS, **kwargs
        )
