"""A merge plan in the shape Salesforce's merge takes (the SOAP API's merge(), Apex's
`merge` statement, and the merge tools built on them): a master record and at most two
records merged into it, three records in all, each request of one object. A plan's
cluster of four or more becomes several requests into the same master, as Salesforce's
documentation advises. Salesforce merges Accounts, Contacts and Leads; an Opportunity
merge is listed for the tools that offer one. Plain Python, no Django."""

from __future__ import annotations

from dataclasses import dataclass

from reviews.engine.fixes.fixplan import Merge

PER_REQUEST = 2  # records merged into the master in one request (three with it)
# The fix plan's object names (the CRM API's) as Salesforce names the objects.
SOBJECT = {"companies": "Account", "contacts": "Contact", "deals": "Opportunity", "leads": "Lead"}
MERGEABLE = {"Account", "Contact", "Lead"}  # what Salesforce's own merge takes


@dataclass(frozen=True, slots=True)
class MergeRequest:
    sobject: str  # Account, Contact, Lead, Opportunity
    master: str  # the record that stays
    merged: tuple[str, ...]  # one or two, merged into it
    reason: str
    fingerprint: str  # the plan's merge (its finding)


def merge_requests(merges: list[Merge]) -> list[MergeRequest]:
    """Each merge of the plan as requests of at most three records, in the plan's order."""
    requests = []
    for merge in merges:
        sobject = SOBJECT.get(merge.object, merge.object)
        for start in range(0, len(merge.merge), PER_REQUEST):
            requests.append(
                MergeRequest(
                    sobject=sobject,
                    master=merge.primary,
                    merged=tuple(merge.merge[start : start + PER_REQUEST]),
                    reason=merge.reason,
                    fingerprint=merge.fingerprint,
                )
            )
    return requests
