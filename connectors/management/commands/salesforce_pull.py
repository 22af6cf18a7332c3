"""manage.py salesforce_pull: hubspot_pull under the name a Salesforce team looks for. Both
pull whichever CRM the dataset is connected to (docs/connectors.md), with the same
options, output and exit codes."""

from __future__ import annotations

from connectors.management.commands.hubspot_pull import Command as PullCommand


class Command(PullCommand):
    help = "Pull a connected Salesforce org (or HubSpot portal) now, review it, print the verdict."
