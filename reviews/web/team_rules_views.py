"""The dataset page's rule editor (docs/rules.md#a-teams-own-rules): the team's rules,
a form for the common shape (property, operator, value, joined by AND) or an expression
box, a live preview (htmx, as the form is typed), the library switched on with one click,
and each rule's history. Thin views over reviews.orchestration.dataset.team_rules."""

from __future__ import annotations

import functools
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from reviews.engine.findings import Severity
from reviews.engine.history.policy import PolicyError
from reviews.engine.specialists.spec import OBJECTS
from reviews.engine.team_rules.builder import OPERATORS, BuilderError, condition
from reviews.engine.team_rules.rulefile import ONE, RuleFileError, TeamRule, check_rules, load
from reviews.models import Dataset
from reviews.orchestration.dataset import team_rules
from reviews.web.access import get_dataset_for_user, get_dataset_to_change
from reviews.web.dataset_names import back_to_dataset

LIBRARY = Path(__file__).resolve().parents[1] / "engine" / "team_rules" / "library"
ROWS = 3  # the form's property / operator / value rows


def library() -> list[dict]:
    """The library's files, each with its rules, for the one-click buttons: new lists
    each time, so a caller may change them (the rules themselves are frozen)."""
    return [{"file": name, "rules": list(rules)} for name, rules in _library_files()]


@functools.cache
def _library_files() -> tuple[tuple[str, tuple[TeamRule, ...]], ...]:
    """The files read and parsed once per process: they are part of the code, and
    parsing the ten of them took about 50 ms of every render of the editor."""
    return tuple(
        (path.name, tuple(load(path.read_bytes()))) for path in sorted(LIBRARY.glob("*.yaml"))
    )


def _context(dataset: Dataset) -> dict:
    return {
        "dataset": dataset,
        "rules": team_rules.rules_of(dataset),
        "history": team_rules.history(dataset),
        "library": library(),
        "objects": OBJECTS,
        "severities": [s.value for s in Severity],
        "operators": [(name, words) for name, (words, _sql) in OPERATORS.items()],
        "rows": range(1, ROWS + 1),
    }


@login_required
@require_GET
def rules_section(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_for_user(request, name)
    template = "reviews/_team_rules.html" if request.htmx else "reviews/team_rules.html"
    return render(request, template, _context(dataset))


def rule_from_form(data: QueryDict) -> TeamRule:
    """The one rule the editor's form describes: its `when` from the expression box, else
    from the rows. RuleFileError with every problem (the builder's too)."""
    when = data.get("when", "").strip()
    if not when:
        rows = [
            (data.get(f"prop_{n}", ""), data.get(f"op_{n}", ""), data.get(f"value_{n}", ""))
            for n in range(1, ROWS + 1)
        ]
        try:
            when = condition(rows)
        except BuilderError as error:
            raise RuleFileError([f"rule {data.get('id', '') or 1}: {error}"]) from None
    item = {key: data.get(key, "") for key in ("id", "object", "severity", "title", "fix")}
    [rule] = check_rules([{**item, "when": when}])
    return rule


@login_required
@require_POST
def rules_preview(request: HttpRequest, name: str) -> HttpResponse:
    """The form's rule run on the last sync and replayed over the stored ones; nothing
    saved. Answered as the preview's partial (htmx swaps it in as the form is typed)."""
    dataset = get_dataset_for_user(request, name)
    context: dict = {"dataset": dataset}
    try:
        rule = rule_from_form(request.POST)
        context["rule"] = rule
        # As the form is typed, the last sync alone; the Preview button replays too.
        replay = request.POST.get("replay") == "1"
        context["preview"] = team_rules.preview(dataset, [rule], replay=replay)["rules"][0]
        one = context["preview"]["count"] == 1
        context["counted"] = ONE[rule.object] if one else rule.object  # 1 deal, 2 deals
        context["replayed"] = replay
    except RuleFileError as error:
        context["problems"] = error.problems
    except PolicyError as error:
        context["problems"] = [str(error)]
    return render(request, "reviews/_rule_preview.html", context)


@login_required
@require_POST
def rules_add(request: HttpRequest, name: str) -> HttpResponse:
    """The form's rule, or a library file's rules (`library`), as a new policy version."""
    dataset = get_dataset_to_change(request, name)
    chosen = request.POST.get("library", "")
    typed = request.POST.get("reason", "").strip()  # kept in the policy's history
    try:
        if chosen:
            files = {item["file"]: item["rules"] for item in library()}
            if chosen not in files:
                return back_to_dataset(
                    request, dataset, error=f"no library file {chosen!r}", section="team-rules"
                )
            rules, reason = files[chosen], typed or f"library rules switched on: {chosen}"
        else:
            rules = [rule_from_form(request.POST)]
            reason = typed or f"team rule {rules[0].id} saved"
        added = team_rules.add(dataset, rules, reason=reason, user=request.user)
    except RuleFileError as error:
        return back_to_dataset(
            request, dataset, error="; ".join(error.problems), section="team-rules"
        )
    except PolicyError as error:
        return back_to_dataset(request, dataset, error=str(error), section="team-rules")
    words = added.words()
    return back_to_dataset(
        request, dataset, note=f"{words[0].upper()}{words[1:]}.", section="team-rules"
    )


@login_required
@require_POST
def rules_remove(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_to_change(request, name)
    rule_id = request.POST.get("id", "")
    try:
        version = team_rules.remove(
            dataset,
            rule_id,
            reason=request.POST.get("reason", "") or f"team rule {rule_id} removed",
            user=request.user,
        )
    except PolicyError as error:
        return back_to_dataset(request, dataset, error=str(error), section="team-rules")
    return back_to_dataset(
        request,
        dataset,
        note=f"Policy version {version.number}: {rule_id} removed.",
        section="team-rules",
    )
