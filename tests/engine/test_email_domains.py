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
