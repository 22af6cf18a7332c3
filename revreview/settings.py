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
SECRET_KEY = env("SECRET_KEY", "dev-only-insecure-key-change-me")
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
    "reviews",
    "ledger",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files without a separate server
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
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
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Celery ------------------------------------------------------------------

CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    _queue = DATA_DIR / "broker"
    for _sub in ("queue", "processed", "control", "results"):
        (_queue / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
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
    # The file backend, with a quicker first chord_unlock (revreview/embedded_celery.py).
    CELERY_RESULT_BACKEND = (
        f"revreview.embedded_celery:QuickChordFilesystemBackend+file://{_queue / 'results'}"
    )
# The file result backend has no native chords: celery.chord_unlock polls the header's
# results (first after CHORD_UNLOCK_SECONDS, then every CHORD_UNLOCK_SECONDS). Redis
# counts chord parts itself and needs neither.
CHORD_UNLOCK_SECONDS = 0.05
CELERY_RESULT_CHORD_RETRY_INTERVAL = CHORD_UNLOCK_SECONDS
# Those retries are ETA tasks; the worker's timer rechecks its schedule only every
# worker_timer_precision seconds (default 1), which held each unlock for up to a second.
CELERY_WORKER_TIMER_PRECISION = CHORD_UNLOCK_SECONDS
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_EXPIRES = 3600

# Beat (embedded in the worker with -B) sweeps runs that stopped making progress.
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-runs": {"task": "reviews.sweep_stuck_runs", "schedule": 300.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# Per-task limits (seconds): the soft limit lets a task record its failure.
SPECIALIST_SOFT_TIME_LIMIT = envint("SPECIALIST_SOFT_TIME_LIMIT", 300)
SPECIALIST_TIME_LIMIT = envint("SPECIALIST_TIME_LIMIT", 330)
COORDINATOR_SOFT_TIME_LIMIT = envint("COORDINATOR_SOFT_TIME_LIMIT", 300)
COORDINATOR_TIME_LIMIT = envint("COORDINATOR_TIME_LIMIT", 330)

# --- review rules (spec §3 defaults) ---------------------------------------------

MAX_UPLOAD_BYTES = envint("MAX_UPLOAD_BYTES", 200 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
MAX_REPORTED_ERRORS = envint("MAX_REPORTED_ERRORS", 100)

REVIEW_RULES = {
    # dedup
    "PERSON_NAME_FUZZY_RATIO": envint("RULE_PERSON_NAME_FUZZY_RATIO", 92),
    "DEAL_NAME_FUZZY_RATIO": envint("RULE_DEAL_NAME_FUZZY_RATIO", 90),
    "DEAL_AMOUNT_TOLERANCE_PCT": envdecimal("RULE_DEAL_AMOUNT_TOLERANCE_PCT", "1"),
    "DEAL_CLOSE_DATE_WINDOW_DAYS": envint("RULE_DEAL_CLOSE_DATE_WINDOW_DAYS", 31),
    # pipeline: a deal this many times its company's median amount looks like a typo
    "AMOUNT_TYPO_FACTOR": envint("RULE_AMOUNT_TYPO_FACTOR", 100),
    # freshness
    "STALE_ENRICHMENT_DAYS": envint("RULE_STALE_ENRICHMENT_DAYS", 180),
    # risk tiering
    "TIER_TRIVIAL_MAX_SCORE": envint("TIER_TRIVIAL_MAX_SCORE", 8),
    "TIER_LITE_MAX_SCORE": envint("TIER_LITE_MAX_SCORE", 20),
    "HIGH_VALUE_DEAL_AMOUNT": envdecimal("HIGH_VALUE_DEAL_AMOUNT", "100000"),
}

# --- the model pass (reviews/llm/) -------------------------------------------------

# An OpenAI-compatible gateway (OpenRouter, LiteLLM, vLLM, Ollama, ...). Empty: the
# detectors alone review, and every AgentRun says "rules".
LLM_BASE_URL = env("LLM_BASE_URL")
LLM_API_KEY = env("LLM_API_KEY")  # never logged, never stored
LLM_TIMEOUT_SECONDS = envint("LLM_TIMEOUT_SECONDS", 30)
LLM_CALL_TOKEN_BUDGET = envint("LLM_CALL_TOKEN_BUDGET", 6000)  # estimated prompt tokens a call
LLM_MAX_OUTPUT_TOKENS = envint("LLM_MAX_OUTPUT_TOKENS", 2000)
LLM_JSON_SCHEMA = envbool("LLM_JSON_SCHEMA", True)  # False: plain JSON mode
# Within one family, one step deep (JSON object: model -> failback model or null).
LLM_FAILBACK_CHAIN = envjson(
    "LLM_FAILBACK_CHAIN",
    {
        "google/gemini-2.5-flash": "google/gemini-2.0-flash",
        "google/gemini-2.5-flash-lite": "google/gemini-2.0-flash-lite",
    },
)
LLM_ROSTER = envjson("LLM_ROSTER", {})  # agent -> model, under the admin's overrides
LLM_NEAR_MISS_LIMIT = envint("LLM_NEAR_MISS_LIMIT", 50)
BREAKER_FAILURE_THRESHOLD = envint("BREAKER_FAILURE_THRESHOLD", 3)
BREAKER_COOLDOWN_SECONDS = envint("BREAKER_COOLDOWN_SECONDS", 120)
RUN_DEADLINE_SECONDS = envint("RUN_DEADLINE_SECONDS", 600)

# --- serving: budget and rate limit (reviews/orchestration/serving.py, ledger/budget.py) ---

# Input + output tokens per UTC day across all clients; 0 = unlimited (still counted).
DAILY_TOKEN_BUDGET = envint("DAILY_TOKEN_BUDGET", 2_000_000)
# Tokens reserved per model call before it runs, settled to the real usage after.
BUDGET_RESERVATION_TOKENS = envint("BUDGET_RESERVATION_TOKENS", 8_000)
# Review requests per client address per clock hour; 0 = unlimited.
RATE_LIMIT_PER_HOUR = envint("RATE_LIMIT_PER_HOUR", 60)
# 0: the client is REMOTE_ADDR; n: the n-th address from the right of X-Forwarded-For.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0)

# --- the analyst baseline ------------------------------------------------------

ANALYST_HOURLY_USD = envdecimal("ANALYST_HOURLY_USD", "60")
ANALYST_MINUTES_PER_RECORD = envdecimal("ANALYST_MINUTES_PER_RECORD", "0.5")

# --- Django plumbing ----------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "revreview" / "static"]
# Filled by collectstatic (`make run`, the Docker build); served by whitenoise. Not under
# DATA_DIR: that is a volume in compose, which would hide the files the image built.
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "revreview": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
        "reviews": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
        "ledger": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    },
}
