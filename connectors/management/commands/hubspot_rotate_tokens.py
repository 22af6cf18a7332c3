"""manage.py hubspot_rotate_tokens: re-encrypt every stored HubSpot token under the first
key of HUBSPOT_TOKEN_KEYS (docs/connectors.md, rotating the key)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from connectors import tokens
from connectors.models import Connection


class Command(BaseCommand):
    help = "Re-encrypt the stored HubSpot tokens under the newest key."

    def handle(self, *args, **options) -> None:
        done = 0
        for connection in Connection.objects.only("pk", "token_sealed"):
            sealed = tokens.rotate(connection.token_sealed)
            Connection.objects.filter(pk=connection.pk).update(token_sealed=sealed)
            done += 1
        self.stdout.write(f"{done} token(s) re-encrypted under the first key")
