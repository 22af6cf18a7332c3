import logging
import os
import warnings

from celery import Celery
from celery.exceptions import SecurityWarning
from celery.signals import celeryd_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

app = Celery("revreview")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The review tasks live with the rest of the orchestration, not at the app root.
app.autodiscover_tasks(["reviews.orchestration.run", "alerts", "connectors"])
# Apart from tasks.py so as not to import itself in a circle (see the module).
app.conf.include = ["reviews.orchestration.intake.tasks"]


if hasattr(os, "geteuid") and os.geteuid() == 0:
    # Containers and CI machines often run everything as root. Celery then warns with a
    # page of text on every start; the worker accepts JSON only (never pickle, which is
    # what makes root dangerous), so one line explains it instead (celeryd_init below).
    warnings.filterwarnings("ignore", category=SecurityWarning)


@celeryd_init.connect
def _explain_root(**kwargs) -> None:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        logging.getLogger("revreview.celery").info(
            "The worker runs as root; it accepts JSON messages only (%s), so Celery's "
            "superuser warning is silenced. Run it as an ordinary user where you can.",
            ", ".join(app.conf.accept_content),
        )
