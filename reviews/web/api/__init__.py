"""The token-authenticated API under /api/v1/ (django-ninja): uploads, runs, datasets.

Also a Django app (label "api") for what only the API needs: API tokens and
idempotency keys. Every upload goes through reviews.orchestration.submit, the same
store -> parse -> decide_serve path as the upload form."""
