# syntax=docker/dockerfile:1
FROM python:3.11-slim
WORKDIR /app
# PYTHONPATH: the code runs from /app (its templates, prompts and static files live
# beside it), so only the dependencies are installed into site-packages.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/app DATA_DIR=/data

# Dependencies first, from pyproject.toml alone: a code change does not reinstall them.
COPY pyproject.toml ./
RUN python - <<'PY'
import subprocess, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = project["dependencies"] + project["optional-dependencies"]["deploy"]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--no-cache-dir", *deps])
PY

# An unprivileged user that owns /data (the volume starts as a copy of this folder).
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin revreview \
    && mkdir -p /data && chown revreview:revreview /data

COPY . .
RUN DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput \
    && rm -f /tmp/build.sqlite3

USER revreview
EXPOSE 8000
# docker-compose.yml runs the worker and the one-shot migrate with their own commands.
CMD ["gunicorn", "revreview.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120"]
