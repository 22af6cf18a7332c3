"""What a finished run triggers, and the body a subscription receives about it."""

from __future__ import annotations

import json
from collections import Counter

from django.conf import settings
from django.urls import reverse

from alerts.models import Trigger, WebhookSubscription
from reviews.engine.coverage import lists_not_run, switched_off_of
from reviews.engine.history.compare import standing_sentence
from reviews.models import ReviewRun, Severity, findings_of

VERDICT_WORDS = {
    "approve": "Approved",
    "approve_with_comments": "Approved with comments",
    "request_changes": "Changes requested",
}


def run_triggers(run: ReviewRun) -> set[str]:
    """Everything about this finished run a subscription may watch."""
    if run.status == ReviewRun.Status.FAILED:
        return {Trigger.FAILED}
    triggers: set[str] = set()
    verdict = getattr(run, "verdict", None)
    if verdict is not None:
        triggers.add(verdict.decision)  # the reviewers' verdict, not a later break glass
    if run.degraded:
        triggers.add(Trigger.DEGRADED)
    return triggers


def site_url(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def message(run: ReviewRun, triggers: list[str]) -> dict:
    verdict = getattr(run, "verdict", None)
    counts = Counter(findings_of(run).values_list("severity", flat=True))
    return {
        "event": "run.finished",
        "triggers": triggers,
        "dataset": run.batch.dataset.name if run.batch.dataset else None,
        "run": {
            "id": run.pk,
            "status": run.status,
            "mode": run.mode,
            "degraded": run.degraded,
            # The export left out a list or a column a rule reads (docs/output.md).
            "partial": run.batch.is_partial,
            "missing_lists": run.batch.partial,
            "missing_columns": run.batch.missing_columns,
            "switched_off": switched_off_of(run.batch.missing_columns),
            "not_run": lists_not_run(run.batch.partial, run.batch.source),
            # What each of the dataset's own rules did (docs/rules.md#a-teams-own-rules).
            "team_rules": run.team_rules,
            "verdict": verdict.decision if verdict else None,
            "url": site_url(reverse("reviews:run", kwargs={"run_id": run.pk})),
            "api_url": site_url(reverse("api:run", kwargs={"run_id": run.pk})),
        },
        "batch": {"id": run.batch_id, "external_id": run.batch.external_id or None},
        "summary": verdict.summary if verdict else run.error,
        "counts": {severity: counts[severity] for severity in Severity.values},
        # What still stands in the dataset whatever decided the verdict (docs/history.md):
        # alert on `state`, not only on the verdict.
        "state": (run.standing or {}).get("state"),
        "standing": _standing(run.standing),
    }


def _standing(standing: dict | None) -> dict | None:
    if not standing:
        return None  # a run made before standing problems were kept
    keys = ("critical", "warning", "amount", "currency", "since_run")
    return {key: standing.get(key) for key in keys}


def slack_escape(text: object) -> str:
    """Text as Slack's mrkdwn shows it literally: `&`, `<` and `>` are its control
    characters (`<!channel>`, `<@U123>`, `<https://...|label>`), escaped as Slack asks.
    Record, file and dataset names then never become mentions or links."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_link(url: str, label: str) -> str:
    """A link of our own: the URL with `|`, `<` and `>` percent-encoded (they would end
    it early), the label escaped."""
    safe = url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    return f"<{safe}|{slack_escape(label)}>"


def slack_text(data: dict) -> str:
    """One Slack message (mrkdwn): verdict, dataset, summary, counts and the run link.
    Every value is escaped for mrkdwn; only the link is markup."""
    run = data["run"]
    if run["status"] == ReviewRun.Status.FAILED:
        headline = "Review failed"
    else:
        headline = VERDICT_WORDS.get(run["verdict"], str(run["verdict"]))
        if run["degraded"]:
            headline += " (degraded)"
        if run.get("partial"):
            headline += " (partial export)"
    counts = ", ".join(f"{n} {severity}" for severity, n in data["counts"].items())
    dataset = data["dataset"] or "a batch"
    e = slack_escape
    # What still stands in the dataset, right after the verdict (docs/history.md).
    standing = standing_sentence(data.get("standing") or {}, run["id"]) if data["dataset"] else ""
    return (
        f"revreview: *{e(headline)}* on {e(dataset)} (run {run['id']}, {e(run['mode'])}). "
        + (f"*{e(standing)}* " if standing else "")
        + f"{e(data['summary'])} Findings: {e(counts)}. "
        + slack_link(run["url"], f"Open run {run['id']}")
    )


def body(subscription: WebhookSubscription, run: ReviewRun, triggers: list[str]) -> str:
    data = message(run, triggers)
    if subscription.payload_format == WebhookSubscription.Format.SLACK:
        data = {"text": slack_text(data)}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
