from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from reviews.web.api.api import api


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    # Browsers ask for /favicon.ico on pages without a <link rel="icon"> (the admin's).
    # Resolved per request, so a hashed static file name would be found too.
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("spend/", include("ledger.urls")),
    path("", include("reviews.web.urls")),
]
