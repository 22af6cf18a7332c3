"""manage.py hubspot_connect and hubspot_pull against the loopback stand-in: exit codes
and output as `manage.py review` gives them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.core.management.base import OutputWrapper

from connectors.management.commands import hubspot_pull
from connectors.models import Connection, Pull
from reviews import cli
from reviews.management.commands import review
from reviews.models import Batch, ReviewRun
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"


@pytest.fixture
def hubspot(settings):
    portal = problem_portal(size=5)
    with serving(portal, settings) as api:
        yield api


def run(command: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    except CommandError as error:
        code, err = error.returncode, io.StringIO(str(error))
    return code, out.getvalue(), err.getvalue()


def test_connect_then_pull_prints_the_report_with_reviews_exit_code(postgres, hubspot):
    code, out, _ = run("hubspot_connect", "--dataset", "acme", "--token", TOKEN, "--every", "6")
    assert code == 0 and "portal 4242" in out and TOKEN not in out
    assert Connection.objects.get().every_hours == 6
    code, out, err = run("hubspot_pull", "--dataset", "acme", "--format", "json")
    report = json.loads(out)
    assert report["run"]["dataset"] == "acme"
    assert {f["kind"] for f in report["findings"]} >= {"company_same_domain", "contact_same_email"}
    assert code == (1 if report["verdict"] == "request_changes" else 0)
    assert "records" in err and TOKEN not in out + err
    run_row = ReviewRun.objects.get()
    assert report["run"]["as_of"] == run_row.as_of.isoformat().replace("+00:00", "Z")
    code, out, _ = run("hubspot_pull", "--dataset", "acme", "--format", "text")
    assert code in (0, 1) and "batch hubspot-snapshot.json" in out
    assert list(Pull.objects.values_list("kind", flat=True)) == ["incremental", "full"]


def test_connect_with_a_refused_token_exits_2_with_hubspots_message(postgres, hubspot):
    code, _, err = run("hubspot_connect", "--dataset", "acme", "--token", "pat-na1-nope")
    assert code == 2
    assert "Authentication credentials not found" in err
    assert not Connection.objects.exists()


def test_pull_without_a_connection_exits_2(postgres, hubspot):
    code, _, err = run("hubspot_pull", "--dataset", "nobody")
    assert code == 2 and "hubspot_connect" in err


def test_a_failed_pull_exits_3_with_its_reason(postgres, hubspot):
    run("hubspot_connect", "--dataset", "acme", "--token", TOKEN)
    hubspot.portal.tokens.clear()
    code, _, err = run("hubspot_pull", "--dataset", "acme")
    assert code == 3 and "refused the token" in err


def test_a_dataset_name_in_two_workspaces_needs_workspace(postgres, hubspot):
    from workspaces.models import Workspace, default_workspace

    sales = Workspace.objects.create(name="sales")
    assert run("hubspot_connect", "--dataset", "acme", "--token", TOKEN)[0] == 0
    assert Connection.objects.get().dataset.workspace == default_workspace()  # one team
    code, _, err = run("hubspot_pull", "--dataset", "acme", "--workspace", "sales")
    assert code == 2 and "'sales' has no HubSpot or Salesforce connection" in err
    in_sales = ("--dataset", "acme", "--workspace", "sales")
    assert run("hubspot_connect", *in_sales, "--token", TOKEN)[0] == 0
    assert sorted(Connection.objects.values_list("dataset__workspace__name", flat=True)) == sorted(
        [default_workspace().name, "sales"]
    )
    for args in (["hubspot_pull"], ["hubspot_connect", "--token", TOKEN]):
        code, _, err = run(*args, "--dataset", "acme")
        assert code == 2 and "'sales'" in err and repr(default_workspace().name) in err
        assert "--workspace" in err
    code, out, _ = run("hubspot_pull", *in_sales, "--format", "json")
    assert code in (0, 1) and json.loads(out)["run"]["dataset"] == "acme"
    assert Pull.objects.get().connection.dataset.workspace == sales
    code, _, err = run("hubspot_pull", "--dataset", "acme", "--workspace", "nowhere")
    assert code == 2 and "no workspace 'nowhere'" in err


def test_review_and_hubspot_pull_share_reviews_cli():
    """The refused batch's output, the in-process review, the report and the exit codes
    are reviews/cli.py's, used by both commands (neither reaches into the other)."""
    shared = ["bad_input", "run_in_process", "report_and_exit", "EXIT_BAD_INPUT"]
    for name in [*shared, "EXIT_NOT_REVIEWED"]:
        assert getattr(review, name) is getattr(hubspot_pull, name) is getattr(cli, name)
    assert not hasattr(review.Command, "_bad_input")
    assert (cli.EXIT_BAD_INPUT, cli.EXIT_NOT_REVIEWED) == (2, 3)


def test_a_refused_batch_is_told_the_same_way_by_both_commands(postgres):
    """What hubspot_pull prints for a snapshot the reader refuses is what review prints
    for a refused file: the same function, given the stored batch and its errors."""
    broken = Path(__file__).resolve().parents[2] / "samples" / "broken.json"
    code, out, err = run("review", str(broken), "--format", "json")
    batch = Batch.objects.get()
    assert code == 2 and json.loads(out)["batch"]["id"] == batch.pk
    again_out, again_err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        cli.bad_input(
            OutputWrapper(again_out), OutputWrapper(again_err), "json", batch.errors, batch
        )
    assert exit_.value.code == 2
    assert (again_out.getvalue(), again_err.getvalue()) == (out, err)
    assert err.startswith("error: companies[1].id")
