"""What the batch's tables say at a glance: how full each property is (the dataset
page's property completeness) and which stage each deal is in (open problems by stage).
One query per table, whatever its width."""

from __future__ import annotations

from reviews.engine.tables.build import OBJECTS, STAGE_COLUMNS, Tables, quote

# What a deal without a stage is counted under.
NO_STAGE = "(no stage)"


def fill_rates(tables: Tables) -> dict[str, list[dict]]:
    """Per object, each property in table order: {"name", "label", "filled", "total"};
    `label` is the column header that filled a documented field, else its name in the
    JSON batch (docs/input.md). A blank text, an empty list and NULL are all empty. The
    stage state columns are derived, not exported, so they are left out."""
    found: dict[str, list[dict]] = {}
    for name in OBJECTS:
        types = {
            row[0]: row[1] for row in tables.connection.execute(f'DESCRIBE "{name}"').fetchall()
        }
        columns = [c for c in types if c not in STAGE_COLUMNS and c != "id"]
        counts = [_filled(column, types[column]) for column in columns]
        sql = f'SELECT count(*){"".join(", " + c for c in counts)} FROM "{name}"'  # noqa: S608
        total, *filled = tables.connection.execute(sql).fetchone()
        labels = tables.labels(name)
        found[name] = [
            {
                "name": column,
                "label": labels.get(column, column),
                "filled": int(count),
                "total": int(total),
            }
            for column, count in zip(columns, filled, strict=True)
        ]
    return found


def _filled(column: str, data_type: str) -> str:
    if data_type == "VARCHAR":
        return f"count(nullif(trim({quote(column)}), ''))"
    if data_type.endswith("[]"):
        return f"count(nullif(len({quote(column)}), 0))"
    return f"count({quote(column)})"


def deal_stages(tables: Tables) -> dict[str, str]:
    """Deal id -> its stage's label (as given when no pipeline knows it; NO_STAGE)."""
    rows = tables.connection.execute(
        "SELECT id, coalesce(stage_label, nullif(trim(stage), ''), ?) FROM deals", [NO_STAGE]
    ).fetchall()
    return dict(rows)
