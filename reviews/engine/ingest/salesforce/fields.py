"""Which Salesforce column fills which field: one table per object.

Each field is listed with its API name first (the weekly Data Export, Data Loader, a
connector's pull) and then the labels a report export heads it with ("Account Name",
"Opportunity Owner", "Close Date"). Names are Salesforce's own, from its field
reference (Account, Contact, Opportunity, Lead, OpportunityContactRole, User,
OpportunityStage). Keys that are fields of the batch (docs/input.md names: `name`,
`closeDate`) fill the record; the others (`isDeleted`, `isWon`, `opportunityId`) are
read by the reader and kept in the record's `extra` under their header too. Headers
match case- and space-insensitively, as HubSpot's do (columns.header_key)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviews.engine.ingest.columns import header_key
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, LEADS, Kind

_DELETED = {"isDeleted": ("IsDeleted", "Deleted")}
_MERGED = {"masterId": ("MasterRecordId", "Master Record ID")}
_MODIFIED = ("LastModifiedDate", "Last Modified Date", "SystemModstamp")


@dataclass(frozen=True, slots=True)
class SfObject:
    name: str  # Account: the API name, and the file name of an export (Account.csv)
    kind: Kind | None  # the batch list it fills; None for what only helps read them
    fields: dict[str, tuple[str, ...]]
    needs_id: bool = True  # a contact roles report has no id of its rows
    # Keys mapped (for team rules' names) that nothing reads: their columns are listed
    # in batch.ignored_columns like any other column no rule reads.
    unread: frozenset[str] = frozenset()


ACCOUNT = SfObject(
    "Account",
    COMPANIES,
    {
        "id": ("Id", "Account ID"),
        "name": ("Name", "Account Name"),
        "domain": ("Website", "Website"),  # normalize.domain strips the scheme and path
        "updatedAt": _MODIFIED,
        "owner": ("OwnerId", "Account Owner"),
        "recordSource": ("AccountSource", "Account Source"),
        **_DELETED,
        **_MERGED,
    },
)
CONTACT = SfObject(
    "Contact",
    CONTACTS,
    {
        "id": ("Id", "Contact ID"),
        "email": ("Email", "Email"),
        "firstName": ("FirstName", "First Name"),
        "lastName": ("LastName", "Last Name"),
        "companyId": ("AccountId", "Account ID"),
        "updatedAt": _MODIFIED,
        "owner": ("OwnerId", "Contact Owner"),
        "recordSource": ("LeadSource", "Lead Source"),
        **_DELETED,
        **_MERGED,
    },
)
OPPORTUNITY = SfObject(
    "Opportunity",
    DEALS,
    {
        "id": ("Id", "Opportunity ID"),
        "name": ("Name", "Opportunity Name"),
        "amount": ("Amount", "Amount"),
        # A multi-currency org's report writes the code beside each currency field, as
        # "Amount Currency" ("Amount (Converted) Currency" is the converted amount's, not
        # the deal's); the field itself is labelled "Opportunity Currency".
        "currency": ("CurrencyIsoCode", "Opportunity Currency", "Amount Currency", "Currency"),
        "stage": ("StageName", "Stage"),
        "closeDate": ("CloseDate", "Close Date"),
        "companyId": ("AccountId", "Account ID"),
        "updatedAt": _MODIFIED,
        "owner": ("OwnerId", "Opportunity Owner"),
        "recordSource": ("LeadSource", "Lead Source"),
        # The state of the deal's stage, as the org defines it (IsClosed, IsWon): what
        # tells open, won and lost apart when no OpportunityStage file comes with it.
        "isClosed": ("IsClosed", "Closed"),
        "isWon": ("IsWon", "Won"),
        "probability": ("Probability", "Probability (%)"),
        **_DELETED,
    },
)
LEAD = SfObject(
    "Lead",
    LEADS,
    {
        "id": ("Id", "Lead ID"),
        "email": ("Email", "Email"),
        "firstName": ("FirstName", "First Name"),
        "lastName": ("LastName", "Last Name"),
        "company": ("Company", "Company / Account", "Company"),
        "isConverted": ("IsConverted", "Converted"),
        "updatedAt": _MODIFIED,
        "owner": ("OwnerId", "Lead Owner"),
        "recordSource": ("LeadSource", "Lead Source"),
        **_DELETED,
        **_MERGED,
    },
)
CONTACT_ROLE = SfObject(
    "OpportunityContactRole",
    None,
    {
        "id": ("Id", "Contact Role ID"),
        "opportunityId": ("OpportunityId", "Opportunity ID"),
        "contactId": ("ContactId", "Contact ID"),
        "role": ("Role", "Contact Role", "Role"),
        "isPrimary": ("IsPrimary", "Primary", "Is Primary"),
        **_DELETED,
    },
    needs_id=False,
    unread=frozenset({"role"}),
)
USER = SfObject(
    "User",
    None,
    {
        "id": ("Id", "User ID"),
        "name": ("Name", "Full Name"),
        "firstName": ("FirstName", "First Name"),
        "lastName": ("LastName", "Last Name"),
        "isActive": ("IsActive", "Active"),
    },
)
STAGE = SfObject(
    "OpportunityStage",
    None,
    {
        "id": ("Id", "Opportunity Stage ID"),
        "apiName": ("ApiName", "API Name"),
        "label": ("MasterLabel", "Master Label"),
        "isClosed": ("IsClosed", "Closed"),
        "isWon": ("IsWon", "Won"),
        "probability": ("DefaultProbability", "Probability (%)"),
        "isActive": ("IsActive", "Is Active"),
        "sortOrder": ("SortOrder", "Sort Order"),
    },
    unread=frozenset({"isActive"}),  # an inactive stage still names its opportunities'
)
# The org itself (a pull writes Organization.csv): its currency is every amount's that
# names none, as a single-currency org's opportunities do (they have no CurrencyIsoCode).
ORGANIZATION = SfObject(
    "Organization",
    None,
    {
        "id": ("Id", "Organization ID"),
        "name": ("Name", "Organization Name"),
        "currency": ("DefaultCurrencyIsoCode", "Currency Locale"),
    },
)
SF_OBJECTS = (ACCOUNT, CONTACT, OPPORTUNITY, LEAD, CONTACT_ROLE, USER, STAGE, ORGANIZATION)
BY_FILE = {o.name.casefold(): o for o in SF_OBJECTS}
BY_LIST = {o.kind.name: o for o in SF_OBJECTS if o.kind is not None}

# Headers that tell a file's object when its name does not: every group must have one
# of its headers in the file; the first object that fits names it. A report is told by
# its labels, its id column's or others only Salesforce writes ("Opportunity Name"),
# so a report without its id column is refused rather than read as another object (an
# Opportunities report also has Account ID). A contact roles report also has
# Opportunity ID and Contact ID; a Contacts report has no label of its own but its
# account's beside a person's.
_Markers = tuple[tuple["SfObject", tuple[tuple[str, ...], ...]], ...]
_ACCOUNT_LABELS = ("Account ID", "Account Name", "Account Owner")
_REPORT_MARKERS: _Markers = (
    (CONTACT_ROLE, (("Contact Role", "Contact Role ID"),)),
    (OPPORTUNITY, (("Opportunity ID", "Opportunity Name", "Opportunity Owner"),)),
    (LEAD, (("Lead ID", "Lead Owner", "Company / Account"),)),
    (CONTACT, (("Contact ID",),)),
    (CONTACT, (_ACCOUNT_LABELS, ("Contact Owner", "Email", "First Name", "Last Name"))),
    (USER, (("User ID",),)),
    (ACCOUNT, (_ACCOUNT_LABELS,)),
)
# An API-named file whose name is not its object's: its headers. A file named like an
# object (Task.csv, Invoice__c.csv: the Data Export's other files) only by fields no
# other object has, as the Data Export holds dozens of objects.
_API_MARKERS: _Markers = (
    (STAGE, (("ApiName",), ("MasterLabel",))),
    (CONTACT_ROLE, (("OpportunityId",), ("ContactId",))),
    (OPPORTUNITY, (("StageName",),)),
    (LEAD, (("IsConverted",),)),
    (USER, (("Username",),)),
    (CONTACT, (("AccountId",), ("Email",))),
    (ACCOUNT, (("AccountSource",),)),
)
# A file named otherwise (Data Loader's extract.csv, a pipe): its Id and fields of its
# object, in an order that settles the objects sharing some (a User and a Lead have a
# Contact's names; an Opportunity has an Account's Name).
_LOADER_MARKERS: _Markers = (
    *_API_MARKERS,
    (STAGE, (("DefaultProbability",), ("IsClosed", "IsWon"))),
    (USER, (("Alias", "ProfileId", "UserRoleId", "TimeZoneSidKey", "LocaleSidKey"),)),
    (USER, (("IsActive",), ("FirstName", "LastName", "Email"))),
    (LEAD, (("Company", "ConvertedContactId", "ConvertedAccountId", "ConvertedDate"),)),
    (OPPORTUNITY, (("CloseDate", "ForecastCategory", "ForecastCategoryName", "Amount"),)),
    (CONTACT, (("FirstName", "LastName", "Email"),)),
    (
        ACCOUNT,
        (
            ("Name",),
            (
                "Website",
                "BillingCountry",
                "BillingCity",
                "Industry",
                "NumberOfEmployees",
                "AnnualRevenue",
                "AccountNumber",
            ),
        ),
    ),  # fmt: skip
)
_OBJECT_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")  # Account, OpportunityContactRole, X__c


def object_of(file_name: str, headers: list[str]) -> tuple[SfObject | None, bool]:
    """(the object a file holds, whether it is a report export with labels): by its file
    name (Account.csv, as the Data Export and Data Loader name them), else its headers."""
    keys = {header_key(h) for h in headers}
    report = "id" not in keys  # API files have an Id column; reports label theirs
    named = BY_FILE.get(_base(file_name).casefold())
    if named is not None:
        return named, report
    return object_by_headers(keys, report, not named_like_object(file_name)), report


def named_like_object(file_name: str) -> bool:
    """Whether a file is named like a Salesforce object (Task.csv), as the Data Export
    names each object's file."""
    return bool(_OBJECT_NAME.fullmatch(_base(file_name)))


def _base(file_name: str) -> str:
    return file_name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]


def object_by_headers(keys: set[str], report: bool, loader: bool = True) -> SfObject | None:
    """The object whose headers (folded by header_key) a file has, or None. `loader`: an
    API-named file not named like an object, told by broader fields."""
    markers = _REPORT_MARKERS if report else _LOADER_MARKERS if loader else _API_MARKERS
    for sf_object, groups in markers:
        if all(any(header_key(h) in keys for h in group) for group in groups):
            return sf_object
    return None


def map_headers(sf_object: SfObject, headers: list[str], report: bool) -> dict[int, str]:
    """{column position: key}: each key takes its first column (an API file reads API
    names, a report its labels; a file of either kind may carry the other's)."""
    wanted: dict[str, str] = {}
    for key, names in sf_object.fields.items():
        order = names[1:] + names[:1] if report else names
        for name in order:
            wanted.setdefault(header_key(name), key)
    mapped: dict[int, str] = {}
    taken: set[str] = set()
    for position, header in enumerate(headers):
        key = wanted.get(header_key(header))
        if key is not None and key not in taken:
            mapped[position] = key
            taken.add(key)
    return mapped


# Batch fields a list's file has no column for, filled from another file: a deal's
# contacts from its contact roles, whether a lead's owner is active from the users.
FILLED_ELSEWHERE = {"deals": ("contactIds", CONTACT_ROLE), "leads": ("ownerActive", USER)}


def record_keys(sf_object: SfObject) -> frozenset[str]:
    """The keys that are fields of the batch's records (the rest only help read them)."""
    if sf_object.kind is None:
        return frozenset()
    return frozenset(f.key for f in sf_object.kind.fields) | {"id"}


def columns_of(listed: str, field: str) -> tuple[list[str], list[str]]:
    """(report labels, API names) of the column that fills `field` of `listed`, for
    the missing-columns list of a Salesforce batch (reviews.engine.coverage)."""
    sf_object = BY_LIST.get(listed)
    names = sf_object.fields.get(field, ()) if sf_object else ()
    if field == "ownerActive":
        return ["Active (Users report)"], ["User.IsActive"]
    if field == "contactIds":
        return ["Contact ID (Opportunities with Contact Roles)"], ["OpportunityContactRole"]
    return list(names[1:2]), list(names[:1])
