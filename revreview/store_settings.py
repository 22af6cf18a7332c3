"""The STORAGES entry of the store that keeps raw uploads and each batch's tables
(revreview/store.py), from the environment's few settings.

A local folder unless STORE_URL names a bucket (s3://bucket/prefix): then
S3-compatible object storage through django-storages' S3Storage (boto3). Credentials
are never settings: boto3 reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an
instance role) itself, so they appear in no settings dump, page or log."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# A download spills to disk past this (S3Storage keeps it in memory by default: a
# 200 MB upload read back would sit whole in the worker twice).
_SPILL_BYTES = 8 * 2**20


def store_backend(url: str, folder: Path, *, endpoint_url: str = "", region: str = "") -> dict:
    """The STORAGES["batches"] entry: `url` "" for the local `folder`, else s3://bucket/prefix."""
    if not url:
        return {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            # allow_overwrite: a key is written once; a store that was rolled back
            # (a test's, or a failed commit's) is written over, as on S3.
            "OPTIONS": {"location": str(folder), "allow_overwrite": True},
        }
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"STORE_URL: empty (a local folder) or s3://bucket/prefix, not {url!r}")
    from boto3.s3.transfer import TransferConfig  # only the full mode needs boto3 loaded

    # An upload streamed in (not seekable) is sent in 8 MB parts; at most four are held
    # at once (s3transfer's setting, which boto3's constructor does not take), so storing
    # one costs a bounded 32 MB whatever its size.
    transfer = TransferConfig(max_concurrency=4)
    transfer.max_in_memory_upload_chunks = 4
    options: dict[str, Any] = {
        "bucket_name": parts.netloc,
        "location": parts.path.strip("/"),
        "file_overwrite": True,
        "max_memory_size": _SPILL_BYTES,
        "default_acl": None,
        "querystring_auth": False,
        "transfer_config": transfer,
    }
    if endpoint_url:
        options["endpoint_url"] = endpoint_url
    if region:
        options["region_name"] = region
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}
