"""A dataset's name in a dashboard path (`datasets/<dataset:name>/`), whatever it holds.

A name is one or more path segments, and a browser (like any HTTP client) resolves `.`
and `..` segments before it sends a request: the name `.` would lead to `/datasets/`,
`a/../b` to the dataset `b`, and `../admin` out of `/datasets/` to the admin. So in a
link a segment that is `.` or `..` has its dots written `%2E` (and every `%` of a name `%25`,
so that no name's link reads as another's); Django's reverse() escapes those `%` once
more, which keeps a browser from reading `%2E` as a dot. A `/` in a name stays a `/`."""

from __future__ import annotations

from urllib.parse import unquote

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import register_converter


class DatasetName:
    regex = r".+"  # as Django's `path` (a name holds no control character)

    def to_python(self, value: str) -> str:
        return unquote(value)  # the exact inverse of to_url: it escapes every `%`

    def to_url(self, value: str) -> str:
        segments = value.replace("%", "%25").split("/")
        return "/".join("%2E" * len(s) if s in (".", "..") else s for s in segments)


register_converter(DatasetName, "dataset")


def back_to_dataset(
    request: HttpRequest, dataset, *, error: str = "", note: str = "", section: str = ""
) -> HttpResponse:
    """After a change on the dataset page: back to it (at `section`), saying how it went."""
    if error:
        messages.error(request, error)
    elif note:
        messages.success(request, note)
    url = redirect("reviews:dataset", dataset.name).url
    anchor = f"#{section}" if section else ""
    return redirect(f"{url}?workspace={dataset.workspace_id}{anchor}")
