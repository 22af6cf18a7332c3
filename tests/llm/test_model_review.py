"""The model pass end to end: `manage.py review` (and a real Celery worker) against an
OpenAI-compatible gateway on loopback, over a real socket. What the tier staffs, what
the ledger and the AgentRuns say, and what happens when a call, the budget or the
deadline fails."""

from __future__ import annotations

import io
import json
import re
import time
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from django.core.management import call_command

from ledger.models import LedgerEntry, ModelRate
from reviews.engine.findings import unpack
from reviews.engine.specialists import NAMES, SPECIALISTS
from reviews.llm import roster
from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.llm.fake_gateway import completion, error
from tests.llm.helpers import API_KEY, own_redis
from tests.uploads import DATA, json_upload, upload

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FULL, LITE_SAMPLE, TRIVIAL = SAMPLES / "full.json", SAMPLES / "lite.json", SAMPLES / "trivial.json"
SEED = DATA / "seed-example.json"

LITE, LITE_BACK = "google/gemini-3.1-flash-lite", "google/gemini-2.5-flash-lite"
FLASH, FLASH_BACK = "google/gemini-3.5-flash", "google/gemini-3-flash-preview"
# USD per 1M tokens (input, cached input, output): Google's pricing page as cited in
# ledger/migrations/0004, written out here rather than read from ledger.rates.
RATES = {
    LITE: ("0.25", "0.025", "1.50"),
    FLASH: ("1.50", "0.15", "9.00"),
    LITE_BACK: ("0.10", "0.01", "0.40"),
    FLASH_BACK: ("0.50", "0.05", "3.00"),
}
NOTHING = {"add": [], "adjust": [], "dismiss": []}


@pytest.fixture
def gateway(fake_gateway):
    return fake_gateway


@pytest.fixture
def llm(settings, postgres, redis_url, gateway):
    """The model pass pointed at the loopback gateway; breakers and the budget counter
    on a Redis database no other suite flushes."""
    own_redis(settings, redis_url)
    settings.LLM_BASE_URL = gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.LLM_TIMEOUT_SECONDS = 2
    settings.DAILY_TOKEN_BUDGET = 1_000_000
    return settings


def review_json(path: Path) -> tuple[int, dict]:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("review", str(path), "--format", "json", "--no-cache", stdout=out)
    return exit_.value.code, json.loads(out.getvalue())


def agent_models(report: dict) -> dict[str, tuple[str, str]]:
    """agent -> (AgentRun.model, AgentRun.error) of the report's run."""
    run = ReviewRun.objects.get(pk=report["run"]["id"])
    return {a.agent: (a.model, a.error) for a in run.agents.all()}


def usd(call: dict) -> Decimal:
    """tokens x rates, independently of ledger.rates; rounded to the micro-dollar."""
    rate_in, rate_cached, rate_out = (Decimal(r) for r in RATES[call["model"]])
    uncached = call["input_tokens"] - call["cached_tokens"]
    micros = (
        uncached * rate_in + call["cached_tokens"] * rate_cached + call["output_tokens"] * rate_out
    )
    return micros.quantize(Decimal(1), rounding=ROUND_HALF_UP) / Decimal(1_000_000)


def records_sent(request) -> dict:
    """The JSON inside the request's boundary tag."""
    text = request.messages[-1]["content"]
    (tag,) = set(re.findall(r"<(data-[0-9a-f]{16})>", text))
    return json.loads(text[text.rindex(f"<{tag}>") + len(tag) + 2 : text.rindex(f"</{tag}>")])


# --- a full-tier batch --------------------------------------------------------------


def test_full_tier_makes_four_specialist_calls_and_one_coordinator_call(llm, gateway):
    added = {
        "kind": "deal_without_contact",
        "severity": "critical",  # capped: a model's finding alone does not block
        "title": "Open deal with no contact",
        "detail": "dl_204 has no contact to work it.",
        "record_ids": ["dl_204"],
    }
    gateway.script(
        LITE,
        completion({**NOTHING, "add": [added]}, prompt_tokens=1200, cached_tokens=400),
        *(completion(NOTHING, prompt_tokens=1000 + i, completion_tokens=50 + i) for i in range(3)),
    )
    # The coordinator tries to drop an exact critical finding and to approve.
    gateway.script(
        FLASH,
        completion(
            {"drop": [{"ref": "f1", "reason": "fine"}], "summary": "Approve this batch."},
            prompt_tokens=3000,
            cached_tokens=1000,
            completion_tokens=400,
        ),
    )
    code, report = review_json(FULL)

    assert (LITE, FLASH) == (roster.CHEAP, roster.MID)  # the default roster, live models
    assert [r.model for r in gateway.requests] == [LITE] * 4 + [FLASH]
    rows = LedgerEntry.objects.order_by("id")
    assert [r.model_attempted for r in rows] == [LITE] * 4 + [FLASH]
    assert all(ModelRate.objects.filter(model=r.model).exists() for r in rows)
    calls = report["ledger"]["calls"]
    assert [c["agent"] for c in calls] == [*NAMES, "coordinator"]
    assert {(c["model_requested"], c["model"], c["outcome"]) for c in calls[:4]} == {
        (LITE, LITE, "ok")
    }
    assert (calls[4]["model_requested"], calls[4]["model"], calls[4]["outcome"]) == (
        FLASH,
        FLASH,
        "ok",
    )
    assert [c["input_tokens"] for c in calls] == [1200, 1000, 1001, 1002, 3000]
    for call in calls:
        assert Decimal(str(call["usd"])) == usd(call)
    assert report["ledger"]["tokens"] == sum(c["input_tokens"] + c["output_tokens"] for c in calls)
    assert Decimal(str(report["ledger"]["usd"])) == sum(usd(c) for c in calls)
    assert report["ledger"]["tokens"] == 1200 + 20 + 3003 + 153 + 3000 + 400

    assert report["run"]["specialists"] == list(NAMES)
    assert not report["run"]["degraded"]
    models = agent_models(report)
    assert {agent: model for agent, (model, _) in models.items()} == {
        **dict.fromkeys(NAMES, LITE),
        "coordinator": FLASH,
    }
    # The verdict follows docs/rules.md on the final findings; the model's summary
    # contradicted it, so it was refused (run.refused) and the rules' words stand.
    assert report["summary"].startswith("Reviewed ")
    assert (code, report["verdict"]) == (1, "request_changes")
    assert any(
        r.startswith("coordinator: refused the model's summary") for r in report["run"]["refused"]
    )
    kinds = {f["kind"]: f for f in report["findings"]}
    assert {"deal_entered_twice", "won_without_close_date", "negative_amount"} <= set(kinds)
    model_finding = kinds["deal_without_contact"]
    assert (model_finding["source"], model_finding["severity"]) == ("model", "warning")


def test_the_requests_carry_the_boundary_and_only_the_agents_slice(llm, gateway):
    gateway.script(LITE, *(completion(NOTHING) for _ in NAMES))
    gateway.script(FLASH, completion({"summary": "Fine."}))
    review_json(FULL)
    agents = LedgerEntry.objects.order_by("id").values_list("agent", flat=True)
    requests = dict(zip(agents, gateway.requests, strict=True))
    for agent, request in requests.items():
        assert API_KEY not in request.raw  # in the Authorization header only
        assert request.headers["Authorization"] == f"Bearer {API_KEY}"
        text = request.messages[-1]["content"]
        (tag,) = set(re.findall(r"<(data-[0-9a-f]{16})>", text))
        assert text.endswith(f"</{tag}>")
        if agent == "coordinator":
            continue
        sent = records_sent(request)["records"]
        fields = SPECIALISTS[agent].SLICE
        assert set(sent) == set(fields)
        for kind, records in sent.items():
            assert all(set(record) == set(fields[kind]) for record in records), (agent, kind)
    assert set(records_sent(requests["pipeline"])["records"]) == {"deals"}  # no contacts
    assert "@" not in json.dumps(records_sent(requests["pipeline"]))  # no email addresses
    attribution_deals = records_sent(requests["attribution"])["records"]["deals"]
    assert attribution_deals and all("close_date" not in d for d in attribution_deals)
    # The shared block is the same for every agent of the run, coordinator included.
    assert len({r.messages[0]["content"] for r in gateway.requests}) == 1


# --- tiers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "tier", "staffed", "calling", "coordinator_model"),
    [
        # Two staffed; each has rule findings to judge.
        (SEED, "trivial", ["dedup", "pipeline"], ["dedup", "pipeline"], LITE),
        # Two staffed, but dedup has nothing to judge: no call is made for it.
        (TRIVIAL, "trivial", ["freshness", "dedup"], ["freshness"], LITE),
        (
            LITE_SAMPLE,
            "lite",
            ["attribution", "pipeline", "dedup"],
            ["attribution", "pipeline"],
            FLASH,
        ),
    ],
)
def test_the_tier_decides_the_calls_and_their_models(
    llm, gateway, path, tier, staffed, calling, coordinator_model
):
    gateway.script(LITE, *(completion(NOTHING) for _ in calling))
    gateway.script(coordinator_model, completion({"summary": "Fine."}))
    _, report = review_json(path)
    assert (report["run"]["tier"], report["run"]["specialists"]) == (tier, staffed)
    assert [r.model for r in gateway.requests] == [LITE] * len(calling) + [coordinator_model]
    assert [c["agent"] for c in report["ledger"]["calls"]] == [*calling, "coordinator"]
    models = {agent: model for agent, (model, _) in agent_models(report).items()}
    assert models == {
        **{name: LITE if name in calling else "rules" for name in NAMES},
        "coordinator": coordinator_model,
    }


# --- failures -----------------------------------------------------------------------


def test_a_503_from_the_primary_model_is_served_by_the_failback(llm, gateway):
    gateway.script(LITE, error(503), *(completion(NOTHING) for _ in range(3)))
    gateway.script(LITE_BACK, completion(NOTHING, prompt_tokens=900, completion_tokens=60))
    gateway.script(FLASH, completion({"summary": "Fine."}))
    _, report = review_json(FULL)
    dedup_calls = [c for c in report["ledger"]["calls"] if c["agent"] == "dedup"]
    assert [(c["model_requested"], c["model"], c["outcome"]) for c in dedup_calls] == [
        (LITE, None, "http_error"),
        (LITE, LITE_BACK, "failback"),
    ]
    assert Decimal(str(dedup_calls[1]["usd"])) == usd(dedup_calls[1]) > 0
    assert agent_models(report)["dedup"] == (LITE_BACK, "")
    assert not report["run"]["degraded"]


def test_a_401_does_not_fail_back_and_the_agent_stands_on_its_rules(llm, gateway):
    gateway.script(LITE, error(401, "bad key"), *(completion(NOTHING) for _ in range(3)))
    gateway.script(FLASH, completion({"summary": "Fine."}))
    code, report = review_json(FULL)
    assert gateway.requests_for(LITE_BACK) == []
    dedup_calls = [c for c in report["ledger"]["calls"] if c["agent"] == "dedup"]
    assert [(c["model"], c["outcome"]) for c in dedup_calls] == [(None, "http_error")]
    model, note = agent_models(report)["dedup"]
    assert model == "rules" and "401" in note and "the detector's findings stand" in note
    assert ReviewRun.objects.get(pk=report["run"]["id"]).agents.get(agent="dedup").status == "done"
    # Its rule findings are in the review, so the run is complete, not degraded.
    dedup_kinds = {f["kind"] for f in report["findings"] if f["category"] == "dedup"}
    assert dedup_kinds == {"deal_entered_twice", "company_same_domain", "contact_same_email"}
    assert (code, report["run"]["degraded"], report["run"]["status"]) == (1, False, "done")
    # A review missing a model judgement is not served again from the cache.
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("review", str(FULL), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["run"]["mode"] == "fresh"


def test_a_failed_coordinator_call_leaves_the_rules_coordinator_with_a_note(llm, gateway):
    gateway.script(LITE, *(completion(NOTHING) for _ in NAMES))
    gateway.script(FLASH, error(503))
    gateway.script(FLASH_BACK, error(503))
    code, report = review_json(FULL)
    # Every specialist's findings are in the verdict: not degraded (docs/output.md), but noted.
    assert not report["run"]["degraded"] and report["run"]["status"] == "done"
    model, note = agent_models(report)["coordinator"]
    assert model == "rules" and "the rules coordinator finished the run" in note
    assert report["summary"].startswith("Reviewed 8 companies, 9 contacts and 12 deals")
    assert "The coordinator's model review failed" in report["summary"]
    assert (code, report["verdict"]) == (1, "request_changes")
    assert [c["outcome"] for c in report["ledger"]["calls"][4:]] == ["http_error", "http_error"]


def test_without_a_gateway_the_review_is_complete_on_rules(llm, gateway):
    llm.LLM_BASE_URL = ""
    code, report = review_json(FULL)
    assert gateway.requests == [] and report["ledger"]["calls"] == []
    assert (report["ledger"]["tokens"], report["ledger"]["usd"]) == (0, 0.0)
    assert set(agent_models(report).values()) == {("rules", "")}
    assert not report["run"]["degraded"]
    assert report["summary"].startswith("Reviewed 8 companies, 9 contacts and 12 deals: 3 critical")
    kinds = {f["kind"] for f in report["findings"]}
    assert {"deal_entered_twice", "won_without_close_date", "stale_enrichment"} <= kinds
    assert {f["source"] for f in report["findings"]} == {"rule"}
    assert (code, report["verdict"]) == (1, "request_changes")


def test_a_failback_run_makes_no_model_call(llm, gateway):
    llm.DAILY_TOKEN_BUDGET = 5_000  # one reservation does not fit: served by failback
    _, report = review_json(SEED)
    assert (report["run"]["mode"], report["run"]["status"]) == ("failback", "done")
    assert gateway.requests == [] and report["ledger"]["calls"] == []
    assert set(agent_models(report).values()) == {("rules", "")}


def test_a_run_served_fresh_keeps_its_reservation_whatever_others_spend(llm, gateway):
    run = submit([upload("seed-example.json")], dispatch=False).run
    assert run.mode == ReviewRun.Mode.FRESH
    assert run.reserved_tokens == 3 * llm.BUDGET_RESERVATION_TOKENS  # trivial: 2 + coordinator
    llm.DAILY_TOKEN_BUDGET = 5_000  # spent by others between the request and the run
    gateway.script(LITE, *(completion({**NOTHING, "summary": "Fine."}) for _ in range(3)))
    start_review.apply(kwargs={"run_id": run.pk})
    run.refresh_from_db()
    agents = {a.agent: a for a in run.agents.all()}
    assert (agents["dedup"].model, agents["coordinator"].model) == (LITE, LITE)
    assert not any(a.error for a in agents.values())  # no "budget spent" anywhere
    assert run.ledger_entries.filter(outcome="ok").count() == len(gateway.requests) >= 2
    assert (run.degraded, run.reserved_tokens) == (False, 0)  # the rest was given back


def test_past_the_run_deadline_no_call_starts(llm, gateway):
    llm.RUN_DEADLINE_SECONDS = 0
    _, report = review_json(SEED)
    assert gateway.requests == []
    models = agent_models(report)
    assert "deadline" in models["dedup"][1] and models["dedup"][0] == "rules"
    assert "deadline" in models["coordinator"][1]  # noted, not degraded: no specialist failed
    assert report["run"]["status"] == "done" and not report["run"]["degraded"]
    assert {"company_same_domain", "contact_same_email"} <= {f["kind"] for f in report["findings"]}


def test_a_dismissed_finding_stays_in_the_review_as_a_suggestion(llm, gateway):
    batch = {
        "id": "fuzzy",
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [{"id": "co_1", "name": "Acme", "domain": "acme.example"}],
        "contacts": [
            {"id": "ct_1", "firstName": "Dana", "lastName": "Kim", "email": "dana@acme.example",
             "companyId": "co_1"},
            {"id": "ct_2", "firstName": "Dana", "lastName": "Kimm", "email": "dk@acme.example",
             "companyId": "co_1"},
        ],
        "deals": [],
    }  # fmt: skip
    reason = "Different mailboxes, different people."
    gateway.script(LITE, completion({**NOTHING, "dismiss": [{"ref": "f1", "reason": reason}]}))
    gateway.script(LITE, completion({"summary": "One possible duplicate, quieted."}))
    run = submit([json_upload(batch)], dispatch=False).run
    start_review.apply(kwargs={"run_id": run.pk})
    run.refresh_from_db()
    assert [r.model for r in gateway.requests] == [LITE, LITE]  # a trivial batch's coordinator
    # A model quiets a finding, never removes it: the verdict is the rules' with the
    # finding demoted, never `approve`.
    (quieted,) = run.findings.all()
    assert (quieted.kind, quieted.severity) == ("contact_same_person", "suggestion")
    assert quieted.detail.endswith(reason)
    assert run.verdict.decision == "approve_with_comments"
    (original,) = unpack(run.agents.get(agent="dedup").packed_findings, dismissed=True)
    assert original.severity == "warning"  # as the rule found it, for the record


# --- through the broker ----------------------------------------------------------------


@pytest.fixture
def worker_env(monkeypatch, gateway):
    """What the worker process reads at start: set before the `worker` fixture runs."""
    monkeypatch.setenv("LLM_BASE_URL", gateway.base_url)
    monkeypatch.setenv("LLM_API_KEY", API_KEY)
    monkeypatch.setenv("DAILY_TOKEN_BUDGET", "0")  # the shared test Redis holds its counter


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_the_model_pass_through_the_broker(worker_env, worker, gateway, settings):
    settings.DAILY_TOKEN_BUDGET = 0
    gateway.script(LITE, *(completion(NOTHING) for _ in NAMES))
    gateway.script(FLASH, completion({"summary": "Reviewed by the worker's models."}))
    run = submit([json_upload(json.loads(FULL.read_text()), "full.json")]).run
    deadline = time.monotonic() + 90
    while not run.is_finished and time.monotonic() < deadline:
        assert worker.poll() is None, worker.stdout.read()[-4000:]
        time.sleep(0.2)
        run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE, run.status
    assert sorted(r.model for r in gateway.requests) == sorted([LITE] * 4 + [FLASH])
    assert gateway.requests[-1].model == FLASH  # the coordinator after the specialists
    assert dict(run.agents.values_list("agent", "model")) == {
        **dict.fromkeys(NAMES, LITE),
        AgentRun.COORDINATOR: FLASH,
    }
    assert run.ledger_entries.filter(outcome="ok").count() == 5
    assert run.verdict.summary == "Reviewed by the worker's models."
    assert not run.degraded
