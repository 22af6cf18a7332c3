"""A dataset's CRM connection on its page: connect (the token is checked, kept encrypted
and never shown again), the schedule, and a pull now. The CRMs offered are the
registry's (connectors/registry.py)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from connectors import registry
from connectors.base import ConnectorError
from connectors.models import Connection
from connectors.pulls import AlreadyPulling, ConnectRefused, connect, request_pull
from connectors.tasks import send_pull
from reviews.models import Dataset
from reviews.web.access import get_dataset_for_user
from workspaces.access import may
from workspaces.models import Role


def _dataset(request: HttpRequest, name: str) -> Dataset:
    """A member's dataset (else 404); connecting or pulling it needs the reviewer role."""
    dataset = get_dataset_for_user(request, name)
    if not may(request.user, dataset.workspace_id, Role.REVIEWER) and not (
        request.user.is_superuser
    ):
        raise PermissionDenied("connecting and pulling a dataset needs the reviewer role")
    return dataset


def _connection(request: HttpRequest, name: str) -> Connection | None:
    """The dataset's connection; None (with a message) when it has none."""
    connection = Connection.objects.filter(dataset=_dataset(request, name)).first()
    if connection is None:
        messages.error(
            request, f"The dataset has no {registry.labels()} connection: connect it first."
        )
    return connection


class ConnectForm(forms.Form):
    # Not sent by a page offering one CRM: the default one.
    provider = forms.ChoiceField(choices=registry.provider_choices, required=False)
    token = forms.CharField(max_length=500, strip=True, required=False)  # HubSpot's
    # Salesforce's External Client App: the org's My Domain, its consumer key and secret.
    domain = forms.CharField(max_length=300, strip=True, required=False)
    client_id = forms.CharField(max_length=500, strip=True, required=False)
    client_secret = forms.CharField(max_length=500, strip=True, required=False)
    every_hours = forms.IntegerField(min_value=1, max_value=24 * 30, initial=24)

    def clean_provider(self) -> str:
        return self.cleaned_data["provider"] or registry.DEFAULT_PROVIDER

    def credential(self) -> str:
        """The provider's one credential string (registry.credentials_from). Raises
        ConnectRefused naming what is wrong with it."""
        given = {k: v for k, v in self.cleaned_data.items() if isinstance(v, str)}
        try:
            return registry.credentials_from(self.cleaned_data["provider"], given)
        except ConnectorError as error:
            raise ConnectRefused(error.message) from None


class ScheduleForm(forms.Form):
    every_hours = forms.IntegerField(min_value=1, max_value=24 * 30)
    active = forms.BooleanField(required=False)


@login_required
@require_POST
def connect_dataset(request: HttpRequest, name: str) -> HttpResponse:
    dataset = _dataset(request, name)
    form = ConnectForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, "A known CRM, its credentials and a number of hours (1 or more) are required."
        )
        return redirect("reviews:dataset", dataset.name)
    try:
        connection = connect(
            dataset,
            form.credential(),
            provider=form.cleaned_data["provider"],
            every_hours=form.cleaned_data["every_hours"],
            user=request.user,
        )
    except ConnectRefused as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request, f"Connected to {connection.provider_label} portal {connection.portal_id}."
        )
    return redirect("reviews:dataset", dataset.name)


@login_required
@require_POST
def schedule_dataset(request: HttpRequest, name: str) -> HttpResponse:
    connection = _connection(request, name)
    form = ScheduleForm(request.POST)
    if connection is None:
        pass
    elif form.is_valid():
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
    connection = _connection(request, name)
    if connection is None:
        return redirect("reviews:dataset", name)
    try:
        pull = request_pull(connection, full=request.POST.get("full") == "1", by="page")
    except AlreadyPulling as error:
        messages.error(request, str(error))
    else:
        send_pull(pull)
        messages.success(request, f"Pull {pull.pk} ({pull.kind}) queued.")
    return redirect("reviews:dataset", name)
