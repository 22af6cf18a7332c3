"""The dataset page's review policy and tuning section (docs/history.md): the policy, its
history with diffs, proposals with their replay (apply / dismiss), root causes, restore.
Thin views over reviews.orchestration.policies. The section is its own partial
(templates/reviews/_tuning.html), loaded by htmx after the page: tuning parses the
stored syncs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from reviews.engine.policy import PolicyError
from reviews.models import Dataset
from reviews.orchestration import policies


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
    dataset = get_object_or_404(Dataset, name=name)
    return render(request, "reviews/_tuning.html", _context(dataset))


def _done(request: HttpRequest, dataset: Dataset, error: str = "", note: str = "") -> HttpResponse:
    if error:
        messages.error(request, error)
    elif note:
        messages.success(request, note)
    return redirect("reviews:dataset", dataset.name)


@login_required
@require_POST
def apply_proposal(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    try:
        version = policies.apply_proposal(
            dataset,
            request.POST.get("proposal", ""),
            reason=request.POST.get("reason", ""),
            user=request.user,
        )
    except PolicyError as error:
        return _done(request, dataset, error=str(error))
    return _done(
        request, dataset, note=f"Policy version {version.number} applies to the next sync."
    )


@login_required
@require_POST
def dismiss_proposal(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    policies.dismiss_proposal(
        dataset,
        request.POST.get("proposal", ""),
        reason=request.POST.get("reason", ""),
        user=request.user,
    )
    return _done(request, dataset, note="Proposal dismissed; it is not proposed again.")


@login_required
@require_POST
def restore_policy(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    try:
        number = int(request.POST.get("version", ""))
        version = policies.restore(
            dataset, number, reason=request.POST.get("reason", ""), user=request.user
        )
    except (ValueError, PolicyError) as error:
        return _done(request, dataset, error=str(error))
    return _done(request, dataset, note=f"Version {number} restored as version {version.number}.")
