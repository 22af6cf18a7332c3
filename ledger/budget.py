"""The global daily token budget (DESIGN principle 5), shared by every process.

A model call reserves an estimate first and settles to its real usage after:

    reservation = budget.reserve()            # None: the budget is spent, skip the model
    ... call the model, write its LedgerEntry ...
    budget.settle(reservation, entry.input_tokens + entry.output_tokens)

A run is served fresh only once its expected calls are reserved (serving.decide_serve):
its calls draw on that (draw_from_run) before asking the counter, and what is left is
released when it finishes (release_run).

A reservation is granted only if it fits (`spent + estimate <= limit`), checked and
applied in one atomic step, so concurrent callers never reserve past the limit; the
only overshoot is a call that uses more than its estimate. Settle after the ledger
entry is written: if the counter has to be rebuilt meanwhile, the ledger has the call.

Where the counter lives:
- REDIS_URL set: one Redis key per UTC day, changed only by Lua scripts. The ledger in
  the database is the source of truth: a missing key (Redis restarted or flushed) is
  rebuilt from the day's LedgerEntry rows, with SET NX so concurrent rebuilds agree.
  Reservations in flight during a restart are lost from the counter (at most one
  estimate per call in flight); the ledger still has every settled call.
- embedded (REDIS_URL empty): a BudgetDay row per UTC day, changed by conditional
  UPDATEs, so separate CLI processes on one SQLite file share one budget.

Token counts are input + output tokens (cached input tokens are part of input).
DAILY_TOKEN_BUDGET = 0 means unlimited: reservations are still counted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import redis
from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone

from ledger.models import BudgetDay, LedgerEntry, requester
from ledger.redis_client import KEY_PREFIX, get_client

logger = logging.getLogger(__name__)

KEY_TTL_SECONDS = 3 * 24 * 3600  # outlives the day, so settling just after midnight works

_MISSING = -1

# KEYS[1] the day's counter; ARGV[1] tokens to reserve; ARGV[2] limit (0 = unlimited).
# Returns -1 if the counter is missing (the caller rebuilds it), 0 refused, 1 reserved.
_RESERVE = """
local spent = redis.call('GET', KEYS[1])
if not spent then return -1 end
local n, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if limit > 0 and tonumber(spent) + n > limit then return 0 end
redis.call('INCRBY', KEYS[1], n)
return 1
"""

# KEYS[1] the day's counter; ARGV[1] actual - estimate. -1 if missing, else 1.
_SETTLE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('INCRBY', KEYS[1], ARGV[1])
return 1
"""


@dataclass(frozen=True, slots=True)
class Reservation:
    day: date  # the UTC day charged, kept so a call that spans midnight settles there
    tokens: int


def daily_limit() -> int:
    return int(settings.DAILY_TOKEN_BUDGET)


def reservation_estimate() -> int:
    return int(settings.BUDGET_RESERVATION_TOKENS)


def utc_today(now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(UTC).date()


def seconds_until_reset(now: datetime | None = None) -> int:
    """Seconds until the next UTC midnight, when the budget starts over."""
    now = (now or timezone.now()).astimezone(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), time(), tzinfo=UTC)
    return max(1, int((midnight - now).total_seconds()))


def reserve(estimate: int | None = None) -> Reservation | None:
    """Reserve `estimate` tokens (default BUDGET_RESERVATION_TOKENS) of today's budget,
    or None if they do not fit. Fails closed: None if the Redis counter is unreachable."""
    tokens = reservation_estimate() if estimate is None else estimate
    if tokens < 0:
        raise ValueError(f"a reservation cannot be negative: {tokens}")
    day, limit = utc_today(), daily_limit()
    client = get_client()
    if client is None:
        granted = _db_reserve(day, tokens, limit)
    else:
        try:
            granted = _redis_reserve(client, day, tokens, limit)
        except redis.RedisError as error:
            logger.warning("budget counter unavailable, refusing the reservation: %r", error)
            return None
    return Reservation(day=day, tokens=tokens) if granted else None


def draw_from_run(run_id: int, estimate: int | None = None) -> Reservation | None:
    """Take one call's estimate out of the tokens reserved for run `run_id` when it was
    served: already counted in the day's budget, so nothing is asked of the counter.
    None when the run has less than that left (the caller reserves anew)."""
    from reviews.models import ReviewRun  # the ledger sits under the review rows

    tokens = reservation_estimate() if estimate is None else estimate
    row = ReviewRun.objects.filter(pk=run_id).values_list("created_at", flat=True).first()
    if row is None or not tokens:
        return None
    taken = ReviewRun.objects.filter(pk=run_id, reserved_tokens__gte=tokens).update(
        reserved_tokens=F("reserved_tokens") - tokens
    )
    return Reservation(day=utc_today(row), tokens=tokens) if taken else None


def release_run(run_id: int) -> int:
    """Give back what run `run_id` reserved and did not use; returns the tokens."""
    from reviews.models import ReviewRun

    while True:
        row = ReviewRun.objects.filter(pk=run_id).values_list("reserved_tokens", "created_at")
        found = row.first()
        if found is None or not found[0]:
            return 0
        left, created_at = found
        if ReviewRun.objects.filter(pk=run_id, reserved_tokens=left).update(reserved_tokens=0):
            settle(Reservation(day=utc_today(created_at), tokens=left), 0)
            return left


def settle(reservation: Reservation, actual_tokens: int) -> None:
    """Replace the reservation's estimate with what the call really used (0 if it
    failed before using any)."""
    delta = actual_tokens - reservation.tokens
    client = get_client()
    if client is None:
        _db_row(reservation.day)
        BudgetDay.objects.filter(day=reservation.day).update(reserved=F("reserved") + delta)
        return
    try:
        if int(client.eval(_SETTLE, 1, _key(reservation.day), delta)) == _MISSING:
            # Rebuilt from the ledger, which already holds this call's entry.
            _seed(client, reservation.day)
    except redis.RedisError as error:
        # The call happened and its ledger entry is written; the counter catches up
        # when it is next rebuilt.
        logger.warning("budget counter unavailable, settle skipped: %r", error)


def spent_today() -> int:
    """Tokens spent today (UTC), including reservations of calls still in flight."""
    return spent_on(utc_today())


def spent_on(day: date) -> int:
    client = get_client()
    if client is None:
        return _db_row(day).reserved
    value = client.get(_key(day))
    if value is None:
        _seed(client, day)
        value = client.get(_key(day))
    return int(value or 0)


def ledger_tokens(day: date, workspace_id: int | None = None, user_id: int | None = None) -> int:
    """The source of truth: input + output tokens of the day's ledger entries (of one
    workspace and/or one requesting user (ledger.models.requester), or all)."""
    start = datetime.combine(day, time(), tzinfo=UTC)
    entries = LedgerEntry.objects.filter(
        created_at__gte=start, created_at__lt=start + timedelta(days=1)
    )
    if workspace_id is not None:
        entries = entries.filter(workspace_id=workspace_id)
    if user_id is not None:
        entries = entries.annotate(requester_id=requester()).filter(requester_id=user_id)
    totals = entries.aggregate(input=Sum("input_tokens"), output=Sum("output_tokens"))
    return (totals["input"] or 0) + (totals["output"] or 0)


def workspace_exhausted_reason(workspace_id: int | None) -> str:
    """Why a workspace's own daily budget (Workspace.daily_token_budget, set by a
    superuser) allows no new fresh review today, or "". Counted from the ledger: a cap
    checked when a review is served, so runs already under way may pass it by their own
    calls; the installation's budget (above) is the hard one."""
    if workspace_id is None:
        return ""
    from workspaces.models import Workspace

    limit = (
        Workspace.objects.filter(pk=workspace_id)
        .values_list("daily_token_budget", flat=True)
        .first()
    )
    if not limit:
        return ""
    spent = ledger_tokens(utc_today(), workspace_id)
    if spent < limit:
        return ""
    return (
        f"the workspace's daily token budget is exhausted: {spent:,} of {limit:,} tokens "
        "used today (UTC)"
    )


def user_exhausted_reason(user_id: int | None) -> str:
    """Why the requesting user's own daily budget (DAILY_TOKEN_BUDGET_PER_USER, over
    all their workspaces) allows no new fresh review today, or "". Counted from the
    ledger and checked when a review is served, as the workspace's budget above."""
    limit = int(settings.DAILY_TOKEN_BUDGET_PER_USER)
    if user_id is None or not limit:
        return ""
    spent = ledger_tokens(utc_today(), user_id=user_id)
    if spent < limit:
        return ""
    return (
        f"the user's daily token budget is exhausted: {spent:,} of {limit:,} tokens "
        "used today (UTC)"
    )


# --- Redis -----------------------------------------------------------------------------


def _key(day: date) -> str:
    return f"{KEY_PREFIX}budget:{day.isoformat()}"


def _redis_reserve(client: redis.Redis, day: date, tokens: int, limit: int) -> bool:
    key = _key(day)
    for _attempt in range(3):
        result = int(client.eval(_RESERVE, 1, key, tokens, limit))
        if result != _MISSING:
            return result == 1
        _seed(client, day)
    raise redis.RedisError(f"budget counter {key} vanished while being rebuilt")


def _seed(client: redis.Redis, day: date) -> None:
    # NX: of several processes rebuilding at once, the first one's figure stands and
    # the reservations made on it are kept.
    if client.set(_key(day), ledger_tokens(day), nx=True, ex=KEY_TTL_SECONDS):
        logger.info("budget counter for %s rebuilt from the ledger", day)


# --- the database (embedded mode) -------------------------------------------------------


def _db_row(day: date) -> BudgetDay:
    row = BudgetDay.objects.filter(day=day).first()
    if row is None:
        # get_or_create: of two processes creating the row, one wins and one reads it.
        row, _ = BudgetDay.objects.get_or_create(day=day, defaults={"reserved": ledger_tokens(day)})
    return row


def _db_reserve(day: date, tokens: int, limit: int) -> bool:
    _db_row(day)
    rows = BudgetDay.objects.filter(day=day)
    if limit:
        # The check and the increment are one UPDATE: the database serialises them.
        rows = rows.filter(reserved__lte=limit - tokens)
    return rows.update(reserved=F("reserved") + tokens) == 1
