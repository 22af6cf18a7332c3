"""Apply a model's reply to the detectors' findings (the issue's point 5), over plain data.

A specialist may add findings, adjust a severity or dismiss a fuzzy rule finding, each
with a reason; the coordinator may merge, re-categorise and drop. Whatever the reply
says, the guards here hold: a finding naming a record that is not in the batch is
dropped, an exact rule's finding is never dismissed or dropped, a critical finding is
never dismissed, dropped or lowered (that would approve what the rules block), a finding
whose records carry text instructing the reviewer (reviews.llm.injection) is never
dismissed, dropped or lowered (the model may have obeyed it), a model never raises a
finding past a warning (MAX_MODEL_SEVERITY) unless a rule had made it critical, and
every change says in the finding's detail that the model made it, and why. What a guard
refused is returned as a line for the run to show.

A model can make the review stricter or quieter, never more lenient than the rules: a
dismissal (or a coordinator's drop) it is allowed demotes the finding to a suggestion
with the model's reason, in the report still, so a batch with findings is never
`approve` because a model said so. Text a model writes (a summary, a title, a reason)
that calls the batch approved or clean (reviews.llm.claims) is refused: the rules'
words are used instead.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.specialists.common import Exposure, exposure_of
from reviews.engine.storable import storable
from reviews.llm.claims import claims_approval
from reviews.llm.context import is_exact
from reviews.llm.injection import instructing_records
from reviews.llm.schemas import CoordinatorReply, NewFinding, SpecialistReply

logger = logging.getLogger(__name__)

_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")
_MAX_TITLE = 300
_MAX_TEXT = 2000
_MAX_REASON = 500
_MAX_SUMMARY = 1500
# The verdict is approval-biased (docs/rules.md): only a critical finding requests changes,
# and a model's word alone should not block a batch. What a model adds is at most a
# warning; a rule's finding may still be raised to critical, as a rule found it.
MAX_MODEL_SEVERITY = Severity.WARNING


@dataclass(slots=True)
class Applied:
    findings: list[RawFinding]  # dismissed ones included, demoted to suggestions
    dismissed: list[RawFinding] = field(default_factory=list)  # as they were, for the record
    refused: list[str] = field(default_factory=list)  # what the guards did not allow


class Guard:
    """Whether a model may remove or lower a finding, with the refusals it noted."""

    def __init__(self, agent: str, instructing: set[str]) -> None:
        self.agent, self.instructing = agent, instructing
        self.refused: list[str] = []

    def why_not(self, finding: RawFinding, *, exact_allowed: bool = False) -> str:
        """Why `finding` must stay as it is; "" if the model may remove or lower it."""
        if finding.severity == Severity.CRITICAL:
            return "it is critical"
        if not exact_allowed and is_exact(finding):
            return "an exact rule found it"
        named = sorted(self.instructing.intersection(finding.record_ids))
        if named:
            verb = "carries" if len(named) == 1 else "carry"
            return f"{', '.join(named[:5])} {verb} text that instructs the reviewer"
        return ""

    def refuse(self, action: str, ref: str, finding: RawFinding, why: str) -> None:
        line = f"{self.agent}: refused to {action} {ref} ({finding.kind}, "
        line += f"{', '.join(finding.record_ids[:5])}): {why}"
        self.note(line)

    def note(self, line: str) -> None:
        logger.warning("%s", line)
        self.refused.append(line[:500])

    def words(self, text: str, limit: int, what: str, *, of_batch: bool = False) -> str:
        """The model's `text`, clipped; or, when it calls the batch approved (`of_batch`:
        or clean), a note that it was refused (and a line saying so)."""
        if not claims_approval(text, of_batch=of_batch):
            return _clip(text, limit)
        self.note(
            f"{self.agent}: refused the model's {what}: it calls the batch approved or "
            f"clean, which is the rules' verdict to give ({_clip(text, 200)!r})"
        )
        return "(the model's words were refused: they contradicted the rules' verdict)"


_DEMOTED = (
    "Dismissed by the model review, so kept as a suggestion (a model may quiet a finding, "
    "never remove it)"
)


def demoted(finding: RawFinding, reason: str, by: str = "model review") -> RawFinding:
    """`finding` as a suggestion, with who dismissed it and why."""
    lead = _DEMOTED if by == "model review" else _DEMOTED.replace("model review", by)
    return replace(
        finding,
        severity=Severity.SUGGESTION.value,
        detail=f"{finding.detail} {lead}: {reason}",
    )


def protected_records(batch: Batch, findings: list[RawFinding]) -> set[str]:
    """Records named by `findings` whose text instructs the reviewer."""
    return set(instructing_records(batch, {r for f in findings for r in f.record_ids}))


def apply_specialist_reply(
    agent: str,
    batch: Batch,
    findings: list[RawFinding],
    refs: dict[str, int],
    reply: SpecialistReply,
) -> Applied:
    out = list(findings)
    wants_less = reply.dismiss or reply.adjust
    guard = Guard(agent, protected_records(batch, findings) if wants_less else set())
    dismissed: dict[int, str] = {}
    for item in reply.dismiss:
        i = _lookup(agent, refs, item.ref, "dismiss")
        if i is None:
            continue
        why = guard.why_not(out[i])
        if why:
            guard.refuse("dismiss", item.ref, out[i], why)
            continue
        dismissed[i] = guard.words(item.reason, _MAX_REASON, f"reason to dismiss {item.ref}")
    for item in reply.adjust:
        i = _lookup(agent, refs, item.ref, "adjust")
        if i is None or i in dismissed:
            continue
        old = out[i]
        wanted = Severity(item.severity)
        if wanted.rank > Severity(old.severity).rank:  # lowering
            why = guard.why_not(old, exact_allowed=True)
            if why:
                guard.refuse(f"lower to {wanted}", item.ref, old, why)
                continue
        severity = _allowed_severity(old, wanted)
        if severity == old.severity:
            if severity != item.severity:
                logger.info(
                    "%s: not moving %s (%s) to %s", agent, item.ref, old.kind, item.severity
                )
            continue
        reason = guard.words(item.reason, _MAX_REASON, f"reason to adjust {item.ref}")
        out[i] = replace(
            old,
            severity=severity,
            detail=f"{old.detail} Severity changed from {old.severity} to {severity} "
            f"by the model review: {reason}",
        )
    out.extend(_new_findings(agent, batch, findings, reply.add, guard))
    return Applied(
        findings=[demoted(f, dismissed[i]) if i in dismissed else f for i, f in enumerate(out)],
        dismissed=[out[i] for i in dismissed],
        refused=guard.refused,
    )


def _allowed_severity(finding: RawFinding, wanted: Severity) -> Severity:
    """What a model's severity change may do. A critical finding stays critical:
    lowering it would approve a batch the rules block, a dismissal by another name.
    Raising stops at MAX_MODEL_SEVERITY, unless a rule had made it critical."""
    current = Severity(finding.severity)
    if current == Severity.CRITICAL:
        return current
    ceiling = current if current.rank < MAX_MODEL_SEVERITY.rank else MAX_MODEL_SEVERITY
    return ceiling if wanted.rank < ceiling.rank else wanted


def apply_coordinator_reply(
    findings: list[RawFinding],
    refs: dict[str, int],
    reply: CoordinatorReply,
    instructing: set[str] | None = None,
) -> tuple[list[RawFinding], str, list[str]]:
    """(the findings after merges, re-categorisations and drops, a drop demoting its
    finding to a suggestion; the model's summary, "" when it was refused; what the guards
    refused). `instructing`: records whose text instructs the reviewer."""
    out: list[RawFinding | None] = list(findings)
    guard = Guard("coordinator", instructing or set())
    for item in reply.drop:
        i = _lookup("coordinator", refs, item.ref, "drop")
        if i is None or out[i] is None:
            continue
        why = guard.why_not(out[i])
        if why:
            guard.refuse("drop", item.ref, out[i], why)
            continue
        logger.info("coordinator: demoted %s (%s): %s", item.ref, out[i].kind, item.reason[:200])
        reason = guard.words(item.reason, _MAX_REASON, f"reason to drop {item.ref}")
        out[i] = demoted(out[i], reason, by="coordinator")
    for item in reply.recategorise:
        i = _lookup("coordinator", refs, item.ref, "recategorise")
        current = out[i] if i is not None else None
        if current is None or current.category == item.category:
            continue
        out[i] = replace(
            current,
            category=item.category,
            detail=f"{current.detail} Re-categorised from {current.category} by the "
            f"coordinator: {guard.words(item.reason, _MAX_REASON, 'reason to re-categorise')}",
        )
    for item in reply.merge:
        found = [refs[r] for r in dict.fromkeys(item.refs) if r in refs]
        members = [i for i in found if out[i] is not None]
        if len(members) < 2 or len(found) < len(item.refs):
            logger.info("coordinator: merge of %s skipped (unknown or gone refs)", item.refs)
            continue
        reason = guard.words(item.reason, _MAX_REASON, "reason to merge")
        merged = _merge([out[i] for i in members], reason)
        out[members[0]] = merged
        for i in members[1:]:
            out[i] = None
    kept = [f for f in out if f is not None]
    summary = _clip(reply.summary, _MAX_SUMMARY)
    if kept and claims_approval(summary):
        # Findings stand (none is ever removed), so the verdict is not `approve`: a
        # summary saying it is would contradict the verdict beside it.
        guard.note(
            "coordinator: refused the model's summary: it calls the batch approved or clean "
            f"while the rules found problems ({_clip(summary, 200)!r}); the rules' summary "
            "is used"
        )
        summary = ""
    return kept, summary, guard.refused


def _new_findings(
    agent: str,
    batch: Batch,
    existing: list[RawFinding],
    added: list[NewFinding],
    guard: Guard,
) -> list[RawFinding]:
    if not added:
        return []
    known = {r.id for kind in (batch.companies, batch.contacts, batch.deals) for r in kind}
    already = {(f.kind, tuple(sorted(f.record_ids))) for f in existing}
    exposure: Exposure | None = None
    result: list[RawFinding] = []
    for item in added:
        ids = sorted(set(item.record_ids))
        invented = [r for r in ids if r not in known]
        if invented or not ids:
            # A finding about a record that does not exist cannot be trusted in part.
            logger.warning(
                "%s: dropped a model finding naming ids not in the batch: %s",
                agent,
                ", ".join(r[:40] for r in invented[:10]) or "(none given)",
            )
            continue
        kind = _kind(item.kind)
        if (kind, tuple(ids)) in already:
            continue  # the rule already reports it
        already.add((kind, tuple(ids)))
        exposure = exposure or exposure_of(batch)
        severity = item.severity
        detail = guard.words(
            item.detail, _MAX_TEXT, f"detail of a new {kind} finding", of_batch=True
        )
        if Severity(severity).rank < MAX_MODEL_SEVERITY.rank:
            severity = MAX_MODEL_SEVERITY.value
            detail += f" The model review rated this {item.severity}; a finding only a model "
            detail += f"made is at most a {severity}."
        result.append(
            RawFinding(
                category=agent,
                kind=kind,
                severity=severity,
                title=guard.words(
                    item.title, _MAX_TITLE, f"title of a new {kind} finding", of_batch=True
                ),
                detail=detail,
                record_ids=ids,
                suggested_fix=guard.words(item.suggested_fix, _MAX_TEXT, "suggested fix"),
                confidence=round(item.confidence, 3),
                exposure=_exposure_of(exposure, ids),
                source="model",
            )
        )
    return result


def _exposure_of(exposure: Exposure, ids: list[str]) -> dict[str, Decimal]:
    merged = {i: exposure.by_deal[i] for i in ids if i in exposure.by_deal}
    merged.update(exposure.of_companies(ids))
    merged.update(exposure.of_contacts(ids))
    return merged


def _merge(group: list[RawFinding], reason: str) -> RawFinding:
    lead = min(group, key=lambda f: (Severity(f.severity).rank, -f.confidence))
    others = [f for f in group if f is not lead]
    exposure: dict[str, Decimal] = {}
    currencies: dict[str, str] = {}
    for finding in group:
        exposure.update(finding.exposure)
        currencies.update(finding.deal_currencies)
    return replace(
        lead,
        record_ids=sorted({r for f in group for r in f.record_ids}),
        detail=f"{lead.detail} Merged by the coordinator with: "
        f"{'; '.join(f.title for f in others)}. Reason: {reason}",
        confidence=min(f.confidence for f in group),
        exposure=exposure,
        deal_currencies=currencies,
        source="rule" if any(f.source == "rule" for f in group) else "model",
    )


def _kind(value: str) -> str:
    """A model's kind name if it is a plain snake_case word, else a generic one."""
    kind = value.strip().lower()
    return kind if _KIND.fullmatch(kind) else "model_finding"


def _lookup(agent: str, refs: dict[str, int], ref: str, action: str) -> int | None:
    i = refs.get(ref)
    if i is None:
        logger.warning("%s: %s names an unknown finding ref %r; ignored", agent, action, ref[:40])
    return i


def _clip(text: str, limit: int) -> str:
    """A model's text as kept: whitespace collapsed, made storable (a reply may carry a
    NUL or a lone surrogate as a JSON escape), cut to `limit`."""
    text = storable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
