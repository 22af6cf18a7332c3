"""The CLI's --workspace option: a workspace by name, or the default one when not given
(an installation with one team)."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import QuerySet

from workspaces.models import Workspace, default_workspace

HELP = "the workspace, by name (default: the default workspace)"


def workspace_named(name: str | None, *, returncode: int = 1) -> Workspace:
    if not name:
        return default_workspace()
    found = Workspace.objects.filter(name=name).first()
    if found is None:
        raise CommandError(f"no workspace {name!r}", returncode=returncode)
    return found


def workspace_holding(
    name: str | None, holding: QuerySet[Workspace], what: str, *, returncode: int = 1
) -> Workspace:
    """--workspace for a command that finds something by a name unique per workspace
    (a dataset): the workspace named; else the one of `holding` (the workspaces with such
    a thing), the default one when none has it; several: an error naming them."""
    if name:
        return workspace_named(name, returncode=returncode)
    found = list(holding.order_by("name"))
    if len(found) > 1:
        names = ", ".join(repr(w.name) for w in found)
        raise CommandError(
            f"{what} is in workspaces {names}: say which with --workspace", returncode=returncode
        )
    return found[0] if found else default_workspace()
