"""JSON as a script pulling HubSpot's CRM v3 objects API writes it.

GET /crm/v3/objects/{deals|contacts|companies}?properties=...&associations=companies,contacts
answers {"results": [{"id", "properties": {internal name: string}, "createdAt",
"updatedAt", "archived", "associations": {"companies": {"results": [{"id", "type"}]}}}],
"paging": ...}. Accepted as sent: one such page (or a bare list of objects) per file,
one file per object type; or one file holding all three under "companies", "contacts"
and "deals" (each a list of objects or a page). Properties map through the same table
as CSV headers (internal names); values are read as the API writes them.

Which fields the export has (Table.columns): the API answers every property asked for,
null when blank, so a property no object of a list holds, not even as null, was not in
the export; an association, likewise, when no object of the list has one. A combined
document may say instead which properties the portal returned for each list, under
"properties" ({"deals": ["amount", "dealstage", ...]}), as revreview's own pulls do
(their objects keep only the non-blank properties): then those are the list's columns,
with its associations, and a list it does not name is not judged."""

from __future__ import annotations

from functools import lru_cache

from reviews.engine.ingest.columns import KINDS, field_of, kind_of, map_properties
from reviews.engine.ingest.errors import ErrorList
from reviews.engine.ingest.hubspot_records import Table
from reviews.engine.ingest.values import describe

_LISTS = ("companies", "contacts", "deals")
# The fields a list's associations fill (_associations).
_ASSOCIATED = {
    "companies": frozenset(),
    "contacts": frozenset({"companyId", "companyIds"}),
    "deals": frozenset({"companyId", "companyIds", "contactIds"}),
}


def is_api_export(top: object) -> bool:
    """A v3 page, a list of v3 objects, or an object of those by type."""
    if top.__class__ is dict and "results" in top:
        return True
    if top.__class__ is list:
        return bool(top) and _is_object(top[0])
    if top.__class__ is dict:
        for name in _LISTS:
            value = top.get(name)
            if value.__class__ is dict and "results" in value:
                return True
            if value.__class__ is list and value and _is_object(value[0]):
                return True
    return False


def _is_object(value: object) -> bool:
    return value.__class__ is dict and "properties" in value and "id" in value


def api_tables(name: str, top: object, errors: ErrorList) -> list[Table]:
    """One Table per object type the document holds."""
    if top.__class__ is dict and any(key in top for key in _LISTS):
        declared = _declared(top.get("properties"))
        tables = []
        for kind in _LISTS:
            if kind in top:
                table = _table(f"{name}:{kind}", kind, _objects(top[kind]), errors)
                if table is not None:
                    if declared is not None:
                        table.columns = _declared_columns(kind, declared.get(kind))
                    tables.append(table)
        return tables
    objects = _objects(top)
    kind = _kind_by_name(name) or _kind_by_properties(objects)
    if kind is None:
        errors.add(
            f"{name}: cannot tell whether it holds companies, contacts or deals: "
            "name the file companies.json, contacts.json or deals.json"
        )
        return []
    table = _table(name, kind, objects, errors)
    return [table] if table is not None else []


def _declared(value: object) -> dict[str, object] | None:
    """A document's "properties" ({list: [property name]}), or None when it has none."""
    return value if value.__class__ is dict else None


def _declared_columns(kind: str, names: object) -> frozenset[str] | None:
    """The fields of the properties a document says the portal returned for `kind`,
    and its associations (a pull reads them); None when it names none for the list."""
    if names.__class__ is not list or not all(n.__class__ is str for n in names):
        return None
    return _mapped(kind, tuple(names))[1] | _ASSOCIATED[kind]


def _objects(value: object) -> object:
    return value.get("results") if value.__class__ is dict else value


def _kind_by_name(name: str) -> str | None:
    lowered = name.lower()
    for kind, stem in (("companies", "compan"), ("contacts", "contact"), ("deals", "deal")):
        if stem in lowered:
            return kind
    return None


def _kind_by_properties(objects: object) -> str | None:
    if objects.__class__ is not list:
        return None
    names = {key for o in objects[:50] if _is_object(o) for key in o["properties"]}
    kind = kind_of(sorted(names))
    return kind.name if kind else None


def _table(where: str, kind: str, objects: object, errors: ErrorList) -> Table | None:
    if objects.__class__ is not list:
        errors.add(f"{where}: not a list of objects: {describe(objects)}")
        return None
    table = Table(name=where, kind=kind, rows=[], written=False)
    first: dict[str, int] = {}
    ignored: dict[str, None] = {}
    columns: set[str] = set()  # the fields some object has a property (or association) for
    for index, obj in enumerate(objects):
        at = f"{kind}[{index}]"
        if obj.__class__ is not dict:
            errors.add(f"{where} {at}: not an object: {describe(obj)}")
            continue
        rid = obj.get("id")
        if rid.__class__ is int:
            rid = str(rid)
        if rid.__class__ is not str or not rid.strip():
            errors.add(f"{where} {at}.id: missing or not a string: {describe(rid)}")
            continue
        seen = first.setdefault(rid, index)
        if seen != index:
            errors.add(f"{where} {at}.id: duplicate of {kind}[{seen}] ({describe(rid)})")
            continue
        properties = obj.get("properties")
        if properties.__class__ is not dict:
            errors.add(f"{where} {at}.properties: not an object: {describe(properties)}")
            continue
        fields = map_properties(KINDS[kind], properties)
        fields.pop("id", None)  # hs_object_id: the same as `id`
        if "updatedAt" not in fields and obj.get("updatedAt"):
            fields["updatedAt"] = obj["updatedAt"]
            columns.add("updatedAt")
        _associations(obj.get("associations"), fields)
        used, filled = _mapped(kind, tuple(properties))
        columns.update(filled)
        for name in used.difference(table.headers):
            table.headers[name] = field_of(kind, name)
        columns.update(_ASSOCIATED[kind].intersection(fields))
        extra = {k: v for k, v in properties.items() if k not in used and v not in (None, "")}
        for key in extra:
            ignored.setdefault(key)
        table.rows.append((rid, fields, extra))
    table.ignored = list(ignored)
    table.columns = frozenset(columns) if table.rows else None
    return table


@lru_cache(maxsize=256)
def _mapped(kind: str, names: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """(the property names that fill a field, those fields): once per set of names (an
    API dump's objects mostly share one), not once per property of every object."""
    mapped = map_properties(KINDS[kind], {k: k for k in names})
    return frozenset(v for v in mapped.values() if v.__class__ is str), frozenset(mapped)


def _associations(associations: object, fields: dict) -> None:
    """associations.companies.results: every associated company; the one whose type is
    the primary (deal_to_company, contact_to_company, not *_unlabeled) is the company.
    associations.contacts.results: the deal's contacts."""
    if associations.__class__ is not dict:
        return
    companies = _associated(associations.get("companies"))
    if companies:
        ids = list(dict.fromkeys(i for i, _ in companies))
        fields["companyIds"] = ids
        primary = [i for i, kind in companies if kind.endswith("_to_company")]
        fields.setdefault("companyId", primary[0] if primary else ids[0])
    contacts = _associated(associations.get("contacts"))
    if contacts:
        fields["contactIds"] = list(dict.fromkeys(i for i, _ in contacts))


def _associated(value: object) -> list[tuple[str, str]]:
    results = value.get("results") if value.__class__ is dict else None
    if results.__class__ is not list:
        return []
    found = []
    for item in results:
        if item.__class__ is dict and item.get("id") not in (None, ""):
            found.append((str(item["id"]), str(item.get("type") or "")))
    return found
