"""Which model each agent calls: the admin's row (ledger.AgentModelOverride), else
settings.LLM_ROSTER, else DESIGN.md's default roster. Read on every call, so an edit
takes effect on the next call without a restart."""

from __future__ import annotations

from django.conf import settings

from ledger.models import AgentModelOverride

CHEAP = "google/gemini-2.5-flash-lite"
MID = "google/gemini-2.5-flash"

DEFAULT_ROSTER: dict[str, str] = {
    "dedup": CHEAP,
    "attribution": CHEAP,
    "pipeline": CHEAP,
    "freshness": CHEAP,
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
