from django.urls import path

from reviews.web import uploads, views

app_name = "reviews"
urlpatterns = [
    path("", uploads.upload, name="upload"),
    path("batches/<int:batch_id>/", views.batch_detail, name="batch"),
    path("runs/", views.run_list, name="runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/rerun/", views.rerun_run, name="rerun"),
    path("runs/<int:run_id>/break-glass/", views.break_glass, name="break_glass"),
    path("runs/<int:run_id>/findings.csv", views.findings_csv, name="findings_csv"),
    path("runs/<int:run_id>.json", views.run_json, name="run_json"),
]
