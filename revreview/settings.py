"""revreview settings: every value comes from the environment, with working defaults.

Two modes from one codebase:
- embedded (nothing set): SQLite in WAL mode and Celery on kombu's filesystem broker;
- full: DATABASE_URL=postgres://... and REDIS_URL=redis://... (Postgres, Redis broker + cache).
"""

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from reviews.engine.rules import Rules
from revreview.store_settings import store_backend

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean, got {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def envjson(name: str, default: Any) -> Any:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise ImproperlyConfigured(f"{name} must be JSON, got {value!r}") from None


def envdecimal(name: str, default: str) -> Decimal:
    value = os.environ.get(name) or default
    try:
        return Decimal(value)
    except ArithmeticError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from None


DEBUG = envbool("DEBUG", False)
# The web server refuses to start with one of these outside DEBUG (revreview.wsgi);
# the CLI and the worker sign nothing, so they run with it.
DEFAULT_SECRET_KEYS = ("dev-only-insecure-key-change-me", "change-me-in-production")
SECRET_KEY = env("SECRET_KEY", DEFAULT_SECRET_KEYS[0])
ALLOWED_HOSTS = [h for h in env("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env("CSRF_TRUSTED_ORIGINS").split(",") if o]

DATA_DIR = Path(env("DATA_DIR", str(BASE_DIR / "var")))  # SQLite, broker folders, beat
DATA_DIR.mkdir(parents=True, exist_ok=True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",  # the API docs' vendored static files
    "csp",
    "axes",
    "reviews",
    "reviews.apiauth",
    "ledger",
    "alerts",
    "workspaces",
    "connectors",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files without a separate server
    # A page whose database is unreachable answers 503 "database unavailable", never 500.
    "reviews.web.unavailable.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "revreview.urls"
WSGI_APPLICATION = "revreview.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- storage -----------------------------------------------------------------

DATABASE_URL = env("DATABASE_URL")
if DATABASE_URL:
    # Health checks: a kept connection is tried (SELECT 1) before a request reuses it, so
    # after a database restart no worker fails a request on the connection it lost.
    DATABASES = {
        "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
    }
    # A database host that stops answering would otherwise hold each request for the
    # system's TCP timeout (minutes), past gunicorn's: the upload would be lost instead
    # of kept in the spool. A connect_timeout in DATABASE_URL wins.
    if "postgresql" in DATABASES["default"]["ENGINE"]:
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
            "connect_timeout", envint("DATABASE_CONNECT_TIMEOUT", 5)
        )
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "revreview.sqlite3",
            "OPTIONS": {
                # Web, worker and CLI processes share one file: WAL lets readers run
                # beside the writer, IMMEDIATE takes the write lock up front so two
                # writers queue on the busy timeout instead of failing mid-transaction.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                # A 32 MB page cache (SQLite's default is 2 MB): writing 150k findings
                # inserts fingerprints all over their index, and with the default cache
                # each insert re-read evicted pages (a third of the write).
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-32768;"
                ),
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL")
if REDIS_URL:
    CACHES = {
        # Django's, forgiving while Redis is away: pages, sign-in and uploads go on
        # with the database (revreview/cache.py).
        "default": {"BACKEND": "revreview.cache.ForgivingRedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Sessions: `cached_db` on Redis, so a signed-in user's upload can be read and kept while
# the database is down (reviews/web/offline_auth.py): the session comes from Redis, with
# the user's id and auth hash, and no query. Not `signed_cookies`: logging out must end a
# session on the server (a copied cookie would stay valid until it expires), and staff
# can end sessions by deleting them. Without Redis (the embedded mode) sessions stay in
# the database: the cache is then each process's own memory, so a logout seen by one
# web worker would be missed by another; and SQLite is a file, not a server to lose.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db"
    if REDIS_URL
    else "django.contrib.sessions.backends.db"
)

# --- Celery ------------------------------------------------------------------

CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
else:
    _queue = DATA_DIR / "broker"
    for _sub in ("queue", "processed", "control", "results"):
        (_queue / _sub).mkdir(parents=True, exist_ok=True)
    # The host is a placeholder the filesystem transport never uses; without one kombu
    # logs "No hostname was supplied" on every connection.
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's filesystem transport, writing each message atomically
    # (revreview/embedded_celery.py). A URL cannot name a class, so it is set apart.
    CELERY_BROKER_TRANSPORT = "revreview.embedded_celery:AtomicFilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue / "queue"),
        "data_folder_out": str(_queue / "queue"),
        "processed_folder": str(_queue / "processed"),
        "control_folder": str(_queue / "control"),
        "store_processed": False,
        # kombu polls the queue folder (default every second): a small batch would wait
        # longer for the broker than for its review. A listing every 50 ms is cheap.
        "polling_interval": 0.05,
    }
    CELERY_RESULT_BACKEND = f"file://{_queue / 'results'}"

# Per-task limits (seconds): the soft limit lets a task record its failure.
SPECIALIST_SOFT_TIME_LIMIT = envint("SPECIALIST_SOFT_TIME_LIMIT", 300)
SPECIALIST_TIME_LIMIT = envint("SPECIALIST_TIME_LIMIT", 330)
COORDINATOR_SOFT_TIME_LIMIT = envint("COORDINATOR_SOFT_TIME_LIMIT", 300)
COORDINATOR_TIME_LIMIT = envint("COORDINATOR_TIME_LIMIT", 330)

# Workers that come back (reviews/orchestration/run/sweep.py): a running agent beats every
# HEARTBEAT_SECONDS; one silent for HEARTBEAT_TIMEOUT_SECONDS is re-dispatched, up to
# RUN_RETRY_LIMIT times, then failed. The sweep runs every SWEEP_INTERVAL_SECONDS on a
# queue of its own, so a backlog of reviews never delays it.
HEARTBEAT_SECONDS = envint("HEARTBEAT_SECONDS", 10)
HEARTBEAT_TIMEOUT_SECONDS = envint("HEARTBEAT_TIMEOUT_SECONDS", 60)
RUN_RETRY_LIMIT = envint("RUN_RETRY_LIMIT", 3)
SWEEP_INTERVAL_SECONDS = envint("SWEEP_INTERVAL_SECONDS", 30)
# A queued run whose dispatch never reached the broker is sent again after this long;
# one that did reach it, after QUEUED_REDISPATCH_SECONDS (its message may have been lost
# with a Redis that restarted without persistence).
DISPATCH_GRACE_SECONDS = envint("DISPATCH_GRACE_SECONDS", 30)
QUEUED_REDISPATCH_SECONDS = envint("QUEUED_REDISPATCH_SECONDS", 900)
# A stored upload still unread this long after it arrived (its worker died, or the
# message to read it was lost with the database or the broker down) is sent to a
# worker again by the sweep: longer than reading one may take.
UNREAD_RESEND_SECONDS = envint("UNREAD_RESEND_SECONDS", SPECIALIST_TIME_LIMIT + 60)
SWEEP_QUEUE = "sweep"
# Webhook deliveries run on a queue (and, deployed, a worker) of their own: a slow
# receiver never takes a review's worker.
WEBHOOK_QUEUE = "webhooks"
# Redis gives an unacknowledged task back after this long. Longer than any task may run
# (else a slow task runs twice at once); the heartbeat sweep brings back the work of a
# dead worker much sooner.
BROKER_VISIBILITY_TIMEOUT = max(SPECIALIST_TIME_LIMIT, COORDINATOR_TIME_LIMIT) + 60

if REDIS_URL:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
        # Notice a dead Redis connection instead of waiting on it.
        "health_check_interval": 10,
        "socket_keepalive": True,
        "socket_timeout": 30,
        "socket_connect_timeout": 10,
        "retry_on_timeout": True,
    }
# Keep reconnecting for as long as the broker is away (the default gives up after 100
# tries and stops the worker), at start-up too.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A worker started without -Q consumes them all (`make run`); docker-compose gives the
# webhooks their own worker service.
# COORDINATOR_QUEUE: the runs' coordinators on workers of their own (docs/scaling.md);
# by default they share the specialists' queue.
COORDINATOR_QUEUE = env("COORDINATOR_QUEUE", "celery")
CELERY_TASK_QUEUES = tuple(
    Queue(name) for name in dict.fromkeys(("celery", COORDINATOR_QUEUE, SWEEP_QUEUE, WEBHOOK_QUEUE))
)
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "reviews.coordinate": {"queue": COORDINATOR_QUEUE},
    "reviews.sweep": {"queue": SWEEP_QUEUE},
    "reviews.import_spool": {"queue": SWEEP_QUEUE},
    # The failure of a task killed at its hard limit, recorded at once, not behind reviews.
    "reviews.task_killed": {"queue": SWEEP_QUEUE},
    "alerts.sweep_webhook_deliveries": {"queue": SWEEP_QUEUE},
    "alerts.notify_run_finished": {"queue": WEBHOOK_QUEUE},
    "alerts.deliver_webhook": {"queue": WEBHOOK_QUEUE},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_EXPIRES = 3600
# Nothing reads task results: progress lives in the database (no chord, see tasks.py).
CELERY_TASK_IGNORE_RESULT = True

# --- Metrics (docs/deploy.md#metrics) ---------------------------------------------------
# Prometheus scrapes /metrics with `Authorization: Bearer <METRICS_TOKEN>`; unset, there
# is no /metrics (404).
METRICS_TOKEN = env("METRICS_TOKEN", "")

# --- HubSpot connections (docs/connectors.md) ------------------------------------------
HUBSPOT_API_BASE_URL = env("HUBSPOT_API_BASE_URL", "https://api.hubapi.com")
# Fernet keys, comma-separated, newest first; unset: one derived from SECRET_KEY.
HUBSPOT_TOKEN_KEYS = env("HUBSPOT_TOKEN_KEYS", "")
# The most of a portal's per-interval API limit (and of its search limit) a pull uses.
HUBSPOT_RATE_SHARE = float(envdecimal("HUBSPOT_RATE_SHARE", "0.5"))
# A pull sends nothing more once the portal's calls left today (every integration's
# count) are at or under this: the rest of the day is the other integrations'.
HUBSPOT_DAILY_FLOOR = envint("HUBSPOT_DAILY_FLOOR", 25_000)
HUBSPOT_SEARCH_PER_SECOND = float(envdecimal("HUBSPOT_SEARCH_PER_SECOND", "5"))
HUBSPOT_TIMEOUT_SECONDS = float(envdecimal("HUBSPOT_TIMEOUT_SECONDS", "30"))
HUBSPOT_MAX_RETRIES = envint("HUBSPOT_MAX_RETRIES", 5)
HUBSPOT_BACKOFF_SECONDS = float(envdecimal("HUBSPOT_BACKOFF_SECONDS", "1"))
HUBSPOT_PULL_EVERY_HOURS = envint("HUBSPOT_PULL_EVERY_HOURS", 24)
HUBSPOT_FULL_PULL_EVERY_DAYS = envint("HUBSPOT_FULL_PULL_EVERY_DAYS", 7)
HUBSPOT_PULL_OVERLAP_MINUTES = envint("HUBSPOT_PULL_OVERLAP_MINUTES", 10)
HUBSPOT_PULL_RETRY_MINUTES = envint("HUBSPOT_PULL_RETRY_MINUTES", 30)
HUBSPOT_PULL_RETRY_LIMIT = envint("HUBSPOT_PULL_RETRY_LIMIT", 3)
HUBSPOT_PULL_STALE_MINUTES = envint("HUBSPOT_PULL_STALE_MINUTES", 15)
HUBSPOT_PULL_CHECK_SECONDS = envint("HUBSPOT_PULL_CHECK_SECONDS", 300)
HUBSPOT_PULL_TIME_LIMIT = envint("HUBSPOT_PULL_TIME_LIMIT", 6 * 3600)

# Beat (embedded in the worker with -B) sends the sweep of runs whose worker died.
CELERY_BEAT_SCHEDULE = {
    "sweep": {
        "task": "reviews.sweep",
        "schedule": float(SWEEP_INTERVAL_SECONDS),
        # A sweep that waited longer than its interval is stale: the next one is due.
        "options": {"expires": float(SWEEP_INTERVAL_SECONDS)},
    },
    "sweep-webhook-deliveries": {"task": "alerts.sweep_webhook_deliveries", "schedule": 60.0},
    # Starts the HubSpot pulls that are due (connectors/tasks.py), resumes stalled ones.
    "hubspot-pulls": {
        "task": "connectors.start_due_pulls",
        "schedule": float(HUBSPOT_PULL_CHECK_SECONDS),
        "options": {"expires": float(HUBSPOT_PULL_CHECK_SECONDS)},
    },
    # docs/history.md: tuning proposals and root causes, once a week (made once per week)
    "weekly-digest": {"task": "reviews.weekly_digest", "schedule": 6 * 3600.0},
    # docs/history.md: datasets that opted in apply proposals that hide only dismissed ones
    "auto-tune": {"task": "reviews.auto_tune", "schedule": 24 * 3600.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# --- review rules (defaults: docs/rules.md) ---------------------------------------------

MAX_UPLOAD_BYTES = envint("MAX_UPLOAD_BYTES", 200 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES
# A file over this is spooled to a temporary file as it arrives, not held in memory;
# the limit handler before Django's stops an upload past MAX_UPLOAD_BYTES mid-body.
FILE_UPLOAD_MAX_MEMORY_SIZE = envint("FILE_UPLOAD_MAX_MEMORY_SIZE", 2621440)
# The first reads multipart bodies itself, so that a file whose name is empty or cannot
# be kept is kept under a safe name (Django's parser drops it); it feeds the others.
FILE_UPLOAD_HANDLERS = [
    "reviews.web.multipart.MultipartHandler",
    "reviews.web.uploads.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# A dashboard upload bigger than this is parsed by a worker, not the web process.
PARSE_IN_WEB_MAX_BYTES = envint("PARSE_IN_WEB_MAX_BYTES", 10 * 1024 * 1024)
# Uploads received while the database is unreachable wait here (one folder each) until
# the sweep imports them (reviews/orchestration/store/spool.py). Web and worker must share it.
SPOOL_DIR = Path(env("SPOOL_DIR", str(DATA_DIR / "spool")))
# Each parsed batch's tables as Parquet, one folder per batch (reviews/engine/tables/):
# written by the first task that needs them, read by every later one. Workers on several
# machines each keep their own copy (docs/scaling.md).
TABLES_DIR = Path(env("TABLES_DIR", str(DATA_DIR / "tables")))
# The store of raw uploads and each batch's tables (docs/scaling.md, several machines):
# a local folder (STORE_DIR) unless STORE_URL names a bucket, s3://bucket/prefix, on
# S3 or any S3-compatible server (STORE_S3_ENDPOINT_URL). Credentials: boto3's own
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, never a setting.
STORE_URL = env("STORE_URL")
STORE_DIR = Path(env("STORE_DIR", str(DATA_DIR / "store")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "batches": store_backend(
        STORE_URL,
        STORE_DIR,
        endpoint_url=env("STORE_S3_ENDPOINT_URL"),
        region=env("STORE_S3_REGION"),
    ),
}
# The detectors' DuckDB database (reviews/engine/tables/columns.py), one per process:
# the most memory it takes, and where its tables and queries spill past that.
DETECTOR_MEMORY_MB = envint("DETECTOR_MEMORY_MB", 1024)
DETECTOR_SPILL_DIR = env("DETECTOR_SPILL_DIR", "")  # blank: in the system's temporary folder
# The most memory and time one team rule may take (docs/rules.md).
TEAM_RULE_MEMORY_MB = envint("TEAM_RULE_MEMORY_MB", 1024)
TEAM_RULE_SECONDS = envint("TEAM_RULE_SECONDS", 20)
# The most the spool holds, in bytes: past it an upload sent while the database is down
# is refused (503, nothing kept) instead of filling the disk. Ten of the largest uploads.
SPOOL_MAX_BYTES = envint("SPOOL_MAX_BYTES", 10 * MAX_UPLOAD_BYTES)
MAX_REPORTED_ERRORS = envint("MAX_REPORTED_ERRORS", 100)
# Day and month order of CSV dates like 07/08/2026 when no value in the file settles it.
CSV_DATE_ORDER = env("CSV_DATE_ORDER", "MDY").upper()
if CSV_DATE_ORDER not in ("MDY", "DMY"):
    raise ImproperlyConfigured(f"CSV_DATE_ORDER must be MDY or DMY, got {CSV_DATE_ORDER!r}")
# The text encoding of CSV uploads: "auto" detects it (byte-order mark, else UTF-8,
# else cp1252), or any text encoding Python knows (utf-8, utf-16, cp1252, latin-1, ...).
CSV_ENCODING = env("CSV_ENCODING", "auto").strip().lower()
if CSV_ENCODING != "auto":
    try:
        b"a".decode(CSV_ENCODING)  # refuses unknown names and codecs that are not text
    except UnicodeDecodeError:
        pass  # a text encoding that wants more than one byte (utf-16)
    except LookupError:
        raise ImproperlyConfigured(
            f"CSV_ENCODING must be auto or a text encoding (utf-8, cp1252, ...), "
            f"got {CSV_ENCODING!r}"
        ) from None
# Cells the sheets of one XLSX or XLS upload may span, first to last cell (the reader
# holds that rectangle, ~32 bytes a cell): a bigger workbook is refused, not read.
SPREADSHEET_MAX_CELLS = envint("SPREADSHEET_MAX_CELLS", 5_000_000)

# Every threshold that decides a finding, a model-pass candidate or the risk tier, with
# its default, is a field of reviews.engine.rules.Rules; its setting (RULE_..., TIER_...,
# HIGH_VALUE_DEAL_AMOUNT) is read here, once. Table: docs/rules.md#the-rules-as-data.
try:
    REVIEW_RULES = Rules.from_env(os.environ)
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
# Links from the fix plan to HubSpot records: https://app-eu1.hubspot.com for an EU account.
HUBSPOT_APP_URL = env("HUBSPOT_APP_URL", "https://app.hubspot.com").rstrip("/")
# Applying a fix plan's merges (connectors/merges.py) goes through the
# dataset's HubSpot connection (HUBSPOT_API_BASE_URL, its token: docs/connectors.md).
# Between two merge requests: HubSpot allows a private app 100 requests per 10 s (and
# fewer on some plans); merges are few, so they go well under it.
HUBSPOT_MERGE_INTERVAL_SECONDS = float(envdecimal("HUBSPOT_MERGE_INTERVAL_SECONDS", "0.25"))
# A task sent to an owner (connectors/owner_tasks.py) is due this many days after it is sent.
HUBSPOT_TASK_DUE_DAYS = envint("HUBSPOT_TASK_DUE_DAYS", 7)

# --- Salesforce connections (docs/connectors.md#salesforce) ------------------------------
# Credentials are sealed with HUBSPOT_TOKEN_KEYS, pulls scheduled and retried by the
# HUBSPOT_PULL_* settings, as a HubSpot connection's are.
SALESFORCE_API_VERSION = env("SALESFORCE_API_VERSION", "v62.0")
# A pull sends nothing more once the org's API requests left for its rolling day
# (Sforce-Limit-Info: api-usage=USED/LIMIT) are at or under this many: the rest is the
# org's other integrations'.
SALESFORCE_DAILY_FLOOR = envint("SALESFORCE_DAILY_FLOOR", 5_000)
SALESFORCE_TIMEOUT_SECONDS = float(envdecimal("SALESFORCE_TIMEOUT_SECONDS", "60"))
SALESFORCE_MAX_RETRIES = envint("SALESFORCE_MAX_RETRIES", 5)
SALESFORCE_BACKOFF_SECONDS = float(envdecimal("SALESFORCE_BACKOFF_SECONDS", "1"))

# Tuning a dataset's policy (docs/history.md): proposals are replayed over this many of
# the dataset's newest stored syncs.
TUNE_REPLAY_SYNCS = envint("TUNE_REPLAY_SYNCS", 12)

# --- the model pass (reviews/llm/) -------------------------------------------------

# An OpenAI-compatible gateway (OpenRouter, LiteLLM, vLLM, Ollama, ...). Empty: the
# detectors alone review, and every AgentRun says "rules".
LLM_BASE_URL = env("LLM_BASE_URL")
LLM_API_KEY = env("LLM_API_KEY")  # never logged, never stored
LLM_TIMEOUT_SECONDS = envint("LLM_TIMEOUT_SECONDS", 30)
LLM_CALL_TOKEN_BUDGET = envint("LLM_CALL_TOKEN_BUDGET", 6000)  # estimated prompt tokens a call
LLM_MAX_OUTPUT_TOKENS = envint("LLM_MAX_OUTPUT_TOKENS", 2000)
LLM_JSON_SCHEMA = envbool("LLM_JSON_SCHEMA", True)  # False: plain JSON mode
# Within one family, one step deep, to a cheaper live model (JSON object: model ->
# failback model or null). The defaults (reviews.llm.roster) and why: ledger/0004.
LLM_FAILBACK_CHAIN = envjson(
    "LLM_FAILBACK_CHAIN",
    {
        "google/gemini-3.5-flash": "google/gemini-3-flash-preview",
        "google/gemini-3.1-flash-lite": "google/gemini-2.5-flash-lite",
    },
)
LLM_ROSTER = envjson("LLM_ROSTER", {})  # agent -> model, under the admin's overrides
LLM_NEAR_MISS_LIMIT = envint("LLM_NEAR_MISS_LIMIT", 50)
BREAKER_FAILURE_THRESHOLD = envint("BREAKER_FAILURE_THRESHOLD", 3)
BREAKER_COOLDOWN_SECONDS = envint("BREAKER_COOLDOWN_SECONDS", 120)
# A model the gateway calls unknown or retired: its breaker stays open this long.
BREAKER_RETIRED_COOLDOWN_SECONDS = envint("BREAKER_RETIRED_COOLDOWN_SECONDS", 86_400)
RUN_DEADLINE_SECONDS = envint("RUN_DEADLINE_SECONDS", 600)

# --- serving: budget and rate limit (reviews/orchestration/serving/decide.py, ledger/budget.py) ---

# Input + output tokens per UTC day across all clients; 0 = unlimited (still counted).
DAILY_TOKEN_BUDGET = envint("DAILY_TOKEN_BUDGET", 2_000_000)
# Tokens per UTC day of the reviews one user asks for (all their workspaces); past it,
# their reviews are served by failback. 0 = no per-user cap (DAILY_TOKEN_BUDGET holds).
DAILY_TOKEN_BUDGET_PER_USER = envint("DAILY_TOKEN_BUDGET_PER_USER", 0)
# Tokens reserved per model call before it runs, settled to the real usage after.
BUDGET_RESERVATION_TOKENS = envint("BUDGET_RESERVATION_TOKENS", 8_000)
# Review requests per client address per clock hour; 0 = unlimited.
RATE_LIMIT_PER_HOUR = envint("RATE_LIMIT_PER_HOUR", 60)
# Review requests per workspace (all its members, dashboard and API) per clock hour;
# unset: 10 x RATE_LIMIT_PER_HOUR; 0 = unlimited (ledger/ratelimit.py).
RATE_LIMIT_PER_WORKSPACE_PER_HOUR = (
    envint("RATE_LIMIT_PER_WORKSPACE_PER_HOUR", 0)
    if os.environ.get("RATE_LIMIT_PER_WORKSPACE_PER_HOUR")
    else None
)
# 0: the client is REMOTE_ADDR; n: the n-th address from the right of X-Forwarded-For.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0)

# --- alerts (alerts/): webhooks when a dataset's run finishes ---------------------------

# Where the dashboard is reached, for the run links in alerts (no request to ask).
# `make run` sets it to the address it serves on (HOST and PORT); a start-up check
# warns when it looks wrong for a deployment (revreview/checks.py).
SITE_URL = env("SITE_URL", "http://127.0.0.1:8000")
# One deadline for a whole attempt: resolving the name, connecting, TLS, sending and
# reading the answer, however slowly its bytes arrive (alerts/transport.py).
WEBHOOK_TIMEOUT_SECONDS = envint("WEBHOOK_TIMEOUT_SECONDS", 10)
# Internal receivers a webhook may reach on purpose (alerts/destinations.py): host names,
# addresses and CIDR networks, comma-separated. Everything else must be a public address.
WEBHOOK_ALLOWED_HOSTS = [h.strip() for h in env("WEBHOOK_ALLOWED_HOSTS").split(",") if h.strip()]
# Plain http destinations: only with DEBUG by default (and for allow-listed hosts).
WEBHOOK_ALLOW_HTTP = envbool("WEBHOOK_ALLOW_HTTP", DEBUG)
# A failed delivery is retried after the base delay, doubled each time up to the cap,
# until the next attempt would fall outside the window (a day) after the first.
WEBHOOK_RETRY_BASE_SECONDS = envdecimal("WEBHOOK_RETRY_BASE_SECONDS", "30")
WEBHOOK_RETRY_MAX_DELAY_SECONDS = envint("WEBHOOK_RETRY_MAX_DELAY_SECONDS", 3600)
WEBHOOK_RETRY_WINDOW_SECONDS = envint("WEBHOOK_RETRY_WINDOW_SECONDS", 86400)

# --- the analyst baseline ------------------------------------------------------

ANALYST_HOURLY_USD = envdecimal("ANALYST_HOURLY_USD", "60")
ANALYST_MINUTES_PER_RECORD = envdecimal("ANALYST_MINUTES_PER_RECORD", "0.5")

# --- Django plumbing ----------------------------------------------------------------

# --- security: HTTPS, cookies, CSP, login throttling, mail ------------------------------

# With DEBUG off (deployed), HTTPS only: redirect, HSTS, cookies sent over HTTPS alone.
# Behind a proxy that ends TLS, SECURE_PROXY_SSL_HEADER=true trusts its X-Forwarded-Proto.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
# Prometheus scrapes web itself on the internal network, in plain HTTP (nginx does not
# publish /metrics; the token guards it): not redirected.
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", not DEBUG)
if envbool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_HTTPONLY = True  # htmx takes the token from the page (base.html), not the cookie
X_FRAME_OPTIONS = "DENY"

# Content Security Policy (django-csp): scripts from our own static files only (htmx is
# vendored); inline style attributes allowed, inline and injected scripts not.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Login throttling (django-axes), on the dashboard's login and the admin's alike, for
# AXES_COOLOFF_MINUTES: a username at one address after AXES_FAILURE_LIMIT wrong
# passwords, and an address after AXES_ADDRESS_FAILURE_LIMIT across usernames (password
# spraying; higher, so one office's typos lock no one else out:
# reviews/web/login_throttle.py). The address is found as the rate limit finds it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "reviews.web.login_throttle.LoginThrottle"
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5)
AXES_ADDRESS_FAILURE_LIMIT = envint("AXES_ADDRESS_FAILURE_LIMIT", 20)  # 0: none
AXES_COOLOFF_TIME = envint("AXES_COOLOFF_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_CLIENT_IP_CALLABLE = "reviews.web.client_address.client_ip"
AXES_RESET_ON_SUCCESS = True

# Mail: without EMAIL_HOST there is no password reset (revreview/urls.py), since its
# mail could not be sent.
EMAIL_HOST = env("EMAIL_HOST")
EMAIL_PORT = envint("EMAIL_PORT", 587)
EMAIL_HOST_USER = env("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "revreview@localhost")
PASSWORD_RESET_ENABLED = bool(EMAIL_HOST)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
# One date format on every page, the admin's too (revreview/formats/en/formats.py).
FORMAT_MODULE_PATH = ["revreview.formats"]
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "revreview" / "static"]
# Filled by collectstatic (`make run`, the Docker build); served by whitenoise. Not under
# DATA_DIR: that is a volume in compose, which would hide the files the image built.
STATIC_ROOT = BASE_DIR / "staticfiles"

# One console handler on the root logger: our loggers at LOG_LEVEL, everything else
# (Django's request errors with their traceback, Celery, psycopg) at WARNING. Django's
# own default prints request errors only with DEBUG on; here they are always logged.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        # No handlers of its own (Django's default ones print only under DEBUG): its
        # records reach the root's console.
        "django": {"level": "INFO"},
        "django.server": {"level": "INFO"},
        "revreview": {"level": env("LOG_LEVEL", "INFO")},
        "reviews": {"level": env("LOG_LEVEL", "INFO")},
        "ledger": {"level": env("LOG_LEVEL", "INFO")},
    },
}
