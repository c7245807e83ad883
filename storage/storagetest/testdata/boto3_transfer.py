"""boto3_transfer.py FILE BUCKET: the baseline for checkpoint transfer speed.

Uploads FILE to BUCKET on the S3 server that RESOLUTE_TEST_S3_ENDPOINT,
RESOLUTE_TEST_S3_ACCESS_KEY and RESOLUTE_TEST_S3_SECRET_KEY name (MinIO in
tests), downloads it back to FILE.down, both with boto3's own managed
transfer (boto3.s3.transfer, its default TransferConfig: multipart, 10
threads), checks the copy and prints one JSON line with each direction's
seconds and MiB/s. BenchmarkBoto3Transfer runs it; it runs by hand as well.
"""

import filecmp
import json
import os
import sys
import time

import boto3
from boto3.s3.transfer import S3Transfer, TransferConfig
from botocore.config import Config


def main() -> None:
    path, bucket = sys.argv[1], sys.argv[2]
    s3 = boto3.client(
        "s3",
        endpoint_url=os.environ["RESOLUTE_TEST_S3_ENDPOINT"],
        aws_access_key_id=os.environ["RESOLUTE_TEST_S3_ACCESS_KEY"],
        aws_secret_access_key=os.environ["RESOLUTE_TEST_S3_SECRET_KEY"],
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}),
    )
    transfer = S3Transfer(s3, TransferConfig())
    size = os.path.getsize(path)
    key = "baseline/" + os.path.basename(path)
    copy = path + ".down"

    start = time.monotonic()
    transfer.upload_file(path, bucket, key)
    upload = time.monotonic() - start

    start = time.monotonic()
    transfer.download_file(bucket, key, copy)
    download = time.monotonic() - start

    try:
        if not filecmp.cmp(path, copy, shallow=False):
            sys.exit(f"the downloaded copy of s3://{bucket}/{key} differs from {path}")
    finally:
        os.remove(copy)
    mib = size / (1 << 20)
    print(json.dumps({
        "bytes": size,
        "upload_seconds": round(upload, 3),
        "download_seconds": round(download, 3),
        "upload_mib_per_s": round(mib / upload, 1),
        "download_mib_per_s": round(mib / download, 1),
    }))


if __name__ == "__main__":
    main()
