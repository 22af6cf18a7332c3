"""docker-compose.yml and the Dockerfile, read as the compose CLI reads them (there is no
container engine here to run them): it validates, it refuses to start without
SECRET_KEY, migrations run once before web and worker, nothing runs as root, and the web
health check answers against a real gunicorn."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from tests import services
from tests.services import ROOT

COMPOSE_FILE = ROOT / "docker-compose.yml"


def compose_cli() -> list[str]:
    """`docker compose` (the plugin) or Debian's `docker-compose`; skipped without one
    (CI installs Debian's: .ci/run)."""
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    if legacy := shutil.which("docker-compose"):
        return [legacy]
    message = "no compose CLI: apt-get install -y docker-compose"
    if services.CI:
        pytest.fail(message)
    pytest.skip(message)


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess:
    unset = ("SECRET_KEY", "WEB_BIND", "MAX_UPLOAD_BYTES")
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [*compose_cli(), "--project-directory", str(ROOT), "-f", str(COMPOSE_FILE), "config"],
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def config() -> dict:
    result = compose_config({"SECRET_KEY": "test-only-secret"})
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def test_compose_refuses_to_start_without_a_secret_key():
    result = compose_config({})
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_migrations_run_once_before_web_and_worker(config):
    services_ = config["services"]
    assert "migrate" in services_["migrate"]["command"]
    assert services_["migrate"].get("restart", "no") == "no"
    for name in ("web", "worker"):
        depends = services_[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
        assert depends["postgres"]["condition"] == "service_healthy"
        command = services_[name].get("command") or ""
        assert "migrate" not in " ".join(command if isinstance(command, list) else [command])


def test_only_nginx_is_published_on_loopback_and_web_has_a_health_check_and_restarts(config):
    published = {name: s["ports"] for name, s in config["services"].items() if s.get("ports")}
    assert list(published) == ["nginx"]
    (port,) = published["nginx"]
    address = port if isinstance(port, str) else f"{port['host_ip']}:{port['published']}"
    assert address.startswith("127.0.0.1:")
    web = config["services"]["web"]
    assert web["restart"] == "unless-stopped"
    assert web["healthcheck"]["test"][0] == "CMD"
    assert config["services"]["worker"]["stop_grace_period"] == "6m"  # > the 330 s hard limit
    for name in ("postgres", "redis"):
        assert config["services"][name]["restart"] == "unless-stopped"


def test_the_image_runs_as_a_user_that_owns_data_and_has_a_cmd():
    dockerfile = (ROOT / "Dockerfile").read_text()
    lines = [line.strip() for line in dockerfile.splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert "chown revreview:revreview /data" in dockerfile
    assert any(line.startswith("CMD [") and "gunicorn" in line for line in lines)
    assert " -e " not in dockerfile and "--editable" not in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored


def test_gunicorn_is_pinned_for_the_image():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (gunicorn,) = project["optional-dependencies"]["deploy"]
    assert gunicorn.startswith("gunicorn==")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_web_health_check_passes_against_gunicorn_and_fails_without_it(config, tmp_path):
    probe = config["services"]["web"]["healthcheck"]["test"][1:]
    port = free_port()
    command = [arg.replace("8000", str(port)) for arg in probe]
    command[0] = sys.executable
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "revreview.settings"}
    env |= {"SECRET_KEY": "health-check-test-" + "x" * 40}  # the default is refused
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "revreview.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while (check := subprocess.run(command, capture_output=True)).returncode != 0:
            assert server.poll() is None, server.stderr.read()[-2000:]
            assert time.monotonic() < deadline, check.stderr
            time.sleep(0.3)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    assert subprocess.run(command, capture_output=True).returncode != 0


def test_nginx_mounts_its_config_read_only_and_starts_after_a_healthy_web(config):
    nginx = config["services"]["nginx"]
    assert nginx["depends_on"]["web"]["condition"] == "service_healthy"
    assert nginx["restart"] == "unless-stopped"
    (volume,) = nginx["volumes"]
    source, target, mode = (
        volume.split(":")
        if isinstance(volume, str)
        else (volume["source"], volume["target"], "ro" if volume.get("read_only") else "rw")
    )
    assert Path(source) == ROOT / "deploy" / "nginx.conf.template"
    assert target == "/etc/nginx/templates/default.conf.template" and mode == "ro"
    # The image renders the template with envsubst: only MAX_UPLOAD_BYTES, never $host.
    assert nginx["environment"]["NGINX_ENVSUBST_FILTER"] == "MAX_UPLOAD_BYTES"
    assert "client_max_body_size ${MAX_UPLOAD_BYTES};" in Path(source).read_text()


@pytest.mark.parametrize("limit", [None, "1048576"])
def test_nginx_and_the_app_get_the_same_upload_limit(limit):
    env = {"SECRET_KEY": "test-only-secret"} | ({"MAX_UPLOAD_BYTES": limit} if limit else {})
    result = compose_config(env)
    assert result.returncode == 0, result.stderr
    services_ = yaml.safe_load(result.stdout)["services"]
    expected = limit or str(settings.MAX_UPLOAD_BYTES)  # the app's default, 200 MB
    for name in ("nginx", "web", "worker"):
        assert str(services_[name]["environment"]["MAX_UPLOAD_BYTES"]) == expected, name


def test_every_install_reads_the_lockfile_and_the_lockfile_is_current():
    """make install, .ci/run (through make) and the image install uv.lock's versions, never
    a fresh resolution; a pyproject.toml changed without `make lock` fails here."""
    makefile = (ROOT / "Makefile").read_text()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "$(UV) sync --locked" in makefile and "UV := $(VENV)/bin/uv" in makefile
    assert "COPY pyproject.toml uv.lock" in dockerfile
    assert "uv export --locked" in dockerfile and "--require-hashes" in dockerfile
    assert "make lint\nmake test" in (ROOT / ".ci" / "run").read_text()
    check = subprocess.run(
        [str(Path(sys.executable).parent / "uv"), "lock", "--check", "--offline"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr
