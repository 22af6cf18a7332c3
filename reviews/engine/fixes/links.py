"""Where a run's records live, for the links on its fix plan (page, CSV, API): a HubSpot
portal (its Hub ID and HubSpot's app address) or a Salesforce org (its address, the
`instance_url` its API answers). An export does not say which account it came from, so a
run links only when its dataset names one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from reviews.engine.fixes.hubspot_names import APP_URL, OBJECT_TYPE_IDS
from reviews.engine.ingest.salesforce.fields import BY_LIST
from reviews.engine.vocabulary import HUBSPOT, SALESFORCE

# A Salesforce record id: 15 characters, case-sensitive, or the 18 of its API form.
_SALESFORCE_ID = re.compile(r"[A-Za-z0-9]{15}(?:[A-Za-z0-9]{3})?")


@dataclass(frozen=True, slots=True)
class RecordLinks:
    crm: str = HUBSPOT
    account: str = ""  # HubSpot: the portal id; Salesforce: the org's https address
    app_url: str = APP_URL  # HubSpot's app (app-eu1.hubspot.com for an EU portal)

    def url(self, object_type: str, record_id: str) -> str:
        """The record's page; "" without an account, or for an id the CRM would not
        have given (HubSpot's are numbers; Salesforce's 15 or 18 letters and digits)."""
        if not self.account:
            return ""
        if self.crm == SALESFORCE:
            sf_object = BY_LIST.get(object_type)
            if sf_object is None or not _SALESFORCE_ID.fullmatch(record_id):
                return ""
            org = urlsplit(self.account)
            if org.scheme not in ("https", "http") or not org.netloc:
                return ""
            # Lightning's record page (developer.salesforce.com, pageReference types), on
            # the org's host whatever path the address was given with.
            return f"{org.scheme}://{org.netloc}/lightning/r/{sf_object.name}/{record_id}/view"
        type_id = OBJECT_TYPE_IDS.get(object_type)
        if not type_id or not (record_id.isdigit() and record_id.isascii()):
            return ""
        return f"{self.app_url.rstrip('/')}/contacts/{self.account}/record/{type_id}/{record_id}"

    @property
    def where(self) -> str:
        """The account in words: "HubSpot portal 4512345"; "" for none."""
        if not self.account:
            return ""
        if self.crm == SALESFORCE:
            return f"Salesforce org {urlsplit(self.account).netloc or self.account}"
        return f"HubSpot portal {self.account}"

    @property
    def crm_label(self) -> str:
        return "Salesforce" if self.crm == SALESFORCE else "HubSpot"

    @property
    def id_rule(self) -> str:
        """What an id must look like to have a link."""
        if self.crm == SALESFORCE:
            return "a Salesforce record id (15 or 18 letters and digits)"
        return "a HubSpot record id (a number)"


NO_LINKS = RecordLinks()
