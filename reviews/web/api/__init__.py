"""The token-authenticated API under /api/v1/ (django-ninja): uploads, runs, datasets.

Its tokens and idempotency keys are an app of their own (reviews.apiauth). Every upload
goes through reviews.orchestration.intake.submit, the same store -> parse -> decide_serve
path as the upload form."""
