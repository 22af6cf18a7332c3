"""The CLI's --workspace option: a workspace by name, or the default one when not given
(an installation with one team)."""

from __future__ import annotations

from django.core.management.base import CommandError

from workspaces.models import Workspace, default_workspace

HELP = "the workspace, by name (default: the default workspace)"


def workspace_named(name: str | None, *, returncode: int = 1) -> Workspace:
    if not name:
        return default_workspace()
    found = Workspace.objects.filter(name=name).first()
    if found is None:
        raise CommandError(f"no workspace {name!r}", returncode=returncode)
    return found
