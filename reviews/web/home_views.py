"""The home page (`/`): the datasets of the user's workspaces and their health, the
one-off uploads beside them (reviews.web.home)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviews.web import home as rows
from reviews.web import uploads


def home_or_upload(request: HttpRequest) -> HttpResponse:
    """`/` was the upload page before it was the home page: an upload posted to it (a
    script, a bookmarked form, curl) is still received there, by the upload view, with
    its own sign-in and database-down handling."""
    if request.method == "POST":
        return uploads.upload(request)
    return home(request)


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    context = {
        "rows": rows.dataset_rows(request),
        "one_offs": rows.one_off_uploads(request),
        "trend_syncs": rows.TREND_SYNCS,
    }
    return render(request, "reviews/home.html", context)
