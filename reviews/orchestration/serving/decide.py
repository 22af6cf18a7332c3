"""How to serve a review request, decided before any model runs (DESIGN principle 5).

decide_serve() returns one of:
- cached:   a finished fresh run exists for the same batch content (content_key) and the
            same review configuration (config_fingerprint); reuse it, call no model;
- fresh:    a normal review;
- failback: the daily token budget is spent or the client is over its rate limit; serve
            the last good run of the same content, else a detector-only review;
- error:    the client is far over its rate limit; answer 429 with Retry-After.

The order matters: the rate limit counts every request (a cached answer is cheap but
still a request), a client far over it gets an error before anything else, and a cache
hit beats failback because it is the same review at no cost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
import re
from dataclasses import asdict, dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from itertools import islice
from typing import Any

import orjson
import redis
from django.conf import settings
from django.db.models import Exists, Model, OuterRef

from ledger import budget, ratelimit
from ledger.models import AgentModelOverride, ModelRate
from reviews.engine.batch import Batch
from reviews.engine.extra_fields import ExtraFields, canonical_text, lengths_and_texts
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.specialists import NAMES, switched_off_kinds
from reviews.llm.config import enabled
from reviews.llm.prompts import PROMPTS_DIR
from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.serving.code_version import code_fingerprint

logger = logging.getLogger(__name__)

ERROR = "error"  # not a ReviewRun.Mode: no run is created

# Settings besides the rules that change what a review finds (not keys or timeouts).
# Absent ones are skipped: their code defaults are covered by the code's hash.
CONFIG_SETTINGS: tuple[str, ...] = (
    "LLM_BASE_URL",  # empty = detectors alone; another gateway may serve other models
    "LLM_ROSTER",
    "LLM_FAILBACK_CHAIN",
    "LLM_CALL_TOKEN_BUDGET",
    "LLM_MAX_OUTPUT_TOKENS",
    "LLM_JSON_SCHEMA",
    "LLM_NEAR_MISS_LIMIT",
)
# Tables that change what a review finds or costs ("rates version").
CONFIG_TABLES: tuple[type[Model], ...] = (ModelRate, AgentModelOverride)
_VOLATILE_COLUMNS = {"id", "created_at", "updated_at"}


@dataclass(frozen=True, slots=True)
class ServeDecision:
    mode: str  # ReviewRun.Mode value, or ERROR
    reason: str = ""  # why failback or error; empty for fresh and cached
    reuse_run_id: int | None = None  # the run whose findings are served (cached/failback)
    retry_after: int | None = None  # seconds until the limit that caused it resets
    reserved_tokens: int = 0  # budget reserved for a fresh run's model calls

    @property
    def is_error(self) -> bool:
        return self.mode == ERROR


def decide_serve(
    content_key: str,
    fingerprint: str,
    rate_keys: list[str] | None,
    *,
    no_cache: bool = False,
    expected_calls: int = 1,
    workspace_id: int | None = None,
    user_id: int | None = None,
) -> ServeDecision:
    """Decide how to serve one review request. `rate_keys` (ledger.ratelimit: the
    requester's user and address; `workspace_id`'s key is added) are None for the CLI,
    which is not rate limited.
    `no_cache` (--no-cache, the re-run button) skips the cache but not the budget or
    the rate limit.

    With a model gateway, a fresh answer holds a reservation of the daily budget for
    `expected_calls` model calls (the run's staffed specialists and its coordinator), so
    a run the budget cannot afford is served by failback from the start, never fresh
    and then left without its models. Only runs of `workspace_id` are reused (None:
    any; the tests of serving alone): one team never serves another's review.
    `user_id` (the requester) is held to DAILY_TOKEN_BUDGET_PER_USER."""
    if isinstance(rate_keys, str):
        raise TypeError("rate_keys is a list of keys (ledger.ratelimit.rate_keys)")
    keys = ratelimit.with_workspace(rate_keys, workspace_id)  # its members share a limit
    rate = ratelimit.hit(*keys) if keys else None
    if rate is not None and rate.far_over:
        return ServeDecision(
            ERROR,
            reason=f"rate limit: {rate.count} requests this hour, limit {rate.limit}",
            retry_after=rate.retry_after,
        )
    if not no_cache:
        run_id = reusable_run(content_key, fingerprint, workspace_id)
        if run_id is not None:
            return ServeDecision(ReviewRun.Mode.CACHED, reuse_run_id=run_id)
    if rate is not None and not rate.allowed:
        return failback(
            content_key,
            f"rate limit exceeded: {rate.count} requests this hour, limit {rate.limit}",
            retry_after=rate.retry_after,
            workspace_id=workspace_id,
        )
    workspace_reason = enabled() and (
        budget.workspace_exhausted_reason(workspace_id) or budget.user_exhausted_reason(user_id)
    )
    if workspace_reason:  # this team's or user's own cap: failback, as for the installation's
        return failback(
            content_key,
            workspace_reason,
            retry_after=budget.seconds_until_reset(),
            workspace_id=workspace_id,
        )
    if not enabled():  # no model will be called: nothing to reserve
        exhausted_reason = _budget_exhausted_reason()
        if exhausted_reason:
            return failback(
                content_key,
                exhausted_reason,
                retry_after=budget.seconds_until_reset(),
                workspace_id=workspace_id,
            )
        return ServeDecision(ReviewRun.Mode.FRESH)
    tokens = max(1, expected_calls) * budget.reservation_estimate()
    if budget.reserve(tokens) is None:
        reason = _budget_exhausted_reason(tokens) or "daily token budget: no room for the review"
        return failback(
            content_key, reason, retry_after=budget.seconds_until_reset(), workspace_id=workspace_id
        )
    return ServeDecision(ReviewRun.Mode.FRESH, reserved_tokens=tokens)


def models_allowed(run: ReviewRun) -> bool:
    """Whether the runner may call models for `run`. Only a fresh run may: a failback
    run exists because the budget or the rate limit said no, so the detectors alone
    review it. (A cached run never reaches the runner.)"""
    return run.mode == ReviewRun.Mode.FRESH


def failback(
    content_key: str,
    reason: str,
    *,
    retry_after: int | None = None,
    workspace_id: int | None = None,
) -> ServeDecision:
    """Serve the last good run of this content; without one, reuse_run_id is None and
    the caller runs the detectors alone (no model calls)."""
    return ServeDecision(
        ReviewRun.Mode.FAILBACK,
        reason=reason,
        reuse_run_id=last_good_run(content_key, workspace_id),
        retry_after=retry_after,
    )


def _budget_exhausted_reason(needed: int | None = None) -> str:
    """Why the budget cannot take `needed` tokens (default: one call's estimate)."""
    needed = budget.reservation_estimate() if needed is None else needed
    try:
        spent, limit = budget.spent_today(), budget.daily_limit()
    except redis.RedisError as error:
        # Fail closed: without the shared counter no one can tell what was spent.
        logger.warning("budget counter unavailable: %r", error)
        return "daily token budget unknown: the budget counter is unavailable"
    if limit and spent + needed > limit:
        return (
            f"daily token budget exhausted: {spent:,} of {limit:,} tokens used today (UTC), "
            f"{needed:,} needed for the review"
        )
    return ""


# --- which runs can be reused ------------------------------------------------------
# Only fresh, finished, non-degraded runs are reused: a cached or failback run serves
# someone else's findings, and a degraded run lacks a specialist.


def _good_runs(content_key: str, workspace_id: int | None = None):
    """Finished fresh runs that reviewed in full: not degraded, and no agent with an
    error note (a model pass that was due and did not judge is not worth reusing)."""
    agent_with_error = AgentRun.objects.filter(run=OuterRef("pk")).exclude(error="")
    return (
        ReviewRun.objects.filter(
            batch__content_key=content_key,
            mode=ReviewRun.Mode.FRESH,
            status=ReviewRun.Status.DONE,
            degraded=False,
        )
        .exclude(Exists(agent_with_error))
        .filter(**({} if workspace_id is None else {"batch__workspace_id": workspace_id}))
        .order_by("-finished_at", "-pk")
    )


def reusable_run(content_key: str, fingerprint: str, workspace_id: int | None = None) -> int | None:
    """The newest good run of this content under this configuration."""
    if not content_key or not fingerprint:
        return None
    return (
        _good_runs(content_key, workspace_id)
        .filter(config_fingerprint=fingerprint)
        .values_list("pk", flat=True)
        .first()
    )


def last_good_run(content_key: str, workspace_id: int | None = None) -> int | None:
    """The newest good run of this content under any configuration."""
    if not content_key:
        return None
    return _good_runs(content_key, workspace_id).values_list("pk", flat=True).first()


# --- the cache key ---------------------------------------------------------------------

_INDEX = re.compile(r"\[\d+\]")


def content_key(batch: Batch) -> str:
    """sha256 of the canonicalised parsed batch.

    Key order, whitespace, number spelling (410000 vs "410000.00") and record order do
    not matter: a CRM export's record order is arbitrary, so records are sorted by id
    and their list positions are dropped. Order inside a record's values (a deal's
    contactIds, a pipeline's stages) is kept as given. The as-of time is part of the
    content because every date rule counts from it: a batch without exportedAt (and a
    CSV export without --as-of) is dated by its upload time and so hits the cache only
    when the as-of is given."""
    digest = hashlib.sha256()
    header = {
        "id": batch.id,
        "source": batch.source,
        "as_of": batch.as_of,
        "pipelines": [asdict(batch.pipelines[key]) for key in sorted(batch.pipelines)],
        # What the export's own state columns say of its stages (docs/input.md).
        "observed_stages": sorted(
            [*key, stage.closed, stage.won] for key, stage in batch.observed_stages.items()
        ),
        # What the export left out or could not settle changes what the review finds.
        "partial": batch.partial,
        "currency": batch.currency,
        "unresolved_company_names": batch.unresolved_company_names,
        "value_problems": sorted(
            (p.category, p.record_id, _INDEX.sub("", p.path), p.message)
            for p in batch.value_problems
        ),
    }
    switched = switched_off_kinds(batch)
    if switched:
        # A column left out switches kinds off: the same records with the column there
        # and blank are another review. Only then, so a complete export keeps its key.
        header["switched_off"] = {kind: list(fields) for kind, fields in sorted(switched.items())}
    digest.update(_canonical(header))
    with no_cyclic_gc():  # lists of values, no cycles: nothing for the collector
        for name, records in (
            ("companies", batch.companies),
            ("contacts", batch.contacts),
            ("deals", batch.deals),
        ):
            _hash_records(digest, name, records, batch.extras.get(name))
        if batch.leads:  # only where there are any: a HubSpot batch keeps its key
            _hash_records(digest, "leads", batch.leads, batch.extras.get("leads"))
    return digest.hexdigest()


def _hash_records(digest, name: str, records: list, kept: ExtraFields | None) -> None:
    """The records in id order, a column at a time: each documented field's values as
    JSON, then the fields the batch keeps as text (extra_fields.py) as their lengths and
    texts. Column by column, not a tuple per record (a million of them is slow); in
    chunks, so the canonical text of a big batch is never held whole; and where the
    records are in id order already (a CRM export's usual order), the kept texts are
    hashed from their buffer as they lie."""
    digest.update(f"\n{name}".encode())
    if not records:
        return
    # index: a position; extra: hashed last, from wherever the reader kept it
    columns = [f.name for f in fields(records[0]) if f.name not in ("index", "extra")]
    digest.update(_canonical([*columns, "extra"]))
    ids = list(map(operator.attrgetter("id"), records))
    in_order = all(map(operator.lt, ids, islice(ids, 1, None)))  # ids are unique
    ordered = records if in_order else sorted(records, key=operator.attrgetter("id"))
    del ids
    for column in columns:
        value = operator.attrgetter(column)
        for start in range(0, len(ordered), _CHUNK):
            digest.update(_canonical(list(map(value, ordered[start : start + _CHUNK]))))
    if kept is not None:
        chunks = kept.texts(list(map(operator.attrgetter("index"), ordered)), _CHUNK)
    else:  # a reader that keeps each record's own dict (CSV, spreadsheets)
        chunks = (
            lengths_and_texts([_extra_text(r.extra) for r in ordered[start : start + _CHUNK]])
            for start in range(0, len(ordered), _CHUNK)
        )
    for lengths, texts in chunks:
        digest.update(lengths.astype("<i8").tobytes())
        digest.update(texts)


def _extra_text(extra: dict) -> bytes:
    try:
        return canonical_text(extra)
    except ValueError:  # a value msgspec cannot write: the standard library's JSON then
        return _canonical(extra)


_CHUNK = 100_000


# --- the configuration fingerprint ----------------------------------------------------


def config_fingerprint() -> str:
    """sha256 of everything besides the batch that decides what a review finds: the
    code that decides it and the package version (code_version), the rules
    (settings.REVIEW_RULES, every field), the specialist roster, the prompt files, and
    the model rate and per-agent override tables."""
    parts: dict[str, Any] = {
        "code": code_fingerprint(),
        "rules": settings.REVIEW_RULES.as_dict(),
        "roster": list(NAMES),
        "settings": {
            name: getattr(settings, name) for name in CONFIG_SETTINGS if hasattr(settings, name)
        },
        "prompts": _prompt_hashes(),
        "tables": {model._meta.label: _table_rows(model) for model in CONFIG_TABLES},
    }
    return _sha256(parts)


def _prompt_hashes() -> dict[str, str]:
    return {
        path.relative_to(PROMPTS_DIR).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(PROMPTS_DIR.rglob("*"))
        if path.is_file()
    }


def _table_rows(model: type[Model]) -> list[dict]:
    columns = [f.attname for f in model._meta.concrete_fields if f.attname not in _VOLATILE_COLUMNS]
    return list(model.objects.order_by(*columns).values(*columns))


# --- hashing -------------------------------------------------------------------------------


def _sha256(value: Any) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()


def _canonical(value: Any) -> bytes:
    """Canonical JSON: sorted keys, no whitespace. orjson writes dates and times itself,
    so only Decimals (and sets) reach _json_default; the standard library, which called it
    for every date of a million records, is the fallback for what orjson refuses (an
    integer over 64 bits, a lone surrogate)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=_json_default)
    except orjson.JSONEncodeError:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), default=_json_default
        ).encode()


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        # normalize(): 410000, 410000.00 and 4.1E+5 are one amount.
        return str(value.normalize())
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value, key=str)
    raise TypeError(f"cannot hash a {type(value).__name__}")
