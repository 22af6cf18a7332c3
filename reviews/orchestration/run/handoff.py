"""How a specialist's findings reach the coordinator: packed into one blob on the
specialist's AgentRun (reviews.engine.findings.pack), the record that survives a dead
worker; and, when the coordinator runs in the process that packed them (always in the
CLI, often in a worker), the findings themselves, which skips unpacking 150k findings
again (4% of a findings-heavy review).

A process keeps one run's findings, as reviews.orchestration.store.parsed keeps one batch,
and hands each agent's over once, and only if the stored blob is the one it packed:
the blob stays the authority."""

from __future__ import annotations

from collections.abc import Sequence

from reviews.engine.findings import RawFinding, pack_exact, unpack

_run_id: int | None = None
_kept: dict[str, tuple[bytes, list[RawFinding]]] = {}


def pack_for_coordinator(
    run_id: int, agent: str, findings: Sequence[RawFinding], dismissed: Sequence[RawFinding]
) -> bytes:
    """The blob to store on the agent, keeping the findings in this process while the
    blob gives exactly them back."""
    global _run_id
    blob, exact = pack_exact(findings, dismissed)
    if _run_id != run_id:
        _kept.clear()
        _run_id = run_id
    if exact:
        _kept[agent] = (blob, list(findings))
    else:
        _kept.pop(agent, None)
    return blob


def received_findings(
    run_id: int, agent: str, stored: bytes | memoryview | None
) -> list[RawFinding]:
    """The agent's findings as stored: those kept here when `stored` is the blob packed
    here, else the blob unpacked."""
    kept = _kept.pop(agent, None) if _run_id == run_id else None
    if kept is not None and stored is not None and kept[0] == stored:
        return kept[1]
    return unpack(stored)
