"""Structural errors: collected, capped, raised once with every one listed."""

from __future__ import annotations

from dataclasses import dataclass

from reviews.engine.storable import storable


class IngestError(Exception):
    def __init__(self, errors: list[str]) -> None:
        # Messages quote names and values from the upload: made storable here, the one
        # place every structural error passes (reviews.engine.storable).
        errors = [storable(error) for error in errors]
        super().__init__("; ".join(errors[:3]))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class Limits:
    """The ingest's limits and conventions (MAX_UPLOAD_BYTES, MAX_REPORTED_ERRORS,
    CSV_DATE_ORDER and CSV_ENCODING in the settings)."""

    max_bytes: int = 200 * 1024 * 1024
    max_errors: int = 100
    date_order: str = "MDY"  # of 07/08/2026 in a CSV whose values do not settle it
    encoding: str = "auto"  # of a CSV file (CSV_ENCODING): detected, or this codec
    # Cells the sheets of one XLSX or XLS may span (first to last cell, empty ones too):
    # what the reader holds in memory, about 32 bytes each (SPREADSHEET_MAX_CELLS).
    max_cells: int = 5_000_000


class ErrorList:
    """Every structural problem of one upload, up to a cap (Limits.max_errors); past
    the cap only counted, so a broken million-record file yields a short report."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.messages: list[str] = []
        self.more = 0

    def add(self, message: str) -> None:
        if len(self.messages) < self.cap:
            self.messages.append(message)
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.messages) or self.more > 0

    def raise_if_any(self) -> None:
        if not self:
            return
        lines = list(self.messages)
        if self.more:
            lines.append(f"and {self.more:,} more errors (only the first {self.cap} are listed)")
        raise IngestError(lines)


# How deep arrays and objects may sit inside each other: the JSON readers' own guard
# (Python's recursion limit, which msgspec and the standard library both honour) is
# the limit, met before any nesting could exhaust the stack. A CRM export nests under
# ten levels.
MAX_JSON_DEPTH = 1000


def too_deep(where: str) -> str:
    """The refusal of a document nested past the readers' limit."""
    return (
        f"{where}: nested too deeply: arrays and objects inside each other past the "
        f"limit of about {MAX_JSON_DEPTH:,} levels (MAX_JSON_DEPTH); a CRM export nests "
        "fewer than ten"
    )


def not_utf8(data: bytes, error: UnicodeDecodeError) -> str:
    """Where decoding failed, counted in the file's bytes (a stripped BOM included)."""
    position = len(data) - len(error.object) + error.start
    return f"not UTF-8: byte 0x{data[position]:02x} at position {position}"
