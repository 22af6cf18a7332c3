"""Which models the gateway has said are gone: marked when a call fails with
reviews.llm.errors.ModelUnavailable, cleared when the model serves a call again.

One row per model (unique): get_or_create survives two workers marking it at once, and
the later updates and the clearing are single statements."""

from __future__ import annotations

from django.utils import timezone

from ledger.models import UnavailableModel

MAX_MESSAGE_CHARS = 500


def mark_unavailable(model: str, message: str) -> UnavailableModel:
    """Record that the gateway said `model` is unavailable, keeping when it was first
    seen; the message is the latest one."""
    now = timezone.now()
    text = _clean(message)
    row, created = UnavailableModel.objects.get_or_create(
        model=model, defaults={"message": text, "first_seen_at": now, "last_seen_at": now}
    )
    if not created:
        UnavailableModel.objects.filter(pk=row.pk).update(message=text, last_seen_at=now)
        row.message, row.last_seen_at = text, now
    return row


def mark_available(model: str) -> None:
    UnavailableModel.objects.filter(model=model).delete()


def unavailable() -> list[UnavailableModel]:
    return list(UnavailableModel.objects.order_by("first_seen_at"))


def _clean(message: str) -> str:
    # A gateway's text is data: no NULs (Postgres refuses them) or lone surrogates.
    text = message.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return text[:MAX_MESSAGE_CHARS]
