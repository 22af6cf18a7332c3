"""The least a Python loader and a Python detector can take on a batch, beside what
revreview takes: the floor under issue 28's "load + dedup at most 0.5x the fastest peer".

    .venv/bin/python bench/load_floor.py FILE [--repeat 3] [--peer-seconds S]

Each step is timed in this process, best of --repeat:

- read: the file's bytes;
- decode, dedup's fields only: msgspec decodes the three lists straight into structs
  holding only the fields dedup reads (one C call per list, no Python per record). No
  loader that hands records to Python detectors does less;
- one pass per list: records grouped by one raw field (a dict of lists), with no
  normalising: less than the cheapest exact duplicate rule does;
- revreview: parse_upload (every field, validated, the rest kept) and dedup.detect.

--peer-seconds: the fastest peer's load + match (bench/dedup_peers.py); the budget is
half of it, as issue 28 asks.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviews.engine.ingest import Limits, UploadedFile, parse_upload  # noqa: E402
from reviews.engine.rules import Rules  # noqa: E402
from reviews.engine.specialists import dedup  # noqa: E402


class _Company(msgspec.Struct, gc=False):
    id: Any = None
    name: Any = None
    domain: Any = None


class _Contact(msgspec.Struct, gc=False):
    id: Any = None
    email: Any = None
    firstName: Any = None  # noqa: N815 (the JSON key)
    lastName: Any = None  # noqa: N815
    companyId: Any = None  # noqa: N815


class _Deal(msgspec.Struct, gc=False):
    id: Any = None
    name: Any = None
    amount: Any = None
    stage: Any = None
    closeDate: Any = None  # noqa: N815
    companyId: Any = None  # noqa: N815


class _DedupFields(msgspec.Struct):
    companies: list[_Company]
    contacts: list[_Contact]
    deals: list[_Deal]


def one_pass(batch: _DedupFields) -> int:
    """Each list's records grouped by one raw field, as a detector groups by a key."""
    groups = 0
    for records, key in (
        (batch.companies, "domain"),
        (batch.contacts, "email"),
        (batch.deals, "companyId"),
    ):
        by_key: dict[Any, list[int]] = {}
        for index, record in enumerate(records):
            by_key.setdefault(getattr(record, key), []).append(index)
        groups += len(by_key)
    return groups


def best(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        result = None  # the last run's result is let go before the next is built
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-seconds", type=float, help="the fastest peer's load + match")
    args = parser.parse_args(argv)

    read_s, data = best(args.repeat, args.file.read_bytes)
    decoder = msgspec.json.Decoder(_DedupFields)
    decode_s, fields = best(args.repeat, lambda: decoder.decode(data))
    pass_s, _ = best(args.repeat, partial(one_pass, fields))
    del fields
    limits = Limits(max_bytes=len(data) + 1)

    def parse() -> Any:
        upload = [UploadedFile(name=args.file.name, data=data)]
        return parse_upload(upload, as_of=None, received_at=datetime.now(UTC), limits=limits)

    parse_s, batch = best(args.repeat, parse)
    detect_s, _ = best(args.repeat, lambda: dedup.detect(batch, Rules()))

    floor = read_s + decode_s + pass_s
    rows = [
        ("read the file", read_s),
        ("decode, dedup's fields only, into structs", decode_s),
        ("one pass per list, grouped by one raw field", pass_s),
        ("floor: the three above", floor),
        ("revreview: read + parse_upload", read_s + parse_s),
        ("revreview: dedup.detect", detect_s),
        ("revreview: load + dedup", read_s + parse_s + detect_s),
    ]
    print(f"{args.file.name}: {len(data):,} bytes; best of {args.repeat}")
    print("| step | s |\n|---|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} |")
    if args.peer_seconds:
        budget = args.peer_seconds / 2
        print(
            f"budget (half the fastest peer's {args.peer_seconds:.2f} s): {budget:.2f} s; "
            f"the floor is {floor / budget:.2f}x it, revreview "
            f"{(read_s + parse_s + detect_s) / budget:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
