"""Who may see and do what: the one place that answers "which workspaces are this
user's" and "may this user do that there". Views, the API, admin and exports ask here.

A superuser sees every workspace, as an admin. Anyone else sees the workspaces they are
a member of, and nothing else: there is no fallback to "all"."""

from __future__ import annotations

from django.db.models import QuerySet

from workspaces.models import ROLE_RANK, Membership, Role, Workspace


def workspaces_of(user, role: str = Role.VIEWER) -> QuerySet[Workspace]:
    """The workspaces `user` holds at least `role` in (all of them for a superuser;
    none for an anonymous or inactive user)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    roles = [r for r in Role.values if ROLE_RANK[r] >= ROLE_RANK[role]]
    return Workspace.objects.filter(memberships__user=user, memberships__role__in=roles)


def role_in(user, workspace_id: int | None) -> str | None:
    """The user's role in the workspace, or None for an outsider."""
    if workspace_id is None or not getattr(user, "is_authenticated", False):
        return None
    if not user.is_active:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return (
        Membership.objects.filter(user=user, workspace_id=workspace_id)
        .values_list("role", flat=True)
        .first()
    )


def may(user, workspace_id: int | None, role: str) -> bool:
    """Whether the user holds at least `role` in the workspace."""
    held = role_in(user, workspace_id)
    return held is not None and ROLE_RANK[held] >= ROLE_RANK[role]


def scope(queryset: QuerySet, user, path: str, role: str = Role.VIEWER) -> QuerySet:
    """`queryset` narrowed to rows whose workspace (reached by `path`, e.g.
    "batch__workspace") is one of the user's. A superuser's is left whole."""
    if getattr(user, "is_superuser", False) and user.is_active:
        return queryset
    return queryset.filter(**{f"{path}__in": workspaces_of(user, role)})


def only_workspace(user, role: str = Role.VIEWER) -> Workspace | None:
    """The user's workspace when there is exactly one (a choice need not be offered)."""
    found = list(workspaces_of(user, role)[:2])
    return found[0] if len(found) == 1 else None
