"""Uploads sent while the database is already down: a real gunicorn reaches the test
database through a TCP proxy (tests/tcp_proxy.py) that the test cuts after logging in.
The signed-in session (in Redis) or a cached API token says who sent the upload; it is
kept in the spool, and checked again when the import stores it. Every other page
answers 503, and nobody without a session or a known token gets anything kept. Last, a
database host that does not answer is given up on after DATABASE_CONNECT_TIMEOUT."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password
from django.db import connection
from django.urls import reverse

from reviews.apiauth.tokens import create_token, digest, revoke_token
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.spool_import import import_spool
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import file_bytes
from reviews.web.unavailable import UNAVAILABLE
from reviews.web.uploads import SPOOLED
from tests import services
from tests.conftest import require
from tests.deploy.test_deploy import free_port
from tests.tcp_proxy import TcpProxy
from tests.uploads import DATA

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SEED = (DATA / "seed-example.json").read_bytes()
PASSWORD = "member-pass-1"  # noqa: S105 (a test user's)
UPLOAD = reverse("reviews:upload")
API_UPLOAD = reverse("api:batches")


@dataclass(frozen=True)
class Server:
    url: str
    proxy: TcpProxy
    spool_dir: Path
    log: Path  # what the server printed: its log and its access log


@pytest.fixture(scope="module")
def server(django_db_setup, tmp_path_factory):
    """gunicorn with two workers (a session must hold across them) on the test database
    through the proxy and on the test Redis; its spool and its log in a folder of ours."""
    require(settings.POSTGRES_PROBLEM or settings.REDIS_PROBLEM)
    db = connection.settings_dict
    proxy = TcpProxy((db["HOST"], int(db["PORT"]))).start()
    folder = tmp_path_factory.mktemp("offline")
    login = f"{db['USER']}:{db['PASSWORD']}" if db["PASSWORD"] else db["USER"]
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{login}@127.0.0.1:{proxy.port}/{db['NAME']}",
        "REDIS_URL": services.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,  # the import checks session hashes made there
        "DATA_DIR": str(folder),
        "SPOOL_DIR": str(folder / "spool"),
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
    }
    log = folder / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "revreview.wsgi", "--workers", "2"]
            + ["--bind", f"127.0.0.1:{port}", "--access-logfile", "-"],
            cwd=services.ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _answers(url):
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.3)
        yield Server(url, proxy, folder / "spool", log)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        proxy.cut()


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/accounts/login/", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def live(server, redis_url, settings):
    """The server with its database reachable, an empty spool, and this process
    importing from that spool; the database comes back after the test."""
    settings.SPOOL_DIR = server.spool_dir
    for folder in spool.pending(include_failed=True):
        spool.remove(folder)
    yield server
    server.proxy.restore()


@pytest.fixture
def http(live):
    with httpx.Client(base_url=live.url, timeout=60) as client:
        yield client


def make_user(django_user_model, username: str, **fields):
    # The server checks passwords with the deployed hashers: the tests' MD5 is not one.
    password = make_password(PASSWORD, hasher=PBKDF2PasswordHasher())
    return django_user_model.objects.create(username=username, password=password, **fields)


def csrf_token(page: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def log_in(http: httpx.Client, username: str) -> str:
    """Log in through the login page; the upload page's CSRF token, read before the
    database goes away, as a browser holding the page has it."""
    form = {"username": username, "password": PASSWORD}
    page = http.get("/accounts/login/")
    answer = http.post("/accounts/login/", data={**form, "csrfmiddlewaretoken": csrf_token(page)})
    assert answer.status_code == 302, answer.text[-2000:]
    return csrf_token(http.get(UPLOAD))


def post_upload(http: httpx.Client, token: str | None, **fields) -> httpx.Response:
    data = {"csrfmiddlewaretoken": token, **fields} if token else fields
    return http.post(UPLOAD, data=data, files=[("files", ("nightly.json", SEED))])


def post_api(http: httpx.Client, secret: str | None, key: str | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    if key:
        headers["Idempotency-Key"] = key
    return http.post(f"{API_UPLOAD}?dataset=acme-crm", content=SEED, headers=headers)


def spooled() -> list[Path]:
    return spool.pending(include_failed=True)


def test_a_signed_in_upload_sent_while_the_database_is_down_is_kept_for_its_user(
    live, http, django_user_model
):
    member = make_user(django_user_model, "member")
    token = log_in(http, "member")
    live.proxy.cut()

    answer = post_upload(http, token, dataset="acme-crm")

    # Through every middleware (sessions, CSRF, auth, messages, axes) without the database.
    assert answer.status_code == 503, answer.text[-2000:]
    assert answer.headers["Retry-After"] == "60"
    assert SPOOLED.capitalize() in answer.text
    (folder,) = spooled()
    assert folder.name in answer.text
    assert (folder / "files" / "0").read_bytes() == SEED
    meta = spool.read_meta(folder)
    assert (meta["channel"], meta["user_id"], meta["dataset"]) == ("form", member.pk, "acme-crm")
    # The session's auth hash, made by the server when it logged in: its user is checked
    # again at import. Never the session key.
    assert meta["sender"] == {"via": "session", "session_auth_hash": member.get_session_auth_hash()}
    assert meta["error"].startswith(("OperationalError: ", "InterfaceError: "))
    session_key = http.cookies["sessionid"]
    assert session_key not in (folder / "meta.json").read_text()
    assert session_key not in live.log.read_text()
    live.proxy.restore()

    ((_, batch_id),) = import_spool().imported

    batch = Batch.objects.get(pk=batch_id)
    assert (batch.created_by, batch.status, batch.dataset.name) == (member, "accepted", "acme-crm")
    assert batch.runs.get().status == ReviewRun.Status.DONE  # tasks are eager here
    assert not folder.exists()


def test_an_upload_whose_session_no_longer_holds_is_stored_rejected_with_the_reason(
    live, http, django_user_model, client
):
    member = make_user(django_user_model, "member")
    token = log_in(http, "member")
    live.proxy.cut()
    assert post_upload(http, token).status_code == 503
    live.proxy.restore()
    member.set_password("changed-since-1")  # before the import: the session is over
    member.save()

    ((_, batch_id),) = import_spool().imported

    batch = Batch.objects.get(pk=batch_id)
    reason = (
        "the session that sent this upload was no longer valid when it was imported: "
        "the password of member was changed after it signed in"
    )
    assert (batch.status, batch.errors, batch.created_by) == ("rejected", [reason], None)
    assert file_bytes(batch.files.get()) == SEED  # kept all the same
    assert not batch.runs.exists()
    client.force_login(django_user_model.objects.create_user("lead", is_staff=True))
    assert reason in client.get(reverse("reviews:batch", args=[batch.pk])).content.decode()


def test_an_api_upload_sent_while_the_database_is_down_is_kept_for_its_tokens_user(
    live, http, django_user_model
):
    robot = django_user_model.objects.create_user("robot")
    secret = create_token(robot, "nightly export").secret  # cached when made
    live.proxy.cut()

    answer = post_api(http, secret)

    assert answer.status_code == 503, answer.text
    assert answer.headers["Retry-After"] == "60"
    (folder,) = spooled()
    assert answer.json() == {"detail": SPOOLED, "spool_id": folder.name}
    meta = spool.read_meta(folder)
    assert meta["sender"] == {"via": "token", "token_sha256": digest(secret)}
    assert (meta["user_id"], meta["rate_keys"]) == (robot.pk, [f"user:{robot.pk}"])
    assert secret not in (folder / "meta.json").read_text()
    assert secret not in live.log.read_text()
    # Anything else the token asks answers 503, nothing kept.
    runs = http.get(reverse("api:runs"), headers={"Authorization": f"Bearer {secret}"})
    assert (runs.status_code, runs.json()) == (503, {"detail": UNAVAILABLE})

    import_spool()

    batch = Batch.objects.get()
    assert (batch.created_by, batch.dataset.name) == (robot, "acme-crm")
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_an_idempotency_key_sent_while_the_database_is_down_is_honoured(
    live, http, django_user_model
):
    robot = django_user_model.objects.create_user("robot")
    secret = create_token(robot, "nightly export").secret
    live.proxy.cut()

    first = post_api(http, secret, key="night-1")
    again = post_api(http, secret, key="night-1")  # still down: the same spool id

    assert first.status_code == again.status_code == 503, again.text
    (folder,) = spooled()
    assert first.json()["spool_id"] == again.json()["spool_id"] == folder.name
    live.proxy.restore()
    assert post_api(http, secret, key="night-1").json()["spool_id"] == folder.name

    ((_, batch_id),) = import_spool().imported

    after = post_api(http, secret, key="night-1")
    assert (after.status_code, after.json()["batch_id"]) == (202, batch_id), after.text
    assert after.headers["Idempotent-Replayed"] == "true"
    assert Batch.objects.count() == 1


def test_an_api_upload_whose_token_was_revoked_before_the_import_is_stored_rejected(
    live, http, django_user_model
):
    robot = django_user_model.objects.create_user("robot")
    new = create_token(robot, "nightly export")
    live.proxy.cut()
    assert post_api(http, new.secret).status_code == 503
    revoke_token(robot, "nightly export")

    import_spool()

    batch = Batch.objects.get()
    reason = (
        "the API token that sent this upload was no longer valid when it was imported: "
        f"token {new.token} was revoked"
    )
    assert (batch.status, batch.errors, batch.created_by) == ("rejected", [reason], None)
    assert file_bytes(batch.files.get()) == SEED


def test_nobody_without_a_session_or_a_known_token_gets_an_upload_kept(
    live, http, django_user_model
):
    robot = django_user_model.objects.create_user("robot")
    revoked = create_token(robot, "old export").secret
    revoke_token(robot, "old export")
    live.proxy.cut()

    # A made-up token, and one revoked before the outage: the cache knows neither.
    for secret in ("rr_" + "x" * 43, revoked):
        answer = post_api(http, secret)
        assert (answer.status_code, answer.json()) == (503, {"detail": UNAVAILABLE})
    assert post_api(http, None).status_code == 401
    # No session: the login page, as always (with a CSRF token, read from that page).
    anonymous = post_upload(http, csrf_token(http.get("/accounts/login/")))
    assert anonymous.status_code == 302
    assert anonymous.headers["Location"] == f"/accounts/login/?next={UPLOAD}"

    assert spooled() == []


def test_a_signed_in_upload_without_its_csrf_token_is_refused_while_the_database_is_down(
    live, http, django_user_model
):
    make_user(django_user_model, "member")
    log_in(http, "member")
    live.proxy.cut()

    answer = post_upload(http, None)

    assert answer.status_code == 403
    assert "CSRF" in answer.text
    assert spooled() == []


def test_other_pages_answer_503_while_the_database_is_down(live, http, django_user_model):
    make_user(django_user_model, "member")
    log_in(http, "member")
    live.proxy.cut()

    for path in (reverse("reviews:runs"), UPLOAD):
        page = http.get(path)
        assert page.status_code == 503, page.text[-2000:]
        assert page.headers["Retry-After"] == "60"
        assert "Database unavailable" in page.text
        for leak in ("Traceback", "Error", "psycopg", str(live.proxy.port)):
            assert leak not in page.text
    # The login page reads no database (the compose health check asks for it).
    with httpx.Client(base_url=live.url) as anonymous:
        assert anonymous.get("/accounts/login/").status_code == 200
    live.proxy.restore()
    # Back, on every worker: a connection the cut closed is found by its health check
    # before it is used, not by a request.
    for _ in range(4):
        assert http.get(reverse("reviews:runs")).status_code == 200


def test_connecting_to_a_database_that_does_not_answer_gives_up_after_the_timeout():
    # A listener that never speaks: as a database host that stopped answering looks.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "revreview.settings",
            "DATABASE_URL": f"postgres://nobody@127.0.0.1:{silent.getsockname()[1]}/db",
            "DATABASE_CONNECT_TIMEOUT": "2",
        }
        code = (
            "import django; django.setup()\n"
            "from django.db import OperationalError, connection\n"
            "try:\n    connection.ensure_connection()\n"
            "except OperationalError as error:\n    print('unavailable:', error)\n"
        )
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=services.ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert result.stdout.startswith("unavailable: "), result.stdout + result.stderr
    assert "timeout" in result.stdout
    assert time.monotonic() - started < 30
