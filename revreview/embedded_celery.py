"""The embedded mode's broker (no Redis): kombu's filesystem transport, with the one fix
that fast polling needs.

kombu writes a message file in place (open, then write), so a worker listing the folder
between the two reads an empty message and dies ("Unrecoverable error: JSONDecodeError").
Polling every 50 ms made that race common. Here a message is written under a name the
reader skips, then renamed into place: the rename is atomic.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic

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
