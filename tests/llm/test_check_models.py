"""manage.py check_models against the loopback gateway's GET /models: each model the
roster can call (agents and failbacks) is reported as listed or not."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from ledger.models import AgentModelOverride
from reviews.llm.roster import CHEAP, CHEAP_FAILBACK, MID, MID_FAILBACK

pytestmark = pytest.mark.django_db


def check_models() -> tuple[int, str, str]:
    """(exit code, stdout, stderr); 0 when the command returns normally."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("check_models", stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


def line_for(output: str, model: str) -> str:
    (line,) = [line for line in output.splitlines() if f" {model}  (" in line]
    return line


def test_every_roster_model_listed(llm_settings, fake_gateway):
    fake_gateway.listed = [CHEAP, CHEAP_FAILBACK, MID, MID_FAILBACK, "openai/gpt-5"]
    code, out, _ = check_models()
    assert code == 0
    assert line_for(out, CHEAP).startswith("listed")
    assert "dedup" in line_for(out, CHEAP) and "coordinator_trivial" in line_for(out, CHEAP)
    assert f"failback of {MID}" in line_for(out, MID_FAILBACK)
    assert "Every roster model is listed" in out


def test_a_missing_model_is_reported_and_exits_1(llm_settings, fake_gateway):
    fake_gateway.listed = [CHEAP, CHEAP_FAILBACK, MID]  # the coordinator's failback is gone
    code, out, err = check_models()
    assert code == 1
    assert line_for(out, MID_FAILBACK).startswith("NOT LISTED")
    assert line_for(out, MID).startswith("listed")
    assert "1 roster model(s) not listed" in err


def test_an_admin_override_is_what_is_checked(llm_settings, fake_gateway):
    AgentModelOverride.objects.create(agent="pipeline", model="google/gemini-2.0-flash")
    fake_gateway.listed = [CHEAP, CHEAP_FAILBACK, MID, MID_FAILBACK]
    code, out, _ = check_models()
    assert code == 1
    assert line_for(out, "google/gemini-2.0-flash") == (
        "NOT LISTED  google/gemini-2.0-flash  (pipeline)"
    )


def test_googles_models_prefix_matches_the_bare_id(llm_settings, fake_gateway, settings):
    # Google's OpenAI-compatible /models names its models "models/<id>".
    settings.LLM_ROSTER = {
        **dict.fromkeys(
            ("dedup", "attribution", "pipeline", "freshness", "coordinator_trivial"),
            "gemini-3.1-flash-lite",
        ),
        "coordinator": "gemini-3.5-flash",
    }
    fake_gateway.listed = ["models/gemini-3.1-flash-lite", "models/gemini-3.5-flash"]
    code, out, _ = check_models()
    assert code == 0, out
    assert line_for(out, "gemini-3.5-flash").startswith("listed")


def test_a_gateway_without_a_model_list_says_so(llm_settings, fake_gateway):
    fake_gateway.listed = None  # GET /models answers 404
    code, out, err = check_models()
    assert code == 2
    assert line_for(out, CHEAP).startswith("unknown")
    assert "no model list" in err and "HTTP 404" in err


def test_without_a_gateway_there_is_nothing_to_ask(settings):
    settings.LLM_BASE_URL = ""
    code, _, err = check_models()
    assert code == 2 and "No LLM_BASE_URL" in err
