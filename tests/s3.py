"""An S3-compatible server on loopback (moto's), for the store's S3 mode: in a thread of
the test process, reachable over HTTP by any worker the test starts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

BUCKET = "revreview-tests"
REGION = "us-east-1"
# Made-up keys moto accepts: set in the environment, where boto3 reads them.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str
    store_url: str  # STORE_URL: the bucket and a prefix


@contextmanager
def s3_server(prefix: str = "store") -> Iterator[S3Server]:
    """A fresh moto server on a free port, with the bucket made."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        client.create_bucket(Bucket=BUCKET)
        yield S3Server(endpoint_url=endpoint, store_url=f"s3://{BUCKET}/{prefix}")
    finally:
        server.stop()


def worker_env(server: S3Server) -> dict[str, str]:
    """The environment that points a worker's store at `server`."""
    return {
        **CREDENTIALS,
        "STORE_URL": server.store_url,
        "STORE_S3_ENDPOINT_URL": server.endpoint_url,
        "STORE_S3_REGION": REGION,
    }
