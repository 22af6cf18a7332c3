"""The steps that move an app's existing rows into the default workspace: add the
column empty, fill it, then make it required (with the model's default)."""

from __future__ import annotations

from django.db import migrations, models

import workspaces.models


def fill(app_label: str, model_names: list[str]):
    def forward(apps, schema_editor) -> None:
        Workspace = apps.get_model("workspaces", "Workspace")
        workspace, _ = Workspace.objects.get_or_create(name=workspaces.models.DEFAULT_WORKSPACE)
        for name in model_names:
            apps.get_model(app_label, name).objects.filter(workspace__isnull=True).update(
                workspace=workspace
            )
        if schema_editor.connection.vendor == "postgresql":
            # Check the new foreign keys now, so the column can be made NOT NULL in the
            # same transaction ("pending trigger events" otherwise).
            schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    return migrations.RunPython(forward, migrations.RunPython.noop)


def workspace_field(*, null: bool, on_delete=models.PROTECT, related_name: str = "+"):
    return models.ForeignKey(
        null=null,
        on_delete=on_delete,
        related_name=related_name,
        to="workspaces.workspace",
        **({} if null else {"default": workspaces.models.default_workspace_id}),
    )


def move_into_default(app_label: str, fields: dict[str, dict]) -> list:
    """Operations for {model_name: {"on_delete": ..., "related_name": ...}}."""
    ops: list = []
    for name, options in fields.items():
        ops.append(migrations.AddField(name, "workspace", workspace_field(null=True, **options)))
    ops.append(fill(app_label, list(fields)))
    for name, options in fields.items():
        ops.append(migrations.AlterField(name, "workspace", workspace_field(null=False, **options)))
    return ops
