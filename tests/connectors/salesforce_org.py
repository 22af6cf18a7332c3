"""A Salesforce org as the stand-in (salesforce_standin.py) serves it: records by object,
and the changes a person makes in it, each stamping SystemModstamp as Salesforce does.

What changing the org does, as Salesforce documents it:
- an update stamps LastModifiedDate and SystemModstamp;
- a delete sets IsDeleted (the record goes to the recycle bin: queryAll still returns it);
- a merge (Account, Contact, Lead: up to three records) deletes the others, each with
  MasterRecordId the master's Id, and reparents their children (an Account's contacts,
  opportunities; a Contact's contact roles) onto the master, stamping each child;
- User and OpportunityStage have no IsDeleted or MasterRecordId.
Values are kept as the REST API's JSON gives them: strings, true/false, numbers, null;
dates YYYY-MM-DD, datetimes 2026-05-02T10:11:00.000+0000."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

# Every field the stand-in's describe lists, by object, with its describe type.
FIELDS: dict[str, dict[str, str]] = {
    "User": {
        "Id": "id",
        "Name": "string",
        "Email": "email",
        "IsActive": "boolean",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "OpportunityStage": {
        "Id": "id",
        "ApiName": "string",
        "MasterLabel": "string",
        "IsActive": "boolean",
        "IsClosed": "boolean",
        "IsWon": "boolean",
        "DefaultProbability": "percent",
        "SortOrder": "int",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "Account": {
        "Id": "id",
        "IsDeleted": "boolean",
        "MasterRecordId": "reference",
        "Name": "string",
        "Website": "url",
        "AccountSource": "picklist",
        "BillingCity": "string",
        "BillingAddress": "address",  # compound: its parts are fields of their own
        "OwnerId": "reference",
        "CurrencyIsoCode": "picklist",
        "Region__c": "picklist",  # a custom field
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "Contact": {
        "Id": "id",
        "IsDeleted": "boolean",
        "MasterRecordId": "reference",
        "AccountId": "reference",
        "FirstName": "string",
        "LastName": "string",
        "Name": "string",
        "Email": "email",
        "LeadSource": "picklist",
        "OwnerId": "reference",
        "CurrencyIsoCode": "picklist",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "Opportunity": {
        "Id": "id",
        "IsDeleted": "boolean",
        "AccountId": "reference",
        "Name": "string",
        "Amount": "currency",
        "StageName": "picklist",
        "CloseDate": "date",
        "IsClosed": "boolean",
        "IsWon": "boolean",
        "Probability": "percent",
        "OwnerId": "reference",
        "CurrencyIsoCode": "picklist",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "Lead": {
        "Id": "id",
        "IsDeleted": "boolean",
        "MasterRecordId": "reference",
        "FirstName": "string",
        "LastName": "string",
        "Name": "string",
        "Email": "email",
        "Company": "string",
        "LeadSource": "picklist",
        "Status": "picklist",
        "IsConverted": "boolean",
        "OwnerId": "reference",
        "CurrencyIsoCode": "picklist",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
    "OpportunityContactRole": {
        "Id": "id",
        "IsDeleted": "boolean",
        "OpportunityId": "reference",
        "ContactId": "reference",
        "Role": "picklist",
        "IsPrimary": "boolean",
        "CurrencyIsoCode": "picklist",
        "SystemModstamp": "datetime",
        "LastModifiedDate": "datetime",
    },
}
PREFIX = {
    "User": "005",
    "OpportunityStage": "01J",
    "Account": "001",
    "Contact": "003",
    "Opportunity": "006",
    "Lead": "00Q",
    "OpportunityContactRole": "00K",
    "Task": "00T",
}
MERGEABLE = ("Account", "Contact", "Lead")
# (child object, its field) reparented when a record of the key's object is merged away.
CHILDREN = {
    "Account": (("Contact", "AccountId"), ("Opportunity", "AccountId")),
    "Contact": (("OpportunityContactRole", "ContactId"),),
    "Lead": (),
}


def id18(id15: str) -> str:
    """Salesforce's 18-character id: per 5-character chunk, a bit per upper-case letter
    (the first character the lowest bit), read as an index into A-Z0-5."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
    suffix = ""
    for start in (0, 5, 10):
        bits = sum(1 << i for i, c in enumerate(id15[start : start + 5]) if "A" <= c <= "Z")
        suffix += alphabet[bits]
    return id15 + suffix


def sf_datetime(moment: datetime) -> str:
    """As the REST API writes a datetime: 2026-05-02T10:11:00.000+0000."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000+0000")


def read_datetime(text: str) -> datetime:
    """A REST datetime, or a SOQL literal (2026-05-02T10:11:00Z)."""
    text = text.replace("Z", "+0000")
    for shape in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(text, shape)
        except ValueError:
            continue
    raise ValueError(f"not a datetime: {text!r}")


class Org:
    def __init__(self, org_id: str = "00D5g000004ABCDEAZ", currency: str = "USD") -> None:
        self.org_id = org_id
        self.currency = currency
        self.records: dict[str, dict[str, dict]] = {name: {} for name in FIELDS}
        self.tasks: dict[str, dict] = {}
        # Stamps follow the real clock (a pull's `since` is its start less an overlap),
        # a minute apart at least: the org was filled a day ago.
        self.clock = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
        self.serial = 0
        self.hidden: dict[str, set[str]] = {}  # object -> fields the user cannot read

    def tick(self) -> str:
        now = datetime.now(UTC).replace(microsecond=0)
        self.clock = max(self.clock + timedelta(minutes=1), now)
        return sf_datetime(self.clock)

    def new_id(self, sobject: str) -> str:
        """An 18-character id: the object's key prefix, a serial, Salesforce's suffix."""
        self.serial += 1
        return id18(f"{PREFIX[sobject]}5g00000{self.serial:05d}")

    def add(self, sobject: str, **values: object) -> str:
        rid = str(values.pop("Id", "") or self.new_id(sobject))
        record = {name: None for name in FIELDS[sobject] if FIELDS[sobject][name] != "address"}
        record.update({"Id": rid, **values})
        if "IsDeleted" in record:
            record["IsDeleted"] = bool(record.get("IsDeleted"))
        if "CurrencyIsoCode" in record and record["CurrencyIsoCode"] is None:
            record["CurrencyIsoCode"] = self.currency
        stamp = self.tick()
        record["SystemModstamp"] = record["LastModifiedDate"] = stamp
        self.records[sobject][rid] = record
        return rid

    def update(self, sobject: str, rid: str, **values: object) -> None:
        record = self.records[sobject][rid]
        record.update(values)
        record["SystemModstamp"] = record["LastModifiedDate"] = self.tick()

    def delete(self, sobject: str, rid: str) -> None:
        self.update(sobject, rid, IsDeleted=True)

    def merge(self, sobject: str, master: str, *others: str) -> None:
        """Salesforce's merge: at most three records, of an object that merges."""
        assert sobject in MERGEABLE and 1 <= len(others) <= 2, "merge takes up to three records"
        for other in others:
            for child, field in CHILDREN[sobject]:
                for rid, row in self.records[child].items():
                    if row.get(field) == other and not row.get("IsDeleted"):
                        self.update(child, rid, **{field: master})
            self.update(sobject, other, IsDeleted=True, MasterRecordId=master)
        self.update(sobject, master)


def small_org() -> Org:
    """Two owners, the standard stages and a custom one, a duplicate account, contacts,
    opportunities in two currencies, leads (one already a contact) and contact roles:
    enough records for several pages at a small page size."""
    org = Org()
    ana = org.add("User", Name="Ana Ruiz", Email="ana@acme.test", IsActive=True)
    ben = org.add("User", Name="Ben Okafor", Email="ben@acme.test", IsActive=False)
    for order, (api, closed, won, chance) in enumerate(
        [
            ("Prospecting", False, False, 10),
            ("Negotiation/Review", False, False, 90),
            ("Closed Won", True, True, 100),
            ("Closed Lost", True, False, 0),
            ("Legal Review", False, False, 80),  # a custom stage
        ]
    ):
        org.add(
            "OpportunityStage",
            ApiName=api,
            MasterLabel=api,
            IsActive=True,
            IsClosed=closed,
            IsWon=won,
            DefaultProbability=Decimal(chance),
            SortOrder=order + 1,
        )
    acme = org.add(
        "Account", Name="Acme Corp", Website="acme.test", AccountSource="Web", OwnerId=ana,
        BillingCity="Lyon", Region__c="EMEA",
    )  # fmt: skip
    org.add(
        "Account", Name="ACME Corporation", Website="www.acme.test", AccountSource="Partner",
        OwnerId=ben,
    )  # fmt: skip
    globex = org.add(
        "Account", Name="Globex, \"the\" company", Website="globex.test", OwnerId=ana,
        CurrencyIsoCode="EUR", BillingCity="Köln\nNord",
    )  # fmt: skip
    contact = org.add(
        "Contact", AccountId=acme, FirstName="Rita", LastName="Moreno", Name="Rita Moreno",
        Email="rita@acme.test", LeadSource="Web", OwnerId=ana,
    )  # fmt: skip
    org.add(
        "Contact", AccountId=globex, FirstName="Hans", LastName="Gruber", Name="Hans Gruber",
        Email="hans@acme.test", OwnerId=ben,
    )  # fmt: skip
    won = org.add(
        "Opportunity", AccountId=acme, Name="Acme renewal", Amount=Decimal("125000.50"),
        StageName="Closed Won", CloseDate=None, IsClosed=True, IsWon=True,
        Probability=Decimal(100), OwnerId=ana,
    )  # fmt: skip
    org.add(
        "Opportunity", AccountId=globex, Name="Globex expansion", Amount=Decimal("48000"),
        StageName="Legal Review", CloseDate="2026-03-31", IsClosed=False, IsWon=False,
        Probability=Decimal(80), OwnerId=ben, CurrencyIsoCode="EUR",
    )  # fmt: skip
    org.add("OpportunityContactRole", OpportunityId=won, ContactId=contact, Role="Decision Maker",
            IsPrimary=True)  # fmt: skip
    org.add(
        "Lead", FirstName="Rita", LastName="Moreno", Name="Rita Moreno", Email="rita@acme.test",
        Company="Acme", LeadSource="Webinar", Status="Open - Not Contacted", IsConverted=False,
        OwnerId=ben,
    )  # fmt: skip
    return org
