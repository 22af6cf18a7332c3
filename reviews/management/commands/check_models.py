"""manage.py check_models: ask the gateway's /models list whether it serves each model
the roster can call (every agent's model and its failbacks). Exits 1 if one is not
listed, 2 if there is no gateway or no list to ask."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from reviews.llm import config
from reviews.llm.catalog import fetch_catalog, roster_models


class Command(BaseCommand):
    help = "Report each roster model (agents and failbacks) as listed by the gateway or not."

    def handle(self, *args, **options) -> None:
        if not config.enabled():
            self.stderr.write("No LLM_BASE_URL: no gateway to ask (the detectors review alone).")
            sys.exit(2)
        catalog = fetch_catalog()
        missing = 0
        for model, users in sorted(roster_models().items()):
            listed = catalog.lists(model)
            status = {True: "listed", False: "NOT LISTED", None: "unknown"}[listed]
            missing += listed is False
            self.stdout.write(f"{status:<11} {model}  ({', '.join(users)})")
        if catalog.ids is None:
            self.stderr.write(f"The gateway has no model list to ask: {catalog.problem}")
            sys.exit(2)
        if missing:
            self.stderr.write(
                f"{missing} roster model(s) not listed by the gateway: change the roster "
                "(admin: Agent model overrides, or LLM_ROSTER) or LLM_FAILBACK_CHAIN."
            )
            sys.exit(1)
        self.stdout.write("Every roster model is listed by the gateway.")
