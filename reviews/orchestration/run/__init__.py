"""Running a review: the Celery tasks, the runner they call, the findings written once,
the heartbeat and the sweep that brings back lost work."""
