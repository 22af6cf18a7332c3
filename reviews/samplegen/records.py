"""Building blocks of the sample generator: ids, dates and realistic *clean* records.

Every record a Builder makes is clean on its own: its company name and domain are
unique after normalisation, its email is unique, a contact's name is far from its
colleagues' names, a deal's name is far from the other deals of its company, open deals
close after the as-of date and enrichment is recent. Planted defects (samplegen_cases)
start from such records and break exactly one thing, so the ground truth stays exact.
"""

from __future__ import annotations

import math
import random
import re
from bisect import bisect
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from itertools import accumulate

from anyascii import anyascii
from rapidfuzz import fuzz

from reviews.engine import normalize
from reviews.samplegen.words import (
    BRANDS,
    COUNTRIES,
    COUNTRY_WEIGHTS,
    DEAL_TOPICS,
    FIRST_NAMES,
    FREE_MAIL_DOMAINS,
    JOB_TITLES,
    LAST_NAMES,
    PLACES,
    SECTORS,
    STAGE_WEIGHTS,
)

OPEN_STAGES = tuple(s for s, _ in STAGE_WEIGHTS if not s.startswith("closed"))
ALL_SUFFIXES = tuple(
    sorted({s for suffixes, _ in COUNTRIES.values() for s in suffixes}, key=len, reverse=True)
)

# n -> (n * M + offset) mod 10**k is a bijection when M is coprime to 10: ids look
# scattered like CRM record ids, yet can never repeat.
_ID_MULTIPLIER = 7_368_787
_NAME_MULTIPLIER = 1_000_003
# Names closer than this are never put side by side at one company in clean records;
# the detectors' fuzzy thresholds (92 for people, 90 for deals) sit well above it.
_MAX_CLEAN_SIMILARITY = 75
_EMAIL_FORMATS = ("{f}.{l}", "{f}{l}", "{f}_{l}", "{l}.{f}")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_EMPLOYEES = (8, 12, 25, 40, 60, 85, 120, 240, 500, 1200, 3500, 12000)
_LOG_LOW, _LOG_HIGH = math.log(5_000), math.log(900_000)


@lru_cache(maxsize=8192)
def slug_word(word: str) -> str:
    """ASCII, lower-case, letters and digits only: "Fernández" -> "fernandez"."""
    return _NON_ALNUM.sub("", (word if word.isascii() else anyascii(word)).lower())


def slug(text: str) -> str:
    """slug_word over every word, joined: "Müller & Fernández" -> "mullerfernandez"."""
    return "".join(slug_word(word) for word in text.split())


class Weighted:
    """Draws from (item, weight) pairs with one random number and a bisect."""

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        self.items = [item for item, _ in pairs]
        self.bounds = list(accumulate(weight for _, weight in pairs))

    def draw(self, random_float: Callable[[], float]) -> str:
        return self.items[bisect(self.bounds, random_float() * self.bounds[-1])]


def base_of(name: str) -> str:
    """A company name without the legal suffix this generator may have appended."""
    for suffix in ALL_SUFFIXES:
        if name.endswith(" " + suffix):
            return name[: -len(suffix) - 1]
    return name


def similar(a: str, b: str) -> bool:
    return fuzz.token_set_ratio(a, b) >= _MAX_CLEAN_SIMILARITY


class Builder:
    """Collects companies, contacts and deals, and the ground truth about them."""

    def __init__(self, rng: random.Random, as_of: datetime, records: int) -> None:
        self.rng = rng
        self.today: date = as_of.astimezone(UTC).date()
        self.companies: list[dict] = []
        self.contacts: list[dict] = []
        self.deals: list[dict] = []
        self.planted: list[dict] = []
        self.decoys: list[dict] = []
        self._counter = 0
        self._id_modulus = 10 ** max(7, len(str(records)) + 2)
        self._id_width = len(str(self._id_modulus - 1))
        self._id_offset = rng.randrange(self._id_modulus)
        self._names: set[str] = set()
        self._base_count = self._pair_count = 0
        self._name_offset = rng.randrange(1_000_000)
        self._domains: set[str] = set()
        self._emails: set[str] = set()
        # Per company: what a new colleague or a new deal must stay clear of.
        self._people_at: dict[str, list[str]] = defaultdict(list)
        self._deal_names_at: dict[str, list[str]] = defaultdict(list)
        self.contacts_at: dict[str, list[str]] = defaultdict(list)
        self._days: dict[int, str] = {}
        self._random = rng.random
        self._countries = Weighted(COUNTRY_WEIGHTS)
        self._stages = Weighted(STAGE_WEIGHTS)

    # --- fast draws: a million records take several million of them ----------------

    def pick(self, items: Sequence):
        """rng.choice, several times faster."""
        return items[int(self._random() * len(items))]

    def between(self, low: int, high: int) -> int:
        """rng.randint (both ends included), several times faster."""
        return low + int(self._random() * (high - low + 1))

    def chance(self, probability: float) -> bool:
        return self._random() < probability

    # --- ids, dates, counts ------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        self._counter += 1
        number = (self._counter * _ID_MULTIPLIER + self._id_offset) % self._id_modulus
        return f"{prefix}_{number:0{self._id_width}d}"

    def missing_id(self, prefix: str) -> str:
        """An id no record will ever have: for dangling references."""
        return self.new_id(prefix)

    def day(self, offset: int) -> str:
        """The as-of date plus `offset` days, as an ISO date (cached: few distinct days)."""
        text = self._days.get(offset)
        if text is None:
            text = self._days[offset] = (self.today + timedelta(days=offset)).isoformat()
        return text

    def stamp(self, offset: int) -> str:
        """An ISO date-time `offset` days from the as-of date, at a working hour."""
        return f"{self.day(offset)}T{self.between(7, 18):02d}:{self.between(0, 59):02d}:00Z"

    def epoch_ms(self, offset: int) -> int:
        moment = datetime.combine(self.today + timedelta(days=offset), datetime.min.time(), UTC)
        return int(moment.timestamp() * 1000)

    def record_count(self) -> int:
        return len(self.companies) + len(self.contacts) + len(self.deals)

    # --- uniqueness ---------------------------------------------------------------

    def claim_name(self, name: str) -> bool:
        """Reserve a company name (by its normalised form); False if already taken."""
        key = normalize.company_name(name)
        if key in self._names:
            return False
        self._names.add(key)
        return True

    def claim_domain(self, domain: str) -> bool:
        key = normalize.domain(domain)
        if key in self._domains:
            return False
        self._domains.add(key)
        return True

    def claim_email(self, email: str) -> bool:
        key = normalize.email(email)
        if key in self._emails:
            return False
        self._emails.add(key)
        return True

    def unique_base(self, brand: str | None = None) -> tuple[str, str]:
        """A company name without legal suffix, not used before, and its industry."""
        if brand is not None:
            for _ in range(20):
                sector, industry = self.rng.choice(SECTORS)
                base = f"{brand} {self.rng.choice(PLACES)} {sector}"
                if self.claim_name(base):
                    return base, industry
        while True:
            base, industry = self._next_base()
            if self.claim_name(base):
                return base, industry

    def _next_base(self) -> tuple[str, str]:
        """Walk the name space in a seed-scrambled order instead of drawing at random:
        names never repeat, so a million companies cost no retries. Two-word names come
        first, then three-word ones; one in ten is a partnership ("Hale & Moreno")."""
        if self.chance(0.1) and self._pair_count < len(LAST_NAMES) ** 2:
            index = self._scrambled(self._pair_count, len(LAST_NAMES) ** 2)
            self._pair_count += 1
            first, second = divmod(index, len(LAST_NAMES))
            return f"{LAST_NAMES[first]} & {LAST_NAMES[second]}", "MANAGEMENT_CONSULTING"
        count = self._base_count
        self._base_count += 1
        two_words = len(BRANDS) * len(SECTORS)
        if count < two_words:
            brand, sector = divmod(self._scrambled(count, two_words), len(SECTORS))
            return f"{BRANDS[brand]} {SECTORS[sector][0]}", SECTORS[sector][1]
        three_words = two_words * len(PLACES)
        if count < two_words + three_words:
            index = self._scrambled(count - two_words, three_words)
            brand_sector, place = divmod(index, len(PLACES))
            brand, sector = divmod(brand_sector, len(SECTORS))
            name = f"{BRANDS[brand]} {PLACES[place]} {SECTORS[sector][0]}"
            return name, SECTORS[sector][1]
        sector_name, industry = self.pick(SECTORS)  # past ~1M names: a counter
        return f"{self.pick(BRANDS)} {sector_name} {count}", industry

    def _scrambled(self, n: int, size: int) -> int:
        # A prime multiplier larger than any list product is coprime to `size`.
        return (n * _NAME_MULTIPLIER + self._name_offset) % size

    def unique_domain(self, base: str, country: str) -> str:
        words = [slug_word(word) for word in base.split() if slug_word(word)]
        stem = "".join(words)
        preferred = "-".join(words) if self.chance(0.15) else stem
        for candidate in (f"{preferred}.example", f"{stem}-{country.lower()}.example"):
            if self.claim_domain(candidate):
                return candidate
        candidate = f"{stem}{self._counter}.example"
        self.claim_domain(candidate)
        return candidate

    def free_mail(self, first: str, last: str) -> str:
        """A private address, unique thanks to the number people add to them."""
        self._counter += 1
        local = f"{slug_word(first)}.{slug_word(last)}{self._counter}"
        return f"{local}@{self.pick(FREE_MAIL_DOMAINS)}"

    # --- clean records ----------------------------------------------------------

    def new_company(
        self, *, base: str | None = None, country: str | None = None, with_domain: bool = True
    ) -> dict:
        """A clean company. With `base`, the caller has claimed (or means to repeat) it."""
        country = country or self._countries.draw(self._random)
        if base is None:
            base, industry = self.unique_base()
        else:
            industry = self.pick(SECTORS)[1]
        suffixes, _ = COUNTRIES[country]
        name = base if self.chance(0.4) else f"{base} {self.pick(suffixes)}"
        company = {"id": self.new_id("co"), "name": name}
        if with_domain:
            domain = self.unique_domain(base, country)
            # Some exports carry the website rather than the bare domain.
            company["domain"] = f"www.{domain}" if self.chance(0.03) else domain
        company["industry"] = industry
        company["numberOfEmployees"] = self.pick(_EMPLOYEES)
        company["country"] = country
        if self.chance(0.9):  # one in ten was never enriched: updatedAt is what counts
            company["enrichedAt"] = self.day(-self.between(1, 150))
        company["updatedAt"] = self.stamp(-self.between(0, 60))
        self.companies.append(company)
        return company

    def company_domain(self, company: dict) -> str | None:
        return normalize.domain(company.get("domain"))

    def new_contact(
        self,
        company: dict,
        *,
        first: str | None = None,
        last: str | None = None,
        email: str | None = None,
    ) -> dict:
        """A clean contact at `company`; explicit names or email are used as given."""
        if first is None or last is None:
            first, last, email = self._colleague(company, email)
        elif email is None:
            email = self._email_at(company, first, last)
        self.claim_email(email)
        self._people_at[company["id"]].append(_person_key(first, last))
        contact = {
            "id": self.new_id("ct"),
            "email": email,
            "firstName": first,
            "lastName": last,
            "companyId": company["id"],
            "jobTitle": self.pick(JOB_TITLES),
        }
        if self.chance(0.6):
            contact["phone"] = self._phone(company.get("country", "US"))
        self.contacts.append(contact)
        self.contacts_at[company["id"]].append(contact["id"])
        return contact

    def new_deal(
        self,
        company: dict,
        *,
        stage: str | None = None,
        contact_ids: list[str] | None = None,
        name: str | None = None,
    ) -> dict:
        """A clean deal: open ones close after the as-of date, closed ones before it."""
        stage = stage or self._stages.draw(self._random)
        if name is None:
            name = self._deal_name(company)
        else:
            self._deal_names_at[company["id"]].append(normalize.text(name) or "")
        if contact_ids is None:
            known = self.contacts_at.get(company["id"], [])
            contact_ids = self.rng.sample(known, min(len(known), self.between(0, 2)))
        closed = stage.startswith("closed")
        amount: int | str = self._amount()
        if self.chance(0.1):  # the HubSpot API sends amounts as strings
            amount = str(amount)
        deal = {
            "id": self.new_id("dl"),
            "name": name,
            "amount": amount,
            "stage": stage,
            "closeDate": self.day(-self.between(2, 365) if closed else self.between(2, 200)),
            "companyId": company["id"],
            "contactIds": contact_ids,
            "pipeline": "default",
        }
        self.deals.append(deal)
        return deal

    def phantom_company(self) -> dict:
        """A company-shaped dict that is *not* in the batch (deleted upstream): records
        pointing at it carry a dangling reference, nothing else."""
        base, _ = self.unique_base()
        return {
            "id": self.missing_id("co"),
            "name": base,
            "domain": self.unique_domain(base, "US"),
            "country": "US",
        }

    # --- helpers ------------------------------------------------------------------

    def _colleague(self, company: dict, email: str | None) -> tuple[str, str, str]:
        """A name unlike any colleague's at this company, and an unused email for it
        (or `email` as given)."""
        taken = self._people_at.get(company["id"], ())
        for _ in range(50):
            first, last = self.pick(FIRST_NAMES), self.pick(LAST_NAMES)
            if any(similar(_person_key(first, last), other) for other in taken):
                continue
            if email is not None:
                return first, last, email
            candidate = self._email_at(company, first, last)
            if normalize.email(candidate) not in self._emails:
                return first, last, candidate
        raise RuntimeError(f"no free contact name left at {company['id']}")

    def _email_at(self, company: dict, first: str, last: str) -> str:
        domain = self.company_domain(company)
        if not domain or normalize.is_free_mail(domain):
            return self.free_mail(first, last)
        # One address format per company, as real mail systems have.
        pattern = _EMAIL_FORMATS[int(company["id"][3:]) % len(_EMAIL_FORMATS)]
        return f"{pattern.format(f=slug_word(first), l=slug_word(last))}@{domain}"

    def _deal_name(self, company: dict) -> str:
        brand = company["name"].split()[0]
        taken = self._deal_names_at[company["id"]]
        for _ in range(50):
            name = f"{brand} — {self.pick(DEAL_TOPICS)}"
            key = normalize.text(name) or ""
            if not any(similar(key, other) for other in taken):
                taken.append(key)
                return name
        raise RuntimeError(f"no free deal name left at {company['id']}")

    def _phone(self, country: str) -> str:
        prefix = COUNTRIES.get(country, COUNTRIES["US"])[1]
        return f"{prefix} {self.between(200, 989)} 555 {self.between(0, 9999):04d}"

    def _amount(self) -> int:
        """Log-uniform between $5k and $900k, rounded to $500 as sales teams do."""
        value = math.exp(_LOG_LOW + self._random() * (_LOG_HIGH - _LOG_LOW))
        return int(round(value / 500) * 500)


@lru_cache(maxsize=65536)
def _person_key(first: str, last: str) -> str:
    return normalize.sorted_words(normalize.person_name(first, last) or "")
