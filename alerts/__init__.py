"""Alerts: per-dataset webhook subscriptions, told when a run of the dataset finishes
with a verdict they watch (or degraded, or failed). Signed, retried with backoff for a
day, every attempt recorded."""
