"""deploy/nginx.conf.template, run for real: Debian's nginx with the file rendered as the
nginx image renders it (MAX_UPLOAD_BYTES) for loopback ports, in front of a real
gunicorn serving revreview on the test database. The scene is compose's behind a TLS
proxy: that proxy's X-Forwarded-Proto and X-Forwarded-For are sent by the test, and the
web runs with TRUSTED_PROXY_COUNT=2 (the TLS proxy and nginx).

nginx comes from Debian's package (.ci/run installs it); without it these tests are
skipped, and under CI=true they fail."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from reviews.models import Batch
from tests import services
from tests.deploy.test_deploy import compose_config, free_port
from tests.services import ROOT

TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
LIMIT = 256 * 1024  # MAX_UPLOAD_BYTES for this test, in nginx and in the web alike
GUNICORN_TIMEOUT = 4  # seconds; the slow upload below takes longer than this
SAMPLE = ROOT / "samples" / "full.json"
PASSWORD = "nginx-test-password-1"


def nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if not found:
        message = "no nginx: apt-get install -y nginx"
        if services.CI:
            pytest.fail(message)
        pytest.skip(message)
    return found


def render(listen: int, upstream: int, max_upload_bytes: int) -> str:
    """The template as the nginx image renders it (envsubst of MAX_UPLOAD_BYTES), with
    the compose network's addresses swapped for loopback ports."""
    text = TEMPLATE.read_text().replace("${MAX_UPLOAD_BYTES}", str(max_upload_bytes))
    swaps = {
        "listen 80;": f"listen 127.0.0.1:{listen};",
        "server web:8000;": f"server 127.0.0.1:{upstream};",
    }
    for compose_form, loopback in swaps.items():
        assert text.count(compose_form) == 1, compose_form
        text = text.replace(compose_form, loopback)
    assert "MAX_UPLOAD_BYTES}" not in text and "$MAX_UPLOAD_BYTES" not in text
    return text


def main_config(folder: Path, site: Path) -> str:
    """What the nginx image's own nginx.conf provides around conf.d, with every path in
    the test's folder. As root, workers stay root so they can write its temp folders."""
    temp = "\n".join(
        f"  {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"events {{}}\nhttp {{\n  access_log {folder / 'access.log'};\n{temp}\n"
        f"  include {site};\n}}\n"
    )


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


METRICS_TOKEN = "nginx-test-metrics-token"


@dataclass
class Stack:
    url: str  # nginx, the published port
    origin: str  # what the browser sees through the TLS proxy
    gunicorn_access_log: Path
    web: str  # gunicorn itself, as Prometheus reaches it on the internal network

    def uploads_seen(self) -> list[str]:
        """The uploads (POST /) gunicorn answered, from its access log."""
        return [
            line for line in self.gunicorn_access_log.read_text().splitlines() if '"POST / ' in line
        ]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory) -> Iterator[Stack]:
    if settings.POSTGRES_PROBLEM:
        (pytest.fail if services.CI else pytest.skip)(settings.POSTGRES_PROBLEM)
    nginx = nginx_binary()
    folder = tmp_path_factory.mktemp("nginx")
    web_port, nginx_port = free_port(), free_port()
    db = connection.settings_dict
    drop = ("REDIS_URL", "CELERY_TASK_ALWAYS_EAGER", "DEBUG")
    env = {k: v for k, v in os.environ.items() if k not in drop} | {
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DATA_DIR": str(folder / "data"),
        "SECRET_KEY": "nginx-test-" + "k" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "MAX_UPLOAD_BYTES": str(LIMIT),
        # As compose behind a TLS proxy, with cookies the plain-HTTP test client sends.
        "SECURE_PROXY_SSL_HEADER": "true",
        "SECURE_SSL_REDIRECT": "true",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "TRUSTED_PROXY_COUNT": "2",
        "METRICS_TOKEN": METRICS_TOKEN,
    }
    web_log, access_log = folder / "gunicorn.log", folder / "gunicorn-access.log"
    access_log.touch()
    web = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "revreview.wsgi",
            *("--bind", f"127.0.0.1:{web_port}", "--workers", "1"),
            *("--timeout", str(GUNICORN_TIMEOUT), "--access-logfile", str(access_log)),
            # In compose nginx is not on gunicorn's loopback, so gunicorn trusts none of
            # its headers; Django alone must read them (SECURE_PROXY_SSL_HEADER).
            *("--forwarded-allow-ips", "192.0.2.1"),
        ],
        cwd=ROOT,
        env=env,
        stdout=web_log.open("w"),
        stderr=subprocess.STDOUT,
    )
    site, conf, nginx_log = folder / "site.conf", folder / "nginx.conf", folder / "error.log"
    site.write_text(render(nginx_port, web_port, LIMIT))
    conf.write_text(main_config(folder, site))
    proxy = None
    try:
        wait_for_port(web_port, web, web_log)
        proxy = subprocess.Popen(
            [nginx, "-p", str(folder), "-c", str(conf), "-e", str(nginx_log)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        wait_for_port(nginx_port, proxy, nginx_log)
        url = f"http://127.0.0.1:{nginx_port}"
        yield Stack(
            url, f"https://127.0.0.1:{nginx_port}", access_log, f"http://127.0.0.1:{web_port}"
        )
    finally:
        if proxy:
            stop(proxy)
        stop(web)


@pytest.fixture
def client(stack, transactional_db, django_user_model) -> Iterator[httpx.Client]:
    """Signed in through nginx, as a browser behind the TLS proxy."""
    make_uploader(django_user_model)
    headers = {"X-Forwarded-Proto": "https"}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=60) as browser:
        response = sign_in(browser, stack, PASSWORD)
        assert response.status_code == 302, response.text[:2000]
        yield browser


def make_uploader(user_model) -> None:
    """The web runs the real settings: a hash from their hasher, not the tests' MD5."""
    hashed = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user_model.objects.create(username="uploader", password=hashed)


def sign_in(browser: httpx.Client, stack: Stack, password: str, **headers: str) -> httpx.Response:
    page = browser.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    form = {"username": "uploader", "password": password, "csrfmiddlewaretoken": token}
    return browser.post("/accounts/login/", data=form, headers={"Origin": stack.origin, **headers})


def multipart(
    name: str, data: bytes, boundary: str = "revreview-test-boundary"
) -> tuple[bytes, str]:
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
            f"Content-Type: application/json\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def upload_headers(browser: httpx.Client, stack: Stack, content_type: str) -> dict[str, str]:
    return {
        "Origin": stack.origin,
        "X-CSRFToken": browser.cookies["csrftoken"],
        "Content-Type": content_type,
    }


def test_the_forwarded_headers_reach_django(stack, transactional_db, django_user_model):
    make_uploader(django_user_model)
    # No TLS proxy said https (or a client claims something else): Django redirects.
    for claim in ({}, {"X-Forwarded-Proto": "http"}, {"X-Forwarded-Proto": "https, http"}):
        response = httpx.get(f"{stack.url}/accounts/login/", headers=claim)
        assert response.status_code == 301, claim
        assert response.headers["location"] == f"{stack.origin}/accounts/login/"
    # The TLS proxy's https reaches Django: served, with HSTS.
    with httpx.Client(base_url=stack.url, headers={"X-Forwarded-Proto": "https"}) as browser:
        page = browser.get("/accounts/login/")
        assert page.status_code == 200
        assert "max-age=31536000" in page.headers["strict-transport-security"]
        # The TLS proxy saw 203.0.113.7 (the client claimed 198.51.100.66 before it);
        # nginx appends its own peer, and Django takes the second from the right.
        wrong = sign_in(
            browser, stack, "wrong", **{"X-Forwarded-For": "198.51.100.66, 203.0.113.7"}
        )
        assert wrong.status_code == 200
        assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.7"]
        # Straight to nginx (no proxy before it): the address nginx saw.
        assert sign_in(browser, stack, PASSWORD).status_code == 302
        assert list(AccessLog.objects.values_list("ip_address", flat=True)) == ["127.0.0.1"]


def test_an_upload_over_the_limit_is_refused_by_nginx_and_a_normal_one_passes(stack, client):
    body, content_type = multipart("big.json", b"x" * LIMIT)
    headers = upload_headers(client, stack, content_type)
    # Content-Length over the limit: refused before the body is read.
    response = client.post("/", content=body, headers=headers)
    # Chunked (no length given): refused while it arrives.
    chunked = client.post(
        "/", content=(body[i : i + 65536] for i in range(0, len(body), 65536)), headers=headers
    )
    for refused in (response, chunked):
        assert refused.status_code == 413
        assert refused.headers["content-type"].startswith("text/plain")
        assert f"larger than the limit of {LIMIT} bytes" in refused.text
    assert not Batch.objects.exists()

    data = SAMPLE.read_bytes()
    csrf = {"Origin": stack.origin, "X-CSRFToken": client.cookies["csrftoken"]}
    response = client.post(
        "/", files={"files": ("full.json", data, "application/json")}, headers=csrf
    )
    assert response.status_code == 302, response.text[:2000]
    assert re.fullmatch(r"/runs/\d+/", response.headers["location"])
    # gunicorn's one worker logs each request before it takes the next: once the good
    # upload is logged, so would the refused ones be, had they reached it.
    deadline = time.monotonic() + 10
    while not (seen := stack.uploads_seen()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(seen) == 1 and '" 302 ' in seen[0], seen
    batch = Batch.objects.get()
    assert (batch.file_name, batch.sha256) == ("full.json", hashlib.sha256(data).hexdigest())


def test_a_slow_upload_longer_than_gunicorn_timeout_is_buffered_and_kept(stack, client):
    """proxy_request_buffering: gunicorn's sync worker sees the body only once nginx has
    all of it, so a client slower than gunicorn's --timeout loses nothing."""
    data = SAMPLE.read_bytes()
    body, content_type = multipart("slow.json", data)
    pieces = 10
    size = -(-len(body) // pieces)

    def trickle() -> Iterator[bytes]:
        for start in range(0, len(body), size):
            yield body[start : start + size]
            time.sleep((GUNICORN_TIMEOUT + 2) / pieces)

    headers = upload_headers(client, stack, content_type) | {"Content-Length": str(len(body))}
    started = time.monotonic()
    response = client.post("/", content=trickle(), headers=headers)
    assert time.monotonic() - started > GUNICORN_TIMEOUT
    assert response.status_code == 302, response.text[:2000]
    assert Batch.objects.get().sha256 == hashlib.sha256(data).hexdigest()


def test_the_compose_health_check_of_nginx_passes_against_it(stack):
    config = compose_config({"SECRET_KEY": "test-only-secret"})
    assert config.returncode == 0, config.stderr
    import yaml

    probe = yaml.safe_load(config.stdout)["services"]["nginx"]["healthcheck"]["test"]
    assert probe[0] == "CMD"
    command = [arg.replace("http://127.0.0.1/", f"{stack.url}/") for arg in probe[1:]]
    assert command != probe[1:], "the health check does not ask http://127.0.0.1/"
    assert subprocess.run(command, capture_output=True, timeout=30).returncode == 0


def test_metrics_are_answered_on_the_internal_network_only(stack, transactional_db):
    """Prometheus scrapes gunicorn directly (plain HTTP, not redirected to HTTPS); nginx,
    the published port, does not pass /metrics on, token or not."""
    bearer = {"Authorization": f"Bearer {METRICS_TOKEN}"}
    direct = httpx.get(f"{stack.web}/metrics", headers=bearer, timeout=30)
    assert direct.status_code == 200, direct.text[:500]
    assert "revreview_runs" in direct.text
    for path in ("/metrics", "/metrics/", "/metrics?x=1"):
        through = httpx.get(f"{stack.url}{path}", headers=bearer, timeout=30)
        assert through.status_code == 404, path
        assert "revreview_runs" not in through.text
