import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

app = Celery("revreview")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The review tasks live with the rest of the orchestration, not at the app root.
app.autodiscover_tasks(["reviews.orchestration", "alerts", "connectors"])
# Apart from tasks.py so as not to import itself in a circle (see the module).
app.conf.include = ["reviews.orchestration.intake_tasks"]
