"""The rule editor in a real headless Chromium against a live server (issue 36): a
dataset with a synced HubSpot export; the team writes a rule in the form's rows, the
preview follows as it types (htmx), a refused condition says why, the rule is saved and
listed with its history, and a library rule is switched on with one click."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.engine.team_rules.exports import AS_OF, export_files
from tests.web.test_browser import browser, log_in, page, screenshot  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_rule_written_previewed_saved_and_one_switched_on(page):  # noqa: F811
    submission = submit(export_files(), as_of=AS_OF, dataset="acme", dispatch=False)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    log_in(page)
    page.goto("/datasets/acme/")
    editor = page.locator("#team-rules")
    expect(editor).to_contain_text("No team rule yet")

    form = editor.locator("#rule-form")
    form.locator("input[name=id]").fill("contract_sent_no_next_step")
    form.locator("select[name=severity]").select_option("critical")
    form.locator("input[name=title]").fill("Contract sent with no next step")
    form.locator("input[name=fix]").fill("Write the next step")
    form.locator("input[name=prop_1]").fill("Deal Stage")
    form.locator("select[name=op_1]").select_option("equals")
    form.locator("input[name=value_1]").fill("Contract Sent")
    preview = page.locator("#rule-preview")
    # one row so far: both Contract Sent deals
    expect(preview.locator(".rule-preview-result")).to_have_attribute("data-count", "2")
    form.locator("input[name=prop_2]").fill("Next Step")
    form.locator("select[name=op_2]").select_option("is_empty")
    expect(preview.locator(".rule-preview-result")).to_have_attribute("data-count", "1")
    expect(preview.locator(".preview-records")).to_contain_text("5001 Vertex — cell automation")

    expression = form.locator("textarea[name=when]")
    expression.fill("getenv('HOME') <> ''")
    expect(preview.locator(".rule-problems")).to_contain_text("function getenv() is not allowed")
    expression.fill("")
    expect(preview.locator(".rule-preview-result")).to_have_attribute("data-count", "1")
    page.click("#preview-replay")  # the stored syncs too: one here
    expect(preview.locator(".replay-count")).to_have_text(["1"])
    screenshot(page, "rule-editor.png")

    form.locator("input[name=reason]").fill("our stage rule")
    form.locator("#save-rule").click()
    editor = page.locator("#team-rules")
    expect(editor.locator('tr[data-rule="contract_sent_no_next_step"]')).to_contain_text("critical")
    expect(editor.locator(".rule-history")).to_contain_text("our stage rule")

    editor.locator('tr[data-file="company_without_domain.yaml"] button').click()
    expect(page.locator('#team-rules tr[data-rule="company_without_domain"]')).to_be_visible()
    expect(page.locator("#team-rules .rule-history tbody tr")).to_have_count(2)
