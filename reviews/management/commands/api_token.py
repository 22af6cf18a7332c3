"""manage.py api_token USERNAME --name NAME [--workspace WS] [--scope upload] [--scope read]:
print a new API token once (both scopes when none is given), acting for one workspace
(--workspace; a user in one workspace may leave it out); --revoke NAME revokes one."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import create_token, revoke_token
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Create an API token for a user (printed once), or revoke one by name."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--name", help="name of the new token")
        action.add_argument("--revoke", metavar="NAME", help="revoke the user's token NAME")
        parser.add_argument(
            "--scope",
            action="append",
            choices=ApiToken.Scope.values,
            help="repeatable; both scopes when none is given",
        )
        parser.add_argument(
            "--workspace",
            metavar="NAME",
            help="the workspace the token acts for (needed when the user is in several)",
        )

    def handle(
        self,
        *args,
        username: str,
        name: str,
        revoke: str,
        scope: list[str],
        workspace: str | None = None,
        **options,
    ):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        if revoke:
            if not revoke_token(user, revoke):
                raise CommandError(f"{username} has no active token named {revoke!r}")
            self.stderr.write(f"revoked {username}'s token {revoke!r}")
            return
        chosen = None
        if workspace:
            chosen = Workspace.objects.filter(name=workspace).first()
            if chosen is None:
                raise CommandError(f"no workspace {workspace!r}")
        try:
            new = create_token(user, name, scope or ApiToken.Scope.values, workspace=chosen)
        except ValueError as error:
            raise CommandError(str(error)) from None
        # The token alone on stdout (for scripts); what it is on stderr.
        self.stderr.write(
            f"token {name!r} for {username} in workspace {new.token.workspace} "
            f"(scopes: {', '.join(new.token.scopes)}); "
            "it is shown only now:"
        )
        self.stdout.write(new.secret)
