"""The groups every dedup rule starts from, queried over the detectors' columns
(reviews.engine.tables.columns) in one statement, once per batch (a query costs a
millisecond or more however small the batch):

- `domain_key`, `name_key` (companies) and `email_key` (contacts): the records sharing
  that key, two or more, in the order each group's second record comes;
- `person_key`: each company's named contacts, one group per full name, for every
  company with two or more contacts, companies in the order their second contact comes,
  names in alphabetical order within one;
- `deal_block`: each company's deals that may be copies (not closed-lost), where it has
  two or more, companies in the order their second deal comes.

A group's records are their rows (their positions in the batch's list), in batch order.
Groups come in the order their second record (or their company's) comes because that
is the order dedup has always reported them in: the findings keep their order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from reviews.engine.batch import Batch
from reviews.engine.tables.columns import columns

# Each key's groups come under its number in KEY_NAMES (`key_code`): a number sorts
# faster than a name, and costs no Python string per row fetched.
KEY_NAMES = ("domain_key", "name_key", "email_key", "person_key", "deal_block")
# Records sharing a key, two or more, a row each; `position`: the group's second record.
# The keys held twice or more are found first: a list made for every key, nearly all of
# them one record's, was most of this query's time at ten million records.
SHARED_KEY = """
SELECT {code} AS key_code, key, unnest(rows) AS "row", rows[2] AS position FROM (
    SELECT {key} AS key, list("row" ORDER BY "row") AS rows FROM {records}
    WHERE {key} IN (
        SELECT {key} FROM {records} WHERE {key} IS NOT NULL GROUP BY {key} HAVING count(*) > 1
    )
    GROUP BY {key}
)"""
# Each company with two or more records of an object, and the row of its second one.
BLOCKS = """
{name} AS (
    SELECT company_id, "row" AS position FROM (
        SELECT company_id, "row",
            row_number() OVER (PARTITION BY company_id ORDER BY "row") AS nth
        FROM {records} WHERE company_id <> ''
    ) WHERE nth = 2
)"""
PERSON_KEY = """
SELECT {code}, person_key, "row", position
FROM contacts JOIN contacts_person_key USING ("row") JOIN contact_blocks USING (company_id)
WHERE person_key IS NOT NULL"""
# A closed-lost deal is never a copy: the deal lost, or a copy closed already.
DEAL_BLOCK = """
SELECT {code}, '', "row", position FROM (
    SELECT "row", position, count(*) OVER (PARTITION BY position) AS candidates
    FROM deals JOIN deal_blocks USING (company_id)
    WHERE NOT coalesce(is_closed AND NOT is_won, false)
) WHERE candidates > 1"""
SHARED = (
    ("domain_key", "companies_domain_key"),
    ("name_key", "companies_name_key"),
    ("email_key", "contacts"),
)
GROUPS = (
    "WITH"
    + ",".join(
        BLOCKS.format(name=name, records=records)
        for name, records in (("contact_blocks", "contacts"), ("deal_blocks", "deals"))
    )
    + " UNION ALL ".join(
        [
            *(
                SHARED_KEY.format(code=KEY_NAMES.index(key), key=key, records=records)
                for key, records in SHARED
            ),
            PERSON_KEY.format(code=KEY_NAMES.index("person_key")),
            DEAL_BLOCK.format(code=KEY_NAMES.index("deal_block")),
        ]
    )
    + ' ORDER BY key_code, position, key, "row"'
)
OBJECTS = (
    "companies_domain_key",
    "companies_name_key",
    "contacts",
    "contacts_person_key",
    "deals",
)


@dataclass(frozen=True, slots=True)
class Groups:
    """One key's groups, flat: group g is rows[starts[g]:starts[g + 1]], its key keys[g]
    and its position (its second record's row, or its company's) positions[g]. Arrays,
    not a list per group: the person groups are nearly one per contact."""

    keys: list[str]
    positions: np.ndarray
    starts: np.ndarray  # one more than there are groups: the end
    rows: np.ndarray

    def __iter__(self) -> Iterator[tuple[str, list[int], int]]:
        """(key, rows, position) for each group, in order."""
        starts, rows = self.starts.tolist(), self.rows.tolist()
        for g, (key, position) in enumerate(zip(self.keys, self.positions.tolist(), strict=True)):
            yield key, rows[starts[g] : starts[g + 1]], position


def dedup_groups(batch: Batch) -> dict[str, Groups]:
    """The batch's groups by key name (the module's docstring says which), in order."""
    return batch.derive("dedup_groups", _query)


def _query(batch: Batch) -> dict[str, Groups]:
    found = columns(batch).arrays(GROUPS, OBJECTS)
    codes, keys, rows, positions = (found[c] for c in ("key_code", "key", "row", "position"))
    # A group starts where the key's code, the position or the key changes.
    changes = np.ones(len(rows), dtype=bool)
    changes[1:] = (
        (codes[1:] != codes[:-1]) | (positions[1:] != positions[:-1]) | (keys[1:] != keys[:-1])
    )
    starts = np.flatnonzero(changes)
    bounds = np.append(starts, len(rows))  # each group's first row, then the end
    groups = {}
    for code, name in enumerate(KEY_NAMES):
        at = np.flatnonzero(codes[starts] == code)  # its groups: contiguous, ordered by code
        first, last = (bounds[at[0]], bounds[at[-1] + 1]) if at.size else (0, 0)
        groups[name] = Groups(
            keys=keys[starts[at]].tolist(),
            positions=positions[starts[at]],
            starts=np.append(starts[at], last) - first,
            rows=rows[first:last],
        )
    return groups
