"""Which column of a HubSpot export (or which API property) fills which field: one table.

HubSpot labels an export's columns with the properties' labels in the account's
language, or with their internal names when the user exports with internal names
(the same names the CRM API uses). Every spelling of one field is listed under it, in
order of preference: where a file has two columns for one field, the earlier wins (the
`(Primary)` association over the plain one). Headers match case- and
space-insensitively. Extend it here; every column not listed is kept in the record's
`extra` and named in the batch's ignored columns.

Keys beyond the JSON batch's own fields (docs/input.md) are resolved by hubspot_records:
companyIds (every associated company), companyName (an association that holds the
company's name), website (the domain when there is no domain column), amountCompany
(the amount in the account's company currency, preferred for money at risk) and
updatedAt on contacts and deals (for the as-of time of an export)."""

from __future__ import annotations

from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, Kind

# Languages with labels below, for the error on an export in any other language.
LANGUAGES = "English, German, French, Spanish, Portuguese"

_RECORD_ID = (
    "Record ID",
    "hs_object_id",
    "Datensatz-ID",  # de
    "ID de fiche d'informations",  # fr
    "ID de registro",  # es
    "ID do registro",  # pt
)
_LAST_MODIFIED = (
    "Last Modified Date",
    "hs_lastmodifieddate",
    "lastmodifieddate",
    "Zuletzt geändert am",
    "Date de dernière modification",
    "Fecha de última modificación",
    "Data da última modificação",
)
_COMPANY_IDS_PRIMARY = (
    "Associated Company IDs (Primary)",
    "Associated Company ID (Primary)",
    "associatedcompanyid",
    "Zugeordnete Unternehmens-IDs (primär)",
    "ID d'entreprises associées (principale)",
    "ID de empresas asociadas (principal)",
    "IDs de empresas associadas (principal)",
)
_COMPANY_IDS = (
    "Associated Company IDs",
    "Associated Company ID",
    "Zugeordnete Unternehmens-IDs",
    "ID d'entreprises associées",
    "ID de empresas asociadas",
    "IDs de empresas associadas",
)
_COMPANY_NAME = (
    "Associated Company",
    "Zugeordnetes Unternehmen",
    "Entreprise associée",
    "Empresa asociada",
    "Empresa associada",
)

# Who owns a record and where it came from: the same three fields on every kind.
_RECORD_SOURCE = (
    "Record source",
    "hs_object_source_label",
    "hs_object_source",
    "Original Source",
    "Original source",
    "hs_analytics_source",
    "Datensatzquelle",
    "Originalquelle",
    "Source de la fiche d'informations",
    "Source d'origine",
    "Fuente del registro",
    "Fuente original",
    "Fonte do registro",
    "Fonte original",
)
_RECORD_SOURCE_DETAIL = (
    "Record source detail 1",
    "hs_object_source_detail_1",
    "Original Source Drill-Down 1",
    "Original source drill-down 1",
    "hs_analytics_source_data_1",
)


def _owned(owner_label: str, *more: str) -> dict[str, tuple[str, ...]]:
    return {
        "owner": (owner_label, "hubspot_owner_id", *more),
        "recordSource": _RECORD_SOURCE,
        "recordSourceDetail": _RECORD_SOURCE_DETAIL,
    }


COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "companies": {
        "id": _RECORD_ID,
        "name": (
            "Company name",
            "name",
            "Unternehmensname",
            "Nom de l'entreprise",
            "Nombre de la empresa",
            "Nome da empresa",
        ),
        "domain": (
            "Company Domain Name",
            "domain",
            "Domain-Name des Unternehmens",
            "Nom de domaine de l'entreprise",
            "Nombre de dominio de la empresa",
            "Nome do domínio da empresa",
        ),
        "website": (
            "Website URL",
            "website",
            "Website-URL",
            "URL du site web",
            "URL del sitio web",
            "URL do site",
        ),
        "enrichedAt": ("Enriched At", "Last Enrichment Date"),
        "updatedAt": _LAST_MODIFIED,
        **_owned(
            "Company owner",
            "Unternehmensinhaber",
            "Propriétaire de l'entreprise",
            "Propietario de la empresa",
            "Proprietário da empresa",
        ),
    },
    "contacts": {
        "id": _RECORD_ID,
        "email": ("Email", "email", "E-Mail", "E-mail", "Correo", "Correo electrónico"),
        "firstName": ("First Name", "firstname", "Vorname", "Prénom", "Nombre", "Nome"),
        "lastName": ("Last Name", "lastname", "Nachname", "Nom", "Apellidos", "Sobrenome"),
        "companyId": _COMPANY_IDS_PRIMARY,
        "companyIds": _COMPANY_IDS,
        "companyName": _COMPANY_NAME,
        "updatedAt": _LAST_MODIFIED,
        **_owned(
            "Contact owner",
            "Kontaktinhaber",
            "Propriétaire du contact",
            "Propietario del contacto",
            "Proprietário do contato",
        ),
    },
    "deals": {
        "id": _RECORD_ID,
        "name": (
            "Deal Name",
            "dealname",
            "Name des Deals",
            "Dealname",
            "Nom de la transaction",
            "Nombre del negocio",
            "Nome do negócio",
        ),
        "amountCompany": (
            "Amount in company currency",
            "amount_in_home_currency",
            "Betrag in Firmenwährung",
            "Montant dans la devise de l'entreprise",
            "Importe en la moneda de la empresa",
            "Valor na moeda da empresa",
        ),
        "amount": ("Amount", "amount", "Betrag", "Montant", "Importe", "Valor"),
        "currency": (
            "Currency",
            "deal_currency_code",
            "Währung",
            "Devise",
            "Moneda",
            "Moeda",
        ),
        "stage": (
            "Deal Stage",
            "dealstage",
            "Dealphase",
            "Phase de la transaction",
            "Etapa del negocio",
            "Etapa do negócio",
        ),
        "closeDate": (
            "Close Date",
            "closedate",
            "Abschlussdatum",
            "Date de fermeture",
            "Fecha de cierre",
            "Data de fechamento",
        ),
        "pipeline": ("Pipeline", "pipeline", "Pipeline de transactions"),
        "companyId": _COMPANY_IDS_PRIMARY,
        "companyIds": _COMPANY_IDS,
        "companyName": _COMPANY_NAME,
        "contactIds": (
            "Associated Contact IDs",
            "Zugeordnete Kontakt-IDs",
            "ID de contacts associés",
            "ID de contactos asociados",
            "IDs de contatos associados",
        ),
        "updatedAt": _LAST_MODIFIED,
        **_owned(
            "Deal owner",
            "Dealinhaber",
            "Propriétaire de la transaction",
            "Propietario del negocio",
            "Proprietário do negócio",
        ),
        # HubSpot's own state of the deal's stage (hubspot_records.observe_stages): what
        # tells open, won and lost apart in a pipeline revreview has no definition of.
        "isClosedWon": ("Is Closed Won", "hs_is_closed_won", "Is closed won"),
        "isClosed": ("Is Deal Closed?", "hs_is_closed", "Is Deal Closed", "Is closed"),
        "probability": (
            "Deal probability",
            "hs_deal_stage_probability",
            "Deal Stage Probability",
            "Dealwahrscheinlichkeit",
            "Probabilité de la transaction",
            "Probabilidad del negocio",
            "Probabilidade do negócio",
        ),
    },
}

# Which export a file is: the first kind with a column for one of these fields.
# Contacts come before companies because a contacts export often carries a company
# name column; deals first because a deal name is unambiguous.
KIND_MARKERS: tuple[tuple[Kind, tuple[str, ...]], ...] = (
    (DEALS, ("name", "stage")),
    (CONTACTS, ("email",)),
    (COMPANIES, ("name", "domain", "website")),
)
KINDS = {kind.name: kind for kind in (COMPANIES, CONTACTS, DEALS)}


def header_key(header: str) -> str:
    """Case, spaces and Excel's stray BOM or non-breaking spaces do not matter."""
    return "".join(header.replace("\ufeff", "").split()).casefold()


# kind -> folded header -> (preference, field)
_LOOKUP: dict[str, dict[str, tuple[int, str]]] = {}
for _kind, _fields in COLUMNS.items():
    _table: dict[str, tuple[int, str]] = {}
    for _field, _labels in _fields.items():
        for _rank, _label in enumerate(_labels):
            _table.setdefault(header_key(_label), (_rank, _field))
    _LOOKUP[_kind] = _table


def kind_of(headers: list[str]) -> Kind | None:
    present = [header_key(h) for h in headers]
    for kind, markers in KIND_MARKERS:
        table = _LOOKUP[kind.name]
        if any(table.get(h, (0, None))[1] in markers for h in present):
            return kind
    return None


def map_headers(kind: Kind, headers: list[str]) -> tuple[list[tuple[int, str]], list[str]]:
    """([(column position, field)], [ignored header]) for one file: each field takes its
    most preferred column; every other non-empty header is ignored (kept in `extra`)."""
    table = _LOOKUP[kind.name]
    best: dict[str, tuple[int, int]] = {}  # field -> (preference, position)
    for position, header in enumerate(headers):
        hit = table.get(header_key(header))
        if hit is None:
            continue
        rank, field = hit
        if field not in best or rank < best[field][0]:
            best[field] = (rank, position)
    mapped = sorted(((position, field) for field, (_, position) in best.items()))
    taken = {position for position, _ in mapped}
    ignored = [h.strip() for p, h in enumerate(headers) if p not in taken and h.strip()]
    return mapped, ignored


def field_of(kind_name: str, header: str) -> str:
    """The field a header (or API property name) fills; "" if none."""
    hit = _LOOKUP[kind_name].get(header_key(header))
    return hit[1] if hit else ""


def map_properties(kind: Kind, properties: dict) -> dict[str, object]:
    """An API object's `properties` (internal names) as fields, by the same table."""
    table = _LOOKUP[kind.name]
    best: dict[str, tuple[int, object]] = {}
    for name, value in properties.items():
        hit = table.get(header_key(name))
        if hit is None or value is None or value == "":
            continue
        rank, field = hit
        if field not in best or rank < best[field][0]:
            best[field] = (rank, value)
    return {field: value for field, (_, value) in best.items()}
