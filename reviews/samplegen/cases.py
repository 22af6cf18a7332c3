"""Planted defects: every kind in docs/rules.md, in several variants, each recorded in the
ground truth as it is made. (The decoys are in samplegen_decoys.)

Every maker builds its own fresh companies, so a planted group never touches the
background records or another group: the truth names exactly what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable

from anyascii import anyascii

from reviews.samplegen.records import OPEN_STAGES, Builder, base_of, slug

WARNING, CRITICAL, SUGGESTION = "warning", "critical", "suggestion"

# Near-equal spellings of one person, all well above the 92 fuzzy ratio on sorted words.
FUZZY_PEOPLE = (
    (("Katherine", "Johnson"), ("Katharine", "Johnson")),
    (("Jonathan", "Miller"), ("Johnathan", "Miller")),
    (("Stephen", "Clarke"), ("Stephen", "Clark")),
    (("Aleksander", "Petrov"), ("Aleksandr", "Petrov")),
    (("Geoffrey", "Thompson"), ("Geoffrey", "Thomson")),
)
UNKNOWN_STAGES = ("negotiation", "verbalcommit", "onhold", "1234567")
BAD_AMOUNTS = ("41O000", "TBD", "12.5k", "1O0 000")
BAD_DATES = ("2026-13-45", "2025-02-30")

Maker = Callable[[Builder], None]


def plant(b: Builder, category: str, kind: str, severity: str, *records: dict) -> None:
    b.planted.append(
        {
            "category": category,
            "kind": kind,
            "severity": severity,
            "record_ids": [r["id"] for r in records],
        }
    )


def open_deal(b: Builder, company: dict, **fields) -> dict:
    """A clean open deal, then `fields` overriding what the case needs."""
    deal = b.new_deal(company, stage=b.rng.choice(OPEN_STAGES))
    deal.update(fields)
    return deal


def _domain_variant(b: Builder, domain: str) -> str:
    """The same domain as another system would write it."""
    return b.rng.choice(
        (
            f"www.{domain}",
            f"https://{domain}/",
            f"https://www.{domain}/about",
            domain.upper(),
            f"{domain}.",
        )
    )


# --- dedup -------------------------------------------------------------------------


def _twin(b: Builder, company: dict, *, with_domain: bool = True) -> dict:
    """A second record of the same company: same base name, country and industry, its
    own (unique) domain until the case says otherwise."""
    twin = b.new_company(
        base=base_of(company["name"]), country=company["country"], with_domain=with_domain
    )
    twin["industry"] = company["industry"]
    return twin


def same_domain_pair(b: Builder) -> None:
    first = b.new_company()
    twin = _twin(b, first)
    twin["name"] = f"{base_of(first['name'])} {b.rng.choice(('LLC', 'Inc.', 'Corp', 'Ltd'))}"
    twin["domain"] = _domain_variant(b, b.company_domain(first))
    plant(b, "dedup", "company_same_domain", WARNING, first, twin)


def same_domain_cluster(b: Builder) -> None:
    first = b.new_company()
    base, domain = base_of(first["name"]), b.company_domain(first)
    second, third = _twin(b, first), _twin(b, first)
    second["name"], second["domain"] = f"{base.upper()}, INC.", f"www.{domain}"
    third["name"], third["domain"] = f"{base} Corporation", f"https://{domain}/"
    plant(b, "dedup", "company_same_domain", WARNING, first, second, third)


def same_name(b: Builder) -> None:
    """One company entered twice under different domains (a regional site, a typo)."""
    style = b.rng.randrange(3)
    if style == 0:  # accents: "Müller & Fernández GmbH" / "Muller & Fernandez AG"
        base = _claim_accented_base(b)
        first = b.new_company(base=base, country="DE")
        twin = _twin(b, first)
        first["name"], twin["name"] = f"{base} GmbH", f"{anyascii(base)} AG"
    else:  # case and punctuation, one with no domain at all
        first = b.new_company()
        base = base_of(first["name"])
        twin = _twin(b, first, with_domain=style == 1)
        twin["name"] = f"{base.upper()}, LLC" if style == 1 else f"{base.lower()} ltd."
    plant(b, "dedup", "company_same_name", WARNING, first, twin)


def _claim_accented_base(b: Builder) -> str:
    accented = ("Müller", "Fernández", "Gutiérrez", "Nordström", "Ramírez", "Jovanović", "Valdés")
    plain = ("Bauer", "Fischer", "Hoffmann", "Laurent", "Castillo", "Lindqvist", "Novak")
    for _ in range(50):
        base = f"{b.rng.choice(accented)} & {b.rng.choice(plain)}"
        if b.claim_name(base):
            return base
    return b.unique_base()[0]


def same_email(b: Builder) -> None:
    company = b.new_company()
    first = b.new_contact(company)
    if b.rng.random() < 0.5:  # the same person imported twice, email in other case
        twin = b.new_contact(
            company,
            first=first["firstName"],
            last=first["lastName"],
            email=f"  {first['email'].upper()}",
        )
    else:  # two people behind one shared inbox
        inbox = f"sales@{b.company_domain(company)}"
        first["email"] = inbox
        twin = b.new_contact(company, email=inbox)
    plant(b, "dedup", "contact_same_email", WARNING, first, twin)


def same_person_exact(b: Builder) -> None:
    company = b.new_company()
    first = b.new_contact(company)
    domain = b.company_domain(company)
    local = f"{slug(first['firstName'])[0]}{slug(first['lastName'])}.{b.rng.randint(2, 99)}"
    email = f"{local}@{domain}"
    twin = b.new_contact(
        company, first=first["firstName"].upper(), last=first["lastName"], email=email
    )
    plant(b, "dedup", "contact_same_person", WARNING, first, twin)


def same_person_fuzzy(b: Builder) -> None:
    company = b.new_company()
    (f1, l1), (f2, l2) = b.rng.choice(FUZZY_PEOPLE)
    domain = b.company_domain(company)
    first = b.new_contact(company, first=f1, last=l1, email=f"{slug(f1)}.{slug(l1)}@{domain}")
    twin = b.new_contact(company, first=f2, last=l2, email=f"{slug(f2)[0]}{slug(l2)}@{domain}")
    plant(b, "dedup", "contact_same_person", WARNING, first, twin)


def deal_entered_twice(b: Builder) -> None:
    company = b.new_company()
    contact = b.new_contact(company)
    first = open_deal(b, company, contactIds=[contact["id"]])
    amount = int(first["amount"])
    brand, topic = first["name"].split(" — ", 1)
    twin = open_deal(b, company, contactIds=[contact["id"]])
    twin["name"] = b.rng.choice(
        (
            f"{brand} - {topic.title()}",
            f"{brand} – {topic}",
            f"{brand.upper()} — {topic}",
            f"{brand} — {topic}",
        )
    )
    twin["amount"] = amount + b.rng.choice((-1, 1)) * int(amount * 0.004)
    if b.rng.random() < 0.2:  # neither has a close date
        del first["closeDate"], twin["closeDate"]
    else:
        offset = b.rng.randint(20, 150)
        first["closeDate"], twin["closeDate"] = b.day(offset), b.day(offset + b.rng.randint(0, 21))
    plant(b, "dedup", "deal_entered_twice", CRITICAL, first, twin)


# --- attribution ---------------------------------------------------------------------


def wrong_company(b: Builder) -> None:
    """Someone who moved (or was attached by hand to the wrong account)."""
    current, previous = b.new_company(), b.new_company()
    contact = b.new_contact(current, email=None)
    local = contact["email"].split("@")[0]
    contact["email"] = f"{local}@{b.company_domain(previous)}"
    b.claim_email(contact["email"])
    plant(b, "attribution", "contact_wrong_company", WARNING, contact)


def dangling_contact_company(b: Builder) -> None:
    contact = b.new_contact(b.phantom_company())
    plant(b, "attribution", "dangling_reference", WARNING, contact)


def dangling_deal_company(b: Builder) -> None:
    deal = open_deal(b, b.phantom_company(), contactIds=[])
    plant(b, "attribution", "dangling_reference", WARNING, deal)


def dangling_deal_contact(b: Builder) -> None:
    company = b.new_company()
    contact = b.new_contact(company)
    deal = open_deal(b, company, contactIds=[contact["id"], b.missing_id("ct")])
    plant(b, "attribution", "dangling_reference", WARNING, deal)


def deal_contact_elsewhere(b: Builder) -> None:
    company, other = b.new_company(), b.new_company()
    own, outsider = b.new_contact(company), b.new_contact(other)
    deal = open_deal(b, company, contactIds=[own["id"], outsider["id"]])
    plant(b, "attribution", "deal_contact_elsewhere", WARNING, deal, outsider)


def missing_company(b: Builder) -> None:
    """A contact nobody attached to its company, though its email is at the company's
    domain (a suggestion)."""
    company = b.new_company()
    contact = b.new_contact(company)
    del contact["companyId"]
    plant(b, "attribution", "contact_missing_company", SUGGESTION, contact, company)


def invalid_email(b: Builder) -> None:
    contact = b.new_contact(b.new_company())
    local, domain = contact["email"].split("@")
    contact["email"] = b.rng.choice((f"{local}.{domain}", f"{local} at {domain}", local))
    plant(b, "attribution", "invalid_value", WARNING, contact)


# --- pipeline ----------------------------------------------------------------------


def won_without_close_date(b: Builder) -> None:
    company = b.new_company()
    deal = b.new_deal(company, stage="closedwon")
    if b.rng.random() < 0.5:
        del deal["closeDate"]
    else:
        deal["closeDate"] = None
    plant(b, "pipeline", "won_without_close_date", CRITICAL, deal)


def won_without_amount(b: Builder) -> None:
    deal = b.new_deal(b.new_company(), stage="closedwon")
    choice = b.rng.randrange(3)
    if choice == 0:
        del deal["amount"]
    else:
        deal["amount"] = 0 if choice == 1 else "0"
    plant(b, "pipeline", "won_without_amount", CRITICAL, deal)


def negative_amount(b: Builder) -> None:
    deal = open_deal(b, b.new_company())
    deal["amount"] = -int(deal["amount"])
    plant(b, "pipeline", "negative_amount", CRITICAL, deal)


def open_past_close_date(b: Builder) -> None:
    deal = open_deal(b, b.new_company())
    deal["closeDate"] = b.day(-b.rng.randint(3, 120))
    plant(b, "pipeline", "open_past_close_date", WARNING, deal)


def unknown_stage(b: Builder) -> None:
    deal = open_deal(b, b.new_company(), stage=b.rng.choice(UNKNOWN_STAGES))
    plant(b, "pipeline", "unknown_stage", WARNING, deal)


def missing_stage(b: Builder) -> None:
    deal = open_deal(b, b.new_company())
    if b.rng.random() < 0.5:
        del deal["stage"]
    else:
        deal["stage"] = ""
    plant(b, "pipeline", "missing_stage", WARNING, deal)


def amount_typo(b: Builder) -> None:
    """Three ordinary deals of one company and one with digits too many (a suggestion:
    the amount is at least 100 times the company's median)."""
    company = b.new_company()
    usual = [open_deal(b, company) for _ in range(3)]
    largest = max(int(deal["amount"]) for deal in usual)
    typo = open_deal(b, company, amount=largest * 1000)
    plant(b, "pipeline", "amount_looks_like_typo", SUGGESTION, typo)


def invalid_amount(b: Builder) -> None:
    deal = open_deal(b, b.new_company(), amount=b.rng.choice(BAD_AMOUNTS))
    plant(b, "pipeline", "invalid_value", WARNING, deal)


# --- freshness ---------------------------------------------------------------------


def plant_stale(b: Builder, companies: list[dict]) -> None:
    """Background companies made stale (generate's stale_share), planted once their
    deals exist: an open deal makes the finding a warning, else a suggestion."""
    with_open_deal = {d.get("companyId") for d in b.deals if d.get("stage") in OPEN_STAGES}
    for company in companies:
        company["enrichedAt"] = b.day(-b.between(200, 700))
        severity = WARNING if company["id"] in with_open_deal else SUGGESTION
        plant(b, "freshness", "stale_enrichment", severity, company)


def stale_with_open_deal(b: Builder) -> None:
    company = b.new_company()
    company["enrichedAt"] = b.day(-b.rng.randint(200, 700))
    open_deal(b, company)
    plant(b, "freshness", "stale_enrichment", WARNING, company)


def stale_without_open_deal(b: Builder) -> None:
    company = b.new_company()
    if b.rng.random() < 0.5:
        company["enrichedAt"] = b.day(-b.rng.randint(200, 700))
    else:  # never enriched, and not touched for a long time either
        company.pop("enrichedAt", None)
        company["updatedAt"] = b.stamp(-b.rng.randint(200, 700))
    if b.rng.random() < 0.5:  # a deal long since won does not make it urgent
        b.new_deal(company, stage="closedwon")
    plant(b, "freshness", "stale_enrichment", SUGGESTION, company)


def never_enriched(b: Builder) -> None:
    """A company with neither date, in a batch whose other companies have one."""
    company = b.new_company()
    company.pop("enrichedAt", None)
    del company["updatedAt"]
    plant(b, "freshness", "never_enriched", SUGGESTION, company)


def invalid_domain(b: Builder) -> None:
    """A domain that is not one ("n/a", a company name): dedup owns domains."""
    company = b.new_company(with_domain=False)
    company["domain"] = b.rng.choice(("n/a", "none", company["name"].replace(".", "")))
    plant(b, "dedup", "invalid_value", WARNING, company)


def invalid_enriched_at(b: Builder) -> None:
    company = b.new_company()
    company["enrichedAt"] = b.rng.choice(BAD_DATES)
    plant(b, "freshness", "invalid_value", WARNING, company)


DEFECTS: tuple[Maker, ...] = (
    same_domain_pair,
    same_domain_cluster,
    same_name,
    same_email,
    same_person_exact,
    same_person_fuzzy,
    deal_entered_twice,
    wrong_company,
    dangling_contact_company,
    dangling_deal_company,
    dangling_deal_contact,
    deal_contact_elsewhere,
    invalid_email,
    won_without_close_date,
    won_without_amount,
    negative_amount,
    open_past_close_date,
    unknown_stage,
    invalid_amount,
    stale_with_open_deal,
    stale_without_open_deal,
    invalid_enriched_at,
    missing_company,
    missing_stage,
    amount_typo,
    never_enriched,
    invalid_domain,
)
