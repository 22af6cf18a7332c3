"""Dismiss a problem for a dataset, or take the dismissal back: the one code path the
dashboard, the CLI, the admin and the API call. A dismissal applies to later reviews of
the dataset; the runs already made keep what they said."""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from reviews.engine.history.compare import Dismissed
from reviews.engine.storable import is_storable
from reviews.models import Dataset, Dismissal, Finding

_FINGERPRINT = re.compile(r"^[0-9a-f]{16}$")
REASON_MAX = 2000


class DismissalError(ValueError):
    """A dismissal that cannot be made or undone, with a message for the user."""


def dismiss(
    dataset: Dataset,
    fingerprint: str,
    *,
    reason: str,
    user=None,
    finding: Finding | Dismissal | None = None,
    via: str = "",
) -> Dismissal:
    """Dismiss `fingerprint` in `dataset`. Dismissing what is already dismissed returns
    the standing dismissal unchanged. `finding` (else the dataset's latest finding with
    that fingerprint) gives the category, kind and title recorded with it; `via` where it
    was made (Dismissal.Via)."""
    fingerprint = _checked(fingerprint)
    reason = (reason or "").strip()
    if not reason:
        raise DismissalError("a reason is required to dismiss a finding")
    if len(reason) > REASON_MAX:
        raise DismissalError(f"the reason is {len(reason):,} characters; at most {REASON_MAX:,}")
    if not is_storable(reason):
        # Neither can be stored as text: say so rather than fail on the write.
        raise DismissalError("the reason holds a NUL byte or a lone surrogate")
    standing = active(dataset, fingerprint)
    if standing is not None:
        return standing
    # A finding suppressed by an undone dismissal has no Finding row; the old
    # dismissal recorded what it was.
    finding = (
        finding
        or latest_finding(dataset, fingerprint)
        or Dismissal.objects.filter(dataset=dataset, fingerprint=fingerprint).first()
    )
    if finding is None:
        raise DismissalError(f"no finding with fingerprint {fingerprint} in dataset {dataset.name}")
    try:
        with transaction.atomic():
            return Dismissal.objects.create(
                dataset=dataset,
                fingerprint=fingerprint,
                category=finding.category,
                kind=finding.kind,
                title=finding.title[:500],
                reason=reason,
                created_by=user if user and user.is_authenticated else None,
                via=via,
            )
    except IntegrityError:  # dismissed at the same moment by someone else: theirs stands
        standing = active(dataset, fingerprint)
        if standing is None:
            raise
        return standing


def undo_dismissal(dataset: Dataset, fingerprint: str, *, user=None) -> Dismissal:
    """Take back the dataset's standing dismissal of `fingerprint`: later reviews flag
    the problem again. The dismissal stays on record, marked undone."""
    fingerprint = _checked(fingerprint)
    standing = active(dataset, fingerprint)
    if standing is None:
        raise DismissalError(f"{fingerprint} is not dismissed in dataset {dataset.name}")
    # Conditional update: of two undos at once, one takes effect.
    Dismissal.objects.filter(pk=standing.pk, undone_at__isnull=True).update(
        undone_at=timezone.now(),
        undone_by=user if user and user.is_authenticated else None,
    )
    standing.refresh_from_db()
    return standing


def active(dataset: Dataset, fingerprint: str) -> Dismissal | None:
    return Dismissal.objects.filter(
        dataset=dataset, fingerprint=fingerprint, undone_at__isnull=True
    ).first()


def active_dismissals(dataset_id: int) -> dict[str, Dismissed]:
    """The dataset's standing dismissals by fingerprint, as the engine takes them."""
    rows = Dismissal.objects.filter(dataset_id=dataset_id, undone_at__isnull=True).values_list(
        "fingerprint", "created_by__username", "reason", "via"
    )
    return {key: Dismissed(by or "", reason, via) for key, by, reason, via in rows}


def latest_finding(dataset: Dataset, fingerprint: str) -> Finding | None:
    return (
        Finding.objects.filter(run__batch__dataset=dataset, fingerprint=fingerprint)
        .order_by("-run__as_of", "-run_id")
        .first()
    )


def _checked(fingerprint: str) -> str:
    fingerprint = (fingerprint or "").strip().lower()
    if not _FINGERPRINT.match(fingerprint):
        raise DismissalError(f"not a fingerprint: {fingerprint[:40]!r} (16 hex digits)")
    return fingerprint


def prompt_dismissals(dataset_id: int, limit: int = 200) -> tuple[dict, ...]:
    """The dataset's standing dismissals, newest first, for the model's prompt (which
    takes as many as its token budget allows)."""
    rows = (
        Dismissal.objects.filter(dataset_id=dataset_id, undone_at__isnull=True)
        .order_by("-created_at", "-pk")
        .values("category", "kind", "title", "reason")[:limit]
    )
    return tuple(rows)
