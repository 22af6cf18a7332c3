"""Budget decided before serving: a run is served fresh only with its expected model
calls reserved, so a burst past the daily budget is served by failback, with the
reason, never fresh and then degraded (docs/output.md: degraded means a failed specialist)."""

import json

import pytest

from ledger import budget
from reviews.engine.ingest import UploadedFile
from reviews.llm.breaker import Breaker
from reviews.llm.roster import CHEAP
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.llm.fake_gateway import completion
from tests.llm.helpers import API_KEY
from tests.orchestration.helpers import seed_batch

pytestmark = pytest.mark.django_db

ESTIMATE = 1_000
PER_RUN = 3 * ESTIMATE  # a trivial batch: two staffed specialists and the coordinator
REPLY = {"add": [], "adjust": [], "dismiss": [], "summary": "Judged by the model."}


@pytest.fixture
def gateway_on(settings, redis_url, fake_gateway):
    settings.LLM_BASE_URL = fake_gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.LLM_TIMEOUT_SECONDS = 2
    settings.BUDGET_RESERVATION_TOKENS = ESTIMATE
    settings.DAILY_TOKEN_BUDGET = 2 * PER_RUN  # two runs' worth
    Breaker(CHEAP).reset()
    yield fake_gateway
    Breaker(CHEAP).reset()


def upload(n: int) -> list[UploadedFile]:
    """The seed batch under another id each time: five different contents, no cache."""
    return [UploadedFile(f"burst-{n}.json", json.dumps({**seed_batch(), "id": f"b{n}"}).encode())]


def test_a_budget_burst_is_served_as_failback_not_fresh_then_degraded(gateway_on):
    gateway_on.script(CHEAP, *(completion(REPLY, prompt_tokens=300) for _ in range(20)))
    runs = [submit(upload(n), dispatch=False).run for n in range(5)]
    assert [r.mode for r in runs] == ["fresh", "fresh", "failback", "failback", "failback"]
    assert [r.reserved_tokens for r in runs] == [PER_RUN, PER_RUN, 0, 0, 0]
    for run in runs[2:]:
        assert run.reason == (
            f"daily token budget exhausted: {2 * PER_RUN:,} of {2 * PER_RUN:,} tokens used "
            f"today (UTC), {PER_RUN:,} needed for the review"
        )

    for run in runs:
        start_review.apply(kwargs={"run_id": run.pk})
        run.refresh_from_db()
        assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    fresh, failback = runs[:2], runs[2:]
    for run in fresh:  # judged by their models, every call paid from their reservation
        agents = {a.agent: a for a in run.agents.all()}
        assert agents["dedup"].model == CHEAP and agents["coordinator"].model == CHEAP
        assert not any(a.error for a in agents.values())
        assert run.reserved_tokens == 0  # what was left went back
    for run in failback:  # the detectors alone, and said so
        assert not run.ledger_entries.exists()
        assert set(run.agents.values_list("model", flat=True)) == {"rules"}
    # The counter holds exactly what the ledger holds: every reservation was settled.
    assert budget.spent_today() == budget.ledger_tokens(budget.utc_today()) > 0


def test_the_budget_counter_unreachable_is_failback_with_the_reason(gateway_on, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    run = submit(upload(9), dispatch=False).run
    assert (run.mode, run.reserved_tokens) == ("failback", 0)
    assert run.reason == "daily token budget unknown: the budget counter is unavailable"
