# syntax=docker/dockerfile:1
FROM python:3.11-slim
WORKDIR /app
# PYTHONPATH: the code runs from /app (its templates, prompts and static files live
# beside it), so only the dependencies are installed into site-packages.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/app DATA_DIR=/data

# Dependencies first, from pyproject.toml and uv.lock alone: a code change does not
# reinstall them, and the image gets exactly the locked versions (hash-checked by pip).
# uv, at the version pyproject.toml pins, only writes the list; it leaves the image after.
COPY pyproject.toml uv.lock ./
RUN UV=$(sed -n 's/.*"\(uv==[0-9.]*\)".*/\1/p' pyproject.toml) \
    && pip install --no-cache-dir "$UV" \
    && uv export --locked --extra deploy --no-emit-project --quiet -o /tmp/requirements.txt \
    && pip install --no-cache-dir --no-deps --require-hashes -r /tmp/requirements.txt \
    && pip uninstall --yes --quiet uv && rm /tmp/requirements.txt

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
