"""Findings as plain data, shared by the specialists and the coordinator."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from enum import StrEnum
from operator import attrgetter

import orjson

from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.storable import storable_tree


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    SUGGESTION = "suggestion"

    @property
    def rank(self) -> int:
        return {"critical": 0, "warning": 1, "suggestion": 2}[self.value]

    @property
    def label(self) -> str:
        """The severity in words for people, beside its value (which the API keeps)."""
        return {"critical": "Must fix", "warning": "Should fix", "suggestion": "Worth a look"}[
            self.value
        ]


@dataclass(slots=True)
class RawFinding:
    """One problem a specialist found. `exposure` maps each deal whose pipeline the
    problem touches to that deal's amount; amount_at_risk is their sum, and the
    coordinator unions exposures so no deal is counted twice in the summary."""

    category: str
    kind: str
    severity: str
    title: str
    detail: str
    record_ids: list[str]
    suggested_fix: str = ""
    confidence: float = 1.0
    exposure: dict[str, Decimal] = field(default_factory=dict)
    source: str = "rule"
    # deal id -> ISO currency of its amount, for the deals in `exposure` (price_findings)
    deal_currencies: dict[str, str] = field(default_factory=dict)
    # Who owns the records named and where they came from ("Import / Q2 trade show
    # list"), distinct, in record order (price_findings): who to route the fix to.
    owners: list[str] = field(default_factory=list)
    record_sources: list[str] = field(default_factory=list)

    @property
    def amount_at_risk(self) -> Decimal:
        """The exposure's sum, for ordering; shown only when `currency` is one code."""
        if not self.exposure:  # most findings of a big run: no open deal at stake
            return _ZERO
        return sum(self.exposure.values(), _ZERO)

    @property
    def currency(self) -> str:
        """The one currency of the money at risk; MIXED when amounts in several
        currencies are at risk (they are not added up); "" when none is."""
        if not self.exposure:
            return ""
        codes = {self.deal_currencies.get(d, "") for d in self.exposure}
        if len(codes) > 1:
            return MIXED
        return codes.pop() if codes else ""


MIXED = "mixed"
_ZERO = Decimal(0)


def amounts_by_currency(
    exposure: dict[str, Decimal], currencies: dict[str, str]
) -> dict[str, Decimal]:
    """Totals per currency: amounts in different currencies are never added up."""
    totals: dict[str, Decimal] = {}
    for deal_id, amount in exposure.items():
        code = currencies.get(deal_id, "")
        totals[code] = totals.get(code, Decimal(0)) + amount
    return totals


# --- the compact form: one blob per agent ----------------------------------------------
# A specialist hands its findings to the coordinator as one serialised document, not a
# JSON object per finding: {"fields": [...], "rows": [[...], ...], "dismissed": [...]}.
# Rows are values in the order of "fields", so a reader maps them by name: a field added
# to RawFinding later is simply one more column, and an older blob without it reads
# with the field's default.

PACKED_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RawFinding))
_EXPOSURE = PACKED_FIELDS.index("exposure")


def pack(findings: Iterable[RawFinding], dismissed: Iterable[RawFinding] = ()) -> bytes:
    """Findings (and those a model dismissed, kept for the record) as one blob."""
    return pack_exact(findings, dismissed)[0]


def pack_exact(
    findings: Iterable[RawFinding], dismissed: Iterable[RawFinding] = ()
) -> tuple[bytes, bool]:
    """pack, and whether unpacking the blob gives the findings back as they are: False
    when text had to be made storable (reviews.engine.storable: a lone surrogate, from
    a model's reply or a batch that bypassed the ingest).

    Streamed: the rows are made and written PACK_CHUNK findings at a time, so the blob
    is the only whole thing held, never a list per finding beside it (35 MB for the
    143k findings of a findings-heavy batch's freshness)."""
    findings, dismissed = _sequence(findings), _sequence(dismissed)
    with no_cyclic_gc():
        # The blob is bytes, so a NUL is kept (as JSON's escape; the findings writer makes
        # it storable text); a lone surrogate cannot be UTF-8 at all. Scanning 60 MB of
        # blob for NULs would cost 85 ms of a findings-heavy run's 1.1 s pack.
        try:
            return _streamed(findings, dismissed), True
        except orjson.JSONEncodeError:  # a lone surrogate: not UTF-8
            document = {
                "fields": PACKED_FIELDS,
                "rows": _rows(findings),
                "dismissed": _rows(dismissed),
            }
            return orjson.dumps(storable_tree(document)[0]), False


PACK_CHUNK = 5_000


def _streamed(findings: Sequence[RawFinding], dismissed: Sequence[RawFinding]) -> bytes:
    """The document {"fields": [...], "rows": [...], "dismissed": [...]} as orjson.dumps
    writes it but for a line break before each chunk of rows and each list's end."""
    out = io.BytesIO()
    out.write(b'{"fields":' + orjson.dumps(PACKED_FIELDS) + b',"rows":')
    _write_rows(out, findings)
    out.write(b',"dismissed":')
    _write_rows(out, dismissed)
    out.write(b"}")
    return out.getvalue()  # the buffer itself, not a copy, once writing is done


def _write_rows(out: io.BytesIO, findings: Sequence[RawFinding]) -> None:
    """A list of rows, a chunk to a line (unpack reads it a line at a time)."""
    out.write(b"[")
    for start in range(0, len(findings), PACK_CHUNK):
        out.write(b"\n," if start else b"\n")
        out.write(orjson.dumps(_rows(findings[start : start + PACK_CHUNK]))[1:-1])
    out.write(b"\n]")


def _sequence(findings: Iterable[RawFinding]) -> Sequence[RawFinding]:
    return findings if isinstance(findings, Sequence) else list(findings)


def unpack(blob: bytes | memoryview | None, *, dismissed: bool = False) -> list[RawFinding]:
    """The findings of a blob made by pack (with dismissed=True: the dismissed ones).

    A streamed blob is read a chunk of rows at a time (each on a line of its own), so
    the rows of every finding are never held beside the findings: unpacking 143k held
    ~330 MB more at its peak than the findings it gave. A blob in one line (packed
    before rows were chunked, or made storable by pack_exact) is read whole."""
    if not blob:
        return []
    data = bytes(blob)
    with no_cyclic_gc():
        if b"\n" not in data[:_HEAD_MAX]:
            document = orjson.loads(data)
            names = document["fields"]
            return _findings(names, document["dismissed" if dismissed else "rows"])
        return _unpack_lines(data, dismissed)


_HEAD_MAX = 4096  # the fields' names, before the first line break of a streamed blob


def _unpack_lines(data: bytes, dismissed: bool) -> list[RawFinding]:
    """Read the layout _write_rows writes: the head `{"fields":[...],"rows":[`, a line
    per chunk of rows (after the first, led by its comma), `],"dismissed":[`, its chunks,
    `]}`. orjson writes a line break inside a string as its escape, so every raw one is
    a chunk's edge."""
    end = data.index(b"\n")
    names = orjson.loads(data[:end] + b"]}")["fields"]
    found: list[RawFinding] = []
    section = "rows"
    while True:
        start, end = end + 1, data.find(b"\n", end + 1)
        line = data[start:] if end == -1 else data[start:end]
        if line.startswith(b"]"):  # the end of a list of rows
            if section == "dismissed" or end == -1:
                return found
            section = "dismissed"
            continue
        if (section == "dismissed") == dismissed:
            found += _findings(names, orjson.loads(b"[" + line.lstrip(b",") + b"]"))


def _findings(names: list[str], rows: list[list]) -> list[RawFinding]:
    exposure = names.index("exposure") if "exposure" in names else None
    if exposure is not None:
        for row in rows:
            if row[exposure]:
                row[exposure] = {k: Decimal(v) for k, v in row[exposure].items()}
    if tuple(names) == PACKED_FIELDS:  # the common case: rows are positional arguments
        return [RawFinding(*row) for row in rows]
    known = [(i, name) for i, name in enumerate(names) if name in PACKED_FIELDS]
    return [RawFinding(**{name: row[i] for i, name in known}) for row in rows]


_values = attrgetter(*PACKED_FIELDS)


def _rows(findings: Iterable[RawFinding]) -> list[list]:
    rows = []
    for finding in findings:
        row = list(_values(finding))
        if row[_EXPOSURE]:  # orjson has no Decimal: amounts as exact strings
            row[_EXPOSURE] = {k: str(v) for k, v in row[_EXPOSURE].items()}
        rows.append(row)
    return rows
