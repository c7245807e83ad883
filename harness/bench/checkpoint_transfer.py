"""Checkpoint transfer speed through the harness against boto3's own transfer of the same file.

    RESOLUTE_TEST_S3_ENDPOINT=... RESOLUTE_TEST_S3_ACCESS_KEY=... RESOLUTE_TEST_S3_SECRET_KEY=... \\
        /usr/bin/python3 harness/bench/checkpoint_transfer.py FILE BUCKET [--rounds 3]

uploads FILE (in a directory of its own) as a checkpoint with the Core API
(``core_context.checkpoint.upload``, off-cluster, ``checkpoint_storage`` of type s3 on the
bucket) and downloads it back (``checkpoint.download``), and does the same with boto3's
``upload_file``/``download_file`` (its default TransferConfig, as storage/storagetest's
BenchmarkBoto3Transfer); the two take turns, ``--rounds`` times each, every copy is compared with
FILE, and one JSON line gives each one's mean MiB/s and the harness's ratio to boto3.
"""

import argparse
import filecmp
import json
import os
import shutil
import sys
import tempfile
import time

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HARNESS)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("bucket")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    import logging

    import boto3
    from boto3.s3.transfer import S3Transfer, TransferConfig
    from botocore.config import Config

    import determined as det

    logging.getLogger("determined").setLevel(logging.WARNING)
    endpoint = os.environ["RESOLUTE_TEST_S3_ENDPOINT"]
    access = os.environ["RESOLUTE_TEST_S3_ACCESS_KEY"]
    secret = os.environ["RESOLUTE_TEST_S3_SECRET_KEY"]
    size = os.path.getsize(args.file)
    mib = size / (1 << 20)
    work = tempfile.mkdtemp(prefix="transfer-bench-", dir=os.path.dirname(args.file))
    src = os.path.join(work, "src")
    os.mkdir(src)
    os.link(args.file, os.path.join(src, "model.bin"))

    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access,
                      aws_secret_access_key=secret, region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}))
    transfer = S3Transfer(s3, TransferConfig())
    storage = {"type": "s3", "bucket": args.bucket, "endpoint_url": endpoint,
               "access_key": access, "secret_key": secret, "prefix": "bench"}
    times = {"harness_upload": [], "harness_download": [], "boto3_upload": [],
             "boto3_download": []}

    def timed(name: str, fn, *a) -> None:  # type: ignore
        start = time.monotonic()
        fn(*a)
        times[name].append(time.monotonic() - start)

    try:
        with det.core.init(checkpoint_storage=storage) as ctx:
            for i in range(args.rounds):
                copy = os.path.join(work, "boto3.bin")
                key = f"baseline/{i}/model.bin"
                timed("boto3_upload", transfer.upload_file, args.file, args.bucket, key)
                timed("boto3_download", transfer.download_file, args.bucket, key, copy)
                if not filecmp.cmp(args.file, copy, shallow=False):
                    sys.exit("boto3's copy differs")
                os.remove(copy)

                start = time.monotonic()
                sid = ctx.checkpoint.upload(src, {"steps_completed": i})
                times["harness_upload"].append(time.monotonic() - start)
                dst = os.path.join(work, "down")
                timed("harness_download", ctx.checkpoint.download, sid, dst)
                if not filecmp.cmp(args.file, os.path.join(dst, "model.bin"), shallow=False):
                    sys.exit("the harness's copy differs")
                shutil.rmtree(dst)
                ctx.checkpoint.delete(sid)
                s3.delete_object(Bucket=args.bucket, Key=key)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    out = {"bytes": size, "rounds": args.rounds}
    for name, ts in times.items():
        out[name + "_mib_per_s"] = round(mib / (sum(ts) / len(ts)), 1)
    out["upload_ratio"] = round(out["harness_upload_mib_per_s"] / out["boto3_upload_mib_per_s"], 2)
    out["download_ratio"] = round(
        out["harness_download_mib_per_s"] / out["boto3_download_mib_per_s"], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
