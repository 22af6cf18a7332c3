FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml ./
COPY revreview ./revreview
COPY reviews ./reviews
COPY ledger ./ledger
RUN pip install --no-cache-dir -e . gunicorn
COPY . .
RUN DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput
EXPOSE 8000
