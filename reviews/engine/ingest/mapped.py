"""A big JSON file inside a ZIP, unpacked to a temporary file and mapped, not held.

Ten million records unpack to 2 GB of JSON that the native reader walks once, record by
record (json_batch.load_native). Held as bytes, all of it stays in the process until
the last record is built, beside the records; mapped from a file, the pages already
read are handed back (release_read_pages) and the kernel keeps them as page cache it
can drop, so the process holds about a window of the text at a time (docs/scaling.md).
Only the native JSON reader is given a mapping: it reads it with msgspec, which takes
any buffer; everything else gets bytes."""

from __future__ import annotations

import mmap
import tempfile
from typing import IO

# A JSON member at least this big (as the ZIP declares it) is mapped rather than read.
MAP_OVER_BYTES = 256 * 2**20
_CHUNK = 8 * 2**20


class TooBig(Exception):
    """The member unpacks to more than its budget (the ZIP declared less)."""


def unpack_mapped(member: IO[bytes], budget: int) -> mmap.mmap | bytes:
    """The member's bytes as a read-only mapping of an unlinked temporary file (b"" when
    it is empty: nothing to map). Raises TooBig past `budget` bytes."""
    with tempfile.TemporaryFile() as out:  # unlinked: gone once unmapped
        written = 0
        while chunk := member.read(_CHUNK):
            written += len(chunk)
            if written > budget:
                raise TooBig
            out.write(chunk)
        if not written:
            return b""
        out.flush()
        return mmap.mmap(out.fileno(), 0, access=mmap.ACCESS_READ)


def release_read_pages(data: object) -> None:
    """Hand the pages of a mapping back to the kernel (a no-op on bytes). The file stays:
    a page read again is mapped again from the page cache, so this is safe to call at
    any time; the reader calls it every so many records."""
    if data.__class__ is mmap.mmap:
        data.madvise(mmap.MADV_DONTNEED)
