"""The tests' receivers listen on 127.0.0.1 over plain http: allow-listed, as an
operator lists an internal receiver (WEBHOOK_ALLOWED_HOSTS), for this process and for a
worker started after it. The tests of refusals set their own list."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def loopback_receivers_allowed(settings, monkeypatch):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")
