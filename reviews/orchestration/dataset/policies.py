"""A dataset's review policy, versioned, and tuning it from the dataset's own history
(docs/history.md): the one code path the dataset page, the API and `manage.py tune` call.
The numbers come from the engine's pure functions (reviews.engine.history: policy,
observe, tune, replay, root_causes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from reviews.engine.history import policy as engine_policy
from reviews.engine.history import replay, root_causes, tune
from reviews.engine.history.observe import observe
from reviews.engine.history.policy import Policy, PolicyError
from reviews.engine.rules import Rules
from reviews.engine.specialists.spec import Kind
from reviews.engine.storable import is_storable
from reviews.models import Batch, Dataset, DismissedProposal, PolicyVersion
from reviews.orchestration.dataset.dismissals import active_dismissals
from reviews.orchestration.store.parsed import read_stored

REASON_MAX = 2000


def current(dataset: Dataset | None) -> tuple[PolicyVersion | None, Policy]:
    """The dataset's newest policy version and its policy (None, EMPTY if it has none)."""
    if dataset is None:
        return None, engine_policy.EMPTY
    version = PolicyVersion.objects.filter(dataset=dataset).order_by("-number").first()
    if version is None:
        return None, engine_policy.EMPTY
    return version, Policy.from_data(version.policy)


def of_version(version: PolicyVersion | None) -> Policy:
    return Policy.from_data(version.policy) if version else engine_policy.EMPTY


def kinds_of_run(run) -> Mapping[str, Kind]:
    """Every kind the run can report (the registry's and its policy's team rules'):
    the one lookup the pages, the fix plan and the exports use (policy.kinds_of)."""
    return engine_policy.kinds_of(of_version(run.policy_version))


def rules_of(version: PolicyVersion | None) -> Rules:
    """The Rules a run using `version` runs its detectors with."""
    return engine_policy.rules_for(settings.REVIEW_RULES, of_version(version))


def checked_reason(reason: str | None, what: str) -> str:
    """The reason for a change to `what`, stripped; PolicyError if it is missing, too long
    or holds what no database stores."""
    reason = (reason or "").strip()
    if not reason:
        raise PolicyError(f"a reason is required to change {what}")
    if len(reason) > REASON_MAX:
        raise PolicyError(f"the reason is {len(reason):,} characters; at most {REASON_MAX:,}")
    if not is_storable(reason):
        raise PolicyError("the reason holds a NUL byte or a lone surrogate")
    return reason


def save(
    dataset: Dataset,
    policy: Policy,
    *,
    reason: str,
    user=None,
    source: str = PolicyVersion.Source.MANUAL,
    proposal: str = "",
    replay: dict | None = None,
) -> PolicyVersion:
    """A new version of the dataset's policy. A break-glass reason (making a critical kind
    quieter) is taken from staff only; PolicyError says what is wrong."""
    reason = checked_reason(reason, "a dataset's policy")
    if not is_storable(policy.break_glass):
        raise PolicyError("the reason holds a NUL byte or a lone surrogate")
    engine_policy.check(policy)
    if engine_policy.quieter_criticals(policy) and not getattr(user, "is_staff", False):
        previous = current(dataset)[1]
        if set(engine_policy.quieter_criticals(previous)) != set(
            engine_policy.quieter_criticals(policy)
        ) or (policy.break_glass != previous.break_glass):
            raise PolicyError("only a staff member may break glass on a critical kind")
    for _ in range(3):  # two versions written at once: the second takes the next number
        latest = PolicyVersion.objects.filter(dataset=dataset).order_by("-number").first()
        try:
            with transaction.atomic():
                return PolicyVersion.objects.create(
                    dataset=dataset,
                    number=(latest.number + 1) if latest else 1,
                    policy=policy.to_data(),
                    reason=reason,
                    source=source,
                    proposal=proposal[:300],
                    replay=replay or {},
                    created_by=user if user is not None and user.is_authenticated else None,
                )
        except IntegrityError:
            continue
    raise PolicyError("the policy changed meanwhile; try again")


def restore(dataset: Dataset, number: int, *, reason: str, user=None) -> PolicyVersion:
    """A new version holding version `number`'s policy (0: the engine's rules as set)."""
    if number == 0:
        policy = engine_policy.EMPTY
    else:
        old = PolicyVersion.objects.filter(dataset=dataset, number=number).first()
        if old is None:
            raise PolicyError(f"dataset {dataset.name} has no policy version {number}")
        policy = Policy.from_data(old.policy)
    return save(
        dataset,
        policy,
        reason=reason or f"restore version {number}",
        user=user,
        source=PolicyVersion.Source.RESTORE,
    )


def history(dataset: Dataset) -> list[dict[str, Any]]:
    """Every version, newest first, each with its diff from the one before."""
    versions = list(PolicyVersion.objects.filter(dataset=dataset).order_by("number"))
    rows, before = [], engine_policy.EMPTY
    for version in versions:
        policy = Policy.from_data(version.policy)
        rows.append(
            {
                "number": version.number,
                "policy": version.policy,
                "reason": version.reason,
                "source": version.source,
                "proposal": version.proposal,
                "by": version.created_by.username if version.created_by else "",
                "at": version.created_at.isoformat(),
                "break_glass": policy.break_glass,
                "diff": engine_policy.diff(before, policy),
            }
        )
        before = policy
    return rows[::-1]


# --- tuning ---------------------------------------------------------------------------------


def stored_batches(dataset: Dataset) -> list:
    """The dataset's last TUNE_REPLAY_SYNCS accepted syncs, as parsed (read back from their
    tables where kept), oldest first."""
    rows = list(
        Batch.objects.filter(dataset=dataset, status=Batch.Status.ACCEPTED).order_by(
            "-as_of", "-pk"
        )[: settings.TUNE_REPLAY_SYNCS]
    )
    return [read_stored(batch) for batch in reversed(rows)]


def tune_dataset(dataset: Dataset, *, batches: list | None = None) -> dict[str, Any]:
    """{"proposals": [...], "root_causes": [...]} for the dataset (docs/history.md)."""
    batches = stored_batches(dataset) if batches is None else batches
    _, policy = current(dataset)
    rules = settings.REVIEW_RULES
    dismissed = set(active_dismissals(dataset.pk))
    turned_down = set(
        DismissedProposal.objects.filter(dataset=dataset).values_list("proposal", flat=True)
    )
    observed = [observe(batch, rules, policy) for batch in batches]
    proposals = [p for p in tune.propose(observed, dismissed, policy) if p.id not in turned_down]
    for proposal in proposals:
        proposal.replay = replay.replay(batches, rules, policy, proposal.policy, dismissed)
    records: dict[str, dict[str, str]] = {}
    for batch in batches:
        records |= root_causes.record_fields(batch)
    causes = root_causes.root_causes(root_causes.new_by_sync(observed), records)
    return {
        "proposals": [p.as_dict() for p in proposals],
        "root_causes": causes,
        "_objects": proposals,
    }


def apply_proposal(
    dataset: Dataset, proposal_id: str, *, reason: str, user=None, auto: bool = False
) -> PolicyVersion:
    """A new policy version: the current policy with the proposal's change, and its replay."""
    found = tune_dataset(dataset)
    match = [p for p in found["_objects"] if p.id == proposal_id]
    if not match:
        raise PolicyError(f"no proposal {proposal_id!r} for dataset {dataset.name}")
    [proposal] = match
    _, policy = current(dataset)
    return save(
        dataset,
        policy.merged(proposal.policy),
        reason=reason,
        user=user,
        source=PolicyVersion.Source.AUTO if auto else PolicyVersion.Source.PROPOSAL,
        proposal=proposal.id,
        replay={k: v for k, v in proposal.replay.items() if k != "per_sync"},
    )


def auto_apply(dataset: Dataset) -> list[PolicyVersion]:
    """With the dataset's auto_apply_proposals on: apply each proposal whose replay hides
    only dismissed findings (recorded as auto; `restore` reverts it)."""
    if not dataset.auto_apply_proposals:
        return []
    made = []
    for proposal in tune_dataset(dataset)["_objects"]:
        if replay.hides_only_dismissed(proposal.replay):
            made.append(
                apply_proposal(
                    dataset,
                    proposal.id,
                    reason=f"applied by itself: {proposal.why}",
                    auto=True,
                )
            )
    return made


def dismiss_proposal(dataset: Dataset, proposal_id: str, *, reason: str = "", user=None) -> None:
    DismissedProposal.objects.get_or_create(
        dataset=dataset,
        proposal=proposal_id[:300],
        defaults={
            "reason": reason,
            "created_by": user if user is not None and user.is_authenticated else None,
        },
    )
