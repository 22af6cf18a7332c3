import logging
import os
import warnings

from celery import Celery
from celery import Task as CeleryTask
from celery.exceptions import SecurityWarning
from celery.signals import celeryd_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")


class OutOfMemory(RuntimeError):
    """A task ran out of memory (it raised MemoryError), told to Celery as a plain
    failure of that task."""


class Task(CeleryTask):
    """Every task of the app. A MemoryError leaves a task as OutOfMemory: Celery stops
    the whole worker on a MemoryError ("Unrecoverable error"), killing the other task
    in flight, and the message, never acknowledged, comes back to do it again."""

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except MemoryError as error:
            message = f"{self.name}: {type(error).__name__}: {error}".rstrip(": ")
        # Raised outside the except block, so the MemoryError's traceback (and the
        # frames holding what filled the memory) is let go first.
        raise OutOfMemory(message)


app = Celery("revreview", task_cls=Task)
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
