"""The dataset page's review policy and tuning section (docs/history.md): the policy, its
history with diffs, proposals with their replay (apply / dismiss), root causes, restore.
Thin views over reviews.orchestration.dataset.policies. The section is its own partial
(templates/reviews/_tuning.html), loaded by htmx after the page: tuning parses the
stored syncs."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from reviews.engine.history.policy import PolicyError
from reviews.models import Dataset
from reviews.orchestration.dataset import policies
from reviews.web.access import get_dataset_for_user, get_dataset_to_change
from reviews.web.dataset_names import back_to_dataset


def _context(dataset: Dataset) -> dict:
    version, policy = policies.current(dataset)
    found = policies.tune_dataset(dataset)
    found.pop("_objects")
    return {
        "dataset": dataset,
        "version": version,
        "policy": policy.to_data(),
        "history": policies.history(dataset),
        "proposals": found["proposals"],
        "root_causes": found["root_causes"],
    }


@login_required
@require_GET
def tuning(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_for_user(request, name)
    # The dataset page loads the section by htmx; its own URL opened in a tab is a page.
    template = "reviews/_tuning.html" if request.htmx else "reviews/tuning.html"
    return render(request, template, _context(dataset))


@login_required
@require_POST
def apply_proposal(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_to_change(request, name)
    try:
        version = policies.apply_proposal(
            dataset,
            request.POST.get("proposal", ""),
            reason=request.POST.get("reason", ""),
            user=request.user,
        )
    except PolicyError as error:
        return back_to_dataset(request, dataset, error=str(error))
    return back_to_dataset(
        request, dataset, note=f"Policy version {version.number} applies to the next sync."
    )


@login_required
@require_POST
def dismiss_proposal(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_to_change(request, name)
    policies.dismiss_proposal(
        dataset,
        request.POST.get("proposal", ""),
        reason=request.POST.get("reason", ""),
        user=request.user,
    )
    return back_to_dataset(request, dataset, note="Proposal dismissed; it is not proposed again.")


@login_required
@require_POST
def restore_policy(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_to_change(request, name)
    try:
        number = int(request.POST.get("version", ""))
        version = policies.restore(
            dataset, number, reason=request.POST.get("reason", ""), user=request.user
        )
    except (ValueError, PolicyError) as error:
        return back_to_dataset(request, dataset, error=str(error))
    return back_to_dataset(
        request, dataset, note=f"Version {number} restored as version {version.number}."
    )
