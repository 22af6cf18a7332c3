# revreview: `make run` serves the dashboard with the samples loaded; `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# The links in webhook alerts: the address `make run` serves on, unless SITE_URL is set
# (a server listening on every address is reached on loopback from this machine).
SITE_HOST := $(if $(filter 0.0.0.0 :: [::],$(HOST)),127.0.0.1,$(HOST))
SITE_URL ?= http://$(SITE_HOST):$(PORT)

# uv installs exactly what uv.lock says (itself pinned there too); `make lock` re-locks.
UV_VERSION := $(shell sed -n 's/.*"uv==\([0-9.]*\)".*/\1/p' pyproject.toml)
UV := $(VENV)/bin/uv
# Bytecode is cached even where the machine says not to (PYTHONDONTWRITEBYTECODE=1 here):
# otherwise every pytest, worker and server process compiles the project and rewrites the
# tests' asserts again (collecting the suite: 20 s without the cache, 6 s with it).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install lock run test test-fast lint format bench

install: $(VENV)/.installed

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet 'uv==$(UV_VERSION)'

# --locked: an install never resolves anew; a pyproject.toml changed without `make lock`
# stops here, saying the lockfile needs updating.
$(VENV)/.installed: pyproject.toml uv.lock | $(UV)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --extra dev --quiet
	touch $@

lock: | $(UV)
	$(UV) lock

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py load_samples
	$(PY) manage.py demo
	@echo "revreview: http://$(HOST):$(PORT)/ (a Celery worker runs beside the web server)"
	@# honcho supervises both (Procfile): one Ctrl-C stops them once, cleanly, and
	@# deploy/foreground.py makes that stop exit 0 (no make "Error 130").
	@# DEBUG on by default: the default SECRET_KEY is refused outside DEBUG.
	DEBUG=$${DEBUG:-true} REVREVIEW_HOST=$(HOST) SITE_URL=$(SITE_URL) exec $(PY) deploy/foreground.py $(VENV)/bin/honcho start --port $(PORT) --procfile Procfile

test: install
	$(VENV)/bin/pytest

# The fast loop: no worker, browser, nginx, Docker, subprocess servers, Redis or
# Postgres-specific test, nor a `slow` one, on SQLite in memory (see docs/architecture.md#tests).
test-fast: install
	TEST_SERVICES=none $(VENV)/bin/pytest -m "not integration and not slow" -n 2 --dist worksteal

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The bench extra adds the peers bench/dedup_peers.py compares dedup with (Splink, DuckDB);
# the runtime and `make install` do without them.
bench: install
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --extra dev --extra bench --quiet
	$(PY) bench/review_scale.py --migrate
	$(PY) bench/dedup_peers.py
	$(PY) bench/review_scale.py --sizes 10000000 --stale-sizes ''  # ~15 min; the generator peaks near 8 GB, the review at 7 GiB
	$(PY) bench/concurrent_uploads.py --uploads 4 --records 1000000  # four 1M-record API uploads at once, gunicorn and the compose worker; needs Postgres and redis-server
