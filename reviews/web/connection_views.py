"""A dataset's HubSpot connection on its page: connect (the token is checked, kept
encrypted and never shown again), the schedule, and a pull now."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from connectors.models import Connection
from connectors.pulls import AlreadyPulling, ConnectRefused, connect, request_pull
from connectors.tasks import send_pull
from reviews.models import Dataset


class ConnectForm(forms.Form):
    token = forms.CharField(max_length=500, strip=True, widget=forms.PasswordInput)
    every_hours = forms.IntegerField(min_value=1, max_value=24 * 30, initial=24)


class ScheduleForm(forms.Form):
    every_hours = forms.IntegerField(min_value=1, max_value=24 * 30)
    active = forms.BooleanField(required=False)


@login_required
@require_POST
def connect_dataset(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_object_or_404(Dataset, name=name)
    form = ConnectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A token and a number of hours (1 or more) are required.")
        return redirect("reviews:dataset", dataset.name)
    try:
        connection = connect(
            dataset,
            form.cleaned_data["token"],
            every_hours=form.cleaned_data["every_hours"],
            user=request.user,
        )
    except ConnectRefused as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Connected to HubSpot portal {connection.portal_id}.")
    return redirect("reviews:dataset", dataset.name)


@login_required
@require_POST
def schedule_dataset(request: HttpRequest, name: str) -> HttpResponse:
    connection = get_object_or_404(Connection, dataset__name=name)
    form = ScheduleForm(request.POST)
    if form.is_valid():
        connection.every_hours = form.cleaned_data["every_hours"]
        connection.active = form.cleaned_data["active"]
        connection.save(update_fields=["every_hours", "active"])
        messages.success(request, "Schedule saved.")
    else:
        messages.error(request, "Hours between pulls: a whole number, 1 or more.")
    return redirect("reviews:dataset", name)


@login_required
@require_POST
def pull_now(request: HttpRequest, name: str) -> HttpResponse:
    connection = get_object_or_404(Connection, dataset__name=name)
    try:
        pull = request_pull(connection, full=request.POST.get("full") == "1", by="page")
    except AlreadyPulling as error:
        messages.error(request, str(error))
    else:
        send_pull(pull)
        messages.success(request, f"Pull {pull.pk} ({pull.kind}) queued.")
    return redirect("reviews:dataset", name)
