from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("spend/", include("ledger.urls")),
    path("", include("reviews.web.urls")),
]
