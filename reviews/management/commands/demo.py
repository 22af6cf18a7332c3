"""manage.py demo: create (or refresh) the demo login and print it.

The demo user is a superuser, so it can use the admin and break glass, and an admin of
the default workspace, where `manage.py load_samples` puts the samples. Its password is
DEMO_PASSWORD, or the documented default below; re-running resets it to that value."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from workspaces.models import Membership, Role, default_workspace

DEMO_USERNAME = "demo"
DEFAULT_PASSWORD = "revreview-demo"  # noqa: S105 (documented; for local demos only)


class Command(BaseCommand):
    help = "Create or refresh the demo login (user 'demo', password $DEMO_PASSWORD or the default)."

    def handle(self, *args, **options) -> None:
        password = os.environ.get("DEMO_PASSWORD") or DEFAULT_PASSWORD
        user, created = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        user.is_staff = True
        user.is_superuser = True
        user.is_active = True
        user.set_password(password)
        user.save()
        Membership.objects.update_or_create(
            workspace=default_workspace(), user=user, defaults={"role": Role.ADMIN}
        )
        verb = "created" if created else "refreshed"
        self.stdout.write(
            self.style.SUCCESS(f"demo login {verb}: username {DEMO_USERNAME}, password {password}")
        )
