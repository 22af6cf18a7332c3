"""Which model each agent calls: the admin's row (ledger.AgentModelOverride), else
settings.LLM_ROSTER, else the default roster below. Read on every call, so an edit
takes effect on the next call without a restart.

The defaults keep DESIGN.md's shape (a cheap model for the specialists and the trivial
tier's coordinator, a mid one for the coordinator) with models Google serves today; their
failbacks are settings.LLM_FAILBACK_CHAIN, their rates and sources ledger/migrations/0004."""

from __future__ import annotations

from django.conf import settings

from ledger.models import AgentModelOverride
from reviews.engine.specialists import NAMES

CHEAP = "google/gemini-3.1-flash-lite"
MID = "google/gemini-3.5-flash"
# Their default failbacks: one step, cheaper, in the same family.
CHEAP_FAILBACK = "google/gemini-2.5-flash-lite"
MID_FAILBACK = "google/gemini-3-flash-preview"

DEFAULT_ROSTER: dict[str, str] = {
    **dict.fromkeys(NAMES, CHEAP),  # every specialist of the registry
    "coordinator": MID,
    # The coordinator of a trivial batch (DESIGN principle 3: cheap for trivial).
    "coordinator_trivial": CHEAP,
}


def model_for(agent: str) -> str:
    """`agent` is a specialist's name, "coordinator" or "coordinator_trivial"."""
    override = AgentModelOverride.objects.filter(agent=agent).values_list("model", flat=True)
    chosen = override.first()
    if chosen:
        return chosen
    roster = {**DEFAULT_ROSTER, **settings.LLM_ROSTER}
    return roster[agent]


def coordinator_model_for(tier: str) -> str:
    return model_for("coordinator_trivial" if tier == "trivial" else "coordinator")
