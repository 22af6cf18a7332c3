from django.contrib import admin
from django.urls import include, path

from reviews.web.api.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("spend/", include("ledger.urls")),
    path("", include("reviews.web.urls")),
]
