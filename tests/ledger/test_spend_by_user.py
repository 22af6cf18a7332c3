"""Spend by user: the requester of each call's run (a re-run's own requester first, else
the batch's uploader; "(scheduled)" without one), summed exactly, and only within the
workspaces the viewer belongs to."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from ledger import reports
from ledger.models import LedgerEntry
from ledger.pricing import micros_to_usd
from reviews.models import Batch, ReviewRun
from workspaces.models import Membership, Role, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]


def _run(workspace: Workspace, uploader, requester=None) -> ReviewRun:
    batch = Batch.objects.create(
        file_name="b.json",
        sha256="0" * 64,
        size_bytes=1,
        status=Batch.Status.ACCEPTED,
        workspace=workspace,
        created_by=uploader,
    )
    return ReviewRun.objects.create(
        batch=batch, mode="fresh", tier="lite", status="done", as_of=batch.created_at,
        created_by=requester,
    )  # fmt: skip


def _call(run: ReviewRun, tokens: int, micros: int) -> LedgerEntry:
    return LedgerEntry.objects.create(
        run=run,
        workspace=run.batch.workspace,
        agent="dedup",
        model_requested="m",
        model="m",
        outcome="ok",
        input_tokens=tokens,
        output_tokens=tokens // 2,
        cost_micros=micros,
    )


@pytest.fixture
def spenders(django_user_model):
    a, b = Workspace.objects.create(name="alpha"), Workspace.objects.create(name="beta")
    ann, carl, ben = (
        django_user_model.objects.create_user(name, password=f"{name}-pass-123")
        for name in ("ann", "carl", "ben")
    )
    Membership.objects.create(workspace=a, user=ann, role=Role.REVIEWER)
    Membership.objects.create(workspace=a, user=carl, role=Role.REVIEWER)
    Membership.objects.create(workspace=b, user=ben, role=Role.REVIEWER)
    uploaded = _run(a, ann)
    rerun_by_carl = _run(a, ann, requester=carl)  # the re-run's requester pays
    scheduled = _run(a, None)  # a scheduled pull: nobody asked
    for run, micros in ((uploaded, 1_234_567), (uploaded, 3), (rerun_by_carl, 700_001)):
        _call(run, 1_000, micros)
    _call(scheduled, 50, 11)
    _call(_run(b, ben), 9_000, 5_000_000)
    return a, b, ann


def test_spend_by_user_sums_the_ledger_exactly_and_hides_other_workspaces(spenders):
    a, _b, _ann = spenders
    by_user = dict(reports.spend_report(1, workspaces=[a.pk]).by_user)
    assert set(by_user) == {"ann", "carl", reports.SCHEDULED}  # not ben, of beta
    for name, expected in (("ann", 1_234_570), ("carl", 700_001), (reports.SCHEDULED, 11)):
        assert by_user[name].cost_micros == expected
        assert by_user[name].usd == micros_to_usd(expected)
    assert (by_user["ann"].calls, by_user["ann"].tokens) == (2, 3_000)
    total = reports.spend_report(1, workspaces=[a.pk]).total.usage.cost_micros
    assert sum(u.cost_micros for u in by_user.values()) == total
    assert dict(reports.spend_report(1).by_user)["ben"].cost_micros == 5_000_000  # in total


def test_the_spend_page_and_command_show_spend_by_user(spenders, client):
    _a, _b, ann = spenders
    client.force_login(ann)
    page = client.get("/spend/?days=1").content.decode()
    table = page[page.index('id="spend-by-user"') :]
    assert "<code>carl</code>" in table and "<code>(scheduled)</code>" in table
    assert "<code>ben</code>" not in page
    out = StringIO()
    call_command("spend", "--days", "1", "--workspace", "alpha", stdout=out)
    text = out.getvalue()
    assert "by user" in text and "carl" in text and "ben" not in text.split("by user")[1]
