"""manage.py workspace create NAME --owner USER | add NAME USER --role ROLE | list"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from workspaces.models import Membership, Role, Workspace


class Command(BaseCommand):
    help = "Create a workspace, add a member (or change a member's role), list workspaces."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="a new workspace, with its first admin")
        create.add_argument("name")
        create.add_argument("--owner", required=True, help="username: the workspace's admin")
        add = actions.add_parser("add", help="add a member, or set a member's role")
        add.add_argument("name")
        add.add_argument("username")
        add.add_argument("--role", choices=Role.values, default=Role.VIEWER)
        actions.add_parser("list", help="workspaces and their members")

    def handle(self, *args, action: str, **options) -> None:
        if action == "create":
            self.create(options["name"], options["owner"])
        elif action == "add":
            self.add(options["name"], options["username"], options["role"])
        else:
            for workspace in Workspace.objects.prefetch_related("memberships__user"):
                members = ", ".join(
                    f"{m.user.get_username()} ({m.role})" for m in workspace.memberships.all()
                )
                self.stdout.write(f"{workspace.name}: {members or 'no members'}")

    def create(self, name: str, owner: str) -> None:
        name = name.strip()
        if not name:
            raise CommandError("a workspace needs a name")
        user = _user(owner)
        with transaction.atomic():
            workspace, created = Workspace.objects.get_or_create(name=name)
            if not created:
                raise CommandError(f"workspace {name!r} exists already")
            Membership.objects.create(workspace=workspace, user=user, role=Role.ADMIN)
        self.stdout.write(f"workspace {name!r} created; {owner} is its admin")

    def add(self, name: str, username: str, role: str) -> None:
        workspace = Workspace.objects.filter(name=name).first()
        if workspace is None:
            raise CommandError(f"no workspace {name!r}")
        user = _user(username)
        _, created = Membership.objects.update_or_create(
            workspace=workspace, user=user, defaults={"role": role}
        )
        verb = "added to" if created else "changed in"
        self.stdout.write(f"{username} {verb} {name!r}: {role}")


def _user(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user {username!r}")
    return user
