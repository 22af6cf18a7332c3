"""API tokens and idempotency keys (the Django app labelled "api"): who may call the
token API, and the key that makes a retried upload one batch. The views that use them
are in reviews.web.api."""
