from django.urls import path

from reviews.web import (
    connection_views,
    dataset_names,  # noqa: F401  (registers the `dataset` converter)
    fixplan_views,
    history_views,
    home_views,
    merge_views,
    pipelines_views,
    task_views,
    team_rules_views,
    tokens,
    tuning_views,
    uploads,
    views,
)

app_name = "reviews"
urlpatterns = [
    # The home page; an upload posted to "/" (where the upload page was) is still received.
    path("", home_views.home_or_upload, name="home"),
    path("upload/", uploads.upload, name="upload"),
    path("batches/<int:batch_id>/", views.batch_detail, name="batch"),
    path("runs/", views.run_list, name="runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/rerun/", views.rerun_run, name="rerun"),
    path("runs/<int:run_id>/break-glass/", views.break_glass, name="break_glass"),
    path("runs/<int:run_id>/findings.csv", views.findings_csv, name="findings_csv"),
    path("runs/<int:run_id>.json", views.run_json, name="run_json"),
    path("runs/<int:run_id>/fix-plan/", fixplan_views.fix_plan_page, name="fix_plan"),
    path("runs/<int:run_id>/fix-plan.json", fixplan_views.fix_plan_json, name="fix_plan_json"),
    path(
        "runs/<int:run_id>/merges.csv",
        fixplan_views.fix_plan_csv,
        {"kind": "merges"},
        name="merges_csv",
    ),
    path(
        "runs/<int:run_id>/salesforce-merges.csv",
        fixplan_views.fix_plan_csv,
        {"kind": "salesforce-merges"},
        name="salesforce_merges_csv",
    ),
    path("runs/<int:run_id>/merges/apply/", merge_views.apply_run_merges, name="apply_merges"),
    path("runs/<int:run_id>/tasks/send/", task_views.send_run_tasks, name="send_tasks"),
    path(
        "runs/<int:run_id>/tasks.csv",
        fixplan_views.fix_plan_csv,
        {"kind": "tasks"},
        name="tasks_csv",
    ),
    path(
        "runs/<int:run_id>/findings/<int:finding_id>/dismiss/",
        history_views.dismiss_finding,
        name="dismiss",
    ),
    path(
        "runs/<int:run_id>/findings/<int:finding_id>/undo/",
        history_views.undo_finding_dismissal,
        name="undo_dismissal",
    ),
    # Before the dataset page: its <dataset:name> would take these too.
    path(
        "datasets/<dataset:name>/hubspot/connect/",
        connection_views.connect_dataset,
        name="dataset_connect",
    ),
    path(
        "datasets/<dataset:name>/hubspot/schedule/",
        connection_views.schedule_dataset,
        name="dataset_schedule",
    ),
    path("datasets/<dataset:name>/hubspot/pull/", connection_views.pull_now, name="dataset_pull"),
    path("datasets/<dataset:name>/merges/", merge_views.applied_merges, name="applied_merges"),
    path("datasets/<dataset:name>/tuning/", tuning_views.tuning, name="dataset_tuning"),
    path(
        "datasets/<dataset:name>/tuning/apply/", tuning_views.apply_proposal, name="apply_proposal"
    ),
    path(
        "datasets/<dataset:name>/tuning/dismiss/",
        tuning_views.dismiss_proposal,
        name="dismiss_proposal",
    ),
    path(
        "datasets/<dataset:name>/policy/restore/",
        tuning_views.restore_policy,
        name="restore_policy",
    ),
    path(
        "datasets/<dataset:name>/pipelines/",
        pipelines_views.upload_pipelines,
        name="dataset_pipelines",
    ),
    path("datasets/<dataset:name>/rules/", team_rules_views.rules_section, name="dataset_rules"),
    path(
        "datasets/<dataset:name>/rules/preview/",
        team_rules_views.rules_preview,
        name="dataset_rules_preview",
    ),
    path(
        "datasets/<dataset:name>/rules/add/", team_rules_views.rules_add, name="dataset_rules_add"
    ),
    path(
        "datasets/<dataset:name>/rules/remove/",
        team_rules_views.rules_remove,
        name="dataset_rules_remove",
    ),
    path("datasets/<dataset:name>/", history_views.dataset_detail, name="dataset"),
    path("settings/tokens/", tokens.token_list, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke/", tokens.token_revoke, name="token_revoke"),
]
