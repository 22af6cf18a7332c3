"""The fields no rule reads, of one list's records, kept as JSON text in one buffer.

A record's unknown fields (a company's industry, a contact's job title) are shown in a
fix plan and compared when duplicates merge, but no detector reads them. Kept as a
dict per record they cost about 400 bytes a record (the dict and its values), more than
the record itself; kept here, the sorted-key JSON of each record's fields in one shared
buffer, about 70 (docs/scaling.md). They are decoded again only for the few records a
fix plan, a survivor choice or a tuning pass looks at (Batch.extra_of)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import eq
from types import MappingProxyType
from typing import Any

import msgspec
import numpy as np

# What a record built from the native JSON holds in its own `extra`: its fields are in
# the batch's ExtraFields. Read-only, so no reader can fill it for every record at once.
NO_EXTRA: MappingProxyType = MappingProxyType({})

# Sorted keys: the canonical text the cache key hashes, whether kept or replaced.
_encoder = msgspec.json.Encoder(order="sorted")
_decode = msgspec.json.Decoder().decode
_decode_list = msgspec.json.Decoder(list[dict]).decode
CHUNK = 10_000  # records decoded by chunks() in one call


class ExtraFields:
    """Each record's fields by its index in the batch's list (Record.index). Only what
    msgspec decoded goes in: it encodes back to the same values."""

    def __init__(self) -> None:
        self._text = bytearray()
        self._ends = array("q")  # end of record i's text in _text; its start is i-1's end
        self._changed: dict[int, dict[str, Any]] = {}  # replace(): cleaned after parsing

    @classmethod
    def load(cls, text: bytes, ends: list[int]) -> ExtraFields:
        """Fields kept by dump() read back (reviews.engine.tables.records)."""
        kept = cls()
        kept._text = bytearray(text)
        kept._ends = array("q", ends)
        return kept

    def dump(self) -> tuple[bytes, list[int]]:
        """(the text, each record's end in it), for load(): what replace() changed
        written in its place."""
        if not self._changed:
            return bytes(self._text), self._ends.tolist()
        texts = [self.json(i) for i in range(len(self._ends))]
        return b"".join(texts), list(accumulate(map(len, texts)))

    def add(self, index: int, fields: dict[str, Any]) -> None:
        """Keep `fields` (may be empty) as record `index`'s; indices come in order."""
        end = len(self._text)
        while len(self._ends) < index:  # a record the reader refused keeps nothing
            self._ends.append(end)
        if fields:
            _encoder.encode_into(fields, self._text, -1)
        self._ends.append(len(self._text))

    def get(self, index: int) -> dict[str, Any]:
        """Record `index`'s fields, a new dict each time ({} if it has none)."""
        if index in self._changed:
            return dict(self._changed[index])
        text = self._slice(index)
        return _decode(text) if text else {}

    def json(self, index: int) -> bytes:
        """Record `index`'s fields as canonical JSON: sorted keys, b"{}" if none."""
        if index in self._changed:
            return _encoder.encode(self._changed[index])
        return bytes(self._slice(index)) or b"{}"

    def chunks(self, count: int) -> Iterator[list[dict[str, Any]]]:
        """[get(i) for i in range(count)], CHUNK records at a time, each chunk decoded in
        one call from one copy of its part of the buffer."""
        ends = self._ends_of(count).tolist()
        for start in range(0, count, CHUNK):
            stop = min(start + CHUNK, count)
            first = ends[start - 1] if start else 0
            text = bytes(memoryview(self._text)[first : ends[stop - 1]])
            bounds = [end - first for end in ends[start:stop]]
            texts = [text[a:b] or b"{}" for a, b in zip([0, *bounds[:-1]], bounds, strict=True)]
            chunk = _decode_list(b"[" + b",".join(texts) + b"]")
            for index, fields in self._changed.items():
                if start <= index < stop:
                    chunk[index - start] = dict(fields)
            yield chunk

    def texts(self, indices: Sequence[int], size: int) -> Iterator[tuple[np.ndarray, bytes]]:
        """Records `indices`' fields in that order, `size` records at a time: each
        chunk's text lengths and its texts end to end, b"" for a record with none (what
        the cache key hashes: lengths_and_texts gives the same from dicts). Straight from
        the buffer where `indices` are every record in index order, none replaced."""
        count = len(indices)
        if not self._changed and count >= len(self._ends) and all(map(eq, indices, range(count))):
            ends = self._ends_of(count)
            for start in range(0, count, size):
                stop = min(start + size, count)
                first = int(ends[start - 1]) if start else 0
                lengths = np.diff(ends[start:stop], prepend=first)
                yield lengths, bytes(memoryview(self._text)[first : int(ends[stop - 1])])
            return
        for start in range(0, count, size):
            yield lengths_and_texts([self._text_of(i) for i in indices[start : start + size]])

    def _ends_of(self, count: int) -> np.ndarray:
        """Each of the first `count` records' end in the buffer: the records after the
        last with fields added none, so theirs is the last end."""
        ends = np.frombuffer(self._ends, dtype=np.int64)[:count]
        return np.concatenate([ends, np.full(count - len(ends), ends[-1] if len(ends) else 0)])

    def _text_of(self, index: int) -> bytes:
        if index in self._changed:
            return canonical_text(self._changed[index])
        return bytes(self._slice(index))

    def replace(self, index: int, fields: dict[str, Any]) -> None:
        """Record `index`'s fields from now on (the few a clean-up rewrites)."""
        self._changed[index] = fields

    def _slice(self, index: int) -> bytearray:
        if not 0 <= index < len(self._ends):
            return bytearray()
        start = self._ends[index - 1] if index else 0
        return self._text[start : self._ends[index]]


def canonical_text(fields: dict[str, Any]) -> bytes:
    """A record's fields as the buffer keeps them: sorted-key JSON, b"" for none.
    ValueError where msgspec cannot write a value (a lone surrogate, a 5,000-digit int)."""
    return _encoder.encode(fields) if fields else b""


def lengths_and_texts(texts: list[bytes]) -> tuple[np.ndarray, bytes]:
    """The lengths of `texts` and the texts end to end, as ExtraFields.texts gives them."""
    return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), b"".join(texts)
